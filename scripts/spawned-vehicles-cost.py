"""What spawned vehicles cost the scene node: its resident memory and the
time a fresh ROS 2 participant takes to discover every topic, with N
vehicles spawned (N = 10, 100, 1000 by default). RflySim3D is a UDP sink
here (a spawn is answered as soon as its datagram left), so the figures are
the node's own.

    scripts/spawned-vehicles-cost.sh [N ...]     (sets up the environment)
"""

import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import rclpy  # noqa: E402
from conftest import call, executable  # noqa: E402
from simulation_interfaces.msg import Result  # noqa: E402
from simulation_interfaces.srv import SpawnEntity  # noqa: E402

WINDOW, STATUS_PORT = 15, 43290
DISCOVERER = """
import sys, time, rclpy
rclpy.init()
n = rclpy.create_node("discoverer")
want, t0 = int(sys.argv[1]), time.monotonic()
while time.monotonic() - t0 < 120:
    rclpy.spin_once(n, timeout_sec=0.05)
    have = sum(1 for name, _ in n.get_topic_names_and_types() if name.startswith("/rflysim/uav"))
    if have >= want:
        print(f"{time.monotonic() - t0:.2f}")
        break
else:
    print("timeout")
"""


def resident_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def topics_per_vehicle(node):
    names = [name for name, _ in node.get_topic_names_and_types() if name.startswith("/rflysim/uav1000/")]
    return len(names)


def measure(count, node):
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 20010 + WINDOW))
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "Config.json"
        cfg.write_text(json.dumps({"VisionSensors": []}))
        args = [str(executable("scene_node")), "--ros-args", "-p", f"rflysim_config:={cfg}", "-p",
                f"window_id:={WINDOW}", "-p", f"status_port:={STATUS_PORT}", "-p", "status_multicast:=false",
                "-p", "first_spawn_id:=1000", "-p", "max_scene_entities:=20000",
                "-p", "max_spawned_vehicle_topics:=10000"]
        scene = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        try:
            time.sleep(2.0)
            before = resident_kib(scene.pid)
            t0 = time.monotonic()
            for i in range(count):
                r = SpawnEntity.Request(name=f"v{i}")
                r.entity_resource.uri = "rflysim://vehicle/3"
                r.initial_pose.pose.position.z = 5.0
                assert call(node, SpawnEntity, "/spawn_entity", r, timeout=30).result.result == Result.RESULT_OK
            spawning = time.monotonic() - t0
            time.sleep(2.0)
            after = resident_kib(scene.pid)
            per_vehicle = topics_per_vehicle(node)
            every = subprocess.run([sys.executable, "-c", DISCOVERER, str(count * per_vehicle)],
                                   capture_output=True, text=True, timeout=180).stdout.strip()
            return before, after, spawning, per_vehicle, every
        finally:
            scene.terminate()
            scene.wait(timeout=10)
            sink.close()


def main(counts):
    rclpy.init()
    node = rclpy.create_node("spawner")
    print("| vehicles spawned | scene node RSS before → after | per vehicle | topics per vehicle | "
          "spawn calls | a fresh participant sees every vehicle topic |")
    print("|---:|---|---:|---:|---:|---:|")
    for count in counts:
        before, after, spawning, per_vehicle, every = measure(count, node)
        print(f"| {count} | {before / 1024:.1f} → {after / 1024:.1f} MiB | {(after - before) / count:.0f} KiB | "
              f"{per_vehicle} | {spawning:.1f} s | {every} s |", flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 100, 1000])
