"""Gimbal control and status, TF and diagnostics, against real UDP sockets,
the built-in emulator and the bridge over DDS."""

import json
import math
import signal
import socket
import struct
import time

import pytest
from conftest import dropped_count, executable, ros_time
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from rflysim_bridge.msg import CameraAICtrl, CameraCtrl, CameraStatus
from rflysim_scenario import Scenario, sensor

GIMBAL_FMT = "<2H1I14H28f"  # the 148-byte gimbal VisionSensorReq
RELIABLE = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE)


def gimbal_config(tmp_path, seq=6):
    cfg = tmp_path / "Config.json"
    cfg.write_text(json.dumps({"VisionSensors": [sensor(seq, 9, 2, port=43000 + seq, width=64, height=36, CameraFOV=60,
                                                        SensorAngEular=[0, -0.3, 0.2], SensorPosXYZ=[0.1, 0.02, 0.15])]}))
    return cfg


def decode_request(d):
    v = struct.unpack(GIMBAL_FMT, d)
    return {
        "checksum": v[0], "seq": v[1], "bitmask": v[2], "type_id": v[3], "width": v[6], "height": v[7],
        "fov": v[17], "pos": v[18:21], "eular_or_quat": v[21], "euler": v[22:25], "other": v[29:45],
    }


class FakeRflySim3D:
    """Stands where RflySim3D listens (20010 + window id) and keeps what arrives."""

    def __init__(self, window_id):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 20010 + window_id))
        self.sock.settimeout(0.1)

    def requests(self, timeout=5.0, want=1):
        out, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline and len(out) < want:
            try:
                d = self.sock.recv(2048)
            except socket.timeout:
                continue
            if len(d) == 148:
                out.append(decode_request(d))
        return out


def start_gimbal_node(processes, cfg, window_id, status_port, extra=()):
    return processes.start([executable("gimbal_node"), "--ros-args", "-p", f"rflysim_config:={cfg}",
                            "-p", f"window_id:={window_id}", "-p", f"status_port:={status_port}",
                            "-p", "status_multicast:=false", *extra], name="gimbal_node")


def wait_matched(publisher, timeout=10.0):
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        assert time.monotonic() < deadline, "the gimbal node never subscribed"
        time.sleep(0.05)


def test_each_control_field_becomes_the_exact_bytes(collector, processes, tmp_path):
    rfly = FakeRflySim3D(window_id=12)
    start_gimbal_node(processes, gimbal_config(tmp_path), 12, 43101)
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    ai = collector.node.create_publisher(CameraAICtrl, "/rflysim/sensor6/camera/ai_ctrl", RELIABLE)
    wait_matched(ctrl)
    wait_matched(ai)

    def send(**fields):
        m = CameraCtrl()
        for k, v in fields.items():
            setattr(m, k, v)
        ctrl.publish(m)
        got = rfly.requests()
        assert got, f"nothing sent for {fields}"
        return got[0]

    r = send(ctrl_type=0x1 | 0x2 | 0x4, width=1280, height=720, fov=4550, roll=100, pitch=-3000, yaw=9000)
    assert (r["checksum"], r["seq"], r["type_id"], r["bitmask"]) == (12345, 6, 9, 0)
    assert (r["width"], r["height"], r["fov"], r["eular_or_quat"]) == (1280, 720, 45.5, 0.0)
    for got, deg in zip(r["euler"], (1.0, -30.0, 90.0)):
        assert abs(got - math.radians(deg)) < 1e-6
    assert r["pos"] == pytest.approx((0.1, 0.02, 0.15))
    r = send(ctrl_type=0x8, optics_multiply=2**31 - 1)
    assert r["bitmask"] == 1 << 7 and r["other"][4] == 1.0  # zoom ×2
    assert (r["width"], r["fov"]) == (1280, 45.5), "the state of earlier commands is kept"
    r = send(ctrl_type=0x8, optics_multiply=-(2**31), base_optics=10)
    assert r["bitmask"] == (1 << 7) | (1 << 13) and r["other"][4] == 0.0 and r["other"][5] == 10.0
    r = send(others=[1])
    assert r["bitmask"] == 1 << 5 and r["other"][1] == 1.0
    r = send(others=[0, 1, 1500, -1, 250])
    assert r["bitmask"] == 1 << 6
    assert r["other"][3] == pytest.approx(math.radians(15)) and r["other"][2] == pytest.approx(-math.radians(2.5))
    r = send(ctrl_type=0x10 | 0x20 | 0x40, others=[0, 0, 0, 0, 0, 3, 1, 2])
    assert r["bitmask"] == (1 << 8) | (1 << 9) | (1 << 10) and r["other"][5:8] == (3.0, 1.0, 2.0)
    ai.publish(CameraAICtrl(ctrl_id=0))
    r = rfly.requests()[0]
    assert r["bitmask"] == 1 << 11 and r["other"][8] == 1.0
    ai.publish(CameraAICtrl(ctrl_id=1, pixel_pos=[300, 200]))
    r = rfly.requests()[0]
    assert r["other"][8:11] == (2.0, 300.0, 200.0)


def test_invalid_commands_send_nothing_and_say_why(collector, processes, tmp_path):
    rfly = FakeRflySim3D(window_id=13)
    node = start_gimbal_node(processes, gimbal_config(tmp_path), 13, 43102)
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    ai = collector.node.create_publisher(CameraAICtrl, "/rflysim/sensor6/camera/ai_ctrl", RELIABLE)
    wait_matched(ctrl)
    wait_matched(ai)
    ctrl.publish(CameraCtrl(ctrl_type=0x80))
    ctrl.publish(CameraCtrl(ctrl_type=0x2, fov=0))
    ctrl.publish(CameraCtrl(ctrl_type=0x4, pitch=12000))
    ctrl.publish(CameraCtrl(others=[0, 5]))
    ai.publish(CameraAICtrl(ctrl_id=1, pixel_pos=[1, 2, 3]))
    assert rfly.requests(timeout=1.5) == []
    # Logged at a limited rate (the first one), every one counted.
    log = processes.output(node)
    assert "command dropped: invalid: Camera" in log, log
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    assert dropped_count(collector, diag, "gimbal commands", "invalid", 5) == 5


def rate_command(yaw_rate=1500, pitch_rate=1000):
    return CameraCtrl(others=[0, 1, yaw_rate, 1, pitch_rate])


def is_stop(r):
    return r["bitmask"] == 1 << 6 and r["other"][2] == 0.0 and r["other"][3] == 0.0


def test_with_use_sim_time_a_stamped_command_is_judged_on_clock(collector, processes, tmp_path):
    """The gimbal node has no simulator time of its own: with use_sim_time a
    command's stamp is judged against /clock (here the test's, far from the
    wall clock). One stamped now goes out; one older than cmd_timeout_s is
    refused as stale."""
    rfly = FakeRflySim3D(window_id=8)
    node = start_gimbal_node(processes, gimbal_config(tmp_path), 8, 43110,
                             extra=["-p", "use_sim_time:=true", "-p", "cmd_timeout_s:=0.5"])
    clock_pub = collector.node.create_publisher(Clock, "/clock", RELIABLE)
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    wait_matched(ctrl)
    began = time.monotonic()

    def stamped(age_s, fov):
        """A field-of-view command stamped `age_s` before /clock, after /clock ticks."""
        t = 500.0 + time.monotonic() - began
        clock_pub.publish(Clock(clock=ros_time(t)))
        m = CameraCtrl(ctrl_type=0x2, fov=fov)
        m.header.stamp = ros_time(t - age_s)
        return m

    # Until the node has /clock, a stamped command cannot be judged: sent again.
    deadline, got = time.monotonic() + 15, []
    while not got:
        assert time.monotonic() < deadline, f"no stamped command went out: {processes.output(node)[-2000:]}"
        assert node.poll() is None, "the gimbal node ended"
        ctrl.publish(stamped(0.0, 3000))
        got = rfly.requests(timeout=0.2)
    assert got[0]["fov"] == 30.0
    rfly.requests(timeout=0.3, want=100)  # the repeats
    ctrl.publish(stamped(5.0, 4000))
    assert rfly.requests(timeout=1.0) == [], "a command 5 s older than /clock went out"
    ctrl.publish(stamped(0.0, 5000))
    got = rfly.requests(timeout=3.0)
    assert got and got[0]["fov"] == 50.0


def test_a_silent_gimbal_controller_stops_the_gimbal(collector, processes, tmp_path):
    """Rate commands at 10 Hz for 2 s, then silence: cmd_timeout later the
    rates are set to zero, once; a stop after that sends nothing more."""
    rfly = FakeRflySim3D(window_id=17)
    node = start_gimbal_node(processes, gimbal_config(tmp_path), 17, 43104, extra=["-p", "cmd_timeout_s:=0.5"])
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    wait_matched(ctrl)
    for _ in range(20):
        ctrl.publish(rate_command())
        time.sleep(0.1)
    last = time.monotonic()
    got = rfly.requests(timeout=3.0, want=100)
    moving = [r for r in got if not is_stop(r)]
    stops = [r for r in got if is_stop(r)]
    assert len(moving) >= 15 and all(r["other"][3] == pytest.approx(math.radians(15)) for r in moving)
    assert len(stops) == 1, f"one zero-rate request after the silence, got {len(stops)}"
    assert got[-1] is stops[0], "nothing after it"
    assert time.monotonic() - last > 2.5
    # Nothing echoes here (RflySim3D's status port is not sent to the node): the log says so.
    assert "cannot be confirmed" in processes.output(node), processes.output(node)
    node.send_signal(signal.SIGINT)
    assert node.wait(timeout=2) == 0
    assert rfly.requests(timeout=0.5) == [], "the gimbal already stopped: nothing at the stop"


def test_a_stopped_gimbal_node_stops_a_slewing_gimbal(collector, processes, tmp_path):
    rfly = FakeRflySim3D(window_id=18)
    node = start_gimbal_node(processes, gimbal_config(tmp_path), 18, 43105, extra=["-p", "cmd_timeout_s:=5.0"])
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    wait_matched(ctrl)
    ctrl.publish(rate_command())
    assert not is_stop(rfly.requests()[0])
    began = time.monotonic()
    node.send_signal(signal.SIGINT)
    stop = rfly.requests(timeout=2.0)
    assert stop and is_stop(stop[0]), stop
    assert node.wait(timeout=2) == 0
    assert time.monotonic() - began < 1.5


def commands_diagnostics(collector, diag, key, wanted, timeout=10.0):
    """The value of `key` in the gimbal commands' /diagnostics status once it
    is `wanted` (or the last one seen, when the timeout passes)."""
    deadline, value = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        for array in collector.messages(diag):
            for st in array.status:
                if "gimbal commands" in st.name:
                    value = next((kv.value for kv in st.values if kv.key == key), value)
        if value == wanted:
            break
        time.sleep(0.1)
    return value


def test_a_refused_command_changes_nothing_later_requests_are_built_from(collector, processes, tmp_path):
    """An attitude command (pitch −90°) stamped 10 s old is refused as stale:
    the FOV command after it, the rate command and the watchdog's neutral all
    carry the configured attitude, not its pitch."""
    from rclpy.duration import Duration

    rfly = FakeRflySim3D(window_id=19)
    node = start_gimbal_node(processes, gimbal_config(tmp_path), 19, 43106, extra=["-p", "cmd_timeout_s:=0.5"])
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    wait_matched(ctrl)
    stale = CameraCtrl(ctrl_type=0x4, pitch=-9000)
    stale.header.stamp = (collector.node.get_clock().now() - Duration(seconds=10)).to_msg()
    ctrl.publish(stale)
    assert rfly.requests(timeout=1.0) == [], "the stale command sends nothing"
    ctrl.publish(CameraCtrl(ctrl_type=0x2, fov=4000))
    got = rfly.requests()
    ctrl.publish(rate_command())
    got += rfly.requests(timeout=3.0, want=2)
    assert len(got) == 3 and not is_stop(got[1]) and is_stop(got[2]), got
    configured = (0.0, -0.3, 0.2)
    for r, what in zip(got, ("the FOV command", "the rate command", "the watchdog's neutral")):
        assert r["euler"] == pytest.approx(configured, abs=1e-6), f"{what} carries the refused pitch: {r['euler']}"
        assert r["fov"] == 40.0, what
    assert ": command dropped: stale: " in processes.output(node)
    assert commands_diagnostics(collector, diag, "dropped_stale", "1") == "1"


def gimbal_with_echo(collector, processes, tmp_path, window, status_port, stream_port, sim_args=(), cmd_timeout=0.5):
    """The emulator (echoing to the gimbal node's status port) and the gimbal
    node, once its first status came; the gimbal's status, the command
    publisher, the emulator and the node."""
    s = sensor(6, 9, 2, port=stream_port, width=64, height=36, CameraFOV=60, SensorAngEular=[0, -0.3, 0.2])
    status = collector.subscribe(CameraStatus, "/rflysim/sensor6/camera/status")
    sc = Scenario(processes, tmp_path, [s],
                  sim_args=["--window-id", str(window), "--gimbal-target", f"127.0.0.1:{status_port}", *sim_args],
                  bridge_params={"window_id": window, "imu": False})
    node = start_gimbal_node(processes, sc.config, window, status_port, extra=["-p", f"cmd_timeout_s:={cmd_timeout}"])
    collector.wait_for(status, 2, timeout=30)
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    wait_matched(ctrl)
    return status, ctrl, sc.sim, node


def wait_status(collector, status, condition, timeout):
    """The first status after now that meets `condition`, or None."""
    seen = len(collector.messages(status))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for m in collector.messages(status)[seen:]:
            if condition(m):
                return m
        time.sleep(0.05)
    return None


def slewing(m):
    return m.others[2] != 0 or m.others[4] != 0


def still(m):
    return m.others[2] == 0 and m.others[4] == 0


def test_the_watchdog_sends_the_neutral_again_until_the_echo_shows_the_gimbal_stopped(collector, processes, tmp_path):
    """The emulator drops the first neutral: the echo still shows the rates,
    so the neutral goes again and the gimbal stops."""
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    status, ctrl, sim, node = gimbal_with_echo(collector, processes, tmp_path, 11, 43107, 43011,
                                               sim_args=["--drop-gimbal-neutrals", "1"])
    ctrl.publish(rate_command())
    assert wait_status(collector, status, slewing, 5.0), "the rate command never turned the gimbal"
    stopped = wait_status(collector, status, still, 5.0)
    assert stopped, f"the gimbal is still turning: {collector.messages(status)[-1].others}"
    assert "neutral request (both rates 0) dropped" in processes.output(sim)
    later = wait_status(collector, status, lambda m: True, 2.0)
    assert (later.pitch, later.yaw) == (stopped.pitch, stopped.yaw) and still(later)
    assert commands_diagnostics(collector, diag, "neutral_commands_sent", "1") == "1"
    assert int(commands_diagnostics(collector, diag, "dropped_neutral_not_echoed", "1")) >= 1
    assert commands_diagnostics(collector, diag, "dropped_neutral_unconfirmed", None) is None


def read_echo(port, timeout=3.0):
    """The next gimbal echo (148 bytes, checksum 12346) sent to `port`: its pitch and yaw rates."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.settimeout(0.1)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                d = sock.recv(2048)
            except socket.timeout:
                continue
            if len(d) == 148:
                r = decode_request(d)
                if r["checksum"] == 12346:
                    return r["other"][1:3]
    finally:
        sock.close()
    raise AssertionError(f"no gimbal echo on {port} within {timeout} s")


def test_a_stopped_gimbal_node_sends_the_neutral_again_until_the_echo_shows_the_gimbal_stopped(
        collector, processes, tmp_path):
    status, ctrl, sim, node = gimbal_with_echo(collector, processes, tmp_path, 10, 43108, 43012,
                                               sim_args=["--drop-gimbal-neutrals", "1"], cmd_timeout=5.0)
    ctrl.publish(rate_command())
    assert wait_status(collector, status, slewing, 5.0), "the rate command never turned the gimbal"
    began = time.monotonic()
    node.send_signal(signal.SIGINT)
    assert node.wait(timeout=2) == 0, processes.output(node)
    assert time.monotonic() - began < 1.5
    assert "neutral request (both rates 0) dropped" in processes.output(sim)
    # The node is gone and its status port free: what the emulator echoes there now.
    assert read_echo(43108) == (0.0, 0.0), "the gimbal keeps turning after the node stopped"


def test_a_neutral_the_echo_never_confirms_is_counted_and_said(collector, processes, tmp_path):
    """Every neutral is lost: the watchdog's is sent for the stop budget, then
    counted and logged as unconfirmed; at the stop, the same is an error and
    the exit status says so."""
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    status, ctrl, sim, node = gimbal_with_echo(collector, processes, tmp_path, 9, 43109, 43013,
                                               sim_args=["--gimbal-neutral-loss", "1"])
    ctrl.publish(rate_command())
    assert wait_status(collector, status, slewing, 5.0), "the rate command never turned the gimbal"
    deadline = time.monotonic() + 5
    while "was not confirmed" not in processes.output(node):
        assert time.monotonic() < deadline, processes.output(node)
        time.sleep(0.1)
    assert commands_diagnostics(collector, diag, "dropped_neutral_unconfirmed", "1") == "1"
    assert int(commands_diagnostics(collector, diag, "dropped_neutral_not_echoed", "2")) >= 1
    assert slewing(collector.messages(status)[-1]), "the echo still shows it turning, as the log says"
    sent = processes.output(sim).count("neutral request (both rates 0) dropped")
    assert sent >= 2, f"{sent} neutral datagram(s) within the stop budget: never sent again"
    # At the stop: the same neutral, never confirmed — an error, and exit status 1.
    ctrl.publish(rate_command())
    time.sleep(0.2)
    node.send_signal(signal.SIGINT)
    assert node.wait(timeout=3) == 1, processes.output(node)
    assert "no neutral command was delivered within" in processes.output(node)


def test_echo_becomes_camera_status_and_control_closes_the_loop(collector, processes, tmp_path):
    s = sensor(6, 9, 2, port=43006, width=64, height=36, CameraFOV=60, SensorAngEular=[0, -0.3, 0.2],
               SensorPosXYZ=[0.1, 0.02, 0.15])
    status = collector.subscribe(CameraStatus, "/rflysim/sensor6/camera/status")
    sc = Scenario(processes, tmp_path, [s], sim_args=["--window-id", "14", "--gimbal-target", "127.0.0.1:43103"],
                  bridge_params={"window_id": 14, "imu": False})
    start_gimbal_node(processes, sc.config, 14, 43103)
    first = collector.wait_for(status, 2, timeout=30)[-1]
    assert (first.id, first.width, first.height, first.fov, first.type) == (6, 64, 36, 6000, 2)
    assert (first.roll, first.pitch, first.yaw) == (0, round(math.degrees(-0.3) * 100), round(math.degrees(0.2) * 100))
    p = first.camera_params
    assert p.fx == pytest.approx(32 / math.tan(math.radians(30)), rel=1e-5) and p.fy == p.fx
    assert (p.cx, p.cy) == (32.0, 18.0)
    assert p.att_type_valid_mask == p.PLANE_TO_CAM_VALID
    assert p.p2c_pitch_deg == pytest.approx(math.degrees(-0.3), abs=1e-3)
    assert (p.p2c_front_m, p.p2c_right_m, p.p2c_down_m) == pytest.approx((0.1, 0.02, 0.15))
    # Command: pitch −45°, yaw 10°, FOV 40°, zoom ×2 — the emulator applies it, its echo comes back as status.
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor6/camera/ctrl", RELIABLE)
    wait_matched(ctrl)
    ctrl.publish(CameraCtrl(ctrl_type=0x2 | 0x4 | 0x8, fov=4000, pitch=-4500, yaw=1000, optics_multiply=2**31 - 1))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        last = collector.messages(status)[-1]
        if last.pitch == -4500:
            break
        time.sleep(0.1)
    assert (last.pitch, last.yaw) == (-4500, 1000)
    assert last.fov == 2000, "FOV 40° at zoom ×2"
    assert last.optics_multiply == 1
    assert last.camera_params.fx == pytest.approx(32 / math.tan(math.radians(10)), rel=1e-4)


def level(status):
    """DiagnosticStatus.level is a `byte`: rclpy gives it as bytes."""
    return status.level[0] if isinstance(status.level, bytes) else status.level


def test_tf_and_diagnostics(collector, processes, tmp_path):
    sensors = [
        sensor(1, 1, 2, port=43201, SensorPosXYZ=[0.3, 0.1, 0.05], SensorAngEular=[0, -0.3, 0]),
        sensor(2, 20, 1, port=43202, width=60, height=4, SensorPosXYZ=[0, 0, -0.1], SensorAngEular=[0, 0, 0]),
    ]
    latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    static = collector.subscribe(TFMessage, "/tf_static", latched)
    dynamic = collector.subscribe(TFMessage, "/tf")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    Scenario(processes, tmp_path, sensors, sim_args=["--window-id", "15"],
             bridge_params={"window_id": 15, "use_sim_time": False})
    tfs = {t.child_frame_id: t for m in collector.wait_for(static, 1, timeout=30) for t in m.transforms}
    cam = tfs["rflysim/uav1/sensor1"]
    assert cam.header.frame_id == "rflysim/uav1/base_link"
    tr = cam.transform.translation
    assert (tr.x, tr.y, tr.z) == pytest.approx((0.3, -0.1, -0.05))
    q = cam.transform.rotation
    # FRD pitch −0.3 rad tilts the camera down (FRD +z); in FLU its forward axis has z = −sin 0.3.
    fwd_z = 2 * (q.x * q.z - q.w * q.y)
    assert fwd_z == pytest.approx(-math.sin(0.3), abs=1e-6)
    assert tfs["rflysim/uav1/sensor1_optical"].header.frame_id == "rflysim/uav1/sensor1"
    assert "rflysim/uav1/sensor2" in tfs
    odom_tf = collector.wait_for(dynamic, 2)[-1].transforms[0]
    assert (odom_tf.header.frame_id, odom_tf.child_frame_id) == ("rflysim/uav1/odom", "rflysim/uav1/base_link")
    # Diagnostics: every stream with its rate, drops and age.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        arrays = collector.messages(diag)
        if arrays and all(level(s) == 0 for s in arrays[-1].status) and len(arrays[-1].status) >= 4:
            break
        time.sleep(0.2)
    statuses = {s.name: s for s in arrays[-1].status}
    names = sorted(statuses)
    assert any("sensor1 rflysim/sensor1/img_rgb" in n for n in names), names
    assert any("uav1 imu" in n for n in names), names
    s1 = next(s for n, s in statuses.items() if "sensor1" in n)
    values = {kv.key: kv.value for kv in s1.values}
    assert float(values["rate_hz"]) > 5
    assert int(values["frames_published"]) > 0 and values["frames_dropped"] == "0"
    assert float(values["last_frame_age_s"]) < 1.0
    assert level(s1) == 0 and s1.hardware_id == "rflysim/sensor1"


def test_status_view_shows_rates_drops_and_latency(collector, processes, tmp_path):
    Scenario(processes, tmp_path, [sensor(1, 3, 2, port=43301, hz=20)], sim_args=["--window-id", "16"],
             bridge_params={"window_id": 16, "use_sim_time": False})
    view = processes.start([executable("status"), "--ros-args", "-p", "once:=true"], name="status")
    assert view.wait(timeout=30) == 0, processes.output(view)
    out = processes.output(view)
    header, *rows = [line for line in out.splitlines() if line.strip()]
    assert header.split()[:4] == ["rflysim_bridge", "rate", "Hz", "frames"]
    row = next(r for r in rows if "sensor1 rflysim/sensor1/img_gray" in r)
    rate, frames, dropped = row.split()[2:5]
    assert float(rate) > 5 and int(frames) > 0 and dropped == "0"
    assert any("uav1 imu" in r for r in rows)
