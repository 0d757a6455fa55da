"""First real round trip: an r2r executable of this package publishes a
CameraStatus (with its nested CameraParams) and a PointCloud2 over Fast DDS;
rclpy subscribers here check every field.
"""

import math
import struct

import pytest
from conftest import executable
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import PointCloud2, PointField

from rflysim_bridge.msg import CameraParams, CameraStatus

F32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]  # noqa: E731


def check_header(header, seq_base):
    assert header.frame_id == "rflysim_camera_optical"
    assert header.stamp.sec >= 1_700_000_000 and header.stamp.sec - 1_700_000_000 >= seq_base
    assert header.stamp.nanosec == 123_456_789


def check_camera_status(msg):
    check_header(msg.header, 0)
    assert msg.id == 9
    assert msg.frame_rate == F32(29.97)
    assert (msg.capture_max_sec, msg.capture_min_sec, msg.capture_cur_sec) == (1.5, 0.25, 0.75)
    assert (msg.height, msg.width, msg.fov, msg.type) == (1080, 1920, 9000, 2)
    assert (msg.roll, msg.pitch, msg.yaw) == (-4500, -(2**31), 2**31 - 1)
    assert msg.optics_multiply == 3
    assert list(msg.others) == [1, -1, 250, 0, -250]
    p = msg.camera_params
    assert isinstance(p, CameraParams)
    assert (p.fx, p.fy, p.cx, p.cy) == (960.5, 961.25, 960.0, 540.0)
    assert (p.k1, p.k2, p.p1, p.p2, p.k3) == (-0.125, 0.0625, F32(0.001), F32(-0.002), 0.5)
    assert p.att_type_valid_mask == CameraParams.PLANE_TO_CAM_VALID | CameraParams.LEVEL_PLANE_TO_CAM_VALID
    assert (p.p2c_roll_deg, p.p2c_pitch_deg, p.p2c_yaw_deg) == (1.0, -30.0, 45.0)
    assert (p.ned2c_roll_deg, p.ned2c_pitch_deg, p.ned2c_yaw_deg) == (2.0, -31.0, 135.0)
    assert (p.level2c_roll_deg, p.level2c_pitch_deg, p.level2c_yaw_deg) == (0.0, -29.5, 44.5)
    assert (p.p2c_front_m, p.p2c_right_m, p.p2c_down_m) == (F32(0.2), F32(-0.05), F32(0.1))


def check_point_cloud(msg):
    check_header(msg.header, 0)
    assert (msg.height, msg.width) == (1, 3)
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        ("x", 0, PointField.FLOAT32, 1),
        ("y", 4, PointField.FLOAT32, 1),
        ("z", 8, PointField.FLOAT32, 1),
        ("seg", 12, PointField.FLOAT32, 1),
    ]
    assert not msg.is_bigendian
    assert (msg.point_step, msg.row_step) == (16, 48)
    assert msg.is_dense
    data = bytes(msg.data)
    assert len(data) == 48
    points = list(struct.iter_unpack("<4f", data))
    for i, (x, y, z, seg) in enumerate(points):
        assert (x, y, z, seg) == (i + 0.5, -(i + 0.25), 10.0 * i, float(i))
        assert all(math.isfinite(v) for v in (x, y, z, seg))


@pytest.mark.parametrize("reliability", [ReliabilityPolicy.RELIABLE, ReliabilityPolicy.BEST_EFFORT])
def test_camera_status_and_point_cloud_round_trip(collector, processes, reliability):
    qos = QoSProfile(depth=20, reliability=reliability)
    status = collector.subscribe(CameraStatus, "/rt_test/camera/status", qos)
    cloud = collector.subscribe(PointCloud2, "/rt_test/cloud", qos)
    # The namespace comes from --ros-args: remapping must reach the r2r node.
    processes.start(
        [executable("roundtrip_publisher"), "--ros-args", "-r", "__ns:=/rt_test", "-p", "rate_hz:=20"]
    )
    statuses = collector.wait_for(status, 3)
    clouds = collector.wait_for(cloud, 3)
    for msg in statuses:
        check_camera_status(msg)
    for msg in clouds:
        check_point_cloud(msg)


def test_publisher_stops_after_count(processes):
    proc = processes.start([executable("roundtrip_publisher"), "--ros-args", "-p", "count:=3", "-p", "rate_hz:=50"])
    assert proc.wait(timeout=20) == 0, processes.output(proc)
    assert "publishing 3 CameraStatus + PointCloud2 pairs at 50 Hz" in processes.output(proc)
