"""IMU timing while cameras decode: the built-in emulator streams the IMU at
200 Hz, alone and then next to two 1920×1080 PNG cameras at 30 Hz (decoded by
the bridge: ~tens of ms of CPU a frame); an rclpy subscriber measures the IMU's
latency (receipt − stamp) and the gaps between samples. The IMU-alone run is
the reference, measured in the same invocation.

    source .cache/env.sh && python3 scripts/imu_jitter.py [--seconds 15] [--bin-dir target/release]
Prints figures; asserts nothing.
"""

import argparse
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def camera(seq, port):
    return {"SeqID": seq, "TypeID": 1, "TargetCopter": 1, "TargetMountType": 0, "DataWidth": 1920,
            "DataHeight": 1080, "DataCheckFreq": 30, "SendProtocol": [3, 127, 0, 0, 1, port, 0, 0],
            "CameraFOV": 90, "SensorPosXYZ": [0, 0, 0], "SensorAngEular": [0, 0, 0], "otherParams": [0] * 8}


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float("nan")


def run(bin_dir, sensors, seconds, window_id):
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image, Imu

    tmp = Path(tempfile.mkdtemp())
    cfg = tmp / "Config.json"
    cfg.write_text(json.dumps({"VisionSensors": sensors}))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    sim = subprocess.Popen([bin_dir / "rflysim_sim", "--config", cfg, "--copters", "1", "--window-id", str(window_id),
                            "--reuse-frames", "--stats", "0"], **quiet)
    bridge = subprocess.Popen([bin_dir / "bridge", "--ros-args", "-p", f"rflysim_config:={cfg}",
                               "-p", f"window_id:={window_id}"], **quiet)
    node = rclpy.create_node(f"imu_jitter_{window_id}")
    lock = threading.Lock()
    imu, frames = [], [0]

    def on_imu(m):
        now = time.time()
        with lock:
            imu.append((now, now - (m.header.stamp.sec + m.header.stamp.nanosec * 1e-9)))

    def on_image(_m):
        with lock:
            frames[0] += 1

    qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.BEST_EFFORT)
    node.create_subscription(Imu, "/rflysim/imu", on_imu, qos)
    for s in sensors:
        node.create_subscription(Image, f"/rflysim/sensor{s['SeqID']}/img_rgb", on_image, qos)
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    spin = threading.Thread(target=lambda: [executor.spin_once(timeout_sec=0.05) for _ in iter(lambda: running[0], False)])
    running = [True]
    spin.start()
    time.sleep(4)  # discovery, first frames
    with lock:
        imu.clear()
        frames[0] = 0
    t0 = time.time()
    time.sleep(seconds)
    with lock:
        samples = list(imu)
        n_frames = frames[0]
    running[0] = False
    spin.join()
    node.destroy_node()
    for p in (bridge, sim):
        p.send_signal(signal.SIGINT)
        p.wait(timeout=5)
    gaps = [(b[0] - a[0]) * 1e3 for a, b in zip(samples, samples[1:])]
    lat = [s[1] * 1e3 for s in samples]
    return {
        "imu_hz": len(samples) / seconds,
        "camera_fps": n_frames / seconds,
        "lat_p50": percentile(lat, 50), "lat_p99": percentile(lat, 99), "lat_max": max(lat, default=float("nan")),
        "gap_p99": percentile(gaps, 99), "gap_max": max(gaps, default=float("nan")),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--bin-dir", type=Path,
                    default=Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release")
    a = ap.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", "52")
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    rclpy.init()
    rows = [("IMU alone (reference)", run(a.bin_dir, [], a.seconds, 18)),
            ("IMU + two 1080p PNG cameras @ 30 Hz", run(a.bin_dir, [camera(901, 42901), camera(902, 42902)], a.seconds, 18))]
    rclpy.shutdown()
    print(f"IMU timing, {a.seconds:.0f} s windows, binaries {a.bin_dir}, load {os.getloadavg()[0]:.2f}")
    print("| case | IMU Hz | camera frames/s | latency p50 / p99 / max (ms) | gap p99 / max (ms) |")
    print("|---|---:|---:|---|---|")
    for name, r in rows:
        print(f"| {name} | {r['imu_hz']:.1f} | {r['camera_fps']:.1f} | {r['lat_p50']:.2f} / {r['lat_p99']:.2f} / {r['lat_max']:.2f}"
              f" | {r['gap_p99']:.2f} / {r['gap_max']:.2f} |")


if __name__ == "__main__":
    main()
