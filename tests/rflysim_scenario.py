"""Runs the built-in RflySim emulator and the bridge for a test, and reads
back what the emulator rendered (its --dump directory)."""

import json
import math
import os
import struct
import time
from pathlib import Path

from conftest import executable

# The emulator's default trajectory (crates/rflysim/sim/src/world.rs).
RADIUS, OMEGA, ALTITUDE, ALT_AMP, ALT_OMEGA = 10.0, 0.25, 5.0, 1.0, 0.4

ENCODING = {1: "bgr8", 2: "16UC1", 3: "mono8", 4: "bgr8", 8: "bgr8", 9: "bgr8", 40: "mono8", 41: "bgr8"}
CHANNELS = {"bgr8": 3, "mono8": 1, "16UC1": 2}
# RflySim3D's depth pixel where it measured nothing (RflySim's SDK, "Depth camera"); 16UC1 says 0.
DEPTH_NO_RETURN = 65535
SUFFIX = {
    1: "img_rgb", 2: "img_depth", 3: "img_gray", 4: "img_Segmentation", 8: "fisheye", 9: "img_cine",
    40: "img_Infrared_Gray", 41: "img_Infrared", 20: "vehicle_lidar", 21: "global_lidar", 22: "livox_lidar",
    23: "mid360_lidar", 7: "Depth_Cloud", 5: "distance",
}


def expected_position_enu(t):
    """The vehicle's position at sim time t, ENU."""
    x_ned = RADIUS * math.cos(OMEGA * t)
    y_ned = RADIUS * math.sin(OMEGA * t)
    z_ned = -(ALTITUDE + ALT_AMP * math.sin(ALT_OMEGA * t))
    return (y_ned, x_ned, -z_ned)


def expected_heading_enu(t):
    """Unit horizontal velocity at t, ENU (the nose follows it)."""
    vx_ned, vy_ned = -math.sin(OMEGA * t), math.cos(OMEGA * t)
    return (vy_ned, vx_ned)


def stamp_seconds(header):
    return header.stamp.sec + header.stamp.nanosec * 1e-9


def sensor(seq, type_id, transport, port=0, width=32, height=24, hz=10, **extra):
    """A sensor of the config: `otherParams` is a LiDAR's range of 60 m, or a depth camera's clip range 0.1–100 m in mm."""
    s = {
        "SeqID": seq, "TypeID": type_id, "TargetCopter": 1, "DataWidth": width, "DataHeight": height,
        "DataCheckFreq": hz, "SendProtocol": [transport, 127, 0, 0, 1, port, 0, 0], "CameraFOV": 80,
        "SensorPosXYZ": [0.3, 0.0, 0.05], "SensorAngEular": [0.0, -0.3, 0.0],
        "otherParams": [0.1, 100, 0, 0, 0, 0, 0, 0] if type_id == 2 else [60, 0, 0, 0, 0, 0, 0, 0],
    }
    s.update(extra)
    return s


def as_published(type_id, rendered):
    """The pixels the bridge publishes for a frame the emulator rendered: a depth
    camera's RflySim3D "no return" (65535, mm) is 16UC1's 0; others as rendered."""
    if type_id != 2:
        return rendered
    values = struct.unpack(f"<{len(rendered) // 2}H", rendered)
    return struct.pack(f"<{len(values)}H", *(0 if v == DEPTH_NO_RETURN else v for v in values))


class Scenario:
    def __init__(self, processes, tmp_path, sensors, sim_args=(), bridge_params=None, bridge_args=(), copters=(1,),
                 bridge_executable="bridge", sim_prefix=(), bridge_env=None):
        self.processes = processes
        self.dump = tmp_path / "dump"
        self.config = tmp_path / "Config.json"
        self.config.write_text("// written by the test\n" + json.dumps({"VisionSensors": sensors}, indent=1))
        self.sensors = {s["SeqID"]: s for s in sensors}
        self.copters = copters
        # sim_prefix: e.g. `ip netns exec NS`, the emulator on another host.
        self.sim_argv = [*sim_prefix, executable("rflysim_sim"), "--config", self.config, "--dump", self.dump, "--stats", "0",
                         "--copters", ",".join(map(str, copters)), *map(str, sim_args)]
        self.sim = processes.start(self.sim_argv, name="rflysim_sim")
        params = {"rflysim_config": str(self.config), "use_sim_time": True, "vehicle_ids": list(copters)}
        params.update(bridge_params or {})
        args = [executable(bridge_executable), "--ros-args"]
        for k, v in params.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, list):
                v = "[" + ",".join(map(str, v)) + "]"
            args += ["-p", f"{k}:={v}"]
        args += list(bridge_args)
        self.bridge = processes.start(args, name=bridge_executable, env=bridge_env)

    def frames(self, seq):
        """{time_stamp: bytes} of what the emulator rendered for sensor seq."""
        out = {}
        index = self.dump / f"sensor{seq}.index"
        if not index.exists():
            return out
        for line in index.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and (self.dump / parts[2]).exists():
                out[float(parts[1])] = (self.dump / parts[2]).read_bytes()
        return out

    def rendered_at(self, seq, stamp, timeout=5.0):
        """What sensor seq rendered for the frame stamped `stamp` (sim time)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for t, data in self.frames(seq).items():
                if abs(t - stamp) < 2e-9:
                    return data
            time.sleep(0.05)
        raise AssertionError(f"sensor {seq}: no rendered frame at t = {stamp}")

    def imu_samples(self, copter=1):
        path = self.dump / f"imu{copter}.txt"
        rows = []
        if path.exists():
            for line in path.read_text().splitlines():
                p = line.split()
                if len(p) == 8:
                    rows.append((float(p[1]), [float(v) for v in p[2:5]], [float(v) for v in p[5:8]]))
        return rows

    def bridge_output(self):
        return self.processes.output(self.bridge)


def floats(data):
    return struct.unpack(f"<{len(data) // 4}f", bytes(data))
