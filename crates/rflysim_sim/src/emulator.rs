//! The emulator proper: one thread per sensor stream, one for RflySim3D's
//! request port, one per simulated CopterSim, one for gimbal status, and one
//! printing rates. Everything shares a simulation clock that a "restart"
//! fault sends back to zero.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use frames::{euler_to_quat, quat_normalize};
use image_codec::encode;
use rflysim_proto::config::SensorConfig;
use rflysim_proto::gimbal::{slot, GimbalBitTable, GimbalControl};
use rflysim_proto::header::{split_frame, HeaderKind, MAX_PACKET_PAYLOAD};
use rflysim_proto::lidar;
use rflysim_proto::request::{
    decode_console_command, ImuRequest, RequestForm, VisionSensorReq, GIMBAL_ECHO_CHECKSUM, REQUEST_BASE_PORT,
};
use rflysim_proto::sensor::{ImageFormat, SensorClass, Transport};
use rflysim_proto::shm::region_len;
use rflysim_proto::telemetry::{CameraData, Heartbeat, ImuSample, TrueState};

use crate::faults::{FaultConfig, FaultCounts, FaultInjector};
use crate::render::{self, focal_px, Mount};
use crate::transport::{send_all, udp_listener, udp_sender, ShmRegion};
use crate::world::{Scene, Trajectory};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderChoice {
    Image24,
    Frame32,
    /// Alternates per frame, to exercise per-datagram header detection.
    Alternate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LidarLayout {
    Seed,
    SdkInt16,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateMode {
    /// Each sensor at its `DataCheckFreq`.
    RealTime,
    /// Every sensor at this rate.
    Forced(f64),
    /// As fast as the machine allows.
    FlatOut,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub sensors: Vec<SensorConfig>,
    /// Sends to this address instead of each sensor's `SendProtocol` receiver.
    pub target_ip: Option<Ipv4Addr>,
    pub window_id: u16,
    /// Listen for `VisionSensorReq` on 20010 + window id.
    pub listen_requests: bool,
    /// Stream the sensors of the config from the start (otherwise only once requested).
    pub stream_config: bool,
    pub header: HeaderChoice,
    pub lidar_layout: LidarLayout,
    pub rate: RateMode,
    /// Render each sensor once and resend that frame with new stamps (benchmarks).
    pub reuse_frames: bool,
    pub faults: FaultConfig,
    /// Simulator restart (frame ids and sim time back to zero) every this many seconds.
    pub restart_every: Option<f64>,
    pub duration: Option<f64>,
    /// Stop each sensor after this many frames.
    pub max_frames: Option<u64>,
    pub copters: Vec<u16>,
    /// Where CopterSim's true state and heartbeat go.
    pub coptersim_target: Ipv4Addr,
    pub heartbeat: bool,
    /// Gimbal status (echo and CameraData) destinations.
    pub gimbal_unicast: Option<SocketAddrV4>,
    pub gimbal_multicast: bool,
    pub camera_data_always: bool,
    pub gimbal_bits: GimbalBitTable,
    pub echo_checksum: u16,
    pub jpeg_quality: i32,
    pub stats_interval: Option<Duration>,
    pub trajectory: Trajectory,
    /// Simulation seconds at start (e.g. a run that has gone on for a while).
    pub start_time: f64,
    /// Write what each sensor renders (before JPEG / PNG encoding) and every
    /// IMU sample here, for tests to compare with what the bridge publishes.
    pub dump_dir: Option<std::path::PathBuf>,
    /// Drop exactly these datagrams: (frame id, packet id), every sensor.
    pub drop_packets: Vec<(u64, u32)>,
    /// Append `SeqID time_stamp wall_clock_seconds` per frame sent (when its
    /// last datagram left, or its shared-memory write ended): for latency benchmarks.
    pub send_log: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            sensors: Vec::new(),
            target_ip: None,
            window_id: 0,
            listen_requests: true,
            stream_config: true,
            header: HeaderChoice::Frame32,
            lidar_layout: LidarLayout::Seed,
            rate: RateMode::RealTime,
            reuse_frames: false,
            faults: FaultConfig::default(),
            restart_every: None,
            duration: None,
            max_frames: None,
            copters: vec![1],
            coptersim_target: Ipv4Addr::LOCALHOST,
            heartbeat: true,
            gimbal_unicast: Some(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 20006)),
            gimbal_multicast: false,
            camera_data_always: false,
            gimbal_bits: rflysim_proto::gimbal::SEED_000_BITS,
            echo_checksum: GIMBAL_ECHO_CHECKSUM,
            jpeg_quality: 90,
            stats_interval: Some(Duration::from_secs(1)),
            trajectory: Trajectory::default(),
            start_time: 0.0,
            dump_dir: None,
            drop_packets: Vec::new(),
            send_log: None,
        }
    }
}

/// Simulation time, and the restarts that send it back to zero.
#[derive(Debug)]
pub struct SimClock {
    started: Instant,
    base: Mutex<(Instant, f64)>,
    epoch: AtomicU64,
}

impl SimClock {
    fn new(start_time: f64) -> Self {
        let now = Instant::now();
        Self {
            started: now,
            base: Mutex::new((now, start_time)),
            epoch: AtomicU64::new(0),
        }
    }
    pub fn now(&self) -> f64 {
        let (at, t0) = *self.base.lock().unwrap();
        t0 + at.elapsed().as_secs_f64()
    }
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }
    fn restart(&self) {
        *self.base.lock().unwrap() = (Instant::now(), 0.0);
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }
    pub fn wall_elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// A gimbal's current state, as its control packets left it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GimbalState {
    /// Mount roll, pitch, yaw (rad) relative to the vehicle.
    pub euler: [f64; 3],
    pub default_euler: [f64; 3],
    pub fov_deg: f64,
    pub base_fov_deg: f64,
    pub zoom: f64,
    pub zoom_base: f64,
    pub focal_length: f64,
    /// pitch, yaw rates, rad/s.
    pub rates: [f64; 2],
    pub ranging: bool,
    pub light_source: u8,
    pub track_target: f64,
    pub ai_mode: f64,
    pub ai_pixel: [f64; 2],
    pub width: u16,
    pub height: u16,
    pub last_update: f64,
    pub requests: u64,
}

impl GimbalState {
    fn from_config(c: &SensorConfig) -> Self {
        let e = c.mount_euler_rad();
        Self {
            euler: e,
            default_euler: e,
            fov_deg: f64::from(c.camera_fov_deg),
            base_fov_deg: f64::from(c.camera_fov_deg),
            zoom: 1.0,
            zoom_base: 1.0,
            focal_length: 18.0 / (f64::from(c.camera_fov_deg).to_radians() / 2.0).tan(),
            rates: [0.0; 2],
            ranging: false,
            light_source: 0,
            track_target: 0.0,
            ai_mode: 0.0,
            ai_pixel: [0.0; 2],
            width: c.data_width,
            height: c.data_height,
            last_update: 0.0,
            requests: 0,
        }
    }

    /// Integrates the commanded rates up to sim time `t`.
    pub fn advance(&mut self, t: f64) {
        let dt = (t - self.last_update).clamp(0.0, 1.0);
        self.euler[1] = (self.euler[1] + self.rates[0] * dt).clamp(-std::f64::consts::PI, std::f64::consts::PI);
        self.euler[2] += self.rates[1] * dt;
        self.last_update = t;
    }

    /// Applies a 148-byte control request.
    pub fn apply(&mut self, r: &VisionSensorReq, bits: &GimbalBitTable, t: f64) {
        self.advance(t);
        let o = r.other_params.map(f64::from);
        let has = |c| bits.bit(c).is_some_and(|b| r.bitmask & b != 0);
        // Angles and FOV travel in the request's own fields.
        self.euler = if r.eular_or_quat > 0.5 {
            frames::quat_to_euler(quat_normalize(r.sensor_ang_quat.map(f64::from)))
        } else {
            r.sensor_ang_eular.map(f64::from)
        };
        if r.camera_fov > 0.0 {
            self.fov_deg = f64::from(r.camera_fov);
            self.base_fov_deg = self.fov_deg * self.zoom;
        }
        if r.data_width > 0 && r.data_height > 0 {
            self.width = r.data_width;
            self.height = r.data_height;
        }
        if has(GimbalControl::FocalLength) && o[slot::FOCAL_LENGTH] > 0.0 {
            self.focal_length = o[slot::FOCAL_LENGTH];
            self.fov_deg = 2.0 * (18.0 / self.focal_length).atan().to_degrees();
        }
        if has(GimbalControl::Centre) && o[slot::CENTRE] >= 0.5 {
            self.euler = self.default_euler;
            self.rates = [0.0; 2];
        }
        if has(GimbalControl::Rates) {
            self.rates = [o[slot::PITCH_RATE], o[slot::YAW_RATE]];
        }
        if has(GimbalControl::ZoomBase) && o[slot::ZOOM_BASE] > 0.0 {
            self.zoom_base = o[slot::ZOOM_BASE];
        }
        if has(GimbalControl::OpticalZoom) {
            // Steps above the zoom base: step 0 is ×1.
            self.zoom = o[slot::OPTICAL_ZOOM].max(0.0) + 1.0;
            self.fov_deg = self.base_fov_deg / self.zoom;
        }
        if has(GimbalControl::TrackTarget) {
            self.track_target = o[slot::TRACK_TARGET];
        }
        if has(GimbalControl::Ranging) {
            self.ranging = o[slot::RANGING] >= 0.5;
        }
        if has(GimbalControl::LightSource) {
            self.light_source = o[slot::LIGHT_SOURCE].clamp(0.0, 2.0) as u8;
        }
        if has(GimbalControl::AiBoxSelect) {
            self.ai_mode = o[slot::AI_MODE];
            self.ai_pixel = [o[slot::AI_PIXEL_X], o[slot::AI_PIXEL_Y]];
        }
        self.requests += 1;
    }
}

/// Per-stream counters, shared with the stats printer and the caller.
#[derive(Debug, Default)]
pub struct StreamStats {
    pub frames: AtomicU64,
    pub bytes: AtomicU64,
    pub datagrams: AtomicU64,
    pub skipped_shm: AtomicU64,
}

#[derive(Debug, Default)]
struct Shared {
    gimbals: Mutex<HashMap<u16, GimbalState>>,
    /// Sensors whose `CameraData` was asked for with `RflyReqObjData`.
    camera_data: Mutex<Vec<u16>>,
    sensors: Mutex<HashMap<u16, SensorConfig>>,
    stats: Mutex<Vec<(u16, Arc<StreamStats>)>>,
    faults: Mutex<FaultCounts>,
    imu_requests: AtomicU64,
}

/// A running emulator; dropping it stops every thread.
#[derive(Debug)]
pub struct Emulator {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    clock: Arc<SimClock>,
    shared: Arc<Shared>,
    spawner: Arc<Mutex<Spawner>>,
}

#[derive(Debug)]
struct Spawner {
    options: Options,
    running: HashMap<u16, Arc<AtomicBool>>,
    threads: Vec<JoinHandle<()>>,
}

fn log(msg: &str) {
    crate::log::line(msg);
}

impl Emulator {
    pub fn start(options: Options) -> io::Result<Emulator> {
        let stop = Arc::new(AtomicBool::new(false));
        let clock = Arc::new(SimClock::new(options.start_time));
        let shared = Arc::new(Shared::default());
        let mut threads = Vec::new();
        let spawner = Arc::new(Mutex::new(Spawner {
            options: options.clone(),
            running: HashMap::new(),
            threads: Vec::new(),
        }));
        if options.stream_config {
            for s in &options.sensors {
                start_stream(&spawner, s.clone(), &stop, &clock, &shared)?;
            }
        }
        if options.listen_requests {
            let port = REQUEST_BASE_PORT + options.window_id;
            let sock = udp_listener(port)?;
            sock.set_read_timeout(Some(Duration::from_millis(100)))?;
            log(&format!("listening for VisionSensorReq on UDP {port}"));
            let (st, cl, sh, sp) = (stop.clone(), clock.clone(), shared.clone(), spawner.clone());
            threads.push(std::thread::spawn(move || request_loop(sock, sp, st, cl, sh)));
        }
        for &id in &options.copters {
            let o = options.clone();
            let (st, cl, sh) = (stop.clone(), clock.clone(), shared.clone());
            let sock = udp_listener(rflysim_proto::request::imu_request_port(id))?;
            sock.set_nonblocking(true)?;
            threads.push(std::thread::spawn(move || coptersim_loop(id, sock, o, st, cl, sh)));
        }
        {
            let o = options.clone();
            let (st, cl, sh) = (stop.clone(), clock.clone(), shared.clone());
            threads.push(std::thread::spawn(move || gimbal_status_loop(o, st, cl, sh)));
        }
        if let Some(every) = options.restart_every {
            let (st, cl) = (stop.clone(), clock.clone());
            threads.push(std::thread::spawn(move || {
                let mut next = Instant::now() + Duration::from_secs_f64(every);
                while !st.load(Ordering::Relaxed) {
                    if Instant::now() >= next {
                        cl.restart();
                        log("restart: frame ids and simulation time back to zero");
                        next += Duration::from_secs_f64(every);
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }));
        }
        if let Some(interval) = options.stats_interval {
            let (st, sh) = (stop.clone(), shared.clone());
            threads.push(std::thread::spawn(move || stats_loop(interval, st, sh)));
        }
        Ok(Emulator {
            stop,
            threads,
            clock,
            shared,
            spawner,
        })
    }

    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    pub fn gimbal(&self, seq_id: u16) -> Option<GimbalState> {
        self.shared.gimbals.lock().unwrap().get(&seq_id).copied()
    }

    pub fn fault_counts(&self) -> FaultCounts {
        *self.shared.faults.lock().unwrap()
    }

    pub fn imu_requests(&self) -> u64 {
        self.shared.imu_requests.load(Ordering::Relaxed)
    }

    /// (SeqID, frames sent) of every stream.
    pub fn frames_sent(&self) -> Vec<(u16, u64)> {
        self.shared
            .stats
            .lock()
            .unwrap()
            .iter()
            .map(|(s, st)| (*s, st.frames.load(Ordering::Relaxed)))
            .collect()
    }

    /// Blocks until the configured duration has passed or every stream ended.
    pub fn wait(&self) {
        let deadline = self
            .spawner
            .lock()
            .unwrap()
            .options
            .duration
            .map(Duration::from_secs_f64);
        loop {
            if let Some(d) = deadline {
                if self.clock.wall_elapsed() >= d {
                    return;
                }
            }
            let all_done = {
                let sp = self.spawner.lock().unwrap();
                !sp.threads.is_empty() && sp.threads.iter().all(|t| t.is_finished())
            };
            if all_done || self.stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stop(mut self) {
        self.shutdown();
    }

    /// Asks every thread to end without waiting (for a shared handle).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let stream_threads: Vec<_> = self.spawner.lock().unwrap().threads.drain(..).collect();
        for t in stream_threads {
            let _ = t.join();
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts (or restarts with a new configuration) the stream of one sensor.
fn start_stream(
    spawner: &Arc<Mutex<Spawner>>,
    cfg: SensorConfig,
    stop: &Arc<AtomicBool>,
    clock: &Arc<SimClock>,
    shared: &Arc<Shared>,
) -> io::Result<()> {
    let mut sp = spawner.lock().unwrap();
    if let Some(old) = sp.running.remove(&cfg.seq_id) {
        old.store(true, Ordering::Relaxed);
    }
    if cfg.kind().is_some_and(|k| k.type_id == 9) {
        shared
            .gimbals
            .lock()
            .unwrap()
            .entry(cfg.seq_id)
            .or_insert_with(|| GimbalState::from_config(&cfg));
    }
    shared.sensors.lock().unwrap().insert(cfg.seq_id, cfg.clone());
    let mine = Arc::new(AtomicBool::new(false));
    sp.running.insert(cfg.seq_id, mine.clone());
    let stats = Arc::new(StreamStats::default());
    {
        let mut all = shared.stats.lock().unwrap();
        all.retain(|(s, _)| *s != cfg.seq_id);
        all.push((cfg.seq_id, stats.clone()));
    }
    let worker = StreamWorker::new(cfg, sp.options.clone(), clock.clone(), shared.clone(), stats)?;
    let st = stop.clone();
    sp.threads.push(std::thread::spawn(move || worker.run(&st, &mine)));
    Ok(())
}

/// Produces and sends one sensor's frames.
struct StreamWorker {
    cfg: SensorConfig,
    options: Options,
    clock: Arc<SimClock>,
    shared: Arc<Shared>,
    stats: Arc<StreamStats>,
    scene: Scene,
    mount: Mount,
    sock: UdpSocket,
    dest: SocketAddrV4,
    send_log: Option<io::BufWriter<std::fs::File>>,
    shm: Option<ShmRegion>,
    faults: FaultInjector,
    lidar_rays: Vec<[f64; 3]>,
}

impl StreamWorker {
    fn new(
        cfg: SensorConfig,
        options: Options,
        clock: Arc<SimClock>,
        shared: Arc<Shared>,
        stats: Arc<StreamStats>,
    ) -> io::Result<Self> {
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
        let send_log = match &options.send_log {
            Some(p) => Some(io::BufWriter::new(
                std::fs::OpenOptions::new().create(true).append(true).open(p)?,
            )),
            None => None,
        };
        Ok(Self {
            send_log,
            dest: SocketAddrV4::new(ip, cfg.udp_port()),
            mount: Mount::of(&cfg),
            faults: FaultInjector::new(options.faults, u64::from(cfg.seq_id)),
            sock: udp_sender(None)?,
            scene: Scene::default(),
            lidar_rays,
            shm,
            cfg,
            options,
            clock,
            shared,
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
                if kind.type_id == 9 {
                    if let Some(g) = self.shared.gimbals.lock().unwrap().get_mut(&self.cfg.seq_id) {
                        g.advance(t);
                        let [r, p, y] = g.euler;
                        mount.rotation = euler_to_quat(r, p, y);
                        fov = g.fov_deg;
                        size = (u32::from(g.width.max(1)), u32::from(g.height.max(1)));
                        type_id = match g.light_source {
                            1 => 41,
                            2 => 40,
                            _ => 9,
                        };
                    }
                }
                let view = render::CameraView {
                    type_id,
                    encoding: enc,
                    width: size.0,
                    height: size.1,
                    fov_deg: fov,
                    max_range: 1000.0,
                };
                render::render_camera(&self.scene, &v, &mount, &view)
            }
            SensorClass::Lidar => {
                let pts = render::scan_lidar(
                    &self.scene,
                    &v,
                    &self.mount,
                    kind.type_id,
                    &self.lidar_rays,
                    self.max_range(),
                );
                let axis = i32::from(kind.type_id == 21);
                // A region holds the SDK int16 layout, the one RflySim3D writes (spec §4).
                if self.shm.is_some() {
                    lidar::encode::sdk_int16(pos, euler, &pts, self.max_range() as f32)
                } else {
                    match self.options.lidar_layout {
                        LidarLayout::Seed => lidar::encode::seed_float(copter, axis, pos, euler, &pts),
                        LidarLayout::SdkInt16 => lidar::encode::sdk_int16(pos, euler, &pts, self.max_range() as f32),
                    }
                }
            }
            SensorClass::DepthCloud => {
                let pts = render::depth_cloud(
                    &self.scene,
                    &v,
                    &self.mount,
                    w,
                    h,
                    f64::from(self.cfg.camera_fov_deg),
                    self.max_range(),
                );
                match self.options.lidar_layout {
                    LidarLayout::Seed if self.shm.is_none() => {
                        let p4: Vec<[f32; 4]> = pts.iter().map(|p| [p[0], p[1], p[2], 0.0]).collect();
                        lidar::encode::seed_float(copter, 0, pos, euler, &p4)
                    }
                    _ => lidar::encode::sdk_int16_xyz(pos, euler, &pts, self.max_range() as f32),
                }
            }
            SensorClass::LaserDistance => render::laser(
                &self.scene,
                &v,
                &self.mount,
                copter,
                self.cfg.sensor_ang_eular,
                self.max_range(),
            )
            .encode(),
            SensorClass::Detections => {
                // Every block, with a fixed box: a stand-in for RflySim's detector.
                let dets: Vec<_> = self
                    .scene
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
        if self.cfg.type_id == 9 {
            if let Some(g) = self.shared.gimbals.lock().unwrap().get(&self.cfg.seq_id) {
                return (u32::from(g.width.max(1)), u32::from(g.height.max(1)));
            }
        }
        let (w, h) = self.cfg.size();
        (u32::from(w.max(1)), u32::from(h.max(1)))
    }

    fn header_kind(&self, frame: u64) -> HeaderKind {
        match self.options.header {
            HeaderChoice::Image24 => HeaderKind::Image24,
            HeaderChoice::Frame32 => HeaderKind::Frame32,
            HeaderChoice::Alternate if frame % 2 == 0 => HeaderKind::Frame32,
            HeaderChoice::Alternate => HeaderKind::Image24,
        }
    }

    fn period(&self) -> Option<Duration> {
        match self.options.rate {
            RateMode::RealTime => Some(Duration::from_secs_f64(1.0 / self.cfg.rate_hz().max(0.01))),
            RateMode::Forced(hz) => Some(Duration::from_secs_f64(1.0 / hz.max(0.01))),
            RateMode::FlatOut => None,
        }
    }

    fn run(mut self, stop: &AtomicBool, replaced: &AtomicBool) {
        let mut frame_id: u64 = 0;
        let mut epoch = self.clock.epoch();
        let mut next = Instant::now();
        let mut cached: Option<Vec<u8>> = None;
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
            if let Some(p) = self.period() {
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
            if self.clock.epoch() != epoch {
                epoch = self.clock.epoch();
                frame_id = 0;
            }
            let t = self.clock.now();
            let payload = match (&cached, self.options.reuse_frames) {
                (Some(p), true) => p.clone(),
                _ => {
                    let p = self.encode_for_transport(self.render(t));
                    if self.options.reuse_frames {
                        cached = Some(p.clone());
                    }
                    p
                }
            };
            if let Some(dir) = &self.options.dump_dir {
                self.dump(dir, frame_id, t);
            }
            if let Err(e) = self.send(frame_id, t, &payload) {
                log(&format!("sensor {}: send failed: {e}", self.cfg.seq_id));
                std::thread::sleep(Duration::from_millis(200));
            }
            frame_id += 1;
        }
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
        use std::io::Write;
        if let Some(log) = self.send_log.as_mut() {
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let _ = writeln!(log, "{} {t:.9} {wall:.9}", self.cfg.seq_id);
            let _ = log.flush();
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
        let kind = self.header_kind(frame_id);
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
        {
            let mut total = self.shared.faults.lock().unwrap();
            *total = add_counts(*total, self.faults.counts);
        }
        self.faults.counts = FaultCounts::default();
        self.stats.frames.fetch_add(1, Ordering::Relaxed);
        self.stats.datagrams.fetch_add(n, Ordering::Relaxed);
        self.stats.bytes.fetch_add(payload.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// Appends `line` and a newline to the file at `path` (the `--dump` files).
fn append_line(path: &std::path::Path, line: &str) -> io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    writeln!(f, "{line}")
}

fn add_counts(a: FaultCounts, b: FaultCounts) -> FaultCounts {
    FaultCounts {
        lost: a.lost + b.lost,
        reordered: a.reordered + b.reordered,
        duplicated: a.duplicated + b.duplicated,
        corrupted: a.corrupted + b.corrupted,
        truncated: a.truncated + b.truncated,
        garbage: a.garbage + b.garbage,
    }
}

fn request_loop(
    sock: UdpSocket,
    spawner: Arc<Mutex<Spawner>>,
    stop: Arc<AtomicBool>,
    clock: Arc<SimClock>,
    shared: Arc<Shared>,
) {
    let mut buf = vec![0u8; 65_536];
    let bits = spawner.lock().unwrap().options.gimbal_bits;
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let d = &buf[..n];
        if let Ok(text) = decode_console_command(d) {
            log(&format!("console command from {from}: {text}"));
            let words: Vec<&str> = text.split_whitespace().collect();
            match words.as_slice() {
                ["RflyReqObjData", _, seq, ..] => {
                    if let Ok(seq) = seq.parse::<u16>() {
                        shared.camera_data.lock().unwrap().push(seq);
                    }
                }
                ["RflyClearCapture", ..] => shared.camera_data.lock().unwrap().clear(),
                _ => {}
            }
            continue;
        }
        match VisionSensorReq::decode(d) {
            Ok((req, RequestForm::Gimbal148, _)) => {
                let t = clock.now();
                let mut gimbals = shared.gimbals.lock().unwrap();
                match gimbals.get_mut(&req.seq_id) {
                    Some(g) => g.apply(&req, &bits, t),
                    None => log(&format!(
                        "gimbal request for sensor {} which is not a running gimbal",
                        req.seq_id
                    )),
                }
            }
            Ok((req, form, _)) => {
                let cfg = config_from_request(&req, form);
                let known = shared.sensors.lock().unwrap().get(&cfg.seq_id) == Some(&cfg);
                if !known {
                    log(&format!(
                        "request from {from}: starting sensor {} (TypeID {})",
                        cfg.seq_id, cfg.type_id
                    ));
                    if let Err(e) = start_stream(&spawner, cfg, &stop, &clock, &shared) {
                        log(&format!("cannot start the requested sensor: {e}"));
                    }
                }
            }
            Err(e) => log(&format!("ignored a datagram from {from} on the request port: {e}")),
        }
    }
}

/// The sensor configuration a `VisionSensorReq` describes.
pub fn config_from_request(r: &VisionSensorReq, form: RequestForm) -> SensorConfig {
    SensorConfig {
        seq_id: r.seq_id,
        type_id: r.type_id,
        target_copter: r.target_copter,
        target_mount_type: r.target_mount_type,
        data_width: r.data_width,
        data_height: r.data_height,
        data_check_freq: r.data_check_freq,
        send_protocol: r.send_protocol,
        camera_fov_deg: r.camera_fov,
        sensor_pos_xyz: r.sensor_pos_xyz,
        eular_or_quat: r.eular_or_quat,
        sensor_ang_eular: r.sensor_ang_eular,
        sensor_ang_quat: r.sensor_ang_quat,
        other_params: r.other_params,
        legacy_other_params: form == RequestForm::Legacy92,
        angles_in_degrees: false,
    }
}

/// One CopterSim: answers IMU requests with a 200 Hz (or requested) IMU
/// stream, and sends true state and heartbeats.
fn coptersim_loop(
    id: u16,
    sock: UdpSocket,
    o: Options,
    stop: Arc<AtomicBool>,
    clock: Arc<SimClock>,
    shared: Arc<Shared>,
) {
    let out = match udp_sender(None) {
        Ok(s) => s,
        Err(e) => return log(&format!("CopterSim {id}: {e}")),
    };
    let state_dest = SocketAddrV4::new(o.coptersim_target, rflysim_proto::request::imu_request_port(id) + 1);
    let heartbeat_dest = SocketAddrV4::new(o.coptersim_target, 20005);
    let mut imu: Option<(SocketAddrV4, Duration)> = None;
    let mut seq = 0i32;
    let (mut next_imu, mut next_state, mut next_beat) = (Instant::now(), Instant::now(), Instant::now());
    let started_epoch_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let mut buf = [0u8; 512];
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = sock.recv_from(&mut buf) {
            match ImuRequest::decode(&buf[..n]) {
                Ok(req) => {
                    let ip = if req.receiver.is_unspecified() {
                        match from {
                            std::net::SocketAddr::V4(a) => *a.ip(),
                            _ => Ipv4Addr::LOCALHOST,
                        }
                    } else {
                        req.receiver
                    };
                    let hz = f64::from(req.freq_hz.clamp(1, 1000));
                    imu = Some((SocketAddrV4::new(ip, req.port), Duration::from_secs_f64(1.0 / hz)));
                    shared.imu_requests.fetch_add(1, Ordering::Relaxed);
                    log(&format!("CopterSim {id}: IMU at {hz} Hz to {ip}:{}", req.port));
                }
                Err(e) => log(&format!("CopterSim {id}: ignored a datagram: {e}")),
            }
        }
        let now = Instant::now();
        let t = clock.now();
        if let Some((dest, period)) = imu {
            while next_imu <= now {
                let s = o.trajectory.state(t);
                let sample = ImuSample {
                    seq,
                    time_stamp: t,
                    acc: s.specific_force.map(|v| v as f32),
                    gyro: s.body_rates.map(|v| v as f32),
                };
                seq = seq.wrapping_add(1);
                if let Some(dir) = &o.dump_dir {
                    let line = format!(
                        "{} {:.9} {} {} {} {} {} {}",
                        sample.seq,
                        t,
                        sample.acc[0],
                        sample.acc[1],
                        sample.acc[2],
                        sample.gyro[0],
                        sample.gyro[1],
                        sample.gyro[2]
                    );
                    let _ = append_line(&dir.join(format!("imu{id}.txt")), &line);
                }
                let _ = send_all(&out, dest, &sample.encode());
                next_imu += period;
                if next_imu + period * 10 < now {
                    next_imu = now;
                }
            }
        }
        if next_state <= now {
            let s = o.trajectory.state(t);
            let ts = TrueState {
                copter_id: i32::from(id),
                vehicle_type: 3,
                runned_time_ms: (t * 1000.0) as i32,
                vel_ned: s.velocity.map(|v| v as f32),
                ang_euler: s.euler.map(|v| v as f32),
                quaternion: s.attitude.map(|v| v as f32),
                motor_rpm: [0.0; 8],
                acc_body: s.specific_force.map(|v| v as f32),
                rate_body: s.body_rates.map(|v| v as f32),
                runned_time: t,
                pos_ned: s.position,
                gps: [40.0, 116.0, -s.position[2]],
            };
            let _ = send_all(&out, state_dest, &ts.encode());
            next_state = now + Duration::from_millis(10);
        }
        if o.heartbeat && next_beat <= now {
            let sim_us = (t * 1e6) as i64;
            let beat = Heartbeat {
                copter_id: i32::from(id),
                start_time_us: started_epoch_us + clock.wall_elapsed().as_micros() as i64 - sim_us,
                sim_time_us: sim_us,
                reserved: 0,
            };
            let _ = send_all(&out, heartbeat_dest, &beat.encode());
            if let Some(dir) = &o.dump_dir {
                let _ = append_line(&dir.join(format!("heartbeat{id}.txt")), &beat.start_time_us.to_string());
            }
            next_beat = now + Duration::from_secs(1);
        }
        // Sleep until the next thing is due (requests are polled at least every 5 ms).
        let mut due = next_state.min(next_beat);
        if imu.is_some() {
            due = due.min(next_imu);
        }
        let wait = due
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(5));
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }
}

/// Gimbal echoes (148 bytes) and `CameraData` (72 bytes) on port 20006 at 10 Hz.
fn gimbal_status_loop(o: Options, stop: Arc<AtomicBool>, clock: Arc<SimClock>, shared: Arc<Shared>) {
    let Ok(sock) = udp_sender(Some(1)) else {
        return;
    };
    let mut dests: Vec<SocketAddrV4> = o.gimbal_unicast.into_iter().collect();
    if o.gimbal_multicast {
        dests.push(SocketAddrV4::new(Ipv4Addr::new(224, 0, 0, 10), 20006));
    }
    let scene = Scene::default();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        let t = clock.now();
        let v = o.trajectory.state(t);
        let sensors = shared.sensors.lock().unwrap().clone();
        let wanted = shared.camera_data.lock().unwrap().clone();
        let mut packets = Vec::new();
        for (seq, g) in shared.gimbals.lock().unwrap().iter_mut() {
            g.advance(t);
            let Some(cfg) = sensors.get(seq) else {
                continue;
            };
            let [r, p, y] = g.euler;
            let q = euler_to_quat(r, p, y);
            let fx = focal_px(u32::from(g.width), g.fov_deg) as f32;
            let range = if g.ranging {
                let mount = Mount {
                    position: cfg.sensor_pos_xyz.map(f64::from),
                    rotation: q,
                };
                render::laser(&scene, &v, &mount, 1, [0.0; 3], 1000.0).distance
            } else {
                0.0
            };
            let mut other = [0f32; 16];
            other[..8].copy_from_slice(&[
                g.focal_length as f32,
                g.rates[0] as f32,
                g.rates[1] as f32,
                fx,
                fx,
                f32::from(g.width),
                f32::from(g.height),
                range,
            ]);
            let mut req = VisionSensorReq::from(cfg);
            req.camera_fov = g.fov_deg as f32;
            req.eular_or_quat = 0.0;
            req.sensor_ang_eular = [r as f32, p as f32, y as f32];
            req.sensor_ang_quat = q.map(|c| c as f32);
            req.data_width = g.width;
            req.data_height = g.height;
            req.other_params = other;
            packets.push(req.encode(RequestForm::Gimbal148, o.echo_checksum));
        }
        for (seq, cfg) in &sensors {
            if !cfg.kind().is_some_and(|k| k.is_camera()) || !(o.camera_data_always || wanted.contains(seq)) {
                continue;
            }
            let (origin, rot) = Mount::of(cfg).pose_in_world(&v);
            packets.push(
                CameraData {
                    seq_id: i32::from(*seq),
                    type_id: i32::from(cfg.type_id),
                    data_height: i32::from(cfg.data_height),
                    data_width: i32::from(cfg.data_width),
                    camera_fov: cfg.camera_fov_deg,
                    pos_ue: origin.map(|c| (c * 100.0) as f32),
                    ang_euler: frames::quat_to_euler(rot).map(|c| c as f32),
                    ang_quat: Some(rot.map(|c| c as f32)),
                    time_stamp: t,
                }
                .encode(),
            );
        }
        for p in &packets {
            for d in &dests {
                let _ = send_all(&sock, *d, p);
            }
        }
    }
}

fn stats_loop(interval: Duration, stop: Arc<AtomicBool>, shared: Arc<Shared>) {
    let mut last: HashMap<u16, (u64, u64)> = HashMap::new();
    let mut last_t = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if last_t.elapsed() < interval {
            continue;
        }
        let dt = last_t.elapsed().as_secs_f64();
        last_t = Instant::now();
        let mut line = String::new();
        for (seq, st) in shared.stats.lock().unwrap().iter() {
            let (f, b) = (st.frames.load(Ordering::Relaxed), st.bytes.load(Ordering::Relaxed));
            let (pf, pb) = last.insert(*seq, (f, b)).unwrap_or((0, 0));
            line += &format!(
                " sensor{seq}: {:.1} fps {:.2} MB/s;",
                (f - pf) as f64 / dt,
                (b - pb) as f64 / dt / 1e6
            );
        }
        if !line.is_empty() {
            log(line.trim_end_matches(';').trim());
        }
    }
}
