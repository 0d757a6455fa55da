"""`sim_host` as a host name, as a DHCP network or /etc/hosts names the
simulator PC. The test gives a name of its own an address in /etc/hosts
(and takes it out again): the bridge finds the emulator by it, says where
at start, follows the name to a new address when the simulator falls
silent (requests and sender filter alike), and every executable that takes
`sim_host` stops with an error naming a name that does not resolve."""

import contextlib
import os
import time

from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import Image, Imu

from conftest import executable
from netns_rig import simulator_pc
from rflysim_scenario import Scenario, sensor

HOSTS = "/etc/hosts"
# `.invalid` never resolves (RFC 6761).
UNKNOWN = "no-such-rflysim-pc.invalid"


class HostsEntry:
    """One line `ADDRESS NAME` of /etc/hosts, made and changed by the test.
    The file is rewritten in place: in a container it is often a bind mount."""

    def __init__(self, name):
        self.name = name

    def _lines_without(self):
        with open(HOSTS) as f:
            return [line for line in f.read().splitlines() if line.split()[1:2] != [self.name]]

    def point_at(self, address):
        lines = self._lines_without() + [f"{address} {self.name}"]
        with open(HOSTS, "w") as f:
            f.write("\n".join(lines) + "\n")

    def remove(self):
        lines = self._lines_without()
        with open(HOSTS, "w") as f:
            f.write("\n".join(lines) + "\n")


@contextlib.contextmanager
def hosts_entry(address):
    entry = HostsEntry(f"rflysim-pc-{os.getpid()}.test")
    entry.point_at(address)
    try:
        yield entry
    finally:
        entry.remove()


def wait_for_text(processes, proc, text, timeout):
    deadline = time.monotonic() + timeout
    while text not in processes.output(proc):
        assert time.monotonic() < deadline, f"{text!r} not in:\n{processes.output(proc)}"
        assert proc.poll() is None, processes.output(proc)
        time.sleep(0.1)


def test_a_simulator_on_this_host_is_found_by_its_name(collector, processes, tmp_path):
    img = collector.subscribe(Image, "/rflysim/sensor932/img_rgb")
    imu = collector.subscribe(Imu, "/rflysim/imu")
    with hosts_entry("127.0.0.1") as entry:
        sc = Scenario(processes, tmp_path, [sensor(932, 1, 2, port=42932, hz=20)],
                      sim_args=["--requested-only", "--window-id", 13],
                      bridge_params={"sim_host": entry.name, "window_id": 13, "use_sim_time": False})
        collector.wait_for(img, 5, timeout=30)
        collector.wait_for(imu, 20, timeout=20)
        out = sc.bridge_output()
        assert f"simulator at {entry.name} (127.0.0.1)" in out, out
        assert f"from RflySim3D at {entry.name}:20023 (127.0.0.1:20023)" in out, out


def nobody_on_the_lan_of(h):
    """An address of the simulator's LAN that no host has."""
    return h.sim_ip.rsplit(".", 1)[0] + ".4"


def test_the_name_is_followed_to_the_simulator_s_new_address(collector, processes, tmp_path):
    """The name first gives an address on the simulator's LAN where nobody
    is; then /etc/hosts moves it to the simulator's. The emulator streams
    only what it is asked for, and the bridge takes datagrams only from the
    name's address: the silent bridge must look the name up again, ask
    there, and take what comes from there."""
    img = collector.subscribe(Image, "/rflysim/sensor933/img_rgb")
    imu = collector.subscribe(Imu, "/rflysim/imu")
    collector.subscribe(DiagnosticArray, "/diagnostics")
    with simulator_pc() as h, hosts_entry(nobody_on_the_lan_of(h)) as entry:
        nobody = nobody_on_the_lan_of(h)
        sc = Scenario(processes, tmp_path, [sensor(933, 1, 2, port=42933, hz=20)], sim_prefix=h.prefix,
                      sim_args=["--requested-only", "--window-id", 14, "--coptersim-target", h.this_host,
                                "--no-heartbeat"],
                      bridge_params={"sim_host": entry.name, "window_id": 14, "use_sim_time": False,
                                     "heartbeat_multicast": False})
        wait_for_text(processes, sc.bridge, f"simulator at {entry.name} ({nobody})", 20)
        time.sleep(2)
        assert collector.messages(img) == [] and collector.messages(imu) == [], "asked where nobody is"
        entry.point_at(h.sim_ip)
        wait_for_text(processes, sc.bridge, f"sim_host {entry.name} now resolves to {h.sim_ip} (was {nobody})",
                      20)
        collector.wait_for(img, 5, timeout=30)
        collector.wait_for(imu, 20, timeout=20)
        out = sc.bridge_output()
        assert f"from RflySim3D at {entry.name}:20024 ({h.sim_ip}:20024)" in out, out


def test_a_name_that_does_not_resolve_stops_each_executable_saying_which(processes, tmp_path):
    config = tmp_path / "Config.json"
    config.write_text('{"VisionSensors": []}')
    rflysim = ("bridge", "imu_node", "scene_node", "gimbal_node", "mavros_launcher")
    for name in (*rflysim, "gps_denied_bridge", "auv_bridge"):
        config_param = ["-p", f"rflysim_config:={config}"] if name in rflysim else []
        proc = processes.start([executable(name), "--ros-args", "-p", f"sim_host:={UNKNOWN}", *config_param],
                               name=name)
        assert proc.wait(timeout=20) != 0, processes.output(proc)
        out = processes.output(proc)
        assert f'parameter sim_host: host name "{UNKNOWN}" does not resolve' in out, (name, out)
