"""The ZeroMQ AUV simulator in ROS 2: the bridge for every AUV of
`vehicle_ids`, and optionally the built-in emulator in place of the simulator.

    ros2 launch rflysim_bridge auv.launch.py emulator:=true rviz:=true
    ros2 launch rflysim_bridge auv.launch.py sim_host:=192.168.1.20 vehicle_ids:=[0,1,2]

The former argument name `auv_ids` still works, with a warning.
"""

import os
import sys

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from renamed_arguments import former_declarations, take_former_names  # noqa: E402

ARGUMENTS = {
    "params": ("auv_bridge.yaml", "ROS 2 parameters file of the bridge (config/: every parameter at its default)"),
    "emulator": ("false", "also start auv_sim, the built-in emulator of the simulator"),
    "vehicle_ids": ("[0]", "the AUVs to bridge (and to emulate)"),
    "sim_host": ("127.0.0.1", "host of the simulator (the emulator binds there)"),
    "namespace": ("auv", "namespace of the bridge and its topics (docs/names.md)"),
    "rviz": ("false", "also start rviz2 with config/auv.rviz"),
}
RENAMED = {"auv_ids": "vehicle_ids"}


def generate_launch_description():
    arg = LaunchConfiguration
    share = FindPackageShare("rflysim_bridge")
    declared = [DeclareLaunchArgument(name, description=description, default_value=(
        PathJoinSubstitution([share, "config", default]) if name == "params" else default))
        for name, (default, description) in ARGUMENTS.items()]
    return LaunchDescription([take_former_names(RENAMED)] + declared + former_declarations(RENAMED) + [
        Node(package="rflysim_bridge", executable="auv_sim", namespace=arg("namespace"), output="screen",
             arguments=["--vehicle-ids", arg("vehicle_ids"), "--host", arg("sim_host")], condition=IfCondition(arg("emulator"))),
        Node(package="rflysim_bridge", executable="auv_bridge", namespace=arg("namespace"), output="screen",
             parameters=[arg("params"), {"vehicle_ids": arg("vehicle_ids"), "sim_host": arg("sim_host")}]),
        Node(package="rviz2", executable="rviz2", output="screen", condition=IfCondition(arg("rviz")),
             arguments=["-d", PathJoinSubstitution([FindPackageShare("rflysim_bridge"), "config", "auv.rviz"])]),
    ])
