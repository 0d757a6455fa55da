//! Command-line options of `auv_sim`.

use std::path::PathBuf;
use std::time::Duration;

use auv_proto::{IMAGE_PORT, TELEMETRY_PORT, THRUSTER_PORT, THRUST_KEEP};

use crate::faults::FaultConfig;

/// `--help`, with the wire's ports and numbers from `auv_proto`.
pub fn help() -> String {
    format!(
        "\
auv_sim: an emulator of the ZeroMQ AUV simulator. Binds its three
ports, moves every AUV by the thruster commands it pulls, publishes both
cameras (JPEG) and telemetry exactly as the simulator does.

Usage: auv_sim [options]

Sockets (the simulator binds; clients connect)
  --host H              address to bind (default 127.0.0.1; * for every interface)
  --image-port P        PUB [id][front JPEG][bottom JPEG] (default {IMAGE_PORT}; 0 = any free port)
  --thruster-port P     PULL [id][left,right,side,vertical: i8] (default {THRUSTER_PORT})
  --telemetry-port P    PUB [id][x,y,z,yaw,pitch,roll: f32 LE] (default {TELEMETRY_PORT})
AUVs and streams
  --auv-ids 0,1,2       the AUVs (default 0; [0,1,2] also reads); they start 3 m apart along east,
                        2 m deep, heading north
  --width W --height H  camera image size (default 640x480)
  --jpeg-quality Q      (default 80)
  --image-rate HZ       image messages per AUV per second (default 10)
  --telemetry-rate HZ   telemetry messages per AUV per second (default 50)
  --reuse-frames        render each camera once and resend it (benchmarks)
  --duration S          stop after S seconds
  --stats S             print per-stream rates every S seconds on stdout (0: never; default 1)
  --quiet               same as --stats 0
Faults (rates per message, 0..1)
  --junk P              a message of random parts (first part a valid id) before this one
  --wrong-parts P       this message with a part missing or one too many
  --wrong-length P      a two-byte id (images) or a payload of the wrong length (telemetry)
  --corrupt-jpeg P      one JPEG of this image message cut short
  --restart-every S     simulator restart: sockets closed, AUVs back at the start, then rebound
  --restart-down S      how long the simulator stays away at a restart (default 0.5)
  --seed N              seed for reproducible faults
Benchmarks
  --send-log FILE       append \"images|telemetry <id> <seq> <unix time>\" after each message is sent;
                        each JPEG carries \"auv_sim auv=<id> seq=<seq> camera=<name>\" in a comment

Units and axes of the telemetry: metres and radians, NED world, FRD body,
Z-Y-X (yaw, pitch, roll). Thrusters: left/right forward when positive, side
to starboard, vertical up; {THRUST_KEEP} keeps a thruster's level.
Anything after --ros-args is ignored, so that ROS launch files can start it.
"
    )
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub host: String,
    pub image_port: u16,
    pub thruster_port: u16,
    pub telemetry_port: u16,
    pub auv_ids: Vec<u8>,
    pub width: usize,
    pub height: usize,
    pub jpeg_quality: i32,
    pub image_rate: f64,
    pub telemetry_rate: f64,
    pub reuse_frames: bool,
    pub duration: Option<Duration>,
    pub stats_interval: Option<Duration>,
    pub faults: FaultConfig,
    pub restart_every: Option<Duration>,
    pub restart_down: Duration,
    pub send_log: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            host: "127.0.0.1".into(),
            image_port: IMAGE_PORT,
            thruster_port: THRUSTER_PORT,
            telemetry_port: TELEMETRY_PORT,
            auv_ids: vec![0],
            width: 640,
            height: 480,
            jpeg_quality: 80,
            image_rate: 10.0,
            telemetry_rate: 50.0,
            reuse_frames: false,
            duration: None,
            stats_interval: Some(Duration::from_secs(1)),
            faults: FaultConfig::default(),
            restart_every: None,
            restart_down: Duration::from_millis(500),
            send_log: None,
        }
    }
}

fn num<T: std::str::FromStr>(v: &str, flag: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{flag}: cannot read {v:?}"))
}

fn probability(v: &str, flag: &str) -> Result<f64, String> {
    let p: f64 = num(v, flag)?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{flag}: {p} is not a probability"))
    }
}

fn seconds(v: &str, flag: &str) -> Result<Duration, String> {
    let s: f64 = num(v, flag)?;
    Duration::try_from_secs_f64(s).map_err(|_| format!("{flag}: {s} is not a duration in seconds"))
}

fn rate(v: &str, flag: &str) -> Result<f64, String> {
    let hz: f64 = num(v, flag)?;
    if hz > 0.0 && hz <= 10_000.0 {
        Ok(hz)
    } else {
        Err(format!("{flag}: {hz} Hz is outside (0, 10000]"))
    }
}

/// `Ok(None)` for `--help`.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut o = Options::default();
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        let flag = flag.as_str();
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag {
            "-h" | "--help" => return Ok(None),
            "--ros-args" => break,
            "--host" => o.host = value()?,
            "--image-port" => o.image_port = num(&value()?, flag)?,
            "--thruster-port" => o.thruster_port = num(&value()?, flag)?,
            "--telemetry-port" => o.telemetry_port = num(&value()?, flag)?,
            "--auv-ids" => {
                let v = value()?;
                // "0,1,2", or "[0,1,2]" as a launch file's auv_ids argument reads.
                let list = v.trim().trim_start_matches('[').trim_end_matches(']');
                let mut ids: Vec<u8> = list
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| num(s, flag))
                    .collect::<Result<_, _>>()?;
                let n = ids.len();
                ids.sort_unstable();
                ids.dedup();
                if ids.is_empty() || ids.len() != n {
                    return Err(format!("{flag}: {v:?} must list distinct ids 0..=255"));
                }
                o.auv_ids = ids;
            }
            "--width" => o.width = num(&value()?, flag)?,
            "--height" => o.height = num(&value()?, flag)?,
            "--jpeg-quality" => {
                o.jpeg_quality = num(&value()?, flag)?;
                if !(1..=100).contains(&o.jpeg_quality) {
                    return Err(format!("{flag}: {} is outside 1..=100", o.jpeg_quality));
                }
            }
            "--image-rate" => o.image_rate = rate(&value()?, flag)?,
            "--telemetry-rate" => o.telemetry_rate = rate(&value()?, flag)?,
            "--reuse-frames" => o.reuse_frames = true,
            "--duration" => o.duration = Some(seconds(&value()?, flag)?),
            "--stats" => {
                let s = seconds(&value()?, flag)?;
                o.stats_interval = (!s.is_zero()).then_some(s);
            }
            "--quiet" => o.stats_interval = None,
            "--junk" => o.faults.junk = probability(&value()?, flag)?,
            "--wrong-parts" => o.faults.wrong_parts = probability(&value()?, flag)?,
            "--wrong-length" => o.faults.wrong_length = probability(&value()?, flag)?,
            "--corrupt-jpeg" => o.faults.corrupt_jpeg = probability(&value()?, flag)?,
            "--seed" => o.faults.seed = num(&value()?, flag)?,
            "--restart-every" => {
                let s = seconds(&value()?, flag)?;
                if s < Duration::from_millis(100) {
                    return Err(format!("{flag}: restarts must be at least 0.1 s apart"));
                }
                o.restart_every = Some(s);
            }
            "--restart-down" => o.restart_down = seconds(&value()?, flag)?,
            "--send-log" => o.send_log = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown option {other:?} (see --help)")),
        }
    }
    Ok(Some(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>, String> {
        parse_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults_are_the_seeds_ports() {
        let o = parse(&[]).unwrap().unwrap();
        assert_eq!((o.image_port, o.thruster_port, o.telemetry_port), (5555, 5556, 5557));
        assert_eq!(o.auv_ids, vec![0]);
        assert_eq!(
            (o.width, o.height, o.image_rate, o.telemetry_rate),
            (640, 480, 10.0, 50.0)
        );
    }

    #[test]
    fn options_are_read_and_checked() {
        let o = parse(&[
            "--auv-ids",
            "[2, 0,1]",
            "--junk",
            "0.5",
            "--restart-every",
            "2",
            "--quiet",
            "--width",
            "320",
            "--ros-args",
            "--bogus",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(o.auv_ids, vec![0, 1, 2]);
        assert_eq!(o.faults.junk, 0.5);
        assert_eq!(o.restart_every, Some(Duration::from_secs(2)));
        assert_eq!(o.stats_interval, None);
        assert_eq!(o.width, 320);
        assert_eq!(parse(&["--help"]), Ok(None));
        for bad in [
            &["--auv-ids", "1,1"][..],
            &["--auv-ids", "256"],
            &["--auv-ids", ""],
            &["--auv-ids", "[]"],
            &["--junk", "1.5"],
            &["--image-rate", "0"],
            &["--duration", "-1"],
            &["--jpeg-quality", "0"],
            &["--restart-every", "0.01"],
            &["--image-port"],
            &["--nope"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
