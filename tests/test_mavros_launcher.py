"""mavros_launcher against a fake `ros2` (a test double: MAVROS and the ros2
CLI are not installable here) that records its arguments, forks a child as
`ros2 launch` does, and crashes on demand."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import executable

FAKE_ROS2 = r'''#!PYTHON
import json, os, signal, sys, time
log = os.environ["FAKE_ROS2_LOG"]
def record(event):
    with open(log, "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "pgid": os.getpgid(0), "event": event, "argv": sys.argv[1:]}) + "\n")
if sys.argv[1:3] == ["pkg", "prefix"]:
    if os.environ.get("FAKE_NO_MAVROS"):
        print("Package not found", file=sys.stderr)
        sys.exit(1)
    print("/opt/ros/fake")
    sys.exit(0)
record("start")
crash = os.environ.get("FAKE_CRASH_FILE")
if crash and os.path.exists(crash):
    left = int(open(crash).read() or 0)
    if left > 0:
        open(crash, "w").write(str(left - 1))
        record("crash")
        sys.exit(3)
child = os.fork()  # as `ros2 launch` starts mavros_node
if child == 0:
    signal.signal(signal.SIGINT, lambda *a: (record("child SIGINT"), os._exit(0)))
    while True:
        time.sleep(0.05)
def on_int(*a):
    record("SIGINT")
    os.waitpid(child, 0)
    sys.exit(0)
signal.signal(signal.SIGINT, on_int)
while True:
    time.sleep(0.05)
'''


@pytest.fixture
def fake_ros2(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ros2 = bindir / "ros2"
    ros2.write_text(FAKE_ROS2.replace("PYTHON", sys.executable))
    ros2.chmod(0o755)
    log = tmp_path / "ros2.log"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "FAKE_ROS2_LOG": str(log)}
    return env, log


def events(log, timeout=10.0, until=lambda e: True):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        if until(rows):
            return rows
        time.sleep(0.05)
    raise AssertionError(f"timed out; events so far: {rows}")


def launcher(processes, env, *params):
    args = [executable("mavros_launcher"), "--ros-args"]
    for p in params:
        args += ["-p", p]
    return processes.start(args, name="mavros_launcher", env=env)


def test_one_vehicle_no_namespace(processes, fake_ros2):
    env, log = fake_ros2
    proc = launcher(processes, env, "sim_ip:=192.168.1.7")
    rows = events(log, until=lambda r: any(e["event"] == "start" for e in r))
    start = next(e for e in rows if e["event"] == "start")
    assert start["argv"] == ["launch", "mavros", "px4.launch.xml", "tgt_system:=1", "fcu_url:=udp://:20101@192.168.1.7:20100"]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=15) == 0


def test_several_vehicles_signals_and_only_own_groups(processes, fake_ros2):
    env, log = fake_ros2
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        proc = launcher(processes, env, "copter_ids:=[1,2]")
        rows = events(log, until=lambda r: sum(e["event"] == "start" for e in r) == 2)
        starts = sorted((e for e in rows if e["event"] == "start"), key=lambda e: e["argv"][3])
        assert starts[0]["argv"][3:] == ["tgt_system:=1", "fcu_url:=udp://:20101@127.0.0.1:20100", "namespace:=mavros1"]
        assert starts[1]["argv"][3:] == ["tgt_system:=2", "fcu_url:=udp://:20103@127.0.0.1:20102", "namespace:=mavros2"]
        # Each child leads a process group of its own.
        assert all(e["pid"] == e["pgid"] for e in starts)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        rows = events(log, until=lambda r: sum(e["event"] in ("SIGINT", "child SIGINT") for e in r) == 4)
        # SIGINT reached both launches and the processes they forked.
        assert sum(e["event"] == "SIGINT" for e in rows) == 2 and sum(e["event"] == "child SIGINT" for e in rows) == 2
        assert bystander.poll() is None, "a process the launcher did not start survives it"
    finally:
        bystander.kill()
        bystander.wait()


def test_a_crashed_child_is_restarted_with_backoff(processes, fake_ros2, tmp_path):
    env, log = fake_ros2
    crash = tmp_path / "crash_count"
    crash.write_text("2")
    env = {**env, "FAKE_CRASH_FILE": str(crash)}
    proc = launcher(processes, env)
    rows = events(log, timeout=20, until=lambda r: sum(e["event"] == "start" for e in r) == 3)
    crashes = [e for e in rows if e["event"] == "crash"]
    assert len(crashes) == 2
    out = processes.output(proc)
    assert "restarting in 1 s" in out and "restarting in 2 s" in out, out
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=15) == 0


def test_clear_errors_without_ros2_or_mavros(processes, fake_ros2, tmp_path):
    env, _ = fake_ros2
    no_ros2 = launcher(processes, {**env, "PATH": "/usr/bin:/bin"})
    assert no_ros2.wait(timeout=15) == 1
    assert "`ros2` is not on PATH" in processes.output(no_ros2)
    no_mavros = launcher(processes, {**env, "FAKE_NO_MAVROS": "1"})
    assert no_mavros.wait(timeout=15) == 1
    assert "mavros package is not installed" in processes.output(no_mavros)
