"""Every bridge executable starts on the shipped large-data Fast DDS profile
unless the user chose one (BENCHMARKS.md, "Fast by default"): the executables
themselves, started as `ros2 run` would, not a launch file."""

import time
from pathlib import Path

import pytest
from conftest import ROOT, executable

PROFILE_VARS = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")
SHIPPED = (ROOT / "config" / "fastdds_large_data.xml").resolve()
BRIDGES = {
    "bridge": ["-p", f"rflysim_config:={ROOT / 'config' / 'Config.json'}", "-p", "imu:=false",
               "-p", "send_requests:=false"],
    "auv_bridge": ["-p", "image_port:=42975", "-p", "thruster_port:=42976", "-p", "telemetry_port:=42977"],
    "gps_denied_bridge": ["-p", "local_port:=42920", "-p", "sim_port:=42921"],
}


def profile_line(processes, name, env, wait_s=8.0):
    proc = processes.start([executable(name), "--ros-args", *BRIDGES[name]], env=env)
    deadline = time.time() + wait_s
    while time.time() < deadline:
        out = processes.output(proc)
        if "Fast DDS profile" in out or proc.poll() is not None:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    out = processes.output(proc)
    proc.terminate()
    proc.wait(timeout=5)
    return next((line for line in out.splitlines() if "Fast DDS profile" in line), None), out


@pytest.mark.parametrize("name", sorted(BRIDGES))
def test_the_shipped_profile_by_default(processes, name):
    line, out = profile_line(processes, name, {v: None for v in PROFILE_VARS})
    assert line is not None, out
    logged = line.split("Fast DDS profile ", 1)[1].split(" (", 1)[0]
    assert Path(logged).resolve() == SHIPPED, line


@pytest.mark.parametrize("chosen", [{"FASTRTPS_DEFAULT_PROFILES_FILE": ""},
                                    {"FASTDDS_DEFAULT_PROFILES_FILE": str(SHIPPED)}],
                         ids=["empty", "fastdds-var"])
def test_the_users_choice_wins(processes, chosen):
    env = {v: None for v in PROFILE_VARS}
    env.update(chosen)
    line, out = profile_line(processes, "bridge", env, wait_s=3.0)
    assert line is None, out
    # It did start: the sensors' lines follow the profile's place in the log.
    assert "sensor" in out, out
