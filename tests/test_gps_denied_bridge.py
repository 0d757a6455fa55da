"""`gps_denied_bridge` against a plain-Python fake simulator over
real UDP, and against `gps_denied_sim`: rclpy subscribers check every topic,
value, frame and stamp; rclpy publishers check the exact JSON commands."""

import base64
import io
import json
import math
import signal
import socket
import time

import pytest
from conftest import executable, ros_time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, Twist, TwistStamped
from nav_msgs.msg import Odometry
from PIL import Image as PilImage
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, Imu, Range
from std_msgs.msg import Bool, String
from tf2_msgs.msg import TFMessage

from test_sockets import own_lan_address

from gps_denied_fakesim import FakeSim, free_port, jpeg, keep_sending, quaternion_zyx, rover, telemetry
from rflysim_bridge.msg import AttitudeThrust, LandingPad

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
F32 = 1e-6


def start_bridge(processes, ns, bridge_port, sim_port, *params):
    args = [executable("gps_denied_bridge"), "--ros-args", "-r", f"__ns:=/{ns}",
            "-p", f"local_port:={bridge_port}", "-p", f"sim_port:={sim_port}", "-p", "diagnostics_period_s:=0.2"]
    for p in params:
        args += ["-p", p]
    return processes.start(args, name="gps_denied_bridge")


def start_emulator(processes, bridge_port, sim_port):
    """`gps_denied_sim` as the launch file starts it (with the rover's own telemetry), sending to `bridge_port`."""
    return processes.start([executable("gps_denied_sim"), "--bind", f"127.0.0.1:{sim_port}",
                            "--target", f"127.0.0.1:{bridge_port}", "--stats", "0", "--rover-telemetry"],
                           name="gps_denied_sim")


@pytest.fixture
def sim():
    s = FakeSim(free_port())
    yield s
    s.close()


def stamp(msg):
    return (msg.header.stamp.sec, msg.header.stamp.nanosec)


def subscribe_all(collector, ns):
    types = {"imu": Imu, "altitude": Range, "velocity": TwistStamped, "landing_pad": LandingPad,
             "landing_pad/point": PointStamped, "landed": Bool, "camera/image_raw/compressed": CompressedImage,
             "camera/image_raw": Image, "camera/camera_info": CameraInfo, "rover/odom": Odometry}
    for topic, t in types.items():
        vehicle = "" if topic.startswith("rover/") else "drone/"
        collector.subscribe(t, f"/{ns}/{vehicle}{topic}", qos=RELIABLE, key=topic)


def wait_matched(publisher, timeout=15.0):
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        assert time.monotonic() < deadline, "the bridge never subscribed"
        time.sleep(0.05)


def test_every_topic_carries_its_part_of_the_frame(collector, processes, sim):
    ns = "gd_topics"
    subscribe_all(collector, ns)
    collector.subscribe(TFMessage, "/tf_static", qos=LATCHED, key="tf_static")
    start_bridge(processes, ns, sim.bridge[1], sim.port)
    picture = jpeg()

    def frame(i):
        if i % 7 == 3:
            return rover(t=1.0 + i * 0.04)
        return telemetry(t=1.0 + i * 0.04, image=picture if i % 5 == 0 else None)

    keep_sending(sim, frame, until=lambda: all(
        len(collector.messages(k)) >= 3 for k in ("imu", "camera/image_raw", "rover/odom", "landing_pad/point")))
    started = time.time()

    imu = collector.messages("imu")[-1]
    assert imu.header.frame_id == "gps_denied/drone/base_link"
    q = imu.orientation
    for got, want in zip((q.x, q.y, q.z, q.w), quaternion_zyx(0.1, -0.2, 0.3)):
        assert got == pytest.approx(want, abs=1e-12)
    assert (imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z) == (0.01, -0.02, 0.03)
    assert (imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z) == (0.4, -0.5, 9.81)
    assert imu.orientation_covariance[0] > 0 and imu.angular_velocity_covariance[4] > 0
    assert imu.linear_acceleration_covariance[8] > 0

    alt = collector.messages("altitude")
    assert alt[-1].header.frame_id == "gps_denied/drone/altimeter" and alt[-1].radiation_type == Range.INFRARED
    ts = [a.range - 5.0 for a in alt]
    assert all(abs(round((t - 1.0) / 0.04) * 0.04 + 1.0 - t) < 1e-4 for t in ts), "altitude is 5 + t"

    vel = collector.messages("velocity")[-1]
    assert (vel.twist.linear.x, vel.twist.linear.y, vel.twist.linear.z) == (0.6, -0.7, -0.1)
    assert (vel.twist.angular.x, vel.twist.angular.y, vel.twist.angular.z) == (0.01, -0.02, 0.03)

    pad = collector.messages("landing_pad")[-1]
    assert pad.detected and pad.relative_x == pytest.approx(0.5, abs=F32)
    assert pad.relative_y == pytest.approx(-0.2, abs=F32) and pad.distance == pytest.approx(4.5, abs=F32)
    assert pad.confidence == pytest.approx(0.85, abs=F32)
    point = collector.messages("landing_pad/point")[-1]
    assert (point.point.x, point.point.y, point.point.z) == (0.5, -0.2, -4.5)
    assert collector.messages("landed")[-1].data is False

    compressed = collector.messages("camera/image_raw/compressed")[-1]
    assert bytes(compressed.data) == picture and "jpeg" in compressed.format
    assert compressed.header.frame_id == "gps_denied/drone/camera_optical"
    raw = collector.messages("camera/image_raw")[-1]
    assert (raw.width, raw.height, raw.encoding) == (320, 240, "bgr8")
    reference = PilImage.open(io.BytesIO(picture)).convert("RGB")
    for (u, v) in ((90, 120), (160, 10), (250, 200)):
        b, g, r = raw.data[v * raw.step + 3 * u: v * raw.step + 3 * u + 3]
        want = reference.getpixel((u, v))
        assert all(abs(x - y) <= 8 for x, y in zip((r, g, b), want)), ((r, g, b), want)
    info = collector.messages("camera/camera_info")[-1]
    assert (info.width, info.height) == (320, 240)
    assert info.k[0] == pytest.approx(160 / math.tan(math.radians(30))) and info.k[0] == info.k[4]
    assert info.header.frame_id == "gps_denied/drone/camera_optical"

    odom = collector.messages("rover/odom")[-1]
    assert (odom.header.frame_id, odom.child_frame_id) == ("gps_denied/map", "gps_denied/rover/base_link")
    p = odom.pose.pose.position
    assert (p.x, p.y, p.z) == (1.5, 0.8, 0.15)
    assert odom.pose.pose.orientation.z == pytest.approx(math.sin(math.pi / 4)), "the rover faces +y"

    # One stamp for every topic of one frame; the receipt time. Judged where
    # every topic was received: each subscription matched at its own moment.
    pads = {stamp(m) for m in collector.messages("landing_pad")}
    keys = ("imu", "altitude", "velocity", "landing_pad/point", "camera/image_raw/compressed")
    seen = {key: {stamp(m) for m in collector.messages(key)} for key in keys}
    lo = max(min(s) for s in (pads, *seen.values()))
    hi = min(max(s) for s in (pads, *seen.values()))
    for key in keys:
        assert {s for s in seen[key] if lo <= s <= hi} <= pads, key
    last = collector.messages("landing_pad")[-1].header.stamp
    assert abs(last.sec + last.nanosec * 1e-9 - started) < 5.0
    assert len(pads) == len(collector.messages("landing_pad")), "each frame has its own stamp"

    tf = collector.wait_for("tf_static")[-1]
    children = {t.child_frame_id: t for t in tf.transforms}
    assert set(children) == {"gps_denied/drone/camera_optical", "gps_denied/drone/altimeter"}
    assert all(t.header.frame_id == "gps_denied/drone/base_link" for t in tf.transforms)


def test_a_pad_out_of_view_is_reported_not_detected_and_gets_no_point(collector, processes, sim):
    ns = "gd_pad"
    subscribe_all(collector, ns)
    start_bridge(processes, ns, sim.bridge[1], sim.port)
    keep_sending(sim, lambda i: telemetry(t=i * 0.04, pad=i % 2 == 0),
                 until=lambda: len([m for m in collector.messages("landing_pad") if not m.detected]) >= 5
                 and len(collector.messages("landing_pad/point")) >= 5)
    pads = collector.messages("landing_pad")
    detected = {stamp(m) for m in pads if m.detected}
    unseen = [m for m in pads if not m.detected]
    assert all(m.relative_x == 0.0 and m.confidence == 0.0 for m in unseen)
    assert {stamp(m) for m in collector.messages("landing_pad/point")} <= detected


def test_commands_are_the_exact_json_and_out_of_range_sends_nothing(collector, processes, sim):
    ns = "gd_cmd"
    start_bridge(processes, ns, sim.bridge[1], sim.port, "thrust_gain:=0.25", "pitch_gain:=2.0", "cmd_timeout_s:=1.0")
    cmd = collector.node.create_publisher(AttitudeThrust, f"/{ns}/drone/cmd", RELIABLE)
    cmd_vel = collector.node.create_publisher(Twist, f"/{ns}/drone/cmd_vel", RELIABLE)
    wait_matched(cmd)
    wait_matched(cmd_vel)
    cmd.publish(AttitudeThrust(thrust=1.5, pitch=0.0, roll=0.0, yaw=0.0))
    cmd.publish(AttitudeThrust(thrust=0.0, pitch=0.0, roll=0.0, yaw=float("nan")))
    cmd.publish(AttitudeThrust(thrust=0.5, pitch=0.1, roll=-0.2, yaw=0.0))
    got = sim.wait_command(1)
    assert got[0] == b'{"thrust":0.5,"pitch":0.1,"roll":-0.2,"yaw":0.0}'
    assert sim.sources[0] == ("127.0.0.1", sim.bridge[1]), "commands leave from the bridge's own port"

    twist = Twist()
    twist.linear.z = 2.0  # × 0.25
    twist.angular.x = -0.125
    twist.angular.y = 0.5  # × 2 → clamped to 0.5
    twist.angular.z = -0.25
    cmd_vel.publish(twist)
    got = sim.wait_command(2)
    assert json.loads(got[1]) == {"thrust": 0.5, "pitch": 0.5, "roll": -0.125, "yaw": -0.25}
    assert list(json.loads(got[1])) == ["thrust", "pitch", "roll", "yaw"]
    time.sleep(2.0)
    assert sim.received()[2:] == [NEUTRAL], "the rejected commands sent nothing; the watchdog its neutral"


NEUTRAL = b'{"thrust":0.0,"pitch":0.0,"roll":0.0,"yaw":0.0}'


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_silence_and_the_stop_leave_the_drone_on_the_neutral_command(collector, processes, sim, stop):
    ns = f"gd_watchdog_{stop.name.lower()}"
    diag = collector.subscribe(DiagnosticArray, "/diagnostics", qos=RELIABLE, key="diagnostics")
    bridge = start_bridge(processes, ns, sim.bridge[1], sim.port)
    cmd = collector.node.create_publisher(AttitudeThrust, f"/{ns}/drone/cmd", RELIABLE)
    wait_matched(cmd)
    cmd.publish(AttitudeThrust(thrust=0.4, pitch=0.0, roll=0.0, yaw=0.0))
    sent = time.monotonic()
    sim.wait_command(2, timeout=3.0)
    waited = time.monotonic() - sent
    assert sim.received() == [b'{"thrust":0.4,"pitch":0.0,"roll":0.0,"yaw":0.0}', NEUTRAL]
    assert 0.4 < waited < 1.5, f"the neutral comes cmd_timeout (0.5 s) after the last command: {waited:.2f} s"
    time.sleep(1.0)
    assert len(sim.received()) == 2, "one neutral, not one per tick"

    # Per vehicle in /diagnostics: what is in force, and the neutrals sent.
    deadline = time.monotonic() + 5
    while (values := telemetry_status(collector, "drone commands")).get("neutral_commands_sent") != "1":
        assert time.monotonic() < deadline, values
        time.sleep(0.1)
    assert values["command_in_force"] == "neutral" and values["command_age_s"] == "none", values

    # A stamp from the future is refused; one from now goes out.
    ahead = AttitudeThrust(thrust=0.3)
    ahead.header.stamp = ros_time(time.time() + 5)
    cmd.publish(ahead)
    cmd.publish(AttitudeThrust(thrust=0.2))
    sim.wait_command(3, timeout=3.0)
    assert sim.received()[2] == b'{"thrust":0.2,"pitch":0.0,"roll":0.0,"yaw":0.0}'
    bridge.send_signal(stop)
    sim.wait_command(4, timeout=1.5)
    assert sim.received()[3] == NEUTRAL, "the stop sends the neutral command"
    bridge.wait(timeout=3.0)
    assert sim.received()[4:] == []


def telemetry_status(collector, name="drone telemetry"):
    for array in reversed(collector.messages("diagnostics")):
        for s in array.status:
            # `<node>: <subject> <stream>` on `gps_denied/<subject>`.
            if s.name == f"gps_denied_bridge: {name}" and s.hardware_id == f"gps_denied/{name.split()[0]}":
                return {kv.key: kv.value for kv in s.values}
    return {}


def test_bad_input_of_every_kind_is_counted_and_never_stops_the_next_frame(collector, processes, sim):
    ns = "gd_bad"
    subscribe_all(collector, ns)
    collector.subscribe(DiagnosticArray, "/diagnostics", qos=RELIABLE, key="diagnostics")
    start_bridge(processes, ns, sim.bridge[1], sim.port)
    start = time.monotonic()

    def now():  # the simulator's time runs with the wall clock, from 0
        return round(time.monotonic() - start, 3)

    keep_sending(sim, lambda i: telemetry(t=now()), until=lambda: collector.messages("altitude"))
    picture = jpeg()
    cam = {"width": 320, "height": 240, "fov": 60.0}
    bad = [  # made when sent: each in order with the good ones around it
        lambda: b"\x00\xff\x13 not json at all",
        lambda: json.dumps(telemetry(t=now())).encode()[:40],
        lambda: b"[1, 2, 3]",
        lambda: json.dumps(telemetry(t=now(), imu="calibrating", altimeter={"altitude": "high"})).encode(),
        lambda: json.dumps(telemetry(t=now())).replace('"roll": 0.1', '"roll": NaN').encode(),
        lambda: json.dumps(telemetry(t=now(), camera={**cam, "image": "@@not base64@@"})).encode(),
        lambda: json.dumps(telemetry(t=now(), camera={**cam, "image": base64.b64encode(b"GIF89a" * 20).decode()})).encode(),
        lambda: json.dumps(telemetry(t=now(), image=picture[: len(picture) // 2])).encode(),
        lambda: json.dumps({"timestamp": now()}).encode(),
    ]
    # Another host: this machine's own LAN address (loopback is the simulator's).
    lan = own_lan_address()
    foreign = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if lan:
        foreign.bind((lan, 0))
    for round_ in range(3):
        for k, b in enumerate(bad):
            sim.send_raw(b())
            if lan:
                foreign.sendto(json.dumps(telemetry(t=now(), altimeter={"altitude": 999.0})).encode(), sim.bridge)
            sim.send(telemetry(t=now() + 0.001, image=picture,
                               altimeter={"altitude": 15.0 + round_ * 20 + k, "vertical_velocity": -0.1}))
            time.sleep(0.02)
    foreign.close()
    good = {15.0 + round_ * 20 + k for round_ in range(3) for k in range(len(bad))}

    def altitudes():
        return {round(m.range, 3) for m in collector.messages("altitude")}

    deadline = time.monotonic() + 10
    while not good <= altitudes():
        assert time.monotonic() < deadline, f"good frames lost: {sorted(good - altitudes())}"
        time.sleep(0.05)
    assert 999.0 not in altitudes(), "telemetry from another host was published"
    images = [bytes(m.data) for m in collector.messages("camera/image_raw/compressed")]
    assert images.count(picture) >= 3 * len(bad)

    want = {"dropped_malformed_json": 6, "dropped_not_an_object": 3, "dropped_imu.orientation/invalid": 6,
            "dropped_altimeter.altitude/invalid": 3, "dropped_camera.image/bad_base64": 3,
            "dropped_camera.image/not_jpeg": 3, "dropped_altimeter.altitude/missing": 3}
    if lan:
        want["dropped_foreign_sender"] = 3 * len(bad)
    deadline = time.monotonic() + 10
    while True:
        values = telemetry_status(collector)
        if all(int(values.get(k, 0)) >= n for k, n in want.items()):
            break
        assert time.monotonic() < deadline, values
        time.sleep(0.1)
    camera = telemetry_status(collector, "drone camera")
    assert int(camera.get("dropped_bad_image", 0)) >= 3, camera
    assert processes.procs[0].poll() is None


def test_sim_time_restarts_and_start_order(collector, processes, sim):
    ns = "gd_time"
    subscribe_all(collector, ns)
    collector.subscribe(Clock, "/clock", qos=RELIABLE, key="clock")
    for i in range(5):  # before the bridge exists: lost, and harmless
        sim.send(telemetry(t=7.0 + i * 0.04))
    start_bridge(processes, ns, sim.bridge[1], sim.port, "use_sim_time:=true")
    keep_sending(sim, lambda i: telemetry(t=10.0 + i * 0.04), until=lambda: len(collector.messages("imu")) >= 3)
    for m in collector.messages("imu"):
        t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
        assert abs(round((t - 10.0) / 0.04) * 0.04 + 10.0 - t) < 1e-6, t
    # The simulator restarts: its time starts again from 0.
    def clock():
        return [c.clock.sec + c.clock.nanosec * 1e-9 for c in collector.messages("clock")]

    keep_sending(sim, lambda i: telemetry(t=i * 0.04), until=lambda: any(
        m.header.stamp.sec == 0 for m in collector.messages("imu")) and clock() and clock()[-1] < 10.0)
    assert max(clock()) >= 10.0, "/clock carried the time before the restart, then followed it back"


def test_ros_source_reads_and_writes_json_strings(collector, processes):
    ns = "gd_ros"
    subscribe_all(collector, ns)
    collector.subscribe(String, f"/{ns}/raw_command", qos=RELIABLE, key="raw_command")
    start_bridge(processes, ns, free_port(), free_port(), "source:=ros",
                 f"telemetry_topic:=/{ns}/raw_telemetry", f"command_topic:=/{ns}/raw_command")
    raw = collector.node.create_publisher(String, f"/{ns}/raw_telemetry", RELIABLE)
    cmd = collector.node.create_publisher(AttitudeThrust, f"/{ns}/drone/cmd", RELIABLE)
    wait_matched(raw)
    wait_matched(cmd)
    picture = jpeg()
    huge = base64.b64encode(b"\xff\xd8\xff" + bytes(100_000)).decode()
    raw.publish(String(data=json.dumps(telemetry(t=1.0, camera={"width": 320, "height": 240, "fov": 60.0,
                                                                "image": huge}))))
    deadline = time.monotonic() + 15
    i = 0
    while len(collector.messages("camera/image_raw")) < 2:
        assert time.monotonic() < deadline
        raw.publish(String(data=json.dumps(telemetry(t=2.0 + i * 0.04, image=picture))))
        i += 1
        time.sleep(0.05)
    assert all(m.range != pytest.approx(6.0) for m in collector.messages("altitude")), "the huge one was refused"
    assert bytes(collector.messages("camera/image_raw/compressed")[-1].data) == picture
    cmd.publish(AttitudeThrust(thrust=-0.75, pitch=0.25, roll=0.0, yaw=0.5))
    got = collector.wait_for("raw_command")
    assert got[0].data == '{"thrust":-0.75,"pitch":0.25,"roll":0.0,"yaw":0.5}'


def climb_then_hold(collector, ns):
    """Thrust on `cmd` lifts the emulated drone above 6 m; then the controller
    goes silent, and the watchdog's neutral command (thrust 0 holds) stops the
    climb. Needs the topics of `subscribe_all`."""
    cmd = collector.node.create_publisher(AttitudeThrust, f"/{ns}/drone/cmd", RELIABLE)
    wait_matched(cmd)
    deadline = time.monotonic() + 20
    while collector.messages("altitude")[-1].range < 6.0:
        assert time.monotonic() < deadline, "thrust never lifted the emulated drone"
        cmd.publish(AttitudeThrust(thrust=0.8, pitch=0.0, roll=0.0, yaw=0.0))
        time.sleep(0.1)
    assert collector.messages("velocity")[-1].twist.linear.z > 0
    time.sleep(4.5)
    climb = [m.twist.linear.z for m in collector.messages("velocity")[-10:]]
    assert all(abs(v) < 0.2 for v in climb), f"still climbing after the watchdog's neutral: {climb}"


def test_with_the_emulator_the_pad_shows_and_thrust_climbs(collector, processes):
    ns = "gd_sim"
    subscribe_all(collector, ns)
    bridge_port, sim_port = free_port(), free_port()
    start_emulator(processes, bridge_port, sim_port)
    start_bridge(processes, ns, bridge_port, sim_port)
    raw = collector.wait_for("camera/image_raw", 2, timeout=30)[-1]
    assert (raw.width, raw.height) == (320, 240)
    pads = [m for m in collector.messages("landing_pad") if m.detected]
    assert pads and 0.0 < pads[-1].confidence <= 1.0
    climb_then_hold(collector, ns)
    rover = collector.wait_for("rover/odom", 2)[-1]
    assert rover.header.frame_id != rover.child_frame_id and rover.child_frame_id
