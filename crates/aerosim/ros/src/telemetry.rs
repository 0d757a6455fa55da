//! AeroSim's streams in: every Kafka topic read in one fetch per round, each
//! decoding its records in order, stamping them through the shared time
//! base and publishing what somebody subscribes to. A bad record is counted
//! and logged (limited in rate) and the next one is read as if nothing
//! happened.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aerosim_link::{Closer, Fetched, Reader, TopicsReader};
use aerosim_proto::envelope::{decode_envelope, Envelope};
use aerosim_proto::types::{JsonData, PrimaryFlightDisplayData, VehicleState};
use r2r::geometry_msgs::msg::TwistWithCovarianceStamped;
use r2r::nav_msgs::msg::Odometry;
use r2r::rflysim_bridge::msg::FlightDisplay;
use r2r::sensor_msgs::msg::{Imu, NavSatFix};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::visualization_msgs::msg::Marker;
use r2r::{Node, Publisher, QosProfile};
use ros_common::demand::{publish_if_subscribed, subscribed};
use ros_common::lifecycle::StopSignal;
use ros_common::msgs::{header, Covariances};
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::{to_ros_time, wall_now, Accepted, ClockPublisher, StreamClock, TimeBase};

use crate::convert::{self, ActorFrames, Origin};

/// What every stream of the bridge shares.
#[derive(Clone)]
#[allow(missing_debug_implementations)] // holds publishers, which are not Debug
pub struct Shared {
    pub time: Arc<TimeBase>,
    pub clock: Option<Arc<ClockPublisher>>,
    pub logger: String,
    pub max_record_bytes: usize,
}

/// A stream's own state: its counters, its log limit, its clock.
#[allow(missing_debug_implementations)] // through Shared
pub struct Stream {
    pub name: String,
    pub stats: Arc<StreamStats>,
    log: RateLimitedLog,
    clock: StreamClock,
    shared: Shared,
    moves_clock: bool,
}

impl Stream {
    pub fn new(name: String, shared: &Shared) -> Self {
        Self {
            clock: StreamClock::new(name.clone(), shared.logger.clone()),
            name,
            stats: Arc::new(StreamStats::default()),
            log: RateLimitedLog::new(Duration::from_secs(5)),
            shared: shared.clone(),
            moves_clock: false,
        }
    }

    /// The largest record this stream reads (`max_message_bytes`).
    pub fn max_record_bytes(&self) -> usize {
        self.shared.max_record_bytes
    }

    /// Counts a record that is not published and says why (limited in rate).
    pub fn refuse(&mut self, reason: &'static str, detail: impl std::fmt::Display) {
        self.stats.drop_frame(reason);
        self.log.warn_dropped(
            &self.shared.logger,
            &self.name,
            "record",
            format_args!("{reason}: {detail}"),
        );
    }

    /// This stream's records move `/clock` (AeroSim's clock ticks, under
    /// `use_sim_time`); no other stream's do.
    pub fn moving_the_clock(mut self) -> Self {
        self.moves_clock = true;
        self
    }

    /// The stamp of `record`, whose simulation time is `sim` (`None`:
    /// unset, stamped on arrival). The time base takes it at the wall time
    /// the record was made (its platform time, else its Kafka timestamp),
    /// not when it is read: a backlog read late does not anchor the stamps
    /// of the records after it ahead of the wall clock.
    pub fn stamp(&mut self, sim: Option<f64>, record: &Fetched, platform: Option<f64>) -> Option<Accepted> {
        let now = wall_now();
        let made = made_at(platform, record.timestamp_ms, now);
        let taken = match sim {
            Some(t) => self.clock.stamp_at(&self.shared.time, t, made),
            None => self.clock.arrival_at(&self.shared.time, now),
        };
        match taken {
            Ok(a) => {
                if let (true, Some(c)) = (self.moves_clock, &self.shared.clock) {
                    let moved = c.advance(&a);
                    self.stats.count_publish(moved, "clock_publish_failed");
                }
                Some(a)
            }
            Err(r) => {
                self.refuse(r.reason(), r);
                None
            }
        }
    }

    /// The envelope of one record, or `None` (counted) when it does not decode.
    pub fn decode<T: aerosim_proto::AeroSimType + serde::de::DeserializeOwned>(
        &mut self,
        record: &Fetched,
    ) -> Option<Envelope<T>> {
        self.stats
            .bytes_in
            .fetch_add(record.value.len() as u64, std::sync::atomic::Ordering::Relaxed);
        self.stats.datagrams.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match decode_envelope::<T>(&record.value, self.shared.max_record_bytes) {
            Ok(e) => Some(e),
            Err(e) => {
                self.refuse(e.reason(), format!("offset {}: {e}", record.offset));
                None
            }
        }
    }

    /// One frame out; its latency from AeroSim's platform time when it has one.
    pub fn published(&self, bytes: usize, platform_time: Option<f64>) {
        self.stats.published(bytes);
        if let Some(t) = platform_time {
            self.stats.set_latency_ms((wall_now() - t) * 1e3);
        }
    }
}

/// When a record was made, on this host's wall clock: its platform time, or
/// its Kafka timestamp, when plausible (not ahead of `now`, not a day old).
fn made_at(platform: Option<f64>, kafka_ms: i64, now: f64) -> f64 {
    let plausible = |t: f64| t.is_finite() && t <= now + 1.0 && t >= now - 86_400.0;
    let kafka = kafka_ms as f64 / 1000.0;
    match platform {
        Some(t) if plausible(t) => t.min(now),
        _ if plausible(kafka) => kafka.min(now),
        _ => now,
    }
}

/// One topic's reading: its counters and what is done with its records.
#[allow(missing_debug_implementations)] // a closure
pub struct Reading {
    pub reader: Reader,
    pub stats: Arc<StreamStats>,
    pub each: Box<dyn FnMut(Vec<Fetched>) + Send>,
}

/// Reads every topic together (one fetch per broker and round, its wait
/// growing up to `fetch_wait_max` while no record comes) until the stop, handing each topic's records to its `each`; an error is counted on
/// its topic's stream and logged (limited in rate). It blocks: a thread of
/// its own, until `stop`; `closer` (whoever watches the stop closes it)
/// ends a round blocked on the broker at once.
pub fn read_until_stopped(
    readings: Vec<Reading>,
    fetch_wait_max: Duration,
    closer: Closer,
    logger: String,
    stop: StopSignal,
) {
    let (readers, mut streams): (Vec<Reader>, Vec<_>) = readings
        .into_iter()
        .map(|r| (r.reader, (r.stats, r.each, RateLimitedLog::new(Duration::from_secs(5)))))
        .unzip();
    let topics: Vec<String> = readers.iter().map(|r| r.topic().to_string()).collect();
    let mut reader = match TopicsReader::new(readers, closer.clone()) {
        Ok(r) => r.idle_fetch_wait_up_to(fetch_wait_max),
        Err(e) => {
            r2r::log_error!(&logger, "cannot start the Kafka reader: {e}");
            return;
        }
    };
    let stopped = || closer.is_closed() || *stop.borrow();
    while !stopped() {
        for (i, result) in reader.read_round() {
            let (stats, each, log) = &mut streams[i];
            match result {
                // After the stop the outputs may be going: a round the close cut short is not delivered.
                Ok(_) if stopped() => return,
                Ok(records) => each(records),
                Err(e) => {
                    if stopped() {
                        return;
                    }
                    stats.drop_frame(e.reason);
                    log.warn_event(&logger, &topics[i], format_args!("{e}; trying again"));
                }
            }
        }
    }
}

/// The last vehicle state of each actor and when it came: what the failsafe holds.
pub type LastStates = Arc<Mutex<Vec<Option<(VehicleState, Instant)>>>>;

/// One actor's vehicle-state topics.
#[allow(missing_debug_implementations)] // publishers are not Debug
pub struct VehicleOutputs {
    odom: Publisher<Odometry>,
    tf: Option<Publisher<TFMessage>>,
    imu: Publisher<Imu>,
    gnss: Publisher<NavSatFix>,
    gnss_velocity: Publisher<TwistWithCovarianceStamped>,
    frames: ActorFrames,
    covariances: Covariances,
    origin: Origin,
}

impl VehicleOutputs {
    pub fn new(
        node: &mut Node,
        actor: &str,
        frames: ActorFrames,
        qos: &QosProfile,
        publish_tf: bool,
        covariances: Covariances,
        origin: Origin,
    ) -> Result<Self, String> {
        let e = |t: &str, err: r2r::Error| format!("{actor}/{t}: {err}");
        Ok(Self {
            odom: node
                .create_publisher(&format!("{actor}/odom"), qos.clone())
                .map_err(|x| e("odom", x))?,
            tf: if publish_tf {
                Some(
                    node.create_publisher("/tf", ros_common::qos::tf())
                        .map_err(|x| e("/tf", x))?,
                )
            } else {
                None
            },
            imu: node
                .create_publisher(&format!("{actor}/imu"), qos.clone())
                .map_err(|x| e("imu", x))?,
            gnss: node
                .create_publisher(&format!("{actor}/gnss"), qos.clone())
                .map_err(|x| e("gnss", x))?,
            gnss_velocity: node
                .create_publisher(&format!("{actor}/gnss/velocity"), qos.clone())
                .map_err(|x| e("gnss/velocity", x))?,
            frames,
            covariances,
            origin,
        })
    }

    /// Publishes one state; `false` when a publish failed (counted).
    pub fn publish(&self, s: &VehicleState, stamp: f64, stats: &StreamStats) {
        let k = convert::kinematics(s);
        let world = header(to_ros_time(stamp), &self.frames.world);
        let body = header(to_ros_time(stamp), &self.frames.base_link);
        let odom = convert::odometry(&k, world.clone(), &self.frames.base_link, &self.covariances);
        if let Some(tf) = &self.tf {
            stats.count_publish(tf.publish(&ros_common::tf::odometry_tf(&odom)), "tf_publish_failed");
        }
        if subscribed(&self.odom) {
            stats.count_publish(self.odom.publish(&odom), "publish_failed");
        }
        stats.count_publish(
            publish_if_subscribed(&self.imu, || convert::imu(&k, body.clone(), &self.covariances)),
            "publish_failed",
        );
        stats.count_publish(
            publish_if_subscribed(&self.gnss, || {
                convert::nav_sat_fix(s, &self.origin, body.clone(), &self.covariances)
            }),
            "publish_failed",
        );
        stats.count_publish(
            publish_if_subscribed(&self.gnss_velocity, || {
                convert::gnss_velocity(&k, world.clone(), &self.covariances)
            }),
            "publish_failed",
        );
    }
}

/// An actor's `vehicle_state` records → odometry, TF, IMU, GNSS.
pub fn vehicle_states(
    mut stream: Stream,
    outputs: VehicleOutputs,
    last: LastStates,
    index: usize,
) -> impl FnMut(Vec<Fetched>) {
    move |records| {
        for r in &records {
            let Some(e) = stream.decode::<VehicleState>(r) else {
                continue;
            };
            if let Err(reason) = aerosim_proto::types::check_finite(&e.data) {
                stream.refuse("not_finite", reason);
                continue;
            }
            let Some(stamp) = stream.stamp(
                e.metadata.timestamp_sim.to_seconds(),
                r,
                e.metadata.timestamp_platform.to_seconds(),
            ) else {
                continue;
            };
            outputs.publish(&e.data, stamp.seconds, &stream.stats);
            stream.published(r.value.len(), e.metadata.timestamp_platform.to_seconds());
            last.lock().unwrap_or_else(|p| p.into_inner())[index] = Some((e.data, Instant::now()));
        }
    }
}

/// An actor's flight display: the message and, for rviz2, its text.
#[allow(missing_debug_implementations)] // holds publishers, which are not Debug
pub struct DisplayOutputs {
    pub display: Publisher<FlightDisplay>,
    pub marker: Publisher<Marker>,
    pub base_link: String,
}

/// An actor's `primary_flight_display_data` records → `flight_display` and
/// `flight_display/marker`.
pub fn flight_displays(mut stream: Stream, out: DisplayOutputs) -> impl FnMut(Vec<Fetched>) {
    move |records| {
        for r in &records {
            let Some(e) = stream.decode::<PrimaryFlightDisplayData>(r) else {
                continue;
            };
            let Some(stamp) = stream.stamp(
                e.metadata.timestamp_sim.to_seconds(),
                r,
                e.metadata.timestamp_platform.to_seconds(),
            ) else {
                continue;
            };
            let head = || header(to_ros_time(stamp.seconds), &out.base_link);
            let sent = publish_if_subscribed(&out.display, || convert::flight_display(&e.data, head()));
            let text = publish_if_subscribed(&out.marker, || convert::flight_display_marker(&e.data, head()));
            let display_ok = stream.stats.count_publish(sent, "publish_failed");
            let text_ok = stream.stats.count_publish(text, "publish_failed");
            if display_ok && text_ok {
                stream.published(r.value.len(), e.metadata.timestamp_platform.to_seconds());
            }
        }
    }
}

/// `aerosim.clock` records → `/clock` (through the time base, like every
/// other stamp: an outlier moves nothing).
pub fn clock_ticks(mut stream: Stream) -> impl FnMut(Vec<Fetched>) {
    move |records| {
        for r in &records {
            let Some(e) = stream.decode::<JsonData>(r) else {
                continue;
            };
            match e.metadata.timestamp_sim.to_seconds() {
                Some(t) => {
                    if stream
                        .stamp(Some(t), r, e.metadata.timestamp_platform.to_seconds())
                        .is_some()
                    {
                        stream.published(r.value.len(), e.metadata.timestamp_platform.to_seconds());
                    }
                }
                None => stream.refuse("no_sim_time", "a clock record without a simulation time"),
            }
        }
    }
}
