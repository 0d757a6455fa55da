"""The Python reference of the aerosim_end_to_end benchmark: what AeroSim's
users run today, a confluent-kafka + rclpy republisher.

Reads an actor's vehicle state and flight display, the renderer's images and
the clock from their ends (assign, no group, as AeroSim's consumers do; the
same 2-ms fetch wait as the bridge), and publishes nav_msgs/Odometry (NED/FRD
-> ENU/FLU, AeroSim's quaternion taken apart as the bridge does) with its
transform on /tf, rflysim_bridge/FlightDisplay, sensor_msgs/CompressedImage
and /clock, stamped with AeroSim's simulation time: what the bridge publishes
for the benchmark's subscriber. Written like a user's script: one thread, one
consumer, json.loads.

Usage: python aerosim_python_reference.py BOOTSTRAP ACTOR [--ros-args ...]
Stops on SIGINT / SIGTERM.
"""

import json
import math
import signal
import struct
import sys

import rclpy
from confluent_kafka import OFFSET_END, Consumer, TopicPartition
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CompressedImage
from tf2_msgs.msg import TFMessage

from rflysim_bridge.msg import FlightDisplay

DISPLAY_FIELDS = ("airspeed_kts", "true_airspeed_kts", "altitude_ft", "target_altitude_ft",
                  "altimeter_pressure_setting_inhg", "vertical_speed_fpm", "pitch_deg", "roll_deg",
                  "side_slip_fps2", "heading_deg", "hsi_course_select_heading_deg", "hsi_course_deviation_deg")


def qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


NED_TO_ENU = (0.0, math.sqrt(0.5), math.sqrt(0.5), 0.0)
FRD_TO_FLU = (0.0, 1.0, 0.0, 0.0)


def orientation_enu_flu(q):
    """AeroSim's quaternion (scipy "zyx" of roll, pitch, yaw) -> FLU in ENU."""
    w, x, y, z = q["w"], q["x"], q["y"], q["z"]
    roll = math.atan2(-2 * (x * y - w * z), 1 - 2 * (y * y + z * z))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (x * z + w * y))))
    yaw = math.atan2(-2 * (y * z - w * x), 1 - 2 * (x * x + y * y))
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    ned_frd = (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
               cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy)
    return qmul(qmul(NED_TO_ENU, ned_frd), FRD_TO_FLU)


def rotate(q, v):
    w, x, y, z = q
    r = qmul(qmul(q, (0.0, *v)), (w, -x, -y, -z))
    return r[1:]


def set_stamp(header, t):
    sec = math.floor(t)
    header.stamp.sec = int(sec)
    header.stamp.nanosec = int(round((t - sec) * 1e9))


def main():
    bootstrap, actor = sys.argv[1:3]
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("aerosim_python_reference")
    qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
    odom_pub = node.create_publisher(Odometry, f"{actor}/odom", qos)
    display_pub = node.create_publisher(FlightDisplay, f"{actor}/flight_display", qos)
    image_pub = node.create_publisher(CompressedImage, "camera/image_raw/compressed", qos)
    tf_pub = node.create_publisher(TFMessage, "/tf", QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                                                                 durability=DurabilityPolicy.VOLATILE))
    clock_pub = node.create_publisher(Clock, "/clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
    state_topic = f"aerosim.{actor}.vehicle_state"
    display_topic = f"aerosim.{actor}.primary_flight_display_data"
    image_topic = "aerosim.renderer.responses"
    clock_topic = "aerosim.clock"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "aerosim_python_reference",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 2})
    topics = (state_topic, display_topic, image_topic, clock_topic)
    consumer.assign([TopicPartition(t, 0, OFFSET_END) for t in topics])
    # SIGTERM stops it as Ctrl-C does.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        republish(consumer, actor, topics, (odom_pub, display_pub, image_pub, tf_pub, clock_pub))
    except KeyboardInterrupt:
        pass
    consumer.close()
    node.destroy_node()
    rclpy.try_shutdown()


def republish(consumer, actor, topics, publishers):
    state_topic, display_topic, image_topic, clock_topic = topics
    odom_pub, display_pub, image_pub, tf_pub, clock_pub = publishers
    while True:
        m = consumer.poll(0.1)
        if m is None or m.error():
            continue
        topic, value = m.topic(), m.value()
        if topic == image_topic:
            if value[:1] == b"{":
                continue
            (n,) = struct.unpack_from("<Q", value, 0)
            at = 8 + n
            (n,) = struct.unpack_from("<Q", value, at)
            at += 8 + n
            sec, nanosec = struct.unpack_from("<iI", value, at)
            at += 16 + 4
            (n,) = struct.unpack_from("<Q", value, at)
            msg = CompressedImage()
            msg.header.frame_id = f"aerosim/{actor}/camera_optical"
            set_stamp(msg.header, sec + nanosec * 1e-9)
            msg.format = "jpeg"
            msg.data = value[at + 8:at + 8 + n]
            image_pub.publish(msg)
            continue
        record = json.loads(value)
        ts = record["metadata"]["timestamp_sim"]
        t = ts["sec"] + ts["nanosec"] * 1e-9
        data = record["data"]
        if topic == clock_topic:
            msg = Clock()
            msg.clock.sec, msg.clock.nanosec = ts["sec"], ts["nanosec"]
            clock_pub.publish(msg)
        elif topic == state_topic:
            pose = data["state"]["pose"]
            p, v, w = pose["position"], data["velocity"], data["angular_velocity"]
            q = orientation_enu_flu(pose["orientation"])
            msg = Odometry()
            msg.header.frame_id = "aerosim/map"
            msg.child_frame_id = f"aerosim/{actor}/base_link"
            set_stamp(msg.header, t)
            msg.pose.pose.position.x, msg.pose.pose.position.y, msg.pose.pose.position.z = p["y"], p["x"], -p["z"]
            o = msg.pose.pose.orientation
            o.w, o.x, o.y, o.z = q
            body = rotate((q[0], -q[1], -q[2], -q[3]), (v["y"], v["x"], -v["z"]))
            lin = msg.twist.twist.linear
            lin.x, lin.y, lin.z = body
            ang = msg.twist.twist.angular
            ang.x, ang.y, ang.z = w["x"], -w["y"], -w["z"]
            odom_pub.publish(msg)
            tf = TransformStamped(header=msg.header, child_frame_id=msg.child_frame_id)
            tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = p["y"], p["x"], -p["z"]
            tf.transform.rotation = msg.pose.pose.orientation
            tf_pub.publish(TFMessage(transforms=[tf]))
        elif topic == display_topic:
            msg = FlightDisplay()
            msg.header.frame_id = f"aerosim/{actor}/base_link"
            set_stamp(msg.header, t)
            for f in DISPLAY_FIELDS:
                setattr(msg, f, float(data[f]))
            msg.hsi_mode = int(data["hsi_mode"])
            display_pub.publish(msg)


if __name__ == "__main__":
    main()
