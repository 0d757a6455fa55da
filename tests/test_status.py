"""`ros2 run rflysim_bridge status` with all four bridges on the graph, each
started by its launch file with its emulator (AeroSim's with its broker):
one table per bridge, every stream with a rate; `bridge:=` narrows it. And
what it says when frames do not fit the socket's receive buffer."""

import re
import time

import pytest
from conftest import executable
from rflysim_scenario import Scenario, sensor
from rviz_stand_in import start_launch

BRIDGES = {
    "rflysim_bridge": ("all.launch.py", {"emulator": "true", "scene": "false", "gimbal": "false"}),
    "auv_bridge": ("auv.launch.py", {"emulator": "true"}),
    "gps_denied_bridge": ("gps_denied.launch.py", {"emulator": "true"}),
    "aerosim_bridge": ("aerosim.launch.py", {"emulator": "true", "broker": "true"}),
}


ROW = re.compile(r"^  (.+?)\s+(\d+\.\d+|–)\s+(\d+|–)\s+(\d+|–)\s")


def tables(out):
    """{bridge: {stream: rate Hz}} of the view's output."""
    found, current = {}, None
    for line in out.splitlines():
        if not line.strip() or line.startswith("memory"):
            current = None
        elif not line.startswith(" "):
            current = found.setdefault(line.split()[0], {})
        elif current is not None and (m := ROW.match(line)):
            current[m.group(1)] = float(m.group(2)) if m.group(2) != "–" else 0.0
    return found


def run_status(processes, *params):
    args = [executable("status"), "--ros-args", "-p", "once:=true", "-p", "settle_s:=3.0"]
    for p in params:
        args += ["-p", p]
    view = processes.start(args, name="status")
    assert view.wait(timeout=40) == 0, processes.output(view)
    return processes.output(view)


@pytest.mark.broker
def test_status_shows_every_bridge_running(processes):
    for launch_file, overrides in BRIDGES.values():
        assert start_launch(processes, launch_file, overrides)
    deadline = time.monotonic() + 60
    while True:
        out = run_status(processes)
        seen = tables(out)
        flowing = {b for b, rates in seen.items() if any(r > 0 for r in rates.values())}
        if set(BRIDGES) <= flowing or time.monotonic() > deadline:
            break
    assert set(BRIDGES) <= set(seen), out
    assert set(BRIDGES) <= flowing, f"a bridge with no stream flowing:\n{out}"
    assert "memory" in out
    only = tables(run_status(processes, "bridge:=auv"))
    assert set(only) == {"auv_bridge"}, only


def test_frames_larger_than_the_receive_buffer_are_explained_once_in_the_log_and_in_status(processes, tmp_path):
    """A raw 1280×720 camera (2.6 MiB a frame) into a 64 KiB receive buffer: frames are lost, and the
    bridge says why and which `sysctl` fixes it, once in its log and with the stream in `status`."""
    scenario = Scenario(processes, tmp_path, [sensor(1, 1, 2, port=43321, width=1280, height=720, hz=10)],
                        sim_args=["--window-id", "17"],
                        bridge_params={"window_id": 17, "use_sim_time": False, "rcvbuf_bytes": 65536})
    deadline = time.monotonic() + 30
    while "frames lost: frames of up to" not in processes.output(scenario.bridge) and time.monotonic() < deadline:
        time.sleep(0.2)
    log = processes.output(scenario.bridge)
    assert log.count("frames lost: frames of up to 2.6 MiB do not fit") == 1, log
    assert "sudo sysctl -w net.core.rmem_max=" in log and "rcvbuf_bytes:=" in log, log
    out = run_status(processes, "bridge:=rflysim")
    assert "↳ frames of up to 2.6 MiB" in out, out
