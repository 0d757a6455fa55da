"""One policy for every parameter of the executables: a value out of
its range, of the wrong type or not one of its choices stops the executable
at start, with an error that names the parameter; nothing is clamped."""

import pytest
from conftest import ROOT, executable

CONFIG = ROOT / "config" / "Config.json"

REFUSED = [
    ("bridge", "imu_rate_hz:=5000", "parameter imu_rate_hz: 5000 is outside 1..=1000"),
    ("bridge", "window_id:=20", "parameter window_id: 20 is outside 0..=19"),
    ("bridge", "qos_depth:=0", "parameter qos_depth: 0 is outside 1..=1000"),
    ("bridge", "rcvbuf_bytes:=1024", "parameter rcvbuf_bytes: 1024 is outside 65536..=1073741824"),
    ("bridge", "diagnostics_period:=0.01", "parameter diagnostics_period: 0.01 is outside 0.05..=60"),
    ("bridge", "imu_gyro_variance:=-1.0", "parameter imu_gyro_variance: -1 is not a finite number ≥ 0"),
    ("bridge", "tf_source:=gps", 'parameter tf_source: "gps" is not one of lidar, state'),
    ("bridge", "copter_ids:=[0]", "parameter copter_ids: 0 is not a vehicle id"),
    ("bridge", "imu_rate_hz:=true", "parameter imu_rate_hz: "),
    ("camera_node", "seq_id:=-2", "parameter seq_id: -2 is outside -1..=65535"),
    ("gimbal_node", "status_port:=70000", "parameter status_port: 70000 is outside 1..=65535"),
    ("gimbal_node", "gimbal_bits:=v2", 'parameter gimbal_bits: "v2" is not one of protocol, seed000, sdk'),
    ("mavros_launcher", "copter_ids:=[1,-3]", "parameter copter_ids: -3 is not a vehicle id"),
    ("mavros_launcher", "sim_ip:=localhost", 'parameter sim_ip: "localhost" is not an IPv4 address'),
    ("bridge", "stamp_source:=unix", 'parameter stamp_source: "unix" is not one of auto, sim, arrival'),
    ("gps_denied_bridge", "diagnostics_period:=.nan", "parameter diagnostics_period: NaN is outside 0.05..=60"),
    ("gps_denied_bridge", "cmd_timeout:=0.0", "parameter cmd_timeout: 0 is outside 0.01..=60"),
    ("gps_denied_bridge", "thrust_gain:=.inf", "parameter thrust_gain: inf is outside -1000000..=1000000"),
    ("gps_denied_bridge", "stamp_source:=unix", 'parameter stamp_source: "unix" is not one of auto, sim, arrival'),
]


@pytest.mark.parametrize("name,param,message", REFUSED, ids=[f"{n}-{p}" for n, p, _ in REFUSED])
def test_a_bad_value_stops_the_executable_naming_the_parameter(processes, name, param, message):
    proc = processes.start([executable(name), "--ros-args", "-p", f"rflysim_config:={CONFIG}", "-p", param])
    assert proc.wait(timeout=15) == 1, processes.output(proc)
    out = processes.output(proc)
    assert f"error: {message}" in out, out
