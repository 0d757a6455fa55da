"""One corrupt sample must not move the stamps of any other: a NaN or absurd
sim time (IMU, frame, true state) is dropped and counted, and the samples
around it keep the shared time base."""

import math
import socket
import struct
import time

from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import Image, Imu

from rflysim_scenario import Scenario, sensor, stamp_seconds

IMU_PORT = 31000  # copter 1 (RflySim wire protocol: CopterSim IMU)


def test_bad_sim_times_are_dropped_and_change_no_other_stamp(collector, processes, tmp_path):
    port = 42831
    sc = Scenario(processes, tmp_path, [sensor(831, 1, 2, port=port, hz=20)],
                  sim_args=["--window-id", "10", "--no-heartbeat"],
                  bridge_params={"window_id": 10, "use_sim_time": False, "heartbeat_port": 42835})
    imu = collector.subscribe(Imu, "/rflysim/imu")
    img = collector.subscribe(Image, "/rflysim/sensor831/img_rgb")
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")
    collector.wait_for(imu, 20, timeout=30)
    collector.wait_for(img, 2)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bad_times = [math.nan, math.inf, -5.0, 1e300, 1e12]
    payload = bytes(32 * 24 * 3)
    for i, t in enumerate(bad_times):
        s.sendto(struct.pack("<2id6f", 1234567898, 10_000 + i, t, 0, 0, -9.8, 0, 0, 0), ("127.0.0.1", IMU_PORT))
        s.sendto(struct.pack("<6id", 1234567893, 32 + len(payload), 0, 1, 9_000_000 + i, 0, t) + payload,
                 ("127.0.0.1", port))
        time.sleep(0.05)
    n_imu, n_img = len(collector.messages(imu)), len(collector.messages(img))
    collector.wait_for(imu, n_imu + 100, timeout=10)
    collector.wait_for(img, n_img + 10, timeout=10)
    now = time.time()
    for key in (imu, img):
        for m in collector.messages(key):
            age = now - stamp_seconds(m.header)
            assert -1.0 < age < 60.0, f"{key}: a stamp {age:.3g} s from the wall clock"
    time.sleep(1.2)
    drops = {}
    for status in collector.messages(diag)[-1].status:
        for kv in status.values:
            if kv.key == "dropped_bad_stamp":
                drops[status.name] = int(kv.value)
    assert any("imu" in n and c == len(bad_times) for n, c in drops.items()), drops
    # A frame's NaN or infinite stamp is refused by the reassembler already (bad_length); the finite ones here.
    assert any("sensor831" in n and c >= 3 for n, c in drops.items()), drops
    assert sc.bridge.poll() is None
