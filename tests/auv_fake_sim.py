"""A stand-in for the ZeroMQ AUV simulator, written with pyzmq
(an independent implementation of ZeroMQ): it binds the three sockets as the
simulator does and sends exactly the bytes a test asks for."""

import io
import socket
import struct
import time

import zmq
from PIL import Image


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def jpeg(width, height, rgb, quality=90):
    out = io.BytesIO()
    Image.new("RGB", (width, height), rgb).save(out, format="JPEG", quality=quality)
    return out.getvalue()


def telemetry_payload(x, y, z, yaw, pitch, roll):
    return struct.pack("<ffffff", x, y, z, yaw, pitch, roll)


class FakeSim:
    """Binds PUB :image, PULL :thruster, PUB :telemetry on 127.0.0.1."""

    def __init__(self, ports=None):
        self.image_port, self.thruster_port, self.telemetry_port = ports or free_ports(3)
        self.ctx = zmq.Context()
        self.bind()

    def bind(self):
        self.images = self.ctx.socket(zmq.PUB)
        self.thrusters = self.ctx.socket(zmq.PULL)
        self.telemetry = self.ctx.socket(zmq.PUB)
        for s, port in ((self.images, self.image_port), (self.thrusters, self.thruster_port),
                        (self.telemetry, self.telemetry_port)):
            s.setsockopt(zmq.LINGER, 0)
            deadline = time.monotonic() + 5
            while True:
                try:
                    s.bind(f"tcp://127.0.0.1:{port}")
                    break
                except zmq.ZMQError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)

    def unbind(self):
        for s in (self.images, self.thrusters, self.telemetry):
            s.close(linger=0)

    def restart(self, away=1.0):
        self.unbind()
        time.sleep(away)
        self.bind()

    def params(self):
        return {"image_port": self.image_port, "thruster_port": self.thruster_port,
                "telemetry_port": self.telemetry_port}

    def send_images(self, auv_id, front, bottom):
        self.images.send_multipart([bytes([auv_id]), front, bottom])

    def send_telemetry(self, auv_id, *values):
        self.telemetry.send_multipart([bytes([auv_id]), telemetry_payload(*values)])

    def thruster_messages(self, duration):
        """Every message pulled within `duration` seconds, as lists of parts."""
        out = []
        deadline = time.monotonic() + duration
        while (left := deadline - time.monotonic()) > 0:
            if self.thrusters.poll(int(left * 1000) + 1):
                out.append(self.thrusters.recv_multipart())
        return out

    def close(self):
        self.unbind()
        self.ctx.term()
