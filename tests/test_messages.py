"""The package's four messages, as rclpy sees them, against the RflySim vision protocol, section 2.3."""

from pathlib import Path

import pytest

from rflysim_bridge.msg import CameraAICtrl, CameraCtrl, CameraParams, CameraStatus

EXPECTED_FIELDS = {
    CameraCtrl: [
        ("header", "std_msgs/Header"),
        ("ctrl_type", "uint8"),
        ("height", "uint32"),
        ("width", "uint32"),
        ("fov", "uint32"),
        ("roll", "int32"),
        ("pitch", "int32"),
        ("yaw", "int32"),
        ("optics_multiply", "int32"),
        ("base_optics", "uint32"),
        ("others", "sequence<int32>"),
    ],
    CameraAICtrl: [
        ("header", "std_msgs/Header"),
        ("ctrl_id", "uint8"),
        ("pixel_pos", "sequence<uint32>"),
    ],
    CameraStatus: [
        ("header", "std_msgs/Header"),
        ("id", "uint8"),
        ("frame_rate", "float"),
        ("capture_max_sec", "float"),
        ("capture_min_sec", "float"),
        ("capture_cur_sec", "float"),
        ("height", "uint32"),
        ("width", "uint32"),
        ("fov", "uint32"),
        ("type", "uint8"),
        ("roll", "int32"),
        ("pitch", "int32"),
        ("yaw", "int32"),
        ("optics_multiply", "int32"),
        ("others", "sequence<int32>"),
        ("camera_params", "rflysim_bridge/CameraParams"),
    ],
    CameraParams: [
        ("fx", "float"),
        ("fy", "float"),
        ("cx", "float"),
        ("cy", "float"),
        ("k1", "float"),
        ("k2", "float"),
        ("p1", "float"),
        ("p2", "float"),
        ("k3", "float"),
        ("att_type_valid_mask", "uint8"),
        ("p2c_roll_deg", "float"),
        ("p2c_pitch_deg", "float"),
        ("p2c_yaw_deg", "float"),
        ("ned2c_roll_deg", "float"),
        ("ned2c_pitch_deg", "float"),
        ("ned2c_yaw_deg", "float"),
        ("level2c_roll_deg", "float"),
        ("level2c_pitch_deg", "float"),
        ("level2c_yaw_deg", "float"),
        ("p2c_front_m", "float"),
        ("p2c_right_m", "float"),
        ("p2c_down_m", "float"),
    ],
}


@pytest.mark.parametrize("msg_type", list(EXPECTED_FIELDS), ids=lambda t: t.__name__)
def test_fields_names_types_and_order(msg_type):
    assert list(msg_type.get_fields_and_field_types().items()) == EXPECTED_FIELDS[msg_type]


def test_type_names_are_in_the_package_namespace():
    for msg_type in EXPECTED_FIELDS:
        assert msg_type.__module__.startswith("rflysim_bridge.msg._")
    assert CameraStatus.__module__ == "rflysim_bridge.msg._camera_status"
    assert isinstance(CameraStatus().camera_params, CameraParams)


def declared_constants(msg_type):
    # SLOT_TYPES is rosidl's own class attribute, not a message constant.
    return {k for k in dir(msg_type) if k.isupper() and not k.startswith("_") and k != "SLOT_TYPES"}


def test_camera_params_constants():
    assert CameraParams.PLANE_TO_CAM_VALID == 1
    assert CameraParams.NED_TO_CAM_VALID == 2
    assert CameraParams.LEVEL_PLANE_TO_CAM_VALID == 4
    constants = declared_constants(CameraParams)
    assert constants == {"PLANE_TO_CAM_VALID", "NED_TO_CAM_VALID", "LEVEL_PLANE_TO_CAM_VALID"}


def test_no_other_message_declares_constants():
    for msg_type in (CameraCtrl, CameraAICtrl, CameraStatus):
        assert not declared_constants(msg_type)


MSG_DIR = Path(__file__).resolve().parent.parent / "msg"

# The meaning comments of the RflySim vision protocol, section 2.3 that users read in `ros2 interface show`.
MEANING_COMMENTS = {
    "CameraCtrl.msg": [
        "# 0x1: resolution control",
        "# 0x2: FOV control",
        "# 0x4: attitude control",
        "# 0x8: optical zoom control",
        "uint32 fov # unit: deg * 1e2",
        "# int32_max: double zoom-in",
        "# int32_min: double zoom-out",
        "uint32 base_optics # optical zoom base",
        "# others[0]: centering command: 0 = no action, 1 = enable",
        "# others[1]: yaw direction control: -1 = left, 0 = no action, 1 = right",
        "# others[2]: yaw angular velocity control (deg/s * 1e2)",
        "# others[3]: pitch direction control: -1 = down, 0 = no action, 1 = up",
        "# others[4]: pitch angular velocity control (deg/s * 1e2)",
    ],
    "CameraAICtrl.msg": [
        "# 0: default box-select all targets",
        "# 1: box-select target at pixel coordinates provided below",
        "uint32[] pixel_pos # Pixel coordinate values for target selection",
    ],
    "CameraStatus.msg": [
        "uint8 id # Device ID",
        "uint8 type # 0: Ground-facing; 1: Relative to gimbal; 2: Relative to aircraft",
    ],
    "CameraParams.msg": [
        "uint8 PLANE_TO_CAM_VALID = 1 # Plane frame rotation to camera frame",
        "uint8 NED_TO_CAM_VALID = 2 # NED frame rotation to camera frame",
        "float32 p2c_roll_deg # Rotation from plane frame to camera frame (321 Euler angles).",
        "float32 ned2c_yaw_deg # Rotation from NED frame to camera frame (321 Euler angles).",
        "float32 level2c_pitch_deg # Rotation from level plane frame to camera frame (321 Euler angles).",
        "float32 p2c_down_m # Displacement from aircraft center to camera center. "
        "X: forward, Y: right, Z: down (aircraft frame).",
    ],
}


@pytest.mark.parametrize("file_name", list(MEANING_COMMENTS))
def test_meaning_comments_of_the_protocol_are_kept(file_name):
    lines = {line.strip() for line in (MSG_DIR / file_name).read_text().splitlines()}
    missing = [c for c in MEANING_COMMENTS[file_name] if c not in lines]
    assert not missing
