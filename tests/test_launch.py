"""launch/all.launch.py's logic, evaluated against a recording test double of
the launch API (`tests/launch_double`: the `ros2 launch` runtime is not
installable from PyPI), and the shipped configuration files."""

import json
from pathlib import Path

import yaml

from launch_double import evaluate, logged
from rviz_stand_in import start_launch, watch
from rflysim_scenario import SUFFIX

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "launch" / "all.launch.py"


def by_exe(started):
    return {s["executable"]: s for s in started}


def test_defaults_start_bridge_and_the_scene_node_only():
    started = by_exe(evaluate(LAUNCH))
    assert set(started) == {"bridge", "scene_node"}
    # Without the scene, the gimbal node reads the status port instead.
    assert set(by_exe(evaluate(LAUNCH, {"scene": "false"}))) == {"bridge", "gimbal_node"}
    assert set(by_exe(evaluate(LAUNCH, {"scene": "false", "gimbal": "false"}))) == {"bridge"}
    bridge = started["bridge"]
    assert bridge["package"] == "rflysim_bridge" and bridge["namespace"] == ""
    params_file, common = bridge["parameters"]
    assert params_file == "/opt/share/rflysim_bridge/config/rflysim_bridge.yaml"
    assert common == {"rflysim_config": "/opt/share/rflysim_bridge/config/Config.json", "use_sim_time": "false",
                      "sim_host": "127.0.0.1", "window_id": "0", "vehicle_ids": "[1]"}


def test_emulator_mavros_namespace_and_sim_time():
    started = by_exe(evaluate(LAUNCH, {"emulator": "true", "mavros": "true", "namespace": "drone1", "use_sim_time": "true",
                                       "vehicle_ids": "[1,2]", "sim_host": "10.0.0.5", "config": "/data/Config.json",
                                       "scene": "false", "gimbal": "false"}))
    assert set(started) == {"rflysim_sim", "bridge", "mavros_launcher"}
    assert started["rflysim_sim"]["arguments"] == ["--config", "/data/Config.json"]
    assert all(s["namespace"] == "drone1" for s in started.values())
    assert started["bridge"]["parameters"][1]["use_sim_time"] == "true"
    assert started["mavros_launcher"]["parameters"] == [{"vehicle_ids": "[1,2]", "sim_host": "10.0.0.5"}]


def test_former_argument_names_still_work_with_a_warning_and_lose_to_the_new_ones():
    started = by_exe(evaluate(LAUNCH, {"mavros": "true", "copter_ids": "[3]", "sim_ip": "10.0.0.6"}))
    assert started["mavros_launcher"]["parameters"] == [{"vehicle_ids": "[3]", "sim_host": "10.0.0.6"}]
    assert started["bridge"]["parameters"][1]["vehicle_ids"] == "[3]"
    assert ("warning", "launch argument `copter_ids` is now `vehicle_ids`; the old name still works") in logged
    started = by_exe(evaluate(LAUNCH, {"mavros": "true", "copter_ids": "[3]", "vehicle_ids": "[4]"}))
    assert started["mavros_launcher"]["parameters"][0]["vehicle_ids"] == "[4]"
    assert logged == [("warning", "launch argument `copter_ids` is now `vehicle_ids`; both are given: "
                                  "`vehicle_ids` wins, `copter_ids` is ignored")]


def test_the_launch_file_stays_small():
    code = [line for line in LAUNCH.read_text().splitlines() if line.strip() and not line.strip().startswith("#")]
    assert len(code) < 60


def test_params_yaml_is_a_ros2_parameters_file():
    params = yaml.safe_load((ROOT / "config" / "rflysim_bridge.yaml").read_text())["/**"]["ros__parameters"]
    assert params["qos_depth"] == 5 and params["tf_source"] in ("lidar", "state")
    assert params["gimbal_bits"] in ("protocol", "sdk")


def test_example_config_has_one_sensor_of_each_kind():
    text = "\n".join(line.split("//")[0].split("#")[0] for line in (ROOT / "config" / "Config.json").read_text().splitlines())
    types = {s["TypeID"] for s in json.loads(text)["VisionSensors"]}
    # A camera of each pixel format, each LiDAR frame kind, the depth cloud, the laser, the gimbal, shared memory.
    assert {1, 2, 3, 4, 5, 7, 9, 20, 21, 40} <= types


def test_rviz_config_shows_clouds_images_odometry_and_tf():
    rviz = yaml.safe_load((ROOT / "config" / "rflysim.rviz").read_text())
    displays = rviz["Visualization Manager"]["Displays"]
    classes = {d["Class"] for d in displays}
    assert {"rviz_default_plugins/PointCloud2", "rviz_default_plugins/Image", "rviz_default_plugins/Camera",
            "rviz_default_plugins/Odometry", "rviz_default_plugins/TF"} <= classes
    topics = [d["Topic"]["Value"] for d in displays if "Topic" in d]
    suffixes = set(SUFFIX.values())
    for t in topics:
        assert t.startswith("/rflysim/") and (t.split("/")[-1] in suffixes or t.endswith("/odom")), t
    # rviz2 subscribes reliably by default: the bridge's publishers match it.
    assert all(d["Topic"]["Reliability Policy"] == "Reliable" for d in displays if "Topic" in d)
    assert rviz["Visualization Manager"]["Global Options"]["Fixed Frame"] == "rflysim/uav1/odom"


def test_rviz_stand_in_can_draw_every_display_of_the_emulator_launch(processes, collector):
    """`ros2 launch rflysim_bridge all.launch.py emulator:=true` with config/rflysim.rviz, rviz2 played by
    tests/rviz_stand_in.py: every display gets data in a frame rviz2 can place."""
    start_launch(processes, "all.launch.py", {"emulator": "true"})
    problems = watch(collector, ROOT / "config" / "rflysim.rviz")
    assert problems == [], "\n".join(problems)
