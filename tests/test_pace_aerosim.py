"""Stamps at any pace through AeroSim: the emulator's sim time runs slower or
faster than real time, pauses and is reset, through a real Kafka-protocol
broker. On this machine's clock every vehicle state arrives, stamped near the
wall time it was made, never in the future, never backwards; under
use_sim_time the stamps are its sim time and /clock follows it."""

import math
import time

import pytest
from conftest import executable
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from aerosim_peer import Broker
from rflysim_scenario import stamp_seconds

pytestmark = pytest.mark.broker

RELIABLE = QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
STATE_HZ = 100


@pytest.fixture
def broker():
    b = Broker()
    yield b
    b.stop()


def _run(broker, processes, collector, sim_args, use_sim_time, seconds):
    processes.start([executable("aerosim_sim"), "--bootstrap-servers", broker.bootstrap, "--camera-rate", "0",
                     "--state-rate", str(STATE_HZ), *map(str, sim_args)], name="aerosim_sim")
    host, port = broker.bootstrap.rsplit(":", 1)
    bridge = processes.start([executable("aerosim_bridge"), "--ros-args", "-r", "__ns:=/aerosim", "-p", f"sim_host:={host}",
                              "-p", f"sim_port:={port}", "-p", f"use_sim_time:={str(use_sim_time).lower()}"],
                             name="aerosim_bridge")
    odom = collector.subscribe(Odometry, "/aerosim/actor1/odom", RELIABLE)
    clock = collector.subscribe(Clock, "/clock", RELIABLE)
    collector.wait_for(odom, 20, timeout=40)
    before = {k: len(collector.messages(k)) for k in (odom, clock)}
    time.sleep(seconds)
    return bridge, collector.arrived(odom)[before[odom]:], [m for _, m in collector.arrived(clock)[before[clock]:]]


def _percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(math.ceil(p * len(values))) - 1)]


@pytest.mark.parametrize("pace", [0.1, 2, 10])
def test_aerosim_stamps_stay_on_this_machines_clock_at_any_pace(broker, processes, collector, pace):
    bridge, got, _ = _run(broker, processes, collector, ["--pace", pace], False, 4.0)
    assert len(got) >= 0.8 * STATE_HZ * 4, len(got)
    stamps = [stamp_seconds(m.header) for _, m in got]
    assert all(b >= a for a, b in zip(stamps, stamps[1:])), "a stamp went back"
    late = [arrival - s for (arrival, _), s in zip(got, stamps)]
    assert min(late) > -0.002, f"a stamp {-min(late):.4f} s in the future"
    # Kafka's own delivery (a fetch waits for records) is in these figures.
    p95 = _percentile(late, 0.95)
    assert p95 < 0.1, f"p95 {p95}"
    out = processes.output(bridge)
    assert "not real time" in out and "use_sim_time" in out, out[-2000:]
    assert "dropped" not in out, out[-2000:]
    print(f"AeroSim at pace {pace}: stamp - arrival p50/p95/max (ms):",
          round(_percentile(late, 0.5) * 1e3, 1), round(p95 * 1e3, 1), round(max(late) * 1e3, 1))


@pytest.mark.parametrize("pace", [0.1, 2, 10])
def test_aerosim_under_sim_time_stamps_are_sim_time_and_clock_follows(broker, processes, collector, pace):
    _, got, ticks = _run(broker, processes, collector, ["--pace", pace], True, 4.0)
    assert len(got) >= 0.8 * STATE_HZ * 4, len(got)
    stamps = [stamp_seconds(m.header) for _, m in got]
    assert all(b > a for a, b in zip(stamps, stamps[1:])), "stamps are each state's own sim time, in order"
    # Sim time advances at the pace: a state every 1/100 s of wall time is pace/100 s of sim time.
    steps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    assert abs(steps[len(steps) // 2] - pace / STATE_HZ) < 1e-6, steps[len(steps) // 2]
    clock = [c.clock.sec + c.clock.nanosec * 1e-9 for c in ticks]
    assert clock and all(b >= a for a, b in zip(clock, clock[1:])), "/clock went back"
    assert abs(clock[-1] - stamps[-1]) < max(0.1, 0.1 * pace), (clock[-1], stamps[-1])


@pytest.mark.parametrize("use_sim_time", [False, True])
def test_aerosim_through_a_pause_and_a_reset(broker, processes, collector, use_sim_time):
    """Records go on while sim time stands for 2 s; then it is reset to 0.
    On this machine's clock nothing is lost and nothing goes back; under
    use_sim_time /clock stands, then goes back once."""
    t0 = time.time()
    bridge, got, ticks = _run(broker, processes, collector, ["--pause", "5:2", "--jump", "9:0"], use_sim_time, 0.0)
    time.sleep(max(0.0, 11.0 - (time.time() - t0)))
    got = collector.arrived("/aerosim/actor1/odom")
    stamps = [stamp_seconds(m.header) for _, m in got]
    if use_sim_time:
        back = [(a, b) for a, b in zip(stamps, stamps[1:]) if b < a]
        assert len(back) == 1 and back[0][1] < 1.0, f"the stamps went back {back} (once, at the reset)"
        clock = [c.clock.sec + c.clock.nanosec * 1e-9 for _, c in collector.arrived("/clock")]
        assert sum(1 for a, b in zip(clock, clock[1:]) if b < a) == 1, "/clock goes back once"
        standing = max(sum(1 for s in stamps if s == x) for x in set(stamps))
        assert standing > STATE_HZ, f"{standing} states at the time that stood (2 s at {STATE_HZ} Hz)"
    else:
        assert all(b >= a for a, b in zip(stamps, stamps[1:])), "a stamp went back"
        late = [arrival - s for (arrival, _), s in zip(got, stamps)]
        assert min(late) > -0.002 and _percentile(late, 0.95) < 0.1, (min(late), _percentile(late, 0.95))
        out = processes.output(bridge)
        assert "dropped" not in out and "not real time" in out, out[-2000:]
    seconds = got[-1][0] - got[0][0]
    assert len(got) >= 0.8 * STATE_HZ * seconds, (len(got), seconds)
