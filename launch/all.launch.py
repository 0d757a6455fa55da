"""Everything for one RflySim run: the bridge for a Config.json, the scene
node (RflySim3D's scene through the Simulation Interfaces, and the gimbals),
optionally MAVROS for every vehicle and the built-in emulator.

    ros2 launch rflysim_bridge all.launch.py emulator:=true rviz:=true
    ros2 launch rflysim_bridge all.launch.py config:=/path/Config.json sim_host:=192.168.1.10 mavros:=true vehicle_ids:=[1,2]

The former argument names `sim_ip` and `copter_ids` still work, with a warning.
"""

import os
import sys

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from renamed_arguments import former_declarations, take_former_names  # noqa: E402

ARGUMENTS = {
    "config": ("Config.json", "RflySim Config.json (default: the example in config/)"),
    "params": ("rflysim_bridge.yaml", "ROS 2 parameters file for the bridge"),
    "namespace": ("", "namespace of every node and topic"),
    "use_sim_time": ("false", "stamp with simulation time and publish /clock"),
    "emulator": ("false", "also start the built-in RflySim emulator"),
    "mavros": ("false", "start MAVROS for every vehicle"),
    "scene": ("true", "start the scene node: Simulation Interfaces, console, collisions, and the gimbals"),
    "gimbal": ("true", "without the scene node: start the gimbal control / status node"),
    "sim_host": ("127.0.0.1", "IPv4 address or host name of RflySim3D and CopterSim"),
    "window_id": ("0", "RflySim3D window (requests go to 20010 + window_id)"),
    "vehicle_ids": ("[1]", "vehicles whose IMU, state and MAVROS are bridged"),
    "rviz": ("false", "also start rviz2 with config/rflysim.rviz"),
}
RENAMED = {"sim_ip": "sim_host", "copter_ids": "vehicle_ids"}


def generate_launch_description():
    share = FindPackageShare("rflysim_bridge")
    arg = LaunchConfiguration
    declared = [take_former_names(RENAMED)]
    for name, (default, description) in ARGUMENTS.items():
        if name in ("config", "params"):
            default = PathJoinSubstitution([share, "config", default])
        declared.append(DeclareLaunchArgument(name, default_value=default, description=description))
    common = {"rflysim_config": arg("config"),
              **{name: arg(name) for name in ("use_sim_time", "sim_host", "window_id", "vehicle_ids")}}

    def node(executable, condition=None, parameters=None, arguments=None):
        return Node(package="rflysim_bridge", executable=executable, namespace=arg("namespace"), output="screen",
                    parameters=parameters or [], arguments=arguments or [], condition=condition)

    return LaunchDescription(declared + former_declarations(RENAMED) + [
        node("rflysim_sim", IfCondition(arg("emulator")), arguments=["--config", arg("config")]),
        node("bridge", parameters=[arg("params"), common]),
        node("scene_node", IfCondition(arg("scene")), parameters=[arg("params"), common]),
        # The gimbals' status comes in on the scene node's port: one of the two.
        node("gimbal_node", IfCondition(PythonExpression(["'", arg("scene"), "'.lower() != 'true' and '",
                                                         arg("gimbal"), "'.lower() == 'true'"])),
             parameters=[arg("params"), common]),
        node("mavros_launcher", IfCondition(arg("mavros")),
             parameters=[{"vehicle_ids": arg("vehicle_ids"), "sim_host": arg("sim_host")}]),
        Node(package="rviz2", executable="rviz2", output="screen", condition=IfCondition(arg("rviz")),
             arguments=["-d", PathJoinSubstitution([share, "config", "rflysim.rviz"])],
             parameters=[{"use_sim_time": arg("use_sim_time")}]),
    ])
