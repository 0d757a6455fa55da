"""CopterSim heartbeats as a faulty simulator PC sends them, run inside the
simulator PC's network namespace by tests/test_two_hosts.py:

    python3 heartbeat_sender.py DEST_IP PORT COPTER ANCHOR[,ANCHOR...] RATE_HZ COUNT [INTERFACE_IP]

ANCHOR: seconds since the epoch of the vehicle's sim time 0, cycled through
beat by beat (two anchors alternating: two CopterSims given one id, or a PC
whose clock is stepped). With INTERFACE_IP, DEST_IP may be a multicast group,
left by that interface.
"""

import socket
import struct
import sys
import time

HEARTBEAT_CHECKSUM = 123456789


def heartbeat(copter, anchor_s, count=0):
    """RflyTimeStmp as RflySim's SDK reads it: SysStartTime, SysCurrentTime (Unix ms), HeartCount."""
    return struct.pack("<2i3q", HEARTBEAT_CHECKSUM, copter, int(anchor_s * 1e3), int(time.time() * 1e3), count)


def main(dest, port, copter, anchors, rate_hz, count, interface=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if interface:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(interface))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    for i in range(count):
        anchor = anchors[i % len(anchors)]
        s.sendto(heartbeat(copter, anchor, i), (dest, port))
        time.sleep(1.0 / rate_hz)
    s.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], int(a[1]), int(a[2]), [float(x) for x in a[3].split(",")], float(a[4]), int(a[5]),
         a[6] if len(a) > 6 else None)
