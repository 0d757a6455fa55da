//! One RflySim sensor → its ROS 2 topics: UDP datagrams (or a shared-memory
//! region) → reassembly → decode → publish, counting every drop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::PointCloud2;
use r2r::std_msgs::msg::Float32;
use r2r::{Node, Publisher, QosProfile};
use tokio::sync::watch;

use image_codec::{decode_png, CodecError};
use rflysim_proto::config::SensorConfig;
use rflysim_proto::error::DecodeError;
use rflysim_proto::image::raw_image;
use rflysim_proto::lidar::{
    decode_depth_cloud, decode_depth_cloud_region, decode_lidar, decode_lidar_region, PointCloud,
};
use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use rflysim_proto::sensor::{Encoding, ImageFormat, SensorClass, SensorKind, Transport};
use rflysim_proto::shm::{payload_capacity, RawRegion, ShmReader, HEADER_LEN};
use rflysim_proto::telemetry::LaserDistance;
use ros_common::camera::{CameraError, CameraPublisher, CameraTopics};

use crate::msgs;
use crate::names;
use ros_common::msgs::Covariances;
use ros_common::net::{FilteredUdp, SenderFilter};
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::BadSimTime;
use ros_common::time::TimeBase;

/// Settings shared by every sensor of a process.
#[derive(Debug, Clone)]
pub struct SensorSettings {
    pub qos: QosProfile,
    pub rcvbuf: usize,
    pub max_frame_bytes: usize,
    pub covariances: Covariances,
    /// Always decode JPEG, even while nobody subscribes to the raw topic.
    pub always_decode: bool,
    /// Shared-memory poll period.
    pub shm_poll: Duration,
    /// Publish odom → base_link on `/tf` from the pose that comes with LiDAR frames.
    pub tf_from_lidar: bool,
    /// Who may send the sensor's datagrams.
    pub senders: SenderFilter,
}

impl Default for SensorSettings {
    fn default() -> Self {
        Self {
            qos: ros_common::qos::sensor_publisher(ros_common::qos::DEFAULT_SENSOR_DEPTH),
            rcvbuf: 32 << 20,
            max_frame_bytes: 64 << 20,
            covariances: Covariances::default(),
            always_decode: false,
            shm_poll: Duration::from_millis(1),
            tf_from_lidar: false,
            senders: SenderFilter::new(std::net::Ipv4Addr::LOCALHOST, &[]).expect("no extra senders"),
        }
    }
}

enum Outputs {
    Camera {
        encoding: Encoding,
        camera: CameraPublisher,
    },
    Cloud {
        depth: bool,
        cloud: Publisher<PointCloud2>,
        odom_local: Publisher<Odometry>,
        odom_global: Publisher<Odometry>,
        tf: Option<Publisher<r2r::tf2_msgs::msg::TFMessage>>,
    },
    Distance(Publisher<Float32>),
}

/// A mapping of another process's region, moved between tokio's threads.
struct MappedRegion(shared_memory::Shmem);

// SAFETY: a Unix shared-memory mapping is a plain address range; nothing in
// it is tied to the thread that mapped it.
unsafe impl Send for MappedRegion {}

/// Which file a mapping is of, and how long that file was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RegionIdentity {
    inode: u64,
    len: u64,
}

impl RegionIdentity {
    fn of(path: &str) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Self {
            inode: m.ino(),
            len: m.len(),
        })
    }
}

/// Maps `/dev/shm/<name>` if it is there and at least a header long, with
/// the identity of the file that was mapped (looked at before and after: a
/// region replaced during the open is opened again on the next try).
fn open_region(name: &str, path: &str) -> Option<(MappedRegion, RegionIdentity)> {
    let before = RegionIdentity::of(path)?;
    let shmem = shared_memory::ShmemConf::new().os_id(name).open().ok()?;
    let after = RegionIdentity::of(path)?;
    let fits = shmem.len() >= HEADER_LEN && shmem.len() as u64 <= after.len;
    (before == after && fits).then_some((MappedRegion(shmem), after))
}

/// Why a frame was not published.
#[derive(Debug)]
enum FrameError {
    Decode(DecodeError),
    Camera(CameraError),
    Publish(r2r::Error),
}

impl From<DecodeError> for FrameError {
    fn from(e: DecodeError) -> Self {
        FrameError::Decode(e)
    }
}

impl From<CodecError> for FrameError {
    fn from(e: CodecError) -> Self {
        FrameError::Decode(e.into())
    }
}

impl From<CameraError> for FrameError {
    fn from(e: CameraError) -> Self {
        FrameError::Camera(e)
    }
}

impl From<r2r::Error> for FrameError {
    fn from(e: r2r::Error) -> Self {
        FrameError::Publish(e)
    }
}

impl FrameError {
    fn reason(&self) -> &'static str {
        match self {
            FrameError::Decode(e) => e.reason(),
            FrameError::Camera(e) => e.reason(),
            FrameError::Publish(_) => "publish_failed",
        }
    }
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Decode(e) => e.fmt(f),
            FrameError::Camera(e) => e.fmt(f),
            FrameError::Publish(e) => write!(f, "publish: {e}"),
        }
    }
}

/// Turns one sensor's frames into messages and publishes them.
pub struct SensorPipeline {
    pub cfg: SensorConfig,
    kind: &'static SensorKind,
    transport: Transport,
    outputs: Outputs,
    time: Arc<TimeBase>,
    pub stats: Arc<StreamStats>,
    settings: SensorSettings,
    logger: String,
    warn_limit: RateLimitedLog,
    clock: Option<Arc<ros_common::time::ClockPublisher>>,
}

impl std::fmt::Debug for SensorPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SensorPipeline")
            .field("seq_id", &self.cfg.seq_id)
            .field("type_id", &self.cfg.type_id)
            .finish()
    }
}

impl SensorPipeline {
    /// Creates the publishers of `cfg` on `node`; `None` for a sensor kind
    /// with no ROS topic (detections), with the reason.
    pub fn new(
        node: &mut Node,
        cfg: SensorConfig,
        time: Arc<TimeBase>,
        settings: SensorSettings,
    ) -> Result<Self, String> {
        let kind = cfg
            .kind()
            .ok_or_else(|| format!("sensor {}: unknown TypeID {}", cfg.seq_id, cfg.type_id))?;
        let transport = cfg
            .transport()
            .ok_or_else(|| format!("sensor {}: unknown transport", cfg.seq_id))?;
        let topic = names::sensor_topic(cfg.seq_id, kind.topic_suffix);
        let qos = settings.qos.clone();
        let err = |e: r2r::Error| format!("sensor {}: {e}", cfg.seq_id);
        let outputs = match kind.class {
            SensorClass::Camera(encoding) => {
                let jpeg_stream = ImageFormat::for_transport(transport) == ImageFormat::Jpeg;
                let topics = CameraTopics {
                    image: topic.clone(),
                    info: format!("{topic}/camera_info"),
                    compressed: jpeg_stream.then(|| format!("{topic}/compressed")),
                };
                let max_pixels = cfg
                    .max_image_pixels()
                    .unwrap_or(usize::MAX)
                    .min(settings.max_frame_bytes / encoding.bytes_per_pixel());
                Outputs::Camera {
                    encoding,
                    camera: CameraPublisher::new(node, &topics, &qos, max_pixels, settings.always_decode)
                        .map_err(|e| format!("sensor {}: {e}", cfg.seq_id))?,
                }
            }
            SensorClass::Lidar | SensorClass::DepthCloud => Outputs::Cloud {
                depth: kind.class == SensorClass::DepthCloud,
                cloud: node.create_publisher(&topic, qos.clone()).map_err(err)?,
                odom_local: node
                    .create_publisher(&names::odom_topic(cfg.target_copter, false), qos.clone())
                    .map_err(err)?,
                odom_global: node
                    .create_publisher(&names::odom_topic(cfg.target_copter, true), qos.clone())
                    .map_err(err)?,
                tf: if settings.tf_from_lidar {
                    Some(node.create_publisher("/tf", ros_common::qos::tf()).map_err(err)?)
                } else {
                    None
                },
            },
            SensorClass::LaserDistance => Outputs::Distance(node.create_publisher(&topic, qos).map_err(err)?),
            SensorClass::Detections => {
                return Err(format!(
                    "sensor {}: detection boxes (TypeID {}) have no standard ROS 2 message here; not bridged",
                    cfg.seq_id, cfg.type_id
                ))
            }
        };
        Ok(Self {
            kind,
            transport,
            outputs,
            time,
            stats: Arc::new(StreamStats::default()),
            settings,
            logger: node.logger().to_string(),
            warn_limit: RateLimitedLog::new(Duration::from_secs(5)),
            clock: None,
            cfg,
        })
    }

    /// With `use_sim_time`: each frame's sim time also advances `/clock`.
    pub fn with_clock(mut self, clock: Option<Arc<ros_common::time::ClockPublisher>>) -> Self {
        self.clock = clock;
        self
    }

    pub fn topic(&self) -> String {
        names::sensor_topic(self.cfg.seq_id, self.kind.topic_suffix)
    }

    /// The largest frame accepted: the sensor's own bound (from its
    /// configured size), never more than the `max_frame_bytes` parameter.
    fn max_frame_bytes(&self) -> usize {
        self.cfg
            .max_frame_len()
            .map_or(self.settings.max_frame_bytes, |b| b.min(self.settings.max_frame_bytes))
    }

    fn warn_drop(&mut self, reason: &'static str, detail: &str) {
        self.stats.drop_frame(reason);
        if let Some(held_back) = self.warn_limit.allow() {
            let more = if held_back > 0 {
                format!(" ({held_back} more since the last report)")
            } else {
                String::new()
            };
            r2r::log_warn!(
                &self.logger,
                "sensor {}: frame dropped, {reason}: {detail}{more}",
                self.cfg.seq_id
            );
        }
    }

    /// `handle_frame`, for a frame whose decode takes milliseconds (a JPEG
    /// or PNG camera) on a thread of its own: the runtime's two workers stay
    /// free for the IMU and the other streams. Cheap frames stay where they are.
    fn handle_frame_off_worker(&mut self, sim_time: f64, payload: Vec<u8>) {
        let heavy = self.kind.is_camera() && ImageFormat::for_transport(self.transport) != ImageFormat::Raw;
        if heavy {
            tokio::task::block_in_place(|| self.handle_frame(sim_time, payload));
        } else {
            self.handle_frame(sim_time, payload);
        }
    }

    /// Decodes and publishes one frame sampled at sim time `sim_time`.
    pub fn handle_frame(&mut self, sim_time: f64, payload: Vec<u8>) {
        let len = payload.len();
        let stamp = match self.time.stamp(sim_time) {
            Ok(s) => s,
            Err(e) => return self.warn_drop(BadSimTime::REASON, &e.to_string()),
        };
        let stamp_for_latency = stamp.clone();
        match self.publish(stamp, payload) {
            Ok(()) => {
                self.stats.published(len);
                if !self.time.uses_sim_time() {
                    let stamp = ros_common::time::from_ros_time(&stamp_for_latency);
                    self.stats.set_latency_ms((ros_common::time::wall_now() - stamp) * 1e3);
                }
                if let Some(clock) = &self.clock {
                    clock.advance(sim_time);
                }
            }
            Err(e) => self.warn_drop(e.reason(), &e.to_string()),
        }
    }

    fn publish(&mut self, stamp: r2r::builtin_interfaces::msg::Time, payload: Vec<u8>) -> Result<(), FrameError> {
        let (w, h) = self.cfg.size();
        match &mut self.outputs {
            Outputs::Camera { encoding, camera } => {
                let header = ros_common::msgs::header(stamp, &names::optical_frame(&self.cfg));
                let fov = f64::from(self.cfg.camera_fov_deg);
                let img = match ImageFormat::for_transport(self.transport) {
                    ImageFormat::Raw => raw_image(Bytes::from(payload), u32::from(w), u32::from(h), *encoding)?,
                    ImageFormat::Png => {
                        let max_pixels = self.cfg.max_image_pixels().unwrap_or(usize::MAX);
                        let max_bytes = max_pixels.saturating_mul(encoding.bytes_per_pixel());
                        decode_png(&payload, *encoding, max_bytes.min(self.settings.max_frame_bytes))?
                    }
                    ImageFormat::Jpeg => return Ok(camera.publish_jpeg(&payload, *encoding, fov, header)?),
                };
                camera.publish_decoded(img, fov, header)?;
                Ok(())
            }
            Outputs::Cloud {
                depth,
                cloud,
                odom_local,
                odom_global,
                tf,
            } => {
                let range = self.cfg.lidar_max_range();
                // A region is sized for the most points; a datagram stream's frame is exact.
                let in_region = self.transport == Transport::SharedMemory;
                let decoded: PointCloud = match (*depth, in_region) {
                    (true, true) => decode_depth_cloud_region(&payload, range)?,
                    (false, true) => decode_lidar_region(&payload, range)?,
                    (true, false) => decode_depth_cloud(Bytes::from(payload), range)?,
                    (false, false) => decode_lidar(Bytes::from(payload), range)?,
                };
                let world = self.cfg.type_id == 21;
                let frame = if world {
                    names::WORLD_FRAME.to_string()
                } else {
                    names::sensor_frame(&self.cfg)
                };
                let mut data = ros_common::msgs::into_vec(decoded.data);
                if world {
                    msgs::ned_points_to_enu(&mut data);
                }
                let copter = decoded
                    .pose
                    .copter_id
                    .and_then(|c| u16::try_from(c).ok())
                    .unwrap_or(self.cfg.target_copter);
                let global = decoded.pose.axis_type.map_or(world, |a| a == 1);
                let odom_frame = if global {
                    names::WORLD_FRAME.to_string()
                } else {
                    names::odom_frame(copter)
                };
                // The cloud and its pose share one stamp.
                let odom = msgs::odometry_from_lidar_pose(
                    &decoded.pose,
                    ros_common::msgs::header(stamp.clone(), &odom_frame),
                    &names::base_frame(copter),
                    &self.settings.covariances,
                );
                cloud.publish(&msgs::point_cloud(data, ros_common::msgs::header(stamp, &frame)))?;
                if global { odom_global } else { odom_local }.publish(&odom)?;
                if let (Some(tf), false) = (tf, global) {
                    tf.publish(&ros_common::tf::odometry_tf(&odom))?;
                }
                Ok(())
            }
            Outputs::Distance(p) => {
                let l = LaserDistance::decode(&payload)?;
                p.publish(&Float32 { data: l.distance })?;
                Ok(())
            }
        }
    }

    /// Receives UDP datagrams until `shutdown` turns true.
    pub async fn run_udp(mut self, mut shutdown: watch::Receiver<bool>) {
        let port = self.cfg.udp_port();
        let (std_sock, granted) =
            match ros_common::net::udp_receiver(std::net::Ipv4Addr::UNSPECIFIED, port, self.settings.rcvbuf, None) {
                Ok(s) => s,
                Err(e) => {
                    r2r::log_error!(&self.logger, "sensor {}: cannot bind UDP {port}: {e}", self.cfg.seq_id);
                    return;
                }
            };
        r2r::log_info!(
            &self.logger,
            "sensor {} ({}, TypeID {}) on UDP {port} → {} (receive buffer {} KiB granted)",
            self.cfg.seq_id,
            self.kind.description,
            self.cfg.type_id,
            self.topic(),
            granted / 1024
        );
        let mut sock = match FilteredUdp::new(
            std_sock,
            self.settings.senders.clone(),
            self.stats.clone(),
            &self.logger,
        ) {
            Ok(s) => s,
            Err(e) => {
                r2r::log_error!(&self.logger, "sensor {}: {e}", self.cfg.seq_id);
                return;
            }
        };
        let mut reassembler = Reassembler::new(ReassemblerConfig::for_frames_of(self.max_frame_bytes()));
        let start = Instant::now();
        let mut buf = vec![0u8; 65_536];
        let mut last_counts = *reassembler.stats();
        // Stale partial frames are evicted on every datagram; this tick covers a silent stream.
        let mut evict = tokio::time::interval(Duration::from_millis(100));
        evict.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                n = sock.recv(&mut buf) => {
                    self.stats.datagrams.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if let Some(frame) = reassembler.push(&buf[..n], start.elapsed()) {
                        self.handle_frame_off_worker(frame.time_stamp, frame.payload);
                    }
                }
                _ = evict.tick() => reassembler.evict_stale(start.elapsed()),
                _ = shutdown.changed() => break,
            }
            let counts = *reassembler.stats();
            if counts.input_dropped() != last_counts.input_dropped() {
                if let Some(held_back) = self.warn_limit.allow() {
                    r2r::log_warn!(
                        &self.logger,
                        "sensor {}: dropping input: {} lost, {} missing, {} garbage, {} bad length, {} inconsistent, {} oversize so far ({held_back} similar reports held back)",
                        self.cfg.seq_id,
                        counts.frames_lost(),
                        counts.frames_missing,
                        counts.garbage,
                        counts.bad_length,
                        counts.inconsistent,
                        counts.oversize
                    );
                }
            }
            if counts.restarts > last_counts.restarts {
                r2r::log_info!(
                    &self.logger,
                    "sensor {}: the simulator restarted (frame ids / time went back); following the new run",
                    self.cfg.seq_id
                );
            }
            last_counts = counts;
            self.stats.set_transport_drops(&counts.drop_counts());
        }
    }

    /// Polls the sensor's shared-memory region until `shutdown` turns true.
    pub async fn run_shm(mut self, mut shutdown: watch::Receiver<bool>) {
        let name = self.cfg.shm_name();
        let path = format!("/dev/shm/{name}");
        let (w, h) = self.cfg.size();
        let area_len = payload_capacity(self.kind, w, h);
        let start = Instant::now();
        let mut reader = ShmReader::new();
        let mut logged_wait = false;
        // One pass per mapping: the writer may replace the region (a
        // simulator restart) or shrink it; both send us back here.
        'open: loop {
            let Some((shmem, identity)) = open_region(&name, &path) else {
                if !logged_wait {
                    r2r::log_info!(
                        &self.logger,
                        "sensor {}: waiting for shared memory {path}",
                        self.cfg.seq_id
                    );
                    logged_wait = true;
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => continue 'open,
                    _ = shutdown.changed() => return,
                }
            };
            logged_wait = false;
            r2r::log_info!(
                &self.logger,
                "sensor {} ({}) on shared memory {path} ({} bytes) → {}",
                self.cfg.seq_id,
                self.kind.description,
                shmem.0.len(),
                self.topic()
            );
            // SAFETY: `shmem` keeps the mapping alive for as long as `region` is used,
            // and the region is checked against the file before every access.
            let mut region = unsafe { RawRegion::new(shmem.0.as_ptr(), shmem.0.len()) };
            let mut buf = Vec::new();
            let mut tick = tokio::time::interval(self.settings.shm_poll);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = shutdown.changed() => return,
                }
                // Touching a page past the end of a shrunk file is SIGBUS: the
                // file is looked at before the mapping is.
                match RegionIdentity::of(&path) {
                    Some(now) if now.inode == identity.inode && now.len >= identity.len => {}
                    _ => {
                        r2r::log_warn!(
                            &self.logger,
                            "sensor {}: {path} was replaced, removed or shrunk; opening it again",
                            self.cfg.seq_id
                        );
                        self.stats.drop_frame("region_replaced");
                        continue 'open;
                    }
                }
                let (torn, reclaimed) = (reader.stats().torn, reader.stats().reclaimed);
                if let Some(t) = reader.poll(&mut region, area_len, &mut buf, start.elapsed()) {
                    self.handle_frame_off_worker(t, std::mem::take(&mut buf));
                }
                if reader.stats().torn > torn {
                    self.warn_drop("torn", "the frame changed while it was copied");
                }
                if reader.stats().reclaimed > reclaimed {
                    self.warn_drop("stale_reader", "the slot was held by a reader that died; taken back");
                }
            }
        }
    }

    /// Runs the pipeline on the transport its config names.
    pub async fn run(self, shutdown: watch::Receiver<bool>) {
        if self.transport == Transport::SharedMemory {
            self.run_shm(shutdown).await
        } else {
            self.run_udp(shutdown).await
        }
    }
}
