"""AeroSim over Kafka: the bridge, and optionally a Kafka-protocol broker,
the built-in emulator and rviz2.

    ros2 launch rflysim_bridge aerosim.launch.py emulator:=true broker:=true rviz:=true
    ros2 launch rflysim_bridge aerosim.launch.py bootstrap_servers:=192.168.1.20:9092
    ros2 launch rflysim_bridge aerosim.launch.py actors:="[actor1, intruder1]"
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

ARGUMENTS = {
    "params": ("aerosim_bridge.yaml", "ROS 2 parameters file of the bridge (config/: every parameter at its default)"),
    "emulator": ("false", "also start aerosim_sim, the built-in emulator"),
    "broker": ("false", "also start a Kafka-protocol broker (tansu: AEROSIM_BROKER_BIN, or on the PATH) "
                        "on the bootstrap_servers port"),
    "bootstrap_servers": ("127.0.0.1:9092", "the Kafka broker AeroSim uses"),
    "actors": ("[actor1]", "AeroSim actors to bridge"),
    "namespace": ("aerosim", "namespace of the bridge's topics"),
    "use_sim_time": ("false", "stamp with AeroSim's time and publish /clock"),
    "rviz": ("false", "also start rviz2 with config/aerosim.rviz"),
}


def broker(context):
    bootstrap = LaunchConfiguration("bootstrap_servers").perform(context).split(",")[0].strip()
    url = f"tcp://{bootstrap}"
    binary = os.environ.get("AEROSIM_BROKER_BIN", "tansu")
    return [ExecuteProcess(cmd=[binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                                "--storage-engine", "memory://tansu/"],
                           output="log", condition=IfCondition(LaunchConfiguration("broker")))]


def emulator(context):
    actors = LaunchConfiguration("actors").perform(context).strip("[] ").replace(" ", "")
    return [Node(package="rflysim_bridge", executable="aerosim_sim", output="screen",
                 arguments=["--bootstrap-servers", LaunchConfiguration("bootstrap_servers").perform(context),
                            "--actors", actors, "--stats", "5"],
                 condition=IfCondition(LaunchConfiguration("emulator")))]


def generate_launch_description():
    arg = LaunchConfiguration
    share = FindPackageShare("rflysim_bridge")
    declared = [DeclareLaunchArgument(name, description=description, default_value=(
        PathJoinSubstitution([share, "config", default]) if name == "params" else default))
        for name, (default, description) in ARGUMENTS.items()]
    rviz_config = PathJoinSubstitution([FindPackageShare("rflysim_bridge"), "config", "aerosim.rviz"])
    return LaunchDescription(declared + [
        OpaqueFunction(function=broker),
        OpaqueFunction(function=emulator),
        Node(package="rflysim_bridge", executable="aerosim_bridge", namespace=arg("namespace"), output="screen",
             parameters=[arg("params"), {"bootstrap_servers": arg("bootstrap_servers"), "actors": arg("actors"),
                          "use_sim_time": arg("use_sim_time")}]),
        Node(package="rviz2", executable="rviz2", arguments=["-d", rviz_config], output="screen",
             parameters=[{"use_sim_time": arg("use_sim_time")}], condition=IfCondition(arg("rviz"))),
    ])
