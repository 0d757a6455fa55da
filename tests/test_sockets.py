"""Only the simulator's host (sim_ip) and this machine's loopback may send
to the bridge: anyone else on the network could otherwise inject images,
clouds, IMU samples, heartbeats (which re-anchor every stamp) and gimbal
status. The injector here sends from this machine's own non-loopback address,
which the bridge must treat as a foreign host; `allowed_senders` widens it."""

import json
import socket
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import Image

from conftest import executable
from foreign_sender import inject, is_injected
from rflysim_scenario import Scenario, sensor, stamp_seconds


def own_lan_address():
    """This host's address on its default route (a UDP connect sends nothing)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.254", 9))
        ip = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if ip.startswith("127.") else ip


def foreign_sender_drops(diagnostics):
    """{status name: datagrams refused as from a foreign host} of a DiagnosticArray."""
    return {status.name: int(kv.value) for status in diagnostics.status for kv in status.values
            if kv.key == "dropped_foreign_sender"}


def judge_injection(collector, img, diag, during, sensor_name, refused_log, bridge_output):
    """After foreign_sender's injection, from frame `during` of `img` on. With `refused_log` (the sender
    is not allowed): nothing injected is published, no stamp moves, its frames and heartbeats are counted
    as foreign in `diag` and the bridge logs `refused_log`. Without (it is allowed): they get through the
    filter to the time base, which refuses its heartbeat's anchor (sim time 0 in 1970: no PC's clock is that
    far off; an anchor never moves a stamp anyway) and publishes its frames or (another run's time among the
    simulator's own) refuses them as outliers."""
    msgs = collector.wait_for(img, len(collector.messages(img)) + 10, timeout=10)
    injected = [m for m in msgs if is_injected(m)]
    wall = time.time()
    late_stamps = [wall - stamp_seconds(m.header) for m in msgs[during:] if not is_injected(m)]
    time.sleep(1.5)
    counts = foreign_sender_drops(collector.messages(diag)[-1])
    if refused_log:
        assert not injected, "a frame from a foreign host was published"
        assert all(abs(d) < 5 for d in late_stamps), f"stamps moved by a foreign heartbeat: {late_stamps[:3]}"
        assert any(sensor_name in n and c >= 20 for n, c in counts.items()), counts
        assert any("heartbeat" in n and c >= 20 for n, c in counts.items()), counts
        assert refused_log in bridge_output()
    else:
        outliers = {status.name: int(kv.value) for status in collector.messages(diag)[-1].status
                    for kv in status.values if kv.key == "dropped_stamp_outlier"}
        assert injected or any(sensor_name in n and c > 0 for n, c in outliers.items()), \
            f"an allowed sender's frames reach the time base: {outliers}"
        refused_anchors = {status.name: int(kv.value) for status in collector.messages(diag)[-1].status
                           for kv in status.values if kv.key == "dropped_anchor_refused"}
        assert any("heartbeat" in n and c > 0 for n, c in refused_anchors.items()), \
            f"an allowed sender's heartbeats reach the time base, which refuses their anchor: {refused_anchors}"
        assert all(abs(d) < 5 for d in late_stamps), f"stamps moved by a heartbeat: {late_stamps[:3]}"
        assert not any(counts.values()), counts


@pytest.mark.parametrize("allowed", ["default", "any"])
def test_a_foreign_host_cannot_inject_frames_or_heartbeats(collector, processes, tmp_path, allowed):
    source = own_lan_address()
    if source is None:
        pytest.skip("this machine has no non-loopback IPv4 address to send from")
    port, heartbeat_port = 42801, 42805
    params = {"window_id": 13, "imu": False, "use_sim_time": False, "heartbeat_port": heartbeat_port,
              "heartbeat_multicast": False}
    if allowed == "any":
        params["allowed_senders"] = ["any"]
    sc = Scenario(processes, tmp_path, [sensor(801, 1, 2, port=port, hz=20)],
                  sim_args=["--window-id", "13", "--no-heartbeat"], bridge_params=params)
    img = collector.subscribe(Image, "/rflysim/sensor801/img_rgb")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    collector.wait_for(img, 3, timeout=30)
    during = len(collector.messages(img))
    inject(source, port, heartbeat_port)
    judge_injection(collector, img, diag, during, "sensor801",
                    refused_log="only 127.0.0.1, 127.0.0.0/8 may send here" if allowed == "default" else None,
                    bridge_output=sc.bridge_output)


def test_sensors_sharing_a_port_are_refused_at_start(processes, tmp_path):
    cfg = tmp_path / "Config.json"
    cfg.write_text(json.dumps({"VisionSensors": [sensor(811, 1, 2, port=42811), sensor(812, 3, 2, port=42811)]}))
    bridge = processes.start([executable("bridge"), "--ros-args", "-p", f"rflysim_config:={cfg}"])
    assert bridge.wait(timeout=10) != 0
    assert "sensors 811 and 812 both use UDP port 42811" in processes.output(bridge)


def test_a_port_already_taken_is_a_clear_error(processes, tmp_path):
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("0.0.0.0", 42821))
    try:
        cfg = tmp_path / "Config.json"
        cfg.write_text(json.dumps({"VisionSensors": [sensor(821, 1, 2, port=42821)]}))
        bridge = processes.start([executable("bridge"), "--ros-args", "-p", f"rflysim_config:={cfg}",
                                  "-p", "imu:=false", "-p", "send_requests:=false"])
        deadline = time.monotonic() + 10
        while "already in use" not in processes.output(bridge) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "UDP port 42821 is already in use on this host" in processes.output(bridge)
    finally:
        holder.close()
