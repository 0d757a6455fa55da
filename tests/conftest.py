"""Shared fixtures for the rclpy-side tests.

The tests run real processes: the package's r2r executables (built by
`scripts/test.sh` into `target/release`) and rclpy subscribers in this
process, over real Fast DDS, on a ROS domain of their own.
"""

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
PROFILE = os.environ.get("RFLYSIM_TEST_PROFILE", "release")


def executable(name: str) -> Path:
    path = TARGET_DIR / PROFILE / name
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with `cargo build --release` (scripts/test.sh does)")
    return path


def answer(client, name, request, timeout):
    """The answer of service `name` (through `client`) to `request`; fails
    when the service is not there or does not answer within `timeout` s."""
    assert client.wait_for_service(timeout_sec=timeout), f"no service {name}"
    if not getattr(client, "answered_before", False):
        # The server matches a new client's endpoints a moment after the client matched the server's, and a
        # request sent in between can be lost (Fast DDS, volatile): a fresh client waits that moment once.
        time.sleep(0.1)
    future = client.call_async(request)
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, f"{name}: no answer within {timeout} s"
        time.sleep(0.01)
    client.answered_before = True
    return future.result()


def service_client(node, srv_type, name):
    """The node's one client of service `name`, made at its first use: every
    new client is discovered anew, and a call made meanwhile can lose its
    request or its answer."""
    clients = node.__dict__.setdefault("service_clients", {})
    if (srv_type, name) not in clients:
        clients[(srv_type, name)] = node.create_client(srv_type, name)
    return clients[(srv_type, name)]


def call(node, srv_type, name, request, timeout=10.0):
    """`answer` through the node's one client of service `name`."""
    return answer(service_client(node, srv_type, name), name, request, timeout)


def ros_time(seconds):
    """`builtin_interfaces/Time` of `seconds` (a header's stamp, a /clock tick)."""
    from builtin_interfaces.msg import Time

    return Time(sec=int(seconds), nanosec=int((seconds % 1) * 1e9))


def dropped_count(collector, diagnostics, status_part, reason, want, timeout=10.0):
    """The `dropped_<reason>` count of the /diagnostics status whose name holds
    `status_part` (subscribed as `diagnostics`), once it is `want` or when
    `timeout` s have passed."""
    deadline = time.monotonic() + timeout
    counted = None
    while time.monotonic() < deadline and counted != want:
        for array in collector.messages(diagnostics):
            for st in array.status:
                if status_part in st.name:
                    counted = next((int(kv.value) for kv in st.values if kv.key == f"dropped_{reason}"), counted)
        time.sleep(0.1)
    return counted


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: takes minutes (a colcon build) or both cores (1080p raw at 60 Hz between two hosts); CI runs it")
    config.addinivalue_line("markers", "broker: needs the Kafka-protocol broker (scripts/test.sh runs these last)")
    # A domain of our own keeps parallel runs and stray nodes out of the tests.
    # At most 101 (ROS 2's own advice): DDS ports are 7400 + 250 * domain + ...,
    # and above 101 they fall in Linux's ephemeral range (32768-60999), where a
    # port a test picks with bind(0) for a bridge can be taken by a DDS
    # participant started a moment later.
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@pytest.fixture(scope="session")
def rclpy_context():
    import rclpy

    rclpy.init()
    yield rclpy
    rclpy.shutdown()


class Collector:
    """Subscribes to topics in a background executor and keeps what arrives."""

    def __init__(self, rclpy, name="test_collector"):
        from rclpy.executors import SingleThreadedExecutor

        self.rclpy = rclpy
        self.node = rclpy.create_node(name)
        self.received = {}
        self.arrivals = {}
        self.topics = {}
        self.lock = threading.Lock()
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        while self.running:
            self.executor.spin_once(timeout_sec=0.05)

    def subscribe(self, msg_type, topic, qos=None, key=None):
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        qos = qos or QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        key = key or topic
        with self.lock:
            self.received.setdefault(key, [])
            self.topics[key] = topic

        def on_msg(msg, key=key):
            arrived = time.time()
            with self.lock:
                self.received[key].append(msg)
                self.arrivals.setdefault(key, []).append(arrived)

        self.node.create_subscription(msg_type, topic, on_msg, qos)
        return key

    def messages(self, key):
        with self.lock:
            return list(self.received.get(key, []))

    def arrived(self, key):
        """(wall time it arrived here, message) of each message on `key`."""
        with self.lock:
            return list(zip(self.arrivals.get(key, []), self.received.get(key, [])))

    def wait_for(self, key, count=1, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.messages(key)) >= count:
                return self.messages(key)
            time.sleep(0.02)
        raise AssertionError(f"only {len(self.messages(key))} of {count} messages on {key} within {timeout} s"
                             f" ({self.seen()})")

    def seen(self):
        """What a failed wait shows: each topic's message count and the publishers discovered."""
        with self.lock:
            counts = {k: len(v) for k, v in self.received.items()}
        return ", ".join(f"{k}: {n} from {self.node.count_publishers(self.topics[k])} publisher(s)"
                         for k, n in counts.items())

    def close(self):
        self.running = False
        self.thread.join(timeout=2)
        self.executor.remove_node(self.node)
        self.node.destroy_node()


@pytest.fixture
def collector(rclpy_context):
    c = Collector(rclpy_context)
    yield c
    c.close()


class Processes:
    """Starts executables and makes sure none outlives the test."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.procs = []

    def start(self, args, name=None, env=None):
        name = name or Path(str(args[0])).name
        log = open(self.tmp_path / f"{name}-{len(self.procs)}.log", "wb")
        proc = subprocess.Popen(
            [str(a) for a in args],
            stdout=log,
            stderr=subprocess.STDOUT,
            # A variable given as None is removed from the environment.
            env={k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None},
            start_new_session=True,
        )
        proc.log_path = Path(log.name)
        proc.started_at = time.time()
        self.procs.append(proc)
        return proc

    def output(self, proc):
        return proc.log_path.read_text(errors="replace")

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def processes(tmp_path):
    p = Processes(tmp_path)
    yield p
    p.stop_all()
    # pytest shows a test's captured output only when it fails: then every
    # child's log is in the report, not left in a temporary folder.
    for proc in p.procs:
        print(f"---- {proc.log_path.name} (exit {proc.returncode}) ----")
        print(p.output(proc)[-20000:])
