//! The emulator's loop: one UDP socket, bound where the simulator listens,
//! receives commands and sends telemetry (and optionally rover telemetry)
//! to the bridge, at a fixed rate or flat out, with faults on demand.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gps_denied_proto::camera::CameraModel;
use gps_denied_proto::wire::{
    DEFAULT_FOV_DEG, DEFAULT_IMAGE_HEIGHT, DEFAULT_IMAGE_WIDTH, DEFAULT_LOCAL_PORT, DEFAULT_SIM_PORT,
    DEFAULT_TELEMETRY_RATE_HZ, IMAGE_EVERY_NTH_FRAME, JPEG_QUALITY, MAX_DATAGRAM_BYTES,
};
use gps_denied_proto::{CameraGeometry, Command};
use serde_json::Value;

use crate::faults::{FaultCounts, FaultInjector, FaultRates};
use crate::render::Renderer;
use crate::world::{Pattern, World};

/// The largest payload one IPv4 UDP datagram carries.
pub const MAX_UDP_PAYLOAD: usize = 65_507;
/// Commands read per frame at most when taking what is queued.
const MAX_QUEUED: usize = 1024;
/// The wait after a receive error other than a timeout.
const ERROR_PAUSE: Duration = Duration::from_millis(5);
/// The longest a blocking receive waits before the stop flag is looked at.
const POLL: Duration = Duration::from_millis(50);
/// The kernel counts socket timeouts in ticks (4 ms at 250 Hz), rounding up:
/// the last stretch before a frame is slept instead.
const TIMEOUT_GRAIN: Duration = Duration::from_millis(5);
/// Late by more than this (a stall of the machine, not scheduling jitter):
/// carry on from now instead of sending the missed frames in a burst.
const STALL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone)]
pub struct Options {
    pub bind: SocketAddr,
    pub target: SocketAddr,
    pub rate_hz: f64,
    pub flat_out: bool,
    pub pattern: Pattern,
    pub rover_telemetry: bool,
    pub image_every: u64,
    pub jpeg_quality: i32,
    /// Render one image and send it again and again (benchmarks).
    pub reuse_image: bool,
    pub faults: FaultRates,
    /// Simulation seconds between restarts (time back to 0, state reset).
    pub restart_every: Option<f64>,
    /// Wall-clock seconds to run.
    pub duration: Option<f64>,
    /// Telemetry frames to send.
    pub frames: Option<u64>,
    pub stats_interval: Option<Duration>,
    /// Appends "timestamp wall_time" for each telemetry frame sent.
    pub send_log: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([0, 0, 0, 0], DEFAULT_SIM_PORT)),
            target: SocketAddr::from(([127, 0, 0, 1], DEFAULT_LOCAL_PORT)),
            rate_hz: DEFAULT_TELEMETRY_RATE_HZ,
            flat_out: false,
            pattern: Pattern::Circular,
            rover_telemetry: false,
            image_every: IMAGE_EVERY_NTH_FRAME,
            jpeg_quality: JPEG_QUALITY,
            reuse_image: false,
            faults: FaultRates::default(),
            restart_every: None,
            duration: None,
            frames: None,
            stats_interval: Some(Duration::from_secs(1)),
            send_log: None,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub frames: u64,
    pub images: u64,
    pub rover_frames: u64,
    pub commands: u64,
    pub bad_commands: u64,
    pub send_errors: u64,
    /// Images left out because the frame would not fit in a datagram.
    pub oversize_images: u64,
    pub restarts: u64,
    pub faults: FaultCounts,
}

impl Counts {
    fn rates_since(&self, before: &Counts, seconds: f64) -> String {
        let r = |now: u64, then: u64| (now - then) as f64 / seconds;
        format!(
            "telemetry {:.1}/s images {:.1}/s rover {:.1}/s commands {:.1}/s (bad {}) send errors {} restarts {}; faults: {}",
            r(self.frames, before.frames),
            r(self.images, before.images),
            r(self.rover_frames, before.rover_frames),
            r(self.commands, before.commands),
            self.bad_commands,
            self.send_errors,
            self.restarts,
            self.faults
        )
    }
}

struct Emulator<'a> {
    options: &'a Options,
    socket: UdpSocket,
    geometry: CameraGeometry,
    camera: CameraModel,
    renderer: Renderer,
    world: World,
    injector: FaultInjector,
    counts: Counts,
    frame_in_run: u64,
    cached_image: Option<Vec<u8>>,
    send_log: Option<BufWriter<File>>,
    buf: Vec<u8>,
}

impl Emulator<'_> {
    fn handle_datagram(&mut self, n: usize) {
        match Command::decode(&self.buf[..n]) {
            Ok(c) => {
                self.world.command = c;
                self.counts.commands += 1;
            }
            Err(_) => self.counts.bad_commands += 1,
        }
    }

    /// Receives commands until `until` (or, flat out, those already queued).
    fn receive_until(&mut self, until: Instant, stop: &AtomicBool) {
        if self.options.flat_out {
            self.receive_queued();
            return;
        }
        loop {
            let now = Instant::now();
            if now >= until || stop.load(Ordering::Relaxed) {
                return;
            }
            let wait = until - now;
            if wait <= TIMEOUT_GRAIN {
                // A socket timeout would overshoot by up to a tick: take what
                // is queued and sleep the rest (a precise timer).
                self.receive_queued();
                std::thread::sleep(until.saturating_duration_since(Instant::now()));
                return;
            }
            let _ = self.socket.set_read_timeout(Some((wait - TIMEOUT_GRAIN).min(POLL)));
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, _)) => self.handle_datagram(n),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                // An ICMP "port unreachable" from an earlier send, and the like:
                // a recurring one is paused on, not spun on.
                Err(_) => std::thread::sleep(ERROR_PAUSE.min(until.saturating_duration_since(Instant::now()))),
            }
        }
    }

    /// Handles the commands already queued, without waiting, and at most
    /// [`MAX_QUEUED`] of them: a flood does not hold back the frames. Returns
    /// how many datagrams it read.
    fn receive_queued(&mut self) -> usize {
        if !self.options.flat_out {
            let _ = self.socket.set_nonblocking(true);
        }
        let mut read = 0;
        while read < MAX_QUEUED {
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, _)) => {
                    read += 1;
                    self.handle_datagram(n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // An ICMP error of an earlier send: read on, a few times only.
                Err(_) => read += MAX_QUEUED / 8,
            }
        }
        if !self.options.flat_out {
            let _ = self.socket.set_nonblocking(false);
        }
        read
    }

    fn image(&mut self) -> Option<Vec<u8>> {
        if self.options.reuse_image {
            if let Some(j) = &self.cached_image {
                return Some(j.clone());
            }
        }
        let jpeg = self.renderer.jpeg(&self.world).ok()?;
        if self.options.reuse_image {
            self.cached_image = Some(jpeg.clone());
        }
        Some(jpeg)
    }

    fn send(&mut self, datagram: &[u8]) {
        if self.socket.send_to(datagram, self.options.target).is_err() {
            self.counts.send_errors += 1;
        }
    }

    fn send_frame(&mut self) {
        let mut telemetry = self.world.telemetry(&self.camera);
        telemetry.camera = Some(self.geometry);
        if self.frame_in_run % self.options.image_every.max(1) == 0 {
            telemetry.image = self.image();
        }
        let has_image = telemetry.image.is_some();
        let mut value = telemetry.to_value();
        self.injector.corrupt_value(&mut value);
        let mut bytes = value.to_string().into_bytes();
        if bytes.len() > MAX_UDP_PAYLOAD {
            if let Some(image) = value.pointer_mut("/camera/image") {
                *image = Value::Null;
            }
            bytes = value.to_string().into_bytes();
            self.counts.oversize_images += 1;
        } else if has_image {
            self.counts.images += 1;
        }
        for d in self.injector.datagrams(bytes) {
            self.send(&d);
        }
        self.counts.frames += 1;
        if let Some(log) = &mut self.send_log {
            let wall = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            let _ = writeln!(log, "{:.6} {:.6}", self.world.time, wall.as_secs_f64());
        }
        if self.options.rover_telemetry {
            let rover = self.world.rover_telemetry().encode();
            self.send(&rover);
            self.counts.rover_frames += 1;
        }
        self.counts.faults = self.injector.counts();
    }
}

/// Runs until `stop` is set, or the duration or frame count is reached.
/// Progress goes to `out`; write errors (a reader that went away) are
/// ignored.
pub fn run(options: &Options, stop: &AtomicBool, out: &mut dyn Write) -> Result<Counts, String> {
    if !(options.rate_hz.is_finite() && options.rate_hz > 0.0) {
        return Err(format!("rate {} Hz is not positive", options.rate_hz));
    }
    let socket = UdpSocket::bind(options.bind).map_err(|e| format!("bind {}: {e}", options.bind))?;
    if options.flat_out {
        socket.set_nonblocking(true).map_err(|e| e.to_string())?;
    }
    let geometry = CameraGeometry {
        width: DEFAULT_IMAGE_WIDTH,
        height: DEFAULT_IMAGE_HEIGHT,
        fov_deg: DEFAULT_FOV_DEG,
    };
    let camera = CameraModel::new(&geometry);
    let send_log = match &options.send_log {
        Some(path) => Some(BufWriter::new(
            File::options()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("--send-log {}: {e}", path.display()))?,
        )),
        None => None,
    };
    let local = socket.local_addr().map_err(|e| e.to_string())?;
    let _ = writeln!(
        out,
        "gps_denied_sim: commands on {local}, telemetry to {} at {}, rover pattern {}",
        options.target,
        if options.flat_out {
            "full speed".to_owned()
        } else {
            format!("{} Hz", options.rate_hz)
        },
        options.pattern.name()
    );
    let mut e = Emulator {
        options,
        socket,
        geometry,
        camera,
        renderer: Renderer::new(camera, options.jpeg_quality),
        world: World::new(options.pattern),
        injector: FaultInjector::new(options.faults),
        counts: Counts::default(),
        frame_in_run: 0,
        cached_image: None,
        send_log,
        buf: vec![0; MAX_DATAGRAM_BYTES],
    };
    let dt = 1.0 / options.rate_hz;
    let period = Duration::from_secs_f64(dt);
    let start = Instant::now();
    let mut next_frame = start;
    let mut last_stats = (start, Counts::default());
    while !stop.load(Ordering::Relaxed) {
        if options.duration.is_some_and(|d| start.elapsed().as_secs_f64() >= d)
            || options.frames.is_some_and(|n| e.counts.frames >= n)
        {
            break;
        }
        e.receive_until(next_frame, stop);
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if options.restart_every.is_some_and(|r| e.world.time >= r) {
            e.world = World::new(options.pattern);
            e.frame_in_run = 0;
            e.counts.restarts += 1;
        }
        e.send_frame();
        e.world.step(dt);
        e.frame_in_run += 1;
        // k·dt, not a running sum: stamps stay 0.2, not 0.20000000000000004.
        e.world.time = e.frame_in_run as f64 * dt;
        let now = Instant::now();
        next_frame += period;
        if now > next_frame + period.max(STALL) {
            next_frame = now;
        }
        if let Some(interval) = options.stats_interval {
            if now - last_stats.0 >= interval {
                let line = e.counts.rates_since(&last_stats.1, (now - last_stats.0).as_secs_f64());
                let _ = writeln!(out, "gps_denied_sim: t={:.1} s {line}", e.world.time);
                let _ = out.flush();
                last_stats = (now, e.counts);
            }
        }
    }
    if let Some(log) = &mut e.send_log {
        let _ = log.flush();
    }
    Ok(e.counts)
}
