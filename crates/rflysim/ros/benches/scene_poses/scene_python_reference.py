"""The Python reference of the scene benchmark: what a user writes today with
rclpy and the SDK's way of placing a swarm (UE4CtrlAPI.sendUE4PosScale100):
each ScenePoses message → ENU to NED, quaternion to Euler, then
struct.pack("i200H600f300H100f") per 100 vehicles and sendto.
Usage: scene_python_reference.py <window port> [--ros-args ...]"""

import math
import socket
import struct
import sys

import rclpy
from rflysim_bridge.msg import ScenePoses


H = math.sqrt(0.5)
NED_FROM_ENU = (0.0, -H, -H, 0.0)  # the inverse of pi about (x + y)/sqrt(2)
FLU_FROM_FRD = (0.0, -1.0, 0.0, 0.0)  # the inverse of pi about x


def qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def euler_ned(q):
    """FLU-in-ENU quaternion → roll, pitch, yaw (Z-Y-X) of the FRD body in NED."""
    w, x, y, z = qmul(qmul(NED_FROM_ENU, (q.w, q.x, q.y, q.z)), FLU_FROM_FRD)
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return roll, pitch, yaw


def main():
    port = int(sys.argv[1])
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("scene_python_reference")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def on_poses(m):
        n = len(m.ids)
        for start in range(0, n, 100):
            ids, types, pos, ang, scale, rpm = [], [], [], [], [], []
            for i in range(start, min(n, start + 100)):
                p = m.poses[i]
                ids.append(m.ids[i])
                types.append(m.vehicle_types[i] if len(m.vehicle_types) > 1 else (m.vehicle_types[0] if m.vehicle_types else 3))
                pos += [p.position.y, p.position.x, -p.position.z]
                ang += list(euler_ned(p.orientation))
                s = m.scales[i] if len(m.scales) > 1 else (m.scales[0] if m.scales else 1.0)
                scale += [int(round(s * 100))] * 3
                rpm.append(0.0)
            pad = 100 - len(ids)
            buf = struct.pack("i200H600f300H100f", 1234567890, *ids, *[0] * pad, *types, *[0] * pad,
                              *pos, *[0.0] * (3 * pad), *ang, *[0.0] * (3 * pad), *scale, *[0] * (3 * pad),
                              *rpm, *[0.0] * pad)
            sock.sendto(buf, ("127.0.0.1", port))

    node.create_subscription(ScenePoses, "rflysim/scene/poses", on_poses, 10)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
