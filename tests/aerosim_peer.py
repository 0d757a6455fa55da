"""An independent AeroSim peer for the tests: a Kafka-protocol broker
(tansu) on a free port, and AeroSim's records written and read here with
confluent-kafka and Python's own json and struct, from AeroSim's source
(aerosim-data's Kafka middleware and types), not from the bridge's code."""

import json
import math
import os
import socket
import struct
import subprocess
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_END
from confluent_kafka.admin import AdminClient, NewTopic

I32_MIN = -(2**31)
UNSET = {"sec": I32_MIN, "nanosec": 0}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listens(pid, port):
    """Whether process `pid` holds a TCP socket listening on `port` (another
    process's listener there would answer a connection just as well). The
    table read is that of the process's own network namespace."""
    try:
        with open(f"/proc/{pid}/net/tcp") as f:
            rows = [line.split() for line in f.readlines()[1:]]
        inodes = {r[9] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == port}
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False


def drain(stream):
    while stream.read(65536):
        pass


class Broker:
    """`advertised_port`: the port clients are told to connect to (a proxy's).
    Without `port` it takes a free one, and another if that one was taken
    between the look and tansu's bind (an ephemeral port any connection of
    the machine may take meanwhile). `host`: the address it listens on and
    advertises; `prefix` (e.g. `ip netns exec NS`) runs it on another host."""

    def __init__(self, port=None, advertised_port=None, host="127.0.0.1", prefix=()):
        self.fixed_port = port is not None
        self.port = port or free_port()
        self.advertised_port = advertised_port
        self.host, self.prefix = host, list(prefix)
        self.proc = None
        self.start()

    @property
    def bootstrap(self):
        return f"{self.host}:{self.port}"

    def start(self):
        why = ""
        for _ in range(1 if self.fixed_port else 3):
            why = self._start_once()
            if not why:
                return
            if not self.fixed_port:
                self.port = free_port()
        raise RuntimeError(f"the broker did not start: {why}")

    def _start_once(self):
        """Starts tansu on `self.port`: "" once it listens, else why not."""
        url = f"tcp://{self.host}:{self.port}"
        advertised = f"tcp://{self.host}:{self.advertised_port or self.port}"
        self.proc = subprocess.Popen([*self.prefix, os.environ.get("AEROSIM_BROKER_BIN", "tansu"), "broker",
                                      "--listener-url", url,
                                      "--advertised-listener-url", advertised, "--storage-engine", "memory://tansu/"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace").strip().splitlines()
                said = next((line for line in err if "Err" in line or "error" in line), err[-1] if err else "")
                return f"port {self.port}: exit status {self.proc.returncode}: {said.strip()}"
            if listens(self.proc.pid, self.port):
                # Its log is not read from here on: a full pipe must not stall it.
                threading.Thread(target=drain, args=(self.proc.stderr,), daemon=True).start()
                return ""
            time.sleep(0.05)
        self.stop()
        return f"port {self.port}: not listening after 20 s"

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def create(self, *topics, max_message_bytes=None):
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        config = {"max.message.bytes": str(max_message_bytes)} if max_message_bytes else {}
        for f in admin.create_topics([NewTopic(t, 1, 1, config=config) for t in topics]).values():
            try:
                f.result(10)
            except Exception as e:  # an existing topic is fine
                if "TOPIC_ALREADY_EXISTS" not in str(e):
                    raise


def stamp(seconds):
    sec = math.floor(seconds)
    return {"sec": sec, "nanosec": int(round((seconds - sec) * 1e9))}


def envelope(topic, type_name, data, sim=None, platform=None):
    """As aerosim-data's Kafka middleware writes a record (serde_json)."""
    return json.dumps({"metadata": {"topic": topic, "type_name": f"aerosim::types::{type_name}",
                                    "timestamp_sim": stamp(sim) if sim is not None else UNSET,
                                    "timestamp_platform": stamp(platform if platform is not None else time.time())},
                       "data": data}).encode()


def quat_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def aerosim_quaternion(roll, pitch, yaw):
    """scipy's Rotation.from_euler("zyx", [roll, pitch, yaw]) as AeroSim's JSBSim model calls it:
    extrinsic z, then y, then x, by roll, pitch, yaw in that order."""
    qz = (math.cos(roll / 2), 0.0, 0.0, math.sin(roll / 2))
    qy = (math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0)
    qx = (math.cos(yaw / 2), math.sin(yaw / 2), 0.0, 0.0)
    return quat_mul(qx, quat_mul(qy, qz))


def vec(x, y, z):
    return {"x": x, "y": y, "z": z}


def vehicle_state(position, roll=0.0, pitch=0.0, yaw=0.0, velocity=(0, 0, 0), rates=(0, 0, 0), accel=(0, 0, 0)):
    w, x, y, z = aerosim_quaternion(roll, pitch, yaw)
    return {"state": {"pose": {"position": vec(*position), "orientation": {"w": w, "x": x, "y": y, "z": z}}},
            "velocity": vec(*velocity), "angular_velocity": vec(*rates), "acceleration": vec(*accel),
            "angular_acceleration": vec(0, 0, 0)}


def flight_display(**fields):
    d = {k: 0.0 for k in ("airspeed_kts", "true_airspeed_kts", "altitude_ft", "target_altitude_ft",
                          "altimeter_pressure_setting_inhg", "vertical_speed_fpm", "pitch_deg", "roll_deg",
                          "side_slip_fps2", "heading_deg", "hsi_course_select_heading_deg",
                          "hsi_course_deviation_deg")}
    d["hsi_mode"] = 0
    d.update(fields)
    return d


def bincode_image(topic, jpeg, fmt=0, sim=None, platform=None):
    """aerosim-data's BincodeSerializer: bincode 1 (little-endian, u64 lengths) of
    (Metadata, CompressedImage)."""
    def string(s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    def ts(t):
        return struct.pack("<iI", t["sec"], t["nanosec"])
    return (string(topic) + string("aerosim::types::CompressedImage")
            + ts(stamp(sim) if sim is not None else UNSET) + ts(stamp(platform or time.time()))
            + struct.pack("<I", fmt) + struct.pack("<Q", len(jpeg)) + jpeg)


class Peer:
    """confluent-kafka on both sides of the bridge."""

    def __init__(self, bootstrap):
        self.bootstrap = bootstrap
        # Up to 10 MB a record: the tests send records over the bridge's limits.
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "message.max.bytes": 10_000_000})

    def send(self, topic, payload, key=b"key"):
        self.producer.produce(topic, key=key, value=payload)
        self.producer.flush(10)

    def reader(self, topic, start=OFFSET_END):
        """Reads `topic` from its end, as AeroSim's consumers do (assign, no
        group), or from `start` (OFFSET_BEGINNING: all it holds)."""
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "aerosim-test", "enable.auto.commit": False,
                      "fetch.wait.max.ms": 5})
        c.assign([TopicPartition(topic, 0, start)])
        return c


def read_records(consumer, count=1, timeout=10.0):
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        m = consumer.poll(0.1)
        if m is None or m.error():
            continue
        out.append(m)
    return out


class States:
    """Sends actor1's vehicle state at 20 Hz, as AeroSim does while it runs."""

    def __init__(self, peer, topic="aerosim.actor1.vehicle_state", position=(0, 0, -300.0), yaw=math.radians(90),
                 velocity=(0.0, 40.0, 0.0)):
        self.peer, self.topic, self.running = peer, topic, True
        self.state = vehicle_state(position, yaw=yaw, velocity=velocity)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        t = 0.0
        while self.running:
            t += 0.05
            # Not flushed one by one: over a slow link they still go at 20 Hz.
            self.peer.producer.produce(self.topic, key=b"key",
                                       value=envelope(self.topic, "VehicleState", self.state, sim=t))
            self.peer.producer.poll(0)
            time.sleep(0.05)

    def stop(self):
        self.running = False
        self.thread.join(timeout=5)
