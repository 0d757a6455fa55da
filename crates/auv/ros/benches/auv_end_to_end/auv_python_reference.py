"""The Python reference of the auv_end_to_end benchmark: what users of the
ZeroMQ AUV simulator run today, a pyzmq + rclpy republisher.

SUB to the image and telemetry ports, publish each camera as a
sensor_msgs/CompressedImage and each telemetry message as a
geometry_msgs/PoseStamped (NED/FRD -> ENU/FLU), stamped on arrival, the way
auv_bridge stamps. Written like a user's script: one thread, a zmq.Poller.

Usage: python auv_python_reference.py HOST IMAGE_PORT TELEMETRY_PORT IDS
(IDS: comma-separated). Stops on SIGINT / SIGTERM.
"""

import math
import signal
import struct
import sys

import rclpy
import zmq
from geometry_msgs.msg import PoseStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CompressedImage

CAMERAS = ("front", "bottom")


def qmul(a, b):
    """Hamilton product of quaternions (w, x, y, z)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


# NED -> ENU: half a turn about (1, 1, 0)/sqrt(2); FRD -> FLU: half a turn about x.
NED_TO_ENU = (0.0, math.sqrt(0.5), math.sqrt(0.5), 0.0)
FRD_TO_FLU = (0.0, 1.0, 0.0, 0.0)


def quaternion_enu_flu(yaw, pitch, roll):
    """Z-Y-X angles of an FRD body in NED -> quaternion (w, x, y, z) of FLU in ENU."""
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    ned_frd = (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )
    return qmul(qmul(NED_TO_ENU, ned_frd), FRD_TO_FLU)


def main():
    host, image_port, telemetry_port, ids = sys.argv[1:5]
    ids = [int(i) for i in ids.split(",")]
    rclpy.init()
    node = rclpy.create_node("auv_python_reference")
    qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
    images = {
        i: [node.create_publisher(CompressedImage, f"auv{i}/{c}/image_raw/compressed", qos) for c in CAMERAS]
        for i in ids
    }
    poses = {i: node.create_publisher(PoseStamped, f"auv{i}/pose", qos) for i in ids}

    ctx = zmq.Context()
    image_sub = ctx.socket(zmq.SUB)
    image_sub.connect(f"tcp://{host}:{image_port}")
    telemetry_sub = ctx.socket(zmq.SUB)
    telemetry_sub.connect(f"tcp://{host}:{telemetry_port}")
    for i in ids:
        image_sub.setsockopt(zmq.SUBSCRIBE, bytes([i]))
        telemetry_sub.setsockopt(zmq.SUBSCRIBE, bytes([i]))
    poller = zmq.Poller()
    poller.register(image_sub, zmq.POLLIN)
    poller.register(telemetry_sub, zmq.POLLIN)

    running = [True]

    def stop(*_):
        running[0] = False

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    while running[0]:
        for sock, _ in poller.poll(100):
            parts = sock.recv_multipart()
            stamp = node.get_clock().now().to_msg()
            auv = parts[0][0]
            if sock is image_sub:
                if len(parts) != 3 or auv not in images:
                    continue
                for camera, jpeg, publisher in zip(CAMERAS, parts[1:], images[auv]):
                    msg = CompressedImage()
                    msg.header.stamp = stamp
                    msg.header.frame_id = f"auv/auv{auv}/{camera}_camera_optical"
                    msg.format = "jpeg"
                    msg.data = jpeg
                    publisher.publish(msg)
            else:
                if len(parts) != 2 or len(parts[1]) != 24 or auv not in poses:
                    continue
                x, y, z, yaw, pitch, roll = struct.unpack("<6f", parts[1])
                msg = PoseStamped()
                msg.header.stamp = stamp
                msg.header.frame_id = "auv/map"
                msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = float(y), float(x), float(-z)
                q = quaternion_enu_flu(yaw, pitch, roll)
                msg.pose.orientation.w, msg.pose.orientation.x, msg.pose.orientation.y, msg.pose.orientation.z = q
                poses[auv].publish(msg)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
