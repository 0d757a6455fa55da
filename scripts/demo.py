"""Runs the package's executables and prints what a ROS 2 subscriber sees."""

import subprocess
import sys
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import PointCloud2

from rflysim_bridge.msg import CameraStatus


def main():
    bin_dir = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    publisher = subprocess.Popen([f"{bin_dir}/roundtrip_publisher", "--ros-args", "-p", "rate_hz:=5"])
    rclpy.init()
    node = rclpy.create_node("rflysim_demo_echo")
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    node.create_subscription(
        CameraStatus, "/camera/status",
        lambda m: print(f"CameraStatus {m.width}x{m.height} fov={m.fov} fx={m.camera_params.fx}"), qos)
    node.create_subscription(
        PointCloud2, "/cloud", lambda m: print(f"PointCloud2 {m.width} points, {len(m.data)} bytes"), qos)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        publisher.terminate()
        publisher.wait()
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
