//! The emulator's run: for each actor, vehicle state and flight display on
//! their topics, the clock, the renderer's camera, all through the broker;
//! the actors' flight-control and autopilot commands read back and flown.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aerosim_link::broker::Broker;
use aerosim_link::{now_ms, Fetched, Link, StartFrom, Writer};
use aerosim_proto::envelope::{decode_envelope, encode_envelope, TimeStamp};
use aerosim_proto::image::{encode_image, CompressedImage, ImageFormat};
use aerosim_proto::topics::{Stream, Topics};
use aerosim_proto::types::{AutopilotCommand, FlightControlCommand, JsonData};
use process_support::faults::Faults;
use process_support::pace_control::{TimeEvent, Timeline};

use crate::faults::{before_json, corrupt_jpeg, AeroSimFault, FaultCounts, FaultRates};
use crate::flight::{Aircraft, Control};
use crate::render;

#[derive(Debug, Clone)]
pub struct Options {
    pub bootstrap_servers: String,
    pub actors: Vec<String>,
    pub prefix: String,
    /// Vehicle states (and clock ticks) per second: the simulation step.
    pub state_rate_hz: f64,
    pub display_rate_hz: f64,
    /// 0: no camera.
    pub camera_rate_hz: f64,
    pub camera_width: u32,
    pub camera_height: u32,
    pub camera_fov_deg: f64,
    pub camera_topic: String,
    pub jpeg_quality: i32,
    /// Render one frame and resend it (benchmarks).
    pub reuse_frames: bool,
    pub faults: FaultRates,
    /// Start the broker on the bootstrap port, and restart it every so often.
    pub own_broker: bool,
    pub broker_restart_every: Option<Duration>,
    pub duration: Option<Duration>,
    pub stats_interval: Option<Duration>,
    /// Where to log each good record's stream, simulation time and send time (benchmarks).
    pub send_log: Option<std::path::PathBuf>,
    /// Give camera images the simulation time (AeroSim's renderer leaves it unset).
    pub stamp_images: bool,
    /// Sim seconds per wall second.
    pub pace: f64,
    /// Pauses and jumps of sim time, at wall seconds after the start.
    pub time_events: Vec<(f64, TimeEvent)>,
    /// While paused, send nothing (otherwise records go on, their sim time standing).
    pub silent_while_paused: bool,
}

/// `<stream> <simulation time> <wall time just before the send>` per record,
/// as `bench_support::SendLog` reads it.
#[derive(Clone, Default)]
struct SendLog(Option<Arc<Mutex<std::io::BufWriter<std::fs::File>>>>);

impl SendLog {
    fn create(path: Option<&std::path::Path>) -> Result<Self, String> {
        path.map(|p| {
            std::fs::File::create(p)
                .map(|f| Arc::new(Mutex::new(std::io::BufWriter::new(f))))
                .map_err(|e| format!("{}: {e}", p.display()))
        })
        .transpose()
        .map(SendLog)
    }

    fn line(&self, stream: &str, sim: f64, wall: f64) {
        if let Some(f) = &self.0 {
            let _ = writeln!(
                f.lock().unwrap_or_else(|p| p.into_inner()),
                "{stream} {sim:.9} {wall:.6}"
            );
        }
    }

    fn flush(&self) {
        if let Some(f) = &self.0 {
            let _ = f.lock().unwrap_or_else(|p| p.into_inner()).flush();
        }
    }
}

fn wall_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// What a run did.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub states: u64,
    pub displays: u64,
    pub images: u64,
    pub clock_ticks: u64,
    pub commands: u64,
    pub bad_commands: u64,
    pub send_errors: u64,
    pub broker_restarts: u64,
    pub faults: FaultCounts,
}

struct Shared {
    /// The stop signal: a send in progress gives up when it comes.
    stop: &'static AtomicBool,
    controls: Mutex<Vec<Control>>,
    commands: AtomicU64,
    bad_commands: AtomicU64,
    send_errors: AtomicU64,
}

fn stamp(seconds: f64) -> TimeStamp {
    TimeStamp::from_seconds(seconds)
}

fn platform_now() -> TimeStamp {
    stamp(now_ms() as f64 / 1e3)
}

/// Resolves once `flag` is set.
async fn raised(flag: &AtomicBool) {
    while !flag.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn send(writer: &Writer, payload: Vec<u8>, shared: &Shared) -> bool {
    // A broker that is gone makes a send retry its connection; the stop must not wait for it.
    let sent = tokio::select! {
        r = writer.send(payload, now_ms()) => r.is_ok(),
        _ = raised(shared.stop) => return false,
    };
    match sent {
        true => true,
        false => {
            shared.send_errors.fetch_add(1, Ordering::Relaxed);
            false
        }
    }
}

/// Sends the bad records a fault asks for, then the good one.
async fn send_with_faults(
    writer: &Writer,
    payload: Vec<u8>,
    faults: &mut Faults<AeroSimFault>,
    wrong_type: &[u8],
    shared: &Shared,
) -> bool {
    for bad in before_json(faults, &payload, wrong_type) {
        send(writer, bad, shared).await;
    }
    send(writer, payload, shared).await
}

fn apply_command(records: Vec<Fetched>, actor: usize, autopilot: bool, shared: &Shared) {
    for r in records {
        let control = if autopilot {
            decode_envelope::<AutopilotCommand>(&r.value, 1 << 20).map(|e| Control::Autopilot(e.data))
        } else {
            decode_envelope::<FlightControlCommand>(&r.value, 1 << 20).map(|e| Control::FlightControl(e.data))
        };
        match control {
            Ok(c) => {
                shared.commands.fetch_add(1, Ordering::Relaxed);
                shared.controls.lock().unwrap_or_else(|p| p.into_inner())[actor] = c;
            }
            Err(_) => {
                shared.bad_commands.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Runs until `stop` or the duration; prints rates to `out` when asked.
pub fn run(o: &Options, stop: &'static AtomicBool, out: &mut dyn Write) -> Result<Counts, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(run_async(o, stop, out))
}

async fn run_async(o: &Options, stop: &'static AtomicBool, out: &mut dyn Write) -> Result<Counts, String> {
    let mut broker = if o.own_broker {
        let port = o
            .bootstrap_servers
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| {
                format!(
                    "--bootstrap-servers {}: no port to start the broker on",
                    o.bootstrap_servers
                )
            })?;
        Some(Broker::start(port).map_err(|e| format!("broker: {e}"))?)
    } else {
        None
    };
    let link = Link::new(&o.bootstrap_servers, "aerosim_sim", 64 << 20);
    let send_log = SendLog::create(o.send_log.as_deref())?;
    let topics = Topics::new(&o.prefix);
    let shared = Arc::new(Shared {
        stop,
        controls: Mutex::new(vec![Control::Pattern; o.actors.len()]),
        commands: AtomicU64::new(0),
        bad_commands: AtomicU64::new(0),
        send_errors: AtomicU64::new(0),
    });
    let running = Arc::new(AtomicBool::new(true));
    let mut tasks = Vec::new();
    for (i, actor) in o.actors.iter().enumerate() {
        for (stream, autopilot) in [(Stream::FlightControlCommand, false), (Stream::AutopilotCommand, true)] {
            let mut reader = link.reader(
                &topics.actor(actor, stream),
                StartFrom::Latest,
                Duration::from_millis(5),
                1 << 20,
            );
            let (shared, running) = (shared.clone(), running.clone());
            tasks.push(tokio::spawn(async move {
                while running.load(Ordering::Relaxed) {
                    if let Ok(records) = reader.next().await {
                        apply_command(records, i, autopilot, &shared);
                    }
                }
            }));
        }
    }
    // Set while the simulation is paused and silent: the camera sends nothing.
    let camera_paused = Arc::new(AtomicBool::new(false));
    let camera = (o.camera_rate_hz > 0.0).then(|| {
        let paused = camera_paused.clone();
        let writer = link.writer(&o.camera_topic);
        let o = o.clone();
        let (running, shared) = (running.clone(), shared.clone());
        let images = Arc::new(AtomicU64::new(0));
        let counted = images.clone();
        let attitude = Arc::new(Mutex::new((0.0f64, 0.0f64, 0.0f64)));
        let seen = attitude.clone();
        let log = send_log.clone();
        let task = tokio::spawn(async move {
            let mut faults = Faults::new(o.faults, 0xca3e);
            let period = Duration::from_secs_f64(1.0 / o.camera_rate_hz);
            let mut next = Instant::now();
            let mut reused: Option<Vec<u8>> = None;
            while running.load(Ordering::Relaxed) {
                if paused.load(Ordering::Relaxed) {
                    tokio::time::sleep(period).await;
                    next = Instant::now();
                    continue;
                }
                let (roll, pitch, sim) = *seen.lock().unwrap_or_else(|p| p.into_inner());
                let sim_stamp = if o.stamp_images { stamp(sim) } else { TimeStamp::UNSET };
                let jpeg = match &reused {
                    Some(j) => j.clone(),
                    None => {
                        let (w, h, fov, q) = (o.camera_width, o.camera_height, o.camera_fov_deg, o.jpeg_quality);
                        let j = tokio::task::spawn_blocking(move || {
                            render::jpeg(&render::horizon(w, h, roll, pitch, fov), w, h, q)
                        })
                        .await
                        .map_err(|e| e.to_string())
                        .and_then(|r| r);
                        match j {
                            Ok(j) => {
                                if o.reuse_frames {
                                    reused = Some(j.clone());
                                }
                                j
                            }
                            Err(_) => continue,
                        }
                    }
                };
                if let Some(bad) = corrupt_jpeg(&mut faults, &jpeg) {
                    let payload = encode_image(
                        &o.camera_topic,
                        TimeStamp::UNSET,
                        platform_now(),
                        &CompressedImage {
                            format: ImageFormat::Jpeg,
                            data: bad,
                        },
                    );
                    send(&writer, payload, &shared).await;
                }
                let payload = encode_image(
                    &o.camera_topic,
                    sim_stamp,
                    platform_now(),
                    &CompressedImage {
                        format: ImageFormat::Jpeg,
                        data: jpeg,
                    },
                );
                let left = wall_now();
                if send(&writer, payload, &shared).await {
                    counted.fetch_add(1, Ordering::Relaxed);
                    log.line("camera", sim, left);
                }
                next += period;
                let now = Instant::now();
                if next > now {
                    tokio::time::sleep(next - now).await;
                } else {
                    next = now;
                }
            }
            faults.counts
        });
        (task, images, attitude)
    });

    let state_writers: Vec<Writer> = o
        .actors
        .iter()
        .map(|a| link.writer(&topics.actor(a, Stream::VehicleState)))
        .collect();
    let display_writers: Vec<Writer> = o
        .actors
        .iter()
        .map(|a| link.writer(&topics.actor(a, Stream::PrimaryFlightDisplayData)))
        .collect();
    let clock = link.writer(&topics.clock());
    let mut aircraft: Vec<Aircraft> = (0..o.actors.len()).map(Aircraft::new).collect();
    let mut faults = Faults::new(o.faults, 0x57a7e);
    let mut counts = Counts::default();
    let dt = 1.0 / o.state_rate_hz;
    let display_every = (o.state_rate_hz / o.display_rate_hz.max(1e-3)).round().max(1.0) as u64;
    let start = Instant::now();
    let mut last_stats = (Instant::now(), 0u64, 0u64);
    let mut last_restart = Instant::now();
    let mut tick: u64 = 0;
    let mut timeline = Timeline::new(0.0, o.pace, o.time_events.clone());
    let mut sim_step = 0.0;
    while !stop.load(Ordering::Relaxed) && o.duration.is_none_or(|d| start.elapsed() < d) {
        let sim = timeline.sim();
        let controls = shared.controls.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let silent = o.silent_while_paused && timeline.paused();
        for (i, a) in aircraft.iter_mut().enumerate() {
            if silent {
                break;
            }
            // The aircraft flies the sim time that passed (none while paused).
            if sim_step > 0.0 {
                a.step(sim_step, &controls[i]);
            }
            let topic = state_writers[i].topic().to_string();
            let payload = encode_envelope(&topic, &a.vehicle_state(), stamp(sim), platform_now());
            let wrong = encode_envelope(&topic, &a.flight_display(), stamp(sim), platform_now());
            let left = wall_now();
            if send_with_faults(&state_writers[i], payload, &mut faults, &wrong, &shared).await {
                counts.states += 1;
                send_log.line(&format!("state:{}", o.actors[i]), sim, left);
            }
            if tick % display_every == 0 {
                let topic = display_writers[i].topic().to_string();
                let payload = encode_envelope(&topic, &a.flight_display(), stamp(sim), platform_now());
                let wrong = encode_envelope(&topic, &a.vehicle_state(), stamp(sim), platform_now());
                let left = wall_now();
                if send_with_faults(&display_writers[i], payload, &mut faults, &wrong, &shared).await {
                    counts.displays += 1;
                    send_log.line(&format!("display:{}", o.actors[i]), sim, left);
                }
            }
        }
        if let Some((_, _, attitude)) = &camera {
            *attitude.lock().unwrap_or_else(|p| p.into_inner()) = (aircraft[0].roll, aircraft[0].pitch, sim);
        }
        camera_paused.store(silent, Ordering::Relaxed);
        let tick_json = serde_json::json!({
            "timestamp_sim": {"sec": stamp(sim).sec, "nanosec": stamp(sim).nanosec},
            "timestamp_platform": {"sec": platform_now().sec, "nanosec": platform_now().nanosec},
            "tick_group": 1,
        });
        let payload = encode_envelope(clock.topic(), &JsonData::new(&tick_json), stamp(sim), platform_now());
        if !silent && send(&clock, payload, &shared).await {
            counts.clock_ticks += 1;
        }
        if let (Some(b), Some(every)) = (broker.as_mut(), o.broker_restart_every) {
            if last_restart.elapsed() >= every {
                b.stop();
                *b = Broker::start(b.port).map_err(|e| format!("broker restart: {e}"))?;
                counts.broker_restarts += 1;
                last_restart = Instant::now();
            }
        }
        if let Some(interval) = o.stats_interval {
            let (at, states, errors) = last_stats;
            if at.elapsed() >= interval {
                let secs = at.elapsed().as_secs_f64();
                let images = camera.as_ref().map_or(0, |c| c.1.load(Ordering::Relaxed));
                let send_errors = shared.send_errors.load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "[aerosim_sim] {:.1} states/s, images {images}, commands {} ({} bad), send errors +{}",
                    (counts.states - states) as f64 / secs,
                    shared.commands.load(Ordering::Relaxed),
                    shared.bad_commands.load(Ordering::Relaxed),
                    send_errors - errors
                );
                last_stats = (Instant::now(), counts.states, send_errors);
            }
        }
        tick += 1;
        sim_step = timeline.step(tick as f64 * dt, dt, &mut |line| {
            let _ = writeln!(out, "[aerosim_sim] {line}");
        });
        let next = start + Duration::from_secs_f64(tick as f64 * dt);
        let now = Instant::now();
        if next > now {
            tokio::time::sleep(next - now).await;
        }
    }
    running.store(false, Ordering::Relaxed);
    counts.faults = faults.counts;
    if let Some((task, images, _)) = camera {
        if let Ok(f) = task.await {
            counts.faults += f;
        }
        counts.images = images.load(Ordering::Relaxed);
    }
    for t in tasks {
        t.abort();
    }
    counts.commands = shared.commands.load(Ordering::Relaxed);
    counts.bad_commands = shared.bad_commands.load(Ordering::Relaxed);
    counts.send_errors = shared.send_errors.load(Ordering::Relaxed);
    send_log.flush();
    Ok(counts)
}
