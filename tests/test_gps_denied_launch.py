"""launch/gps_denied.launch.py's logic, against the recording launch double
(`tests/launch_double`), and its rviz2 configuration's topics."""

from pathlib import Path

import yaml

from launch_double import evaluate
from rviz_stand_in import start_launch, watch

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "launch" / "gps_denied.launch.py"
# The bridge\'s parameters file, as the launch double resolves the package share.
PARAMS = "/opt/share/rflysim_bridge/config/gps_denied_bridge.yaml"


def by_exe(started):
    return {s["executable"]: s for s in started}


def test_defaults_start_the_bridge_alone_under_gps_denied():
    started = by_exe(evaluate(LAUNCH))
    assert set(started) == {"gps_denied_bridge"}
    bridge = started["gps_denied_bridge"]
    assert bridge["package"] == "rflysim_bridge" and bridge["namespace"] == "gps_denied"
    assert bridge["parameters"] == [PARAMS, {"source": "udp", "sim_host": "127.0.0.1", "use_sim_time": "false"}]


def test_emulator_rviz_source_host_namespace():
    started = by_exe(evaluate(LAUNCH, {"emulator": "true", "rviz": "true", "source": "ros", "sim_host": "10.0.0.7",
                                       "namespace": "uav2", "use_sim_time": "true"}))
    assert set(started) == {"gps_denied_sim", "gps_denied_bridge", "rviz2"}
    assert started["gps_denied_sim"]["arguments"] == ["--stats", "5", "--rover-telemetry"]
    assert started["gps_denied_bridge"]["namespace"] == "uav2"
    assert started["gps_denied_bridge"]["parameters"] == [
        PARAMS, {"source": "ros", "sim_host": "10.0.0.7", "use_sim_time": "true"}]
    assert started["rviz2"]["arguments"] == ["-d", "/opt/share/rflysim_bridge/config/gps_denied.rviz"]


def test_rviz_config_shows_the_bridge_topics():
    cfg = yaml.safe_load((ROOT / "config" / "gps_denied.rviz").read_text())
    manager = cfg["Visualization Manager"]
    topics = {d["Topic"]["Value"] for d in manager["Displays"] if "Topic" in d}
    assert topics == {"/gps_denied/drone/camera/image_raw", "/gps_denied/drone/altitude",
                      "/gps_denied/drone/landing_pad/point"}
    assert manager["Global Options"]["Fixed Frame"] == "gps_denied/drone/base_link"


def test_rviz_stand_in_can_draw_every_display_of_the_emulator_launch(processes, collector):
    """`ros2 launch rflysim_bridge gps_denied.launch.py emulator:=true` with config/gps_denied.rviz, rviz2
    played by tests/rviz_stand_in.py: every display gets data in a frame rviz2 can place."""
    start_launch(processes, "gps_denied.launch.py", {"emulator": "true"})
    assert watch(collector, ROOT / "config" / "gps_denied.rviz") == []
