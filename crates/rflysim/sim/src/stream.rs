//! One thread per sensor stream: renders the sensor's view of the world at
//! its rate, encodes it for its transport and sends it as datagrams (with
//! the faults asked for) or into its shared-memory region.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use image_codec::encode;
use rflysim_proto::config::SensorConfig;
use rflysim_proto::header::{split_frame, MAX_PACKET_PAYLOAD};
use rflysim_proto::lidar;
use rflysim_proto::sensor::{ImageFormat, SensorClass, Transport};
use rflysim_proto::shm::region_len;

use crate::dump::append_line;
use crate::faults::FaultInjector;
use crate::gimbal::GimbalState;
use crate::log::line as log;
use crate::options::{LidarLayout, Options};
use crate::render::{self, Mount};
use crate::send_log::SendLog;
use crate::shared::{Running, StreamStats};
use crate::transport::{send_all, udp_sender, ShmRegion};

/// The stream threads, started from the config and by requests, each
/// replaced when its sensor is requested again with another configuration.
#[derive(Debug)]
pub(crate) struct Streams {
    pub options: Options,
    running: HashMap<u16, Arc<AtomicBool>>,
    pub threads: Vec<JoinHandle<()>>,
}

impl Streams {
    pub fn new(options: Options) -> Self {
        Self {
            options,
            running: HashMap::new(),
            threads: Vec::new(),
        }
    }

    /// Starts (or restarts with a new configuration) the stream of one sensor.
    pub fn start(&mut self, cfg: SensorConfig, run: &Running) -> io::Result<()> {
        let shared = &run.shared;
        if let Some(old) = self.running.remove(&cfg.seq_id) {
            old.store(true, Ordering::Relaxed);
        }
        if cfg.is_gimbal() {
            shared
                .gimbals
                .lock()
                .unwrap()
                .entry(cfg.seq_id)
                .or_insert_with(|| GimbalState::from_config(&cfg));
        }
        shared.sensors.lock().unwrap().insert(cfg.seq_id, cfg.clone());
        let mine = Arc::new(AtomicBool::new(false));
        self.running.insert(cfg.seq_id, mine.clone());
        let stats = Arc::new(StreamStats::default());
        {
            let mut all = shared.stats.lock().unwrap();
            all.retain(|(s, _)| *s != cfg.seq_id);
            all.push((cfg.seq_id, stats.clone()));
        }
        let worker = StreamWorker::new(cfg, self.options.clone(), run.clone(), stats)?;
        let stop = run.stop.clone();
        self.threads.push(std::thread::spawn(move || worker.run(&stop, &mine)));
        Ok(())
    }
}

/// Produces and sends one sensor's frames.
struct StreamWorker {
    cfg: SensorConfig,
    options: Options,
    run: Running,
    stats: Arc<StreamStats>,
    mount: Mount,
    sock: UdpSocket,
    dest: SocketAddrV4,
    send_log: Option<SendLog>,
    shm: Option<ShmRegion>,
    faults: FaultInjector,
    lidar_rays: Vec<[f64; 3]>,
}

impl StreamWorker {
    fn new(cfg: SensorConfig, options: Options, run: Running, stats: Arc<StreamStats>) -> io::Result<Self> {
        let transport = cfg.transport().unwrap_or(Transport::UdpCompressed);
        let shm = if transport == Transport::SharedMemory {
            let kind = cfg
                .kind()
                .ok_or_else(|| io::Error::other(format!("sensor {}: unknown TypeID", cfg.seq_id)))?;
            let (w, h) = cfg.size();
            let len = region_len(kind, w, h);
            Some(ShmRegion::create(&cfg.shm_name(), len)?)
        } else {
            None
        };
        let ip = options.target_ip.unwrap_or_else(|| cfg.receiver_ip());
        let (w, h) = cfg.size();
        let lidar_rays = if matches!(cfg.kind().map(|k| k.class), Some(SensorClass::Lidar)) {
            render::lidar_rays(cfg.type_id, u32::from(w), u32::from(h))
        } else {
            Vec::new()
        };
        let send_log = SendLog::open(options.send_log.as_deref())?;
        Ok(Self {
            send_log,
            dest: SocketAddrV4::new(ip, cfg.udp_port()),
            mount: Mount::of(&cfg),
            faults: FaultInjector::new(options.faults, u64::from(cfg.seq_id)),
            sock: udp_sender(None)?,
            lidar_rays,
            shm,
            cfg,
            options,
            run,
            stats,
        })
    }

    fn max_range(&self) -> f64 {
        match f64::from(self.cfg.other_params[0]) {
            r if r > 0.0 => r,
            _ => 100.0,
        }
    }

    /// The payload of one frame at sim time `t` (before any transport encoding).
    fn render(&self, t: f64) -> Vec<u8> {
        let v = self.options.trajectory.state(t);
        // The scene's vehicles where they are at `t` on the shared clock (the
        // sensor's vehicle's clock may be ahead), but the one the sensor is on.
        let shared_t = t - self.options.clock_offset(self.cfg.target_copter);
        let scene = self
            .run
            .shared
            .scene
            .lock()
            .unwrap()
            .world_at(shared_t, Some(i32::from(self.cfg.target_copter)));
        let kind = self.cfg.kind().expect("known TypeID");
        let (w, h) = self.cfg.size();
        let (w, h) = (u32::from(w.max(1)), u32::from(h.max(1)));
        let copter = i32::from(self.cfg.target_copter);
        let pos = v.position.map(|c| c as f32);
        let euler = v.euler.map(|c| c as f32);
        match kind.class {
            SensorClass::Camera(enc) => {
                let (mut mount, mut fov, mut type_id, mut size) =
                    (self.mount, f64::from(self.cfg.camera_fov_deg), kind.type_id, (w, h));
                if kind.is_gimbal() {
                    if let Some(g) = self.run.shared.gimbals.lock().unwrap().get_mut(&self.cfg.seq_id) {
                        g.advance(t);
                        mount.rotation = g.attitude();
                        fov = g.fov_deg;
                        size = g.image_size();
                        type_id = g.render_type_id();
                    }
                }
                let view = render::CameraView {
                    type_id,
                    encoding: enc,
                    width: size.0,
                    height: size.1,
                    fov_deg: fov,
                    max_range: 1000.0,
                    depth: render::DepthOptics::of(&self.cfg),
                };
                render::render_camera(&scene, &v, &mount, &view)
            }
            SensorClass::Lidar => {
                let pts = render::scan_lidar(
                    &scene,
                    &v,
                    &self.mount,
                    kind.type_id,
                    &self.lidar_rays,
                    self.max_range(),
                );
                let axis = i32::from(kind.points_in_world_frame());
                // A region holds the SDK int16 layout, the one RflySim3D writes (RflySim's SDK: VisionCaptureApi.py's img_mem_thrd).
                if self.shm.is_some() {
                    lidar::encode::sdk_int16(pos, euler, &pts, self.max_range() as f32)
                } else {
                    match self.options.lidar_layout {
                        LidarLayout::Protocol => lidar::encode::protocol_float(copter, axis, pos, euler, &pts),
                        LidarLayout::SdkInt16 => lidar::encode::sdk_int16(pos, euler, &pts, self.max_range() as f32),
                    }
                }
            }
            SensorClass::DepthCloud => {
                let pts = render::depth_cloud(
                    &scene,
                    &v,
                    &self.mount,
                    w,
                    h,
                    f64::from(self.cfg.camera_fov_deg),
                    self.max_range(),
                );
                match self.options.lidar_layout {
                    LidarLayout::Protocol if self.shm.is_none() => {
                        let p4: Vec<[f32; 4]> = pts.iter().map(|p| [p[0], p[1], p[2], 0.0]).collect();
                        lidar::encode::protocol_float(copter, 0, pos, euler, &p4)
                    }
                    _ => lidar::encode::sdk_int16_xyz(pos, euler, &pts, self.max_range() as f32),
                }
            }
            SensorClass::LaserDistance => render::laser(
                &scene,
                &v,
                &self.mount,
                copter,
                self.cfg.sensor_ang_eular,
                self.max_range(),
            )
            .encode(),
            SensorClass::Detections => {
                // Every block, with a fixed box: a stand-in for RflySim's detector.
                let dets: Vec<_> = scene
                    .blocks
                    .iter()
                    .map(|b| rflysim_proto::telemetry::Detection {
                        id: i32::from(b.label),
                        score: Some(0.9),
                        values: [0.0, 0.0, 10.0, 10.0],
                    })
                    .collect();
                rflysim_proto::telemetry::encode_detections(&dets)
            }
        }
    }

    /// Transport encoding of a rendered camera frame (JPEG / PNG / raw).
    fn encode_for_transport(&self, payload: Vec<u8>) -> Vec<u8> {
        let Some(kind) = self.cfg.kind() else {
            return payload;
        };
        let SensorClass::Camera(enc) = kind.class else {
            return payload;
        };
        let (w, h) = self.current_image_size();
        match ImageFormat::for_transport(self.cfg.transport().unwrap_or(Transport::UdpRaw)) {
            ImageFormat::Raw => payload,
            ImageFormat::Jpeg => encode::jpeg(&payload, w, h, enc, self.options.jpeg_quality).unwrap_or(payload),
            ImageFormat::Png => encode::png(&payload, w, h, enc).unwrap_or(payload),
        }
    }

    fn current_image_size(&self) -> (u32, u32) {
        if self.cfg.is_gimbal() {
            if let Some(g) = self.run.shared.gimbals.lock().unwrap().get(&self.cfg.seq_id) {
                return g.image_size();
            }
        }
        let (w, h) = self.cfg.size();
        (u32::from(w.max(1)), u32::from(h.max(1)))
    }

    fn run(mut self, stop: &AtomicBool, replaced: &AtomicBool) {
        let mut frame_id: u64 = 0;
        let mut epoch = self.run.clock.epoch();
        let mut next = Instant::now();
        // Frames rendered once and sent again in turn (--reuse-frames, --cycle-frames).
        let cache_len = self.options.cached_frames();
        let mut cached: Vec<Vec<u8>> = Vec::with_capacity(cache_len);
        let mut fresh: Vec<u8>;
        let transport = self.cfg.transport().unwrap_or(Transport::UdpCompressed);
        log(&format!(
            "sensor {} (TypeID {}) → {}",
            self.cfg.seq_id,
            self.cfg.type_id,
            if transport == Transport::SharedMemory {
                format!("/dev/shm/{}", self.cfg.shm_name())
            } else {
                format!("udp {}", self.dest)
            }
        ));
        while !stop.load(Ordering::Relaxed) && !replaced.load(Ordering::Relaxed) {
            if self.options.max_frames.is_some_and(|m| frame_id >= m) {
                break;
            }
            if self.options.silent_while_paused && self.run.clock.paused() {
                std::thread::sleep(Duration::from_millis(5));
                next = Instant::now();
                continue;
            }
            if let Some(p) = self.options.rate.period(self.cfg.rate_hz()) {
                let now = Instant::now();
                if now < next {
                    std::thread::sleep((next - now).min(Duration::from_millis(50)));
                    continue;
                }
                next += p;
                if next + p * 4 < Instant::now() {
                    next = Instant::now() + p; // fell behind: don't burst
                }
            }
            if self.run.clock.epoch() != epoch {
                epoch = self.run.clock.epoch();
                frame_id = 0;
            }
            // A sensor reads the clock of the vehicle it is mounted on.
            let t = self.run.clock.now() + self.options.clock_offset(self.cfg.target_copter);
            let payload: &[u8] = if cache_len == 0 {
                fresh = self.encode_for_transport(self.render(t));
                &fresh
            } else {
                // Frame ids count up from 0 (again after a restart): the
                // cache fills in order.
                let slot = (frame_id % cache_len as u64) as usize;
                if slot == cached.len() {
                    cached.push(self.cached_frame(t, slot));
                }
                &cached[slot]
            };
            match &self.options.dump_dir {
                Some(dir) if self.options.cycle_frames.is_none() => self.dump(dir, frame_id, t),
                _ => {}
            }
            if let Err(e) = self.send(frame_id, t, payload) {
                log(&format!("sensor {}: send failed: {e}", self.cfg.seq_id));
                std::thread::sleep(Duration::from_millis(200));
            }
            frame_id += 1;
        }
    }

    /// The `slot`-th frame of the cache, rendered at `t` and encoded for
    /// the transport; in a cycle, a camera frame marked as that slot's and
    /// written as sent to `sensor<SeqID>_cycle<slot>.bin` in the dump directory.
    fn cached_frame(&self, t: f64, slot: usize) -> Vec<u8> {
        let mut rendered = self.render(t);
        if self.options.cycle_frames.is_none() {
            return self.encode_for_transport(rendered);
        }
        if let Some(SensorClass::Camera(enc)) = self.cfg.kind().map(|k| k.class) {
            let (w, _) = self.current_image_size();
            render::mark_variant(&mut rendered, w, enc.bytes_per_pixel(), slot as u64);
        }
        let payload = self.encode_for_transport(rendered);
        if let Some(dir) = &self.options.dump_dir {
            // Written whole, then named: a reader never sees half a frame.
            let file = dir.join(format!("sensor{}_cycle{slot}.bin", self.cfg.seq_id));
            let part = file.with_extension("part");
            if let Err(e) = std::fs::write(&part, &payload).and_then(|()| std::fs::rename(&part, &file)) {
                log(&format!(
                    "sensor {}: cannot write {}: {e}",
                    self.cfg.seq_id,
                    file.display()
                ));
            }
        }
        payload
    }

    /// Appends `frame_id time_stamp file` to `sensor<SeqID>.index` and writes
    /// the rendered frame (as the bridge should publish its pixels) to `file`.
    fn dump(&self, dir: &std::path::Path, frame_id: u64, t: f64) {
        let seq = self.cfg.seq_id;
        let file = format!("sensor{seq}_{frame_id}.bin");
        let rendered = self.render(t);
        if std::fs::write(dir.join(&file), rendered).is_err()
            || append_line(
                &dir.join(format!("sensor{seq}.index")),
                &format!("{frame_id} {t:.9} {file}"),
            )
            .is_err()
        {
            log(&format!("sensor {seq}: cannot write to {}", dir.display()));
        }
    }

    fn log_sent(&mut self, t: f64) {
        if let Some(log) = self.send_log.as_mut() {
            log.sent(self.cfg.seq_id, t);
        }
    }

    fn send(&mut self, frame_id: u64, t: f64, payload: &[u8]) -> io::Result<()> {
        if let Some(shm) = self.shm.as_mut() {
            if shm.write(t, payload) {
                self.log_sent(t);
                self.stats.frames.fetch_add(1, Ordering::Relaxed);
                self.stats.bytes.fetch_add(payload.len() as u64, Ordering::Relaxed);
            } else {
                self.stats.skipped_shm.fetch_add(1, Ordering::Relaxed);
            }
            return Ok(());
        }
        let kind = self.options.header.kind_for(frame_id);
        let datagrams = split_frame(kind, frame_id as i32, t, payload, MAX_PACKET_PAYLOAD);
        let mut n = 0;
        for (pkg, d) in datagrams.into_iter().enumerate() {
            if self.options.drop_packets.contains(&(frame_id, pkg as u32)) {
                continue;
            }
            for out in self.faults.apply(d) {
                send_all(&self.sock, self.dest, &out)?;
                n += 1;
            }
        }
        if let Some(held) = self.faults.flush() {
            send_all(&self.sock, self.dest, &held)?;
            n += 1;
        }
        self.log_sent(t);
        *self.run.shared.faults.lock().unwrap() += self.faults.take_counts();
        self.stats.frames.fetch_add(1, Ordering::Relaxed);
        self.stats.datagrams.fetch_add(n, Ordering::Relaxed);
        self.stats.bytes.fetch_add(payload.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}
