"""RflySim3D's scene through the standard ROS 2 Simulation Interfaces:
rclpy clients built from simulation_interfaces' own definitions drive the
scene node against the built-in emulator (a camera sees a spawned vehicle,
crashes come back as collisions), and against a stand-in RflySim3D socket
whose received bytes are compared with what RflySim's SDK packs (Python's
struct, as UE4CtrlAPI does)."""

import math
import socket
import struct
import time

import pytest
from conftest import answer, call, executable, ros_time, service_client
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Pose
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Image
from simulation_interfaces.msg import Bounds, EntityFilters, Result, SimulatorFeatures
from simulation_interfaces.srv import (DeleteEntity, GetCurrentWorld, GetEntities, GetEntityBounds, GetEntityState,
                                       GetSimulatorFeatures, LoadWorld, SetEntityState, SpawnEntity)

from rflysim_bridge.msg import Collision, RayDistances, ScenePoses
from rflysim_bridge.srv import Console
from rflysim_scenario import Scenario, sensor, stamp_seconds

RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
H = math.sqrt(0.5)


def start_scene_node(processes, cfg, window, status_port, *params):
    args = [executable("scene_node"), "--ros-args", "-p", f"rflysim_config:={cfg}", "-p", f"window_id:={window}",
            "-p", f"status_port:={status_port}", "-p", "status_multicast:=false"]
    for p in params:
        args += ["-p", p]
    return processes.start(args, name="scene_node")


def empty_config(tmp_path):
    """A Config.json without sensors: the scene alone."""
    cfg = tmp_path / "Config.json"
    cfg.write_text('{"VisionSensors": []}')
    return cfg


def crash_data(crash_type, vel=(1.0, 2.0, 0.0), ray=5.0, contact=(10.0, 20.0, 0.0), runned=12.5, copter_id=1):
    """reqVeCrashData of vehicle `copter_id` as RflySim's SDK packs it: at NED (10, 20, -5) facing east, moving
    `vel`, its front scan line `ray`, what it hit at `contact` (the ground's centre at (11, 21, 0))."""
    return struct.pack("<4id29f20s", 1234567897, copter_id, 3, crash_type, runned, *vel, 10.0, 20.0, -5.0,
                       *contact, 11.0, 21.0, 0.0, 0.0, 0.0, math.pi / 2, *[0.0] * 8,
                       ray, 6.0, 7.0, 8.0, 9.0, 4.5, b"Landscape_1")


def poses_publisher(node):
    """A publisher of rflysim/scene/poses the scene node has subscribed to."""
    pub = node.create_publisher(ScenePoses, "/rflysim/scene/poses", RELIABLE)
    deadline = time.monotonic() + 10
    while pub.get_subscription_count() == 0:
        assert time.monotonic() < deadline, "the scene node never subscribed to rflysim/scene/poses"
        time.sleep(0.05)
    return pub


def start_emulator(processes, tmp_path, window, status_port):
    """The built-in RflySim emulator as RflySim3D (and vehicle 1's CopterSim)
    on `window`, its status datagrams sent to `status_port`."""
    cfg = empty_config(tmp_path)
    sim = processes.start([executable("rflysim_sim"), "--config", cfg, "--stats", "0", "--copters", "1",
                           "--no-heartbeat", "--window-id", str(window), "--gimbal-target",
                           f"127.0.0.1:{status_port}"], name="rflysim_sim")
    return cfg, sim


def console_commands(processes, sim):
    """Every console command the emulator ran, one at a time as Unreal's console runs them."""
    marker = "console command from "
    return [line.split(marker, 1)[1].split(": ", 1)[1] for line in processes.output(sim).splitlines()
            if marker in line]


def wait_until_found(node, name, timeout=15.0):
    """Asks for `name` until the scene node has it from RflySim3D (both may
    still be starting). A lookup changes nothing, so one whose answer is lost
    (a reply sent before the node has discovered this client) is asked again."""
    deadline = time.monotonic() + timeout
    client = service_client(node, GetEntityState, "/get_entity_state")
    assert client.wait_for_service(timeout_sec=timeout), "no service /get_entity_state"
    why = "no answer"
    while time.monotonic() < deadline:
        future = client.call_async(GetEntityState.Request(entity=name))
        until = min(deadline, time.monotonic() + 5.0)
        while not future.done() and time.monotonic() < until:
            time.sleep(0.01)
        if future.done():
            r = future.result()
            if r.result.result == Result.RESULT_OK:
                client.answered_before = True
                return r
            why = r.result.error_message
        time.sleep(0.2)
    raise AssertionError(f"{name} not found within {timeout} s: {why}")


def scene_drops(collector, diag, reason):
    """The scene's count of drops for `reason` in the latest /diagnostics, or None."""
    for array in reversed(collector.messages(diag)):
        for st in array.status:
            if st.name.endswith(": scene"):
                return next((int(kv.value) for kv in st.values if kv.key == f"dropped_{reason}"), 0)
    return None


def subscribe_vehicle_scene(collector, vehicle_id):
    """A vehicle's collision, scene odometry and scan-line topics, in that order."""
    base = f"/rflysim/uav{vehicle_id}"
    return (collector.subscribe(Collision, f"{base}/collision", RELIABLE),
            collector.subscribe(Odometry, f"{base}/scene/odom", RELIABLE),
            collector.subscribe(RayDistances, f"{base}/scene/rays", RELIABLE))


def pose(x, y, z, yaw=0.0):
    p = Pose()
    p.position.x, p.position.y, p.position.z = x, y, z
    p.orientation.w, p.orientation.z = math.cos(yaw / 2), math.sin(yaw / 2)
    return p


def spawn_request(name, uri="rflysim://vehicle/3", at=(0.0, 0.0, 5.0), allow_renaming=False):
    r = SpawnEntity.Request(name=name, allow_renaming=allow_renaming)
    r.entity_resource.uri = uri
    r.initial_pose.pose = pose(*at)
    return r


def magenta_pixels(img):
    data = bytes(img.data)
    n = 0
    for i in range(0, len(data) - 2, 3):
        b, g, r = data[i], data[i + 1], data[i + 2]
        if b > 100 and r > 100 and g < 40 and abs(b - r) < 12:
            n += 1
    return n


def test_spawn_see_move_read_crash_delete(collector, processes, tmp_path):
    """A camera on vehicle 1, looking right (at the centre of the circle it
    flies, where a tower stands); a vehicle spawned 4 m in front of it, where
    RflySim3D says vehicle 1 is, appears in it, is moved, read back, sent into
    the ground (one collision), and deleted."""
    window, status_port = 13, 43211
    cam = sensor(861, 1, 2, port=42861, width=320, height=240, hz=10, SensorAngEular=[0.0, 0.0, 1.5708],
                 SensorPosXYZ=[0.0, 0.0, 0.0])
    sc = Scenario(processes, tmp_path, [cam], sim_args=["--window-id", str(window), "--gimbal-target",
                                                         f"127.0.0.1:{status_port}"],
                  bridge_params={"window_id": window, "use_sim_time": False, "imu": False,
                                 "heartbeat_port": 42862})
    node = start_scene_node(processes, sc.config, window, status_port, "scene_timeout_s:=2.0")
    images = collector.subscribe(Image, "/rflysim/sensor861/img_rgb", RELIABLE)
    uav1 = collector.subscribe(Odometry, "/rflysim/uav1/scene/odom", RELIABLE)
    collisions = collector.subscribe(Collision, "/rflysim/scene/collisions", RELIABLE)
    rays = collector.subscribe(RayDistances, "/rflysim/uav1/scene/rays", RELIABLE)
    n = collector.node
    collector.wait_for(images, 3, timeout=30)
    assert all(magenta_pixels(m) == 0 for m in collector.messages(images)[-3:]), "a vehicle before any was spawned"

    features = call(n, GetSimulatorFeatures, "/get_simulator_features", GetSimulatorFeatures.Request()).features
    for f in (SimulatorFeatures.SPAWNING, SimulatorFeatures.DELETING, SimulatorFeatures.ENTITY_STATE_GETTING,
              SimulatorFeatures.ENTITY_STATE_SETTING, SimulatorFeatures.ENTITY_BOUNDS, SimulatorFeatures.WORLD_LOADING):
        assert f in features.features
    assert SimulatorFeatures.SPAWNING_RESOURCE_STRING not in features.features
    assert "rflysim" in features.spawn_formats

    p = collector.wait_for(uav1, 1, timeout=10)[-1].pose.pose.position
    toward_centre = 4.0 / math.hypot(p.x, p.y)
    ahead = (p.x - p.x * toward_centre, p.y - p.y * toward_centre, p.z)
    r = call(n, SpawnEntity, "/spawn_entity", spawn_request("probe", at=ahead))
    assert r.result.result == Result.RESULT_OK, r.result.error_message
    assert r.entity_name == "probe"
    before = len(collector.messages(images))
    seen = 0
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline and seen == 0:
        got = collector.messages(images)[before:]
        seen = max((magenta_pixels(m) for m in got), default=0)
        time.sleep(0.1)
    assert seen >= 4, "the spawned vehicle never showed in the camera"

    names = call(n, GetEntities, "/get_entities", GetEntities.Request()).entities
    assert "probe" in names and "uav1" in names

    move = SetEntityState.Request(entity="probe", set_pose=True)
    move.state.pose = pose(2.0, -1.0, 6.0, yaw=0.5)
    assert call(n, SetEntityState, "/set_entity_state", move).result.result == Result.RESULT_OK
    deadline = time.monotonic() + 5
    while True:
        st = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="probe"))
        assert st.result.result == Result.RESULT_OK, st.result.error_message
        p = st.state.pose.position
        if abs(p.x - 2.0) < 1e-3 and abs(p.y + 1.0) < 1e-3 and abs(p.z - 6.0) < 1e-3:
            break
        assert time.monotonic() < deadline, f"still at {p}"
        time.sleep(0.1)
    q = st.state.pose.orientation
    sign = 1.0 if q.w >= 0 else -1.0  # q and -q are one rotation
    assert abs(sign * q.w - math.cos(0.25)) < 1e-4 and abs(sign * q.z - math.sin(0.25)) < 1e-4, q
    assert st.state.header.frame_id == "rflysim/map"

    b = call(n, GetEntityBounds, "/get_entity_bounds", GetEntityBounds.Request(entity="probe"))
    assert b.result.result == Result.RESULT_OK and b.bounds.type == Bounds.TYPE_BOX
    upper, lower = b.bounds.points
    assert (round(upper.x, 3), round(upper.y, 3), round(upper.z, 3)) == (0.275, 0.275, 0.15)
    assert (round(lower.x, 3), round(lower.y, 3), round(lower.z, 3)) == (-0.275, -0.275, -0.15)

    # Into the ground: one collision, however often RflySim3D repeats its data.
    crash = SetEntityState.Request(entity="probe", set_pose=True)
    crash.state.pose = pose(2.0, -1.0, -0.5)
    assert call(n, SetEntityState, "/set_entity_state", crash).result.result == Result.RESULT_OK
    c = collector.wait_for(collisions, 1, timeout=5)[0]
    time.sleep(2.5)
    assert len(collector.messages(collisions)) == 1, "one collision, not one per report"
    assert c.crash_type == Collision.CRASH_GROUND and c.vehicle_id >= 1000
    assert c.header.frame_id == "rflysim/map"
    assert collector.wait_for(rays, 1, timeout=5)[-1].down > 0.0

    assert call(n, DeleteEntity, "/delete_entity", DeleteEntity.Request(entity="probe")).result.result == Result.RESULT_OK
    # A report RflySim3D sent before it removed the vehicle does not bring it back (as a vehicle of no CopterSim).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(crash_data(0, copter_id=c.vehicle_id), ("127.0.0.1", status_port))
    time.sleep(0.3)
    left = call(n, GetEntities, "/get_entities", GetEntities.Request()).entities
    assert "probe" not in left and f"uav{c.vehicle_id}" not in left, left
    filtered = GetEntities.Request(filters=EntityFilters(filter="^uav"))
    assert call(n, GetEntities, "/get_entities", filtered).entities == ["uav1"]

    # Objects of the scene, by name: its state and its box.
    obj = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="Building_1"))
    assert obj.result.result == Result.RESULT_OK, obj.result.error_message
    assert "Building_1" in call(n, GetEntities, "/get_entities", GetEntities.Request()).entities

    # The standard's refusals, each with its code and a message.
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("twin")).result.result == Result.RESULT_OK
    again = call(n, SpawnEntity, "/spawn_entity", spawn_request("twin"))
    assert again.result.result == SpawnEntity.Response.NAME_NOT_UNIQUE and again.result.error_message
    renamed = call(n, SpawnEntity, "/spawn_entity", spawn_request("twin", allow_renaming=True))
    assert renamed.result.result == Result.RESULT_OK and renamed.entity_name.startswith("twin_")
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("x", uri="model://x500")).result.result \
        == SpawnEntity.Response.UNSUPPORTED_FORMAT
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("x", uri="")).result.result \
        == SpawnEntity.Response.NO_RESOURCE
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("x", at=(math.nan, 0.0, 1.0))).result.result \
        == SpawnEntity.Response.INVALID_POSE
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("a b")).result.result == SpawnEntity.Response.NAME_INVALID
    began = time.monotonic()
    missing = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="no_such_thing"))
    assert missing.result.result == Result.RESULT_NOT_FOUND and "no_such_thing" in missing.result.error_message
    assert time.monotonic() - began < 4.0
    assert call(n, DeleteEntity, "/delete_entity", DeleteEntity.Request(entity="nope")).result.result \
        == Result.RESULT_NOT_FOUND

    assert call(n, Console, "/rflysim/console", Console.Request(command="RflyShowTextTime hello 1", window=-1)).success
    # 52 to 249 bytes go in the SDK's second form, Ue4CMD <i252s>, which the emulator reads as RflySim3D does.
    long = 'RflyShowTextTime "' + "long " * 45 + '" 1'
    assert 52 <= len(long) <= 249 and call(n, Console, "/rflysim/console", Console.Request(command=long, window=-1)).success
    # (A NUL cannot reach the node: ROS strings end at it. The unit tests cover it.)
    for bad in ("Rfly\u00e9", "x" * 250):
        r = call(n, Console, "/rflysim/console", Console.Request(command=bad, window=0))
        assert not r.success and r.message, bad
    w = call(n, GetCurrentWorld, "/get_current_world", GetCurrentWorld.Request())
    assert w.result.result == GetCurrentWorld.Response.NO_WORLD_LOADED
    load = LoadWorld.Request()
    load.world_resource.uri = "rflysim://map/Grasslands"
    assert call(n, LoadWorld, "/load_world", load).result.result == Result.RESULT_OK
    assert call(n, GetCurrentWorld, "/get_current_world", GetCurrentWorld.Request()).world.name == "Grasslands"
    assert "twin" not in call(n, GetEntities, "/get_entities", GetEntities.Request()).entities, \
        "spawned entities go with the old map"
    assert "grasslands" in processes.output(sc.sim).lower(), "the emulator changed its map"
    assert long in console_commands(processes, sc.sim)
    assert node.poll() is None


class FakeRflySim3D:
    """Stands where RflySim3D listens (20010 + window) and keeps what arrives."""

    def __init__(self, window):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind(("127.0.0.1", 20010 + window))
        self.sock.settimeout(0.1)

    def received(self, length, timeout=5.0, want=1):
        out, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline and len(out) < want:
            try:
                d = self.sock.recv(65536)
            except socket.timeout:
                continue
            if len(d) == length:
                out.append(d)
        return out

    def drain(self, timeout):
        """Every datagram that arrives within `timeout` s."""
        out, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                out.append(self.sock.recv(65536))
            except socket.timeout:
                continue
        return out


def sdk_euler_ned(yaw_enu):
    """An ENU yaw (FLU, level) as RflySim's NED roll, pitch, yaw: yaw_ned = pi/2 - yaw_enu."""
    return (0.0, 0.0, math.pi / 2 - yaw_enu)


def test_bytes_equal_the_sdk_and_bulk_poses_fill_100_a_datagram(collector, processes, tmp_path):
    window, status_port = 14, 43212
    rfly = FakeRflySim3D(window)
    cfg = empty_config(tmp_path)
    node = start_scene_node(processes, cfg, window, status_port, "first_spawn_id:=2000")
    n = collector.node
    r = call(n, SpawnEntity, "/spawn_entity", spawn_request("sdk", at=(3.0, 4.0, 5.0)))
    assert r.result.result == Result.RESULT_OK
    got = rfly.received(104)
    assert got, "no SOut2SimulatorSimpleTime"
    # What UE4CtrlAPI.sendUE4PosNew packs for the same pose: native alignment, 104 bytes.
    roll, pitch, yaw = sdk_euler_ned(0.0)
    sdk = struct.pack("3i14f4d", 1234567890, 2000, 3, *[0.0] * 8, *[0.0] * 3, roll, pitch, yaw, 4.0, 3.0, -5.0, -1.0)
    assert got[0] == sdk

    # 250 vehicles in one message: three datagrams of 100, 100 and 50.
    pub = poses_publisher(n)
    m = ScenePoses(ids=list(range(1, 251)), poses=[pose(float(i), 0.0, 2.0) for i in range(250)], scales=[2.0])
    pub.publish(m)
    grams = rfly.received(3804, want=3)
    assert len(grams) == 3
    ids, counted = [], 0
    for g in grams:
        v = struct.unpack("i200H600f300H100f", g)
        assert v[0] == 1234567890
        slot_ids = v[1:101]
        live = [i for i in slot_ids if i]
        ids += live
        for k, vid in enumerate(slot_ids):
            if vid:
                x, y, z = v[201 + 3 * k: 204 + 3 * k]
                assert (x, y, z) == (0.0, float(vid - 1), -2.0)
                assert v[801 + 3 * k: 804 + 3 * k] == (200, 200, 200)
                counted += 1
    assert sorted(ids) == list(range(1, 251)) and counted == 250
    assert node.poll() is None


def test_rflysim3d_silent_and_garbage_on_the_status_port(collector, processes, tmp_path):
    """Nothing listens on the window: a call times out with the standard's
    code and the node goes on. Garbage on the status port is counted; the
    crash data right after it is published exactly."""
    window, status_port = 15, 43213
    cfg = empty_config(tmp_path)
    node = start_scene_node(processes, cfg, window, status_port, "scene_timeout_s:=0.5")
    n = collector.node
    collisions = collector.subscribe(Collision, "/rflysim/uav1/collision", RELIABLE)
    odom = collector.subscribe(Odometry, "/rflysim/uav1/scene/odom", RELIABLE)
    began = time.monotonic()
    r = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="uav1"))
    assert r.result.result == Result.RESULT_OPERATION_FAILED and "did not answer" in r.result.error_message
    assert time.monotonic() - began < 3.0
    assert call(n, GetSimulatorFeatures, "/get_simulator_features", GetSimulatorFeatures.Request()).features.features

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    to = ("127.0.0.1", status_port)

    deadline = time.monotonic() + 10
    while not collector.messages(odom):
        assert time.monotonic() < deadline, "no scene odometry"
        s.sendto(crash_data(0), to)
        time.sleep(0.1)
    for junk in (b"", b"\x00" * 160, crash_data(-2)[:100], b"\xff" * 12, struct.pack("<i", 1234567897) + b"\x01" * 156):
        s.sendto(junk, to)
    s.sendto(crash_data(-2), to)
    c = collector.wait_for(collisions, 1, timeout=5)[0]
    assert (c.vehicle_id, c.crash_type, c.other_vehicle_id, c.object_name) == (1, Collision.CRASH_GROUND, 0, "Landscape_1")
    # NED (10, 20, 0) → ENU (20, 10, 0).
    assert (c.contact_point.x, c.contact_point.y, c.contact_point.z) == (20.0, 10.0, 0.0)
    assert (c.object_centre.x, c.object_centre.y) == (21.0, 11.0)
    o = collector.messages(odom)[-1]
    assert (o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z) == (20.0, 10.0, 5.0)
    assert o.header.frame_id == "rflysim/map" and o.child_frame_id == "rflysim/uav1/base_link"
    # Facing east (NED yaw 90°): ENU yaw 0; moving north at 1 m/s and east at 2: 2 forward, 1 to the left.
    assert abs(o.twist.twist.linear.x - 2.0) < 1e-6 and abs(o.twist.twist.linear.y - 1.0) < 1e-6
    assert node.poll() is None


def test_with_use_sim_time_what_rflysim3d_reports_is_stamped_on_clock(collector, processes, tmp_path):
    """RflySim3D's reports and answers carry no time the bridge can use: they
    are stamped on arrival, and with use_sim_time on /clock (here the test's,
    far from the wall clock), never on the wall clock beside simulated time."""
    window, status_port = 12, 43219
    cfg = empty_config(tmp_path)
    node = start_scene_node(processes, cfg, window, status_port, "use_sim_time:=true", "scene_timeout_s:=0.5")
    n = collector.node
    clock_pub = n.create_publisher(Clock, "/clock", RELIABLE)
    collisions, odom, rays = subscribe_vehicle_scene(collector, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    to = ("127.0.0.1", status_port)
    began = time.monotonic()
    sim_start = 500.0

    def tick():
        """/clock at 500 s plus the time since the test began; that time, in seconds."""
        t = sim_start + time.monotonic() - began
        clock_pub.publish(Clock(clock=ros_time(t)))
        return t

    # Until the node has /clock its stamps are zero, as any ROS node's: wait
    # for a stamp on it.
    deadline = time.monotonic() + 15
    while not any(stamp_seconds(o.header) > sim_start for o in collector.messages(odom)):
        assert time.monotonic() < deadline, f"no scene odometry stamped on /clock: {collector.messages(odom)[-1:]}"
        assert node.poll() is None, "the scene node ended"
        tick()
        s.sendto(crash_data(0), to)
        time.sleep(0.05)
    before = tick()
    s.sendto(crash_data(-2), to)
    c = collector.wait_for(collisions, 1, timeout=5)[0]
    s.sendto(crash_data(-2), to)  # the same crash: its pose fresh for the answer, no new collision
    time.sleep(0.1)
    r = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="uav1"))
    after = tick()
    assert r.result.result == Result.RESULT_OK, r.result.error_message
    # The node's clock is the last tick it has (a loaded machine delivers
    # it late); the wall clock is 1.8e9 s away.
    for what, header in (("collision", c.header), ("entity state", r.state.header),
                         ("odometry", collector.messages(odom)[-1].header),
                         ("rays", collector.messages(rays)[-1].header)):
        assert before - 5.0 <= stamp_seconds(header) <= after, f"{what} stamped {stamp_seconds(header)}, /clock {before}..{after}"
    assert node.poll() is None


def vehicle_topics_present(node, vehicle_id):
    """Which of a vehicle's scene topics the ROS graph has publishers for."""
    return {t for t in ("collision", "scene/odom", "scene/rays")
            if node.count_publishers(f"/rflysim/uav{vehicle_id}/{t}") > 0}


def wait_for_topics(node, vehicle_id, want, timeout=10.0):
    deadline = time.monotonic() + timeout
    while vehicle_topics_present(node, vehicle_id) != want:
        assert time.monotonic() < deadline, \
            f"vehicle {vehicle_id}: topics {vehicle_topics_present(node, vehicle_id)}, not {want}"
        time.sleep(0.1)


def test_spawned_vehicles_have_their_topics_from_spawn_to_delete_without_a_config(collector, processes, tmp_path):
    """The scene node starts without a Config.json (the scene needs no sensor
    list). A spawned vehicle gets its collision, scene odometry and scan-line
    topics at spawn, before any crash: its crash is published there, and so is
    the next good one after garbage. Deleting it removes them; a map change
    removes those of every spawned vehicle."""
    window, status_port = 17, 43217
    node = processes.start([executable("scene_node"), "--ros-args", "-p", f"window_id:={window}",
                            "-p", f"status_port:={status_port}", "-p", "status_multicast:=false",
                            "-p", "scene_timeout_s:=0.5", "-p", "first_spawn_id:=1000"], name="scene_node")
    n = collector.node
    features = call(n, GetSimulatorFeatures, "/get_simulator_features", GetSimulatorFeatures.Request(), timeout=20)
    assert SimulatorFeatures.SPAWNING in features.features.features
    assert node.poll() is None
    all_topics = {"collision", "scene/odom", "scene/rays"}
    assert vehicle_topics_present(n, 1000) == set()

    r = call(n, SpawnEntity, "/spawn_entity", spawn_request("guest", at=(3.0, 4.0, 5.0)))
    assert r.result.result == Result.RESULT_OK, r.result.error_message
    wait_for_topics(n, 1000, all_topics)
    collisions, odom, rays = subscribe_vehicle_scene(collector, 1000)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    to = ("127.0.0.1", status_port)
    deadline = time.monotonic() + 10
    while not (collector.messages(odom) and collector.messages(rays)):
        assert time.monotonic() < deadline, f"no scene odometry or rays of the spawned vehicle ({collector.seen()})"
        s.sendto(crash_data(0, copter_id=1000), to)
        time.sleep(0.1)
    o = collector.messages(odom)[-1]
    assert o.child_frame_id == "rflysim/uav1000/base_link"
    assert (o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z) == (20.0, 10.0, 5.0)
    assert collector.messages(rays)[-1].front == 5.0
    for junk in (b"", b"\x00" * 160, crash_data(-2, copter_id=1000)[:100], b"\xff" * 12):
        s.sendto(junk, to)
    s.sendto(crash_data(-2, copter_id=1000), to)
    c = collector.wait_for(collisions, 1, timeout=5)[0]
    assert (c.vehicle_id, c.crash_type, c.object_name) == (1000, Collision.CRASH_GROUND, "Landscape_1")

    assert call(n, DeleteEntity, "/delete_entity", DeleteEntity.Request(entity="guest")).result.result \
        == Result.RESULT_OK
    wait_for_topics(n, 1000, set())

    for name in ("first", "second"):
        assert call(n, SpawnEntity, "/spawn_entity", spawn_request(name)).result.result == Result.RESULT_OK
    wait_for_topics(n, 1000, all_topics)
    wait_for_topics(n, 1001, all_topics)
    world = LoadWorld.Request()
    world.world_resource.uri = "rflysim://map/Grasslands"
    assert call(n, LoadWorld, "/load_world", world).result.result == Result.RESULT_OK
    wait_for_topics(n, 1000, set())
    wait_for_topics(n, 1001, set())
    assert node.poll() is None


def test_a_name_never_carries_a_second_console_command(collector, processes, tmp_path):
    """Unreal's console runs '|'-separated commands one after another and a
    line break starts another: a name that could be read as more than one
    command, carries a control character or does not fit the 32-byte name
    field of RflySim3D's replies is refused by every service that would put
    it on the wire, with the reason; nothing of it reaches the emulator,
    which splits a line into commands as Unreal's console does."""
    window, status_port = 16, 43214
    cfg, sim = start_emulator(processes, tmp_path, window, status_port)
    node = start_scene_node(processes, cfg, window, status_port, "scene_timeout_s:=0.5")
    n = collector.node
    wait_until_found(n, "Building_1")
    reasons = {"x|quit": "'|' at 1", "x\nquit": "control character", "x\rquit": "control character",
               "x\tquit": "control character", "x//quit": "'//' at 1", 'x"quit': "'\"' at 1",
               "q" * 32: "at most 31"}
    for name, why in reasons.items():
        for _ in range(2):
            b = call(n, GetEntityBounds, "/get_entity_bounds", GetEntityBounds.Request(entity=name))
            assert b.result.result == Result.RESULT_NOT_FOUND, (name, b.result.error_message)
            assert why in b.result.error_message and "nothing sent" in b.result.error_message, b.result.error_message
        st = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity=name))
        assert st.result.result == Result.RESULT_NOT_FOUND and why in st.result.error_message, st.result.error_message
        assert call(n, DeleteEntity, "/delete_entity", DeleteEntity.Request(entity=name)).result.result \
            == Result.RESULT_NOT_FOUND
        load = LoadWorld.Request()
        load.world_resource.uri = f"rflysim://map/{name}"
        w = call(n, LoadWorld, "/load_world", load)
        assert w.result.result == LoadWorld.Response.UNSUPPORTED_FORMAT and why in w.result.error_message, \
            w.result.error_message
        if "q" not in name:
            assert call(n, SpawnEntity, "/spawn_entity", spawn_request(name)).result.result \
                == SpawnEntity.Response.NAME_INVALID
    chained = call(n, Console, "/rflysim/console", Console.Request(command="RflyShowTextTime hi 1|quit", window=window))
    assert not chained.success and '"quit"' in chained.message, chained.message
    broken = call(n, Console, "/rflysim/console", Console.Request(command="RflyShowTextTime hi 1\nquit", window=window))
    assert not broken.success and "control character" in broken.message, broken.message
    quoted = call(n, Console, "/rflysim/console", Console.Request(command='RflyShowTextTime "a|b" 1', window=window))
    assert quoted.success, quoted.message
    # A name RflySim3D has is asked for as before.
    ok = call(n, GetEntityBounds, "/get_entity_bounds", GetEntityBounds.Request(entity="Building_1"))
    assert ok.result.result == Result.RESULT_OK, ok.result.error_message
    time.sleep(0.3)
    commands = console_commands(processes, sim)
    assert "RflyReqObjData 2 Building_1 0" in commands
    assert 'RflyShowTextTime "a|b" 1' in commands, "a quoted '|' is part of one command"
    assert not [c for c in commands if "quit" in c], commands
    assert node.poll() is None


def test_a_spawn_storm_stops_at_max_scene_entities_and_starves_no_lookup(collector, processes, tmp_path):
    """With max_scene_entities:=1000, 3000 spawns with allow_renaming and,
    among them, 150 lookups of another entity: the scene fills up to the
    limit, every spawn beyond it is refused with the reason, and every
    lookup is answered."""
    window, status_port = 17, 43215
    cfg, sim = start_emulator(processes, tmp_path, window, status_port)
    # Starved is never answered; on two cores busy with the other shards an
    # answer can take over the default second.
    node = start_scene_node(processes, cfg, window, status_port, "max_scene_entities:=1000", "scene_timeout_s:=3.0")
    n = collector.node
    wait_until_found(n, "Building_1")
    spawner = n.create_client(SpawnEntity, "/spawn_entity")
    looker = n.create_client(GetEntityState, "/get_entity_state")
    # A fresh client's first request can be lost while discovery still runs both ways: one answered call each first.
    assert answer(spawner, "/spawn_entity", spawn_request("first"), 10.0).result.result == Result.RESULT_OK
    assert answer(looker, "/get_entity_state", GetEntityState.Request(entity="Building_1"), 10.0).result.result \
        == Result.RESULT_OK
    before = len(call(n, GetEntities, "/get_entities", GetEntities.Request()).entities)
    spawns, lookups, in_flight = [], [], []
    for i in range(3000):
        # A few calls at a time: a service's request queue holds 10 (the default QoS), and DDS drops the rest.
        while len(in_flight) >= 6:
            in_flight = [f for f in in_flight if not f.done()]
            time.sleep(0.001)
        f = spawner.call_async(spawn_request("swarm", at=(float(i % 50), float(i // 50), 3.0), allow_renaming=True))
        spawns.append(f)
        in_flight.append(f)
        if i % 20 == 0:
            # Another caller's lookup, answered while the spawns go on.
            lookups.append(answer(looker, "/get_entity_state", GetEntityState.Request(entity="Building_1"), 10.0))
    deadline = time.monotonic() + 60
    while not all(f.done() for f in spawns):
        assert time.monotonic() < deadline, f"{sum(not f.done() for f in spawns)} spawns unanswered"
        time.sleep(0.05)
    results = [f.result().result for f in spawns]
    accepted = sum(r.result == Result.RESULT_OK for r in results)
    refused = [r for r in results if r.result != Result.RESULT_OK]
    assert accepted == 1000 - before, f"{accepted} of 3000 spawns accepted with {before} entities before"
    assert all(r.result == Result.RESULT_OPERATION_FAILED and "max_scene_entities" in r.error_message
               for r in refused), {r.error_message for r in refused}
    failed = [r.result.error_message for r in lookups if r.result.result != Result.RESULT_OK]
    assert len(lookups) == 150 and not failed, failed
    names = call(n, GetEntities, "/get_entities", GetEntities.Request()).entities
    assert len(names) == 1000
    # One deleted makes room for one.
    assert call(n, DeleteEntity, "/delete_entity", DeleteEntity.Request(entity="swarm")).result.result \
        == Result.RESULT_OK
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("late")).result.result == Result.RESULT_OK
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("later")).result.result \
        == Result.RESULT_OPERATION_FAILED
    assert node.poll() is None and sim.poll() is None


def test_lookups_of_unknown_names_neither_crowd_out_known_ones_nor_ask_again(collector, processes, tmp_path):
    """300 lookups of names nobody has, each waiting scene_timeout: lookups
    of entities the scene knows, made meanwhile, are all answered (each kind
    of lookup waits within a budget of its own). A name RflySim3D did not
    answer for is not found at once for 5 s, without asking again, and is an
    entity as soon as it is spawned."""
    window, status_port = 18, 43216
    cfg, sim = start_emulator(processes, tmp_path, window, status_port)
    node = start_scene_node(processes, cfg, window, status_port, "scene_timeout_s:=4.0")
    n = collector.node
    wait_until_found(n, "Building_1")
    bogus = n.create_client(GetEntityState, "/get_entity_state")
    states = n.create_client(GetEntityState, "/get_entity_state")
    boxes = n.create_client(GetEntityBounds, "/get_entity_bounds")
    # A fresh client's first request can be lost while discovery still runs both ways: one answered call each
    # first, so every ghost below reaches the bridge.
    for c, name, request in ((bogus, "/get_entity_state", GetEntityState.Request(entity="Building_1")),
                             (states, "/get_entity_state", GetEntityState.Request(entity="Building_1")),
                             (boxes, "/get_entity_bounds", GetEntityBounds.Request(entity="uav1"))):
        assert answer(c, name, request, 10.0).result.result == Result.RESULT_OK
    began = time.monotonic()
    pending = []
    answered_at = {}
    for i in range(300):
        pending.append(bogus.call_async(GetEntityState.Request(entity=f"ghost_{i}")))
        pending[-1].add_done_callback(lambda _, i=i: answered_at.setdefault(i, time.monotonic()))
        time.sleep(0.003)
    # One call at a time: many answers at once overflow a service's replies (10 kept, the default QoS).
    failed = []
    for _ in range(10):
        st = answer(states, "/get_entity_state", GetEntityState.Request(entity="Building_1"), 10.0)
        bx = answer(boxes, "/get_entity_bounds", GetEntityBounds.Request(entity="uav1"), 10.0)
        failed += [r.result.error_message for r in (st, bx) if r.result.result != Result.RESULT_OK]
    assert time.monotonic() - began < 4.0, "the known ones were not asked while the others waited"
    assert not failed, failed
    # Every lookup of a ghost has timed out by now (a loaded machine may take longer).
    time.sleep(max(0.0, began + 6.0 - time.monotonic()))
    # A flood overflows the service's request queue (10 kept) when the node is slow to take them: the two
    # ghosts looked at are the first two that reached RflySim3D.
    commands = console_commands(processes, sim)
    first, second = [i for i in range(300) if f"RflyReqObjData 2 ghost_{i} 0" in commands][:2]
    deadline = time.monotonic() + 20
    while not (pending[first].done() and pending[second].done()):
        assert time.monotonic() < deadline, "the first lookups of unknown names were never answered"
        time.sleep(0.05)
    over = [f for f in pending if f.done() and "try again" in f.result().result.error_message]
    assert over, "the unknown names' budget never filled"
    asked = time.monotonic()
    again = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity=f"ghost_{first}"))
    assert again.result.result == Result.RESULT_NOT_FOUND and "did not answer for it" in again.result.error_message, \
        again.result.error_message
    assert time.monotonic() - asked < 1.0, "answered without waiting for RflySim3D"
    assert console_commands(processes, sim).count(f"RflyReqObjData 2 ghost_{first} 0") == 1
    # Spawned, the name is an entity at once.
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request(f"ghost_{first}")).result.result == Result.RESULT_OK
    found = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity=f"ghost_{first}"))
    assert found.result.result == Result.RESULT_OK, found.result.error_message
    # After its 5 s, a remembered name is asked for again.
    time.sleep(max(0.0, answered_at[second] + 5.5 - time.monotonic()))
    late = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity=f"ghost_{second}"))
    assert late.result.result == Result.RESULT_NOT_FOUND and "did not answer within" in late.result.error_message, \
        late.result.error_message
    assert console_commands(processes, sim).count(f"RflyReqObjData 2 ghost_{second} 0") == 2
    assert node.poll() is None


def test_values_not_finite_in_f32_neither_leave_nor_are_published(collector, processes, tmp_path):
    """1e39 is finite in f64, infinite in the wire's f32: a request carrying
    it is refused with the field named, and nothing leaves. Structs from the
    status port with a NaN or an infinity anywhere are dropped and counted
    (/diagnostics), logged, and the good one after them is taken."""
    window, status_port = 19, 43217
    rfly = FakeRflySim3D(window)
    node = start_scene_node(processes, empty_config(tmp_path), window, status_port, "scene_timeout_s:=3.0")
    n = collector.node
    far = call(n, SpawnEntity, "/spawn_entity", spawn_request("far", at=(1e39, 0.0, 1.0)))
    assert far.result.result == SpawnEntity.Response.INVALID_POSE
    assert "initial_pose.pose.position.x = 1e39" in far.result.error_message, far.result.error_message
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("near", at=(1.0, 2.0, 3.0))).result.result \
        == Result.RESULT_OK
    fast = SetEntityState.Request(entity="near", set_pose=True, set_twist=True)
    fast.state.pose = pose(1.0, 2.0, 3.0)
    fast.state.twist.linear.y = 1e39
    r = call(n, SetEntityState, "/set_entity_state", fast).result
    assert r.result == Result.RESULT_OPERATION_FAILED and "state.twist.linear.y = 1e39" in r.error_message, r
    away = SetEntityState.Request(entity="near", set_pose=True)
    away.state.pose = pose(1.0, 2.0, -1e39)
    r = call(n, SetEntityState, "/set_entity_state", away).result
    assert r.result == SetEntityState.Response.INVALID_POSE and "state.pose.position.z" in r.error_message, r
    pub = poses_publisher(n)
    pub.publish(ScenePoses(ids=[5, 6], poses=[pose(1.0, 0.0, 2.0), pose(1e39, 0.0, 2.0)]))
    pub.publish(ScenePoses(ids=[7], poses=[pose(3.0, 0.0, 2.0)]))
    got = rfly.drain(1.5)
    updates = [struct.unpack("3i14f4d", d) for d in got if len(d) == 104]
    assert [u[1] for u in updates] == [1000], "only the spawn of 'near' placed a vehicle"
    assert all(math.isfinite(v) for v in updates[0][3:]), updates
    swarms = [struct.unpack("i200H600f300H100f", d) for d in got if len(d) == 3804]
    assert [[i for i in m[1:101] if i] for m in swarms] == [[7]], "the message with 1e39 sent nothing"
    assert all(math.isfinite(v) for v in swarms[0][201:801])

    collisions, odom, rays = subscribe_vehicle_scene(collector, 1)
    diag = collector.subscribe(DiagnosticArray, "/diagnostics", RELIABLE)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    to = ("127.0.0.1", status_port)
    nan, inf = math.nan, math.inf
    deadline = time.monotonic() + 10
    while not collector.messages(odom):
        assert time.monotonic() < deadline, "no scene odometry"
        s.sendto(crash_data(0), to)
        time.sleep(0.1)
    bad = [crash_data(-2, vel=(nan, 0.0, 0.0)), crash_data(-2, ray=nan), crash_data(-2, contact=(0.0, inf, 0.0)),
           crash_data(-2, vel=(0.0, 0.0, -inf)), crash_data(-2, runned=nan)]
    for d in bad:
        s.sendto(d, to)
    s.sendto(crash_data(-2), to)
    c = collector.wait_for(collisions, 1, timeout=5)[0]
    assert (c.contact_point.x, c.contact_point.y, c.contact_point.z) == (20.0, 10.0, 0.0)
    time.sleep(0.5)
    assert len(collector.messages(collisions)) == 1
    for o in collector.messages(odom):
        t = o.twist.twist.linear
        assert all(math.isfinite(v) for v in (t.x, t.y, t.z, o.pose.pose.position.x)), o
    assert all(math.isfinite(m.front) for m in collector.messages(rays))
    deadline = time.monotonic() + 10
    while scene_drops(collector, diag, "not_finite") != len(bad):
        assert time.monotonic() < deadline, f"counted {scene_drops(collector, diag, 'not_finite')}"
        time.sleep(0.1)
    assert "dropped: vel_ned is not finite" in processes.output(node)

    # A reply whose box is not finite is dropped; the good one after it answers the call.
    asking = n.create_client(GetEntityBounds, "/get_entity_bounds")
    # A fresh client's first request can be lost while discovery still runs both ways: one answered call first
    # (a name no entity can have, refused without asking RflySim3D).
    refused = answer(asking, "/get_entity_bounds", GetEntityBounds.Request(entity="no name"), 10.0)
    assert refused.result.result == Result.RESULT_NOT_FOUND, refused.result.error_message
    rfly.drain(0.2)
    future = asking.call_async(GetEntityBounds.Request(entity="uav1"))
    deadline = time.monotonic() + 5
    while b"RflyReqObjData 1 1 0" not in b"".join(rfly.drain(0.1)):
        assert time.monotonic() < deadline, "the node never asked for vehicle 1"

    def copter_data(extent):
        return struct.pack("<2i16f1d", 1234567891, 1, 1.0, 2.0, -3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
                           1.0, 2.0, -3.0, *extent, 3.5)
    s.sendto(copter_data((0.275, nan, 0.15)), to)
    s.sendto(copter_data((0.275, 0.275, 0.15)), to)
    deadline = time.monotonic() + 5
    while not future.done():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    b = future.result()
    assert b.result.result == Result.RESULT_OK, b.result.error_message
    upper = b.bounds.points[0]
    assert (round(upper.x, 3), round(upper.y, 3), round(upper.z, 3)) == (0.275, 0.275, 0.15)
    assert node.poll() is None


def test_spawned_vehicles_have_label_topics_up_to_their_bound(collector, processes, tmp_path):
    """Spawned vehicles get collision, scene/odom, scene/rays and label up to
    max_spawned_vehicle_topics; a label on a spawned vehicle's topic reaches
    RflySim3D as the SDK's CopterMsg; one spawned beyond the bound is in the
    scene without topics of its own, and a delete frees its place."""
    from rflysim_bridge.msg import VehicleLabel
    from std_msgs.msg import ColorRGBA

    window, status_port = 18, 43218
    rfly = FakeRflySim3D(window)
    node = start_scene_node(processes, empty_config(tmp_path), window, status_port, "first_spawn_id:=3000",
                            "max_spawned_vehicle_topics:=2")
    n = collector.node
    for name in ("a", "b", "c"):
        assert call(n, SpawnEntity, "/spawn_entity", spawn_request(name)).result.result == Result.RESULT_OK

    def topics_of(vid):
        return {t for t, _ in n.get_topic_names_and_types() if t.startswith(f"/rflysim/uav{vid}/")}

    want = {f"/rflysim/uav{{}}/{t}" for t in ("collision", "scene/odom", "scene/rays", "label")}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(topics_of(v) == {t.format(v) for t in want} for v in (3000, 3001)):
        time.sleep(0.2)
    assert topics_of(3000) == {t.format(3000) for t in want}, topics_of(3000)
    assert topics_of(3001) == {t.format(3001) for t in want}, topics_of(3001)
    assert topics_of(3002) == set(), "the third spawned vehicle has no topics of its own"
    assert "uav3002 is spawned without topics of its own" in processes.output(node)

    pub = n.create_publisher(VehicleLabel, "/rflysim/uav3001/label", RELIABLE)
    label = VehicleLabel(kind=VehicleLabel.KIND_MESSAGE, text="hello", color=ColorRGBA(r=1.0, g=0.0, b=0.0, a=1.0),
                         size=20.0, display_time=5.0, line=VehicleLabel.LINE_NEW)
    got, deadline = [], time.monotonic() + 10
    while not got and time.monotonic() < deadline:
        pub.publish(label)
        got = [d for d in rfly.received(152, timeout=0.5)
               if struct.unpack_from("<2i", d) == (1234567899, 3001)]
    assert got, "the spawned vehicle's label reached RflySim3D as CopterMsg"
    assert got[0][32:37] == b"hello"

    # A delete frees a place: the next spawn has its topics.
    assert call(n, DeleteEntity, "/delete_entity", DeleteEntity.Request(entity="a")).result.result == Result.RESULT_OK
    assert call(n, SpawnEntity, "/spawn_entity", spawn_request("d")).result.result == Result.RESULT_OK
    # (Its id is the lowest not in use from first_spawn_id on.)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(topics_of(v) == {t.format(v) for t in want} for v in (3000, 3003)):
        time.sleep(0.2)
    assert any(topics_of(v) == {t.format(v) for t in want} for v in (3000, 3003)), (topics_of(3000), topics_of(3003))
