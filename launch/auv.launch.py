"""The ZeroMQ AUV simulator in ROS 2: the bridge for every AUV of
`auv_ids`, and optionally the built-in emulator in place of the simulator.

    ros2 launch rflysim_bridge auv.launch.py emulator:=true
    ros2 launch rflysim_bridge auv.launch.py sim_host:=192.168.1.20 auv_ids:=[0,1,2]
    rviz2 -d $(ros2 pkg prefix rflysim_bridge)/share/rflysim_bridge/config/auv.rviz
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

ARGUMENTS = {
    "emulator": ("false", "also start auv_sim, the built-in emulator of the simulator"),
    "auv_ids": ("[0]", "the AUVs to bridge (and to emulate)"),
    "sim_host": ("127.0.0.1", "host of the simulator (the emulator binds there)"),
    "namespace": ("", "namespace of the bridge and its topics"),
}


def generate_launch_description():
    arg = LaunchConfiguration
    declared = [DeclareLaunchArgument(name, default_value=default, description=description)
                for name, (default, description) in ARGUMENTS.items()]
    return LaunchDescription(declared + [
        Node(package="rflysim_bridge", executable="auv_sim", namespace=arg("namespace"), output="screen",
             arguments=["--auv-ids", arg("auv_ids"), "--host", arg("sim_host")], condition=IfCondition(arg("emulator"))),
        Node(package="rflysim_bridge", executable="auv_bridge", namespace=arg("namespace"), output="screen",
             parameters=[{"auv_ids": arg("auv_ids"), "sim_host": arg("sim_host")}]),
    ])
