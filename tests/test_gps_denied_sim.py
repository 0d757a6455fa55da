"""`gps_denied_sim` against plain Python, as the simulator's users talk to their
simulator: stdlib `socket` + `json`, and the protocol's own image-decoding
snippet (Pillow). No ROS involved.
"""

import base64
import binascii
import io
import json
import math
import signal
import socket
import subprocess
import time

import pytest
from PIL import Image

from conftest import executable

FOCAL = 160 / math.tan(math.radians(30))  # 320 px across a 60° field of view


def decode_camera_image(telemetry):
    """The documentation's "Decoding the Image (Python)" snippet, verbatim."""
    camera = telemetry.get('camera', {})
    image_b64 = camera.get('image')
    if image_b64 is None:
        return None

    # Decode base64 to bytes
    image_bytes = base64.b64decode(image_b64)

    # Load as PIL Image
    image = Image.open(io.BytesIO(image_bytes))
    return image


class Link:
    """The test's end of the wire: telemetry arrives here, commands leave
    for wherever the telemetry came from."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(5.0)
        self.sim = None

    @property
    def target(self):
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def datagram(self):
        data, self.sim = self.sock.recvfrom(65536)
        return data

    def frame(self):
        """The next drone telemetry object."""
        while True:
            msg = json.loads(self.datagram())
            if "imu" in msg:
                return msg

    def command(self, thrust=0.0, pitch=0.0, roll=0.0, yaw=0.0):
        cmd = {"thrust": thrust, "pitch": pitch, "roll": roll, "yaw": yaw}
        self.sock.sendto(json.dumps(cmd).encode(), self.sim)

    def close(self):
        self.sock.close()


@pytest.fixture
def link():
    l = Link()
    yield l
    l.close()


def start(processes, link, *args):
    return processes.start(
        [executable("gps_denied_sim"), "--bind", "127.0.0.1:0", "--target", link.target, "--quiet", *args]
    )


def red_centroid(image):
    """Where the pad's red disc is, or None."""
    rgb = image.convert("RGB")
    w, h = rgb.size
    px = rgb.load()
    us = vs = n = 0
    for v in range(h):
        for u in range(w):
            r, g, b = px[u, v]
            if r > 150 and g < 90 and b < 90:
                us += u
                vs += v
                n += 1
    return (us / n, vs / n) if n > 20 else None


def test_images_decode_with_the_documented_snippet_and_show_the_pad(processes, link):
    start(processes, link, "--rate", "50")
    images = 0
    while images < 3:
        t = link.frame()
        assert t["camera"]["width"] == 320 and t["camera"]["height"] == 240 and t["camera"]["fov"] == 60.0
        image = decode_camera_image(t)
        if image is None:
            continue
        images += 1
        assert image.format == "JPEG" and image.size == (320, 240)
        pad = t["landing_pad"]
        assert pad is not None and 0.0 < pad["confidence"] <= 1.0
        # Downward camera, image top = forward, image right = the drone's right.
        u = 160 - FOCAL * pad["relative_y"] / pad["distance"]
        v = 120 - FOCAL * pad["relative_x"] / pad["distance"]
        cu, cv = red_centroid(image)
        assert abs(cu - u) < 2.5 and abs(cv - v) < 2.5, ((cu, cv), (u, v), pad)


def test_pad_report_and_image_agree_until_the_drone_has_flown_away(processes, link):
    start(processes, link, "--rate", "100", "--pattern", "linear")
    link.frame()
    seen_with_pad = 0
    deadline = time.monotonic() + 20
    while True:
        assert time.monotonic() < deadline, "the drone never left the pad behind"
        link.command(pitch=0.5)
        t = link.frame()
        image = decode_camera_image(t)
        if image is None:
            continue
        red = red_centroid(image)
        # A reported pad has its centre in view, so most of its disc shows;
        # the converse allows a sliver of disc at the edge with the centre out.
        if t["landing_pad"] is not None:
            assert red is not None, t["landing_pad"]
            seen_with_pad += 1
        elif red is None:
            break
    assert seen_with_pad > 0
    assert t["velocity"]["x"] > 1.0, "flying forward"


def test_thrust_raises_altitude_and_negative_thrust_lands(processes, link):
    start(processes, link, "--rate", "100")
    first = link.frame()
    assert first["altimeter"]["altitude"] == 5.0 and first["landed"] is False
    assert first["imu"]["linear_acceleration"]["z"] == pytest.approx(9.81)
    deadline = time.monotonic() + 10
    while True:
        assert time.monotonic() < deadline, "thrust up never raised the drone"
        link.command(thrust=0.8)
        t = link.frame()
        if t["altimeter"]["altitude"] > 6.0:
            assert t["altimeter"]["vertical_velocity"] > 0 and t["velocity"]["z"] > 0
            assert t["imu"]["linear_acceleration"]["z"] > 9.81 - 0.1
            break
    deadline = time.monotonic() + 15
    while True:
        assert time.monotonic() < deadline, "full negative thrust never landed it"
        link.command(thrust=-1.0)
        t = link.frame()
        if t["landed"]:
            assert t["altimeter"]["altitude"] in (0.0, 0.3), t["altimeter"]
            break


def test_out_of_range_and_malformed_commands_are_ignored(processes, link):
    start(processes, link, "--rate", "100")
    link.frame()
    for _ in range(50):
        link.sock.sendto(b'{"thrust": 2.0, "pitch": 0, "roll": 0, "yaw": 0}', link.sim)
        link.sock.sendto(b'{"thrust": 1.0', link.sim)
        t = link.frame()
    assert t["altimeter"]["altitude"] == pytest.approx(5.0), "hovering: no command was accepted"


def classify(datagram):
    """What a careful user's code would notice about one datagram."""
    try:
        t = json.loads(datagram)
    except (ValueError, UnicodeDecodeError):
        return {"not_json"}
    if not isinstance(t, dict):
        return {"not_json"}
    found = set()
    imu = t.get("imu")
    parts = {
        "orientation": imu.get("orientation") if isinstance(imu, dict) else imu,
        "altitude": t.get("altimeter", {}).get("altitude") if isinstance(t.get("altimeter"), dict) else None,
        "velocity": t.get("velocity"),
        "landed": t.get("landed"),
        "timestamp": t.get("timestamp"),
    }
    for key in ("imu", "altimeter", "velocity", "landing_pad", "camera", "landed", "timestamp"):
        if key not in t:
            found.add("missing")
    if not isinstance(parts["orientation"], dict) or not isinstance(parts["velocity"], dict):
        found.add("wrong_type")
    if not isinstance(parts["landed"], bool) or not isinstance(parts["timestamp"], (int, float)):
        found.add("wrong_type")
    image = t.get("camera", {}).get("image") if isinstance(t.get("camera"), dict) else None
    if isinstance(image, str) and image:
        try:
            jpeg = base64.b64decode(image, validate=True)
        except binascii.Error:
            found.add("bad_base64")
        else:
            try:
                Image.open(io.BytesIO(jpeg)).load()
            except Exception:  # Pillow raises several kinds for a broken JPEG
                found.add("corrupt_jpeg")
    return found or {"good"}


def test_each_fault_appears_when_enabled_and_only_then(processes, link):
    start(processes, link, "--rate", "200", "--frames", "100")
    clean = set()
    for _ in range(100):
        clean |= classify(link.datagram())
    assert clean == {"good"}

    link.close()
    faulty = Link()
    start(
        processes, faulty, "--rate", "400", "--frames", "400", "--seed", "5",
        "--junk", "0.1", "--truncate", "0.1", "--wrong-types", "0.3", "--missing-fields", "0.3",
        "--bad-base64", "0.4", "--corrupt-jpeg", "0.4",
    )
    seen = {}
    faulty.sock.settimeout(2.0)
    try:
        while True:
            for kind in classify(faulty.datagram()):
                seen[kind] = seen.get(kind, 0) + 1
    except socket.timeout:
        pass
    finally:
        faulty.close()
    for kind in ("not_json", "missing", "wrong_type", "bad_base64", "corrupt_jpeg", "good"):
        assert seen.get(kind, 0) > 3, seen


def test_restart_sends_time_back_to_zero(processes, link):
    start(processes, link, "--rate", "100", "--restart-every", "0.25")
    times = [link.frame()["timestamp"] for _ in range(80)]
    drops = [i for i in range(1, len(times)) if times[i] < times[i - 1]]
    assert len(drops) >= 2, times
    assert all(times[i] == 0.0 for i in drops), times


def test_rover_telemetry_objects_when_asked(processes, link):
    start(processes, link, "--rate", "100", "--rover-telemetry", "--pattern", "circular")
    rovers = []
    while len(rovers) < 5:
        msg = json.loads(link.datagram())
        if "pattern" in msg:
            rovers.append(msg)
    for r in rovers:
        assert r["pattern"] == "circular" and set(r) == {"position", "velocity", "pattern", "timestamp"}
        assert math.hypot(r["position"]["x"], r["position"]["y"]) == pytest.approx(2.0)
        assert r["position"]["z"] == 0.15


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stops_within_a_second_after_its_stdout_reader_closed(sig, link):
    proc = subprocess.Popen(
        [str(executable("gps_denied_sim")), "--bind", "127.0.0.1:0", "--target", link.target, "--stats", "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout.readline().startswith(b"gps_denied_sim:")
        proc.stdout.close()
        proc.stderr.close()
        time.sleep(0.5)  # ten stats lines meet a closed pipe
        assert proc.poll() is None, "a closed stdout must not end it"
        link.datagram()
        sent = time.monotonic()
        proc.send_signal(sig)
        assert proc.wait(timeout=1.0) == 0
        assert time.monotonic() - sent < 1.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
