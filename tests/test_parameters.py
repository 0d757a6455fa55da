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
    ("bridge", "diagnostics_period_s:=0.01", "parameter diagnostics_period_s: 0.01 is outside 0.05..=60"),
    ("bridge", "imu_gyro_variance:=-1.0", "parameter imu_gyro_variance: -1 is not a finite number ≥ 0"),
    ("bridge", "tf_source:=gps", 'parameter tf_source: "gps" is not one of lidar, state'),
    ("bridge", "vehicle_ids:=[0]", "parameter vehicle_ids: 0 is not a vehicle id"),
    ("bridge", "imu_rate_hz:=true", "parameter imu_rate_hz: "),
    ("camera_node", "seq_id:=-2", "parameter seq_id: -2 is outside -1..=65535"),
    ("gimbal_node", "status_port:=70000", "parameter status_port: 70000 is outside 1..=65535"),
    ("gimbal_node", "gimbal_bits:=v2", 'parameter gimbal_bits: "v2" is not one of protocol, sdk'),
    ("mavros_launcher", "vehicle_ids:=[1,-3]", "parameter vehicle_ids: -3 is not a vehicle id"),
    ("mavros_launcher", "sim_host:=no-such-host.invalid", 'parameter sim_host: host name "no-such-host.invalid" does not'),
    ("bridge", "stamp_source:=unix", 'parameter stamp_source: "unix" is not one of auto, sim, arrival'),
    ("gps_denied_bridge", "diagnostics_period_s:=.nan", "parameter diagnostics_period_s: NaN is outside 0.05..=60"),
    ("gps_denied_bridge", "cmd_timeout_s:=0.0", "parameter cmd_timeout_s: 0 is outside 0.01..=60"),
    ("gps_denied_bridge", "thrust_gain:=.inf", "parameter thrust_gain: inf is outside -1000000..=1000000"),
    ("gps_denied_bridge", "stamp_source:=unix", 'parameter stamp_source: "unix" is not one of auto, sim, arrival'),
    ("gps_denied_bridge", "max_message_bytes:=10", "parameter max_message_bytes: 10 is outside 1024..=67108864"),
    ("gps_denied_bridge", "rcvbuf_bytes:=0", "parameter rcvbuf_bytes: 0 is outside 65536..=1073741824"),
    ("gps_denied_bridge", "local_port:=0", "parameter local_port: 0 is outside 1..=65535"),
    ("gps_denied_bridge", "source:=tcp", 'parameter source: "tcp" is not one of udp, ros'),
    ("auv_bridge", "qos_depth:=0", "parameter qos_depth: 0 is outside 1..=1000"),
    ("auv_bridge", "max_message_bytes:=1", "parameter max_message_bytes: 1 is outside 1024..=1073741824"),
    ("auv_bridge", "image_port:=70000", "parameter image_port: 70000 is outside 1..=65535"),
    ("auv_bridge", "angle_unit:=grad", 'parameter angle_unit: "grad" is not one of rad, deg'),
    ("auv_bridge", "stamp_source:=sim", "parameter stamp_source: `sim` would drop every message"),
    ("aerosim_bridge", "fetch_wait_ms:=5000", "parameter fetch_wait_ms: 5000 is outside 0..=1000"),
]


@pytest.mark.parametrize("name,param,message", REFUSED, ids=[f"{n}-{p}" for n, p, _ in REFUSED])
def test_a_bad_value_stops_the_executable_naming_the_parameter(processes, name, param, message):
    proc = processes.start([executable(name), "--ros-args", "-p", f"rflysim_config:={CONFIG}", "-p", param])
    assert proc.wait(timeout=15) == 1, processes.output(proc)
    out = processes.output(proc)
    assert f"error: {message}" in out, out


NOW = "parameter `{}` is now `{}`; the old name still works"
# (executable, parameters given under former names, the warning, the error that shows the value reached the new name)
FORMER = [
    ("bridge", ["copter_ids:=[0]"], NOW.format("copter_ids", "vehicle_ids"), "parameter vehicle_ids: 0 is not"),
    ("bridge", ["sim_ip:=no-such-host.invalid"], NOW.format("sim_ip", "sim_host"),
     'parameter sim_host: host name "no-such-host.invalid" does not'),
    ("bridge", ["max_frame_bytes:=1"], NOW.format("max_frame_bytes", "max_message_bytes"),
     "parameter max_message_bytes: 1 is outside"),
    ("bridge", ["diagnostics_period:=0.01"], NOW.format("diagnostics_period", "diagnostics_period_s"),
     "parameter diagnostics_period_s: 0.01 is outside"),
    ("bridge", ["angle_unit:=degrees", "imu_rate_hz:=0"],
     "parameter `angle_unit`: `degrees` is now spelled `deg`; the old spelling still works",
     "parameter imu_rate_hz: 0 is outside"),
    ("scene_node", ["scene_timeout:=100.0"], NOW.format("scene_timeout", "scene_timeout_s"),
     "parameter scene_timeout_s: 100 is outside"),
    ("scene_node", ["world:=Grasslands", "max_scene_entities:=1"], NOW.format("world", "world_name"),
     "parameter max_scene_entities: 1 is outside"),
    ("gimbal_node", ["cmd_timeout:=0.0"], NOW.format("cmd_timeout", "cmd_timeout_s"),
     "parameter cmd_timeout_s: 0 is outside"),
    ("mavros_launcher", ["copter_ids:=[1,-3]"], NOW.format("copter_ids", "vehicle_ids"),
     "parameter vehicle_ids: -3 is not"),
    ("auv_bridge", ["auv_ids:=[256]"], NOW.format("auv_ids", "vehicle_ids"), "parameter vehicle_ids: 256 is not"),
    ("auv_bridge", ["world_frame:=up"], NOW.format("world_frame", "sim_axes"), 'parameter sim_axes: "up" is not one of'),
    ("auv_bridge", ["max_jpeg_bytes:=1"], NOW.format("max_jpeg_bytes", "max_message_bytes"),
     "parameter max_message_bytes: 1 is outside"),
    ("auv_bridge", ["reconnect_interval:=100.0"], NOW.format("reconnect_interval", "reconnect_interval_s"),
     "parameter reconnect_interval_s: 100 is outside"),
    ("gps_denied_bridge", ["altimeter_fov:=4.0"], NOW.format("altimeter_fov", "altimeter_fov_deg") + ": 4 rad read as 229.18",
     "parameter altimeter_fov_deg: 229.18"),
    ("gps_denied_bridge", ["altimeter_min_range:=-1.0"], NOW.format("altimeter_min_range", "altimeter_min_range_m"),
     "parameter altimeter_min_range_m: -1 is outside"),
    ("gps_denied_bridge", ["altimeter_max_range:=-1.0"], NOW.format("altimeter_max_range", "altimeter_max_range_m"),
     "parameter altimeter_max_range_m: -1 is outside"),
    ("aerosim_bridge", ["bootstrap_servers:=10.0.0.9:9093", "ack_timeout:=0.0"],
     "parameter `bootstrap_servers` is now `sim_host` and `sim_port`; the old name still works: "
     "read as sim_host `10.0.0.9` and sim_port `9093`", "parameter ack_timeout_s: 0 is outside"),
    ("aerosim_bridge", ["bootstrap_servers:=a:1,b:2"], "", "parameter bootstrap_servers: the servers' ports differ"),
    ("aerosim_bridge", ["actors:=[a-b]"], NOW.format("actors", "vehicle_ids"), 'parameter vehicle_ids: "a-b": an actor'),
    ("aerosim_bridge", ["max_record_bytes:=1"], NOW.format("max_record_bytes", "max_message_bytes"),
     "parameter max_message_bytes: 1 is outside"),
    ("aerosim_bridge", ["world_frame:=map", "fetch_wait_ms:=5000"], NOW.format("world_frame", "world_frame_id"),
     "parameter fetch_wait_ms: 5000 is outside"),
]


@pytest.mark.parametrize("name,params,warning,error", FORMER, ids=[f"{n}-{p[0]}" for n, p, _, _ in FORMER])
def test_a_former_name_is_read_under_the_new_one_with_a_warning(processes, name, params, warning, error):
    args = [executable(name), "--ros-args", "-p", f"rflysim_config:={CONFIG}"]
    for p in params:
        args += ["-p", p]
    proc = processes.start(args)
    assert proc.wait(timeout=15) == 1, processes.output(proc)
    out = processes.output(proc)
    assert warning in out and f"error: {error}" in out, out


@pytest.mark.parametrize("name,old,new", [("bridge", "copter_ids:=[0]", "vehicle_ids:=[2]"),
                                          ("gps_denied_bridge", "altimeter_fov:=9.0", "altimeter_fov_deg:=3.0"),
                                          ("aerosim_bridge", "bootstrap_servers:=x", "sim_host:=127.0.0.1")])
def test_where_both_names_are_given_the_new_one_wins_and_the_warning_says_so(processes, tmp_path, name, old, new):
    """The old value alone would stop the executable: it starts, so the new one was read."""
    out = tmp_path / "p.yaml"
    proc = processes.start([executable(name), "--ros-args", "-p", f"rflysim_config:={CONFIG}", "-p", old, "-p", new],
                           env={"RFLYSIM_BRIDGE_WRITE_PARAMETERS": str(out)})
    assert proc.wait(timeout=30) == 0, processes.output(proc)
    old_name, new_name = old.split(":=")[0], new.split(":=")[0]
    assert (f"both are given: `{new_name}` wins, `{old_name}` is ignored" in processes.output(proc)), processes.output(proc)
