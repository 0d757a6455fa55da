"""RflySim on its own PC, with its own clock and network: the emulator in
the simulator PC's namespace (tests/netns_rig.py), the bridge here with
`sim_ip` set to it and this host's default route on another interface.

- multicast (CopterSim's heartbeat, RflySim3D's gimbal status) is joined on
  the interface towards the simulator, not the default route's;
- stamps stay on this machine's clock whatever the simulator PC's clock
  says (10 s ahead, 10 s behind), its anchors flapping or absurd: within a
  few ms of each sample's time here, never backwards; `/clock` never
  jumps to a time the reference vehicle's own samples do not support.
"""

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from rflysim_bridge.msg import CameraStatus
from sensor_msgs.msg import Imu

from conftest import executable
from netns_rig import simulator_pc
from rflysim_scenario import Scenario, sensor, stamp_seconds

HEARTBEAT_PORT = 20005
CAMERA_STATUS_PORT = 20006
MULTICAST_GROUP = "224.0.0.10"
HEARTBEAT_SENDER = Path(__file__).with_name("heartbeat_sender.py")
# IMU requested at 50 Hz: samples 20 ms apart, so a stamp off by more than
# a few ms cannot pass for its neighbour's.
IMU_HZ = 50
STAMP_TOLERANCE_S = 0.003


@pytest.fixture(scope="module")
def pc():
    with simulator_pc() as h:
        yield h


def wait_until(condition, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what() if callable(what) else what
        time.sleep(0.1)


def latest_statuses(collector, diag):
    return {s.name: s for m in collector.messages(diag) for s in m.status}


def value(status, key):
    return next((kv.value for kv in status.values if kv.key == key), None)


def time_base(collector, diag, copter=1):
    return latest_statuses(collector, diag).get(f"rflysim_bridge: uav{copter} time base")


def imu_sends(send_log, copter=1):
    """(sim time, wall time here) of every IMU sample the emulator sent."""
    out = []
    for line in Path(send_log).read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == f"imu{copter}":
            out.append((float(parts[1]), float(parts[2])))
    return out


def judge_stamps(stamps, sends):
    """Every stamp within a few ms of its sample's time on this machine, and
    never backwards; returns the largest difference. A sample's time here is
    its sim time plus where sim time 0 lies on this clock: the least `sent −
    sim time` of the emulator's log (a sample waits a little, now and then a
    few ms, between its sim time and its send)."""
    assert len(stamps) >= 100, f"only {len(stamps)} IMU messages"
    assert all(b > a for a, b in zip(stamps, stamps[1:])), "an IMU stamp went back"
    epoch = min(wall - sim for sim, wall in sends)
    sampled = sorted(sim + epoch for sim, _ in sends)
    off = [min(sampled, key=lambda w: abs(w - s)) - s for s in stamps]
    worst = max(range(len(off)), key=lambda i: abs(off[i]))
    assert abs(off[worst]) < STAMP_TOLERANCE_S, (
        f"stamp {worst} of {len(stamps)} is {off[worst] * 1e3:+.1f} ms from its sample's time here; "
        f"around it (ms): {[round(o * 1e3, 1) for o in off[max(0, worst - 5):worst + 5]]}")
    return abs(off[worst])


def bridge_params(h, **extra):
    return {"sim_host": h.sim_ip, "use_sim_time": False, "heartbeat_port": HEARTBEAT_PORT,
            "heartbeat_multicast": False, "imu_rate_hz": IMU_HZ, **extra}


def test_multicast_is_joined_on_the_interface_towards_the_simulator(collector, processes, tmp_path, pc):
    route = subprocess.run(["ip", "route", "get", MULTICAST_GROUP], capture_output=True, text=True).stdout
    assert pc.link not in route, f"this host's route to {MULTICAST_GROUP} is the veth, not another interface: {route}"
    window = 18
    gimbal = sensor(930, 9, 2, port=42930, width=64, height=36, hz=10)
    status = collector.subscribe(CameraStatus, "/rflysim/sensor930/camera/status")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    sc = Scenario(processes, tmp_path, [gimbal], sim_prefix=pc.prefix,
                  sim_args=["--window-id", window, "--coptersim-target", pc.this_host,
                            "--heartbeat-multicast", "--gimbal-multicast"],
                  bridge_params=bridge_params(pc, heartbeat_multicast=True, window_id=window))
    gimbal_node = processes.start(
        [executable("gimbal_node"), "--ros-args", "-p", f"rflysim_config:={sc.config}", "-p", f"window_id:={window}",
         "-p", f"status_port:={CAMERA_STATUS_PORT}", "-p", "status_multicast:=true", "-p", f"sim_host:={pc.sim_ip}"],
        name="gimbal_node")

    def heartbeats_taken():
        s = latest_statuses(collector, diag).get("rflysim_bridge: CopterSim heartbeat")
        return int(value(s, "frames_published")) if s else 0

    wait_until(lambda: heartbeats_taken() >= 3,
               lambda: f"no multicast heartbeat taken ({heartbeats_taken()}): {sc.bridge_output()[-3000:]}")
    assert f"CopterSim heartbeat: UDP {HEARTBEAT_PORT} and multicast {MULTICAST_GROUP} joined on {pc.this_host}" \
        in sc.bridge_output()
    wait_until(lambda: value(time_base(collector, diag), "clock_offset_ms") not in (None, "unknown"),
               "the heartbeat gave no clock offset")
    collector.wait_for(status, 3, timeout=20)
    assert (f"RflySim3D status: UDP {CAMERA_STATUS_PORT} and multicast {MULTICAST_GROUP} joined on {pc.this_host}"
            in processes.output(gimbal_node))


@pytest.mark.parametrize("pc_clock_ahead_s", [10.0, -10.0], ids=["ahead", "behind"])
def test_stamps_stay_on_this_machines_clock(collector, processes, tmp_path, pc, pc_clock_ahead_s):
    imu = collector.subscribe(Imu, "/rflysim/imu")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    send_log = tmp_path / "sent.log"
    sc = Scenario(processes, tmp_path, [], sim_prefix=pc.prefix,
                  sim_args=["--coptersim-target", pc.this_host, "--wall-clock-offset", pc_clock_ahead_s,
                            "--send-log", send_log],
                  bridge_params=bridge_params(pc))
    collector.wait_for(imu, 5, timeout=30)
    time.sleep(6)
    stamps = [stamp_seconds(m.header) for m in collector.messages(imu)]
    time.sleep(0.5)  # the emulator logs a sample once it left
    judge_stamps(stamps, imu_sends(send_log))

    def offset():
        return value(time_base(collector, diag), "clock_offset_ms") if time_base(collector, diag) else None

    wait_until(lambda: offset() not in (None, "unknown"), "no clock offset in /diagnostics")
    assert abs(float(offset()) - pc_clock_ahead_s * 1e3) < 50, offset()
    logged = re.search(r"CopterSim's clock is ([+-]\d+\.\d) ms", sc.bridge_output())
    assert logged and abs(float(logged.group(1)) - pc_clock_ahead_s * 1e3) < 50, sc.bridge_output()[-3000:]
    status = subprocess.run([executable("status"), "--ros-args", "-p", "once:=true"], capture_output=True, text=True,
                            timeout=30)
    assert "uav1 time base" in status.stdout and "clock offset ms" in status.stdout, status.stdout + status.stderr


def first_imu_epoch(send_log):
    """This machine's wall time of vehicle 1's sim time 0, from the emulator's send log."""
    wait_until(lambda: send_log.exists() and imu_sends(send_log), "the emulator sent no IMU sample")
    sim, wall = imu_sends(send_log)[0]
    return wall - sim


def test_flapping_anchors_are_refused_and_stamps_never_go_back(collector, processes, tmp_path, pc):
    imu = collector.subscribe(Imu, "/rflysim/imu")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    send_log = tmp_path / "sent.log"
    sc = Scenario(processes, tmp_path, [], sim_prefix=pc.prefix,
                  sim_args=["--coptersim-target", pc.this_host, "--no-heartbeat", "--send-log", send_log],
                  bridge_params=bridge_params(pc))
    collector.wait_for(imu, 5, timeout=30)
    t = first_imu_epoch(send_log)
    # Two CopterSims given one id (or a stepped PC clock): anchors T and T + 10 s at 2 Hz for 8 s.
    pc.run(sys.executable, HEARTBEAT_SENDER, pc.this_host, str(HEARTBEAT_PORT), "1", f"{t},{t + 10}", "2", "16",
           check=True, timeout=30)
    stamps = [stamp_seconds(m.header) for m in collector.messages(imu)]
    time.sleep(0.5)
    judge_stamps(stamps, imu_sends(send_log))
    wait_until(lambda: int(value(time_base(collector, diag), "anchors_refused") or 0) >= 5,
               lambda: f"flapping anchors not refused: {time_base(collector, diag)}")
    assert abs(float(value(time_base(collector, diag), "clock_offset_ms"))) < 50
    assert "CopterSim heartbeat anchors refused" in sc.bridge_output()


def test_an_absurd_anchor_never_moves_clock(collector, processes, tmp_path, pc):
    clock = collector.subscribe(Clock, "/clock", qos=QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    send_log = tmp_path / "sent.log"
    # Vehicle 2's CopterSim started 30 s after vehicle 1's (its sim time 30 s behind).
    Scenario(processes, tmp_path, [], sim_prefix=pc.prefix, copters=(1, 2),
             sim_args=["--coptersim-target", pc.this_host, "--no-heartbeat", "--send-log", send_log,
                       "--start-time", "100", "--clock-offset", "2:0", "--clock-offset", "1:30"],
             bridge_params={**bridge_params(pc), "use_sim_time": True})
    collector.wait_for(clock, 10, timeout=30)
    t = first_imu_epoch(send_log)
    # One heartbeat for vehicle 2 anchored in the far future (a start time of 9·10¹⁰ s), and vehicle 1's own.
    pc.run(sys.executable, HEARTBEAT_SENDER, pc.this_host, str(HEARTBEAT_PORT), "2", "9e10", "20", "5",
           check=True, timeout=30)
    pc.run(sys.executable, HEARTBEAT_SENDER, pc.this_host, str(HEARTBEAT_PORT), "1", str(t), "20", "5",
           check=True, timeout=30)
    time.sleep(2)
    sent = imu_sends(send_log)
    newest_sample = max(sim for sim, _ in sent)
    clocks = [c.clock.sec + c.clock.nanosec * 1e-9 for c in collector.messages(clock)]
    assert max(clocks) <= newest_sample + 1.0, f"/clock went to {max(clocks)} s, the samples reach {newest_sample} s"
    assert all(b >= a for a, b in zip(clocks, clocks[1:])), "/clock went back"
    wait_until(lambda: int(value(time_base(collector, diag, 2), "anchors_refused") or 0) >= 1,
               lambda: f"the absurd anchor was not refused: {time_base(collector, diag, 2)}")
