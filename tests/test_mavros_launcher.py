"""mavros_launcher against a fake `ros2` (a test double: MAVROS and the ros2
CLI are not installable from PyPI) that records its arguments, takes MAVROS's UDP
port, forks a child as `ros2 launch` does, and on demand crashes, answers
`pkg prefix` slowly, or leaves a descendant deaf to SIGINT and SIGTERM that
keeps the port."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import executable

FAKE_ROS2 = r'''#!PYTHON
import json, os, signal, socket, sys, time
log = os.environ["FAKE_ROS2_LOG"]
def record(event):
    with open(log, "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "pgid": os.getpgid(0), "event": event, "argv": sys.argv[1:]}) + "\n")
if sys.argv[1:3] == ["pkg", "prefix"]:
    record("pkg prefix")
    time.sleep(float(os.environ.get("FAKE_PKG_PREFIX_SECONDS", "0")))
    if os.environ.get("FAKE_NO_MAVROS"):
        print("Package not found", file=sys.stderr)
        sys.exit(1)
    print("/opt/ros/fake")
    sys.exit(0)
record("start")
# The port MAVROS takes, as `fcu_url:=udp://:<port>@<ip>:<port - 1>` says.
port = int(next(a for a in sys.argv if a.startswith("fcu_url:=")).split(":")[3].split("@")[0])
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    sock.bind(("127.0.0.1", port))
    record("bound")
except OSError:
    record("port busy")
    sys.exit(4)
if os.environ.get("FAKE_PORT_HOLDER") and os.fork() == 0:
    # A descendant that keeps the port and is deaf to SIGINT and SIGTERM.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    record("port holder")
    while True:
        time.sleep(0.05)
crash = os.environ.get("FAKE_CRASH_FILE")
target = os.environ.get("FAKE_CRASH_TGT")
if crash and os.path.exists(crash) and (not target or f"tgt_system:={target}" in sys.argv):
    left = int(open(crash).read() or 0)
    if left > 0:
        open(crash, "w").write(str(left - 1))
        record("crash")
        sys.exit(3)
child = os.fork()  # as `ros2 launch` starts mavros_node
if child == 0:
    signal.signal(signal.SIGINT, lambda *a: (record("child SIGINT"), os._exit(0)))
    record("child")
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


def alive(pid):
    """Whether `pid` runs (a zombie has ended; only its parent has not looked)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def parent_of(pid):
    stat = open(f"/proc/{pid}/stat").read()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def recorded_pids(log):
    """The fake's processes but its `pkg prefix` runs (ended long since)."""
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return {e["pid"] for e in rows if e["event"] != "pkg prefix"}


@pytest.fixture
def fake_ros2(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ros2 = bindir / "ros2"
    ros2.write_text(FAKE_ROS2.replace("PYTHON", sys.executable))
    ros2.chmod(0o755)
    log = tmp_path / "ros2.log"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "FAKE_ROS2_LOG": str(log)}
    yield env, log
    # Whatever a failing launcher left behind must not hold the next test's ports.
    for pid in recorded_pids(log):
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def gone_within(pids, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


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
    proc = launcher(processes, env, "sim_host:=192.168.1.7")
    rows = events(log, until=lambda r: any(e["event"] == "start" for e in r))
    start = next(e for e in rows if e["event"] == "start")
    assert start["argv"] == ["launch", "mavros", "px4.launch.xml", "tgt_system:=1", "fcu_url:=udp://:20101@192.168.1.7:20100"]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=15) == 0


def test_several_vehicles_signals_and_only_own_groups(processes, fake_ros2):
    env, log = fake_ros2
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        proc = launcher(processes, env, "vehicle_ids:=[1,2]")
        # Both launches and the processes they fork, before the stop: one forked after it would be
        # ended without a SIGINT to record.
        rows = events(log, until=lambda r: count(r, "start") == 2 and count(r, "child") == 2)
        starts = sorted((e for e in rows if e["event"] == "start"), key=lambda e: e["argv"][3])
        assert starts[0]["argv"][3:] == ["tgt_system:=1", "fcu_url:=udp://:20101@127.0.0.1:20100", "namespace:=mavros1"]
        assert starts[1]["argv"][3:] == ["tgt_system:=2", "fcu_url:=udp://:20103@127.0.0.1:20102", "namespace:=mavros2"]
        # Each vehicle runs in a process group of its own, led by a child of the launcher.
        assert len({e["pgid"] for e in starts}) == 2 and os.getpgid(proc.pid) not in {e["pgid"] for e in starts}
        assert all(parent_of(e["pgid"]) == proc.pid for e in starts)
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


def count(rows, event, tgt=None):
    return sum(e["event"] == event and (tgt is None or f"tgt_system:={tgt}" in e["argv"]) for e in rows)


def test_a_group_outliving_its_leader_is_ended_before_the_restart(processes, fake_ros2, tmp_path):
    # The first run leaves a descendant that holds MAVROS's port and ignores
    # SIGINT and SIGTERM; the restart must find the port free.
    env, log = fake_ros2
    crash = tmp_path / "crash_count"
    crash.write_text("1")
    env = {**env, "FAKE_CRASH_FILE": str(crash), "FAKE_PORT_HOLDER": "1"}
    proc = launcher(processes, env)
    rows = events(log, timeout=25, until=lambda r: count(r, "bound") + count(r, "port busy") >= 2)
    holder = next(e["pid"] for e in rows if e["event"] == "port holder")
    assert count(rows, "port busy") == 0, processes.output(proc)
    assert not alive(holder), "the first run's port holder survived the restart"
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=5) == 0


def test_a_group_whose_leader_was_killed_is_ended_before_the_restart(processes, fake_ros2):
    # The group's leader (the launcher's child) dies by SIGKILL: what it led
    # is left to the launcher, which must end it before starting again.
    env, log = fake_ros2
    proc = launcher(processes, {**env, "FAKE_PORT_HOLDER": "1"})
    rows = events(log, until=lambda r: count(r, "port holder") == 1 and count(r, "child") == 1)
    first = recorded_pids(log)
    leader = rows[-1]["pgid"]
    assert parent_of(leader) == proc.pid and leader not in first
    os.kill(leader, signal.SIGKILL)
    rows = events(log, timeout=20, until=lambda r: count(r, "bound") + count(r, "port busy") >= 2)
    assert count(rows, "port busy") == 0, processes.output(proc)
    assert not any(alive(p) for p in first)
    assert "outlived its leader" in processes.output(proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=5) == 0


def test_a_sigkilled_launcher_leaves_no_process_behind(processes, fake_ros2):
    env, log = fake_ros2
    proc = launcher(processes, {**env, "FAKE_PORT_HOLDER": "1"}, "vehicle_ids:=[1,2]")
    rows = events(log, until=lambda r: count(r, "port holder") == 2 and count(r, "child") == 2)
    pids = recorded_pids(log)
    assert len(pids) == 6 and all(alive(p) for p in pids)
    proc.kill()
    proc.wait()
    # Parent-death signal, then the keeper's SIGTERM and (for the deaf holder) SIGKILL.
    assert gone_within(pids, 6), f"still running after the launcher was killed: {[p for p in pids if alive(p)]}"


def test_a_failed_start_is_reported_and_retried_without_touching_the_others(processes, fake_ros2, tmp_path):
    env, log = fake_ros2
    crash = tmp_path / "crash_count"
    crash.write_text("1")
    ros2 = tmp_path / "bin" / "ros2"
    proc = launcher(processes, {**env, "FAKE_CRASH_FILE": str(crash), "FAKE_CRASH_TGT": "2"}, "vehicle_ids:=[1,2,3]")
    rows = events(log, until=lambda r: count(r, "crash") == 1 and count(r, "child") == 2)
    # Vehicle 2 is in its back-off: its next start cannot execute `ros2`.
    ros2.chmod(0o644)
    deadline = time.monotonic() + 10
    while "Permission denied" not in processes.output(proc) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    ros2.chmod(0o755)
    out = processes.output(proc)
    assert proc.poll() is None, f"the launcher gave up: {out}"
    assert "Permission denied" in out and "vehicle 2" in out, out
    rows = events(log, timeout=15, until=lambda r: count(r, "start", 2) == 2)
    assert count(rows, "start", 1) == 1 and count(rows, "start", 3) == 1
    others = [e["pid"] for e in rows if e["event"] == "start" and "tgt_system:=2" not in e["argv"]]
    assert all(alive(p) for p in others)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=5) == 0


def test_a_signal_during_start_up_ends_the_launcher_and_its_children(processes, fake_ros2):
    env, log = fake_ros2
    proc = launcher(processes, {**env, "FAKE_PKG_PREFIX_SECONDS": "30"})
    rows = events(log, until=lambda r: count(r, "pkg prefix") == 1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=2) == 0, processes.output(proc)
    assert gone_within({rows[0]["pid"]}, 1), "`ros2 pkg prefix` outlived the launcher"
    time.sleep(0.5)
    assert count(events(log), "start") == 0


def test_a_signal_while_vehicles_start_ends_every_child(processes, fake_ros2):
    env, log = fake_ros2
    proc = launcher(processes, env, "vehicle_ids:=[1,2,3]")
    events(log, until=lambda r: count(r, "start") >= 1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=2) == 0
    pids = recorded_pids(log)
    assert gone_within(pids, 1), [p for p in pids if alive(p)]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_stops_within_a_second_with_its_output_gone_and_deaf_children(fake_ros2, sig):
    env, log = fake_ros2
    proc = subprocess.Popen(
        [str(executable("mavros_launcher")), "--ros-args", "-p", "vehicle_ids:=[1,2]"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env, "FAKE_PORT_HOLDER": "1"},
        start_new_session=True,
    )
    try:
        events(log, until=lambda r: count(r, "port holder") == 2 and count(r, "child") == 2)
        proc.stdout.close()
        proc.stderr.close()
        time.sleep(0.3)
        assert proc.poll() is None, f"died when its output pipe closed (exit {proc.returncode})"
        started = time.monotonic()
        os.kill(proc.pid, sig)
        proc.wait(timeout=5)
        assert time.monotonic() - started <= 1.0, f"stopped {time.monotonic() - started:.2f} s after {sig.name}"
        assert proc.returncode == 0
        assert gone_within(recorded_pids(log), 0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
