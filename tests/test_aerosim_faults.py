"""`aerosim_bridge` when the field misbehaves: a slow or hanging broker
between the bridge and AeroSim (a TCP proxy), a broker that trickles bytes,
records too large or compressed, a backlog read late, and what the command
path leaves each aircraft holding. confluent-kafka is AeroSim's side."""

import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CompressedImage

from confluent_kafka import OFFSET_BEGINNING

from aerosim_peer import Broker, Peer, States, bincode_image, envelope, flight_display, vehicle_state
from rflysim_bridge.msg import AutopilotCommand, FlightControlCommand, FlightDisplay
from tcp_proxy import Proxy
from test_aerosim_bridge import (AUTOPILOT, DISPLAY, FLIGHT_CONTROL, STATE, SimClock, start_bridge, start_under_sim_time,
                                 wait_subscribed)

pytestmark = pytest.mark.broker

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
TOPICS = (STATE, DISPLAY, FLIGHT_CONTROL, AUTOPILOT, "aerosim.clock", "aerosim.renderer.responses")


@pytest.fixture
def broker():
    b = Broker()
    b.create(*TOPICS)
    yield b
    b.stop()


@pytest.fixture
def proxied():
    """A broker reached only through a proxy (the broker advertises the proxy's port)."""
    proxy = Proxy(0)
    b = Broker(advertised_port=proxy.port)
    proxy.target = ("127.0.0.1", b.port)
    b.create(*TOPICS)
    yield b, proxy
    proxy.close()
    b.stop()


def autopilot(altitude_ft):
    return AutopilotCommand(flight_plan="", flight_plan_command=AutopilotCommand.FLIGHT_PLAN_RUN,
                            use_manual_setpoints=True, altitude_hold=True, altitude_setpoint_ft=altitude_ft,
                            airspeed_hold=True, airspeed_setpoint_kts=90.0, heading_hold=True,
                            heading_setpoint_deg=45.0)


def is_state_hold(d):
    return d["use_manual_setpoints"] and d["altitude_hold"] and d["heading_hold"] and not d["attitude_hold"]


def wait_matched(publisher, timeout=15.0):
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        assert time.monotonic() < deadline, "the bridge never subscribed"
        time.sleep(0.05)


def drain(consumer, seconds):
    """Every record `consumer` gets within `seconds`, as JSON."""
    out, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        m = consumer.poll(0.1)
        if m is not None and not m.error():
            out.append(json.loads(m.value()))
    return out


def publish_until_on_broker(pub, consumer, command, timeout=15.0):
    """Publishes `command` until a record reaches the broker (`consumer`'s
    topic): the bridge is connected."""
    deadline = time.monotonic() + timeout
    while not drain(consumer, 0.3):
        assert time.monotonic() < deadline, "no command reached the broker"
        pub.publish(command)


def test_behind_a_slow_broker_commands_leave_once_in_order_and_the_hold_follows(proxied, processes, collector):
    """150 ms each way between bridge and broker from the start (a cold
    connection): of 50 autopilot commands at 10 Hz, each one that leaves
    leaves once, in order; then the hold comes after the silence."""
    broker, proxy = proxied
    proxy.delay = 0.15
    peer = Peer(broker.bootstrap)
    ap = peer.reader(AUTOPILOT)
    states = States(peer)
    try:
        bridge = start_bridge(processes, proxy.bootstrap, "cmd_timeout_s:=1.0")
        pub = collector.node.create_publisher(AutopilotCommand, "/aerosim/actor1/autopilot_command", RELIABLE)
        wait_matched(pub)
        for i in range(50):
            pub.publish(autopilot(1000.0 + i))
            time.sleep(0.1)
        silent_at = time.monotonic()
        records = drain(ap, 4.0)
    finally:
        states.stop()
    # The commands ask for 1000 ft and up; the hold, for the state's 300 m (984 ft).
    commands = [r["data"]["altitude_setpoint_ft"] for r in records if r["data"]["altitude_setpoint_ft"] >= 1000.0]
    holds = [r for r in records if r["data"]["altitude_setpoint_ft"] < 1000.0 and is_state_hold(r["data"])]
    assert len(commands) >= 8, f"only {len(commands)} of 50 commands reached the broker"
    assert len(set(commands)) == len(commands), f"a command sent twice: {commands}"
    assert commands == sorted(commands), commands
    assert commands[-1] >= 1040.0, f"the last command to leave was {commands[-1]}"
    assert holds, "no hold after the controller went silent"
    assert records[-1] is holds[-1]
    assert time.monotonic() - silent_at < 6.0
    assert bridge.poll() is None


def test_the_hold_lost_at_the_stop_is_an_error_and_uncommanded_actors_get_nothing(proxied, processes, collector):
    """Two actors, one commanded. With the broker answering, the stop holds
    actor1 only; with the broker hanging, the lost hold is logged as an error,
    counted, and the exit status says so, within a second."""
    broker, proxy = proxied
    broker.create("aerosim.actor2.vehicle_state", "aerosim.actor2.primary_flight_display_data",
                  "aerosim.actor2.flight_control_command", "aerosim.actor2.autopilot_command")
    peer = Peer(broker.bootstrap)
    ap1, ap2 = peer.reader(AUTOPILOT), peer.reader("aerosim.actor2.autopilot_command")
    states = States(peer)
    try:
        bridge = start_bridge(processes, proxy.bootstrap, "cmd_timeout_s:=30.0", "vehicle_ids:=[actor1,actor2]")
        pub = collector.node.create_publisher(AutopilotCommand, "/aerosim/actor1/autopilot_command", RELIABLE)
        wait_matched(pub)
        publish_until_on_broker(pub, ap1, autopilot(2000.0))
        bridge.send_signal(signal.SIGINT)
        assert bridge.wait(timeout=3) == 0
        at_stop = drain(ap1, 2.0)
        assert len(at_stop) == 1 and is_state_hold(at_stop[0]["data"]), at_stop
        assert drain(ap2, 1.0) == [], "actor2 had no command: it keeps its flight plan"

        bridge = start_bridge(processes, proxy.bootstrap, "cmd_timeout_s:=30.0")
        wait_matched(pub)
        publish_until_on_broker(pub, ap1, autopilot(2100.0))
    finally:
        states.stop()
    proxy.hang = True
    proxy.cut()
    began = time.monotonic()
    bridge.send_signal(signal.SIGINT)
    assert bridge.wait(timeout=5) == 1, "the exit status says a vehicle may keep its command"
    assert time.monotonic() - began < 1.5
    log = processes.output(bridge)
    assert "actor1: no neutral command was delivered" in log, log[-3000:]
    assert "may keep their last command" in log


def test_a_silent_stick_controller_gets_centred_sticks_and_the_hold(broker, processes, collector):
    """After cmd_vel (a flight-control command) goes silent: a flight-control
    command with centred sticks and the power kept, and the autopilot hold;
    at the stop nothing more (the neutral is in force already)."""
    peer = Peer(broker.bootstrap)
    fc, ap = peer.reader(FLIGHT_CONTROL), peer.reader(AUTOPILOT)
    states = States(peer)
    try:
        bridge = start_bridge(processes, broker.bootstrap, "cmd_timeout_s:=0.5")
        pub = collector.node.create_publisher(Twist, "/aerosim/actor1/cmd_vel", RELIABLE)
        wait_matched(pub)
        t = Twist()
        t.linear.x, t.linear.z, t.angular.z = 30.0, 2.0, 0.3
        for _ in range(10):
            pub.publish(t)
            time.sleep(0.05)
        sticks = drain(fc, 2.0)
        holds = drain(ap, 1.0)
        bridge.send_signal(signal.SIGINT)
        assert bridge.wait(timeout=3) == 0
    finally:
        states.stop()
    assert sticks, "no flight-control command"
    last = sticks[-1]["data"]
    assert (last["roll_cmd"], last["pitch_cmd"], last["yaw_cmd"]) == (0.0, 0.0, 0.0), sticks[-1]
    assert last["power_cmd"] == sticks[0]["data"]["power_cmd"] == [0.6]
    assert sticks[0]["data"]["pitch_cmd"] < 0, "a climb is nose-up: negative pitch_cmd"
    assert len(holds) == 1 and is_state_hold(holds[0]["data"])
    assert abs(holds[0]["data"]["altitude_setpoint_ft"] - 300.0 / 0.3048) < 1.0
    assert drain(fc, 0.5) == [] and drain(ap, 0.5) == [], "nothing more at the stop"


def test_without_a_fresh_state_the_hold_keeps_the_attitude(broker, processes, collector):
    peer = Peer(broker.bootstrap)
    ap = peer.reader(AUTOPILOT)
    bridge = start_bridge(processes, broker.bootstrap, "cmd_timeout_s:=0.5")
    collector.subscribe(Odometry, "/aerosim/actor1/odom", qos=RELIABLE, key="odom")
    # One state only, then none: stale by the time the hold is built. Finite but absurd values, too.
    wait_subscribed(collector, "odom", lambda: peer.send(STATE, envelope(
        STATE, "VehicleState", vehicle_state((0, 0, -1e150)), sim=1.0)))
    pub = collector.node.create_publisher(AutopilotCommand, "/aerosim/actor1/autopilot_command", RELIABLE)
    wait_matched(pub)
    assert drain(ap, 0.5) == [], "the reader is at the end of its topic"
    pub.publish(autopilot(1500.0))
    records = drain(ap, 3.0)
    assert records and records[0]["data"]["altitude_setpoint_ft"] == 1500.0
    hold = records[-1]["data"]
    assert hold["use_manual_setpoints"] and hold["attitude_hold"], hold
    assert not (hold["altitude_hold"] or hold["heading_hold"] or hold["airspeed_hold"]), hold
    assert "the hold keeps the attitude the aircraft has" in processes.output(bridge)


def test_stamped_commands_wait_for_the_clock_under_use_sim_time(broker, processes, collector):
    peer = Peer(broker.bootstrap)
    ap = peer.reader(AUTOPILOT)
    bridge = start_bridge(processes, broker.bootstrap, "use_sim_time:=true", "cmd_timeout_s:=5.0")
    pub = collector.node.create_publisher(AutopilotCommand, "/aerosim/actor1/autopilot_command", RELIABLE)
    wait_matched(pub)
    stamped = autopilot(1200.0)
    stamped.header.stamp.sec = 5
    for _ in range(5):
        pub.publish(stamped)
        time.sleep(0.05)
    assert drain(ap, 1.0) == [], "a stamp cannot be judged before the clock is known"
    assert "before the bridge's clock is known" in processes.output(bridge)
    pub.publish(autopilot(1300.0))  # stamp 0: now
    got = drain(ap, 2.0)
    assert [r["data"]["altitude_setpoint_ft"] for r in got][:1] == [1300.0]


def test_a_trickling_broker_does_not_hold_up_the_stop(proxied, processes, collector):
    broker, proxy = proxied
    peer = Peer(broker.bootstrap)
    bridge = start_bridge(processes, proxy.bootstrap)
    collector.subscribe(Odometry, "/aerosim/actor1/odom", qos=RELIABLE, key="odom")
    wait_subscribed(collector, "odom", lambda: peer.send(STATE, envelope(
        STATE, "VehicleState", vehicle_state((0, 0, -10)), sim=1.0)))
    proxy.trickle = 1.5
    proxy.cut()
    time.sleep(3.0)  # the bridge has reconnected and waits on a trickle
    began = time.monotonic()
    bridge.send_signal(signal.SIGINT)
    bridge.wait(timeout=10)
    assert time.monotonic() - began < 1.0, f"stopped {time.monotonic() - began:.2f} s after SIGINT"


def diagnostics_drops(collector, key, stream, reason, want, timeout=10.0):
    deadline = time.monotonic() + timeout
    count = 0
    while time.monotonic() < deadline and count < want:
        for m in collector.messages(key):
            for s in m.status:
                if s.name.endswith(stream):
                    count = max(count, next((int(kv.value) for kv in s.values if kv.key == f"dropped_{reason}"), 0))
        time.sleep(0.1)
    return count


def test_an_oversized_or_compressed_record_is_skipped_and_stops_nothing(broker, processes, collector):
    """One 2 MB record (max_record_bytes 64 KiB) and one gzip batch that
    inflates to 64 MiB: each skipped and counted; the states and flight
    displays around them all published; the bridge's memory does not jump."""
    from confluent_kafka import Producer
    bridge = start_bridge(processes, broker.bootstrap, "max_message_bytes:=65536")
    peer = Peer(broker.bootstrap)
    collector.subscribe(Odometry, "/aerosim/actor1/odom", qos=RELIABLE, key="odom")
    collector.subscribe(FlightDisplay, "/aerosim/actor1/flight_display", qos=RELIABLE, key="fd")
    collector.subscribe(DiagnosticArray, "/diagnostics", qos=RELIABLE, key="diag")
    wait_subscribed(collector, "odom", lambda: peer.send(STATE, envelope(
        STATE, "VehicleState", vehicle_state((0, 0, -10)), sim=0.5)))
    wait_subscribed(collector, "fd", lambda: peer.send(DISPLAY, envelope(
        DISPLAY, "PrimaryFlightDisplayData", flight_display(), sim=0.5)))
    hwm_before = peak_rss_kib(bridge.pid)
    n_odom, n_fd = len(collector.messages("odom")), len(collector.messages("fd"))
    peer.send(STATE, b"{" + b" " * (2 << 20) + b"}")
    gzip = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": "gzip", "linger.ms": 0,
                     "message.max.bytes": 100_000_000})
    gzip.produce(STATE, key=b"key", value=bytes(64 << 20))
    gzip.flush(30)
    for i in range(10):
        peer.send(STATE, envelope(STATE, "VehicleState", vehicle_state((0, i, -10)), sim=1.0 + i * 0.1))
        peer.send(DISPLAY, envelope(DISPLAY, "PrimaryFlightDisplayData", flight_display(altitude_ft=i), sim=1.0 + i * 0.1))
    odom = collector.wait_for("odom", n_odom + 10)[n_odom:]
    fd = collector.wait_for("fd", n_fd + 10)[n_fd:]
    assert [round(m.pose.pose.position.x) for m in odom] == list(range(10))
    assert [m.altitude_ft for m in fd] == list(range(10))
    assert diagnostics_drops(collector, "diag", ": actor1 vehicle_state", "record_unreadable", 2) == 2
    grew = peak_rss_kib(bridge.pid) - hwm_before
    assert grew < 32 << 10, f"peak memory grew {grew / 1024:.0f} MiB"
    assert bridge.poll() is None


def peak_rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def stamp_of(m):
    return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9


def test_a_backlog_read_late_does_not_move_live_stamps_ahead(broker, processes, collector):
    """start_from earliest over a 60 s backlog (written while the bridge
    looks on, so that the subscriber sees it): live records are stamped near
    the wall clock, not 60 s ahead of it."""
    peer = Peer(broker.bootstrap)
    start_bridge(processes, broker.bootstrap, "start_from:=earliest")
    collector.subscribe(Odometry, "/aerosim/actor1/odom", qos=RELIABLE, key="odom")
    deadline = time.monotonic() + 20
    while collector.node.count_publishers("/aerosim/actor1/odom") == 0:
        assert time.monotonic() < deadline, "the bridge did not come up"
        time.sleep(0.1)
    time.sleep(1.0)
    now = time.time()
    for i in range(20):
        peer.send(STATE, envelope(STATE, "VehicleState", vehicle_state((0, 0, -10)), sim=i * 0.1,
                                  platform=now - 60.0 + i * 0.1))
    collector.wait_for("odom", 20, timeout=30)
    for _ in range(5):
        t = time.time()
        # AeroSim's sim time went on as the wall clock did.
        peer.send(STATE, envelope(STATE, "VehicleState", vehicle_state((0, 1, -10)), sim=t - (now - 60.0), platform=t))
    live = collector.wait_for("odom", 25)[20:]
    for m in live:
        assert abs(stamp_of(m) - time.time()) < 2.0, f"a live stamp {stamp_of(m) - time.time():+.1f} s off the wall clock"
    backlog = collector.messages("odom")[:20]
    assert abs(stamp_of(backlog[0]) - (now - 60.0)) < 2.0, "the backlog keeps its own time"


def test_png_images_and_the_record_limit_for_cameras(broker, processes, collector, tmp_path):
    import io

    from PIL import Image as PilImage
    start_bridge(processes, broker.bootstrap, "max_message_bytes:=1000000")
    peer = Peer(broker.bootstrap)
    collector.subscribe(CompressedImage, "/aerosim/camera/image_raw/compressed", qos=RELIABLE, key="png")
    collector.subscribe(DiagnosticArray, "/diagnostics", qos=RELIABLE, key="diag")
    topic = "aerosim.renderer.responses"
    buf = io.BytesIO()
    PilImage.new("RGB", (64, 48), (10, 200, 30)).save(buf, format="PNG")
    small = bincode_image(topic, buf.getvalue(), fmt=1)
    wait_subscribed(collector, "png", lambda: peer.send(topic, small))
    got = collector.messages("png")[-1]
    assert got.format == "bgr8; png compressed bgr8" and bytes(got.data) == buf.getvalue()
    n = len(collector.messages("png"))
    # Over max_record_bytes, within what a fetch may carry: the camera refuses it.
    big = bincode_image(topic, b"\x89PNG" + bytes(1_030_000), fmt=1)
    peer.send(topic, big)
    time.sleep(1.0)
    peer.send(topic, small)
    collector.wait_for("png", n + 1)
    assert all(len(m.data) < 1_000_000 for m in collector.messages("png"))
    assert diagnostics_drops(collector, "diag", ": renderer camera", "too_large", 1) == 1


def test_clock_carries_aerosim_clock_ticks_only(broker, processes, collector):
    peer = start_under_sim_time(processes, broker, collector)
    clock = SimClock(peer, 5.0, 0.01)
    wait_subscribed(collector, "clock", clock.tick)
    last_tick = clock.sim
    # A vehicle state half a second ahead of the clock: stamped with its own
    # time, but /clock stays at AeroSim's clock.
    wait_subscribed(collector, "odom", lambda: peer.send(STATE, envelope(
        STATE, "VehicleState", vehicle_state((0, 0, -5)), sim=last_tick + 0.5)))
    time.sleep(0.5)
    ticks = [m.clock.sec + m.clock.nanosec * 1e-9 for m in collector.messages("clock")]
    assert ticks and max(ticks) <= last_tick + 1e-6, (ticks, last_tick)


def is_hold(d):
    """Either hold of the failsafe: the vehicle state's, or the attitude's."""
    return d["use_manual_setpoints"] and (is_state_hold(d) or d["attitude_hold"])


def is_centred(d):
    return (d["roll_cmd"], d["pitch_cmd"], d["yaw_cmd"]) == (0.0, 0.0, 0.0)


def stick(roll):
    return FlightControlCommand(power_cmd=[0.7], roll_cmd=roll, pitch_cmd=-0.2, yaw_cmd=0.1)


@pytest.mark.parametrize("delay, status", [(0.6, 1), (0.125, 0)])
def test_the_hold_at_the_stop_goes_at_once_behind_the_command_under_way(proxied, processes, collector, delay,
                                                                        status):
    """Flight-control commands at 20 Hz over a link that turns slow once
    they flow, until SIGINT, which comes just after a command left, while
    its answer is still on the way: the hold leaves at once, behind it on its
    connection, and reaches the broker after it. At 125 ms each way it is
    acknowledged within the stop's half second; at 600 ms it cannot be, and
    the exit status says so, but the hold is on the broker all the same.
    (At 600 ms from the start no connection would be made: each takes
    several round trips, and the client allows one 2 s for them all.)"""
    broker, proxy = proxied
    peer = Peer(broker.bootstrap)
    fc, ap = peer.reader(FLIGHT_CONTROL, OFFSET_BEGINNING), peer.reader(AUTOPILOT, OFFSET_BEGINNING)
    bridge = start_bridge(processes, proxy.bootstrap, "cmd_timeout_s:=2.0")
    pub = collector.node.create_publisher(FlightControlCommand, "/aerosim/actor1/flight_control_command", RELIABLE)
    wait_matched(pub)
    publishing = threading.Event()
    publishing.set()

    def commands():
        while publishing.is_set():
            pub.publish(stick(0.5))
            time.sleep(0.05)
    threading.Thread(target=commands, daemon=True).start()
    try:
        records = []
        deadline = time.monotonic() + 20
        while not records:
            assert time.monotonic() < deadline, "no command reached the broker"
            records = drain(fc, 0.2)
        proxy.delay = delay
        time.sleep(1.5)  # every request under way went out under the delay
        # The connections are made; the next request naming the topic is a command's.
        proxy.watch(FLIGHT_CONTROL.encode())
        deadline = time.monotonic() + 5
        while not proxy.seen(FLIGHT_CONTROL.encode()):
            assert time.monotonic() < deadline, "no command left the bridge"
            time.sleep(0.005)
        time.sleep(0.1)
        bridge.send_signal(signal.SIGINT)
        began = time.monotonic()
        assert bridge.wait(timeout=5) == status
        took = time.monotonic() - began
    finally:
        publishing.clear()
    assert took < 1.5, f"stopped {took:.2f} s after SIGINT"
    records += drain(fc, 2 * delay + 1.5)
    assert len(records) >= 2 and is_centred(records[-1]["data"]), [r["data"] for r in records[-3:]]
    assert records[-1]["data"]["power_cmd"] == [0.7], "the power kept"
    assert not any(is_centred(r["data"]) for r in records[:-1]), "one hold, the last record"
    holds = [r["data"] for r in drain(ap, 1.0)]
    assert len(holds) == 1 and is_hold(holds[0]), holds
    if status:
        assert "actor1: no neutral command was delivered" in processes.output(bridge)


def test_every_hold_centres_the_sticks_once_a_flight_control_command_went_out(broker, processes, collector):
    """AeroSim's flight controller keeps the last flight-control command
    whatever comes on the autopilot's topic (in its flight-control
    configurations nothing reads that topic): after flight-control commands
    and then an autopilot command, the hold centres the sticks, and so does
    the next hold, after another autopilot command."""
    peer = Peer(broker.bootstrap)
    fc, ap = peer.reader(FLIGHT_CONTROL, OFFSET_BEGINNING), peer.reader(AUTOPILOT, OFFSET_BEGINNING)
    start_bridge(processes, broker.bootstrap, "cmd_timeout_s:=0.5")
    sticks = collector.node.create_publisher(FlightControlCommand, "/aerosim/actor1/flight_control_command", RELIABLE)
    autopilot_pub = collector.node.create_publisher(AutopilotCommand, "/aerosim/actor1/autopilot_command", RELIABLE)
    wait_matched(sticks)
    wait_matched(autopilot_pub)
    for _ in range(3):
        sticks.publish(stick(0.4))
        time.sleep(0.1)
    autopilot_pub.publish(autopilot(1500.0))
    first = drain(ap, 2.0)
    autopilot_pub.publish(autopilot(1600.0))
    second = drain(ap, 2.0)
    setpoints = [r["data"]["altitude_setpoint_ft"] for r in first + second]
    assert setpoints[0::2] == [1500.0, 1600.0] and all(is_hold(r["data"]) for r in (first + second)[1::2]), setpoints
    records = [r["data"] for r in drain(fc, 1.0)]
    centred = [is_centred(r) for r in records]
    assert len(records) > 2 and centred[-2:] == [True, True] and not any(centred[:-2]), records
    assert all(r["power_cmd"] == [0.7] for r in records), "the power kept"


def test_a_command_not_acknowledged_in_time_lands_before_the_hold(proxied, processes, collector):
    """ack_timeout 3 s, above the Kafka client's own 2 s; one autopilot
    command is held up 5 s on its way to the broker. It is counted as not
    acknowledged, and the hold after it goes over the same connection, so the
    broker appends it after the late command: the aircraft is left holding,
    not on the command that came late."""
    broker, proxy = proxied
    peer = Peer(broker.bootstrap)
    ap = peer.reader(AUTOPILOT, OFFSET_BEGINNING)
    bridge = start_bridge(processes, proxy.bootstrap, "cmd_timeout_s:=0.5", "ack_timeout_s:=3.0")
    pub = collector.node.create_publisher(AutopilotCommand, "/aerosim/actor1/autopilot_command", RELIABLE)
    wait_matched(pub)
    publish_until_on_broker(pub, ap, autopilot(1000.0))
    time.sleep(1.0)  # the hold after that one
    proxy.stall(b"1234.5", 5.0)
    sent = time.monotonic()
    pub.publish(autopilot(1234.5))
    records = []
    while time.monotonic() - sent < 8.0:
        records += drain(ap, 0.5)
    data = [r["data"] for r in records]
    late = next(i for i, d in enumerate(data) if d["altitude_setpoint_ft"] == 1234.5)
    assert len(data) > late + 1 and all(is_hold(d) for d in data[late + 1:]), data
    assert bridge.poll() is None


class SilentResolver:
    """A resolv.conf naming a loopback address where a socket takes DNS
    queries and answers none, for a process started in a mount namespace of
    its own (`prefix`): the machine's own resolver is left alone."""

    def __init__(self, tmp_path):
        self.sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for host in ("127.0.0.63", "127.0.0.64", "127.0.0.65"):
            try:
                self.sink.bind((host, 53))
                break
            except OSError:
                continue
        else:
            self.sink.close()
            pytest.skip("no loopback address free for a DNS port")
        self.sink.setblocking(False)
        conf = tmp_path / "resolv.conf"
        conf.write_text(f"nameserver {host}\noptions timeout:30 attempts:3\n")
        self.prefix = ["unshare", "--mount", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"', str(conf)]

    def queries(self):
        """The queries that came so far (never answered)."""
        out = []
        while True:
            try:
                out.append(self.sink.recv(4096))
            except BlockingIOError:
                return out


@pytest.fixture
def silent_resolver(tmp_path):
    if os.geteuid() != 0 or subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs root and unshare to give one process a resolv.conf of its own")
    r = SilentResolver(tmp_path)
    yield r
    r.sink.close()


def test_a_broker_name_the_resolver_never_answers_does_not_hold_up_the_stop(silent_resolver, processes, collector):
    """The broker given by a host name whose lookup never ends (the resolver
    takes the queries and answers none for a minute and more): the Kafka
    client's lookups are under way for the reader and for the commands when
    SIGINT comes, and the bridge stops within its budget all the same."""
    bridge = start_bridge(processes, "aerosim-broker.test:9092", prefix=silent_resolver.prefix)
    deadline = time.monotonic() + 20
    while collector.node.count_subscribers("/aerosim/actor1/cmd_vel") == 0:
        assert time.monotonic() < deadline, "the bridge did not come up"
        assert bridge.poll() is None, processes.output(bridge)
        time.sleep(0.1)
    time.sleep(3.0)  # a first lookup given up after the client's 2 s, the next begun
    asked = [q for q in silent_resolver.queries() if b"aerosim-broker" in q]
    assert asked, "the bridge looked the broker's name up"
    began = time.monotonic()
    bridge.send_signal(signal.SIGINT)
    try:
        bridge.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    took = time.monotonic() - began
    assert took < 1.5, f"stopped {took:.1f} s after SIGINT"
    assert bridge.returncode == 0
