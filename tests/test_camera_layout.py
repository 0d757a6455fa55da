"""Every camera of every bridge, with its emulator, taken the way generic ROS 2
camera tools take it: image_transport's camera subscriber (played by
tests/camera_subscriber_stand_in.py) finds the camera info beside the image
and pairs each image with the info of its stamp, raw and, for JPEG
streams, compressed."""

import pytest
from conftest import executable
from rclpy.qos import QoSProfile, ReliabilityPolicy

from camera_subscriber_stand_in import CameraSubscriber, camera_info_topic
from rflysim_scenario import ENCODING, SUFFIX, Scenario, sensor
from gps_denied_fakesim import free_port
from test_aerosim_bridge import broker, start_bridge as start_aerosim_bridge  # noqa: F401 (broker: a fixture)
from test_auv_bridge import start_bridge as start_auv_bridge
from test_auv_sim import Sim as AuvSim
from test_gps_denied_bridge import start_bridge as start_gps_denied_bridge, start_emulator as start_gps_denied_sim

RELIABLE = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE)
TRANSPORTS = {0: "shm", 1: "jpeg", 2: "raw", 3: "png"}


def test_image_transports_rule_for_the_camera_info_topic():
    assert camera_info_topic("/rflysim/sensor1/img_rgb") == "/rflysim/sensor1/camera_info"
    assert camera_info_topic("/auv0/front/image_raw") == "/auv0/front/camera_info"
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
    sim = AuvSim(processes, "--auv-ids", "[0,1]", "--quiet")
    start_auv_bridge(processes, {"image_port": sim.image_port, "thruster_port": sim.thruster_port,
                                 "telemetry_port": sim.telemetry_port}, auv_ids="[0,1]")
    topics = [f"/auv{i}/{camera}/image_raw" for i in (0, 1) for camera in ("front", "bottom")]
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
    topic = f"/{ns}/camera/image_raw"
    raw, compressed = subscribe_cameras(collector, [topic], [topic])
    assert raw[topic].info_topic == f"/{ns}/camera/camera_info"
    for image, info in check_pairs(raw[topic]):
        assert info.header.frame_id == "camera_optical" and image.encoding == "bgr8"
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
