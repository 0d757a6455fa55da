"""Runs the built-in RflySim emulator and the bridge on config/Config.json, and
prints what a ROS 2 subscriber receives on every topic, until Ctrl-C (or for
the number of seconds given)."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import rclpy
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CompressedImage, Image, Imu, PointCloud2
from std_msgs.msg import Float32

TYPES = {
    "sensor_msgs/msg/Image": Image,
    "sensor_msgs/msg/CompressedImage": CompressedImage,
    "sensor_msgs/msg/PointCloud2": PointCloud2,
    "sensor_msgs/msg/Imu": Imu,
    "nav_msgs/msg/Odometry": Odometry,
    "std_msgs/msg/Float32": Float32,
}


def main():
    bin_dir = Path(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else float("inf")
    config = Path(__file__).resolve().parent.parent / "config" / "Config.json"
    children = [
        subprocess.Popen([bin_dir / "rflysim_sim", "--config", config, "--stats", "0"]),
        subprocess.Popen([bin_dir / "bridge", "--ros-args", "-p", f"rflysim_config:={config}"]),
    ]
    rclpy.init()
    node = rclpy.create_node("rflysim_demo_echo")
    counts, subscribed = {}, set()
    qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    start = last = time.monotonic()
    try:
        while not stop and time.monotonic() - start < seconds:
            for topic, types in node.get_topic_names_and_types():
                if topic in subscribed or not topic.startswith(("/rflysim", "/uav")) or types[0] not in TYPES:
                    continue
                subscribed.add(topic)
                counts[topic] = 0
                node.create_subscription(TYPES[types[0]], topic, lambda m, t=topic: counts.__setitem__(t, counts[t] + 1), qos)
            rclpy.spin_once(node, timeout_sec=0.05)
            if time.monotonic() - last >= 2.0:
                dt, last = time.monotonic() - last, time.monotonic()
                print(f"\n--- {len(counts)} topics, messages/s over the last {dt:.1f} s")
                for topic in sorted(counts):
                    print(f"{counts[topic] / dt:8.1f}  {topic}")
                    counts[topic] = 0
    finally:
        for c in children:
            c.send_signal(signal.SIGINT)
        for c in children:
            try:
                c.wait(timeout=5)
            except subprocess.TimeoutExpired:
                c.kill()
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
