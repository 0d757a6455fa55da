//! `rflysim_sim`: the built-in RflySim emulator. See `--help`.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rflysim_proto::config::{load_config, parse_config, AngleUnit};
use rflysim_proto::gimbal::{GimbalBitTable, GimbalEcho};
use rflysim_proto::ports::{true_state_port, CAMERA_STATUS_PORT, HEARTBEAT_PORT, MULTICAST_GROUP, REQUEST_BASE_PORT};
use rflysim_proto::request::GIMBAL_ECHO_CHECKSUM;
use rflysim_sim::emulator::Emulator;
use rflysim_sim::options::{HeaderChoice, LidarLayout, Options, RateMode};

/// `--help`, with the protocol's ports and numbers from `rflysim_proto`.
fn help() -> String {
    format!(
        "\
rflysim_sim: a built-in RflySim emulator (RflySim3D + CopterSim) speaking the
RflySim wire protocol over real UDP sockets and shared memory.

Usage: rflysim_sim [options]

Sensors and destinations
  --config PATH         RflySim Config.json to stream (default: the example config)
  --target-ip IP        send sensor data here instead of each sensor's SendProtocol address
  --window-id N         listen for VisionSensorReq on {REQUEST_BASE_PORT} + N (default 0)
  --no-requests         don't listen for requests
  --requested-only      stream only sensors requested over UDP, not the config's
  --copters 1,2         CopterSim instances (IMU on request, true state, heartbeat)
  --coptersim-target IP where true state ({true_state} + 2(id-1)) and heartbeats ({HEARTBEAT_PORT}) go
  --no-heartbeat        don't send the CopterSim heartbeat
Formats
  --header 24|32|alternate   datagram header kind (default 32)
  --lidar-layout protocol|sdk  LiDAR / depth-cloud payload layout over UDP (default protocol)
  --jpeg-quality Q           (default 90)
Rates
  --rate HZ             every sensor at HZ instead of its DataCheckFreq
  --flat-out            every sensor as fast as possible
  --reuse-frames        render once per sensor, resend with new stamps (benchmarks)
  --duration S          stop after S seconds
  --frames N            stop each sensor after N frames
  --start-time S        simulation time at start
  --stats S             print per-sensor frames/s and bytes/s every S seconds (0: never; default 1)
Faults (rates per datagram, 0..1)
  --loss P --reorder P --duplicate P --truncate P --garbage P
  --corrupt P           flip a bit in a datagram's header (receivers can notice)
  --corrupt-payload P   flip a bit in a datagram's payload (no RflySim receiver can notice)
  --restart-every S     simulator restart: frame ids and sim time back to zero
  --seed N              seed for reproducible faults
  --drop-packet F:P     drop exactly packet P of frame F (every sensor; repeatable)
Tests
  --dump DIR            write each rendered frame, IMU sample and heartbeat to DIR
                        (sensor<N>.index, imu<id>.txt, heartbeat<id>.txt)
  --send-log FILE       append \"SeqID time_stamp wall_time\" when each frame has been sent,
                        \"imu<copter id> time_stamp wall_time\" per IMU sample (benchmarks)
Gimbal
  --gimbal-target IP:PORT|none  unicast destination of gimbal echo / CameraData (default 127.0.0.1:{CAMERA_STATUS_PORT})
  --gimbal-multicast    also send them to {MULTICAST_GROUP}:{CAMERA_STATUS_PORT}
  --camera-data         send CameraData for every camera without RflyReqObjData
  --gimbal-bits protocol|sdk    control bit numbering (default protocol)
  --echo-checksum N     checksum of the {echo_len}-byte echo (default {GIMBAL_ECHO_CHECKSUM})

Anything after --ros-args is ignored, so that ROS launch files can start it.
",
        true_state = true_state_port(1),
        echo_len = GimbalEcho::LEN,
    )
}

const EXAMPLE_CONFIG: &str = include_str!("../../../../config/Config.json");

fn parse_args(args: Vec<String>) -> Result<Option<Options>, String> {
    let mut o = Options::default();
    let mut config: Option<PathBuf> = None;
    let mut it = args.into_iter();
    let value =
        |it: &mut dyn Iterator<Item = String>, flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
    fn num<T: std::str::FromStr>(v: &str, flag: &str) -> Result<T, String> {
        v.parse().map_err(|_| format!("{flag}: cannot read {v:?}"))
    }
    fn rate(v: &str, flag: &str) -> Result<f64, String> {
        let p: f64 = num(v, flag)?;
        if (0.0..=1.0).contains(&p) {
            Ok(p)
        } else {
            Err(format!("{flag}: {p} is not a probability"))
        }
    }
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--ros-args" => break,
            "--config" => config = Some(value(&mut it, &a)?.into()),
            "--target-ip" => o.target_ip = Some(num::<Ipv4Addr>(&value(&mut it, &a)?, &a)?),
            "--window-id" => o.window_id = num(&value(&mut it, &a)?, &a)?,
            "--no-requests" => o.listen_requests = false,
            "--requested-only" => o.stream_config = false,
            "--copters" => {
                o.copters = value(&mut it, &a)?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| num(s, "--copters"))
                    .collect::<Result<_, _>>()?
            }
            "--coptersim-target" => o.coptersim_target = num(&value(&mut it, &a)?, &a)?,
            "--no-heartbeat" => o.heartbeat = false,
            "--header" => {
                o.header = match value(&mut it, &a)?.as_str() {
                    "24" => HeaderChoice::Image24,
                    "32" => HeaderChoice::Frame32,
                    "alternate" => HeaderChoice::Alternate,
                    v => return Err(format!("--header: {v:?} is not 24, 32 or alternate")),
                }
            }
            "--lidar-layout" => {
                o.lidar_layout = match value(&mut it, &a)?.as_str() {
                    // `seed`: the former name of `protocol`.
                    "protocol" | "seed" => LidarLayout::Protocol,
                    "sdk" => LidarLayout::SdkInt16,
                    v => return Err(format!("--lidar-layout: {v:?} is not protocol or sdk")),
                }
            }
            "--jpeg-quality" => o.jpeg_quality = num(&value(&mut it, &a)?, &a)?,
            "--rate" => o.rate = RateMode::Forced(num(&value(&mut it, &a)?, &a)?),
            "--flat-out" => o.rate = RateMode::FlatOut,
            "--reuse-frames" => o.reuse_frames = true,
            "--duration" => o.duration = Some(num(&value(&mut it, &a)?, &a)?),
            "--frames" => o.max_frames = Some(num(&value(&mut it, &a)?, &a)?),
            "--start-time" => o.start_time = num(&value(&mut it, &a)?, &a)?,
            "--stats" => {
                let s: f64 = num(&value(&mut it, &a)?, &a)?;
                o.stats_interval = (s > 0.0).then(|| Duration::from_secs_f64(s));
            }
            "--loss" => o.faults.loss = rate(&value(&mut it, &a)?, &a)?,
            "--reorder" => o.faults.reorder = rate(&value(&mut it, &a)?, &a)?,
            "--duplicate" => o.faults.duplicate = rate(&value(&mut it, &a)?, &a)?,
            "--corrupt" => o.faults.corrupt = rate(&value(&mut it, &a)?, &a)?,
            "--corrupt-payload" => o.faults.corrupt_payload = rate(&value(&mut it, &a)?, &a)?,
            "--truncate" => o.faults.truncate = rate(&value(&mut it, &a)?, &a)?,
            "--garbage" => o.faults.garbage = rate(&value(&mut it, &a)?, &a)?,
            "--seed" => o.faults.seed = num(&value(&mut it, &a)?, &a)?,
            "--restart-every" => o.restart_every = Some(num(&value(&mut it, &a)?, &a)?),
            "--gimbal-target" => {
                let v = value(&mut it, &a)?;
                o.gimbal_unicast = if v == "none" {
                    None
                } else {
                    Some(num::<SocketAddrV4>(&v, &a)?)
                };
            }
            "--gimbal-multicast" => o.gimbal_multicast = true,
            "--camera-data" => o.camera_data_always = true,
            "--gimbal-bits" => {
                let v = value(&mut it, &a)?;
                o.gimbal_bits = GimbalBitTable::by_name(&v)
                    .ok_or_else(|| format!("--gimbal-bits: {v:?} is not protocol or sdk"))?;
            }
            "--echo-checksum" => o.echo_checksum = num(&value(&mut it, &a)?, &a)?,
            "--dump" => {
                let dir = PathBuf::from(value(&mut it, &a)?);
                std::fs::create_dir_all(&dir).map_err(|e| format!("--dump {}: {e}", dir.display()))?;
                o.dump_dir = Some(dir);
            }
            "--send-log" => o.send_log = Some(PathBuf::from(value(&mut it, &a)?)),
            "--drop-packet" => {
                let v = value(&mut it, &a)?;
                let (f, p) = v
                    .split_once(':')
                    .ok_or_else(|| format!("--drop-packet: {v:?} is not FRAME:PACKET"))?;
                o.drop_packets.push((num(f, &a)?, num(p, &a)?));
            }
            other => return Err(format!("unknown option {other:?} (see --help)")),
        }
    }
    o.sensors = match config {
        Some(path) => load_config(&path, AngleUnit::Auto).map_err(|e| e.to_string())?,
        None => parse_config(EXAMPLE_CONFIG, AngleUnit::Auto).map_err(|e| format!("example config: {e}"))?,
    };
    Ok(Some(o))
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1).collect()) {
        Ok(Some(o)) => o,
        Ok(None) => {
            // `rflysim_sim --help | head -1` closes the pipe early: no panic.
            let _ = std::io::stdout().write_all(help().as_bytes());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "rflysim_sim: {e}");
            return ExitCode::from(2);
        }
    };
    let emulator = match Emulator::start(options) {
        Ok(e) => e,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "rflysim_sim: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Ends on SIGINT / SIGTERM too, joining every thread so that the
    // shared-memory regions are unlinked.
    let emulator = std::sync::Arc::new(emulator);
    let waiter = emulator.clone();
    process_support::stop_signal::run_until_signal(
        move || waiter.wait(),
        |signal| {
            rflysim_sim::log::line(&format!("{signal}: stopping"));
            emulator.request_stop();
        },
    );
    if let Ok(e) = std::sync::Arc::try_unwrap(emulator) {
        e.stop();
    }
    ExitCode::SUCCESS
}
