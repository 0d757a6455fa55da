"""The scene node's ground, labels and catalogue against the built-in
emulator: the terrain heights of RflySim's map files (which the emulator
writes for its own maps) agree with the ground the emulator crashes
vehicles into; a vehicle spawned under the ground stands on it; the height
map comes latched to a late subscriber; vehicle labels reach RflySim3D as
exactly the message RflySim's SDK sends (CopterMsg), malformed ones never; spawnables, entity info and available worlds through rclpy clients
of the standard's own types."""

import json
import math
import time

from conftest import call, dropped_count, executable
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import PointCloud2
from simulation_interfaces.msg import EntityCategory, Result, SimulatorFeatures
from simulation_interfaces.srv import (GetAvailableWorlds, GetCurrentWorld, GetEntityBounds, GetEntityInfo,
                                       GetEntityState, GetSimulatorFeatures, GetSpawnables, LoadWorld, SetEntityState,
                                       SpawnEntity)
from std_msgs.msg import ColorRGBA

from rflysim_bridge.msg import Collision, VehicleLabel
from rflysim_bridge.srv import GetTerrainHeight
from test_scene import pose, spawn_request

RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The emulator's maps (crates/rflysim/sim/src/world.rs): Grasslands has one
# hill, 6 m high at NED (40, -40), i.e. ENU (-40, 40), 12 m in radius.
HILLTOP = (-40.0, 40.0)


def start(processes, tmp_path, window, status_port, world="Grasslands", *params):
    maps = tmp_path / "maps"
    cfg = tmp_path / "Config.json"
    cfg.write_text(json.dumps({"VisionSensors": []}))
    sim = processes.start([executable("rflysim_sim"), "--config", cfg, "--copters", "1", "--stats", "0",
                           "--window-id", str(window), "--gimbal-target", f"127.0.0.1:{status_port}",
                           "--write-maps", maps], name="rflysim_sim")
    deadline = time.monotonic() + 10
    while not (maps / "MountainTerrain.txt").exists():
        assert time.monotonic() < deadline, processes.output(sim)
        time.sleep(0.05)
    args = [executable("scene_node"), "--ros-args", "-p", f"rflysim_config:={cfg}", "-p", f"window_id:={window}",
            "-p", f"status_port:={status_port}", "-p", "status_multicast:=false", "-p", f"map_dir:={maps}",
            "-p", f"world_name:={world}", "-p", "scene_timeout_s:=2.0"]
    for p in params:
        args += ["-p", p]
    node = processes.start(args, name="scene_node")
    return sim, node, maps


def height(n, x, y):
    r = call(n, GetTerrainHeight, "/rflysim/get_terrain_height", GetTerrainHeight.Request(x=x, y=y))
    assert r.success, r.message
    return r


def move(n, name, x, y, z):
    r = SetEntityState.Request(entity=name, set_pose=True)
    r.state.pose = pose(x, y, z)
    assert call(n, SetEntityState, "/set_entity_state", r).result.result == Result.RESULT_OK


def cloud_points(m):
    """(x, y, z) of each point of an x, y, z float32 cloud."""
    import struct
    return [struct.unpack_from("<3f", bytes(m.data), i) for i in range(0, len(m.data), m.point_step)]


def test_heights_match_the_emulator_s_ground_and_a_spawn_lands_on_it(collector, processes, tmp_path):
    sim, node, maps = start(processes, tmp_path, 16, 43214)
    n = collector.node
    top = height(n, *HILLTOP)
    assert top.inside and top.world == "Grasslands"
    assert abs(top.height - 6.0) < 0.02, top.height
    assert abs(height(n, 0.0, 0.0).height) < 1e-9, "flat where vehicle 1 flies"
    off = height(n, 500.0, 0.0)
    assert not off.inside and abs(off.height) < 1e-9, "off the map: its edge"
    bad = call(n, GetTerrainHeight, "/rflysim/get_terrain_height", GetTerrainHeight.Request(x=math.nan, y=0.0))
    assert not bad.success and bad.message

    # The emulator's own ground: a vehicle 5 cm under the service's height
    # crashes into it, one 5 cm over it (its box's bottom) does not.
    collisions = collector.subscribe(Collision, "/rflysim/scene/collisions", RELIABLE)
    slope = (-40.0, 35.0)
    h = height(n, *slope).height
    assert 1.0 < h < 5.0, h
    r = call(n, SpawnEntity, "/spawn_entity", spawn_request("probe", at=(slope[0], slope[1], h + 3.0)))
    assert r.result.result == Result.RESULT_OK, r.result.error_message
    move(n, "probe", slope[0], slope[1], h + 0.15 + 0.05)
    time.sleep(1.5)
    assert collector.messages(collisions) == [], "above the ground: no crash"
    move(n, "probe", slope[0], slope[1], h - 0.05)
    c = collector.wait_for(collisions, 1, timeout=5)[0]
    assert c.crash_type == Collision.CRASH_GROUND
    assert abs(c.contact_point.z - h) < 0.03, (c.contact_point.z, h)

    # Asked for under the ground: RflySim3D puts it on the ground; asked for above it: where asked.
    low = call(n, SpawnEntity, "/spawn_entity", spawn_request("rover", at=(-40.0, 34.0, 0.0)))
    assert low.result.result == Result.RESULT_OK, low.result.error_message
    ground = height(n, -40.0, 34.0).height
    st = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="rover"))
    b = call(n, GetEntityBounds, "/get_entity_bounds", GetEntityBounds.Request(entity="rover"))
    assert st.result.result == Result.RESULT_OK and b.result.result == Result.RESULT_OK
    bottom = st.state.pose.position.z + b.bounds.points[1].z
    assert abs(bottom - ground) < 0.03, (bottom, ground)
    high = call(n, SpawnEntity, "/spawn_entity", spawn_request("kite", at=(-40.0, 34.0, ground + 4.0)))
    assert high.result.result == Result.RESULT_OK
    st = call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="kite"))
    assert abs(st.state.pose.position.z - (ground + 4.0)) < 1e-3

    # The height map, latched: a subscriber that comes now still gets it.
    maps_seen = collector.subscribe(PointCloud2, "/rflysim/scene/terrain", LATCHED)
    m = collector.wait_for(maps_seen, 1, timeout=10)[0]
    assert m.header.frame_id == "rflysim/map"
    assert [f.name for f in m.fields] == ["x", "y", "z"] and (m.height, m.width) == (401, 401)
    points = cloud_points(m)
    peak = max(points, key=lambda p: p[2])
    assert (peak[0], peak[1]) == HILLTOP and abs(peak[2] - top.height) < 1e-5
    for p in points[::9973]:
        assert abs(height(n, p[0], p[1]).height - p[2]) < 1e-4, p

    # Another map: its own heights, its own latched cloud; a map without files has none.
    load = LoadWorld.Request()
    load.world_resource.uri = "rflysim://map/MountainTerrain"
    assert call(n, LoadWorld, "/load_world", load).result.result == Result.RESULT_OK
    assert abs(height(n, *HILLTOP).height) < 1e-9
    assert abs(height(n, 40.0, -40.0).height - 10.0) < 0.02
    late = collector.subscribe(PointCloud2, "/rflysim/scene/terrain", LATCHED, key="late")
    assert max(p[2] for p in cloud_points(collector.wait_for("late", 1, timeout=10)[0])) > 9.9
    load.world_resource.uri = "rflysim://map/Nowhere"
    assert call(n, LoadWorld, "/load_world", load).result.result == Result.RESULT_OK
    none = call(n, GetTerrainHeight, "/rflysim/get_terrain_height", GetTerrainHeight.Request(x=0.0, y=0.0))
    assert not none.success and "Nowhere" in none.message
    assert node.poll() is None and sim.poll() is None


def label(kind=VehicleLabel.KIND_ID, text="uav one", rgb=(1.0, 0.5, 0.0), size=20.0, seconds=0.0, line=0):
    return VehicleLabel(kind=kind, text=text, color=ColorRGBA(r=rgb[0], g=rgb[1], b=rgb[2], a=1.0), size=size,
                        display_time=seconds, line=line)


def test_labels_reach_rflysim3d_as_the_sdk_s_message_and_malformed_ones_never(collector, processes, tmp_path):
    """The SDK's CopterMsg (6i2f120s, checksum 1234567899): dispFlag 0 is the ID row, 1-5 the message
    rows, -1 a new one; the emulator logs each field as it decodes them."""
    sim, node, _ = start(processes, tmp_path, 17, 43215)
    n = collector.node
    pub = n.create_publisher(VehicleLabel, "/rflysim/uav1/label", RELIABLE)
    deadline = time.monotonic() + 10
    while pub.get_subscription_count() == 0:
        assert time.monotonic() < deadline, "the scene node does not subscribe rflysim/uav1/label"
        time.sleep(0.05)
    diag = collector.subscribe(DiagnosticArray, "/diagnostics")

    def sim_log_after(text, timeout=5.0):
        deadline = time.monotonic() + timeout
        while text not in processes.output(sim):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    pub.publish(label())
    assert sim_log_after('CopterID 1 dispFlag 0 RGB [255, 128, 0] dispTime 1 fontSize 20 text "uav one"\n'), \
        processes.output(sim)
    assert sim_log_after('vehicle 1 shows ID label: "uav one" colour FF8000 size 20')
    pub.publish(label(VehicleLabel.KIND_MESSAGE, "battery 80%", (0.0, 1.0, 0.0), 12.5, 5.0, VehicleLabel.LINE_NEW))
    assert sim_log_after('CopterID 1 dispFlag -1 RGB [0, 255, 0] dispTime 5 fontSize 12.5 text "battery 80%"\n'), \
        processes.output(sim)
    # Line 1 is the SDK's first message row; no console reads the text: quotes, '|' and UTF-8 are text.
    pub.publish(label(VehicleLabel.KIND_MESSAGE, 'charge "ok" | 電池', (0.0, 0.0, 1.0), 20.0, 0.0, 1))
    assert sim_log_after('CopterID 1 dispFlag 1 RGB [0, 0, 255] dispTime 0 fontSize 20'), processes.output(sim)
    assert sim_log_after('vehicle 1 shows message line Line(1) for 0 s: "charge "ok" | 電池" colour 0000FF'), \
        processes.output(sim)

    # Each of these RflySim3D would not show as asked: refused, nothing sent.
    message = VehicleLabel.KIND_MESSAGE
    bad_ones = (label(text="a\nb"), label(text="x" * 120), label(rgb=(2.0, 0.0, 0.0)), label(size=0.0),
                label(size=math.nan), label(message, seconds=5.0, line=0), label(message, seconds=5.0, line=6),
                label(message, seconds=math.inf, line=1), label(message, seconds=86401.0, line=1), label(kind=9))
    for i, bad in enumerate(bad_ones, 1):
        pub.publish(bad)
        # The label topic keeps the last 10 (commands' QoS): no burst longer than that.
        if i == 5:
            assert dropped_count(collector, diag, "scene", "label_refused", 5) == 5
    pub.publish(label(text="after the bad ones"))
    assert sim_log_after('text "after the bad ones"'), processes.output(sim)
    sent = [line for line in processes.output(sim).splitlines() if "label from" in line]
    assert len(sent) == 4, sent
    assert "rflysim/uav1/label refused, nothing sent" in processes.output(node)
    assert dropped_count(collector, diag, "scene", "label_refused", 10) == 10
    assert node.poll() is None


def test_spawnables_entity_info_and_available_worlds(collector, processes, tmp_path):
    sim, node, maps = start(processes, tmp_path, 18, 43216)
    n = collector.node
    features = call(n, GetSimulatorFeatures, "/get_simulator_features", GetSimulatorFeatures.Request()).features
    for f in (SimulatorFeatures.SPAWNABLES, SimulatorFeatures.ENTITY_INFO_GETTING, SimulatorFeatures.AVAILABLE_WORLDS):
        assert f in features.features
    assert SimulatorFeatures.ENTITY_CATEGORIES not in features.features, "get_entities filters by name only"

    sp = call(n, GetSpawnables, "/get_spawnables", GetSpawnables.Request())
    assert sp.result.result == Result.RESULT_OK
    uris = [s.entity_resource.uri for s in sp.spawnables]
    assert "rflysim://vehicle/3" in uris and "rflysim://vehicle/30" in uris
    assert all(s.description for s in sp.spawnables)
    # Each one spawns.
    for i, uri in enumerate(uris):
        r = call(n, SpawnEntity, "/spawn_entity", spawn_request(f"s{i}", uri=uri, at=(5.0 * i - 20.0, -20.0, 3.0)))
        assert r.result.result == Result.RESULT_OK, (uri, r.result.error_message)

    def info(name):
        return call(n, GetEntityInfo, "/get_entity_info", GetEntityInfo.Request(entity=name))

    assert info("uav1").info.category.category == EntityCategory.CATEGORY_ROBOT
    person = info(f"s{uris.index('rflysim://vehicle/30')}")
    assert person.result.result == Result.RESULT_OK and person.info.category.category == EntityCategory.CATEGORY_HUMAN
    assert "type 30" in person.info.description
    assert call(n, GetEntityState, "/get_entity_state", GetEntityState.Request(entity="Building_1")).result.result \
        == Result.RESULT_OK
    assert info("Building_1").info.category.category == EntityCategory.CATEGORY_STATIC_OBJECT
    assert info("no_such_thing").result.result == Result.RESULT_NOT_FOUND

    worlds = call(n, GetAvailableWorlds, "/get_available_worlds", GetAvailableWorlds.Request())
    assert worlds.result.result == Result.RESULT_OK, worlds.result.error_message
    assert [w.name for w in worlds.worlds] == ["Grasslands", "MountainTerrain"]
    assert all("401x401 heights" in w.description for w in worlds.worlds)
    for w in worlds.worlds:
        assert call(n, LoadWorld, "/load_world", LoadWorld.Request(world_resource=w.world_resource)).result.result \
            == Result.RESULT_OK
    assert "mountainterrain, its ground" in processes.output(sim).lower()
    more = GetAvailableWorlds.Request(additional_sources=[str(tmp_path / "missing")], continue_on_error=True)
    r = call(n, GetAvailableWorlds, "/get_available_worlds", more)
    assert r.result.result == Result.RESULT_OK and "missing" in r.result.error_message and len(r.worlds) == 2
    assert node.poll() is None


def test_a_map_name_is_a_file_name_and_no_map_is_read_outside_map_dir(collector, processes, tmp_path):
    """A map's name becomes `<map_dir>/<name>.png` and `.txt`: one that is a
    path would read (and tell of) any such pair on the machine. The pair
    outside map_dir here is a real map's, so that nothing but the name's
    check can refuse it."""
    sim, node, maps = start(processes, tmp_path, 15, 43218)
    n = collector.node
    outside = tmp_path / "outside"
    outside.mkdir()
    for suffix in (".png", ".txt"):
        (outside / f"Secret{suffix}").write_bytes((maps / f"MountainTerrain{suffix}").read_bytes())
    load = LoadWorld.Request()
    for uri in ("rflysim://map/../outside/Secret", "rflysim://map/../maps/Grasslands", "rflysim://map/..",
                "rflysim://map/sub\\Secret"):
        load.world_resource.uri = uri
        r = call(n, LoadWorld, "/load_world", load)
        assert r.result.result == LoadWorld.Response.UNSUPPORTED_FORMAT, (uri, r.result.error_message)
        assert "not a file name" in r.result.error_message, r.result.error_message
    current = call(n, GetCurrentWorld, "/get_current_world", GetCurrentWorld.Request())
    assert current.world.name == "Grasslands", "a refused map changes nothing"
    assert height(n, 0.0, 0.0).world == "Grasslands"

    # Further sources of worlds are folders inside map_dir, too.
    (maps / "more").mkdir()
    for suffix in (".png", ".txt"):
        (maps / "more" / f"Hill{suffix}").write_bytes((maps / f"Grasslands{suffix}").read_bytes())
    asked = GetAvailableWorlds.Request(additional_sources=[str(outside), "../outside", "more"], continue_on_error=True)
    r = call(n, GetAvailableWorlds, "/get_available_worlds", asked)
    assert r.result.result == Result.RESULT_OK, r.result.error_message
    assert sorted(w.name for w in r.worlds) == ["Grasslands", "Hill", "MountainTerrain"], r.worlds
    assert r.result.error_message.count("not a folder inside map_dir") == 2, r.result.error_message
    strict = GetAvailableWorlds.Request(additional_sources=[str(outside)])
    r = call(n, GetAvailableWorlds, "/get_available_worlds", strict)
    assert r.result.result == Result.RESULT_OPERATION_FAILED and not r.worlds, r.result.error_message
    assert node.poll() is None and sim.poll() is None
