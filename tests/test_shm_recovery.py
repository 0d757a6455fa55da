"""Shared memory recovers from what the other side does to it: a reader that
died holding the slot, a region removed and created again by a restarted
simulator, a region shrunk under the bridge (which once meant SIGBUS)."""

import os
import time

from sensor_msgs.msg import Image

from rflysim_scenario import Scenario, sensor, stamp_seconds


def test_shared_memory_survives_a_dead_reader_a_new_region_and_a_shrunk_one(collector, processes, tmp_path):
    seq = 841
    path = f"/dev/shm/RflySim3DImg_{seq}"
    sc = Scenario(processes, tmp_path, [sensor(seq, 1, 0, hz=30)], sim_args=["--window-id", "11"],
                  bridge_params={"window_id": 11, "imu": False})
    img = collector.subscribe(Image, f"/rflysim/sensor{seq}/img_rgb")

    def more_frames(n, timeout=10):
        have = len(collector.messages(img))
        msgs = collector.wait_for(img, have + n, timeout=timeout)
        for m in msgs[have:]:
            assert bytes(m.data) == sc.rendered_at(seq, stamp_seconds(m.header)), "a whole frame"

    more_frames(3, timeout=30)
    # A reader killed in the middle of its copy leaves the flag at 3 (reading).
    with open(path, "r+b") as f:
        f.write(b"\x03")
    more_frames(10)
    inode = os.stat(path).st_ino
    # The simulator closes (its regions go) and starts again: a new file.
    sc.sim.terminate()
    assert sc.sim.wait(timeout=5) == 0
    assert not os.path.exists(path)
    time.sleep(0.5)
    sc.sim = processes.start(sc.sim_argv, name="rflysim_sim")
    more_frames(10)
    assert os.stat(path).st_ino != inode
    # Shrunk under the bridge: reading past the end of a mapped file is SIGBUS
    # (for the emulator's writer too, which this test is not about).
    os.truncate(path, 9)
    time.sleep(1.0)
    assert sc.bridge.poll() is None, f"the bridge died: {sc.bridge_output()[-2000:]}"
    sc.sim.kill()
    sc.sim.wait()
    sc.sim = processes.start(sc.sim_argv, name="rflysim_sim")
    more_frames(10)
    assert sc.bridge.poll() is None
    out = sc.bridge_output()
    assert "was replaced, removed or shrunk" in out
