"""The tests' second host: a "simulator PC" in a network namespace of its
own, joined to this host (the "ROS PC") by a veth pair with an MTU of 1500,
as a Windows PC on the lab's wired LAN would be. This host is SUBNET.1, the
simulator SUBNET.2, a third host on that LAN SUBNET.3, with SUBNET a
10.77.X.0/24 no interface or route here uses. The simulator PC's default
route is the veth (its multicast leaves there); this host's default route,
if it has one, stays where it was: on another interface. Nothing else
reaches the namespace, and the test that made it removes it (and the veth
pair with it). `udp_relay` puts a lossy path between the simulator and this
host: the simulator sends to its own loopback, the relay on to this host."""

import contextlib
import os
import shutil
import subprocess

import pytest

from conftest import executable

MTU = 1500


def ip(*args):
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def unused_subnet():
    """A 10.77.X.0/24 no interface or route of this host uses yet."""
    taken = ip("-4", "-o", "addr", "show") + ip("-4", "route", "show")
    for i in range(250):
        candidate = f"10.77.{(os.getpid() + i) % 250}"
        if f"{candidate}." not in taken:
            return candidate
    raise RuntimeError("every 10.77.X.0/24 is in use")


class SimulatorPC:
    def __init__(self, namespace, subnet, link):
        self.namespace = namespace
        self.link = link  # this host's end of the veth pair
        self.this_host, self.sim_ip, self.third_host = f"{subnet}.1", f"{subnet}.2", f"{subnet}.3"
        self.prefix = ["ip", "netns", "exec", namespace]

    def run(self, *args, **kwargs):
        """A command on the simulator PC."""
        return subprocess.run([*self.prefix, *args], **kwargs)

    def udp_counters(self):
        """The simulator PC's UDP counters (/proc/net/snmp): InDatagrams, RcvbufErrors, ..."""
        return udp_counters(self.run("cat", "/proc/net/snmp", capture_output=True, text=True, check=True).stdout)

    def relay(self, processes, ports, log, loss=0.0, duplicate=0.0, reorder=0.0, delay_ms=0.0, seed=1):
        """`udp_relay` on the simulator PC: from its loopback's `ports` to this
        host's, dropping, duplicating, reordering and delaying as asked."""
        return processes.start(
            [*self.prefix, executable("udp_relay"), "--listen", "127.0.0.1", "--to", self.this_host,
             "--ports", ",".join(str(p) for p in ports), "--loss", str(loss), "--duplicate", str(duplicate),
             "--reorder", str(reorder), "--delay-ms", str(delay_ms), "--seed", str(seed), "--log", str(log)],
            name="udp_relay")


def udp_counters(snmp_text):
    lines = [line.split() for line in snmp_text.splitlines() if line.startswith("Udp:")]
    names, values = lines[0][1:], lines[1][1:]
    return dict(zip(names, (int(v) for v in values)))


@contextlib.contextmanager
def simulator_pc():
    """Makes the simulator PC, yields it, removes it; fails the test, saying
    why, where this machine cannot make one (no iproute2, not root)."""
    if shutil.which("ip") is None:
        pytest.fail("iproute2's `ip` is not installed: no network namespaces to stand for a second host")
    tag = os.getpid() % 100_000
    namespace, here, there = f"rflysim_simpc{tag}", f"rfh{tag}", f"rfs{tag}"
    try:
        ip("netns", "add", namespace)
    except RuntimeError as e:
        pytest.fail(f"cannot create a network namespace here (root or CAP_SYS_ADMIN needed): {e}")
    try:
        subnet = unused_subnet()
        ip("link", "add", here, "mtu", str(MTU), "type", "veth", "peer", "name", there, "mtu", str(MTU),
           "netns", namespace)
        ip("addr", "add", f"{subnet}.1/24", "dev", here)
        ip("link", "set", here, "up")
        for host in (2, 3):
            ip("-n", namespace, "addr", "add", f"{subnet}.{host}/24", "dev", there)
        ip("-n", namespace, "link", "set", there, "up")
        ip("-n", namespace, "link", "set", "lo", "up")
        ip("-n", namespace, "route", "add", "default", "via", f"{subnet}.1", "dev", there)
    except RuntimeError as e:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        pytest.fail(f"cannot join a network namespace to this one by a veth pair here: {e}")
    try:
        yield SimulatorPC(namespace, subnet, here)
    finally:
        # Deleting the namespace deletes the veth pair with it.
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
