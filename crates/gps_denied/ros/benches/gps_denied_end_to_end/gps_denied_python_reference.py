"""The Python reference of the gps_denied_end_to_end benchmark: what users of
the GPS-denied landing drone simulator write today, a UDP socket,
`json.loads`, `base64.b64decode` and an rclpy republisher of typed messages.

It publishes what gps_denied_bridge publishes for each telemetry frame
(use_sim_time: every stamp is the frame's `timestamp`, and /clock carries
it): imu, altitude, velocity, landing_pad, landing_pad/point (pad seen),
landed, and for frames with an image camera/image_raw/compressed and
camera/camera_info. Written like a user's script: one thread, a blocking
socket, the same QoS as the bridge (reliable, keep last 5) and the same
receive buffer (4 MiB).

Usage: python gps_denied_python_reference.py HOST PORT [--ros-args ...]
Stops on SIGINT / SIGTERM.
"""

import base64
import json
import math
import signal
import socket
import sys

import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, TwistStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rflysim_bridge.msg import LandingPad
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, CompressedImage, Imu, Range
from std_msgs.msg import Bool

RCVBUF_BYTES = 4 << 20


def quaternion_zyx(roll, pitch, yaw):
    """(x, y, z, w) of yaw about z, then pitch about y, then roll about x."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    )


def stamp_of(seconds):
    t = Time()
    t.sec = int(seconds)
    t.nanosec = int(round((seconds - t.sec) * 1e9)) % 1_000_000_000
    return t


def diagonal3(v):
    return [v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v]


class Republisher:
    def __init__(self, node):
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
        self.imu = node.create_publisher(Imu, "drone/imu", qos)
        self.altitude = node.create_publisher(Range, "drone/altitude", qos)
        self.velocity = node.create_publisher(TwistStamped, "drone/velocity", qos)
        self.pad = node.create_publisher(LandingPad, "drone/landing_pad", qos)
        self.pad_point = node.create_publisher(PointStamped, "drone/landing_pad/point", qos)
        self.landed = node.create_publisher(Bool, "drone/landed", qos)
        self.compressed = node.create_publisher(CompressedImage, "drone/camera/image_raw/compressed", qos)
        self.info = node.create_publisher(CameraInfo, "drone/camera/camera_info", qos)
        self.clock = node.create_publisher(Clock, "/clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))

    def frame(self, t):
        stamp = stamp_of(float(t.get("timestamp", 0.0)))
        clock = Clock()
        clock.clock = stamp
        self.clock.publish(clock)

        imu = t["imu"]
        o, w, a = imu["orientation"], imu["angular_velocity"], imu["linear_acceleration"]
        m = Imu()
        m.header.stamp = stamp
        m.header.frame_id = "gps_denied/drone/base_link"
        q = quaternion_zyx(o["roll"], o["pitch"], o["yaw"])
        m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w = q
        m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z = w["x"], w["y"], w["z"]
        m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = a["x"], a["y"], a["z"]
        m.orientation_covariance = diagonal3(1e-6)
        m.angular_velocity_covariance = diagonal3(1e-6)
        m.linear_acceleration_covariance = diagonal3(1e-4)
        self.imu.publish(m)

        r = Range()
        r.header.stamp = stamp
        r.header.frame_id = "gps_denied/drone/altimeter"
        r.radiation_type = Range.INFRARED
        r.field_of_view, r.min_range, r.max_range = 0.05, 0.0, 100.0
        r.range = float(t["altimeter"]["altitude"])
        self.altitude.publish(r)

        v = t["velocity"]
        tw = TwistStamped()
        tw.header.stamp = stamp
        tw.header.frame_id = "gps_denied/drone/base_link"
        tw.twist.linear.x, tw.twist.linear.y, tw.twist.linear.z = v["x"], v["y"], v["z"]
        tw.twist.angular = m.angular_velocity
        self.velocity.publish(tw)

        p = t.get("landing_pad")
        pad = LandingPad()
        pad.header.stamp = stamp
        pad.header.frame_id = "gps_denied/drone/base_link"
        if p is not None:
            pad.detected = True
            pad.relative_x, pad.relative_y = float(p["relative_x"]), float(p["relative_y"])
            pad.distance, pad.confidence = float(p["distance"]), float(p["confidence"])
            point = PointStamped()
            point.header = pad.header
            point.point.x, point.point.y, point.point.z = p["relative_x"], p["relative_y"], -p["distance"]
        self.pad.publish(pad)
        if p is not None:
            self.pad_point.publish(point)

        landed = Bool()
        landed.data = bool(t["landed"])
        self.landed.publish(landed)

        camera = t.get("camera") or {}
        image_b64 = camera.get("image")
        if image_b64:
            c = CompressedImage()
            c.header.stamp = stamp
            c.header.frame_id = "gps_denied/drone/camera_optical"
            c.format = "bgr8; jpeg compressed bgr8"
            c.data = base64.b64decode(image_b64)
            self.compressed.publish(c)
            width, height = int(camera["width"]), int(camera["height"])
            f = width / 2 / math.tan(math.radians(float(camera["fov"])) / 2)
            info = CameraInfo()
            info.header = c.header
            info.width, info.height = width, height
            info.distortion_model = "plumb_bob"
            info.d = [0.0] * 5
            info.k = [f, 0.0, width / 2, 0.0, f, height / 2, 0.0, 0.0, 1.0]
            info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
            info.p = [f, 0.0, width / 2, 0.0, 0.0, f, height / 2, 0.0, 0.0, 0.0, 1.0, 0.0]
            self.info.publish(info)


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node("gps_denied_python_reference")
    republisher = Republisher(node)

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)
    sock.bind((host, port))
    sock.settimeout(0.1)

    running = [True]

    def stop(*_):
        running[0] = False

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    while running[0]:
        try:
            data, _ = sock.recvfrom(65536)
        except socket.timeout:
            continue
        try:
            telemetry = json.loads(data)
            if "imu" in telemetry:
                republisher.frame(telemetry)
        except (ValueError, KeyError, TypeError):
            continue
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
