"""RflySim on another host. The simulator runs in a network
namespace of its own, joined to this one by a veth pair, as a Windows PC on
the same LAN would be (tests/netns_rig.py): this host is SUBNET.1, the
simulator SUBNET.2, and a third host on that LAN SUBNET.3. Nothing but the veth link reaches the
emulator, so a request the bridge sent to loopback instead of `sim_ip` would
go unanswered, and a sensor asked to send to 127.0.0.1 would send to the
simulator's own loopback: either way no data would arrive."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rflysim_bridge.msg import CameraCtrl, CameraStatus
from sensor_msgs.msg import Image, Imu

from netns_rig import simulator_pc
from rflysim_scenario import Scenario, sensor, stamp_seconds
from test_control_plane import start_gimbal_node, wait_matched
from test_sockets import foreign_sender_drops, judge_injection

HEARTBEAT_PORT = 20005  # CopterSim's, where the emulator sends heartbeats
IMU_DATA_PORT = 31000  # vehicle 1's IMU, rflysim_proto::ports::imu_data_port(1)


@pytest.fixture(scope="module")
def simulator_host():
    with simulator_pc() as h:
        yield h


def wait_until(condition, what, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_simulator_on_another_host_is_asked_there_and_heard_from_there(collector, processes, tmp_path,
                                                                         simulator_host):
    h = simulator_host
    window, status_port = 15, 43915
    # Config.json as written for one machine: RflySim3D sends to 127.0.0.1.
    camera = sensor(915, 1, 2, port=42915, hz=20)
    gimbal = sensor(916, 9, 2, port=42916, width=64, height=36, hz=10)
    img = collector.subscribe(Image, "/rflysim/sensor915/img_rgb")
    imu = collector.subscribe(Imu, "/rflysim/imu")
    state = collector.subscribe(Odometry, "/rflysim/uav1/state/odom")
    status = collector.subscribe(CameraStatus, "/rflysim/sensor916/camera/status")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    # --requested-only: the emulator streams nothing until a VisionSensorReq reaches it.
    sc = Scenario(processes, tmp_path, [camera, gimbal], sim_prefix=h.prefix,
                  sim_args=["--requested-only", "--window-id", window, "--coptersim-target", h.this_host,
                            "--gimbal-target", f"{h.this_host}:{status_port}"],
                  bridge_params={"sim_host": h.sim_ip, "window_id": window, "use_sim_time": False,
                                 "heartbeat_port": HEARTBEAT_PORT, "heartbeat_multicast": False})
    start_gimbal_node(processes, sc.config, window, status_port, extra=["-p", f"sim_host:={h.sim_ip}"])

    images = collector.wait_for(img, 5, timeout=30)
    collector.wait_for(imu, 50, timeout=20)
    collector.wait_for(state, 5, timeout=20)
    sim_log = processes.output(sc.sim)
    assert re.search(rf"request from {re.escape(h.this_host)}:\d+: starting sensor 915 ", sim_log), sim_log
    assert f"CopterSim 1: IMU at 200 Hz to {h.this_host}:{IMU_DATA_PORT}" in sim_log, sim_log
    assert (f"requesting sensor 915 (TypeID 1) from RflySim3D at {h.sim_ip}:{20010 + window}, "
            f"to be sent to {h.this_host}:42915") in sc.bridge_output()
    assert all(abs(time.time() - stamp_seconds(m.header)) < 5 for m in images[-3:])

    # Heartbeats from sim_ip are taken: the time base counts them, nobody was refused.
    # The bridge and the gimbal node both publish /diagnostics: each status is looked up in the
    # latest array that has it.
    def latest_statuses():
        return DiagnosticArray(status=list({s.name: s for m in collector.messages(diag) for s in m.status}.values()))

    def heartbeats_taken():
        return [int(kv.value) for s in latest_statuses().status if s.name.endswith("CopterSim heartbeat")
                for kv in s.values if kv.key == "frames_published"]

    wait_until(lambda: any(n >= 2 for n in heartbeats_taken()), f"heartbeats not taken: {heartbeats_taken()}")
    assert not any(foreign_sender_drops(latest_statuses()).values())

    # Gimbal control goes to sim_ip; its echo comes back from there as camera/status.
    collector.wait_for(status, 2, timeout=30)
    ctrl = collector.node.create_publisher(CameraCtrl, "/rflysim/sensor916/camera/ctrl",
                                           QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    wait_matched(ctrl)
    ctrl.publish(CameraCtrl(ctrl_type=0x4, pitch=-4500, yaw=1000))
    wait_until(lambda: collector.messages(status)[-1].pitch == -4500,
               f"the gimbal did not turn: last status pitch {collector.messages(status)[-1].pitch}")
    assert collector.messages(status)[-1].yaw == 1000


def test_a_simulator_elsewhere_is_asked_as_rflysim_s_sdk_asks_it(collector, processes, tmp_path, simulator_host):
    """RflySim's SDK (`jsonLoad`) asks RflySim3D for a sensor written without a port on 9999 + SeqID,
    and on Linux for one written as shared memory over UDP (SendProtocol[0] 1): RflySim3D on the
    PC writes its shared memory there. The requests the emulator on the other host receives say
    exactly that, and both sensors' images arrive."""
    h = simulator_host
    window = 18
    no_port = sensor(918, 1, 2, hz=20)
    shared_memory = sensor(919, 1, 0, hz=20)
    raw = collector.subscribe(Image, "/rflysim/sensor918/img_rgb")
    jpeg = collector.subscribe(Image, "/rflysim/sensor919/img_rgb")
    sc = Scenario(processes, tmp_path, [no_port, shared_memory], sim_prefix=h.prefix,
                  sim_args=["--requested-only", "--window-id", window, "--no-heartbeat"],
                  bridge_params={"sim_host": h.sim_ip, "window_id": window, "imu": False, "use_sim_time": False})
    collector.wait_for(raw, 3, timeout=30)
    collector.wait_for(jpeg, 3, timeout=30)
    here = ", ".join(h.this_host.split("."))
    sim_log = processes.output(sc.sim)
    assert f"starting sensor 918 (TypeID 1), SendProtocol [2, {here}, 10917, 0, 0]" in sim_log, sim_log
    assert f"starting sensor 919 (TypeID 1), SendProtocol [1, {here}, 10918, 0, 0]" in sim_log, sim_log
    assert (f"sensor(s) [919] asked over UDP (SendProtocol[0] 1) instead of shared memory: RflySim3D at "
            f"{h.sim_ip} is not on this machine") in sc.bridge_output()


@pytest.mark.parametrize("allowed", ["default", "third host allowed"])
def test_a_third_host_cannot_inject_frames_or_heartbeats(collector, processes, tmp_path, simulator_host, allowed):
    h = simulator_host
    port, window = 42917, 16
    params = {"sim_host": h.sim_ip, "window_id": window, "imu": False, "use_sim_time": False,
              "heartbeat_port": HEARTBEAT_PORT, "heartbeat_multicast": False}
    if allowed != "default":
        params["allowed_senders"] = [h.third_host]
    img = collector.subscribe(Image, "/rflysim/sensor917/img_rgb")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    sc = Scenario(processes, tmp_path, [sensor(917, 1, 2, port=port, hz=20)], sim_prefix=h.prefix,
                  sim_args=["--requested-only", "--window-id", window, "--no-heartbeat"], bridge_params=params)
    collector.wait_for(img, 3, timeout=30)
    during = len(collector.messages(img))
    # The third host is a second address on the simulator's LAN, sending to this host's address there.
    sender = Path(__file__).with_name("foreign_sender.py")
    subprocess.run([*h.prefix, sys.executable, sender, h.third_host, h.this_host, str(port), str(HEARTBEAT_PORT)],
                   check=True, timeout=30)
    refused = f"datagram from {h.third_host} dropped: only {h.sim_ip}, 127.0.0.0/8 may send here"
    judge_injection(collector, img, diag, during, "sensor917", refused_log=refused if allowed == "default" else None,
                    bridge_output=sc.bridge_output)


def bytes_sent_to(host):
    return int(Path(f"/sys/class/net/{host.link}/statistics/tx_bytes").read_text())


def test_dds_carries_the_topics_to_a_subscriber_on_another_host_without_shared_memory(processes, tmp_path,
                                                                                     simulator_host):
    h = simulator_host
    # What the README asks of machines that share topics: SUBNET discovery, here with static peers
    # (no multicast route into the namespace). The remote subscriber is UDP-only, as one on another
    # host is: /dev/shm is shared by the namespaces, so shared memory must not be left to Fast DDS's
    # guess of which participants share a host. A bridge publishing over shared memory only fails
    # here (nothing arrives; tried with a profile without UDP).
    across_hosts = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}
    width, height = 320, 240
    camera = sensor(920, 1, 2, port=42920, width=width, height=height, hz=10)
    lidar = sensor(921, 20, 1, port=42921, hz=10)
    Scenario(processes, tmp_path, [camera, lidar], sim_args=["--window-id", "17"],
             bridge_params={"window_id": 17, "imu": False},
             bridge_env={**across_hosts, "ROS_STATIC_PEERS": h.sim_ip})
    sent_before = bytes_sent_to(h)
    subscriber = subprocess.run(
        [*h.prefix, sys.executable, Path(__file__).with_name("remote_subscriber.py"),
         "/rflysim/sensor920/img_rgb", "/rflysim/sensor921/vehicle_lidar", "8"],
        env={**os.environ, **across_hosts, "ROS_STATIC_PEERS": h.this_host, "FASTDDS_BUILTIN_TRANSPORTS": "UDPv4"},
        capture_output=True, text=True, timeout=60)
    assert subscriber.returncode == 0, subscriber.stderr
    got = json.loads(subscriber.stdout.strip().splitlines()[-1])
    crossed = bytes_sent_to(h) - sent_before
    # 10 Hz for 8 s, less discovery: ~70 of each; 20 leaves room for a slow start.
    assert got["images"] >= 20 and got["image_bytes"] == width * height * 3, got
    # The emulator's LiDAR leaves out the 32 × 24 beams that hit nothing.
    assert got["clouds"] >= 20 and 0 < got["cloud_points"] <= 32 * 24, got
    assert crossed >= got["images"] * width * height * 3, f"only {crossed} bytes crossed the link for {got}"
