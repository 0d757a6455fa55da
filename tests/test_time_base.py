"""One corrupt sample must not move the stamps of any other: a NaN or absurd
sim time (IMU, frame, true state) is dropped and counted, and the samples
around it keep the shared time base."""

import math
import socket
import struct
import time
from pathlib import Path

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Image, Imu

from netns_rig import udp_counters
from rflysim_scenario import Scenario, sensor, stamp_seconds

# Two seconds of a 200 Hz IMU on both ends: a reader in Python on a loaded
# machine falls behind by more than the usual histories hold (5 and 50
# samples), and what is judged is the bridge.
DEEP_HISTORY = 400
DEEP_READER = QoSProfile(depth=DEEP_HISTORY, reliability=ReliabilityPolicy.RELIABLE)
IMU_PORT = 31000  # copter 1 (RflySim's SDK: VisionCaptureApi.py's IMU request)


def test_bad_sim_times_are_dropped_and_change_no_other_stamp(collector, processes, tmp_path):
    port = 42831
    sc = Scenario(processes, tmp_path, [sensor(831, 1, 2, port=port, hz=20)],
                  sim_args=["--window-id", "10", "--no-heartbeat"],
                  bridge_params={"window_id": 10, "use_sim_time": False, "heartbeat_port": 42835})
    imu = collector.subscribe(Imu, "/rflysim/imu")
    img = collector.subscribe(Image, "/rflysim/sensor831/img_rgb")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    collector.wait_for(imu, 20, timeout=30)
    collector.wait_for(img, 2)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bad_times = [math.nan, math.inf, -5.0, 1e300, 1e12]
    payload = bytes(32 * 24 * 3)
    for i, t in enumerate(bad_times):
        s.sendto(struct.pack("<2id6f", 1234567898, 10_000 + i, t, 0, 0, -9.8, 0, 0, 0), ("127.0.0.1", IMU_PORT))
        s.sendto(struct.pack("<6id", 1234567893, 32 + len(payload), 0, 1, 9_000_000 + i, 0, t) + payload,
                 ("127.0.0.1", port))
        time.sleep(0.05)
    n_imu, n_img = len(collector.messages(imu)), len(collector.messages(img))
    collector.wait_for(imu, n_imu + 100, timeout=10)
    collector.wait_for(img, n_img + 10, timeout=10)
    now = time.time()
    for key in (imu, img):
        for m in collector.messages(key):
            age = now - stamp_seconds(m.header)
            assert -1.0 < age < 60.0, f"{key}: a stamp {age:.3g} s from the wall clock"
    time.sleep(1.2)
    drops = {}
    for status in collector.messages(diag)[-1].status:
        for kv in status.values:
            if kv.key == "dropped_bad_stamp":
                drops[status.name] = int(kv.value)
    assert any("imu" in n and c == len(bad_times) for n, c in drops.items()), drops
    # A frame's NaN or infinite stamp is refused by the reassembler already (bad_length); the finite ones here.
    assert any("sensor831" in n and c >= 3 for n, c in drops.items()), drops
    assert sc.bridge.poll() is None


def _kernel_udp_drops():
    """Datagrams the kernel dropped: for a full receive buffer (this host's),
    or from a full input backlog, loopback's too (every CPU's, each line's
    second column)."""
    rcvbuf = udp_counters(Path("/proc/net/snmp").read_text())["RcvbufErrors"]
    backlog = sum(int(line.split()[1], 16) for line in Path("/proc/net/softnet_stat").read_text().splitlines())
    return rcvbuf + backlog


def _stamped_within(collector, keys, seconds, grace=2.0):
    """Per key, the messages stamped within `seconds` after its newest one at
    the start, once each had `grace` s more to arrive (a loaded machine's
    late delivery is no drop, a sample missing from the span is), and the
    datagrams the kernel dropped meanwhile (a bridge starved of CPU for
    longer than its receive buffer lasts: nothing it could count)."""
    starts = {k: stamp_seconds(collector.messages(k)[-1].header) for k in keys}
    kernel_drops = _kernel_udp_drops()
    time.sleep(seconds + grace)
    got = {k: [m for m in collector.messages(k) if starts[k] < stamp_seconds(m.header) <= starts[k] + seconds]
           for k in keys}
    return got, _kernel_udp_drops() - kernel_drops


def _all_but_kernel_drops(key, got, expected, kernel_drops, span):
    """Every sample of the span, but one at its edge and those the kernel dropped."""
    missing = expected - len(got)
    assert missing <= 1 + kernel_drops, (
        f"{key}: {len(got)} of {expected} samples stamped in {span} s; "
        f"the kernel dropped {kernel_drops} datagram(s)")


def _never_backwards(messages, label):
    stamps = [stamp_seconds(m.header) for m in messages]
    assert all(b >= a for a, b in zip(stamps, stamps[1:])), f"{label}: a stamp went back"
    return stamps


def test_a_swarm_on_staggered_clocks_keeps_every_vehicle(collector, processes, tmp_path):
    """Two CopterSims 30 s apart (a swarm started one vehicle after another),
    IMU at 200 Hz each, and a camera mounted on the second: every stream at
    full rate, stamped near the wall clock, never backwards."""
    port = 42841
    sc = Scenario(processes, tmp_path, [sensor(841, 1, 2, port=port, hz=20, TargetCopter=2)], copters=(1, 2),
                  sim_args=["--window-id", "11", "--clock-offset", "2:30", "--start-time", "5"],
                  bridge_params={"window_id": 11, "use_sim_time": False, "qos_depth": DEEP_HISTORY})
    keys = [collector.subscribe(Imu, f"/uav{i}/rflysim/imu", qos=DEEP_READER) for i in (1, 2)]
    camera = collector.subscribe(Image, "/rflysim/sensor841/img_rgb")
    for k in keys:
        collector.wait_for(k, 50, timeout=30)
    collector.wait_for(camera, 5)
    got, kernel_drops = _stamped_within(collector, keys + [camera], 4.0)
    now = time.time()
    for k in keys:
        _all_but_kernel_drops(k, got[k], 800, kernel_drops, 4)
    assert len(got[camera]) >= 0.85 * 80, f"camera: {len(got[camera])} of 80 frames stamped in 4 s"
    for k in keys + [camera]:
        stamps = _never_backwards(collector.messages(k), k)
        assert -0.5 < now - stamps[-1] < 1.0, f"{k}: the last stamp is {now - stamps[-1]:.3f} s from the wall clock"
    assert "stamp_outlier" not in sc.bridge_output()


def test_under_sim_time_a_swarm_shares_one_clock(collector, processes, tmp_path):
    """With use_sim_time, the second vehicle (30 s ahead on its own clock) is
    mapped onto the clock /clock carries: the same instant, the same stamp."""
    sc = Scenario(processes, tmp_path, [], copters=(1, 2),
                  sim_args=["--window-id", "12", "--clock-offset", "2:30", "--start-time", "5"],
                  bridge_params={"window_id": 12, "use_sim_time": True, "qos_depth": DEEP_HISTORY})
    keys = [collector.subscribe(Imu, f"/uav{i}/rflysim/imu", qos=DEEP_READER) for i in (1, 2)]
    clock = collector.subscribe(Clock, "/clock")
    for k in keys:
        collector.wait_for(k, 50, timeout=30)
    ticked = len(collector.messages(clock))
    got, kernel_drops = _stamped_within(collector, keys, 3.0)
    latest = {k: collector.messages(k)[-1] for k in keys}
    for k in keys:
        _all_but_kernel_drops(k, got[k], 600, kernel_drops, 3)
        _never_backwards(collector.messages(k), k)
    last1, last2 = (stamp_seconds(latest[k].header) for k in keys)
    assert abs(last1 - last2) < 0.3, f"vehicle 1 at {last1:.3f} s, vehicle 2 at {last2:.3f} s"
    ticks = [m.clock.sec + m.clock.nanosec * 1e-9 for m in collector.messages(clock)[ticked:]]
    assert ticks and all(b >= a for a, b in zip(ticks, ticks[1:]))
    assert abs(ticks[-1] - last1) < 0.5, f"/clock at {ticks[-1]:.3f}, vehicle 1 at {last1:.3f}"
    assert sc.bridge.poll() is None
