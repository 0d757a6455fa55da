"""Soak test of the RflySim bridge: every sensor of config/Config.json plus one
1920x1080 RGB camera, streamed by the built-in emulator at each sensor's own
rate for --duration seconds, with simulator restarts (frame ids and simulation
time back to zero) every --restart-every seconds.

Prints, from a ROS 2 subscriber that is not the bridge:
- the bridge's RSS every second (total, private, shared memory) and its growth
  from the second minute (the first one fills Fast DDS's shared-memory segment
  and the allocator's pools) to the last minute, by floor, mean and peak, and
  the same for the heap in use that the bridge reports in /diagnostics; what
  is judged is the trend over the second half of the run (a line fitted to
  the per-window resident peaks and heap floors): warm-up fills caches and
  then stops, a leak goes on;
- messages per topic per 10-s window; a stream is "lost" when a window after
  the warm-up holds none of its messages;
- for every restart and stream: the arrival gap across the restart in the
  stream's periods (frames missed = gap / period - 1, rounded), the time from
  the restart to the first message, and the step of header.stamp across it
  (a time base that did not re-anchor shows as a step far from the gap);
and a verdict. Exit status 0 only when every check holds."""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, Imu, PointCloud2
from std_msgs.msg import Float32

ROOT = Path(__file__).resolve().parent.parent
WINDOW_S = 10.0
# The trend over the second half of the run, in % of the level per hour.
RSS_SLOPE_LIMIT_PCT_H = 2.0  # resident peak
HEAP_SLOPE_LIMIT_PCT_H = 1.0  # floor of the heap in use
IMU_RATE_HZ = 200.0
# A restart is recovered "within one frame" when at most one frame of each
# stream is missing across it.
MAX_FRAMES_MISSED = 1
STALE_S = 0.5
STALE_HORIZON_S = 10.0

MAIN_TOPIC = {
    1: "img_rgb", 2: "img_depth", 3: "img_gray", 4: "img_Segmentation", 8: "fisheye", 9: "img_cine",
    40: "img_Infrared_Gray", 41: "img_Infrared", 20: "vehicle_lidar", 21: "global_lidar",
    22: "livox_lidar", 23: "mid360_lidar", 7: "Depth_Cloud", 5: "distance",
}
MSG_TYPE = {
    "sensor_msgs/msg/Image": Image,
    "sensor_msgs/msg/CompressedImage": CompressedImage,
    "sensor_msgs/msg/CameraInfo": CameraInfo,
    "sensor_msgs/msg/PointCloud2": PointCloud2,
    "sensor_msgs/msg/Imu": Imu,
    "nav_msgs/msg/Odometry": Odometry,
    "std_msgs/msg/Float32": Float32,
}


def soak_config(shipped, width, height, rate_hz, out_path):
    """The shipped config's sensors (rates kept) plus one large JPEG RGB camera."""
    cfg = json.loads(Path(shipped).read_text())
    sensors = cfg["VisionSensors"]
    seq = max(s["SeqID"] for s in sensors) + 1
    big = dict(next(s for s in sensors if s["TypeID"] == 1 and s["SendProtocol"][0] != 0))
    big.update(SeqID=seq, DataWidth=width, DataHeight=height, DataCheckFreq=rate_hz,
               SendProtocol=[1, 127, 0, 0, 1, 0, 0, 0], CameraFOV=90)
    sensors.append(big)
    Path(out_path).write_text(json.dumps(cfg, indent=1))
    return sensors


RSS_SAMPLE_S = 1.0
RSS_FIELDS = ("VmRSS", "RssAnon", "RssFile", "RssShmem")


def rss_kib(pid):
    """VmRSS and its parts (KiB): private memory, mapped files, shared memory
    (Fast DDS's shared-memory segment is there)."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in RSS_FIELDS:
            values[key] = int(line.split()[1])
    if "VmRSS" not in values:
        raise RuntimeError(f"no VmRSS for pid {pid}")
    return values


class Stream:
    def __init__(self, topic, period_s, expected):
        self.topic, self.period_s, self.expected = topic, period_s, expected
        self.arrivals = []  # (wall-clock arrival, header stamp in s or None)
        self.windows = []
        self.in_window = 0

    def close_window(self):
        self.windows.append(self.in_window)
        self.in_window = 0


def stamp_of(msg):
    header = getattr(msg, "header", None)
    return None if header is None else header.stamp.sec + header.stamp.nanosec * 1e-9


def drain(pipe, sink, restarts, log_file):
    for raw in iter(pipe.readline, b""):
        line = raw.decode(errors="replace")
        log_file.write(line)
        if "restart: frame ids" in line:
            restarts.append(time.time())
        sink.append(line)


def recovery(stream, t_restart):
    """How the stream came through a restart at wall time t_restart."""
    before = [a for a in stream.arrivals if a[0] < t_restart]
    after = [a for a in stream.arrivals if t_restart <= a[0] < t_restart + STALE_HORIZON_S]
    if not before or not after:
        return None
    t0, s0 = before[-1]
    # A message stamped far from its arrival carries the pre-restart anchor:
    # published, but with a wrong stamp (not recovered).
    stale = 0
    while stale < len(after) and after[stale][1] is not None and abs(after[stale][0] - after[stale][1]) > STALE_S:
        stale += 1
    if stale == len(after):
        return {"gap_ms": float("inf"), "not_recovered": 10**9, "stale": stale, "first_ms": float("inf")}
    t1, s1 = after[stale]
    # Stamps say which frames were published; arrivals can bunch behind a
    # delay without any frame missing. Headerless streams fall back to arrivals.
    span = t1 - t0 if s0 is None or s1 is None else s1 - s0
    return {"gap_ms": (t1 - t0) * 1e3, "not_recovered": max(0, round(span / stream.period_s) - 1),
            "stale": stale, "first_ms": (t1 - t_restart) * 1e3}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=600.0, help="seconds of soak (default 600)")
    ap.add_argument("--restart-every", type=float, default=110.0, help="simulator restart period, s (0: none)")
    ap.add_argument("--bin-dir", default=os.environ.get("BIN_DIR", str(ROOT / "target" / "release")))
    ap.add_argument("--config", default=str(ROOT / "config" / "Config.json"))
    ap.add_argument("--big-width", type=int, default=1920)
    ap.add_argument("--big-height", type=int, default=1080)
    ap.add_argument("--big-rate", type=int, default=30, help="Hz of the added large camera")
    ap.add_argument("--warmup", type=float, default=20.0, help="s before windows count")
    ap.add_argument("--rss-baseline", type=float, default=60.0,
                    help="s after the start at which the RSS baseline minute begins (default 60)")
    ap.add_argument("--render-every-frame", action="store_true",
                    help="the emulator renders every frame (default: renders once per sensor and resends it "
                         "with new stamps and frame ids, --reuse-frames, so that a 2-core machine sustains "
                         "the configured rates; the bridge's work is the same)")
    ap.add_argument("--reliable", action="store_true", help="reliable subscriptions (default best effort)")
    ap.add_argument("--log-dir", default=None, help="where the emulator's and bridge's output go")
    ap.add_argument("--no-allocator-caches", action="store_true",
                    help="turn glibc's per-thread caches off in the bridge (default: on, as users run it; the "
                         "blocks they keep count as in use and fill over tens of minutes, which the trend of "
                         "the second half tells from a leak)")
    args = ap.parse_args()

    bin_dir = Path(args.bin_dir)
    work = Path(tempfile.mkdtemp(prefix="rflysim_soak_"))
    log_dir = Path(args.log_dir) if args.log_dir else work
    log_dir.mkdir(parents=True, exist_ok=True)
    cfg_path = work / "Config.soak.json"
    sensors = soak_config(args.config, args.big_width, args.big_height, args.big_rate, cfg_path)
    print(f"config: {cfg_path} ({len(sensors)} sensors; added SeqID {sensors[-1]['SeqID']}: "
          f"{args.big_width}x{args.big_height} JPEG RGB at {args.big_rate} Hz); logs in {log_dir}")

    sim_cmd = [str(bin_dir / "rflysim_sim"), "--config", str(cfg_path), "--stats", "10"]
    if not args.render_every_frame:
        sim_cmd.append("--reuse-frames")
    if args.restart_every > 0:
        sim_cmd += ["--restart-every", str(args.restart_every)]
    bridge_cmd = [str(bin_dir / "bridge"), "--ros-args", "-p", f"rflysim_config:={cfg_path}"]
    restarts, sim_out, bridge_out = [], [], []
    sim_log = open(log_dir / "rflysim_sim.log", "w")
    bridge_log = open(log_dir / "bridge.log", "w")
    children = []
    for cmd, sink, logf, marks in ((sim_cmd, sim_out, sim_log, restarts), (bridge_cmd, bridge_out, bridge_log, [])):
        env = dict(os.environ)
        if cmd is bridge_cmd and args.no_allocator_caches:
            env["GLIBC_TUNABLES"] = "glibc.malloc.tcache_count=0"
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        threading.Thread(target=drain, args=(p.stdout, sink, marks, logf), daemon=True).start()
        children.append(p)
    sim, bridge = children

    rclpy.init()
    node = rclpy.create_node("rflysim_soak")
    reliability = ReliabilityPolicy.RELIABLE if args.reliable else ReliabilityPolicy.BEST_EFFORT
    qos = QoSProfile(depth=10, reliability=reliability)
    streams = {}
    for s in sensors:
        topic = f"/rflysim/sensor{s['SeqID']}/{MAIN_TOPIC[s['TypeID']]}"
        streams[topic] = Stream(topic, 1.0 / s["DataCheckFreq"], True)
    streams["/rflysim/imu"] = Stream("/rflysim/imu", 1.0 / IMU_RATE_HZ, True)

    def subscribe(topic, type_name):
        def on_msg(msg, st=streams[topic]):
            st.arrivals.append((time.time(), stamp_of(msg)))
            st.in_window += 1
        node.create_subscription(MSG_TYPE[type_name], topic, on_msg, qos)

    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    heap = []  # (s since start, heap in use KiB) from the bridge's "<node>: memory" status

    def on_diagnostics(msg):
        for status in msg.status:
            if status.name.endswith(": memory"):
                values = {kv.key: kv.value for kv in status.values}
                if "heap_in_use_kib" in values:
                    heap.append((time.time() - start, {"heap_in_use": int(values["heap_in_use_kib"])}))
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, QoSProfile(depth=10))
    subscribed, rss = set(), []
    start = time.time()
    next_window = start + args.warmup
    window_open = False
    next_rss = start + RSS_SAMPLE_S
    try:
        while not stop and time.time() - start < args.duration:
            if time.time() - start < args.warmup:
                for topic, types in node.get_topic_names_and_types():
                    if topic in subscribed or types[0] not in MSG_TYPE or not topic.startswith("/rflysim/"):
                        continue
                    if topic not in streams:
                        # Topics beyond the sensors' main ones (camera_info, odometry, ...):
                        # period estimated from their arrivals later.
                        streams[topic] = Stream(topic, None, False)
                    subscribed.add(topic)
                    subscribe(topic, types[0])
            rclpy.spin_once(node, timeout_sec=0.02)
            now = time.time()
            if sim.poll() is not None or bridge.poll() is not None:
                print(f"a child exited early: sim {sim.poll()}, bridge {bridge.poll()}")
                break
            if now >= next_rss:
                rss.append((now - start, rss_kib(bridge.pid)))
                next_rss += RSS_SAMPLE_S
            if now >= next_window:
                for st in streams.values():
                    if window_open:
                        st.close_window()
                    st.in_window = 0
                window_open, next_window = True, next_window + WINDOW_S
    finally:
        end = time.time()
        final_rss = rss_kib(bridge.pid) if bridge.poll() is None else None
        for c in children:
            if c.poll() is None:
                c.send_signal(signal.SIGINT)
        for c in children:
            try:
                c.wait(timeout=5)
            except subprocess.TimeoutExpired:
                c.kill()
        node.destroy_node()
        rclpy.shutdown()
    if final_rss is not None:
        rss.append((end - start, final_rss))
    # A restart in the last seconds leaves nothing to judge its recovery by.
    restarts = [t for t in restarts if t < end - 5.0]
    (log_dir / "rss.json").write_text(json.dumps([{"t": t, **v} for t, v in rss]))
    (log_dir / "heap.json").write_text(json.dumps([{"t": t, **v} for t, v in heap]))
    ok = report(args, streams, rss, heap, restarts, start)
    sim_log.close()
    bridge_log.close()
    sys.exit(0 if ok else 1)


def growth(series, field, base, span):
    """(first window, last window, growth % of floor / mean / peak) of `field`
    in `series` [(t, {field: KiB})], or None when too short."""
    end_t = series[-1][0] if series else 0.0
    first = [v[field] / 1024 for t, v in series if base <= t <= base + span and field in v]
    last = [v[field] / 1024 for t, v in series if t >= end_t - span and field in v]
    if not first or not last or end_t <= base + 2 * span:
        return None
    pairs = ((min(first), min(last)), (sum(first) / len(first), sum(last) / len(last)), (max(first), max(last)))
    return first, last, [100.0 * (y - x) / x if x else 0.0 for x, y in pairs]


def trend_pct_per_hour(series, field, reduce, since):
    """The least-squares slope of `reduce` of each window's `field` from
    `since` on, in % of its mean per hour; None when too few windows."""
    windows = {}
    for t, v in series:
        if t >= since and field in v:
            windows.setdefault(int(t // WINDOW_S), []).append(v[field])
    points = [((k + 0.5) * WINDOW_S, reduce(w)) for k, w in sorted(windows.items())]
    if len(points) < 6:
        return None
    n = len(points)
    mt, mv = sum(t for t, _ in points) / n, sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    slope = sum((t - mt) * (v - mv) for t, v in points) / var if var else 0.0
    return 100.0 * slope * 3600.0 / mv if mv else 0.0


def report(args, streams, rss, heap, restarts, start):
    ok = True
    print(f"\n== bridge RSS (MiB), sampled every {RSS_SAMPLE_S:.0f} s; per 10 s: floor / peak of VmRSS, "
          "floor of the heap in use")
    per_window, heap_window = {}, {}
    for t, v in rss:
        per_window.setdefault(int(t // WINDOW_S), []).append(v["VmRSS"] / 1024)
    for t, v in heap:
        heap_window.setdefault(int(t // WINDOW_S), []).append(v["heap_in_use"] / 1024)
    def heap_window_floor(k):
        return f"{min(heap_window[k]):5.1f}" if k in heap_window else "    -"
    print("  ".join(f"{k * WINDOW_S:4.0f}s {min(w):6.1f}/{max(w):5.1f} {heap_window_floor(k)}"
                    for k, w in sorted(per_window.items())))
    # Two figures are judged. The resident peak is the bridge's footprint:
    # it must not grow. Since the bridge's allocator keeps freed frame
    # buffers (ros_common::memory), resident memory sits near its high-water
    # mark and its floor steps up by a 1080p frame (~6 MiB, ~4 %) the first
    # time one more frame than before is in flight, then stays: not a leak.
    # What a leak raises is the heap in use at the quietest moment, the
    # floor of what the bridge reports (the allocator's own count).
    span = 60.0 if args.duration >= 180 else args.duration / 3
    base = min(args.rss_baseline, args.duration / 3)
    first_window = f"{base:.0f}-{base + span:.0f} s"
    window = f"{first_window} -> last {span:.0f} s"
    growths = {field: growth(series, field, base, span)
               for field, series in [(f, rss) for f in RSS_FIELDS] + [("heap_in_use", heap)]}
    if growths["VmRSS"] is None or growths["heap_in_use"] is None:
        print(f"RSS: too few samples ({len(rss)} resident, {len(heap)} heap)")
        return False
    print(f"{'':12} {first_window:>32} {'last ' + str(int(span)) + ' s':>24}"
          f"  growth of floor / mean / peak")
    for field, g in growths.items():
        if g is None:
            continue
        a, b, pct = g
        print(f"{field:12} floor {min(a):6.1f} mean {sum(a) / len(a):6.1f} peak {max(a):6.1f}"
              f"   floor {min(b):6.1f} mean {sum(b) / len(b):6.1f} peak {max(b):6.1f}"
              f"  {pct[0]:+6.2f} % / {pct[1]:+6.2f} % / {pct[2]:+6.2f} %")
    resident_floor, _, resident_peak = growths["VmRSS"][2]
    heap_floor = growths["heap_in_use"][2][0]
    print(f"growth ({window}): resident peak {resident_peak:+.2f} %, heap in use floor {heap_floor:+.2f} %, "
          f"resident floor {resident_floor:+.2f} % (not judged: warm-up is in them)")
    half = args.duration / 2
    rss_trend = trend_pct_per_hour(rss, "VmRSS", max, half)
    heap_trend = trend_pct_per_hour(heap, "heap_in_use", min, half)
    if rss_trend is None or heap_trend is None:
        print("trend: too few windows in the second half")
        return False
    print(f"trend over the second half ({half:.0f} s on): resident peak {rss_trend:+.2f} %/h, heap in use floor "
          f"{heap_trend:+.2f} %/h (limits {RSS_SLOPE_LIMIT_PCT_H}, {HEAP_SLOPE_LIMIT_PCT_H} %/h)")
    ok &= rss_trend < RSS_SLOPE_LIMIT_PCT_H and heap_trend < HEAP_SLOPE_LIMIT_PCT_H

    print(f"\n== messages per {WINDOW_S:.0f}-s window (after {args.warmup:.0f} s warm-up); lost = empty windows")
    print(f"{'topic':48} {'Hz':>6} {'min':>5} {'median':>6} {'max':>5} {'lost':>4}")
    lost_total = 0
    for st in sorted(streams.values(), key=lambda s: s.topic):
        if not st.windows:
            continue
        if st.period_s is None:
            ts = [a[0] for a in st.arrivals]
            st.period_s = (ts[-1] - ts[0]) / (len(ts) - 1) if len(ts) > 2 else None
            if not any(st.windows[:1]):
                continue  # never flowed: an optional topic (e.g. gimbal status without commands)
        w = sorted(st.windows)
        lost = sum(1 for n in st.windows if n == 0)
        lost_total += lost
        hz = sum(st.windows) / (len(st.windows) * WINDOW_S)
        print(f"{st.topic:48} {hz:6.1f} {w[0]:5d} {w[len(w) // 2]:6d} {w[-1]:5d} {lost:4d}")
    ok &= lost_total == 0

    print(f"\n== simulator restarts at {', '.join(f'{t - start:.1f}' for t in restarts) or 'none'} s")
    worst = {}
    for t_r in restarts:
        for st in streams.values():
            if st.period_s is None or not st.expected:
                continue
            r = recovery(st, t_r) or {"gap_ms": float("inf"), "not_recovered": 10**9, "stale": 0,
                                      "first_ms": float("inf")}
            w = worst.get(st.topic)
            if w is None or (r["not_recovered"], r["first_ms"]) > (w["not_recovered"], w["first_ms"]):
                worst[st.topic] = r
    if restarts:
        print("worst restart per stream: gap = arrivals either side; not recovered = frames between the last "
              "one before and the first correctly stamped one after (from stamps; from arrivals without a "
              f"header); stale = published with the pre-restart time anchor (stamp off by > {STALE_S} s); "
              "first = restart -> first correctly stamped message")
        print(f"{'topic':48} {'period ms':>9} {'gap ms':>8} {'not rec.':>8} {'stale':>5} {'first ms':>8}")
        for topic in sorted(worst):
            r, st = worst[topic], streams[topic]
            print(f"{topic:48} {st.period_s * 1e3:9.1f} {r['gap_ms']:8.1f} {r['not_recovered']:8d} "
                  f"{r['stale']:5d} {r['first_ms']:8.1f}")
            ok &= r["not_recovered"] <= MAX_FRAMES_MISSED
    elif args.restart_every > 0:
        print("no restart seen in the emulator's output")
        ok = False
    print(f"\nVERDICT: {'PASS' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    main()
