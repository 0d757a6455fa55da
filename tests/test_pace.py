"""Stamps at any pace: the RflySim emulator runs its sim time slower or faster
than real time (--pace), pauses (--pause) and jumps (--jump, back: a reset).

On this machine's clock every sample of every stream (IMU, true state, camera,
LiDAR) arrives, is stamped within a few milliseconds of its arrival, never in
the future, never backwards. Under use_sim_time the stamps are the samples'
sim time and /clock follows it. Arrival here is the rclpy subscriber's, a
little after the bridge's own."""

import itertools
import math
import re
import socket
import struct
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Image, Imu, PointCloud2

from rflysim_scenario import Scenario, sensor, stamp_seconds

RELIABLE = QoSProfile(depth=400, reliability=ReliabilityPolicy.RELIABLE)
CAMERA, LIDAR = 4701, 4702
CAMERA_PORT, LIDAR_PORT = 43701, 43702
# One RflySim3D window for every test here: they run one after another.
WINDOW = 13
# Stamp minus arrival, seconds, at this subscriber: p95 and worst.
P95_S, WORST_S = 0.03, 1.0


def _sensors():
    return [sensor(CAMERA, 1, 2, port=CAMERA_PORT, width=64, height=48, hz=20),
            sensor(LIDAR, 20, 1, port=LIDAR_PORT, width=60, height=4, hz=10)]


def _start(collector, processes, tmp_path, window, sim_args, use_sim_time):
    sc = Scenario(processes, tmp_path, _sensors(), sim_args=["--window-id", str(window), *sim_args],
                  bridge_params={"window_id": window, "use_sim_time": use_sim_time})
    keys = {
        "imu": collector.subscribe(Imu, "/rflysim/imu", RELIABLE),
        "true state": collector.subscribe(Odometry, "/rflysim/uav1/state/odom", RELIABLE),
        "camera": collector.subscribe(Image, f"/rflysim/sensor{CAMERA}/img_rgb", RELIABLE),
        "lidar": collector.subscribe(PointCloud2, f"/rflysim/sensor{LIDAR}/vehicle_lidar", RELIABLE),
    }
    clock = collector.subscribe(Clock, "/clock", RELIABLE)
    diag = collector.subscribe(DiagnosticArray, "/diagnostics", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    for k in keys.values():
        collector.wait_for(k, 3, timeout=30)
    return sc, keys, clock, diag


def _window(collector, keys, seconds):
    """(arrival, message) per stream that arrived within the next `seconds`."""
    before = {n: len(collector.messages(k)) for n, k in keys.items()}
    time.sleep(seconds)
    return {n: collector.arrived(k)[before[n]:] for n, k in keys.items()}


def _percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(math.ceil(p * len(values))) - 1)]


def _check_on_this_clock(got, label, rates):
    """Every stream at its rate, stamped near its arrival, never ahead, never back."""
    figures = {}
    for name, pairs in got.items():
        seconds = pairs[-1][0] - pairs[0][0] if len(pairs) > 1 else 0
        assert len(pairs) >= 0.8 * rates[name] * seconds and seconds > 1, f"{label} {name}: {len(pairs)} in {seconds:.1f} s"
        stamps = [stamp_seconds(m.header) for _, m in pairs]
        assert all(b >= a for a, b in zip(stamps, stamps[1:])), f"{label} {name}: a stamp went back"
        late = [arrival - s for (arrival, _), s in zip(pairs, stamps)]
        assert min(late) > -0.002, f"{label} {name}: a stamp {-min(late):.4f} s in the future"
        figures[name] = (_percentile(late, 0.5), _percentile(late, 0.95), max(late))
        assert figures[name][1] < P95_S and figures[name][2] < WORST_S, f"{label} {name}: {figures[name]}"
    return figures


def _time_base(diag):
    """The newest diagnostics' values of vehicle 1's time base."""
    for array in reversed(diag):
        for status in array.status:
            if "uav1 time base" in status.name:
                return {kv.key: kv.value for kv in status.values}
    return {}


RATES = {"imu": 200, "true state": 100, "camera": 20, "lidar": 10}


@pytest.mark.parametrize("pace", [0.1, 0.5, 2, 10])
def test_stamps_stay_on_this_machines_clock_at_any_pace(collector, processes, tmp_path, pace):
    sc, keys, _, diag = _start(collector, processes, tmp_path, WINDOW, ["--pace", pace, "--start-time", "50"], False)
    got = _window(collector, keys, 5.0)
    figures = _check_on_this_clock(got, f"pace {pace}", RATES)
    # No IMU sample the emulator sent in the window is missing.
    sent = {round(t, 6) for t, _, _ in sc.imu_samples()}
    assert len(got["imu"]) >= 0.95 * 200 * 5, len(got["imu"])
    assert sent, "the emulator's IMU dump"
    values = _time_base(collector.messages(diag))
    assert abs(float(values["pace"]) - pace) < 0.05 * pace, values
    assert values["stamps"].endswith("the arrival (not real time)"), values
    out = sc.bridge_output()
    said = re.search(r"uav1 time base: the simulation runs at ([0-9.]+)x real time \(not real time\).*use_sim_time", out)
    assert said and abs(float(said[1]) - pace) < 0.1 * pace, out[-3000:]
    assert "out_of_order" not in out and "dropped" not in out, out[-3000:]
    print(f"pace {pace}: stamp - arrival p50/p95/max (ms):",
          {n: tuple(round(v * 1e3, 1) for v in f) for n, f in figures.items()})


@pytest.mark.parametrize("pace", [0.1, 0.5, 2, 10])
def test_under_sim_time_stamps_are_sim_time_and_clock_follows_at_any_pace(collector, processes, tmp_path, pace):
    sc, keys, clock, _ = _start(collector, processes, tmp_path, WINDOW, ["--pace", pace, "--start-time", "50"], True)
    got = _window(collector, {**keys, "clock": clock}, 4.0)
    ticks = [m.clock.sec + m.clock.nanosec * 1e-9 for _, m in got.pop("clock")]
    assert ticks and all(b >= a for a, b in zip(ticks, ticks[1:])), "/clock went back"
    sent = {round(t, 6) for t, _, _ in sc.imu_samples()}
    for name, pairs in got.items():
        assert len(pairs) >= 0.8 * RATES[name] * 3.5, f"{name}: {len(pairs)}"
        stamps = [stamp_seconds(m.header) for _, m in pairs]
        assert all(b >= a for a, b in zip(stamps, stamps[1:])), f"{name}: a stamp went back"
        # Sim time runs at the pace: 4 s of wall time hold 4 × pace s of stamps.
        span = stamps[-1] - stamps[0]
        assert abs(span - pace * (pairs[-1][0] - pairs[0][0])) < 0.1 * pace + 0.1, f"{name}: {span} s of sim time"
    imu = [round(stamp_seconds(m.header), 6) for _, m in got["imu"]]
    assert all(t in sent for t in imu), "each IMU stamp is a sample's sim time"
    assert abs(ticks[-1] - imu[-1]) < max(0.05, 0.05 * pace), f"/clock at {ticks[-1]}, the IMU at {imu[-1]}"


def test_a_pause_and_a_reset_keep_stamps_on_this_machines_clock(collector, processes, tmp_path):
    """Sim time stands for 2 s while samples go on, runs again, is reset to 0
    and then steps forward by 500 s: no sample lost, none ahead, none back."""
    # The schedule counts from the emulator's start; the bridge needs a few seconds to get going.
    sc, keys, _, diag = _start(collector, processes, tmp_path, WINDOW,
                               ["--start-time", "50", "--pause", "6:2", "--jump", "10:0", "--jump", "12:500"], False)
    got = _window(collector, keys, max(0.5, 14.0 - sc_age(sc)))
    _check_on_this_clock(got, "pause and reset", RATES)
    values = _time_base(collector.messages(diag))
    assert int(values["pace_departures"]) >= 1, values
    out = sc.bridge_output()
    # Said when the diagnostics next look: the pace then may still show some of the last second's.
    assert re.search(r"uav1 time base: the simulation (is paused|runs at [0-9.]+x real time) \(not real time\)",
                     out), out[-3000:]
    assert "keeps real time again" in out
    assert "out_of_order" not in out and "dropped" not in out, out[-3000:]


def test_under_sim_time_a_pause_stands_and_a_reset_takes_clock_back_once(collector, processes, tmp_path):
    sc, keys, clock, _ = _start(collector, processes, tmp_path, WINDOW,
                                ["--start-time", "50", "--pause", "6:2", "--jump", "10:0"], True)
    got = _window(collector, {"imu": keys["imu"], "clock": clock}, max(0.5, 12.5 - sc_age(sc)))
    ticks = [m.clock.sec + m.clock.nanosec * 1e-9 for _, m in got["clock"]]
    backs = [(a, b) for a, b in zip(ticks, ticks[1:]) if b < a]
    assert len(backs) == 1 and backs[0][1] < 5, f"/clock went back {backs}"
    stamps = [stamp_seconds(m.header) for _, m in got["imu"]]
    back = [(a, b) for a, b in zip(stamps, stamps[1:]) if b < a]
    assert len(back) == 1, f"the IMU's stamps went back {back} (once, at the reset)"
    # While paused the samples went on, each stamped with the sim time that stood.
    standing = max(sum(1 for _ in g) for _, g in itertools.groupby(stamps))
    assert standing > 200, f"{standing} samples at the time that stood (2 s at 200 Hz)"


def test_a_frame_missing_a_datagram_then_a_whole_one_at_a_twentieth_of_real_time(collector, processes, tmp_path):
    """24-byte headers, sim time at 0.05 s per second: the frame after the
    damaged one was once dropped as out of order."""
    s = sensor(4711, 1, 2, port=43711, width=320, height=240, hz=10)
    key = collector.subscribe(Image, "/rflysim/sensor4711/img_rgb", RELIABLE)
    sc = Scenario(processes, tmp_path, [s],
                  sim_args=["--window-id", str(WINDOW), "--header", "24", "--pace", "0.05", "--start-time", "1000",
                            "--frames", "30", "--drop-packet", "20:1"],
                  bridge_params={"window_id": WINDOW, "use_sim_time": False, "qos_depth": 40})
    assert sc.sim.wait(timeout=30) == 0
    time.sleep(0.5)
    got = collector.messages(key)
    index = [line.split() for line in (sc.dump / "sensor4711.index").read_text().splitlines() if line]
    rendered = {(sc.dump / name).read_bytes(): int(frame) for frame, _, name in index}
    ids = [rendered[bytes(m.data)] for m in got]
    out = sc.bridge_output()
    assert "out_of_order" not in out, out[-3000:]
    # Every frame from the first received on is published but the damaged one.
    assert ids and ids[0] < 15, ids
    assert ids == [i for i in range(ids[0], 30) if i != 20], ids
    stamps = [stamp_seconds(m.header) for m in got]
    assert all(b >= a for a, b in zip(stamps, stamps[1:]))


def test_a_burst_of_malformed_datagrams_costs_no_valid_lidar_frame_at_a_slow_pace(collector, processes, tmp_path):
    sensors = [sensor(4721, 20, 1, port=43721, width=60, height=4, hz=10),
               sensor(4722, 20, 1, port=43722, width=60, height=4, hz=10)]
    sc = Scenario(processes, tmp_path, sensors, sim_args=["--window-id", str(WINDOW), "--pace", "0.1", "--start-time", "100"],
                  bridge_params={"window_id": WINDOW, "use_sim_time": False})
    keys = [collector.subscribe(PointCloud2, f"/rflysim/sensor{seq}/vehicle_lidar", RELIABLE) for seq in (4721, 4722)]
    for k in keys:
        collector.wait_for(k, 5, timeout=30)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(200):
        # A LiDAR header whose sizes and times are nonsense, and plain junk.
        s.sendto(struct.pack("<6id", 1234567893, 40 + i, i, 7, 5_000_000 + i, 0, 1e9 * (i % 3)) + bytes(i % 50),
                 ("127.0.0.1", 43721 + i % 2))
    counts = [len(collector.messages(k)) for k in keys]
    for k, n in zip(keys, counts):
        collector.wait_for(k, n + 5, timeout=5)
    assert sc.bridge.poll() is None


def sc_age(sc):
    """Seconds since the scenario's emulator started."""
    return time.time() - sc.sim.started_at
