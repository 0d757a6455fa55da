"""The AUV, GPS-denied and AeroSim simulators on their own PC: each emulator
(and AeroSim's Kafka-protocol broker) in the simulator PC's namespace
(tests/netns_rig.py), the bridge here with the simulator's address. Nothing
of the simulator listens on this host's loopback, so a bridge that connected
or sent to 127.0.0.1 instead would get nothing, and a command it sent there
would reach no simulator."""

import json
import math
import signal
import time

import pytest
import zmq
from confluent_kafka.admin import AdminClient
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import CompressedImage

import test_aerosim_bridge as aerosim
import test_auv_bridge as auv
import test_gps_denied_bridge as gps_denied
from aerosim_peer import Broker, Peer
from conftest import executable
from gps_denied_fakesim import free_port
from netns_rig import simulator_pc
from test_auv_sim import Sim as AuvSim
from test_auv_sim import latest_pose, protocol_telemetry_client

# A stamp taken on arrival (or at the record's making) on this machine: this
# close to the time it is looked at, right after it arrived.
FRESH_S = 1.0


@pytest.fixture(scope="module")
def pc():
    with simulator_pc() as h:
        yield h


def seconds(stamp):
    return stamp.sec + stamp.nanosec * 1e-9


def judge_stamps(messages, what):
    """In order, and the newest (just arrived) on this machine's clock now."""
    stamps = [seconds(m.header.stamp) for m in messages]
    assert stamps == sorted(stamps), f"{what}: a stamp went back"
    late = time.time() - stamps[-1]
    assert -0.05 < late < FRESH_S, f"{what}: the newest stamp is {late:+.3f} s from now"


def test_auv_simulator_on_its_own_pc(collector, processes, pc):
    sim = AuvSim(processes, "--vehicle-ids", "0", "--quiet", host=pc.sim_ip, prefix=pc.prefix)
    # cmd_timeout far beyond the test: the AUV stops only if the bridge's stop sends all-zero.
    bridge = auv.start_bridge(processes, sim.ports(), sim_host=pc.sim_ip, vehicle_ids="[0]", cmd_timeout_s=60.0)
    odom = collector.subscribe(Odometry, "/auv/auv0/odom", auv.RELIABLE)
    front = collector.subscribe(CompressedImage, "/auv/auv0/front/image_raw/compressed", auv.RELIABLE)
    bottom = collector.subscribe(CompressedImage, "/auv/auv0/bottom/image_raw/compressed", auv.RELIABLE)
    first = collector.wait_for(odom, timeout=30)[0].pose.pose.position
    # AUV 0 starts at the origin, 2 m deep, heading north: ENU (0, 0, −2).
    assert (first.x, first.y, first.z) == (0.0, 0.0, -2.0)
    judge_stamps(collector.wait_for(odom, 20), "odometry")
    judge_stamps(collector.wait_for(front, 5), "front camera")
    collector.wait_for(bottom, 5)
    front_stamps = {seconds(m.header.stamp) for m in collector.messages(front)}
    assert len(front_stamps & {seconds(m.header.stamp) for m in collector.messages(bottom)}) >= 3, \
        "both cameras of one message share its stamp"

    auv.drive_forward(collector, collector.node.create_publisher(Twist, "/auv/auv0/cmd_vel", 10), odom)

    # The simulator's own telemetry, read on its address: the held command
    # keeps the AUV going until the bridge stops and sends all-zero.
    ctx = zmq.Context()
    try:
        telemetry = protocol_telemetry_client(ctx, sim.telemetry_port, 0, host=pc.sim_ip)

        def motion(over=0.5):
            a = latest_pose(telemetry)
            time.sleep(over)
            b = latest_pose(telemetry)
            return math.hypot(b["x"] - a["x"], b["y"] - a["y"])

        assert motion() > 0.1, "the AUV stopped while its command was in force"
        bridge.send_signal(signal.SIGTERM)
        assert bridge.wait(timeout=5) == 0
        deadline = time.monotonic() + 8
        while (m := motion()) >= 0.02:
            assert time.monotonic() < deadline, f"still moving {m:.3f} m per 0.5 s after the bridge stopped"
    finally:
        ctx.destroy(linger=0)


def test_gps_denied_simulator_on_its_own_pc(collector, processes, pc):
    ns = "gd_two_hosts"
    gps_denied.subscribe_all(collector, ns)
    collector.subscribe(DiagnosticArray, "/diagnostics", qos=gps_denied.RELIABLE, key="diagnostics")
    bridge_port, sim_port = free_port(), free_port()
    processes.start([*pc.prefix, executable("gps_denied_sim"), "--bind", f"{pc.sim_ip}:{sim_port}",
                     "--target", f"{pc.this_host}:{bridge_port}", "--stats", "0"], name="gps_denied_sim")
    bridge = gps_denied.start_bridge(processes, ns, bridge_port, sim_port, f"sim_host:={pc.sim_ip}")
    raw = collector.wait_for("camera/image_raw", 2, timeout=30)[-1]
    assert (raw.width, raw.height) == (320, 240)
    judge_stamps(collector.wait_for("camera/image_raw/compressed", 2), "camera")
    judge_stamps(collector.wait_for("imu", 25), "IMU")
    assert any(m.detected for m in collector.messages("landing_pad"))

    # The simulator's LAN has a third host: its telemetry (the same emulator's, 25 frames) is refused.
    pc.run(executable("gps_denied_sim"), "--bind", f"{pc.third_host}:0", "--target", f"{pc.this_host}:{bridge_port}",
           "--frames", "25", "--stats", "0", check=True, timeout=30)
    deadline = time.monotonic() + 10
    while (refused := gps_denied.telemetry_status(collector).get("dropped_foreign_sender")) != "25":
        assert time.monotonic() < deadline, f"the third host's frames: {refused} of 25 refused"
        time.sleep(0.1)
    assert f"datagram from {pc.third_host}:" in processes.output(bridge)

    # Commands go to the simulator's address: thrust lifts the drone, the watchdog's neutral holds it.
    gps_denied.climb_then_hold(collector, ns)


@pytest.mark.broker
def test_aerosim_on_its_own_pc(collector, processes, pc):
    # The broker advertises the PC's address: a client here is sent there, not to its own loopback.
    broker = Broker(host=pc.sim_ip, prefix=pc.prefix)
    try:
        advertised = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).brokers
        assert {(b.host, b.port) for b in advertised.values()} == {(pc.sim_ip, broker.port)}, advertised
        broker.create(aerosim.STATE, aerosim.DISPLAY, aerosim.FLIGHT_CONTROL, aerosim.AUTOPILOT, "aerosim.clock",
                      "aerosim.renderer.responses")
        processes.start([*pc.prefix, executable("aerosim_sim"), "--bootstrap-servers", broker.bootstrap,
                         "--camera-width", "320", "--camera-height", "240", "--camera-rate", "10", "--stats", "0"],
                        name="aerosim_sim")
        aerosim.start_bridge(processes, broker.bootstrap, "cmd_timeout_s:=5.0")
        collector.subscribe(Odometry, "/aerosim/actor1/odom", qos=aerosim.RELIABLE, key="odom")
        collector.subscribe(CompressedImage, "/aerosim/camera/image_raw/compressed", qos=aerosim.RELIABLE, key="jpeg")
        odom = collector.wait_for("odom", 100, timeout=30)
        # The emulator's aircraft cruises 300 m up.
        assert all(abs(m.pose.pose.position.z - 300.0) < 5.0 for m in odom[-20:])
        judge_stamps(odom, "vehicle state")
        # Images are records of several TCP segments each over an MTU of 1500.
        judge_stamps(collector.wait_for("jpeg", 3), "camera")

        # A command becomes a record in the broker on the PC, read back from here.
        peer = Peer(broker.bootstrap)
        records = peer.reader(aerosim.FLIGHT_CONTROL)
        t = Twist()
        t.linear.x = 30.0
        rec = json.loads(aerosim.publish_until(collector, "/aerosim/actor1/cmd_vel", Twist, t, records).value())
        assert rec["metadata"]["topic"] == aerosim.FLIGHT_CONTROL
        assert rec["data"]["power_cmd"] == [pytest.approx(0.6)], rec  # power_gain 0.02 × 30 m/s
        records.close()
    finally:
        broker.stop()
