"""AeroSim over Kafka: the bridge, and optionally a Kafka-protocol broker,
the built-in emulator and rviz2.

    ros2 launch rflysim_bridge aerosim.launch.py emulator:=true broker:=true rviz:=true
    ros2 launch rflysim_bridge aerosim.launch.py sim_host:=192.168.1.20 sim_port:=9092
    ros2 launch rflysim_bridge aerosim.launch.py vehicle_ids:="[actor1, intruder1]"

The former argument names still work, with a warning: `actors`, and
`bootstrap_servers` (`host:port`, split into `sim_host` and `sim_port`).
"""

import os
import sys

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from renamed_arguments import former_declarations, take_former_names  # noqa: E402

ARGUMENTS = {
    "params": ("aerosim_bridge.yaml", "ROS 2 parameters file of the bridge (config/: every parameter at its default)"),
    "emulator": ("false", "also start aerosim_sim, the built-in emulator"),
    "broker": ("false", "also start a Kafka-protocol broker (tansu: AEROSIM_BROKER_BIN, or on the PATH) "
                        "on sim_host:sim_port"),
    "sim_host": ("127.0.0.1", "host of the Kafka broker AeroSim uses"),
    "sim_port": ("9092", "port of the Kafka broker AeroSim uses"),
    "vehicle_ids": ("[actor1]", "AeroSim actors to bridge"),
    "namespace": ("aerosim", "namespace of the bridge's topics (docs/names.md)"),
    "use_sim_time": ("false", "stamp with AeroSim's time and publish /clock"),
    "rviz": ("false", "also start rviz2 with config/aerosim.rviz"),
}
RENAMED = {"actors": "vehicle_ids", "bootstrap_servers": ("sim_host", "sim_port")}


def broker_address(context):
    """`host:port` of the broker (the first host where several are given)."""
    host = LaunchConfiguration("sim_host").perform(context).split(",")[0].strip()
    return f"{host}:{LaunchConfiguration('sim_port').perform(context)}"


def broker(context):
    url = f"tcp://{broker_address(context)}"
    binary = os.environ.get("AEROSIM_BROKER_BIN", "tansu")
    return [ExecuteProcess(cmd=[binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                                "--storage-engine", "memory://tansu/"],
                           output="log", condition=IfCondition(LaunchConfiguration("broker")))]


def emulator(context):
    actors = LaunchConfiguration("vehicle_ids").perform(context).strip("[] ").replace(" ", "")
    return [Node(package="rflysim_bridge", executable="aerosim_sim", output="screen",
                 arguments=["--bootstrap-servers", broker_address(context),
                            "--vehicle-ids", actors, "--stats", "5"],
                 condition=IfCondition(LaunchConfiguration("emulator")))]


def generate_launch_description():
    arg = LaunchConfiguration
    share = FindPackageShare("rflysim_bridge")
    declared = [DeclareLaunchArgument(name, description=description, default_value=(
        PathJoinSubstitution([share, "config", default]) if name == "params" else default))
        for name, (default, description) in ARGUMENTS.items()]
    rviz_config = PathJoinSubstitution([FindPackageShare("rflysim_bridge"), "config", "aerosim.rviz"])
    return LaunchDescription([take_former_names(RENAMED)] + declared + former_declarations(RENAMED) + [
        OpaqueFunction(function=broker),
        OpaqueFunction(function=emulator),
        Node(package="rflysim_bridge", executable="aerosim_bridge", namespace=arg("namespace"), output="screen",
             parameters=[arg("params"), {"sim_host": arg("sim_host"), "sim_port": arg("sim_port"), "vehicle_ids": arg("vehicle_ids"),
                          "use_sim_time": arg("use_sim_time")}]),
        Node(package="rviz2", executable="rviz2", arguments=["-d", rviz_config], output="screen",
             parameters=[{"use_sim_time": arg("use_sim_time")}], condition=IfCondition(arg("rviz"))),
    ])
