//! `rflysim_sim`: the built-in RflySim emulator. See `--help`.

use std::ffi::OsString;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use process_support::cli::{args_before_ros_args, probability, rate_hz, seconds};
use rflysim_proto::config::{load_config, parse_config, AngleUnit};
use rflysim_proto::gimbal::GimbalBitTable;
use rflysim_sim::emulator::Emulator;
use rflysim_sim::faults::{DatagramFault, FaultConfig, NeutralDrops, SceneFault, SceneFaultConfig};
use rflysim_sim::options::{HeaderChoice, LidarLayout, Options, RateMode};

const SENSORS: &str = "Sensors and destinations";
const FORMATS: &str = "Formats";
const RATES: &str = "Rates";
const FAULTS: &str = "Faults (rates per datagram, 0..1)";
const TESTS: &str = "Tests";
const GIMBAL: &str = "Gimbal";

/// The command line (`--help` renders it).
#[derive(Debug, Parser)]
#[command(
    name = "rflysim_sim",
    about = "A built-in RflySim emulator (RflySim3D + CopterSim) speaking the RflySim's SDK over real \
             UDP sockets and shared memory.",
    after_help = "Anything after --ros-args is ignored, so that ROS launch files can start it."
)]
struct Cli {
    /// RflySim Config.json to stream (default: the example config)
    #[arg(long, value_name = "PATH", help_heading = SENSORS)]
    config: Option<PathBuf>,
    /// Send sensor data here instead of each sensor's SendProtocol address
    #[arg(long, value_name = "IP", help_heading = SENSORS)]
    target_ip: Option<Ipv4Addr>,
    /// Listen for VisionSensorReq on the first window's request port + N
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = SENSORS)]
    window_id: u16,
    /// Don't listen for requests
    #[arg(long, help_heading = SENSORS)]
    no_requests: bool,
    /// Stream only sensors requested over UDP, not the config's
    #[arg(long, help_heading = SENSORS)]
    requested_only: bool,
    /// CopterSim instances, e.g. 1,2 (IMU on request, true state, heartbeat)
    #[arg(long, value_name = "IDS", value_parser = copter_ids, help_heading = SENSORS)]
    copters: Option<CopterIds>,
    /// Where true state (port 30101 + 2(id-1)) and heartbeats (port 20005) go
    #[arg(long, value_name = "IP", help_heading = SENSORS)]
    coptersim_target: Option<Ipv4Addr>,
    /// Don't send the CopterSim heartbeat
    #[arg(long, help_heading = SENSORS)]
    no_heartbeat: bool,
    /// Send the CopterSim heartbeat to multicast 224.0.0.10 (from the interface towards --coptersim-target) instead
    #[arg(long, help_heading = SENSORS)]
    heartbeat_multicast: bool,
    /// Datagram header kind: 24, 32 or alternate
    #[arg(long, value_name = "KIND", default_value = "32", value_parser = header, help_heading = FORMATS)]
    header: HeaderChoice,
    /// LiDAR / depth-cloud payload layout over UDP: protocol or sdk
    #[arg(long, value_name = "LAYOUT", default_value = "protocol", value_parser = lidar_layout, help_heading = FORMATS)]
    lidar_layout: LidarLayout,
    #[arg(long, value_name = "Q", value_parser = clap::value_parser!(i32).range(1..=100), help_heading = FORMATS)]
    jpeg_quality: Option<i32>,
    /// Every sensor at HZ instead of its DataCheckFreq
    #[arg(long, value_name = "HZ", value_parser = rate_hz, conflicts_with = "flat_out", help_heading = RATES)]
    rate: Option<f64>,
    /// Every sensor as fast as possible
    #[arg(long, help_heading = RATES)]
    flat_out: bool,
    /// Render once per sensor, resend with new stamps (benchmarks)
    #[arg(long, help_heading = RATES, conflicts_with = "cycle_frames")]
    reuse_frames: bool,
    /// Render each sensor's first K frames, each camera frame marked as its own, and send them in turn
    /// (frame F is the (F mod K)-th) with new stamps; with --dump, writes each as sent
    /// (sensor<N>_cycle<k>.bin) instead of every frame
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u16).range(1..=1000), help_heading = RATES)]
    cycle_frames: Option<u16>,
    /// Stop after S seconds
    #[arg(long, value_name = "S", value_parser = seconds, help_heading = RATES)]
    duration: Option<Duration>,
    /// Stop each sensor after N frames
    #[arg(long = "frames", value_name = "N", help_heading = RATES)]
    max_frames: Option<u64>,
    /// Simulation time at start, seconds
    #[arg(long, value_name = "S", help_heading = RATES)]
    start_time: Option<f64>,
    /// Sim seconds per wall second, 0.01 to 100 (a heavy scene runs slower than real time, a batch run faster)
    #[arg(long, value_name = "R", value_parser = process_support::pace_control::pace, help_heading = RATES)]
    pace: Option<f64>,
    /// Sim time stands still for S seconds from AT seconds after the start (repeatable; SIGUSR1 pauses, SIGUSR2 resumes at any time)
    #[arg(long, value_name = "AT:S", value_parser = process_support::pace_control::pause, help_heading = RATES)]
    pause: Vec<(f64, f64)>,
    /// While paused, send nothing (otherwise every stream goes on, its sim time standing)
    #[arg(long, help_heading = RATES)]
    pause_silent: bool,
    /// Sim time jumps to TO at AT seconds after the start (repeatable): back is a reset (frame ids from zero too), forward a step
    #[arg(long, value_name = "AT:TO", value_parser = process_support::pace_control::jump, help_heading = RATES)]
    jump: Vec<(f64, f64)>,
    /// Vehicle ID's CopterSim clock runs S seconds ahead (repeatable): a swarm started one after another
    #[arg(long, value_name = "ID:S", value_parser = clock_offset, help_heading = RATES)]
    clock_offset: Vec<(u16, f64)>,
    /// This PC's wall clock is S seconds ahead of the true one (negative: behind): the heartbeat's anchors carry it
    #[arg(long, value_name = "S", allow_hyphen_values = true, value_parser = finite_seconds, help_heading = RATES)]
    wall_clock_offset: Option<f64>,
    /// Print per-sensor frames/s and bytes/s every S seconds (0: never)
    #[arg(long, value_name = "S", default_value = "1", value_parser = seconds, help_heading = RATES)]
    stats: Duration,
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    loss: f64,
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    reorder: f64,
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    duplicate: f64,
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    truncate: f64,
    /// A random datagram before this one
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    garbage: f64,
    /// Flip a bit in a datagram's header (receivers can notice)
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    corrupt: f64,
    /// Flip a bit in a datagram's payload (no RflySim receiver can notice)
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    corrupt_payload: f64,
    /// A random datagram before a scene datagram on the status port
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    scene_garbage: f64,
    /// Cut a scene datagram on the status port short
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    scene_truncate: f64,
    /// Flip a bit in a scene datagram's checksum
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    scene_bad_checksum: f64,
    /// Simulator restart every S seconds: frame ids and sim time back to zero
    #[arg(long, value_name = "S", help_heading = FAULTS)]
    restart_every: Option<f64>,
    /// Seed for reproducible faults
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = FAULTS)]
    seed: u64,
    /// Leave the first N gimbal neutral requests (rates bit alone, both rates 0) unapplied, as if lost
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = FAULTS)]
    drop_gimbal_neutrals: u64,
    /// Leave each later gimbal neutral request unapplied with probability P
    #[arg(long, value_name = "P", default_value = "0", value_parser = probability, help_heading = FAULTS)]
    gimbal_neutral_loss: f64,
    /// Drop exactly packet P of frame F (every sensor; repeatable)
    #[arg(long, value_name = "F:P", value_parser = frame_packet, help_heading = FAULTS)]
    drop_packet: Vec<(u64, u32)>,
    /// Write each rendered frame, IMU sample, heartbeat and vehicle move to DIR
    /// (sensor<N>.index, imu<id>.txt, heartbeat<id>.txt, scene.txt)
    #[arg(long, value_name = "DIR", help_heading = TESTS)]
    dump: Option<PathBuf>,
    /// Write the two map files RflySim ships for each of the emulator's maps
    /// (Grasslands, MountainTerrain: <map>.png heights, <map>.txt calibration)
    /// to DIR at start, for the scene node's map_dir
    #[arg(long, value_name = "DIR", help_heading = TESTS)]
    write_maps: Option<PathBuf>,
    /// Append "SeqID time_stamp wall_time" when each frame has been sent,
    /// "imu<copter id> time_stamp wall_time" per IMU sample (benchmarks)
    #[arg(long, value_name = "FILE", help_heading = TESTS)]
    send_log: Option<PathBuf>,
    /// Unicast destination of gimbal echo / CameraData, or none (default 127.0.0.1 and the camera status port)
    #[arg(long, value_name = "IP:PORT|none", value_parser = gimbal_target, help_heading = GIMBAL)]
    gimbal_target: Option<GimbalTarget>,
    /// Also send them to the camera status multicast group
    #[arg(long, help_heading = GIMBAL)]
    gimbal_multicast: bool,
    /// Send CameraData for every camera without RflyReqObjData
    #[arg(long, help_heading = GIMBAL)]
    camera_data: bool,
    /// Control bit numbering: protocol or sdk
    #[arg(long, value_name = "TABLE", default_value = "protocol", value_parser = gimbal_bits, help_heading = GIMBAL)]
    gimbal_bits: GimbalBitTable,
    /// Checksum of the gimbal echo (default: the protocol's)
    #[arg(long, value_name = "N", help_heading = GIMBAL)]
    echo_checksum: Option<u16>,
}

/// `--copters 1,2` (one argument; empty: none).
#[derive(Debug, Clone)]
struct CopterIds(Vec<u16>);

fn copter_ids(v: &str) -> Result<CopterIds, String> {
    v.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().map_err(|_| format!("{s:?} is not a vehicle id")))
        .collect::<Result<_, _>>()
        .map(CopterIds)
}

/// `--gimbal-target`: an address, or none.
#[derive(Debug, Clone, Copy)]
struct GimbalTarget(Option<SocketAddrV4>);

fn gimbal_target(v: &str) -> Result<GimbalTarget, String> {
    if v == "none" {
        return Ok(GimbalTarget(None));
    }
    v.parse()
        .map(|a| GimbalTarget(Some(a)))
        .map_err(|_| format!("{v:?} is not IP:PORT or none"))
}

fn header(v: &str) -> Result<HeaderChoice, String> {
    match v {
        "24" => Ok(HeaderChoice::Image24),
        "32" => Ok(HeaderChoice::Frame32),
        "alternate" => Ok(HeaderChoice::Alternate),
        _ => Err(format!("{v:?} is not 24, 32 or alternate")),
    }
}

fn lidar_layout(v: &str) -> Result<LidarLayout, String> {
    match v {
        "protocol" => Ok(LidarLayout::Protocol),
        "sdk" => Ok(LidarLayout::SdkInt16),
        _ => Err(format!("{v:?} is not protocol or sdk")),
    }
}

fn gimbal_bits(v: &str) -> Result<GimbalBitTable, String> {
    GimbalBitTable::by_name(v).ok_or_else(|| format!("{v:?} is not protocol or sdk"))
}

fn finite_seconds(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite())
        .ok_or_else(|| format!("{v:?} is not a finite number of seconds"))
}

fn clock_offset(v: &str) -> Result<(u16, f64), String> {
    let bad = || format!("{v:?} is not VEHICLE:SECONDS (seconds finite, at least 0)");
    let (id, s) = v.split_once(':').ok_or_else(bad)?;
    let s: f64 = s.parse().map_err(|_| bad())?;
    if !s.is_finite() || s < 0.0 {
        return Err(bad());
    }
    Ok((id.parse().map_err(|_| bad())?, s))
}

fn frame_packet(v: &str) -> Result<(u64, u32), String> {
    let bad = || format!("{v:?} is not FRAME:PACKET");
    let (f, p) = v.split_once(':').ok_or_else(bad)?;
    Ok((f.parse().map_err(|_| bad())?, p.parse().map_err(|_| bad())?))
}

const EXAMPLE_CONFIG: &str = include_str!("../../../../config/Config.json");

/// The options of a command line; `Err` also for `--help` (`exit` prints it).
fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Options, clap::Error> {
    let c = Cli::try_parse_from(args_before_ros_args(args))?;
    let invalid = |e: String| clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{e}\n"));
    let d = Options::default();
    let mut o = Options {
        target_ip: c.target_ip,
        window_id: c.window_id,
        listen_requests: !c.no_requests,
        stream_config: !c.requested_only,
        copters: c.copters.map_or(d.copters.clone(), |CopterIds(ids)| ids),
        coptersim_target: c.coptersim_target.unwrap_or(d.coptersim_target),
        heartbeat: !c.no_heartbeat,
        heartbeat_multicast: c.heartbeat_multicast,
        wall_clock_offset: c.wall_clock_offset.unwrap_or(d.wall_clock_offset),
        header: c.header,
        lidar_layout: c.lidar_layout,
        jpeg_quality: c.jpeg_quality.unwrap_or(d.jpeg_quality),
        rate: match (c.flat_out, c.rate) {
            (true, _) => RateMode::FlatOut,
            (false, Some(hz)) => RateMode::Forced(hz),
            (false, None) => d.rate,
        },
        reuse_frames: c.reuse_frames,
        cycle_frames: c.cycle_frames.map(usize::from),
        duration: c.duration.map(|t| t.as_secs_f64()),
        max_frames: c.max_frames,
        start_time: c.start_time.unwrap_or(d.start_time),
        pace: c.pace.unwrap_or(d.pace),
        time_events: process_support::pace_control::time_events(&c.pause, &c.jump),
        silent_while_paused: c.pause_silent,
        clock_offsets: c.clock_offset,
        stats_interval: (!c.stats.is_zero()).then_some(c.stats),
        faults: FaultConfig::default()
            .with(DatagramFault::Loss, c.loss)
            .with(DatagramFault::Reorder, c.reorder)
            .with(DatagramFault::Duplicate, c.duplicate)
            .with(DatagramFault::Corrupt, c.corrupt)
            .with(DatagramFault::CorruptPayload, c.corrupt_payload)
            .with(DatagramFault::Truncate, c.truncate)
            .with(DatagramFault::Garbage, c.garbage)
            .seeded(c.seed),
        scene_faults: SceneFaultConfig::default()
            .with(SceneFault::Garbage, c.scene_garbage)
            .with(SceneFault::Truncate, c.scene_truncate)
            .with(SceneFault::BadChecksum, c.scene_bad_checksum)
            .seeded(c.seed),
        restart_every: c.restart_every,
        drop_packets: c.drop_packet,
        gimbal_unicast: c.gimbal_target.map_or(d.gimbal_unicast, |GimbalTarget(t)| t),
        gimbal_multicast: c.gimbal_multicast,
        camera_data_always: c.camera_data,
        gimbal_bits: c.gimbal_bits,
        echo_checksum: c.echo_checksum.unwrap_or(d.echo_checksum),
        gimbal_neutral_drops: NeutralDrops {
            first: c.drop_gimbal_neutrals,
            share: c.gimbal_neutral_loss,
            seed: c.seed,
        },
        send_log: c.send_log,
        ..d
    };
    o.map_dir = c.write_maps;
    if let Some(dir) = c.dump {
        std::fs::create_dir_all(&dir).map_err(|e| invalid(format!("--dump {}: {e}", dir.display())))?;
        o.dump_dir = Some(dir);
    }
    o.sensors = match c.config {
        Some(path) => load_config(&path, AngleUnit::Auto).map_err(|e| invalid(e.to_string()))?,
        None => parse_config(EXAMPLE_CONFIG, AngleUnit::Auto).map_err(|e| invalid(format!("example config: {e}")))?,
    };
    // As RflySim3D holds them once the SDK asked for them: a bridge's request
    // for the same sensor then changes nothing.
    for s in &mut o.sensors {
        s.send_protocol = s.requested_send_protocol();
    }
    Ok(o)
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args_os()) {
        Ok(o) => o,
        // --help (a reader that closes the pipe early is no panic), or why
        // the command line is refused (exit status 2).
        Err(e) => e.exit(),
    };
    if let Err(e) = process_support::pace_control::catch_pause_signals() {
        let _ = writeln!(std::io::stderr(), "rflysim_sim: SIGUSR1/SIGUSR2 (pause, resume): {e}");
    }
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
