"""The sensor nodes end to end: the built-in RflySim emulator sends over real
UDP and shared memory, the bridge publishes over real DDS, rclpy subscribers
here check type, encoding, size, values and frame_id of every TypeID ×
transport, the FRD→FLU conversion, odometry against the known trajectory,
shared stamps, garbage and loss.
"""

import math
import os
import re
import socket
import struct
import time

import pytest
from conftest import executable
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, Imu, PointCloud2
from std_msgs.msg import Float32

from rflysim_scenario import (
    ALT_AMP, ALT_OMEGA, CHANNELS, ENCODING, OMEGA, RADIUS, SUFFIX, Scenario, as_published, expected_heading_enu, expected_position_enu, floats,
    sensor, stamp_seconds,
)
from camera_subscriber_stand_in import camera_info_topic

RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(depth=50, reliability=ReliabilityPolicy.BEST_EFFORT)
CAMERA_TYPES = [1, 2, 3, 4, 8, 9, 40, 41]
TRANSPORTS = {0: "shm", 1: "jpeg", 2: "raw", 3: "png"}


def camera_matrix():
    """Every camera TypeID on every transport (a 16-bit depth image has no JPEG form)."""
    out, seq = [], 100
    for type_id in CAMERA_TYPES:
        for transport in TRANSPORTS:
            if type_id == 2 and transport == 1:
                continue
            seq += 1
            out.append(sensor(seq, type_id, transport, port=42000 + seq))
    return out


def test_every_camera_type_and_transport(collector, processes, tmp_path):
    sensors = camera_matrix()
    sc = Scenario(processes, tmp_path, sensors, sim_args=["--window-id", "1"], bridge_params={"window_id": 1, "imu": False})
    keys = {}
    for s in sensors:
        topic = f"/rflysim/sensor{s['SeqID']}/{SUFFIX[s['TypeID']]}"
        # Half the topics with a best-effort subscriber (rviz2 uses reliable): both must receive.
        qos = BEST_EFFORT if s["SeqID"] % 2 else RELIABLE
        keys[s["SeqID"]] = (collector.subscribe(Image, topic, qos), collector.subscribe(CameraInfo, camera_info_topic(topic), qos))
        if s["SendProtocol"][0] == 1:
            keys[s["SeqID"]] += (collector.subscribe(CompressedImage, topic + "/compressed", qos),)
    for s in sensors:
        seq, type_id, transport = s["SeqID"], s["TypeID"], s["SendProtocol"][0]
        enc = ENCODING[type_id]
        images = collector.wait_for(keys[seq][0], 2, timeout=30)
        infos = collector.wait_for(keys[seq][1], 1)
        label = f"sensor {seq} TypeID {type_id} over {TRANSPORTS[transport]}"
        for img in images[:2]:
            assert (img.width, img.height, img.encoding, img.is_bigendian) == (32, 24, enc, 0), label
            assert img.step == 32 * CHANNELS[enc], label
            assert img.header.frame_id == f"rflysim/uav1/sensor{seq}_optical", label
            want = as_published(type_id, sc.rendered_at(seq, stamp_seconds(img.header)))
            got = bytes(img.data)
            if transport == 1:
                err = sum(abs(a - b) for a, b in zip(got, want)) / len(want)
                assert err < 10, f"{label}: JPEG mean error {err}"
            else:
                assert got == want, f"{label}: pixels differ from what the emulator rendered"
        fx = 16 / math.tan(math.radians(80) / 2)
        assert abs(infos[0].k[0] - fx) < 1e-6 and infos[0].k[2] == 16.0 and infos[0].k[5] == 12.0, label
        if transport == 1:
            compressed = collector.wait_for(keys[seq][2], 1)
            assert compressed[0].format == f"{enc}; jpeg compressed {enc}"
            assert bytes(compressed[0].data[:2]) == b"\xff\xd8", "a JPEG file"


def lidar_sensors(transport=1):
    """Every non-camera TypeID: UDP (1) or shared memory (0)."""
    return [
        sensor(201, 20, transport, port=42201, width=90, height=8, hz=10),
        sensor(202, 21, transport, port=42202, width=90, height=8, hz=10),
        sensor(203, 22, transport, port=42203, width=20, height=10, hz=10),
        sensor(204, 23, transport, port=42204, width=16, height=8, hz=10),
        sensor(205, 7, transport, port=42205, width=16, height=12, hz=10, SensorAngEular=[0, -0.5, 0]),
        sensor(206, 5, transport, port=42206, hz=10, SensorAngEular=[0, -0.5, 0], otherParams=[200, 0, 0, 0, 0, 0, 0, 0]),
    ]


def cloud_points(msg):
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        ("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1), ("seg", 12, 7, 1)]
    assert (msg.height, msg.point_step, msg.row_step, msg.is_bigendian) == (1, 16, 16 * msg.width, False)
    v = floats(msg.data)
    return [v[i:i + 4] for i in range(0, len(v), 4)]


@pytest.mark.parametrize("layout", ["protocol", "sdk", "shm"])
def test_lidar_depth_cloud_laser_and_odometry(collector, processes, tmp_path, layout):
    """UDP in the vision protocol's and the SDK's layouts, and shared memory (where RflySim
    writes the SDK int16 layout into a region sized for the most points)."""
    sensors = lidar_sensors(transport=0 if layout == "shm" else 1)
    sim_layout = "sdk" if layout == "shm" else layout
    sc = Scenario(processes, tmp_path, sensors, sim_args=["--window-id", "2", "--lidar-layout", sim_layout],
                  bridge_params={"window_id": 2, "imu": False})
    layout = sim_layout
    clouds = {s["SeqID"]: collector.subscribe(PointCloud2, f"/rflysim/sensor{s['SeqID']}/{SUFFIX[s['TypeID']]}")
              for s in sensors if s["TypeID"] != 5}
    distance = collector.subscribe(Float32, "/rflysim/sensor206/distance")
    local = collector.subscribe(Odometry, "/rflysim/uav1/local/odom")
    glob = collector.subscribe(Odometry, "/rflysim/uav1/global/odom")
    for seq, key in clouds.items():
        type_id = sc.sensors[seq]["TypeID"]
        msgs = collector.wait_for(key, 2, timeout=30)
        for m in msgs[:2]:
            pts = cloud_points(m)
            wire = sc.rendered_at(seq, stamp_seconds(m.header))
            if layout == "protocol" or type_id == 7:
                if layout == "protocol":
                    n = struct.unpack_from("<i", wire, 32)[0]
                    want = [floats(wire[36 + 16 * i:52 + 16 * i]) for i in range(n)]
                else:  # SDK int16 x, y, z for the depth cloud
                    n = struct.unpack_from("<i", wire, 24)[0]
                    want = [tuple(v / 32767 * 60 for v in struct.unpack_from("<3h", wire, 28 + 6 * i)) + (0.0,) for i in range(n)]
            else:
                n = struct.unpack_from("<i", wire, 24)[0]
                want = [tuple(v / 32767 * 60 for v in struct.unpack_from("<3h", wire, 28 + 8 * i))
                        + (float(struct.unpack_from("<h", wire, 34 + 8 * i)[0]),) for i in range(n)]
            assert len(pts) == n and n > 0, f"sensor {seq}"
            for p, w in zip(pts, want):
                if type_id == 21:
                    w = (w[1], w[0], -w[2], w[3])  # world NED → ENU
                if type_id == 7 and layout == "protocol":
                    w = (w[0], w[1], w[2], 0.0)
                assert all(abs(a - b) < 1e-3 for a, b in zip(p, w)), f"sensor {seq}: {p} vs {w}"
            frame = "rflysim/map" if type_id == 21 else f"rflysim/uav1/sensor{seq}"
            assert m.header.frame_id == frame
    # Odometry: the pose sent with each cloud, on the cloud's stamp, against the trajectory.
    odoms = collector.wait_for(local, 5)
    cloud_stamps = {stamp_seconds(m.header) for k in clouds.values() for m in collector.messages(k)}
    for o in odoms[:5]:
        t = stamp_seconds(o.header)
        assert t in cloud_stamps or layout == "sdk", "a LiDAR odometry shares its cloud's stamp"
        ex, ey, ez = expected_position_enu(t)
        p = o.pose.pose.position
        assert abs(p.x - ex) < 1e-3 and abs(p.y - ey) < 1e-3 and abs(p.z - ez) < 1e-3, (t, p, (ex, ey, ez))
        q = o.pose.pose.orientation
        # Body x (the nose) in the world, from the quaternion.
        nose = (1 - 2 * (q.y ** 2 + q.z ** 2), 2 * (q.x * q.y + q.w * q.z))
        hx, hy = expected_heading_enu(t)
        norm = math.hypot(*nose)
        assert (nose[0] * hx + nose[1] * hy) / norm > 0.99, "the nose follows the velocity"
        assert o.header.frame_id == "rflysim/uav1/odom" and o.child_frame_id == "rflysim/uav1/base_link"
    if layout == "protocol":
        g = collector.wait_for(glob, 1)[0]
        assert g.header.frame_id == "rflysim/map"
    d = collector.wait_for(distance, 2)
    # The laser's value is the distance in the 56-byte payload the emulator sent.
    assert all(m.data > 1.0 for m in d)
    assert any(abs(m.data - struct.unpack_from("<f", w, 0)[0]) < 1e-6 for m in d for w in sc.frames(206).values())


def test_imu_frd_to_flu_true_state_and_clock(collector, processes, tmp_path):
    sc = Scenario(processes, tmp_path, [], sim_args=["--window-id", "3"], bridge_params={"window_id": 3})
    imu = collector.subscribe(Imu, "/rflysim/imu", BEST_EFFORT)
    state = collector.subscribe(Odometry, "/rflysim/uav1/state/odom")
    clock = collector.subscribe(Clock, "/clock", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    msgs = collector.wait_for(imu, 200, timeout=30)
    samples = {round(t, 9): (acc, gyro) for t, acc, gyro in sc.imu_samples()}
    checked = 0
    for m in msgs:
        key = round(stamp_seconds(m.header), 9)
        if key not in samples:
            continue
        acc, gyro = samples[key]
        a, w = m.linear_acceleration, m.angular_velocity
        # FRD → FLU: x, −y, −z for both vectors (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 1.4).
        for got, want in [((a.x, a.y, a.z), (acc[0], -acc[1], -acc[2])), ((w.x, w.y, w.z), (gyro[0], -gyro[1], -gyro[2]))]:
            assert all(abs(g - e) < 1e-5 for g, e in zip(got, want)), (got, want)
        assert 9.0 < a.z < 10.6, "at hover the FLU accelerometer reads about +g up"
        assert m.header.frame_id == "rflysim/uav1/base_link"
        assert m.angular_velocity_covariance[0] > 0 and m.linear_acceleration_covariance[0] > 0
        checked += 1
    assert checked >= 100
    # The true state provides orientation once it flows.
    assert any(m.orientation_covariance[0] >= 0 for m in msgs[-20:])
    s = collector.wait_for(state, 3)[-1]
    ex, ey, ez = expected_position_enu(stamp_seconds(s.header))
    assert abs(s.pose.pose.position.x - ex) < 1e-6 and abs(s.pose.pose.position.z - ez) < 1e-6
    speed = math.hypot(RADIUS * OMEGA, ALT_AMP * ALT_OMEGA)
    assert abs(math.hypot(s.twist.twist.linear.x, s.twist.twist.linear.z) - speed) < 0.6, "flying forward at about R·ω"
    clocks = collector.wait_for(clock, 5)
    times = [c.clock.sec + c.clock.nanosec * 1e-9 for c in clocks]
    assert all(b >= a for a, b in zip(times, times[1:])) and times[-1] > 0


def test_garbage_keeps_good_frames_flowing(collector, processes, tmp_path):
    port = 42301
    # Four datagrams a frame: a corrupted header can only cost its frame. (RflySim
    # frames carry no payload checksum, so a single-datagram frame whose time
    # stamp bits flip cannot be told from a good one.)
    s = sensor(301, 1, 2, port=port, width=320, height=240, hz=20)
    sc = Scenario(processes, tmp_path, [s],
                  sim_args=["--window-id", "4", "--garbage", "0.3", "--truncate", "0.05", "--corrupt", "0.05", "--seed", "3"],
                  bridge_params={"window_id": 4, "imu": False})
    key = collector.subscribe(Image, "/rflysim/sensor301/img_rgb")
    # And garbage of our own, straight at the sensor's port.
    junk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(300):
        junk.sendto(os.urandom(1 + i % 200) if i % 3 else struct.pack("<iiiiiid", 1234567893, 100, 0, 2**30, 1, 0, 1.0),
                    ("127.0.0.1", port))
    msgs = collector.wait_for(key, 20, timeout=30)
    for m in msgs:
        assert bytes(m.data) == sc.rendered_at(301, stamp_seconds(m.header)), "every published frame is whole"
    assert sc.bridge.poll() is None, "the bridge is still running"
    assert re.search(r"sensor\d+: (frame|input) dropped: ", sc.bridge_output()), "the drops are logged"


def test_a_corrupt_jpeg_costs_only_its_own_frame(collector, processes, tmp_path):
    """A whole frame of `FF D8` + random bytes once broke the camera's decoder
    for good: every later frame failed with the first one's error."""
    port = 42311
    s = sensor(311, 1, 1, port=port, width=64, height=48, hz=20)
    sc = Scenario(processes, tmp_path, [s], sim_args=["--window-id", "12"], bridge_params={"window_id": 12, "imu": False})
    key = collector.subscribe(Image, "/rflysim/sensor311/img_rgb")
    collector.wait_for(key, 3, timeout=30)
    junk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(5):
        payload = b"\xff\xd8" + os.urandom(3000)
        header = struct.pack("<6id", 1234567893, 32 + len(payload), 0, 1, 1_000_000 + i, 0, 1.0)
        junk.sendto(header + payload, ("127.0.0.1", port))
        time.sleep(0.03)
    after_junk = len(collector.messages(key))
    msgs = collector.wait_for(key, after_junk + 10, timeout=10)
    for m in msgs[after_junk:]:
        want = sc.rendered_at(311, stamp_seconds(m.header))
        err = sum(abs(a - b) for a, b in zip(bytes(m.data), want)) / len(want)
        assert err < 10, f"JPEG mean error {err}"
    assert "frame dropped" in sc.bridge_output(), "the corrupt frames are reported"


def test_exactly_the_frame_with_a_lost_packet_is_missing(collector, processes, tmp_path):
    # 320 × 240 bgr8: 4 datagrams a frame; packet 1 of frames 20 and 29 (the
    # last) never leaves the emulator.
    s = sensor(401, 1, 2, port=42401, width=320, height=240, hz=10)
    key = collector.subscribe(Image, "/rflysim/sensor401/img_rgb")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics", RELIABLE)
    sc = Scenario(processes, tmp_path, [s],
                  sim_args=["--window-id", "5", "--frames", "30", "--drop-packet", "20:1", "--drop-packet", "29:1"],
                  bridge_params={"window_id": 5, "imu": False, "qos_depth": 20})
    assert sc.sim.wait(timeout=30) == 0
    time.sleep(0.5)
    got = [stamp_seconds(m.header) for m in collector.messages(key)]
    index = (sc.dump / "sensor401.index").read_text().split("\n")
    sent = [(float(line.split()[1]), int(line.split()[0])) for line in index if line]
    # The dump prints 6 decimals, the stamp has nanoseconds: the nearest sent time, within a rounding.
    ids = [min(sent, key=lambda s: abs(s[0] - t))[1] for t in got]
    assert all(min(abs(s[0] - t) for s in sent) < 2e-6 for t in got), got
    # Frames published before the subscriber matched are not counted; from
    # the first one received on, every frame arrives but the damaged ones.
    assert ids[0] < 15, ids
    assert ids == [i for i in range(ids[0], 29) if i != 20]
    # Frame 20 goes stale while later frames arrive; frame 29 is the last
    # datagram the socket sees, so only the bridge's own timer can drop it.
    deadline = time.time() + 5
    while True:
        drops = sensor_drops(collector.messages(diag), "sensor401")
        if drops.get("dropped_timed_out") == 2 or time.time() > deadline:
            break
        time.sleep(0.2)
    assert drops.get("dropped_timed_out") == 2, drops
    assert drops.get("dropped_incomplete", 0) == 0, drops


def sensor_drops(diagnostics, name):
    """The dropped_* counts of the newest status whose name contains `name`."""
    for array in reversed(diagnostics):
        for status in array.status:
            if name in status.name:
                return {kv.key: int(kv.value) for kv in status.values if kv.key.startswith("dropped_")}
    return {}


def test_namespace_remapping_moves_every_topic(collector, processes, tmp_path):
    s = sensor(501, 3, 2, port=42501)
    Scenario(processes, tmp_path, [s], sim_args=["--window-id", "6"], bridge_params={"window_id": 6},
             bridge_args=["-r", "__ns:=/drone7"])
    img = collector.subscribe(Image, "/drone7/rflysim/sensor501/img_gray")
    imu = collector.subscribe(Imu, "/drone7/rflysim/imu")
    collector.wait_for(img, 1, timeout=30)
    collector.wait_for(imu, 1)


def test_several_vehicles_get_namespaced_imu_topics(collector, processes, tmp_path):
    Scenario(processes, tmp_path, [], copters=(1, 2), sim_args=["--window-id", "7"], bridge_params={"window_id": 7})
    for copter in (1, 2):
        key = collector.subscribe(Imu, f"/uav{copter}/rflysim/imu")
        collector.wait_for(key, 5, timeout=30)


def test_imu_is_asked_for_again_after_coptersim_goes_silent(collector, processes, tmp_path):
    """CopterSim sends IMU only when asked: the bridge asks again (once a second) after 2 s of silence."""
    sc = Scenario(processes, tmp_path, [], sim_args=["--window-id", "7"], bridge_params={"window_id": 7})
    key = collector.subscribe(Imu, "/rflysim/imu")
    collector.wait_for(key, 5, timeout=30)
    sc.sim.terminate()
    sc.sim.wait(timeout=5)
    time.sleep(3.0)
    before = len(collector.messages(key))
    restarted = processes.start(sc.sim_argv, name="rflysim_sim")
    # Due at the latest 1 s after the restart; the stream is then at 200 Hz.
    collector.wait_for(key, before + 20, timeout=4)
    assert "IMU at 200 Hz" in processes.output(restarted)


def test_single_sensor_executables(collector, processes, tmp_path):
    """camera_node, lidar_node and imu_node each own one stream of the same config."""
    sensors = [sensor(601, 1, 2, port=42601), sensor(602, 3, 2, port=42602), sensor(603, 20, 1, port=42603, width=60, height=4)]
    sc = Scenario(processes, tmp_path, sensors, sim_args=["--window-id", "8"], bridge_executable="camera_node",
                  bridge_params={"window_id": 8, "seq_id": 602})
    common = ["-p", f"rflysim_config:={sc.config}", "-p", "use_sim_time:=true", "-p", "window_id:=8"]
    processes.start([executable("lidar_node"), "--ros-args", *common], name="lidar_node")
    processes.start([executable("imu_node"), "--ros-args", *common], name="imu_node")
    gray = collector.subscribe(Image, "/rflysim/sensor602/img_gray")
    rgb = collector.subscribe(Image, "/rflysim/sensor601/img_rgb")
    cloud = collector.subscribe(PointCloud2, "/rflysim/sensor603/vehicle_lidar")
    imu = collector.subscribe(Imu, "/rflysim/imu")
    collector.wait_for(gray, 2, timeout=30)
    collector.wait_for(cloud, 2)
    collector.wait_for(imu, 10)
    time.sleep(1.0)
    assert collector.messages(rgb) == [], "camera_node serves only the camera it was given (seq_id 602)"


def test_camera_lidar_and_imu_share_one_time_base(collector, processes, tmp_path):
    """Without use_sim_time every stream of a vehicle is stamped sim time + one
    epoch, where its sim time 0 lies on this machine's clock (the Python SDK
    stamped each sensor on its own clock); on one machine that epoch is the
    heartbeat's, give or take the least latency of a sample."""
    sensors = [sensor(701, 1, 2, port=42701, hz=20), sensor(702, 20, 1, port=42702, width=60, height=4, hz=20)]
    sc = Scenario(processes, tmp_path, sensors, sim_args=["--window-id", "9"],
                  bridge_params={"window_id": 9, "use_sim_time": False})
    img = collector.subscribe(Image, "/rflysim/sensor701/img_rgb")
    cloud = collector.subscribe(PointCloud2, "/rflysim/sensor702/vehicle_lidar")
    imu = collector.subscribe(Imu, "/rflysim/imu")
    collector.wait_for(img, 5, timeout=30)
    collector.wait_for(cloud, 5)
    collector.wait_for(imu, 50)
    time.sleep(2.5)  # past the first estimate's settling

    # Each stream's newest stamp minus the sim time of what the emulator sent
    # nearest to it: where that stream puts sim time 0. Taken within a few
    # ms of each other, the three must agree (the estimate moves only by
    # the drift and the least latency of a window), and lie within a few ms
    # of the heartbeat's epoch (one machine, one clock).
    newest = {key: stamp_seconds(collector.messages(key)[-1].header) for key in (img, cloud, imu)}
    heartbeat_epoch = int((sc.dump / "heartbeat1.txt").read_text().split()[-1]) * 1e-3
    sent = {img: [t for t in sc.frames(701)], cloud: [t for t in sc.frames(702)],
            imu: [t for t, _, _ in sc.imu_samples()]}
    epochs = {key: st - min(sent[key], key=lambda t: abs(st - heartbeat_epoch - t)) for key, st in newest.items()}
    assert max(epochs.values()) - min(epochs.values()) < 0.001, epochs
    assert all(abs(e - heartbeat_epoch) < 0.005 for e in epochs.values()), (epochs, heartbeat_epoch)

    # And it is the wall clock: stamps are within a second of now.
    now = time.time()
    assert abs(stamp_seconds(collector.messages(imu)[-1].header) - now) < 1.0
