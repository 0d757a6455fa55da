//! CopterSim's side: the IMU (requested by the bridge itself), the true-state
//! stream as odometry, and the heartbeat that anchors the time base.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::Imu;
use r2r::{Node, Publisher};
use tokio::sync::watch;

use frames::{quat_normalize, Quat};
use rflysim_proto::request::{imu_data_port, imu_request_port, ImuRequest};
use rflysim_proto::telemetry::{Heartbeat, ImuSample, TrueState};

use crate::msgs;
use crate::names;
use crate::settings::{Settings, TfSource};
use ros_common::demand::{publish_if_subscribed, subscribed};
use ros_common::msgs::Covariances;
use ros_common::net::{BlockingUdp, FilteredUdp, Received, SenderFilter, SenderGate};
use ros_common::serialized::SerializedPublisher;
use ros_common::sim_host::{SimEndpoint, SimHost};
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::{
    Accepted, AnchorVerdict, ClockPublisher, StampRefusal, StreamClock, TimeBase, TimeBaseReport, TimeBases,
};

/// How long the IMU may stay silent before CopterSim is asked for it again.
const IMU_SILENCE: Duration = Duration::from_secs(2);
/// How often a silent IMU's reader looks whether a request is due.
const REQUEST_CHECK: Duration = Duration::from_millis(250);

pub use ros_common::net::local_ip_towards;

/// One vehicle's IMU and true state.
pub struct CopterBridge {
    pub copter: u16,
    /// Serialized by the bridge itself, as the other bridges' IMUs: no C
    /// message made and freed a sample (`ros_common::serialized`).
    imu: SerializedPublisher<Imu>,
    state: Publisher<Odometry>,
    tf: Option<Publisher<r2r::tf2_msgs::msg::TFMessage>>,
    time: Arc<TimeBase>,
    clock: Option<Arc<ClockPublisher>>,
    cov: Covariances,
    sim_host: SimHost,
    rate_hz: u16,
    send_requests: bool,
    senders: SenderFilter,
    logger: String,
    /// The latest true-state attitude (FRD in NED) and when it came.
    attitude: Arc<Mutex<Option<(Quat, Instant)>>>,
    /// The IMU's frame id, made once: a sample costs microseconds.
    base_frame: String,
    pub imu_stats: Arc<StreamStats>,
    pub state_stats: Arc<StreamStats>,
}

impl std::fmt::Debug for CopterBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopterBridge").field("copter", &self.copter).finish()
    }
}

impl CopterBridge {
    pub fn new(node: &mut Node, copter: u16, time: Arc<TimeBase>, s: &Settings) -> r2r::Result<Self> {
        let qos = &s.output.qos;
        Ok(Self {
            copter,
            imu: SerializedPublisher::new(node, &names::imu_topic(copter, s.copters.several()), qos.clone())?,
            state: node.create_publisher(&names::state_odom_topic(copter), qos.clone())?,
            tf: if s.output.tf_source == TfSource::State {
                Some(crate::tf::odometry_tf_publisher(node)?)
            } else {
                None
            },
            time,
            clock: None,
            cov: s.output.covariances,
            sim_host: s.link.sim_host.clone(),
            rate_hz: s.copters.rate_hz,
            send_requests: s.link.send_requests,
            senders: s.link.senders.clone(),
            logger: node.logger().to_string(),
            attitude: Arc::new(Mutex::new(None)),
            base_frame: names::base_frame(copter),
            imu_stats: Arc::new(StreamStats::default()),
            state_stats: Arc::new(StreamStats::default()),
        })
    }

    pub fn with_clock(mut self, clock: Option<Arc<ClockPublisher>>) -> Self {
        self.clock = clock;
        self
    }

    /// The IMU message of one sample (FLU, REP-145 covariances), stamped by `clock`.
    pub fn imu_message(&self, sample: &ImuSample, clock: &mut StreamClock) -> Result<(Imu, Accepted), StampRefusal> {
        let taken = clock.stamp(&self.time, sample.time_stamp)?;
        let stamp = ros_common::time::to_ros_time(taken.seconds);
        let fresh = self
            .attitude
            .lock()
            .unwrap()
            .filter(|(_, at)| at.elapsed() < Duration::from_millis(500))
            .map(|(q, _)| q);
        let header = ros_common::msgs::header(stamp, &self.base_frame);
        Ok((msgs::imu(sample, fresh, header, &self.cov), taken))
    }

    /// Runs the IMU and the true-state streams; `self` is split between the
    /// two tasks (a publisher is `Send` but not `Sync`).
    pub async fn run(self, shutdown: watch::Receiver<bool>) {
        let state_part = StatePart {
            copter: self.copter,
            state: self.state.clone(),
            tf: self.tf.clone(),
            time: self.time.clone(),
            cov: self.cov,
            logger: self.logger.clone(),
            attitude: self.attitude.clone(),
            stats: self.state_stats.clone(),
            senders: self.senders.clone(),
        };
        let imu = tokio::spawn(self.run_imu(shutdown.clone()));
        let state = tokio::spawn(state_part.run(shutdown));
        let _ = tokio::join!(imu, state);
    }

    /// The IMU, read by a thread of its own blocked in `recv`: through
    /// tokio's reactor each sample woke the runtime, a fifth of the
    /// bridge's CPU at 1000 Hz (BENCHMARKS.md, `imu`).
    async fn run_imu(self, mut shutdown: watch::Receiver<bool>) {
        let port = imu_data_port(self.copter);
        let gate = SenderGate::new(self.senders.clone(), self.imu_stats.clone(), &self.logger);
        let bound = ros_common::net::udp_receiver(Ipv4Addr::UNSPECIFIED, port, 1 << 20)
            .and_then(|(s, _)| BlockingUdp::new(s, gate));
        let sock = match bound {
            Ok(s) => s,
            Err(e) => return r2r::log_error!(&self.logger, "uav{}: cannot bind IMU port {port}: {e}", self.copter),
        };
        let closer = sock.closer();
        let mut receiving = tokio::task::spawn_blocking(move || self.receive_imu(sock, port));
        tokio::select! {
            _ = shutdown.changed() => {
                closer.close();
                let _ = receiving.await;
            }
            _ = &mut receiving => {}
        }
    }

    /// Reads, stamps and publishes IMU samples until `sock` is closed; asks
    /// CopterSim for them while none come.
    fn receive_imu(mut self, mut sock: BlockingUdp, port: u16) {
        let request_to = SimEndpoint::new(&self.sim_host, imu_request_port(self.copter));
        // Made again when the host's name finds another address: this host's towards it may differ too.
        let imu_request = |sim_ip| ImuRequest::for_copter(self.copter, local_ip_towards(sim_ip), self.rate_hz).encode();
        let mut request = (request_to.host.ip(), imu_request(request_to.host.ip()));
        r2r::log_info!(
            &self.logger,
            "uav{}: IMU on UDP {port} → {}{}",
            self.copter,
            names::imu_topic(self.copter, false),
            if self.send_requests {
                format!(" (requesting {} Hz from CopterSim at {request_to})", self.rate_hz)
            } else {
                String::new()
            }
        );
        let sender = ros_common::net::udp_sender().ok();
        // While samples flow the wait never times out; while they do not, it
        // wakes the loop often enough to ask again when a request is due.
        if self.send_requests {
            if let Err(e) = sock.set_timeout(Some(REQUEST_CHECK)) {
                r2r::log_warn!(&self.logger, "uav{}: IMU socket: {e}", self.copter);
            }
        }
        let mut last_sample: Option<Instant> = None;
        let mut next_request = Instant::now();
        let mut warn = RateLimitedLog::new(Duration::from_secs(5));
        let mut imu_clock = StreamClock::new(format!("uav{} imu", self.copter), self.logger.clone());
        let mut buf = Vec::with_capacity(1024);
        loop {
            if self.send_requests
                && last_sample.is_none_or(|t| t.elapsed() > IMU_SILENCE)
                && Instant::now() >= next_request
            {
                if let Some(s) = &sender {
                    let to = request_to.addr();
                    if *to.ip() != request.0 {
                        request = (*to.ip(), imu_request(*to.ip()));
                    }
                    let _ = s.send_to(&request.1, to);
                }
                next_request = Instant::now() + Duration::from_secs(1);
            }
            buf.clear();
            let n = match sock.recv_appended(&mut buf) {
                Received::Datagram(n) => n,
                Received::TimedOut => continue,
                Received::Closed => return,
            };
            match ImuSample::decode(&buf[..n]) {
                Ok(sample) => {
                    last_sample = Some(Instant::now());
                    let (message, taken) = match self.imu_message(&sample, &mut imu_clock) {
                        Ok(m) => m,
                        Err(e) => {
                            self.imu_stats.drop_frame(e.reason());
                            warn.warn_dropped(&self.logger, format_args!("uav{} imu", self.copter), "sample", e);
                            continue;
                        }
                    };
                    // Checked and counted either way; sent only to somebody.
                    match self.imu.publish_if_subscribed(|| message) {
                        Ok(()) => self.imu_stats.published(n),
                        Err(_) => self.imu_stats.drop_frame("publish_failed"),
                    }
                    if let Some(c) = &self.clock {
                        self.imu_stats.count_publish(c.advance(&taken), "clock_publish_failed");
                    }
                }
                Err(e) => {
                    self.imu_stats.drop_frame(e.reason());
                    warn.warn_dropped(&self.logger, format_args!("uav{} imu", self.copter), "datagram", &e);
                }
            }
        }
    }
}

struct StatePart {
    copter: u16,
    state: Publisher<Odometry>,
    tf: Option<Publisher<r2r::tf2_msgs::msg::TFMessage>>,
    time: Arc<TimeBase>,
    cov: Covariances,
    logger: String,
    attitude: Arc<Mutex<Option<(Quat, Instant)>>>,
    stats: Arc<StreamStats>,
    senders: SenderFilter,
}

impl StatePart {
    async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let port = rflysim_proto::ports::true_state_port(self.copter);
        let gate = SenderGate::new(self.senders.clone(), self.stats.clone(), &self.logger);
        let bound = ros_common::net::udp_receiver(Ipv4Addr::UNSPECIFIED, port, 1 << 20)
            .and_then(|(s, _)| FilteredUdp::new(s, gate));
        let mut sock = match bound {
            Ok(s) => s,
            Err(e) => {
                return r2r::log_warn!(
                    &self.logger,
                    "uav{}: no true-state odometry, cannot bind {port}: {e}",
                    self.copter
                )
            }
        };
        let mut buf = [0u8; 1024];
        let mut warn = RateLimitedLog::new(Duration::from_secs(5));
        let mut state_clock = StreamClock::new(format!("uav{} true state", self.copter), self.logger.clone());
        loop {
            tokio::select! {
                n = sock.recv(&mut buf) => {
                    match TrueState::decode(&buf[..n]) {
                        Ok(s) if s.copter_id == i32::from(self.copter) => {
                            *self.attitude.lock().unwrap() = Some((quat_normalize(s.quaternion.map(f64::from)), Instant::now()));
                            let stamp = match state_clock.stamp(&self.time, s.runned_time) {
                                Ok(t) => ros_common::time::to_ros_time(t.seconds),
                                Err(e) => {
                                    self.stats.drop_frame(e.reason());
                                    let stream = format_args!("uav{} true state", self.copter);
                                    warn.warn_dropped(&self.logger, stream, "sample", e);
                                    continue;
                                }
                            };
                            let header = ros_common::msgs::header(stamp, &names::odom_frame(self.copter));
                            let odom = msgs::odometry_from_true_state(&s, header, &names::base_frame(self.copter), &self.cov);
                            let sent = if subscribed(&self.state) { self.state.publish(&odom) } else { Ok(()) };
                            match sent {
                                Ok(()) => self.stats.published(n),
                                Err(_) => self.stats.drop_frame("publish_failed"),
                            }
                            if let Some(tf) = &self.tf {
                                self.stats.count_publish(
                                    publish_if_subscribed(tf, || ros_common::tf::odometry_tf(&odom)),
                                    "tf_publish_failed",
                                );
                            }
                        }
                        Ok(_) => self.stats.drop_frame("other_vehicle"),
                        Err(e) => {
                            self.stats.drop_frame(e.reason());
                            let stream = format_args!("uav{} true state", self.copter);
                            warn.warn_dropped(&self.logger, stream, "datagram", &e);
                        }
                    }
                }
                _ = shutdown.changed() => break,
            }
        }
    }
}

/// Listens for CopterSim heartbeats: each tells its vehicle's base how far
/// that CopterSim's PC clock is from this one (stamps stay on this one).
pub async fn run_heartbeat(
    port: u16,
    multicast: bool,
    senders: SenderFilter,
    time: Arc<TimeBases>,
    stats: Arc<StreamStats>,
    logger: String,
    mut shutdown: watch::Receiver<bool>,
) {
    let group = multicast.then_some(rflysim_proto::ports::MULTICAST_GROUP);
    let sock = ros_common::net::udp_receiver_with_group(port, 1 << 16, group, &senders, &logger, "CopterSim heartbeat")
        .map(|(s, _)| s);
    let bound = sock.and_then(|s| FilteredUdp::new(s, SenderGate::new(senders, stats.clone(), &logger)));
    let mut sock = match bound {
        Ok(s) => s,
        Err(e) => {
            return r2r::log_warn!(
                &logger,
                "no CopterSim heartbeat (UDP {port}: {e}); stamps still follow this machine's clock, \
                 the CopterSim PC's clock offset stays unknown"
            )
        }
    };
    let mut buf = [0u8; 256];
    let mut announced = AnnouncedOffsets::default();
    let mut refused_log = RateLimitedLog::new(Duration::from_secs(5));
    loop {
        tokio::select! {
            n = sock.recv(&mut buf) => {
                match Heartbeat::decode(&buf[..n]) {
                    Ok(h) => {
                        let epoch = h.start_time_ms as f64 * 1e-3;
                        let Some(base) = time.existing(i64::from(h.copter_id)) else {
                            stats.drop_frame(ros_common::stats::OTHER_SOURCE);
                            continue;
                        };
                        match base.heartbeat(i64::from(h.copter_id), epoch) {
                            AnchorVerdict::OtherInstance => stats.drop_frame(ros_common::stats::OTHER_SOURCE),
                            AnchorVerdict::Refused => stats.drop_frame(ANCHOR_REFUSED),
                            AnchorVerdict::Taken | AnchorVerdict::Same | AnchorVerdict::Held => stats.published(n),
                        }
                        let report = base.report();
                        if let Some(line) = announced.line(h.copter_id, epoch, &report) {
                            r2r::log_info!(&logger, "{line}");
                        }
                        if let Some(refused) = announced.refusals(h.copter_id, epoch, &report) {
                            let stream = format_args!("uav{} time base", h.copter_id);
                            refused_log.warn_event(&logger, stream, refused);
                        }
                    }
                    Err(e) => stats.drop_frame(e.reason()),
                }
            }
            _ = shutdown.changed() => break,
        }
    }
}

/// Why a heartbeat was dropped: an anchor its vehicle's base refused.
const ANCHOR_REFUSED: &str = "anchor_refused";

/// What the log said of each vehicle's clock: one line per run (and when
/// the offset moves by more than a second), one per new refusal.
#[derive(Debug, Default)]
struct AnnouncedOffsets {
    /// Vehicle → (restarts, offset ms announced, anchors refused so far).
    seen: BTreeMap<i32, (u64, Option<f64>, u64)>,
}

impl AnnouncedOffsets {
    fn line(&mut self, copter: i32, epoch: f64, r: &TimeBaseReport) -> Option<String> {
        let offset = r.clock_offset_ms?;
        let entry = self.seen.entry(copter).or_insert((u64::MAX, None, 0));
        let moved = entry.1.is_none_or(|o| (o - offset).abs() > 1000.0);
        if entry.0 == r.restarts && !moved {
            return None;
        }
        (entry.0, entry.1) = (r.restarts, Some(offset));
        Some(format!(
            "time base of uav{copter}: CopterSim's clock is {offset:+.1} ms from this machine's (its sim time 0 = \
             {epoch:.3} s on its clock); stamps stay on this machine's clock (offset and drift in /diagnostics)"
        ))
    }

    fn refusals(&mut self, copter: i32, epoch: f64, r: &TimeBaseReport) -> Option<String> {
        let entry = self.seen.entry(copter).or_insert((u64::MAX, None, 0));
        if r.anchors_refused <= entry.2 {
            return None;
        }
        entry.2 = r.anchors_refused;
        Some(format!(
            "CopterSim heartbeat anchors refused ({} so far, the latest {epoch:.3} s): \
             they disagree with the vehicle's running stream (two CopterSims with one id, or a PC clock stepped)",
            r.anchors_refused
        ))
    }
}
