"""Every executable stops within a second on SIGINT and SIGTERM, also after
whoever read its output has gone: the situation of a child that `ros2 launch`
orphaned when it was itself killed (launch's documented behaviour). And it
stops cleanly: a ROS 2 process killed by the signal would leave its Fast DDS
shared-memory segment in /dev/shm (64 MB with the large-data profile), and a
machine that runs the suite or the benchmarks often fills up with them."""

import fcntl
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ROOT, executable

CONFIG = ROOT / "config" / "Config.json"

# name → arguments; each runs for real (the bridge without a simulator waits for data).
EXECUTABLES = {
    "rflysim_sim": ["--window-id", "19", "--stats", "0.2", "--no-heartbeat", "--gimbal-target", "none"],
    "bridge": ["--ros-args", "-p", f"rflysim_config:={CONFIG}", "-p", "window_id:=19", "-p", "heartbeat_port:=42905"],
    "gimbal_node": ["--ros-args", "-p", f"rflysim_config:={CONFIG}", "-p", "status_port:=42906"],
    "scene_node": [
        "--ros-args", "-p", f"rflysim_config:={CONFIG}", "-p", "status_port:=42914", "-p", "window_id:=19",
    ],
    "auv_sim": ["--image-port", "42955", "--thruster-port", "42956", "--telemetry-port", "42957", "--stats", "0.2"],
    "auv_bridge": ["--ros-args", "-p", "image_port:=42965", "-p", "thruster_port:=42966", "-p", "telemetry_port:=42967"],
    "gps_denied_sim": ["--bind", "127.0.0.1:42908", "--target", "127.0.0.1:42909", "--stats", "0.2"],
    "gps_denied_bridge": ["--ros-args", "-p", "local_port:=42910", "-p", "sim_port:=42911"],
    # No broker on these ports: both keep trying to reach it.
    "aerosim_sim": ["--bootstrap-servers", "127.0.0.1:42912", "--stats", "0.2"],
    "aerosim_bridge": ["--ros-args", "-p", "sim_port:=42913"],
    # A test fixture, not installed: it loops on its own thread, not in a runtime.
    "roundtrip_publisher": ["--ros-args", "-r", "__ns:=/signals_test", "-p", "rate_hz:=10"],
}


def fastdds_segments():
    """Fast DDS's shared-memory segments (not its ports or their lock files)."""
    return {
        p.name
        for p in Path("/dev/shm").glob("fastrtps_*")
        if not p.name.endswith("_el") and not p.name.startswith("fastrtps_port")
    }


def in_use(segment):
    """Whether a live process holds the segment: Fast DDS keeps an flock on
    its `_el` file for as long as the process lives (`fastdds shm clean`
    removes the segments nobody holds)."""
    try:
        fd = os.open(f"/dev/shm/{segment}_el", os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def start_with_pipes(name):
    return subprocess.Popen(
        [str(executable(name)), *EXECUTABLES[name]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def stops_within(proc, seconds):
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("name", sorted(EXECUTABLES))
def test_stops_within_a_second_after_its_reader_has_gone(name, sig):
    before = fastdds_segments()
    proc = start_with_pipes(name)
    try:
        time.sleep(1.5)
        assert proc.poll() is None, f"{name} exited early: {proc.stderr.read().decode(errors='replace')[-2000:]}"
        its_segments = fastdds_segments() - before
        # The reader goes away; the process keeps logging into a closed pipe.
        proc.stdout.close()
        proc.stderr.close()
        time.sleep(1.0)
        assert proc.poll() is None, f"{name} died when its output pipe closed (exit {proc.returncode})"
        started = time.monotonic()
        os.kill(proc.pid, sig)
        assert stops_within(proc, 1.0), f"{name} still ran 1 s after {sig.name} with its output gone"
        assert time.monotonic() - started <= 1.0
        left = {s for s in its_segments & fastdds_segments() if not in_use(s)}
        assert not left, f"{name} left its shared-memory segments after {sig.name}: {sorted(left)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("name", sorted(EXECUTABLES))
def test_ctrl_c_under_launch_is_one_stop_not_a_kill(name):
    """Ctrl-C in `ros2 launch` reaches a child twice at once: the terminal's
    SIGINT to the process group, then launch's own. That is one request to
    stop: the process still cleans up and exits by itself."""
    proc = subprocess.Popen([str(executable(name)), *EXECUTABLES[name]], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        time.sleep(1.5)
        assert proc.poll() is None, f"{name} exited early: {proc.stderr.read().decode(errors='replace')[-2000:]}"
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.02)
        os.kill(proc.pid, signal.SIGINT)
        if not stops_within(proc, 2.0):
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"{name} still ran 2 s after two SIGINTs; its log: {err.decode(errors='replace')[-3000:]}")
        assert proc.returncode >= 0, f"{name} was killed by the second SIGINT (exit {proc.returncode})"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("name", sorted(n for n in EXECUTABLES if n.endswith(("bridge", "_node"))))
def test_ctrl_c_during_the_start_up_is_a_clean_stop_after_it(name):
    """A bridge's first log line comes while it still makes its nodes: a
    SIGINT then ends it cleanly once they are made, exit 0, its Fast DDS
    segments removed (the default action would kill it and leave them)."""
    before = fastdds_segments()
    proc = start_with_pipes(name)
    try:
        first = proc.stderr.readline()
        assert first, f"{name} logged nothing at its start"
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, f"{name}: exit {proc.returncode}; its log: {(first + err).decode(errors='replace')[-3000:]}"
        assert b"shutting down" in err
        left = {s for s in fastdds_segments() - before if not in_use(s)}
        assert not left, f"{name} left its shared-memory segments: {sorted(left)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
