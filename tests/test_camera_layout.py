"""Every camera of every bridge, with its emulator, taken the way generic ROS 2
camera tools take it: image_transport's camera subscriber (played by
tests/camera_subscriber_stand_in.py) finds the camera info beside the image
and pairs each image with the info of its stamp, raw and, for JPEG
streams, compressed; and RflySim's depth camera becomes the points
depth_image_proc's point_cloud_xyz makes of it, checked against the
emulator's known scene."""

import math
import time

import numpy
import pytest
from conftest import executable
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image

from camera_subscriber_stand_in import CameraSubscriber, camera_info_topic, point_cloud_xyz
from rflysim_scenario import (
    DEPTH_NO_RETURN, ENCODING, SUFFIX, Scenario, as_published, expected_position_enu, sensor, stamp_seconds,
)
from gps_denied_fakesim import free_port
from test_aerosim_bridge import broker, start_bridge as start_aerosim_bridge  # noqa: F401 (broker: a fixture)
from test_auv_bridge import start_bridge as start_auv_bridge
from test_auv_sim import Sim as AuvSim
from test_gps_denied_bridge import start_bridge as start_gps_denied_bridge, start_emulator as start_gps_denied_sim

RELIABLE = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE)
TRANSPORTS = {0: "shm", 1: "jpeg", 2: "raw", 3: "png"}


def test_image_transports_rule_for_the_camera_info_topic():
    assert camera_info_topic("/rflysim/sensor1/img_rgb") == "/rflysim/sensor1/camera_info"
    assert camera_info_topic("/auv/auv0/front/image_raw") == "/auv/auv0/front/camera_info"
    assert camera_info_topic("/image") == "/camera_info"


def subscribe_cameras(collector, image_topics, compressed=()):
    """A camera subscriber per image topic, raw; and compressed for those in `compressed`."""
    raw = {t: CameraSubscriber(collector.node, t, "raw", RELIABLE) for t in image_topics}
    jpeg = {t: CameraSubscriber(collector.node, t, "compressed", RELIABLE) for t in compressed}
    return raw, jpeg


def check_pairs(subscriber, count=2, timeout=30.0):
    """At least `count` (image, info) pairs, each the same frame: stamp, frame and size."""
    pairs = subscriber.wait_for(count, timeout=timeout)
    for image, info in pairs:
        assert image.header == info.header, subscriber.image_topic
        if hasattr(image, "width"):
            assert (info.width, info.height) == (image.width, image.height), subscriber.image_topic
        assert info.k[0] > 0 and info.p[0] == info.k[0], subscriber.image_topic
    return pairs


def rflysim_cameras():
    """Every camera TypeID, on raw UDP, JPEG, PNG and shared memory between them."""
    transport = {1: 1, 2: 3, 3: 2, 4: 2, 8: 0, 9: 1, 40: 1, 41: 3}
    return [sensor(600 + i, type_id, transport[type_id], port=43600 + i)
            for i, type_id in enumerate(sorted(transport), start=1)]


def test_rflysim_every_camera_pairs_with_the_info_beside_it(collector, processes, tmp_path):
    sensors = rflysim_cameras()
    Scenario(processes, tmp_path, sensors, sim_args=["--window-id", "18"], bridge_params={"window_id": 18, "imu": False})
    topics = {s["SeqID"]: f"/rflysim/sensor{s['SeqID']}/{SUFFIX[s['TypeID']]}" for s in sensors}
    jpeg = [topics[s["SeqID"]] for s in sensors if s["SendProtocol"][0] == 1]
    raw, compressed = subscribe_cameras(collector, topics.values(), jpeg)
    for s in sensors:
        topic = topics[s["SeqID"]]
        label = f"TypeID {s['TypeID']} over {TRANSPORTS[s['SendProtocol'][0]]}"
        assert raw[topic].info_topic == f"/rflysim/sensor{s['SeqID']}/camera_info", label
        for image, info in check_pairs(raw[topic]):
            assert image.encoding == ENCODING[s["TypeID"]], label
            assert info.header.frame_id == f"rflysim/uav1/sensor{s['SeqID']}_optical", label
        if topic in compressed:
            for image, _ in check_pairs(compressed[topic], count=1):
                assert bytes(image.data[:2]) == b"\xff\xd8", f"{label}: the JPEG on <image>/compressed"
    # By default nothing is left under the image, where earlier releases published.
    for topic in topics.values():
        assert collector.node.count_publishers(topic + "/camera_info") == 0, topic


def test_auv_both_cameras_of_each_auv_pair_with_their_info(collector, processes):
    sim = AuvSim(processes, "--vehicle-ids", "[0,1]", "--quiet")
    start_auv_bridge(processes, {"image_port": sim.image_port, "thruster_port": sim.thruster_port,
                                 "telemetry_port": sim.telemetry_port}, vehicle_ids="[0,1]")
    topics = [f"/auv/auv{i}/{camera}/image_raw" for i in (0, 1) for camera in ("front", "bottom")]
    raw, compressed = subscribe_cameras(collector, topics, topics)
    for topic in topics:
        assert raw[topic].info_topic == topic.replace("/image_raw", "/camera_info")
        for image, info in check_pairs(raw[topic]):
            assert image.encoding == "bgr8" and (image.width, image.height) == (320, 240), topic
        check_pairs(compressed[topic], count=1)


def test_gps_denied_camera_pairs_with_its_info(collector, processes):
    ns = "gd_layout"
    bridge_port, sim_port = free_port(), free_port()
    start_gps_denied_sim(processes, bridge_port, sim_port)
    start_gps_denied_bridge(processes, ns, bridge_port, sim_port)
    topic = f"/{ns}/drone/camera/image_raw"
    raw, compressed = subscribe_cameras(collector, [topic], [topic])
    assert raw[topic].info_topic == f"/{ns}/drone/camera/camera_info"
    for image, info in check_pairs(raw[topic]):
        assert info.header.frame_id == "gps_denied/drone/camera_optical" and image.encoding == "bgr8"
    check_pairs(compressed[topic], count=1)


@pytest.mark.broker
def test_aerosim_camera_pairs_with_its_info(broker, processes, collector):  # noqa: F811 (the imported fixture)
    processes.start([executable("aerosim_sim"), "--bootstrap-servers", broker.bootstrap, "--camera-width", "320",
                     "--camera-height", "240", "--camera-rate", "10"], name="aerosim_sim")
    start_aerosim_bridge(processes, broker.bootstrap)
    topic = "/aerosim/camera/image_raw"
    raw, compressed = subscribe_cameras(collector, [topic], [topic])
    assert raw[topic].info_topic == "/aerosim/camera/camera_info"
    for image, info in check_pairs(raw[topic]):
        assert (image.width, image.height, image.encoding) == (320, 240, "bgr8")
    check_pairs(compressed[topic], count=1)


def ground_plane(points):
    """(distance from the camera, unit normal, largest residual) of the plane fitted to `points`."""
    p = numpy.array(points)
    centre = p.mean(axis=0)
    normal = numpy.linalg.svd(p - centre)[2][2]
    residual = numpy.abs((p - centre) @ normal).max()
    return abs(centre @ normal), normal, residual


def test_rflysim_depth_is_16uc1_and_depth_image_proc_puts_the_ground_at_the_altitude(collector, processes, tmp_path):
    """A camera looking straight down from the vehicle (4–6 m up, circling 10 m from
    the tower: nothing but ground below) and one looking up into the sky. The
    former info name is on here (`camera_info_under_image`): both names carry it."""
    down = sensor(621, 2, 2, port=43621, SensorPosXYZ=[0.0, 0.0, 0.0], SensorAngEular=[0.0, -math.pi / 2, 0.0],
                  CameraFOV=40)
    up = sensor(622, 2, 3, port=43622, SensorAngEular=[0.0, 0.3, 0.0])
    sc = Scenario(processes, tmp_path, [down, up], sim_args=["--window-id", "19"],
                  bridge_params={"window_id": 19, "imu": False, "camera_info_under_image": True})
    raw, _ = subscribe_cameras(collector, ["/rflysim/sensor621/img_depth", "/rflysim/sensor622/img_depth"])
    under_image = collector.subscribe(CameraInfo, "/rflysim/sensor621/img_depth/camera_info", RELIABLE)
    plain = collector.subscribe(Image, "/rflysim/sensor622/img_depth", RELIABLE)

    for image, info in check_pairs(raw["/rflysim/sensor621/img_depth"], count=3):
        assert (image.encoding, image.step) == ("16UC1", 64)
        t = stamp_seconds(image.header)
        altitude = expected_position_enu(t)[2]
        points = point_cloud_xyz(image, info)
        assert all(math.isfinite(z) for _, _, z in points), "every pixel sees the ground"
        distance, normal, residual = ground_plane(points)
        assert abs(distance - altitude) < 0.03, f"t = {t}: ground {distance:.3f} m below, the vehicle {altitude:.3f} m up"
        assert residual < 0.01, f"t = {t}: the points are {residual:.3f} m off one plane"
        tilt = math.degrees(math.acos(abs(normal[2])))
        assert tilt < 10, f"a camera looking down sees the ground {tilt:.1f}° tilted (the vehicle banks a little)"
    stamps = {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in collector.wait_for(under_image, 2)}
    assert stamps & {p[1].header.stamp.sec * 10**9 + p[1].header.stamp.nanosec
                     for p in raw["/rflysim/sensor621/img_depth"].pairs()}, "the former name carries the same info"

    # The sky: RflySim3D's 65535 ("no return") becomes 16UC1's 0, nothing else changes.
    for image in collector.wait_for(plain, 2, timeout=30)[:2]:
        rendered = sc.rendered_at(622, stamp_seconds(image.header))
        no_return = [i for i in range(0, len(rendered), 2)
                     if rendered[i:i + 2] == DEPTH_NO_RETURN.to_bytes(2, "little")]
        assert 0 < len(no_return) < len(rendered) // 2, "the camera sees sky and ground"
        assert bytes(image.data) == as_published(2, rendered)
        assert all(bytes(image.data[i:i + 2]) == b"\0\0" for i in no_return)
        points = point_cloud_xyz(image, raw["/rflysim/sensor622/img_depth"].wait_for(1)[-1][1])
        assert sum(math.isnan(z) for _, _, z in points) == len(no_return), "depth_image_proc drops exactly those"
