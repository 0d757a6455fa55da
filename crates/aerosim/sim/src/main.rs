//! `aerosim_sim`: the AeroSim emulator on Kafka. See `--help`.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use aerosim_sim::emulator::{run, Options};
use aerosim_sim::faults::{AeroSimFault, FaultRates};
use clap::Parser;
use process_support::cli::{args_before_ros_args, probability, rate_hz, seconds};

const RATES: &str = "Rates";
const FAULTS: &str = "Faults (probabilities per record, 0..1; a bad record goes before the good one)";
const AFTER_HELP: &str = "\
Topics: <prefix>.<actor>.vehicle_state and .primary_flight_display_data out,
.flight_control_command and .autopilot_command in (read from their end, as
AeroSim does); <prefix>.clock out; the camera's JPEG images, bincode as
AeroSim's renderer sends them, on --camera-topic. Records are AeroSim's
JSON envelopes under the key \"key\", one partition per topic (created when
missing).

Flight: without a command each aircraft circles at 300 m and 40 m/s. An
autopilot command's holds steer altitude, heading and airspeed; a flight
control command sets bank (roll_cmd × 30°), climb (pitch_cmd × 5 m/s) and
speed (20 + 40 × power_cmd[0] m/s). The last command holds.

SIGINT / SIGTERM stop it within a second. Anything after --ros-args is
ignored, so that ROS launch files can start it.";

/// The command line (`--help` renders it).
#[derive(Debug, Parser)]
#[command(
    name = "aerosim_sim",
    about = "An emulator of AeroSim on Kafka: aircraft whose vehicle state, flight display, camera and \
             clock go through a Kafka broker, flying the commands they read back.",
    after_help = AFTER_HELP
)]
struct Cli {
    /// The broker
    #[arg(
        long,
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:9092",
        help_heading = "Wire"
    )]
    bootstrap_servers: String,
    /// Actor names, comma-separated
    #[arg(
        long = "vehicle-ids",
        visible_alias = "actors",
        value_delimiter = ',',
        default_value = "actor1",
        help_heading = "Wire"
    )]
    actors: Vec<String>,
    /// First part of every topic name
    #[arg(long, default_value = "aerosim", help_heading = "Wire")]
    topic_prefix: String,
    /// Where the camera's images go
    #[arg(long, default_value = "aerosim.renderer.responses", help_heading = "Wire")]
    camera_topic: String,
    /// Start a broker (tansu, AEROSIM_BROKER_BIN or on the PATH) on the bootstrap port
    #[arg(long, help_heading = "Wire")]
    broker: bool,
    /// Vehicle states and clock ticks per second (the simulation step)
    #[arg(long, value_name = "HZ", default_value = "100", value_parser = rate_hz, help_heading = RATES)]
    state_rate: f64,
    #[arg(long, value_name = "HZ", default_value = "20", value_parser = rate_hz, help_heading = RATES)]
    display_rate: f64,
    /// Camera frames per second (0: no camera)
    #[arg(long, value_name = "HZ", default_value = "30", help_heading = RATES)]
    camera_rate: f64,
    #[arg(long, default_value_t = 1280, help_heading = RATES)]
    camera_width: u32,
    #[arg(long, default_value_t = 720, help_heading = RATES)]
    camera_height: u32,
    #[arg(long, default_value_t = 90.0, help_heading = RATES)]
    camera_fov: f64,
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(i32).range(1..=100), help_heading = RATES)]
    jpeg_quality: i32,
    /// Render one frame and resend it (benchmarks)
    #[arg(long, help_heading = RATES)]
    reuse_frames: bool,
    /// Give camera images the simulation time (AeroSim's renderer leaves it unset)
    #[arg(long, help_heading = RATES)]
    stamp_images: bool,
    /// Log each record's stream, simulation time and send time to PATH (benchmarks)
    #[arg(long, value_name = "PATH", help_heading = RATES)]
    send_log: Option<std::path::PathBuf>,
    /// Stop after S seconds
    #[arg(long, value_name = "S", value_parser = seconds, help_heading = RATES)]
    duration: Option<Duration>,
    /// Sim seconds per wall second, 0.01 to 100 (slower or faster than real time)
    #[arg(long, value_name = "R", default_value = "1", value_parser = process_support::pace_control::pace, help_heading = RATES)]
    pace: f64,
    /// Sim time stands still for S seconds from AT seconds after the start (repeatable; SIGUSR1 pauses, SIGUSR2 resumes at any time)
    #[arg(long, value_name = "AT:S", value_parser = process_support::pace_control::pause, help_heading = RATES)]
    pause: Vec<(f64, f64)>,
    /// While paused, send nothing (otherwise every record goes on, its sim time standing)
    #[arg(long, help_heading = RATES)]
    pause_silent: bool,
    /// Sim time jumps to TO at AT seconds after the start (repeatable): back is a reset, forward a step
    #[arg(long, value_name = "AT:TO", value_parser = process_support::pace_control::jump, help_heading = RATES)]
    jump: Vec<(f64, f64)>,
    /// Print rates every S seconds (0: never)
    #[arg(long, value_name = "S", default_value = "1", value_parser = seconds, help_heading = RATES)]
    stats: Duration,
    /// A record of random bytes
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    junk: f64,
    /// An envelope naming another type
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    wrong_type: f64,
    /// An envelope cut short
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    truncated: f64,
    /// A broken JPEG (camera records)
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    corrupt_jpeg: f64,
    /// Restart the broker (with --broker) every S seconds: its topics and records are gone
    #[arg(long, value_name = "S", value_parser = seconds, help_heading = FAULTS)]
    broker_restart_every: Option<Duration>,
    /// Seed for reproducible faults
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = FAULTS)]
    seed: u64,
}

fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Options, clap::Error> {
    let c = Cli::try_parse_from(args_before_ros_args(args))?;
    if c.broker_restart_every.is_some() && !c.broker {
        return Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            "--broker-restart-every restarts the broker of --broker\n",
        ));
    }
    Ok(Options {
        bootstrap_servers: c.bootstrap_servers,
        actors: c.actors,
        prefix: c.topic_prefix,
        state_rate_hz: c.state_rate,
        display_rate_hz: c.display_rate,
        camera_rate_hz: c.camera_rate.max(0.0),
        camera_width: c.camera_width,
        camera_height: c.camera_height,
        camera_fov_deg: c.camera_fov,
        camera_topic: c.camera_topic,
        jpeg_quality: c.jpeg_quality,
        reuse_frames: c.reuse_frames,
        faults: FaultRates::default()
            .with(AeroSimFault::Junk, c.junk)
            .with(AeroSimFault::WrongType, c.wrong_type)
            .with(AeroSimFault::Truncated, c.truncated)
            .with(AeroSimFault::CorruptJpeg, c.corrupt_jpeg)
            .seeded(c.seed),
        own_broker: c.broker,
        broker_restart_every: c.broker_restart_every,
        duration: c.duration,
        stats_interval: (!c.stats.is_zero()).then_some(c.stats),
        send_log: c.send_log,
        stamp_images: c.stamp_images,
        pace: c.pace,
        time_events: process_support::pace_control::time_events(&c.pause, &c.jump),
        silent_while_paused: c.pause_silent,
    })
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args_os()) {
        Ok(o) => o,
        Err(e) => e.exit(),
    };
    if let Err(e) = process_support::pace_control::catch_pause_signals() {
        eprintln!("aerosim_sim: SIGUSR1/SIGUSR2 (pause, resume): {e}");
    }
    process_support::stop_signal::emulator_main(
        "aerosim_sim",
        move |stop| run(&options, stop, &mut std::io::stdout()),
        |c| {
            format!(
                "sent {} states, {} displays, {} images, {} clock ticks; {} commands ({} bad); \
                 {} send errors; {} broker restarts; faults: {}",
                c.states,
                c.displays,
                c.images,
                c.clock_ticks,
                c.commands,
                c.bad_commands,
                c.send_errors,
                c.broker_restarts,
                c.faults
            )
        },
    )
}
