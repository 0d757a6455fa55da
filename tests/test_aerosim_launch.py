"""launch/aerosim.launch.py's logic, evaluated against the recording test double
of the launch API (tests/launch_double), and config/aerosim.rviz drawn from what
the launch starts, with a real broker."""

import os
from pathlib import Path

import pytest
import yaml

from aerosim_peer import free_port
from launch_double import evaluate, logged
from rviz_stand_in import start_launch, watch

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "launch" / "aerosim.launch.py"
# The bridge\'s parameters file, as the launch double resolves the package share.
PARAMS = "/opt/share/rflysim_bridge/config/aerosim_bridge.yaml"


def by_exe(started):
    return {Path(s["executable"]).name: s for s in started}


def test_defaults_start_the_bridge_only():
    started = by_exe(evaluate(LAUNCH))
    assert set(started) == {"aerosim_bridge"}
    bridge = started["aerosim_bridge"]
    assert bridge["namespace"] == "aerosim"
    assert bridge["parameters"] == [PARAMS, {"sim_host": "127.0.0.1", "sim_port": "9092", "vehicle_ids": "[actor1]",
                                     "use_sim_time": "false"}]


def test_broker_emulator_actors_and_servers_reach_all_three():
    started = by_exe(evaluate(LAUNCH, {"emulator": "true", "broker": "true", "vehicle_ids": "[actor1, intruder1]",
                                       "sim_port": "19092", "namespace": "sky"}))
    broker = Path(os.environ.get("AEROSIM_BROKER_BIN", "tansu")).name
    assert set(started) == {broker, "aerosim_sim", "aerosim_bridge"}
    assert started[broker]["arguments"][:3] == ["broker", "--listener-url", "tcp://127.0.0.1:19092"]
    assert started["aerosim_sim"]["arguments"][:4] == ["--bootstrap-servers", "127.0.0.1:19092",
                                                      "--vehicle-ids", "actor1,intruder1"]
    assert started["aerosim_bridge"]["namespace"] == "sky"
    assert started["aerosim_bridge"]["parameters"][1]["vehicle_ids"] == "[actor1, intruder1]"


def test_former_arguments_still_work_with_a_warning_bootstrap_servers_split_into_host_and_port():
    started = by_exe(evaluate(LAUNCH, {"emulator": "true", "actors": "[a1]", "bootstrap_servers": "10.0.0.9:19093"}))
    params = started["aerosim_bridge"]["parameters"][1]
    assert (params["sim_host"], params["sim_port"], params["vehicle_ids"]) == ("10.0.0.9", "19093", "[a1]")
    assert started["aerosim_sim"]["arguments"][:4] == ["--bootstrap-servers", "10.0.0.9:19093", "--vehicle-ids", "a1"]
    assert sorted(logged) == [
        ("warning", "launch argument `actors` is now `vehicle_ids`; the old name still works"),
        ("warning", "launch argument `bootstrap_servers` is now `sim_host` and `sim_port`; the old name still works"),
    ]


def test_rviz_config_shows_the_vehicle_its_camera_and_its_flight_data():
    rviz = yaml.safe_load((ROOT / "config" / "aerosim.rviz").read_text())
    topics = {d["Class"].split("/")[-1]: d["Topic"]["Value"]
              for d in rviz["Visualization Manager"]["Displays"] if "Topic" in d}
    assert topics == {"Odometry": "/aerosim/actor1/odom", "Image": "/aerosim/camera/image_raw",
                      "Marker": "/aerosim/actor1/flight_display/marker"}
    assert rviz["Visualization Manager"]["Global Options"]["Fixed Frame"] == "aerosim/map"


@pytest.mark.broker
def test_rviz_stand_in_can_draw_every_display_of_the_one_command_launch(processes, collector):
    """`ros2 launch rflysim_bridge aerosim.launch.py emulator:=true broker:=true` (on a free port) with
    config/aerosim.rviz, rviz2 played by tests/rviz_stand_in.py: the broker, the emulator and the
    bridge come up together and every display gets data in a frame rviz2 can place."""
    start_launch(processes, "aerosim.launch.py",
                 {"emulator": "true", "broker": "true", "sim_port": str(free_port())})
    assert watch(collector, ROOT / "config" / "aerosim.rviz", timeout=40.0) == []
