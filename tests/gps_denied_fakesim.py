"""A plain-Python stand-in for the GPS-denied drone simulator: stdlib `socket` +
`json` + `base64`, as its users' scripts are written, plus Pillow to make
real JPEGs. It sends telemetry to the bridge and keeps the commands the
bridge sends back."""

import base64
import io
import json
import math
import socket
import threading
import time

from PIL import Image


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jpeg(width=320, height=240, quality=70):
    """A real JPEG with a red square left of centre and a blue stripe at the top."""
    img = Image.new("RGB", (width, height), (40, 120, 50))
    for x in range(60, 120):
        for y in range(90, 150):
            img.putpixel((x, y), (220, 30, 30))
    for x in range(width):
        for y in range(0, 20):
            img.putpixel((x, y), (30, 30, 220))
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=quality)
    return out.getvalue()


def telemetry(t=1.0, image=None, pad=True, **overrides):
    """The protocol's telemetry object with distinctive values."""
    msg = {
        "imu": {
            "orientation": {"roll": 0.1, "pitch": -0.2, "yaw": 0.3},
            "angular_velocity": {"x": 0.01, "y": -0.02, "z": 0.03},
            "linear_acceleration": {"x": 0.4, "y": -0.5, "z": 9.81},
        },
        "altimeter": {"altitude": 5.0 + t, "vertical_velocity": -0.1},
        "velocity": {"x": 0.6, "y": -0.7, "z": -0.1},
        "landing_pad": {"relative_x": 0.5, "relative_y": -0.2, "distance": 4.5, "confidence": 0.85} if pad else None,
        "camera": {"width": 320, "height": 240, "fov": 60.0,
                   "image": base64.b64encode(image).decode() if image is not None else None},
        "landed": False,
        "timestamp": t,
    }
    msg.update(overrides)
    return msg


def rover(t=1.0):
    return {"position": {"x": 1.5, "y": 0.8, "z": 0.15}, "velocity": {"x": 0.0, "y": 0.4, "z": 0.0},
            "pattern": "circular", "timestamp": t}


def quaternion_zyx(roll, pitch, yaw):
    """(x, y, z, w) of R = Rz(yaw) Ry(pitch) Rx(roll), by the textbook formula."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


class FakeSim:
    """Bound where the simulator listens; telemetry goes to the bridge's port."""

    def __init__(self, bridge_port, host="127.0.0.1"):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.bridge = ("127.0.0.1", bridge_port)
        self.commands = []
        self.sources = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def _receive(self):
        while self.running:
            try:
                data, source = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:  # ICMP "port unreachable" of a datagram the bridge was not up for
                continue
            with self.lock:
                self.commands.append(data)
                self.sources.append(source)

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode())

    def send_raw(self, data):
        try:
            self.sock.sendto(data, self.bridge)
        except OSError:
            pass

    def received(self):
        with self.lock:
            return list(self.commands)

    def wait_command(self, count=1, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.received()
            if len(got) >= count:
                return got
            time.sleep(0.02)
        raise AssertionError(f"{len(self.received())} of {count} commands within {timeout} s")

    def close(self):
        self.running = False
        self.thread.join(timeout=1)
        self.sock.close()


def keep_sending(sim, make, until, period=0.05, timeout=20.0):
    """Sends `make(i)` every `period` until `until()` holds."""
    deadline = time.monotonic() + timeout
    i = 0
    while not until():
        assert time.monotonic() < deadline, "the bridge never published what was awaited"
        sim.send(make(i))
        i += 1
        time.sleep(period)
    return i
