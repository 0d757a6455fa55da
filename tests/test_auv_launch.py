"""launch/auv.launch.py's logic, evaluated against the recording test double
of the launch API (tests/launch_double), and config/auv.rviz."""

from pathlib import Path

import yaml

from launch_double import evaluate, logged
from rviz_stand_in import start_launch, watch

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "launch" / "auv.launch.py"
# The bridge's parameters file, as the launch double resolves the package share.
PARAMS = "/opt/share/rflysim_bridge/config/auv_bridge.yaml"


def by_exe(started):
    return {s["executable"]: s for s in started}


def test_defaults_start_the_bridge_only():
    started = by_exe(evaluate(LAUNCH))
    assert set(started) == {"auv_bridge"}
    assert started["auv_bridge"]["parameters"] == [PARAMS, {"vehicle_ids": "[0]", "sim_host": "127.0.0.1"}]
    assert started["auv_bridge"]["namespace"] == "auv"


def test_emulator_ids_host_and_namespace_reach_both():
    started = by_exe(evaluate(LAUNCH, {"emulator": "true", "vehicle_ids": "[0,1,2]", "sim_host": "127.0.0.2",
                                       "namespace": "fleet"}))
    assert set(started) == {"auv_sim", "auv_bridge"}
    # auv_sim reads "[0,1,2]" as the bridge's parameter does.
    assert started["auv_sim"]["arguments"] == ["--vehicle-ids", "[0,1,2]", "--host", "127.0.0.2"]
    assert started["auv_bridge"]["parameters"] == [PARAMS, {"vehicle_ids": "[0,1,2]", "sim_host": "127.0.0.2"}]
    assert all(s["namespace"] == "fleet" and s["package"] == "rflysim_bridge" for s in started.values())


def test_the_former_auv_ids_argument_still_works_with_a_warning():
    started = by_exe(evaluate(LAUNCH, {"emulator": "true", "auv_ids": "[5]"}))
    assert started["auv_sim"]["arguments"][:2] == ["--vehicle-ids", "[5]"]
    assert started["auv_bridge"]["parameters"][1]["vehicle_ids"] == "[5]"
    assert logged == [("warning", "launch argument `auv_ids` is now `vehicle_ids`; the old name still works")]


def test_rviz_config_shows_both_cameras_odometry_pose_and_tf():
    rviz = yaml.safe_load((ROOT / "config" / "auv.rviz").read_text())
    displays = rviz["Visualization Manager"]["Displays"]
    topics = {d["Class"].split("/")[-1]: [] for d in displays}
    for d in displays:
        if "Topic" in d:
            topics[d["Class"].split("/")[-1]].append(d["Topic"]["Value"])
            assert d["Topic"]["Reliability Policy"] == "Reliable"
    assert topics["Image"] == ["/auv/auv0/front/image_raw", "/auv/auv0/bottom/image_raw"]
    assert topics["Odometry"] == ["/auv/auv0/odom"] and topics["Pose"] == ["/auv/auv0/pose"]
    assert "TF" in topics
    assert rviz["Visualization Manager"]["Global Options"]["Fixed Frame"] == "auv/map"


def test_rviz_stand_in_can_draw_every_display_of_the_emulator_launch(processes, collector):
    """`ros2 launch rflysim_bridge auv.launch.py emulator:=true` with config/auv.rviz, rviz2 played by
    tests/rviz_stand_in.py: every display gets data in a frame rviz2 can place."""
    start_launch(processes, "auv.launch.py", {"emulator": "true"})
    assert watch(collector, ROOT / "config" / "auv.rviz") == []
