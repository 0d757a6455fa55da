"""`auv_bridge` end to end: a pyzmq stand-in for the ZeroMQ AUV simulator
(tests/auv_fake_sim.py) sends the protocol's messages, rclpy subscribers check
every topic's type, values (frames converted on hand-computed vectors),
frame ids and stamps; rclpy publishers check the exact bytes the bridge
pushes, its watchdog and its refusals; the simulator restarts and sends
garbage under the bridge.
"""

import math
import signal
import struct
import time

import pytest
from conftest import executable
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, CompressedImage, Image
from tf2_msgs.msg import TFMessage

from auv_fake_sim import FakeSim, free_ports, jpeg, telemetry_payload
from rflysim_bridge.msg import ThrusterCommand

RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
H = math.sqrt(0.5)


@pytest.fixture
def sim():
    s = FakeSim()
    yield s
    s.close()


def start_bridge(processes, ports, **params):
    args = [executable("auv_bridge"), "--ros-args"]
    for k, v in {**ports, **params}.items():
        args += ["-p", f"{k}:={v}"]
    return processes.start(args)


def feed(send, done, timeout=20.0, period=0.02):
    """Calls `send` every `period` until `done()` (PUB/SUB joins take a moment)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "nothing arrived"
        send()
        time.sleep(period)


def stamp(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def same_rotation(q, expected, tol=1e-5):
    got = (q.w, q.x, q.y, q.z)
    return all(abs(a - b) < tol for a, b in zip(got, expected)) or all(abs(a + b) < tol for a, b in zip(got, expected))


def diagnostics_values(collector, key, name, timeout=10.0):
    """The key/values of the newest status called `name`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for array in reversed(collector.messages(key)):
            for status in array.status:
                if status.name == name:
                    # `auv_bridge: auv3 thrusters` is on `auv/auv3`.
                    assert status.hardware_id == "auv/" + name.split(": ")[1].split()[0], status.hardware_id
                    return {kv.key: kv.value for kv in status.values}
        time.sleep(0.1)
    raise AssertionError(f"no diagnostics for {name}")


def wait_for_counts(collector, key, name, expected, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        values = diagnostics_values(collector, key, name)
        got = {k: int(values.get(f"dropped_{k}", 0)) for k in expected}
        if got == expected or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def test_every_topic_type_values_frames_and_stamps(collector, processes, sim):
    start_bridge(processes, sim.params(), vehicle_ids="[3,200]")
    pose = collector.subscribe(PoseStamped, "/auv/auv3/pose", RELIABLE)
    odom = collector.subscribe(Odometry, "/auv/auv3/odom", RELIABLE)
    tf = collector.subscribe(TFMessage, "/tf", RELIABLE)
    tf_static = collector.subscribe(TFMessage, "/tf_static", LATCHED)
    front_c = collector.subscribe(CompressedImage, "/auv/auv200/front/image_raw/compressed", RELIABLE)
    bottom_c = collector.subscribe(CompressedImage, "/auv/auv200/bottom/image_raw/compressed", RELIABLE)
    front_raw = collector.subscribe(Image, "/auv/auv200/front/image_raw", RELIABLE)
    front_info = collector.subscribe(CameraInfo, "/auv/auv200/front/camera_info", RELIABLE)
    bottom_info = collector.subscribe(CameraInfo, "/auv/auv200/bottom/camera_info", RELIABLE)
    front, bottom = jpeg(64, 48, (200, 30, 30)), jpeg(32, 24, (20, 40, 220))

    def send():
        # 1 m north, 2 m east, 3 m deep, heading east.
        sim.send_telemetry(3, 1.0, 2.0, 3.0, math.pi / 2, 0.0, 0.0)
        sim.send_images(200, front, bottom)

    feed(send, lambda: all(len(collector.messages(k)) >= 3 for k in (pose, odom, front_c, bottom_c, front_raw, front_info)))
    p = collector.messages(pose)[-1]
    assert p.header.frame_id == "auv/map"
    assert (p.pose.position.x, p.pose.position.y, p.pose.position.z) == (2.0, 1.0, -3.0)
    assert same_rotation(p.pose.orientation, (1, 0, 0, 0)), "heading east is ENU yaw 0"
    o = collector.messages(odom)[-1]
    assert (o.header.frame_id, o.child_frame_id) == ("auv/map", "auv/auv3/base_link")
    assert (o.pose.pose.position.x, o.pose.pose.position.y) == (2.0, 1.0)
    assert o.pose.covariance[0] == pytest.approx(1e-6)
    assert abs(o.twist.twist.linear.x) < 1e-6 and o.twist.covariance[0] == pytest.approx(1e-3), "at rest, once known"
    moves = [t for m in collector.messages(tf) for t in m.transforms if t.child_frame_id == "auv/auv3/base_link"]
    assert moves and moves[-1].header.frame_id == "auv/map"
    assert (moves[-1].transform.translation.x, moves[-1].transform.translation.z) == (2.0, -3.0)
    mounts = {t.child_frame_id: t for m in collector.wait_for(tf_static) for t in m.transforms}
    assert {"auv/auv3/front_camera_optical", "auv/auv3/bottom_camera_optical", "auv/auv200/front_camera_optical",
            "auv/auv200/bottom_camera_optical"} <= set(mounts)
    assert mounts["auv/auv200/bottom_camera_optical"].header.frame_id == "auv/auv200/base_link"

    fc, bc = collector.messages(front_c), collector.messages(bottom_c)
    assert bytes(fc[0].data) == front and bytes(bc[0].data) == bottom, "the JPEG as received"
    assert {m.format for m in fc + bc} == {"jpeg"}, "the issue's format name, not image_transport's"
    assert (fc[0].header.frame_id, bc[0].header.frame_id) == ("auv/auv200/front_camera_optical", "auv/auv200/bottom_camera_optical")
    # Both cameras of one message share its stamp.
    front_stamps, bottom_stamps = {stamp(m) for m in fc}, {stamp(m) for m in bc}
    assert len(front_stamps & bottom_stamps) >= 2
    assert abs(stamp(fc[-1]) - time.time()) < 5, "wall-clock stamps"
    fi, bi = collector.messages(front_info)[-1], collector.wait_for(bottom_info)[-1]
    assert (fi.width, fi.height, bi.width, bi.height) == (64, 48, 32, 24)
    assert fi.k[0] == pytest.approx(32.0) and (fi.k[2], fi.k[5]) == (32.0, 24.0), "fx from a 90° FOV"
    raw = collector.messages(front_raw)[-1]
    assert (raw.width, raw.height, raw.encoding, raw.step) == (64, 48, "bgr8", 192)
    b, g, r = raw.data[0], raw.data[1], raw.data[2]
    assert abs(b - 30) < 12 and abs(g - 30) < 12 and abs(r - 200) < 12, (b, g, r)

    # Heading north, nose 30° up: q = (c45 c15, s45 s15, −c45 s15, s45 c15), by hand.
    expected = (0.6830127, 0.1830127, -0.1830127, 0.6830127)
    feed(lambda: sim.send_telemetry(3, 0.0, 0.0, 2.0, 0.0, math.radians(30), 0.0),
         lambda: same_rotation(collector.messages(pose)[-1].pose.orientation, expected))


def test_degrees_and_an_enu_world(collector, processes, sim):
    start_bridge(processes, sim.params(), vehicle_ids="[0]", angle_unit="deg", sim_axes="enu", world_frame_id="world")
    pose = collector.subscribe(PoseStamped, "/auv/auv0/pose", RELIABLE)
    feed(lambda: sim.send_telemetry(0, 1.0, 2.0, -3.0, 90.0, 0.0, 0.0), lambda: collector.messages(pose))
    p = collector.messages(pose)[-1]
    assert p.header.frame_id == "auv/world", "after frame_prefix"
    assert (p.pose.position.x, p.pose.position.y, p.pose.position.z) == (1.0, 2.0, -3.0)
    assert same_rotation(p.pose.orientation, (H, 0, 0, H))


def test_odometry_twist_is_in_the_body_frame(collector, processes, sim):
    start_bridge(processes, sim.params(), vehicle_ids="[1]")
    odom = collector.subscribe(Odometry, "/auv/auv1/odom", RELIABLE)
    start = time.monotonic()
    # Heading east at 1 m/s (NED y grows with time): ENU +x, body forward.
    feed(lambda: sim.send_telemetry(1, 0.0, time.monotonic() - start, 2.0, math.pi / 2, 0.0, 0.0),
         lambda: len(collector.messages(odom)) > 60)
    twists = [m.twist.twist.linear for m in collector.messages(odom)[-30:]]
    mean_x = sum(t.x for t in twists) / len(twists)
    assert mean_x == pytest.approx(1.0, abs=0.25), [t.x for t in twists]
    assert all(abs(t.y) < 1e-3 and abs(t.z) < 1e-3 for t in twists)


def test_thruster_bytes_watchdog_refusals_and_stop_at_shutdown(collector, processes, sim, rclpy_context):
    bridge = start_bridge(processes, sim.params(), vehicle_ids="[3]", cmd_timeout_s=0.5)
    diag = collector.subscribe(DiagnosticArray, "/diagnostics", RELIABLE)
    node = collector.node
    commands = node.create_publisher(ThrusterCommand, "/auv/auv3/thrusters", 10)
    cmd_vel = node.create_publisher(Twist, "/auv/auv3/cmd_vel", 10)
    deadline = time.monotonic() + 20
    while commands.get_subscription_count() == 0 or cmd_vel.get_subscription_count() == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)  # the PUSH socket reaches the fake simulator

    # The protocol's example, NaN for "leave as is".
    commands.publish(ThrusterCommand(left=0.75, right=-0.5, side=0.0, vertical=math.nan))
    sent_at = time.monotonic()
    got = []
    while time.monotonic() - sent_at < 2.0:
        for m in sim.thruster_messages(0.05):
            got.append((time.monotonic() - sent_at, m))
    assert [m for _, m in got] == [[b"\x03\x4b\xce\x00\x81"], [b"\x03\x00\x00\x00\x00"]], got
    assert 0.4 < got[1][0] < 0.8, f"one all-zero command cmd_timeout after the last: {got}"

    # Refused: out of range, ±inf, a stamp older than cmd_timeout (a replay).
    commands.publish(ThrusterCommand(left=1.5))
    commands.publish(ThrusterCommand(side=-math.inf))
    old = ThrusterCommand(left=0.5, right=0.5)
    old.header.stamp.sec = int(time.time()) - 10
    commands.publish(old)
    assert sim.thruster_messages(1.0) == []

    # cmd_vel: surge ± yaw on left/right, heave on vertical.
    t = Twist()
    t.linear.x, t.linear.z, t.angular.z = 0.5, -0.2, 0.25
    cmd_vel.publish(t)
    assert sim.thruster_messages(1.0) == [[bytes([3, 25, 75, 0, 256 - 20])], [b"\x03\x00\x00\x00\x00"]]

    counts = wait_for_counts(collector, diag, "auv_bridge: auv3 thrusters", {"out_of_range": 1, "non_finite": 1, "stale": 1})
    assert counts == {"out_of_range": 1, "non_finite": 1, "stale": 1}

    # A command in flight, then SIGTERM: all-zero follows at once.
    commands.publish(ThrusterCommand(left=0.2, right=0.2, side=0.0, vertical=0.0))
    assert sim.thruster_messages(0.3) == [[b"\x03\x14\x14\x00\x00"]]
    bridge.send_signal(signal.SIGTERM)
    assert sim.thruster_messages(1.0) == [[b"\x03\x00\x00\x00\x00"]]
    bridge.wait(timeout=1.0)


def test_start_order_restart_and_no_late_command(collector, processes):
    ports = free_ports(3)
    names = ("image_port", "thruster_port", "telemetry_port")
    start_bridge(processes, dict(zip(names, ports)), vehicle_ids="[2]", cmd_timeout_s=0.3)
    pose = collector.subscribe(PoseStamped, "/auv/auv2/pose", RELIABLE)
    front = collector.subscribe(CompressedImage, "/auv/auv2/front/image_raw/compressed", RELIABLE)
    commands = collector.node.create_publisher(ThrusterCommand, "/auv/auv2/thrusters", 10)
    time.sleep(1.5)  # the bridge first, the simulator later
    sim = FakeSim(ports)
    try:
        img = jpeg(16, 16, (0, 255, 0))
        feed(lambda: (sim.send_telemetry(2, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0), sim.send_images(2, img, img)),
             lambda: collector.messages(pose) and collector.messages(front))

        # A command in force when the simulator goes away: its neutral is owed.
        commands.publish(ThrusterCommand(left=0.5, right=0.5, side=0.0, vertical=0.0))
        assert sim.thruster_messages(0.2) == [[bytes([2, 50, 50, 0, 0])]]
        sim.unbind()
        # While the simulator is away: a command (never taken), and cmd_timeout.
        commands.publish(ThrusterCommand(left=0.9, right=0.9, side=0.0, vertical=0.0))
        time.sleep(1.0)
        sim.bind()
        back = time.monotonic()
        feed(lambda: (sim.send_telemetry(2, 7.0, 0.0, 2.0, 0.0, 0.0, 0.0), sim.send_images(2, img, img)),
             lambda: collector.messages(pose)[-1].pose.position.y == 7.0 and len(collector.messages(front)) > 3,
             timeout=5.0)
        assert time.monotonic() - back < 1.0, "topics resume within a second of the simulator being back"
        # The command sent while it was away is stale by now and never leaves;
        # the neutral owed for the one in force is delivered once it is back.
        assert sim.thruster_messages(0.5) == [[b"\x02\x00\x00\x00\x00"]], "only the owed neutral"
        commands.publish(ThrusterCommand(left=-0.1, right=0.1, side=0.0, vertical=0.0))
        assert sim.thruster_messages(0.2) == [[bytes([2, 256 - 10, 10, 0, 0])]]
    finally:
        sim.close()


def test_bad_input_is_counted_and_the_next_good_message_published(collector, processes, sim):
    bridge = start_bridge(processes, sim.params(), vehicle_ids="[4]", diagnostics_period_s=0.2)
    pose = collector.subscribe(PoseStamped, "/auv/auv4/pose", RELIABLE)
    front = collector.subscribe(CompressedImage, "/auv/auv4/front/image_raw/compressed", RELIABLE)
    collector.subscribe(Image, "/auv/auv4/front/image_raw", RELIABLE)  # decodes, so a bad JPEG body shows
    diag = collector.subscribe(DiagnosticArray, "/diagnostics", RELIABLE)
    good = jpeg(16, 16, (10, 10, 10))
    feed(lambda: (sim.send_telemetry(4, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), sim.send_images(4, good, good)),
         lambda: collector.messages(pose) and collector.messages(front))
    time.sleep(0.3)

    payload = telemetry_payload(0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    nan = struct.pack("<ffffff", 0.0, math.nan, 1.0, 0.0, 0.0, 0.0)
    for parts in ([b"\x04"], [b"\x04\x04", payload], [b"\x04", payload[:23]], [b"\x04", nan],
                  [b"\x04", b"\x00" * 5, b"\x01", b"\x02"]):
        sim.telemetry.send_multipart(parts)
    body_broken = b"\xff\xd8\xff" + b"\x55" * 200 + b"\xff\xd9"
    for parts in ([b"\x04", good], [b"\x04\x00", good, good], [b"\x04", good[:-10], good], [b"\x04", good, b""],
                  [b"\x04", body_broken, good], [b"\x09", good, good]):
        sim.images.send_multipart(parts)
        time.sleep(0.05)  # one at a time: none is merely superseded by the next
    marked = jpeg(16, 16, (250, 250, 250))
    sim.send_telemetry(4, 9.5, 0.0, 1.0, 0.0, 0.0, 0.0)
    sim.send_images(4, marked, good)
    collector.wait_for(pose, 1)
    deadline = time.monotonic() + 5
    while collector.messages(pose)[-1].pose.position.y != 9.5 or bytes(collector.messages(front)[-1].data) != marked:
        assert time.monotonic() < deadline, "the good messages after the bad ones"
        time.sleep(0.05)

    telemetry = {"wrong_part_count": 2, "wrong_id_length": 1, "wrong_length": 1, "non_finite": 1}
    assert wait_for_counts(collector, diag, "auv_bridge: auv4 telemetry", telemetry) == telemetry
    images = {"wrong_part_count": 1, "wrong_id_length": 1, "corrupt_jpeg": 2, "bad_image": 1}
    assert wait_for_counts(collector, diag, "auv_bridge: auv4 images", images) == images
    logged = processes.output(bridge)
    assert "auv4 telemetry: message dropped:" in logged and "auv4 images: message dropped:" in logged, logged


def test_latest_only_when_the_subscriber_side_falls_behind(collector, processes, sim):
    bridge = start_bridge(processes, sim.params(), vehicle_ids="[5]", diagnostics_period_s=0.2)
    front = collector.subscribe(CompressedImage, "/auv/auv5/front/image_raw/compressed", RELIABLE)
    collector.subscribe(Image, "/auv/auv5/front/image_raw", RELIABLE)  # each message costs a 1280×720 decode
    diag = collector.subscribe(DiagnosticArray, "/diagnostics", RELIABLE)
    warm = jpeg(1280, 720, (1, 2, 3))
    feed(lambda: sim.send_images(5, warm, warm), lambda: collector.messages(front))
    time.sleep(0.5)
    burst = [jpeg(1280, 720, (i, 255 - i, 100), quality=70) for i in range(60)]
    before = len(collector.messages(front))
    # The bridge is held still while the burst queues up in ZeroMQ, as a
    # scheduling stall would hold it: on resuming it reads the 60 queued
    # messages far faster than it can decode one for the raw subscriber.
    # Sent while it runs, a fast machine kept up with the burst.
    bridge.send_signal(signal.SIGSTOP)
    try:
        for b in burst:
            sim.send_images(5, b, warm)
        time.sleep(0.3)
    finally:
        bridge.send_signal(signal.SIGCONT)
    deadline = time.monotonic() + 10
    while bytes(collector.messages(front)[-1].data) != burst[-1]:
        assert time.monotonic() < deadline, "the newest image is published"
        time.sleep(0.05)
    # The burst's own images: a warm one still on its way is none of them.
    burst_set = {bytes(b) for b in burst}
    published = sum(bytes(m.data) in burst_set for m in collector.messages(front)[before:])
    assert published < len(burst), "older images were dropped, not queued"
    expected = {"superseded": len(burst) - published}
    assert wait_for_counts(collector, diag, "auv_bridge: auv5 images", expected) == expected


def test_a_namespace_moves_every_topic_and_frame_prefix_every_frame(collector, processes, sim):
    args = [executable("auv_bridge"), "--ros-args", "-r", "__ns:=/fleet", "-p", "vehicle_ids:=[0]",
            "-p", "frame_prefix:=fleet/", "-p", "world_frame_id:=world"]
    for k, v in sim.params().items():
        args += ["-p", f"{k}:={v}"]
    processes.start(args)
    pose = collector.subscribe(PoseStamped, "/fleet/auv0/pose", RELIABLE)
    odom = collector.subscribe(Odometry, "/fleet/auv0/odom", RELIABLE)
    feed(lambda: sim.send_telemetry(0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0),
         lambda: collector.messages(pose) and collector.messages(odom))
    assert collector.messages(pose)[-1].header.frame_id == "fleet/world"
    o = collector.messages(odom)[-1]
    assert (o.header.frame_id, o.child_frame_id) == ("fleet/world", "fleet/auv0/base_link")


def drive_forward(collector, cmd_vel, odom):
    """`cmd_vel` forward for 2 s moves the emulated AUV (heading north) forward: ENU +y."""
    t = Twist()
    t.linear.x = 0.8
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        cmd_vel.publish(t)
        time.sleep(0.05)
    last = collector.messages(odom)[-1]
    assert last.pose.pose.position.y > 0.5, "forward while heading north: ENU +y"
    assert last.twist.twist.linear.x > 0.3, "forward in the body frame"


def test_with_the_emulator_cmd_vel_drives_the_auv(collector, processes):
    """auv_sim and auv_bridge as `auv.launch.py emulator:=true` starts them."""
    ports = dict(zip(("image_port", "thruster_port", "telemetry_port"), free_ports(3)))
    processes.start([executable("auv_sim"), "--vehicle-ids", "[0,1]", "--width", "320", "--height", "240", "--quiet",
                     *[a for k, v in ports.items() for a in (f"--{k.replace('_', '-')}", str(v))]])
    start_bridge(processes, ports, vehicle_ids="[0,1]")
    odom = collector.subscribe(Odometry, "/auv/auv1/odom", RELIABLE)
    raw = collector.subscribe(Image, "/auv/auv1/bottom/image_raw", RELIABLE)
    cmd_vel = collector.node.create_publisher(Twist, "/auv/auv1/cmd_vel", 10)
    first = collector.wait_for(odom)[0].pose.pose.position
    # The second AUV starts 3 m east, 2 m deep: ENU (3, 0, −2).
    assert (first.x, first.y, first.z) == (3.0, 0.0, -2.0)
    assert collector.wait_for(raw)[0].width == 320
    drive_forward(collector, cmd_vel, odom)
    # cmd_timeout after the last cmd_vel, the watchdog stops the thrusters: the AUV slows down.
    time.sleep(3.0)
    assert abs(collector.messages(odom)[-1].twist.twist.linear.x) < 0.15


def test_a_trickling_simulator_does_not_hold_up_the_stop(processes, sim):
    """The simulator's three sockets behind proxies that pass its bytes one
    every 1.5 s: the bridge still stops within a second of SIGINT."""
    from tcp_proxy import Proxy
    proxies = [Proxy(port, trickle=1.5) for port in (sim.image_port, sim.thruster_port, sim.telemetry_port)]
    try:
        bridge = start_bridge(processes, {"image_port": proxies[0].port, "thruster_port": proxies[1].port,
                                          "telemetry_port": proxies[2].port})
        time.sleep(3.0)
        began = time.monotonic()
        bridge.send_signal(signal.SIGINT)
        assert bridge.wait(timeout=10) == 0
        assert time.monotonic() - began < 1.0, f"stopped {time.monotonic() - began:.2f} s after SIGINT"
    finally:
        for p in proxies:
            p.close()


def test_with_use_sim_time_stamps_are_the_clock_others_publish(collector, processes, sim):
    """The simulator's messages carry no time: under use_sim_time every stamp is the
    arrival's on the ROS clock that /clock drives (here an rclpy publisher's)."""
    from rosgraph_msgs.msg import Clock
    clock = collector.node.create_publisher(Clock, "/clock", 10)
    start_bridge(processes, sim.params(), vehicle_ids="[6]", use_sim_time="true")
    pose = collector.subscribe(PoseStamped, "/auv/auv6/pose", RELIABLE)
    sim_time = Clock()
    sim_time.clock.sec, sim_time.clock.nanosec = 1234, 500_000_000

    def send():
        clock.publish(sim_time)
        sim.send_telemetry(6, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0)

    feed(send, lambda: any(m.header.stamp.sec == 1234 for m in collector.messages(pose)))
    stamped = [m.header.stamp for m in collector.messages(pose) if m.header.stamp.sec]
    assert stamped and all((s.sec, s.nanosec) == (1234, 500_000_000) for s in stamped), stamped

    # Commands are judged on the same clock: stamped on it, taken; stamped on the wall clock, from its future.
    commands = collector.node.create_publisher(ThrusterCommand, "/auv/auv6/thrusters", 10)
    deadline = time.monotonic() + 20
    while commands.get_subscription_count() == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)  # the PUSH socket reaches the fake simulator
    on_clock = ThrusterCommand(left=0.5, right=0.5, side=0.0, vertical=0.0)
    on_clock.header.stamp.sec, on_clock.header.stamp.nanosec = 1234, 400_000_000
    commands.publish(on_clock)
    assert sim.thruster_messages(1.5) == [[bytes([6, 50, 50, 0, 0])], [b"\x06\x00\x00\x00\x00"]]
    on_wall = ThrusterCommand(left=0.5, right=0.5, side=0.0, vertical=0.0)
    on_wall.header.stamp.sec = int(time.time())
    commands.publish(on_wall)
    assert sim.thruster_messages(1.0) == []
