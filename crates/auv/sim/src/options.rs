//! Command-line options of `auv_sim`.

use std::path::PathBuf;
use std::time::Duration;

use auv_proto::{IMAGE_PORT, TELEMETRY_PORT, THRUSTER_PORT, THRUST_KEEP};

use crate::faults::{AuvFault, FaultConfig};

use clap::Parser;
use process_support::cli::{probability, rate_hz, seconds};

/// The command line (`--help` renders it).
#[derive(Debug, Parser)]
#[command(
    name = "auv_sim",
    about = "An emulator of the ZeroMQ AUV simulator: binds its three ports, moves every AUV by the thruster \
             commands it pulls, publishes both cameras (JPEG) and telemetry exactly as the simulator does.",
    after_help = AFTER_HELP
)]
struct Cli {
    /// Address to bind (* for every interface)
    #[arg(
        long,
        default_value = "127.0.0.1",
        help_heading = "Sockets (the simulator binds; clients connect)"
    )]
    host: String,
    /// PUB [id][front JPEG][bottom JPEG]; 0 = any free port
    #[arg(long, default_value_t = IMAGE_PORT, help_heading = "Sockets (the simulator binds; clients connect)")]
    image_port: u16,
    /// PULL [id][left,right,side,vertical: i8]
    #[arg(long, default_value_t = THRUSTER_PORT, help_heading = "Sockets (the simulator binds; clients connect)")]
    thruster_port: u16,
    /// PUB [id][x,y,z,yaw,pitch,roll: f32 LE]
    #[arg(long, default_value_t = TELEMETRY_PORT, help_heading = "Sockets (the simulator binds; clients connect)")]
    telemetry_port: u16,
    /// The AUVs, e.g. 0,1,2 ([0,1,2] also reads); they start 3 m apart along east, 2 m deep, heading north
    #[arg(
        long = "vehicle-ids",
        visible_alias = "auv-ids",
        default_value = "0",
        value_parser = auv_ids,
        help_heading = "AUVs and streams"
    )]
    auv_ids: AuvIds,
    /// Camera image width
    #[arg(long, default_value_t = 640, help_heading = "AUVs and streams")]
    width: usize,
    /// Camera image height
    #[arg(long, default_value_t = 480, help_heading = "AUVs and streams")]
    height: usize,
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(i32).range(1..=100), help_heading = "AUVs and streams")]
    jpeg_quality: i32,
    /// Image messages per AUV per second
    #[arg(long, default_value = "10", value_parser = rate_hz, help_heading = "AUVs and streams")]
    image_rate: f64,
    /// Telemetry messages per AUV per second
    #[arg(long, default_value = "50", value_parser = rate_hz, help_heading = "AUVs and streams")]
    telemetry_rate: f64,
    /// Render each camera once and resend it (benchmarks)
    #[arg(long, help_heading = "AUVs and streams")]
    reuse_frames: bool,
    /// Stop after this many seconds
    #[arg(long, value_parser = seconds, help_heading = "AUVs and streams")]
    duration: Option<Duration>,
    /// Print per-stream rates every S seconds on stdout (0: never)
    #[arg(long, default_value = "1", value_parser = seconds, help_heading = "AUVs and streams")]
    stats: Duration,
    /// Same as --stats 0
    #[arg(long, help_heading = "AUVs and streams")]
    quiet: bool,
    /// A message of random parts (first part a valid id) before this one
    #[arg(long, default_value = "0", value_parser = probability, help_heading = FAULTS)]
    junk: f64,
    /// This message with a part missing or one too many
    #[arg(long, default_value = "0", value_parser = probability, help_heading = FAULTS)]
    wrong_parts: f64,
    /// A two-byte id (images) or a payload of the wrong length (telemetry)
    #[arg(long, default_value = "0", value_parser = probability, help_heading = FAULTS)]
    wrong_length: f64,
    /// One JPEG of this image message cut short
    #[arg(long, default_value = "0", value_parser = probability, help_heading = FAULTS)]
    corrupt_jpeg: f64,
    /// Simulator restart every S seconds: sockets closed, AUVs back at the start, then rebound
    #[arg(long, value_parser = restart_interval, help_heading = FAULTS)]
    restart_every: Option<Duration>,
    /// How long the simulator stays away at a restart
    #[arg(long, default_value = "0.5", value_parser = seconds, help_heading = FAULTS)]
    restart_down: Duration,
    /// Seed for reproducible faults
    #[arg(long, default_value_t = 0, help_heading = FAULTS)]
    seed: u64,
    /// Append "images|telemetry <id> <seq> <unix time>" after each message is sent; each JPEG carries
    /// "auv_sim auv=<id> seq=<seq> camera=<name>" in a comment
    #[arg(long, help_heading = "Benchmarks")]
    send_log: Option<PathBuf>,
}

const FAULTS: &str = "Faults (rates per message, 0..1)";
const AFTER_HELP: &str = "\
Units and axes of the telemetry: metres and radians, NED world, FRD body,
Z-Y-X (yaw, pitch, roll). Thrusters: left/right forward when positive, side
to starboard, vertical up; -127 keeps a thruster's level.
Anything after --ros-args is ignored, so that ROS launch files can start it.";

const _: () = assert!(THRUST_KEEP == -127, "AFTER_HELP names the keep value");

/// The value of `--vehicle-ids` (one argument, not one per id).
#[derive(Debug, Clone)]
struct AuvIds(Vec<u8>);

/// "0,1,2", or "[0,1,2]" as a launch file's vehicle_ids argument reads.
fn auv_ids(v: &str) -> Result<AuvIds, String> {
    let list = v.trim().trim_start_matches('[').trim_end_matches(']');
    let mut ids: Vec<u8> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("{s:?} is not an id 0..=255")))
        .collect::<Result<_, _>>()?;
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() || ids.len() != n {
        return Err(format!("{v:?} must list distinct ids 0..=255"));
    }
    Ok(AuvIds(ids))
}

fn restart_interval(v: &str) -> Result<Duration, String> {
    let s = seconds(v)?;
    if s < Duration::from_millis(100) {
        return Err("restarts must be at least 0.1 s apart".into());
    }
    Ok(s)
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

/// The options of a command line (program name first); `Err` also for
/// `--help` (`e.exit()` prints what is due and exits).
pub fn parse_args<I, T>(args: I) -> Result<Options, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    let args = process_support::cli::args_before_ros_args(args.into_iter().map(Into::into));
    let c = Cli::try_parse_from(args)?;
    Ok(Options {
        host: c.host,
        image_port: c.image_port,
        thruster_port: c.thruster_port,
        telemetry_port: c.telemetry_port,
        auv_ids: c.auv_ids.0,
        width: c.width,
        height: c.height,
        jpeg_quality: c.jpeg_quality,
        image_rate: c.image_rate,
        telemetry_rate: c.telemetry_rate,
        reuse_frames: c.reuse_frames,
        duration: c.duration,
        stats_interval: (!c.quiet && !c.stats.is_zero()).then_some(c.stats),
        faults: FaultConfig::default()
            .with(AuvFault::Junk, c.junk)
            .with(AuvFault::WrongParts, c.wrong_parts)
            .with(AuvFault::WrongLength, c.wrong_length)
            .with(AuvFault::CorruptJpeg, c.corrupt_jpeg)
            .seeded(c.seed),
        restart_every: c.restart_every,
        restart_down: c.restart_down,
        send_log: c.send_log,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        parse_args(std::iter::once("auv_sim").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_the_simulators_ports() {
        let o = parse(&[]).unwrap();
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
            "--vehicle-ids",
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
        .unwrap();
        assert_eq!(o.auv_ids, vec![0, 1, 2]);
        assert_eq!(o.faults.rate(AuvFault::Junk), 0.5);
        assert_eq!(o.restart_every, Some(Duration::from_secs(2)));
        assert_eq!(o.stats_interval, None);
        assert_eq!(o.width, 320);
        let help = parse(&["--help"]).unwrap_err();
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
        for words in ["--vehicle-ids", "--corrupt-jpeg", "NED world, FRD body", "--ros-args"] {
            assert!(help.to_string().contains(words), "--help tells of {words}");
        }
        assert_eq!(
            o,
            parse(&[
                "--auv-ids=0,1,2",
                "--junk=0.5",
                "--restart-every=2",
                "--quiet",
                "--width=320"
            ])
            .unwrap()
        );
        for bad in [
            &["--vehicle-ids", "1,1"][..],
            &["--vehicle-ids", "256"],
            &["--vehicle-ids", ""],
            &["--vehicle-ids", "[]"],
            &["--vehicle-ids", "a"],
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
