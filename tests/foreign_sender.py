"""A host that is not the simulator sending a RflySim frame and CopterSim
heartbeats to the bridge: what the sender filter must refuse. Imported by the
tests, and run as a script inside a network namespace (another host) by
tests/test_multihost.py:

    python3 foreign_sender.py SOURCE_IP DEST_IP FRAME_PORT HEARTBEAT_PORT
"""

import socket
import struct
import sys
import time

INJECTED_STAMP = 4321.0
# The injected 32×24 bgr8 frame's pixels: no rendered scene has them.
INJECTED_PIXEL = 200


def inject(source_ip, port, heartbeat_port, dest_ip="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((source_ip, 0))
    payload = bytes([INJECTED_PIXEL]) * (32 * 24 * 3)
    frame = struct.pack("<6id", 1234567893, 32 + len(payload), 0, 1, 7_000_000, 0, INJECTED_STAMP) + payload
    # A heartbeat claiming that sim time 0 was 1970-01-01 00:16:40.
    heartbeat = struct.pack("<2i3q", 123456789, 1, 1_000_000_000, 0, 0)
    # Heartbeats first: a frame of another run's time would re-anchor the stamps by itself.
    for _ in range(20):
        s.sendto(heartbeat, (dest_ip, heartbeat_port))
        time.sleep(0.02)
    for _ in range(20):
        s.sendto(frame, (dest_ip, port))
        time.sleep(0.02)
    s.close()


def is_injected(image):
    return bytes(image.data[:3]) == bytes([INJECTED_PIXEL]) * 3


if __name__ == "__main__":
    source, dest, port, heartbeat_port = sys.argv[1:5]
    inject(source, int(port), int(heartbeat_port), dest)
