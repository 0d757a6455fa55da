//! The running emulator: a supervisor thread that binds the sockets, runs a
//! run (a motion thread: thrusters in, dynamics, telemetry out; an image
//! thread: render, encode, publish), restarts it on demand, and reports.
//!
//! Every loop waits at most [`TICK`] between checks of the stop flag, so
//! that a stop (SIGINT / SIGTERM in `main`) ends everything within a second.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use auv_proto::counts::InputCounts;
use auv_proto::image::with_comment;
use auv_proto::thruster::ThrusterCommand;
use auv_proto::WireError;

use crate::dynamics::World;
use crate::faults::{FaultCounts, FaultInjector, Parts, Stream};
use crate::options::Options;
use crate::render::Renderer;
use crate::sockets::{Ports, Sockets};

const TICK: Duration = Duration::from_millis(20);

/// What the emulator did, for tests and for its final line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub image_messages: u64,
    pub telemetry_messages: u64,
    pub thrusters: InputCounts,
    pub image_faults: FaultCounts,
    pub telemetry_faults: FaultCounts,
    pub restarts: u64,
    /// Why the emulator stopped on its own (a socket or rendering error).
    pub error: Option<String>,
}

struct Shared {
    options: Options,
    stop: AtomicBool,
    restarts: AtomicU64,
    world: Mutex<World>,
    report: Mutex<Report>,
    /// Kept across restarts, so that counts and sequence numbers add up over a run.
    image_faults: Mutex<FaultInjector>,
    telemetry_faults: Mutex<FaultInjector>,
    image_seq: Mutex<Vec<u64>>,
    telemetry_seq: Mutex<Vec<u64>>,
    send_log: Option<Mutex<BufWriter<File>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking thread must not take the others down with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes to stdout / stderr that never fail: once the reader is gone the
/// emulator keeps running, and keeps obeying signals.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "[auv_sim] {line}");
}

fn say_stdout(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "[auv_sim] {line}");
    let _ = out.flush();
}

fn unix_time() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[derive(Debug)]
pub struct Simulator {
    shared: Arc<Shared>,
    ports: Ports,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// Binds the sockets (so that a port in use is an error here) and starts.
    pub fn start(options: Options) -> Result<Simulator, String> {
        Renderer::new(options.width, options.height, options.jpeg_quality)?;
        let send_log = match &options.send_log {
            Some(path) => Some(Mutex::new(BufWriter::new(open_log(path)?))),
            None => None,
        };
        let ctx = zmq::Context::new();
        let wanted = Ports {
            image: options.image_port,
            thruster: options.thruster_port,
            telemetry: options.telemetry_port,
        };
        let (sockets, ports) = Sockets::bind(&ctx, &options, wanted)?;
        let shared = Arc::new(Shared::new(options, send_log));
        let s = shared.clone();
        let supervisor = std::thread::Builder::new()
            .name("auv_sim".into())
            .spawn(move || supervise(&s, &ctx, sockets, ports))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(Simulator {
            shared,
            ports,
            supervisor: Mutex::new(Some(supervisor)),
        })
    }

    pub fn ports(&self) -> Ports {
        self.ports
    }

    pub fn request_stop(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }

    /// Waits until the emulator has stopped (on request, `--duration`, or an error).
    pub fn wait(&self) {
        let handle = lock(&self.supervisor).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }

    pub fn report(&self) -> Report {
        let mut r = lock(&self.shared.report).clone();
        r.restarts = self.shared.restarts.load(Ordering::SeqCst);
        r.image_faults = lock(&self.shared.image_faults).counts();
        r.telemetry_faults = lock(&self.shared.telemetry_faults).counts();
        r
    }

    /// The current state of every AUV.
    pub fn world(&self) -> World {
        lock(&self.shared.world).clone()
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        self.request_stop();
        self.wait();
    }
}

fn open_log(path: &Path) -> Result<File, String> {
    File::options()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("--send-log {}: {e}", path.display()))
}

fn supervise(shared: &Arc<Shared>, ctx: &zmq::Context, first: Sockets, ports: Ports) {
    let o = &shared.options;
    let started = Instant::now();
    let mut stats = StatsPrinter::new(o.stats_interval);
    let mut sockets = Some(first);
    loop {
        let session_stop = Arc::new(AtomicBool::new(false));
        let Some(s) = sockets.take() else { break };
        let threads = start_session(shared, s, &session_stop);
        let session_started = Instant::now();
        let restart = loop {
            std::thread::sleep(TICK);
            stats.tick(shared, &started);
            if shared.stop.load(Ordering::SeqCst) || o.duration.is_some_and(|d| started.elapsed() >= d) {
                break false;
            }
            if lock(&shared.report).error.is_some() {
                break false;
            }
            if o.restart_every.is_some_and(|every| session_started.elapsed() >= every) {
                break true;
            }
        };
        session_stop.store(true, Ordering::SeqCst);
        for t in threads {
            let _ = t.join();
        }
        flush_send_log(shared);
        if !restart {
            break;
        }
        shared.restarts.fetch_add(1, Ordering::SeqCst);
        *lock(&shared.world) = World::new(&o.auv_ids);
        say(&format!("restart: away for {:.1} s", o.restart_down.as_secs_f64()));
        let back = Instant::now() + o.restart_down;
        while Instant::now() < back && !shared.stop.load(Ordering::SeqCst) {
            std::thread::sleep(TICK);
        }
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        match Sockets::bind(ctx, o, ports) {
            Ok((s, _)) => sockets = Some(s),
            Err(e) => {
                say(&e);
                lock(&shared.report).error = Some(e);
            }
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    flush_send_log(shared);
}

fn flush_send_log(shared: &Shared) {
    if let Some(log) = &shared.send_log {
        let _ = lock(log).flush();
    }
}

fn start_session(shared: &Arc<Shared>, sockets: Sockets, session_stop: &Arc<AtomicBool>) -> Vec<JoinHandle<()>> {
    let Sockets {
        images,
        thrusters,
        telemetry,
    } = sockets;
    let mut threads = Vec::new();
    let (s, stop) = (shared.clone(), session_stop.clone());
    threads.extend(
        std::thread::Builder::new()
            .name("auv_sim motion".into())
            .spawn(move || run_motion(&s, &stop, &thrusters, &telemetry))
            .ok(),
    );
    let (s, stop) = (shared.clone(), session_stop.clone());
    threads.extend(
        std::thread::Builder::new()
            .name("auv_sim images".into())
            .spawn(move || {
                if let Err(e) = run_images(&s, &stop, &images) {
                    say(&format!("images: {e}"));
                    lock(&s.report).error = Some(e);
                }
            })
            .ok(),
    );
    threads
}

fn running(shared: &Shared, session_stop: &AtomicBool) -> bool {
    !shared.stop.load(Ordering::SeqCst) && !session_stop.load(Ordering::SeqCst)
}

/// Sends one message (after the faults); PUB sockets never block.
fn publish(socket: &zmq::Socket, faults: &Mutex<FaultInjector>, stream: Stream, message: Parts) {
    let messages = lock(faults).apply(stream, message);
    for m in messages {
        if let Err(e) = socket.send_multipart(m, 0) {
            say(&format!("send: {e}"));
        }
    }
}

/// The next sequence number of AUV `index` on a stream, logged as sent.
fn log_send(shared: &Shared, seqs: &Mutex<Vec<u64>>, stream: &str, index: usize, id: u8) -> u64 {
    let seq = {
        let mut seqs = lock(seqs);
        seqs[index] += 1;
        seqs[index]
    };
    if let Some(log) = &shared.send_log {
        let _ = writeln!(lock(log), "{stream} {id} {seq} {:.6}", unix_time());
    }
    seq
}

fn run_motion(shared: &Shared, session_stop: &AtomicBool, thrusters: &zmq::Socket, telemetry: &zmq::Socket) {
    let o = &shared.options;
    let period = Duration::from_secs_f64(1.0 / o.telemetry_rate);
    let mut last_step = Instant::now();
    let mut next_telemetry = Instant::now();
    let mut bad_logged = Instant::now() - Duration::from_secs(10);
    while running(shared, session_stop) {
        let wait = next_telemetry.saturating_duration_since(Instant::now()).min(TICK);
        let mut items = [thrusters.as_poll_item(zmq::POLLIN)];
        let readable = zmq::poll(&mut items, wait.as_millis() as i64).unwrap_or(0) > 0;
        if readable {
            drain_thrusters(shared, thrusters, &mut bad_logged);
        }
        let now = Instant::now();
        lock(&shared.world).step((now - last_step).as_secs_f64());
        last_step = now;
        if now >= next_telemetry {
            next_telemetry = if now - next_telemetry > period {
                now + period
            } else {
                next_telemetry + period
            };
            let states = lock(&shared.world).auvs.clone();
            for (i, auv) in states.iter().enumerate() {
                let t = auv.telemetry();
                let message = vec![t.id_part().to_vec(), t.payload().to_vec()];
                publish(telemetry, &shared.telemetry_faults, Stream::Telemetry, message);
                log_send(shared, &shared.telemetry_seq, "telemetry", i, auv.id);
            }
            lock(&shared.report).telemetry_messages += states.len() as u64;
        }
    }
}

impl Shared {
    fn new(options: Options, send_log: Option<Mutex<BufWriter<File>>>) -> Self {
        let n = options.auv_ids.len();
        Shared {
            world: Mutex::new(World::new(&options.auv_ids)),
            image_faults: Mutex::new(FaultInjector::new(options.faults, Stream::Images)),
            telemetry_faults: Mutex::new(FaultInjector::new(options.faults, Stream::Telemetry)),
            image_seq: Mutex::new(vec![0; n]),
            telemetry_seq: Mutex::new(vec![0; n]),
            options,
            stop: AtomicBool::new(false),
            restarts: AtomicU64::new(0),
            report: Mutex::new(Report::default()),
            send_log,
        }
    }
}

/// Thruster messages applied per turn of the motion loop at most: a flood
/// of them cannot hold back the telemetry or the stop flag.
const MAX_DRAIN: usize = 1000;

/// Applies the thruster messages waiting on `thrusters`, [`MAX_DRAIN`] at
/// most; returns how many it took.
fn drain_thrusters(shared: &Shared, thrusters: &zmq::Socket, bad_logged: &mut Instant) -> usize {
    let mut taken = 0;
    while taken < MAX_DRAIN {
        let Ok(parts) = thrusters.recv_multipart(zmq::DONTWAIT) else {
            break;
        };
        taken += 1;
        let outcome = apply_thruster_message(shared, &parts);
        {
            let counts = &mut lock(&shared.report).thrusters;
            match &outcome {
                Ok(()) => counts.record_good(),
                Err(None) => counts.record_unknown_id(),
                Err(Some(e)) => counts.record_error(e),
            }
        }
        if let Err(e) = outcome {
            if bad_logged.elapsed() >= Duration::from_secs(1) {
                *bad_logged = Instant::now();
                let why = e.map_or_else(
                    || "an AUV id this simulator does not have".to_string(),
                    |e| e.to_string(),
                );
                say(&format!("thruster message refused: {why}"));
            }
        }
    }
    taken
}

/// `Err(None)`: a valid message for an AUV that does not exist.
fn apply_thruster_message(shared: &Shared, parts: &[Vec<u8>]) -> Result<(), Option<WireError>> {
    let [part] = parts else {
        return Err(Some(WireError::PartCount {
            what: "thruster message",
            got: parts.len(),
            expected: 1,
        }));
    };
    let command = ThrusterCommand::decode(part).map_err(Some)?;
    let mut world = lock(&shared.world);
    let auv = world.auv_mut(command.auv_id()).ok_or(None)?;
    auv.command(&command);
    Ok(())
}

fn run_images(shared: &Shared, session_stop: &AtomicBool, socket: &zmq::Socket) -> Result<(), String> {
    let o = &shared.options;
    let period = Duration::from_secs_f64(1.0 / o.image_rate);
    let mut renderer = Renderer::new(o.width, o.height, o.jpeg_quality)?;
    let mut reused: Vec<Option<(Vec<u8>, Vec<u8>)>> = vec![None; o.auv_ids.len()];
    let mut next = Instant::now();
    while running(shared, session_stop) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(TICK));
            continue;
        }
        next = if now - next > period {
            now + period
        } else {
            next + period
        };
        let states = lock(&shared.world).auvs.clone();
        for (i, auv) in states.iter().enumerate() {
            let (front, bottom) = match &reused[i] {
                Some(frames) => frames.clone(),
                None => {
                    let frames = (renderer.front(auv)?, renderer.bottom(auv)?);
                    if o.reuse_frames {
                        reused[i] = Some(frames.clone());
                    }
                    frames
                }
            };
            // The number this message will be logged with.
            let seq = lock(&shared.image_seq)[i] + 1;
            let tag = |camera: &str| format!("auv_sim auv={} seq={seq} camera={camera}", auv.id);
            let message = vec![
                vec![auv.id],
                with_comment(&front, tag("front").as_bytes()),
                with_comment(&bottom, tag("bottom").as_bytes()),
            ];
            publish(socket, &shared.image_faults, Stream::Images, message);
            log_send(shared, &shared.image_seq, "images", i, auv.id);
        }
        lock(&shared.report).image_messages += states.len() as u64;
    }
    Ok(())
}

/// Prints the rate of every stream once per interval.
struct StatsPrinter {
    interval: Option<Duration>,
    last: Instant,
    last_report: Report,
}

impl StatsPrinter {
    fn new(interval: Option<Duration>) -> Self {
        StatsPrinter {
            interval,
            last: Instant::now(),
            last_report: Report::default(),
        }
    }

    fn tick(&mut self, shared: &Shared, started: &Instant) {
        let Some(interval) = self.interval else { return };
        let elapsed = self.last.elapsed();
        if elapsed < interval {
            return;
        }
        let mut r = lock(&shared.report).clone();
        r.image_faults = lock(&shared.image_faults).counts();
        r.telemetry_faults = lock(&shared.telemetry_faults).counts();
        let per_s = |now: u64, before: u64| (now - before) as f64 / elapsed.as_secs_f64();
        say_stdout(&format!(
            "t={:.1}s images {:.1} msg/s, telemetry {:.1} msg/s ({} AUVs), thruster commands {} good {} bad, faults sent {}",
            started.elapsed().as_secs_f64(),
            per_s(r.image_messages, self.last_report.image_messages),
            per_s(r.telemetry_messages, self.last_report.telemetry_messages),
            shared.options.auv_ids.len(),
            r.thrusters.good,
            r.thrusters.bad_total(),
            r.image_faults.total() + r.telemetry_faults.total(),
        ));
        self.last = Instant::now();
        self.last_report = r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_turn_applies_a_bounded_number_of_thruster_messages() {
        let shared = Shared::new(
            Options {
                auv_ids: vec![0],
                ..Options::default()
            },
            None,
        );
        let ctx = zmq::Context::new();
        let pull = ctx.socket(zmq::PULL).unwrap();
        pull.bind("inproc://thrusters").unwrap();
        let push = ctx.socket(zmq::PUSH).unwrap();
        push.set_sndhwm(0).unwrap();
        push.connect("inproc://thrusters").unwrap();
        let msg = ThrusterCommand::new(0, [Some(1), None, None, None]).unwrap().encode();
        for _ in 0..MAX_DRAIN + 500 {
            push.send(&msg[..], 0).unwrap();
        }
        let mut logged = Instant::now();
        assert_eq!(drain_thrusters(&shared, &pull, &mut logged), MAX_DRAIN);
        assert_eq!(
            drain_thrusters(&shared, &pull, &mut logged),
            500,
            "the rest on the next turn"
        );
    }
}
