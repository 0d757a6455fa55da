"""A stand-in for rviz2, which is not installable from PyPI (a test double,
named as such). It reads an rviz2 config the way rviz2 does and checks what
rviz2 needs to draw each display:

- every display with a topic receives messages, subscribed with the display's
  own QoS (rviz2's defaults where the config has none); a Camera display also
  its camera info, from where rviz2 takes it (image_transport's rule: beside
  the image), as rviz2 subscribes it (best effort);
- for every display drawn in 3D, the frame of what arrives resolves to the
  config's fixed frame through the TF tree received on /tf and /tf_static;
- the TF display's frames all hang in the fixed frame's tree.

It cannot tell how anything looks. `start_launch` starts a launch file's
nodes the way `ros2 launch` starts them, read through the recording launch
double (tests/launch_double): the tests then check the user's entry point
(launch file + rviz config) rather than a command line of their own.
"""

import importlib
import time
from pathlib import Path

import yaml

from camera_subscriber_stand_in import camera_info_topic
from conftest import executable
from launch_double import evaluate

ROOT = Path(__file__).resolve().parent.parent

# rviz_default_plugins display class -> (message type, drawn in 3D: needs TF to the fixed frame)
DISPLAYS = {
    "rviz_default_plugins/Image": ("sensor_msgs.msg.Image", False),
    "rviz_default_plugins/Camera": ("sensor_msgs.msg.Image", True),
    "rviz_default_plugins/Range": ("sensor_msgs.msg.Range", True),
    "rviz_default_plugins/PointStamped": ("geometry_msgs.msg.PointStamped", True),
    "rviz_default_plugins/Odometry": ("nav_msgs.msg.Odometry", True),
    "rviz_default_plugins/Pose": ("geometry_msgs.msg.PoseStamped", True),
    "rviz_default_plugins/Marker": ("visualization_msgs.msg.Marker", True),
    "rviz_default_plugins/PointCloud2": ("sensor_msgs.msg.PointCloud2", True),
}
WITHOUT_TOPIC = {"rviz_default_plugins/Grid", "rviz_default_plugins/TF"}


def message_type(dotted):
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def display_qos(topic):
    """The QoS rviz2 subscribes a display with: the config's, else rviz2's defaults."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    reliability = {"Reliable": ReliabilityPolicy.RELIABLE, "Best Effort": ReliabilityPolicy.BEST_EFFORT}
    durability = {"Volatile": DurabilityPolicy.VOLATILE, "Transient Local": DurabilityPolicy.TRANSIENT_LOCAL}
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=int(topic.get("Depth", 5)),
                      reliability=reliability[topic.get("Reliability Policy", "Reliable")],
                      durability=durability[topic.get("Durability Policy", "Volatile")])


def read_config(path):
    """(fixed frame, [(display name, class, topic or None, QoS or None)]) of an rviz2 config."""
    manager = yaml.safe_load(Path(path).read_text())["Visualization Manager"]
    displays = []
    for d in manager["Displays"]:
        cls = d["Class"]
        if cls in WITHOUT_TOPIC:
            displays.append((d["Name"], cls, None, None))
            continue
        assert cls in DISPLAYS, f"{path}: display class {cls} unknown to the stand-in"
        displays.append((d["Name"], cls, d["Topic"]["Value"], display_qos(d["Topic"])))
    return manager["Global Options"]["Fixed Frame"], displays


class TfTree:
    """Parents by child frame, from every TFMessage received."""

    def __init__(self, messages):
        self.parent = {}
        for m in messages:
            for t in m.transforms:
                self.parent[t.child_frame_id] = t.header.frame_id

    def frames(self):
        return set(self.parent) | set(self.parent.values())

    def root(self, frame):
        seen = set()
        while frame in self.parent and frame not in seen:
            seen.add(frame)
            frame = self.parent[frame]
        return frame

    def resolves(self, frame, fixed):
        return frame == fixed or self.root(frame) == self.root(fixed)


def start_launch(processes, launch_file, overrides=None):
    """Starts what `ros2 launch rflysim_bridge <launch_file> <overrides>` starts of this package, and
    the plain processes it starts (rviz2 is what this module stands in for; MAVROS is not installed here)."""
    share = processes.tmp_path / "share"
    (share / "rflysim_bridge").mkdir(parents=True, exist_ok=True)
    link = share / "rflysim_bridge" / "config"
    if not link.exists():
        link.symlink_to(ROOT / "config")
    started = []
    for node in evaluate(ROOT / "launch" / launch_file, overrides, share_root=str(share)):
        if node["package"] is None:  # a plain process the launch file starts (AeroSim's broker)
            started.append(processes.start([node["executable"], *node["arguments"]], name=Path(node["executable"]).name))
            continue
        if node["package"] != "rflysim_bridge":
            continue
        args = [executable(node["executable"]), *node["arguments"], "--ros-args"]
        if node["namespace"]:
            args += ["-r", f"__ns:=/{node['namespace'].strip('/')}"]
        for p in node["parameters"]:
            if isinstance(p, dict):
                args += [a for k, v in p.items() for a in ("-p", f"{k}:={v}")]
            else:
                args += ["--params-file", p]
        started.append(processes.start(args, name=node["executable"]))
    return started


def watch(collector, rviz_config, want=3, timeout=30.0):
    """Subscribes as rviz2 would and waits until every display has `want` messages (or `timeout`);
    returns the problems found, one line each (an empty list: rviz2 can draw every display)."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from sensor_msgs.msg import CameraInfo
    from tf2_msgs.msg import TFMessage

    fixed, displays = read_config(rviz_config)
    tf = collector.subscribe(TFMessage, "/tf", QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE),
                             key="stand-in /tf")
    tf_static = collector.subscribe(TFMessage, "/tf_static", QoSProfile(
        depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL),
        key="stand-in /tf_static")
    keys, infos = {}, []
    for name, cls, topic, qos in displays:
        if topic:
            keys[name] = collector.subscribe(message_type(DISPLAYS[cls][0]), topic, qos, key=f"stand-in {name}")
        if cls == "rviz_default_plugins/Camera":
            info = f"{name}: camera info"
            keys[info] = collector.subscribe(CameraInfo, camera_info_topic(topic), qos_profile_sensor_data,
                                             key=f"stand-in {info}")
            infos.append((info, "camera info", camera_info_topic(topic), None))
    displays += infos
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(len(collector.messages(k)) < want for k in keys.values()):
        time.sleep(0.1)
    time.sleep(0.5)  # a last TF after the last display message
    tree = TfTree(collector.messages(tf) + collector.messages(tf_static))
    problems = []
    if fixed not in tree.frames():
        problems.append(f"fixed frame {fixed}: not in the TF tree ({sorted(tree.frames())})")
    for name, cls, topic, _ in displays:
        if cls == "rviz_default_plugins/TF":
            loose = sorted(f for f in tree.frames() if not tree.resolves(f, fixed))
            if loose:
                problems.append(f"{name}: frames not connected to {fixed}: {loose}")
        if not topic:
            continue
        msgs = collector.messages(keys[name])
        if len(msgs) < want:
            problems.append(f"{name} ({topic}): {len(msgs)} messages in {timeout:.0f} s")
            continue
        if DISPLAYS.get(cls, (None, False))[1]:
            frames = {m.header.frame_id for m in msgs}
            loose = sorted(f for f in frames if not tree.resolves(f, fixed))
            if loose:
                problems.append(f"{name} ({topic}): frame {loose} does not resolve to {fixed}")
    return problems
