#!/usr/bin/env python3
"""What spawned vehicles cost the RflySim scene node, and every other ROS 2
participant of the domain.

For each count N of --counts and for `max_spawned_vehicle_topics` at its
default (100) and set to N (every spawned vehicle with topics of its own,
which shows what the bound saves), the script starts a fresh scene node
(--scene-node) on a window of its own with a stand-in for RflySim3D (a UDP
socket where RflySim3D listens, 20010 + window, that takes the spawn
datagrams), spawns N vehicles through /spawn_entity (--batch calls in
flight at a time; every call must succeed) and measures:

- how long spawning took;
- the scene node's resident memory (VmRSS of /proc/PID/status) before
  spawning and after (once its topics are all seen and 3 s have passed);
- its topics under /rflysim/uav (one DDS endpoint each), as this script's
  own ROS node sees them (get_topic_names_and_types);
- discovery start-up: a new rclpy process, started after the spawns, polls
  get_topic_names_and_types until its graph holds every one of those
  topics; the time from its rclpy.init() (before its DDS participant) to
  then, and that process's VmRSS then (--probes of them, one after the
  other: median and range).

It prints a markdown table; a step that does not finish within --timeout
seconds is reported as not measured, with why. Figures depend on the
machine and on what else runs on it (the load average is printed).

Run, with the environment of scripts/setup.sh sourced and a built scene node:

    $RFLYSIM_PYTHON scripts/measure-spawned.py
    $RFLYSIM_PYTHON scripts/measure-spawned.py --counts 10,100 --scene-node path/to/scene_node

It uses ROS domain --domain (77) with discovery on this host only: keep other
nodes off that domain, or they are counted too. The window's port
(20010 + --window) and --status-port must be free.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BOUND = 100  # max_spawned_vehicle_topics' default
TOPICS_PER_VEHICLE = 4  # collision, scene/odom, scene/rays, label
PREFIX = "/rflysim/uav"
FIRST_SPAWN_ID = 1000


def rss_mib(pid):
    """VmRSS and VmHWM (its peak) of process `pid`, in MiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(line.split()[1]) / 1024
    return values


def probe(args):
    """A new participant: how long until its graph holds every topic listed in
    --probe's file; prints one line of JSON."""
    began = time.monotonic()
    want = set(json.loads(Path(args.probe).read_text()))
    import rclpy

    created = time.monotonic()  # its DDS participant comes with rclpy.init() or its first node
    rclpy.init()
    node = rclpy.create_node("spawn_cost_probe")
    rss_created = rss_mib(os.getpid())["VmRSS"]
    deadline = created + args.timeout
    seen = set()
    while True:
        seen = {t for t, _ in node.get_topic_names_and_types() if t in want}
        if len(seen) == len(want) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    done = time.monotonic()
    print(json.dumps({"complete": len(seen) == len(want), "seen": len(seen), "want": len(want),
                      "since_init_s": done - created, "since_start_s": done - began,
                      "rss_created_mib": rss_created, "rss_done_mib": rss_mib(os.getpid())["VmRSS"]}), flush=True)
    node.destroy_node()
    rclpy.shutdown()


class FakeRflySim3D:
    """Takes what the scene node sends to RflySim3D (20010 + window) and counts
    the datagrams by length (a spawn is one 104-byte SOut2SimulatorSimpleTime)."""

    def __init__(self, window):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.bind(("127.0.0.1", 20010 + window))
        self.sock.settimeout(0.2)
        self.by_length = {}
        self.running = True
        self.thread = threading.Thread(target=self._take, daemon=True)
        self.thread.start()

    def _take(self):
        while self.running:
            try:
                d = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.by_length[len(d)] = self.by_length.get(len(d), 0) + 1

    def close(self):
        self.running = False
        self.thread.join(timeout=2)
        self.sock.close()


def port_free(port, kind):
    s = socket.socket(socket.AF_INET, kind)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


class Observer:
    """This script's ROS node, spun in the background (service answers)."""

    def __init__(self):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        rclpy.init()
        self.rclpy = rclpy
        self.node = rclpy.create_node("spawn_cost_observer")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        while self.running:
            self.executor.spin_once(timeout_sec=0.05)

    def uav_topics(self):
        return sorted(t for t, _ in self.node.get_topic_names_and_types() if t.startswith(PREFIX))

    def close(self):
        self.running = False
        self.thread.join(timeout=2)
        self.node.destroy_node()
        self.rclpy.shutdown()


def wait_done(futures, deadline):
    while not all(f.done() for f in futures) and time.monotonic() < deadline:
        time.sleep(0.005)
    return all(f.done() for f in futures)


def spawn_all(client, n, batch, deadline):
    """Spawns n vehicles, `batch` calls in flight at a time. Returns (seconds, error or None)."""
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import SpawnEntity

    def request(i):
        r = SpawnEntity.Request(name=f"v{i}", allow_renaming=False)
        r.entity_resource.uri = "rflysim://vehicle/3"
        p = r.initial_pose.pose
        p.position.x, p.position.y, p.position.z = 2.0 * (i % 100), 2.0 * (i // 100), 5.0
        p.orientation.w = 1.0
        return r

    began = time.monotonic()
    for start in range(0, n, batch):
        names = range(start, min(n, start + batch))
        futures = [client.call_async(request(i)) for i in names]
        # A call gets at most 60 s; the whole spawning, the step's deadline.
        if not wait_done(futures, min(deadline, time.monotonic() + 60.0)):
            lost = [f"v{i}" for i, f in zip(names, futures) if not f.done()]
            return time.monotonic() - began, f"no answer to the spawn of {', '.join(lost)} (after {start} spawned)"
        for i, f in zip(names, futures):
            r = f.result()
            if r.result.result != Result.RESULT_OK:
                return time.monotonic() - began, f"spawn of v{i} refused: {r.result.result} {r.result.error_message}"
    return time.monotonic() - began, None


def entities_in_scene(obs, timeout):
    from simulation_interfaces.srv import GetEntities

    client = obs.node.create_client(GetEntities, "/get_entities")
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            return None
        time.sleep(0.2)
        f = client.call_async(GetEntities.Request())
        if not wait_done([f], time.monotonic() + timeout):
            return None
        return sum(1 for e in f.result().entities if e.startswith("v"))
    finally:
        obs.node.destroy_client(client)


def wait_topics(obs, want_count, deadline, stable_s=0.0):
    """The /rflysim/uav topics once there are want_count of them (or, with
    want_count None, once their number has not changed for stable_s s);
    (topics, reached)."""
    last, since = None, time.monotonic()
    began = since
    while True:
        topics = obs.uav_topics()
        now = time.monotonic()
        if want_count is not None and len(topics) >= want_count:
            return topics, len(topics) == want_count
        if want_count is None:
            if len(topics) != last:
                last, since = len(topics), now
            elif now - since >= stable_s and (topics or now - began > 10.0):
                return topics, True
        if now > deadline:
            return topics, False
        time.sleep(0.2)


def end_process(p):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def measure(args, obs, n, bound, workdir):
    """One row: N spawned with max_spawned_vehicle_topics `bound` (None: its default)."""
    from simulation_interfaces.srv import SpawnEntity

    row = {"n": n, "bound": bound if bound is not None else DEFAULT_BOUND,
           "bound_set": bound is not None, "notes": [], "load": os.getloadavg()[0]}
    with_topics = min(n, row["bound"])
    row["with_topics"] = with_topics
    cfg = workdir / "Config.json"
    cfg.write_text('{"VisionSensors": []}')
    cmd = [str(args.scene_node), "--ros-args", "-p", f"rflysim_config:={cfg}", "-p", f"window_id:={args.window}",
           "-p", f"status_port:={args.status_port}", "-p", "status_multicast:=false",
           "-p", f"first_spawn_id:={FIRST_SPAWN_ID}"]
    if bound is not None:
        cmd += ["-p", f"max_spawned_vehicle_topics:={bound}"]
    log_path = workdir / f"scene_node-{n}-{row['bound']}.log"
    fake = FakeRflySim3D(args.window)
    log = open(log_path, "w")
    node = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    client = obs.node.create_client(SpawnEntity, "/spawn_entity")
    try:
        step = time.monotonic() + args.timeout
        if not client.wait_for_service(timeout_sec=args.timeout):
            row["notes"].append(f"no /spawn_entity within {args.timeout:.0f} s")
            return row
        # Its own topics (vehicle_ids') and memory once it has settled.
        base, _ = wait_topics(obs, None, step, stable_s=3.0)
        row["base_topics"] = len(base)
        time.sleep(1.0)
        row["rss_before"] = rss_mib(node.pid)["VmRSS"]

        time.sleep(0.2)  # a fresh client: the server matches it a moment later
        spent, error = spawn_all(client, n, args.batch, time.monotonic() + args.timeout)
        row["spawn_s"] = spent
        if error:
            row["notes"].append(error)
            return row
        want = len(base) + TOPICS_PER_VEHICLE * with_topics
        seen_from = time.monotonic()
        topics, reached = wait_topics(obs, want, time.monotonic() + args.timeout)
        row["topics"] = len(topics)
        row["observer_s"] = time.monotonic() - seen_from
        if not reached:
            row["notes"].append(f"{len(topics)} topics under {PREFIX}, not {want}, within {args.timeout:.0f} s "
                                "of the last spawn")
            return row
        in_scene = entities_in_scene(obs, 30.0)
        if in_scene != n:
            row["notes"].append(f"/get_entities lists {in_scene} of the {n} spawned")
        time.sleep(3.0)
        if node.poll() is not None:
            row["notes"].append(f"the scene node exited ({node.returncode})")
            return row
        mem = rss_mib(node.pid)
        row["rss_after"], row["rss_peak"] = mem["VmRSS"], mem["VmHWM"]

        want_file = workdir / "want.json"
        want_file.write_text(json.dumps(topics))
        row["probes"] = []
        for _ in range(args.probes):
            time.sleep(1.0)  # the previous one has left the graph
            try:
                out = subprocess.run([sys.executable, __file__, "--probe", str(want_file),
                                      "--timeout", str(args.timeout)],
                                     capture_output=True, text=True, timeout=args.timeout + 60)
                got = json.loads(out.stdout.strip().splitlines()[-1])
            except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError) as e:
                row["notes"].append(f"new participant: no answer ({type(e).__name__})")
                break
            row["probes"].append(got)
            if not got["complete"]:
                row["notes"].append(f"new participant saw {got['seen']} of {got['want']} topics "
                                    f"within {args.timeout:.0f} s")
                break
        if node.poll() is not None:
            row["notes"].append(f"the scene node exited ({node.returncode})")
    finally:
        obs.node.destroy_client(client)
        end_process(node)
        log.close()
        fake.close()
        row["datagrams_104"] = fake.by_length.get(104, 0)
        if "spawn_s" in row and row["datagrams_104"] != n:
            row["notes"].append(f"RflySim3D's port got {row['datagrams_104']} spawn datagrams, not {n}")
        text = log_path.read_text(errors="replace")
        if "panicked" in text:
            row["notes"].append(f"the scene node panicked (log {log_path})")
        if node.returncode not in (0, -signal.SIGINT, None):
            row["notes"].append(f"the scene node's exit status: {node.returncode}")
    return row


def median(values):
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def table(rows):
    out = ["| spawned | `max_spawned_vehicle_topics` | with topics | topics under `/rflysim/uav` "
           "| spawning (s) | scene node RSS before → after (MiB) | growth (MiB) "
           "| new participant: all topics seen after (s), median (min–max) | new participant RSS (MiB) |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        before, after = r.get("rss_before"), r.get("rss_after")
        growth = after - before if before is not None and after is not None else None
        probes = r.get("probes") or []
        complete = probes and all(p["complete"] for p in probes)
        times = sorted(p["since_init_s"] for p in probes) if complete else []
        rss = sorted(p["rss_done_mib"] for p in probes) if complete else []
        seen = f"{median(times):.2f} ({times[0]:.2f}–{times[-1]:.2f})" if times else "—"
        bound = f"{r['bound']}" + ("" if r["bound_set"] else " (default)")
        out.append(f"| {r['n']} | {bound} | {r['with_topics']} | {r.get('topics', '—')} "
                   f"| {fmt(r.get('spawn_s'), '.2f')} | {fmt(before, '.1f')} → {fmt(after, '.1f')} "
                   f"| {fmt(growth, '+.1f')} | {seen} | {fmt(median(rss) if rss else None, '.1f')} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scene-node", type=Path, default=ROOT / "target" / "release" / "scene_node")
    ap.add_argument("--counts", default="10,100,1000", help="vehicles to spawn, comma-separated")
    ap.add_argument("--batch", type=int, default=8,
                    help="spawn calls in flight at a time (at most 10: a service keeps the last 10 requests)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds each step may take")
    ap.add_argument("--window", type=int, default=9, help="RflySim3D window id (its port 20010 + window)")
    ap.add_argument("--status-port", type=int, default=44610)
    ap.add_argument("--domain", type=int, default=77, help="ROS_DOMAIN_ID of every process")
    ap.add_argument("--probes", type=int, default=5, help="new participants started, one after the other, per row")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        probe(args)
        return
    if not args.scene_node.exists():
        sys.exit(f"{args.scene_node} is missing: build it (cargo build --release) or pass --scene-node")
    if not 1 <= args.batch <= 10:
        sys.exit("--batch: 1 to 10")
    if not port_free(20010 + args.window, socket.SOCK_DGRAM) or not port_free(args.status_port, socket.SOCK_DGRAM):
        sys.exit(f"UDP port {20010 + args.window} or {args.status_port} is in use: pick --window/--status-port")
    os.environ["ROS_DOMAIN_ID"] = str(args.domain)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    counts = [int(c) for c in args.counts.split(",") if c.strip()]

    logs = Path(tempfile.mkdtemp(prefix="measure-spawned-"))
    obs = Observer()
    rows = []
    try:
        for n in counts:
            for bound in (None, n) if n else (None,):
                row = measure(args, obs, n, bound, logs)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
                time.sleep(2.0)  # the previous node's participant leaves the graph
    finally:
        obs.close()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    loads = ", ".join(f"{r['load']:.1f}" for r in rows)
    print(f"\n{os.cpu_count()} cores; scene node {args.scene_node}; spawn calls {args.batch} in flight at a time; "
          f"load average at each row's start: {loads}; the scene nodes' logs in {logs}\n")
    print(table(rows))
    notes = [(r, note) for r in rows for note in r["notes"]]
    if notes:
        print("\nNot measured, or odd:")
        for r, note in notes:
            print(f"- {r['n']} spawned, bound {r['bound']}: {note}")
    created = [p["rss_created_mib"] for r in rows for p in r.get("probes") or []]
    print(f"\nNew participant ({args.probes} per row, one after the other): from rclpy.init() until its "
          "graph holds every topic under /rflysim/uav; its RSS then (median). Right after its node's creation "
          f"its RSS was {min(created, default=0):.1f}–{max(created, default=0):.1f} MiB.")
    sys.exit(1 if notes else 0)


if __name__ == "__main__":
    main()
