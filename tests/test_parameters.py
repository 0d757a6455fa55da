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
    ("gimbal_node", "gimbal_bits:=v2", 'parameter gimbal_bits: "v2" is not one of protocol, sdk'),
    ("mavros_launcher", "copter_ids:=[1,-3]", "parameter copter_ids: -3 is not a vehicle id"),
    ("mavros_launcher", "sim_ip:=localhost", 'parameter sim_ip: "localhost" is not an IPv4 address'),
    ("bridge", "stamp_source:=unix", 'parameter stamp_source: "unix" is not one of auto, sim, arrival'),
    ("gps_denied_bridge", "diagnostics_period:=.nan", "parameter diagnostics_period: NaN is outside 0.05..=60"),
    ("gps_denied_bridge", "cmd_timeout:=0.0", "parameter cmd_timeout: 0 is outside 0.01..=60"),
    ("gps_denied_bridge", "thrust_gain:=.inf", "parameter thrust_gain: inf is outside -1000000..=1000000"),
    ("gps_denied_bridge", "stamp_source:=unix", 'parameter stamp_source: "unix" is not one of auto, sim, arrival'),
    ("gps_denied_bridge", "max_message_bytes:=10", "parameter max_message_bytes: 10 is outside 1024..=67108864"),
    ("gps_denied_bridge", "rcvbuf_bytes:=0", "parameter rcvbuf_bytes: 0 is outside 65536..=1073741824"),
    ("gps_denied_bridge", "local_port:=0", "parameter local_port: 0 is outside 1..=65535"),
    ("gps_denied_bridge", "source:=tcp", 'parameter source: "tcp" is not one of udp, ros'),
    ("auv_bridge", "qos_depth:=0", "parameter qos_depth: 0 is outside 1..=1000"),
    ("auv_bridge", "max_jpeg_bytes:=1", "parameter max_jpeg_bytes: 1 is outside 1024..=1073741824"),
    ("auv_bridge", "image_port:=70000", "parameter image_port: 70000 is outside 1..=65535"),
    ("auv_bridge", "angle_unit:=grad", 'parameter angle_unit: "grad" is not one of rad, deg'),
    ("auv_bridge", "decode_jpeg_always:=true", "parameter decode_jpeg_always: true contradicts decode_images_always"),
    ("aerosim_bridge", "fetch_wait_ms:=5000", "parameter fetch_wait_ms: 5000 is outside 0..=1000"),
]


@pytest.mark.parametrize("name,param,message", REFUSED, ids=[f"{n}-{p}" for n, p, _ in REFUSED])
def test_a_bad_value_stops_the_executable_naming_the_parameter(processes, name, param, message):
    extra = ["-p", "decode_images_always:=false"] if param.startswith("decode_jpeg_always") else []
    proc = processes.start([executable(name), "--ros-args", "-p", f"rflysim_config:={CONFIG}", "-p", param, *extra])
    assert proc.wait(timeout=15) == 1, processes.output(proc)
    out = processes.output(proc)
    assert f"error: {message}" in out, out
