"""`auv_sim` against pyzmq, the independent peer: the simulator documentation's own Python
client snippets (cv2 replaced by Pillow) decode its images and telemetry,
its thruster snippet moves the AUV the expected way, subscribers resume by
themselves after a simulator restart. (That it stops within a second on
SIGINT / SIGTERM after its reader has gone: tests/test_signals.py.)
"""

import io
import socket
import struct
import time

import pytest
import zmq
from PIL import Image

from conftest import executable


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Sim:
    """`auv_sim` on free ports, bound to `host`; `prefix` (e.g. `ip netns exec NS`) runs it on another host."""

    def __init__(self, processes, *args, host="127.0.0.1", prefix=()):
        self.image_port, self.thruster_port, self.telemetry_port = free_ports(3)
        self.proc = processes.start(
            [
                *prefix,
                executable("auv_sim"),
                "--host", host,
                "--image-port", self.image_port,
                "--thruster-port", self.thruster_port,
                "--telemetry-port", self.telemetry_port,
                "--width", 320, "--height", 240,
                *args,
            ]
        )
        self.processes = processes
        deadline = time.monotonic() + 10
        while "bound:" not in processes.output(self.proc):
            assert self.proc.poll() is None, processes.output(self.proc)
            assert time.monotonic() < deadline, "auv_sim did not bind within 10 s"
            time.sleep(0.02)

    def ports(self):
        """As `auv_bridge`'s parameters name them."""
        return {"image_port": self.image_port, "thruster_port": self.thruster_port,
                "telemetry_port": self.telemetry_port}


@pytest.fixture
def ctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


def protocol_telemetry_client(ctx, port, auv_id, host="localhost"):
    # The documentation's telemetry snippet, with a timeout so that a test cannot hang.
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.RCVTIMEO, 3000)
    sock.connect(f"tcp://{host}:{port}")
    sock.subscribe(bytes([auv_id]))  # Filter for AUV with ID=auv_id
    return sock


def latest_pose(sock):
    """The newest telemetry: what was queued is dropped first."""
    try:
        while True:
            sock.recv_multipart(zmq.NOBLOCK)
    except zmq.Again:
        pass
    _auv_id, data = sock.recv_multipart(0)
    x, y, z, yaw, pitch, roll = struct.unpack("<ffffff", data)
    return dict(id=_auv_id, x=x, y=y, z=z, yaw=yaw, pitch=pitch, roll=roll)


def protocol_thruster_push(ctx, port, auv_id, left, right, side, vertical):
    sock = ctx.socket(zmq.PUSH)
    sock.setsockopt(zmq.LINGER, 1000)
    sock.connect(f"tcp://localhost:{port}")
    data = struct.pack("Bbbbb", auv_id, left, right, side, vertical)
    sock.send(data)
    sock.close()


def test_documented_image_client_decodes_both_cameras(processes, ctx):
    sim = Sim(processes, "--vehicle-ids", "0,1,7")
    AUV_ID = 7
    socket_ = ctx.socket(zmq.SUB)
    socket_.setsockopt(zmq.RCVTIMEO, 3000)
    socket_.connect(f"tcp://localhost:{sim.image_port}")
    socket_.subscribe(bytes([AUV_ID]))  # filter for AUV with ID=7
    for _ in range(3):
        _auv_id, msg_front, msg_bottom = socket_.recv_multipart(0)
        assert _auv_id == bytes([AUV_ID])
        for jpeg in (msg_front, msg_bottom):
            img = Image.open(io.BytesIO(jpeg))
            assert img.format == "JPEG"
            img.load()  # decodes every pixel
            assert img.size == (320, 240) and img.mode == "RGB"


def test_documented_telemetry_client_reads_the_start_pose(processes, ctx):
    sim = Sim(processes, "--vehicle-ids", "0,1")
    sock = protocol_telemetry_client(ctx, sim.telemetry_port, 1)
    _auv_id, data = sock.recv_multipart(0)
    x, y, z, yaw, pitch, roll = struct.unpack("<ffffff", data)
    assert _auv_id == b"\x01"
    # The second AUV starts 3 m east of the first, 2 m deep, heading north.
    assert (x, y, z, yaw, pitch, roll) == (0.0, 3.0, 2.0, 0.0, 0.0, 0.0)


def test_documented_thruster_client_moves_the_auv_the_expected_way(processes, ctx):
    sim = Sim(processes, "--vehicle-ids", "0,1")
    tel0 = protocol_telemetry_client(ctx, sim.telemetry_port, 0)
    tel1 = protocol_telemetry_client(ctx, sim.telemetry_port, 1)
    start0, start1 = latest_pose(tel0), latest_pose(tel1)
    # The protocol's example on AUV 0: left 75, right -50, side 0, vertical kept.
    protocol_thruster_push(ctx, sim.thruster_port, 0, 75, -50, 0, -127)
    # AUV 1: the side thruster (starboard) and the vertical one (up).
    protocol_thruster_push(ctx, sim.thruster_port, 1, 0, 0, 100, 100)
    time.sleep(2.0)
    p0, p1 = latest_pose(tel0), latest_pose(tel1)
    # More left than right thrust: forward and turning right (NED yaw grows).
    assert p0["x"] > start0["x"] + 0.05, (start0, p0)
    assert p0["yaw"] > start0["yaw"] + 0.2, (start0, p0)
    assert p0["z"] == pytest.approx(start0["z"]), "vertical was -127: kept at 0"
    # Sideways to starboard is east when heading north; up is a smaller NED z.
    assert p1["y"] > start1["y"] + 0.3, (start1, p1)
    assert p1["x"] == pytest.approx(start1["x"], abs=1e-3)
    assert p1["z"] < start1["z"] - 0.3, (start1, p1)
    # All stop: the motion dies out.
    protocol_thruster_push(ctx, sim.thruster_port, 0, 0, 0, 0, 0)
    time.sleep(4.0)
    a = latest_pose(tel0)
    time.sleep(0.5)
    b = latest_pose(tel0)
    assert abs(b["x"] - a["x"]) < 0.02 and abs(b["yaw"] - a["yaw"]) < 0.01, (a, b)


def test_bottom_camera_shows_the_motion(processes, ctx):
    sim = Sim(processes, "--vehicle-ids", "0")
    images = ctx.socket(zmq.SUB)
    images.setsockopt(zmq.RCVTIMEO, 3000)
    images.setsockopt(zmq.CONFLATE, 0)
    images.connect(f"tcp://localhost:{sim.image_port}")
    images.subscribe(b"")

    def newest_bottom():
        try:
            while True:
                images.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            pass
        return Image.open(io.BytesIO(images.recv_multipart(0)[2])).convert("L")

    def difference(a, b):
        pa, pb = a.tobytes(), b.tobytes()
        return sum(abs(x - y) for x, y in zip(pa, pb)) / len(pa)

    still_a = newest_bottom()
    time.sleep(0.3)
    still_b = newest_bottom()
    assert difference(still_a, still_b) == 0
    protocol_thruster_push(ctx, sim.thruster_port, 0, 100, 100, 0, -127)
    time.sleep(1.0)
    assert difference(still_b, newest_bottom()) > 2


def test_subscribers_resume_after_a_restart(processes, ctx):
    sim = Sim(processes, "--vehicle-ids", "0", "--restart-every", "1.5", "--restart-down", "0.5",
              "--telemetry-rate", "100")
    sock = protocol_telemetry_client(ctx, sim.telemetry_port, 0)
    arrivals = []
    end = time.monotonic() + 4.0
    while time.monotonic() < end:
        try:
            sock.recv_multipart(0)
            arrivals.append(time.monotonic())
        except zmq.Again:
            break
    gaps = sorted(b - a for a, b in zip(arrivals, arrivals[1:]))
    # Two restarts in 4 s, each away 0.5 s: the longest silences are the restarts,
    # and each lasts less than the time away plus one second.
    assert len(gaps) > 150
    assert 0.4 < gaps[-1] < 1.5, gaps[-3:]
    assert "restart" in processes.output(sim.proc)
