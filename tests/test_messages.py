"""The package's four messages, as rclpy sees them, against RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.3."""

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

# The meaning comments of RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.3 that users read in `ros2 interface show`.
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


# RIHS01 type hashes of simulation_interfaces 2.1.0, from a build of the
# standard's own package: a standard client and this package's types agree
# only when these are equal.
SIMULATION_INTERFACES_HASHES = {
    "simulation_interfaces/srv/SpawnEntity": "RIHS01_66860313e11009faddbfc8568e5d410d1a11607fe75eeb1308671dc0406fe3a7",
    "simulation_interfaces/srv/DeleteEntity": "RIHS01_ff7e96a5b83dc8e2bb34b8b034480028b3a24d9f8376b2c0590bac3704be3e28",
    "simulation_interfaces/srv/GetEntities": "RIHS01_cb90004c48cd50f37732fb008e22c34c261dd680a723bf0f85d8437ea4498bf7",
    "simulation_interfaces/srv/GetEntityState": "RIHS01_749c91f2a2353d98367b64f2995a0f5842ce92a08ec1ffb3e185540a91557fb5",
    "simulation_interfaces/srv/GetEntitiesStates": "RIHS01_0a76170d0c1c90e1eaf805cfab78ea801d1f82df309a28c1f0fae4b570f19754",
    "simulation_interfaces/srv/SetEntityState": "RIHS01_fba636c91d38832dbd4f6896ffce54ff98fd9929962b0533546b56ce00f988ac",
    "simulation_interfaces/srv/GetEntityBounds": "RIHS01_17be8d36231178a5eed0de0344b55c19975581627a9aec30a4fee9926a35deed",
    "simulation_interfaces/srv/GetSimulatorFeatures": "RIHS01_abb9439c8cf196722a469fb6c68b44b484f198c2a1356ac38849a29c2a20a794",
    "simulation_interfaces/srv/LoadWorld": "RIHS01_87d0ded1bfddb40a74d0bedb963fdd592fbedb14d0057d597850404b73c338af",
    "simulation_interfaces/srv/GetCurrentWorld": "RIHS01_79ed4e910e1b7a1c9f7950ff758bfba3535bf0dec669054e8af115a099724ddd",
    "simulation_interfaces/msg/EntityState": "RIHS01_2e0464a85eb80a939025075d6c20761eca6a4cb9d6baf2c0ba373467c8b598d0",
    "simulation_interfaces/msg/Result": "RIHS01_cf43a306adff3337a0a47143d8f5689933bc70a30478f13b077dc1fe3bc5ad17",
}


def test_simulation_interfaces_hash_as_the_standard():
    import json
    import os
    from pathlib import Path
    share = next(Path(p) / "share" / "simulation_interfaces" for p in os.environ["AMENT_PREFIX_PATH"].split(":")
                 if (Path(p) / "share" / "simulation_interfaces").is_dir())
    for name, want in SIMULATION_INTERFACES_HASHES.items():
        kind, type_name = name.split("/")[1:]
        described = json.loads((share / kind / f"{type_name}.json").read_text())
        got = {h["type_name"]: h["hash_string"] for h in described["type_hashes"]}[name]
        assert got == want, f"{name}: {got}, the standard's is {want}"
