"""An rclpy subscriber for another host (run inside a network namespace by
tests/test_multihost.py): subscribes to an Image and a PointCloud2 topic for
a while and prints, as one JSON line, how many messages came and their sizes.

    python3 remote_subscriber.py IMAGE_TOPIC CLOUD_TOPIC SECONDS
"""

import json
import sys
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, PointCloud2


def main():
    image_topic, cloud_topic, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    rclpy.init()
    node = rclpy.create_node("remote_subscriber")
    got = {"images": 0, "image_bytes": 0, "clouds": 0, "cloud_points": 0}

    def on_image(m):
        got["images"] += 1
        got["image_bytes"] = len(m.data)

    def on_cloud(m):
        got["clouds"] += 1
        got["cloud_points"] = m.width * m.height

    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(Image, image_topic, on_image, qos)
    node.create_subscription(PointCloud2, cloud_topic, on_cloud, qos)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    print(json.dumps(got), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
