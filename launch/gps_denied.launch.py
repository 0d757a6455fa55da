"""The GPS-denied landing drone: the bridge, and optionally the
built-in emulator and rviz2.

    ros2 launch rflysim_bridge gps_denied.launch.py emulator:=true rviz:=true
    ros2 launch rflysim_bridge gps_denied.launch.py sim_host:=192.168.1.20
    ros2 launch rflysim_bridge gps_denied.launch.py source:=ros   # JSON already on /drone/telemetry
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

ARGUMENTS = {
    "params": ("gps_denied_bridge.yaml", "ROS 2 parameters file of the bridge (config/: every parameter at its default)"),
    "emulator": ("false", "also start gps_denied_sim, the built-in emulator"),
    "source": ("udp", "udp: JSON datagrams from the simulator; ros: JSON std_msgs/String topics"),
    "sim_host": ("127.0.0.1", "the simulator's host: commands go there, telemetry is accepted from there"),
    "namespace": ("gps_denied", "namespace of the bridge's topics (docs/names.md)"),
    "use_sim_time": ("false", "stamp with the simulator's time and publish /clock"),
    "rviz": ("false", "also start rviz2 with config/gps_denied.rviz"),
}


def generate_launch_description():
    arg = LaunchConfiguration
    share = FindPackageShare("rflysim_bridge")
    declared = [DeclareLaunchArgument(name, description=description, default_value=(
        PathJoinSubstitution([share, "config", default]) if name == "params" else default))
        for name, (default, description) in ARGUMENTS.items()]
    rviz_config = PathJoinSubstitution([FindPackageShare("rflysim_bridge"), "config", "gps_denied.rviz"])
    return LaunchDescription(declared + [
        Node(package="rflysim_bridge", executable="gps_denied_sim", output="screen",
             # With the rover's own telemetry, so that rover/odom is live too.
             arguments=["--stats", "5", "--rover-telemetry"], condition=IfCondition(arg("emulator"))),
        Node(package="rflysim_bridge", executable="gps_denied_bridge", namespace=arg("namespace"), output="screen",
             parameters=[arg("params"), {"source": arg("source"), "sim_host": arg("sim_host"), "use_sim_time": arg("use_sim_time")}]),
        Node(package="rviz2", executable="rviz2", arguments=["-d", rviz_config], output="screen",
             parameters=[{"use_sim_time": arg("use_sim_time")}], condition=IfCondition(arg("rviz"))),
    ])
