//! The telemetry stream: JSON messages in (UDP datagrams or
//! `std_msgs/String`), every part that arrived published on its topic with
//! one stamp per frame, every part that did not counted and logged at a
//! limited rate. A bad message never stops the next one.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use gps_denied_proto::wire::{DEFAULT_FOV_DEG, MAX_DATAGRAM_BYTES};
use gps_denied_proto::{parse_telemetry, DroneTelemetry, InputCounters, PartFaults, RoverTelemetry, Telemetry};
use image_codec::Encoding;
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{PointStamped, TwistStamped};
use r2r::nav_msgs::msg::Odometry;
use r2r::rflysim_bridge::msg::LandingPad;
use r2r::sensor_msgs::msg::{Imu, Range};
use r2r::std_msgs::msg::Bool;
use r2r::{Node, Publisher, QosProfile};
use ros_common::camera::{CameraPublisher, CameraTopics};
use ros_common::lifecycle::StopSignal;
use ros_common::msgs::header;
use ros_common::net::{BlockingUdp, Received};
use ros_common::serialized::{CdrMessage, SerializedPublisher};
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::{to_ros_time, wall_now, Accepted, ClockPublisher, StampRefusal, StreamClock, TimeBase};

use crate::convert;
use crate::settings::{Settings, Source};

/// The largest image the camera decodes (pixels): far above the protocol's
/// 320 × 240, far below what a lying JPEG header could ask for.
const MAX_IMAGE_PIXELS: usize = 4096 * 4096;

/// Where telemetry comes from.
pub enum TelemetryInput {
    /// Read by a thread of its own, blocked in `recv` ([`TelemetryBridge::receive_datagrams`]).
    Udp(BlockingUdp),
    /// Read on the runtime ([`TelemetryBridge::run`]).
    Ros(BoxStream<'static, r2r::std_msgs::msg::String>),
}

impl std::fmt::Debug for TelemetryInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TelemetryInput::Udp(_) => "TelemetryInput::Udp",
            TelemetryInput::Ros(_) => "TelemetryInput::Ros",
        })
    }
}

/// The topics one telemetry frame is published on (relative names); those
/// of standard types serialize straight into a buffer of their own
/// (`ros_common::serialized`: a typed publish costs more).
pub struct Outputs {
    imu: SerializedPublisher<Imu>,
    altitude: Publisher<Range>,
    velocity: SerializedPublisher<TwistStamped>,
    landing_pad: Publisher<LandingPad>,
    pad_point: SerializedPublisher<PointStamped>,
    landed: SerializedPublisher<Bool>,
    rover: SerializedPublisher<Odometry>,
    camera: CameraPublisher,
}

impl std::fmt::Debug for Outputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outputs").field("camera", &self.camera).finish()
    }
}

impl Outputs {
    pub fn new(node: &mut Node, settings: &Settings, qos: &QosProfile) -> Result<Self, String> {
        let e = |topic: &'static str| move |err: r2r::Error| format!("{topic}: {err}");
        fn serialized<T: CdrMessage>(
            node: &mut Node,
            topic: &str,
            qos: &QosProfile,
        ) -> Result<SerializedPublisher<T>, String> {
            SerializedPublisher::new(node, topic, qos.clone()).map_err(|err| format!("{topic}: {err}"))
        }
        let topics = CameraTopics::beside("drone/camera/image_raw", true);
        Ok(Self {
            imu: serialized(node, "drone/imu", qos)?,
            altitude: node
                .create_publisher("drone/altitude", qos.clone())
                .map_err(e("drone/altitude"))?,
            velocity: serialized(node, "drone/velocity", qos)?,
            landing_pad: node
                .create_publisher("drone/landing_pad", qos.clone())
                .map_err(e("drone/landing_pad"))?,
            pad_point: serialized(node, "drone/landing_pad/point", qos)?,
            landed: serialized(node, "drone/landed", qos)?,
            rover: serialized(node, "rover/odom", qos)?,
            camera: CameraPublisher::new(node, &topics, qos, MAX_IMAGE_PIXELS, settings.decode_images_always)?,
        })
    }
}

/// Counters the diagnostics read.
#[derive(Debug, Default)]
pub struct TelemetryStats {
    /// Drone frames; bad input of every kind as its drops.
    pub telemetry: Arc<StreamStats>,
    pub camera: Arc<StreamStats>,
    pub rover: Arc<StreamStats>,
}

pub struct TelemetryBridge {
    out: Outputs,
    settings: Settings,
    time: Arc<TimeBase>,
    drone_clock: StreamClock,
    rover_clock: StreamClock,
    clock: Option<Arc<ClockPublisher>>,
    counters: InputCounters,
    reported_bad: u64,
    pub stats: TelemetryStats,
    logger: String,
    bad_input_log: RateLimitedLog,
    camera_log: RateLimitedLog,
    last_rover_heading: Option<f64>,
    /// On a runtime worker, a decode is moved off it (`block_in_place`).
    on_runtime: bool,
}

impl std::fmt::Debug for TelemetryBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryBridge")
            .field("counters", &self.counters)
            .finish()
    }
}

impl TelemetryBridge {
    pub fn new(
        out: Outputs,
        settings: Settings,
        time: Arc<TimeBase>,
        clock: Option<Arc<ClockPublisher>>,
        logger: String,
    ) -> Self {
        Self {
            out,
            settings,
            time,
            drone_clock: StreamClock::new("drone telemetry", logger.clone()),
            rover_clock: StreamClock::new("rover telemetry", logger.clone()),
            clock,
            counters: InputCounters::default(),
            reported_bad: 0,
            stats: TelemetryStats::default(),
            logger,
            bad_input_log: RateLimitedLog::new(Duration::from_secs(5)),
            camera_log: RateLimitedLog::new(Duration::from_secs(5)),
            last_rover_heading: None,
            on_runtime: true,
        }
    }

    /// Telemetry from a ROS topic, on the runtime, until the stop.
    pub async fn run(mut self, mut stream: BoxStream<'static, r2r::std_msgs::msg::String>, mut stop: StopSignal) {
        loop {
            tokio::select! {
                _ = stop.changed() => return,
                m = stream.next() => match m {
                    Some(m) => self.message(m.data.as_bytes()),
                    None => return,
                },
            }
        }
    }

    /// Telemetry datagrams, on the calling thread, until the socket is
    /// closed (at the stop): each is published where it was received, with
    /// no runtime worker woken in between (through the runtime, with the
    /// camera's publish moved off its worker, a frame cost this bridge
    /// about a third more CPU than DDS alone; BENCHMARKS.md). Receive
    /// errors (an ICMP "port unreachable" of an earlier command, and the
    /// like) are read past inside the socket.
    pub fn receive_datagrams(mut self, mut socket: BlockingUdp) {
        self.on_runtime = false;
        let mut buf = Vec::with_capacity(MAX_DATAGRAM_BYTES);
        loop {
            buf.clear();
            match socket.recv_appended_from(&mut buf) {
                (Received::Datagram(_), Some(from)) => self.datagram(&buf, from),
                (Received::Datagram(_) | Received::TimedOut, _) => {}
                (Received::Closed, _) => return,
            }
        }
    }

    fn datagram(&mut self, data: &[u8], from: SocketAddr) {
        let accepted = match &self.settings.source {
            Source::Udp { senders, .. } => senders.allows(&from),
            Source::Ros { .. } => true,
        };
        if accepted {
            return self.message(data);
        }
        self.counters.foreign_sender += 1;
        self.report_counts();
        let why = "telemetry is accepted from the simulator's host and loopback only (allowed_senders widens it)";
        self.bad_input_log
            .warn_dropped(&self.logger, "telemetry", format_args!("datagram from {from}"), why);
    }

    fn message(&mut self, data: &[u8]) {
        let result = parse_telemetry(data, &self.settings.limits);
        let restarted = self.counters.record(&result);
        self.report_counts();
        self.stats
            .telemetry
            .datagrams
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let parsed = match result {
            Ok(p) => p,
            Err(err) => {
                self.bad_input_log
                    .warn_dropped(&self.logger, "telemetry", "message", &err);
                return;
            }
        };
        if restarted {
            r2r::log_info!(&self.logger, "simulator restarted (its time went back)");
        }
        if !parsed.faults.is_empty() {
            self.log_faults(&parsed.faults);
        }
        match parsed.telemetry {
            Telemetry::Drone(t) => self.drone(t, data.len()),
            Telemetry::Rover(r) => self.rover(&r, data.len()),
        }
    }

    /// Mirrors the counters into the diagnostics when they changed.
    fn report_counts(&mut self) {
        let bad = self.counters.bad_total();
        if bad != self.reported_bad {
            self.reported_bad = bad;
            let counts: Vec<(&'static str, u64)> = self.counters.bad_input().collect();
            self.stats.telemetry.set_transport_drops(&counts);
        }
    }

    fn log_faults(&mut self, faults: &PartFaults) {
        let list: Vec<&str> = faults.iter().map(|(p, f)| p.key(f)).collect();
        self.bad_input_log
            .warn_dropped(&self.logger, "telemetry", "parts", list.join(", "));
    }

    /// One stamp for every topic of a frame, through the shared time base
    /// (a frame without a timestamp: on arrival), and `/clock` moved by it;
    /// `None`: the frame is refused (counted and logged).
    fn stamp(&mut self, sim: Option<f64>, rover: bool) -> Option<Time> {
        let (clock, stats) = if rover {
            (&mut self.rover_clock, &self.stats.rover)
        } else {
            (&mut self.drone_clock, &self.stats.telemetry)
        };
        let taken: Result<Accepted, StampRefusal> = match sim {
            Some(s) => clock.stamp(&self.time, s),
            None => clock.arrival_at(&self.time, wall_now()),
        };
        match taken {
            Ok(a) => {
                if let Some(c) = &self.clock {
                    stats.count_publish(c.advance(&a), "clock_publish_failed");
                }
                Some(to_ros_time(a.seconds))
            }
            Err(e) => {
                stats.drop_frame(e.reason());
                let stream = if rover { "rover telemetry" } else { "drone telemetry" };
                self.bad_input_log.warn_dropped(&self.logger, stream, "frame", e);
                None
            }
        }
    }

    fn drone(&mut self, mut t: DroneTelemetry, bytes: usize) {
        let Some(stamp) = self.stamp(t.timestamp, false) else {
            return;
        };
        let ids = &self.settings.frames;
        let base = header(stamp.clone(), &ids.base);
        let out = &mut self.out;
        let stats = &self.stats.telemetry;
        let count = |outcome: r2r::Result<()>, reason| stats.count_publish(outcome, reason);
        if let Some(m) = convert::imu(&t, base.clone(), &self.settings.covariances) {
            count(out.imu.publish(&m), "imu_publish_failed");
        }
        if let Some(m) = convert::altitude(&t, header(stamp.clone(), &ids.altimeter), &self.settings.altimeter) {
            count(out.altitude.publish(&m), "altitude_publish_failed");
        }
        if let Some(m) = convert::velocity(&t, base.clone()) {
            count(out.velocity.publish(&m), "velocity_publish_failed");
        }
        count(
            out.landing_pad.publish(&convert::landing_pad(&t, base.clone())),
            "landing_pad_publish_failed",
        );
        if let Some(m) = convert::pad_point(&t, base) {
            count(out.pad_point.publish(&m), "pad_point_publish_failed");
        }
        if let Some(m) = convert::landed(&t) {
            count(out.landed.publish(&m), "landed_publish_failed");
        }
        if let Some(jpeg) = t.image.take() {
            let fov = self
                .settings
                .camera_fov_deg
                .or(t.camera.map(|c| c.fov_deg))
                .unwrap_or(DEFAULT_FOV_DEG);
            let len = jpeg.len();
            let camera_header = header(stamp, &self.settings.frames.camera);
            let camera = &mut self.out.camera;
            let publish = || camera.publish_jpeg(&jpeg, Encoding::Bgr8, fov, camera_header);
            // A decode takes milliseconds: off the runtime's two workers.
            let published = if self.on_runtime {
                tokio::task::block_in_place(publish)
            } else {
                publish()
            };
            match published {
                Ok(()) => self.stats.camera.published(len),
                Err(err) => {
                    self.stats.camera.drop_frame(err.reason());
                    self.camera_log
                        .warn_dropped(&self.logger, "drone camera", "frame", &err);
                }
            }
        }
        self.stats.telemetry.published(bytes);
    }

    fn rover(&mut self, r: &RoverTelemetry, bytes: usize) {
        let Some(stamp) = self.stamp(r.timestamp, true) else {
            return;
        };
        let odom = convert::rover_odometry(
            r,
            self.last_rover_heading,
            stamp,
            &self.settings.frames,
            &self.settings.covariances,
        );
        if let Some(h) = r.velocity.and_then(convert::rover_heading) {
            self.last_rover_heading = Some(h);
        }
        if let Some(o) = odom {
            if self
                .stats
                .rover
                .count_publish(self.out.rover.publish(&o), "publish_failed")
            {
                self.stats.rover.published(bytes);
            }
        }
    }
}
