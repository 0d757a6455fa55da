"""Stand-ins for what generic ROS 2 camera tools do with a bridge's camera
topics (image_transport, message_filters and depth_image_proc are not
installable from PyPI: test doubles, named as such, reimplemented from their
public source):

- `camera_info_topic`: image_transport's `getCameraInfoTopic`
  (ros-perception/image_common, image_transport/src/camera_common.cpp): the
  camera info is beside the image, `<ns>/<name>` → `<ns>/camera_info`.
- `CameraSubscriber`: image_transport's camera subscriber: the image through
  a transport (`raw`: the image topic; `compressed`: `<image>/compressed`)
  and the camera info from `camera_info_topic`, delivered in pairs matched
  by header stamp, as message_filters' exact-time synchronizer
  (`TimeSynchronizer`) pairs them.
- `point_cloud_xyz`: depth_image_proc's point_cloud_xyz
  (ros-perception/image_pipeline, depth_image_proc/src/point_cloud_xyz.cpp
  and its `convert`): a depth image and its camera info → points in the
  optical frame.
"""

import math
import struct
import threading
import time


def camera_info_topic(image_topic):
    """image_transport::getCameraInfoTopic: split on "/", empty parts dropped
    but the last; all parts but the last, each after a "/", then "/camera_info"."""
    parts = image_topic.split("/")
    head = [p for p in parts[:-1] if p]
    return "".join("/" + p for p in head) + "/camera_info"


def stamp_key(header):
    return (header.stamp.sec, header.stamp.nanosec)


class CameraSubscriber:
    """image_transport's camera subscriber on `image_topic`, subscribing through
    rclpy `node` (spun by its caller). Pairs arrive in `pairs()` as (image,
    camera info), each image with the info of exactly its stamp; like
    message_filters' ExactTime policy, at most `queue_size` stamps wait for
    their partner, the oldest dropped first."""

    def __init__(self, node, image_topic, transport="raw", qos=None, queue_size=10):
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import CameraInfo, CompressedImage, Image

        qos = qos or QoSProfile(depth=queue_size, reliability=ReliabilityPolicy.RELIABLE)
        self.image_topic = image_topic
        self.info_topic = camera_info_topic(image_topic)
        self.queue_size = queue_size
        self.lock = threading.Lock()
        self.waiting = {}  # stamp -> [image or None, info or None]
        self.matched = []
        if transport == "raw":
            node.create_subscription(Image, image_topic, lambda m: self._add(m, 0), qos)
        elif transport == "compressed":
            node.create_subscription(CompressedImage, image_topic + "/compressed", lambda m: self._add(m, 0), qos)
        else:
            raise ValueError(f"transport {transport}: raw or compressed")
        node.create_subscription(CameraInfo, self.info_topic, lambda m: self._add(m, 1), qos)

    def _add(self, msg, slot):
        key = stamp_key(msg.header)
        with self.lock:
            entry = self.waiting.setdefault(key, [None, None])
            entry[slot] = msg
            if entry[0] is not None and entry[1] is not None:
                self.matched.append(tuple(entry))
                del self.waiting[key]
            while len(self.waiting) > self.queue_size:
                del self.waiting[min(self.waiting)]

    def pairs(self):
        with self.lock:
            return list(self.matched)

    def wait_for(self, count=1, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.pairs()) >= count:
                return self.pairs()
            time.sleep(0.02)
        raise AssertionError(f"{len(self.pairs())} of {count} image + camera info pairs on {self.image_topic} "
                             f"and {self.info_topic} within {timeout} s")


def point_cloud_xyz(image, info):
    """depth_image_proc's point_cloud_xyz: 16UC1 (millimetres, 0 = no return) or
    32FC1 (metres) → [(x, y, z)] row by row, NaN for no return, with z the
    depth, x = (u − cx)·z/fx and y = (v − cy)·z/fy from the projection matrix."""
    if image.encoding == "16UC1":
        fmt, scale, valid = "<H", 0.001, lambda d: d != 0
    elif image.encoding == "32FC1":
        fmt, scale, valid = "<f", 1.0, math.isfinite
    else:
        raise ValueError(f"depth image has unsupported encoding [{image.encoding}]")
    fx, cx, fy, cy = info.p[0], info.p[2], info.p[5], info.p[6]
    size = struct.calcsize(fmt)
    data = bytes(image.data)
    points = []
    for v in range(image.height):
        for u in range(image.width):
            d = struct.unpack_from(fmt, data, v * image.step + u * size)[0]
            if not valid(d):
                points.append((math.nan, math.nan, math.nan))
                continue
            z = d * scale
            points.append(((u - cx) * z / fx, (v - cy) * z / fy, z))
    return points
