//! `gps_denied_sim`: the GPS-denied landing drone emulator. See `--help`.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use gps_denied_proto::wire::{
    DEFAULT_LOCAL_PORT, DEFAULT_SIM_PORT, DEFAULT_TELEMETRY_RATE_HZ, IMAGE_EVERY_NTH_FRAME, JPEG_QUALITY,
};
use gps_denied_sim::emulator::{run, Options};
use gps_denied_sim::faults::{DroneFault, FaultRates};
use gps_denied_sim::world::Pattern;
use process_support::cli::{args_before_ros_args, probability, rate_hz, seconds};

const RATES: &str = "Rates";
const FAULTS: &str = "Faults (probabilities per telemetry frame, 0..1)";
const AFTER_HELP: &str = "\
Dynamics: thrust is a vertical acceleration of 4 m/s² per unit relative to
hover (0 hovers); pitch and roll are tilt set-points in radians (positive
pitch flies forward, positive roll flies right), yaw is a yaw rate in rad/s.
The last command holds until the next. Axes: world z up, body x forward,
y left, z up. The camera looks straight down; the image's top is forward.

SIGINT / SIGTERM stop it within a second. Anything after --ros-args is
ignored, so that ROS launch files can start it.";

/// The command line (`--help` renders it).
#[derive(Debug, Parser)]
#[command(
    name = "gps_denied_sim",
    about = "An emulator of the GPS-denied landing drone simulator: JSON telemetry over UDP from a drone \
             hovering above a rover that carries the landing pad, driven by the JSON commands it receives.",
    after_help = AFTER_HELP
)]
struct Cli {
    /// Where commands arrive and telemetry leaves from (the simulator's port)
    #[arg(long, value_name = "ADDR:PORT", default_value_t = SocketAddr::from(([0, 0, 0, 0], DEFAULT_SIM_PORT)), help_heading = "Wire")]
    bind: SocketAddr,
    /// Where telemetry goes (the bridge)
    #[arg(long, value_name = "ADDR:PORT", default_value_t = SocketAddr::from(([127, 0, 0, 1], DEFAULT_LOCAL_PORT)), help_heading = "Wire")]
    target: SocketAddr,
    /// Also send the rover's telemetry object after each frame
    #[arg(long, help_heading = "Wire")]
    rover_telemetry: bool,
    /// The rover's path: circular, linear or figure8
    #[arg(long, default_value = "circular", value_parser = pattern, help_heading = "World")]
    pattern: Pattern,
    /// Telemetry rate; the simulation advances 1/HZ seconds per frame
    #[arg(long = "rate", value_name = "HZ", default_value_t = DEFAULT_TELEMETRY_RATE_HZ, value_parser = rate_hz, help_heading = RATES)]
    rate_hz: f64,
    /// Send frames as fast as possible (sim time runs ahead)
    #[arg(long, help_heading = RATES)]
    flat_out: bool,
    /// The camera image in every N-th frame
    #[arg(long, value_name = "N", default_value_t = IMAGE_EVERY_NTH_FRAME, help_heading = RATES)]
    image_every: u64,
    #[arg(long, default_value_t = JPEG_QUALITY, value_parser = clap::value_parser!(i32).range(1..=100), help_heading = RATES)]
    jpeg_quality: i32,
    /// Render one image and resend it (benchmarks)
    #[arg(long, help_heading = RATES)]
    reuse_image: bool,
    /// Stop after S seconds
    #[arg(long, value_name = "S", value_parser = seconds, help_heading = RATES)]
    duration: Option<Duration>,
    /// Stop after N telemetry frames
    #[arg(long, value_name = "N", help_heading = RATES)]
    frames: Option<u64>,
    /// Print rates every S seconds (0: never)
    #[arg(long, value_name = "S", default_value = "1", value_parser = seconds, help_heading = RATES)]
    stats: Duration,
    /// Same as --stats 0
    #[arg(long, help_heading = RATES)]
    quiet: bool,
    /// Append "timestamp wall_time" for each frame sent (benchmarks)
    #[arg(long, value_name = "FILE", help_heading = RATES)]
    send_log: Option<PathBuf>,
    /// A datagram of random bytes before the frame
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    junk: f64,
    /// The frame's JSON cut short
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    truncate: f64,
    /// One part replaced by a value of the wrong type
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    wrong_types: f64,
    /// One part left out
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    missing_fields: f64,
    /// The image's base64 broken (image frames)
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    bad_base64: f64,
    /// The image not a JPEG, or cut in half (image frames)
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    corrupt_jpeg: f64,
    /// Restart every S simulation seconds: time back to 0, state reset
    #[arg(long, value_name = "S", value_parser = seconds, help_heading = FAULTS)]
    restart_every: Option<Duration>,
    /// Seed for reproducible faults
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = FAULTS)]
    seed: u64,
}

fn pattern(v: &str) -> Result<Pattern, String> {
    Pattern::parse(v).ok_or_else(|| format!("{v:?} is not circular, linear or figure8"))
}

fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Options, clap::Error> {
    let c = Cli::try_parse_from(args_before_ros_args(args))?;
    Ok(Options {
        bind: c.bind,
        target: c.target,
        rate_hz: c.rate_hz,
        flat_out: c.flat_out,
        pattern: c.pattern,
        rover_telemetry: c.rover_telemetry,
        image_every: c.image_every,
        jpeg_quality: c.jpeg_quality,
        reuse_image: c.reuse_image,
        faults: FaultRates::default()
            .with(DroneFault::Junk, c.junk)
            .with(DroneFault::Truncate, c.truncate)
            .with(DroneFault::WrongTypes, c.wrong_types)
            .with(DroneFault::MissingFields, c.missing_fields)
            .with(DroneFault::BadBase64, c.bad_base64)
            .with(DroneFault::CorruptJpeg, c.corrupt_jpeg)
            .seeded(c.seed),
        restart_every: c.restart_every.map(|d| d.as_secs_f64()),
        duration: c.duration.map(|d| d.as_secs_f64()),
        frames: c.frames,
        stats_interval: (!c.quiet && !c.stats.is_zero()).then_some(c.stats),
        send_log: c.send_log,
    })
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args_os()) {
        Ok(o) => o,
        // --help, or why the command line is refused (exit status 2).
        Err(e) => e.exit(),
    };
    // Every blocking receive of the run has a timeout, so it sees the stop.
    process_support::stop_signal::emulator_main(
        "gps_denied_sim",
        move |stop| run(&options, stop, &mut std::io::stdout()),
        |c| {
            format!(
                "sent {} frames ({} images, {} rover), {} commands ({} bad), {} send errors; faults: {}",
                c.frames, c.images, c.rover_frames, c.commands, c.bad_commands, c.send_errors, c.faults
            )
        },
    )
}
