//! Telemetry of every AUV → `auv<N>/pose`, `auv<N>/odom` and TF
//! `auv/map → auv/auv<N>/base_link`, stamped on arrival.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use auv_proto::pose::{body_twist, BodyTwist, Pose, PoseConvention};
use auv_proto::telemetry::Telemetry;
use r2r::geometry_msgs::msg::PoseStamped;
use r2r::nav_msgs::msg::Odometry;
use r2r::tf2_msgs::msg::TFMessage;
use ros_common::lifecycle::StopSignal;
use ros_common::serialized::SerializedPublisher;
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::wall_now;

use crate::convert::{odometry, pose_stamped};
use crate::link::{self, first_byte, stopping, Part};
use crate::zmtp::Subscriber;
use ros_common::msgs::Covariances;

/// A gap longer than this (a simulator restart, a pause) starts the twist over.
const MAX_TWIST_GAP: Duration = Duration::from_secs(1);
/// The twist is differenced over at least this long: messages that arrive
/// in a burst (queued while the bridge was busy) carry no timing.
const MIN_TWIST_SPAN: Duration = Duration::from_millis(40);
/// So does a jump farther than this between two messages.
const MAX_JUMP_M: f64 = 5.0;

pub struct AuvTelemetry {
    pub pose: SerializedPublisher<PoseStamped>,
    pub odom: SerializedPublisher<Odometry>,
    pub stats: Arc<StreamStats>,
    /// The body's frame id, the odometry's child.
    base_link: String,
    /// The pose the twist is differenced from, and when it arrived.
    reference: Option<(Pose, Instant)>,
    twist: Option<BodyTwist>,
}

impl std::fmt::Debug for AuvTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuvTelemetry")
            .field("twist", &self.twist)
            .finish_non_exhaustive()
    }
}

impl AuvTelemetry {
    pub fn new(
        pose: SerializedPublisher<PoseStamped>,
        odom: SerializedPublisher<Odometry>,
        stats: Arc<StreamStats>,
        base_link: String,
    ) -> Self {
        AuvTelemetry {
            pose,
            odom,
            stats,
            base_link,
            reference: None,
            twist: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct TelemetrySettings {
    pub convention: PoseConvention,
    pub world_frame_id: String,
    pub variances: Covariances,
    pub stamps: ros_common::time::ArrivalStamps,
}

/// The telemetry SUB of `ids` as the bridge reads it (a message is well under 1 KiB).
pub fn subscriber(host: &str, port: u16, ids: &[u8], reconnect: Duration) -> Subscriber {
    link::subscriber(host, port, ids, 1024, 0, reconnect)
}

pub fn receive(
    mut socket: Subscriber,
    mut auvs: HashMap<u8, AuvTelemetry>,
    mut tf: Option<SerializedPublisher<TFMessage>>,
    settings: TelemetrySettings,
    logger: String,
    stop: StopSignal,
) {
    let mut warn = RateLimitedLog::new(Duration::from_secs(5));
    while !stopping(&stop) {
        socket.receive_all(|parts| {
            let Some((id, auv)) = first_byte(&parts).and_then(|id| auvs.get_mut(&id).map(|auv| (id, auv))) else {
                return;
            };
            let bytes: usize = parts.iter().map(Part::len).sum();
            auv.stats
                .bytes_in
                .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
            match Telemetry::parse(&parts) {
                Ok(t) => publish(auv, &t, tf.as_mut(), &settings),
                Err(e) => {
                    auv.stats.drop_frame(e.kind());
                    warn.warn_dropped(&logger, format_args!("auv{id} telemetry"), "message", &e);
                }
            }
        });
    }
}

fn publish(
    auv: &mut AuvTelemetry,
    t: &Telemetry,
    tf: Option<&mut SerializedPublisher<TFMessage>>,
    s: &TelemetrySettings,
) {
    let arrived = Instant::now();
    let (stamp, arrived_wall) = s.stamps.arrival();
    let pose = s.convention.to_enu_flu(t);
    match auv.reference {
        Some((p, at)) => {
            let span = arrived.duration_since(at);
            let jump = (0..3)
                .map(|i| (pose.position[i] - p.position[i]).powi(2))
                .sum::<f64>()
                .sqrt();
            if span > MAX_TWIST_GAP || jump > MAX_JUMP_M {
                auv.twist = None;
                auv.reference = Some((pose, arrived));
            } else if span >= MIN_TWIST_SPAN {
                auv.twist = body_twist(&p, &pose, span.as_secs_f64());
                auv.reference = Some((pose, arrived));
            }
        }
        None => auv.reference = Some((pose, arrived)),
    }
    // Each only while somebody subscribes; odometry is built for `odom` or `/tf`.
    let tf = tf.filter(|p| p.subscribed());
    let pose_sent = auv
        .pose
        .publish_if_subscribed(|| pose_stamped(&pose, stamp.clone(), &s.world_frame_id))
        .is_ok();
    let odom_wanted = auv.odom.subscribed();
    let odom_sent = if tf.is_some() || odom_wanted {
        let odom = odometry(
            auv.base_link.clone(),
            &pose,
            auv.twist.as_ref(),
            stamp.clone(),
            &s.world_frame_id,
            &s.variances,
        );
        (!odom_wanted || auv.odom.publish(&odom).is_ok())
            & tf.is_none_or(|p| p.publish(&ros_common::tf::odometry_tf(&odom)).is_ok())
    } else {
        true
    };
    if pose_sent & odom_sent {
        auv.stats.published(0);
        auv.stats.set_latency_ms((wall_now() - arrived_wall) * 1e3);
    } else {
        auv.stats.drop_frame("publish_failed");
    }
}
