//! `/clock` from simulation time (with `use_sim_time`): the one clock every
//! simulator instance of the process is mapped onto, never going back
//! except at a restart of that clock.

use std::sync::Mutex;

use crate::serialized::SerializedPublisher;

use super::{to_ros_time, Accepted};

/// Publishes `/clock`, at most every `min_period`.
pub struct ClockPublisher {
    /// Behind a lock: a publisher is not `Sync`.
    inner: Mutex<ClockState>,
    min_period: f64,
}

struct ClockState {
    publisher: SerializedPublisher<r2r::rosgraph_msgs::msg::Clock>,
    /// The time `/clock` was last moved to, and its clock generation.
    last: f64,
    generation: u64,
    /// Messages published.
    published: u64,
}

impl std::fmt::Debug for ClockPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockPublisher")
            .field("last", &self.inner.lock().unwrap().last)
            .finish()
    }
}

/// Whether `/clock` moves to `sim` of `generation`, last at `last` of `last_generation`.
fn clock_moves(sim: f64, generation: u64, last: f64, last_generation: u64, min_period: f64) -> bool {
    generation > last_generation || (generation == last_generation && sim >= last + min_period)
}

impl ClockPublisher {
    pub fn new(node: &mut r2r::Node) -> r2r::Result<Self> {
        // /clock is latched-free, reliable, shallow: what rclcpp's time source subscribes with.
        let qos = r2r::QosProfile::default().keep_last(1).reliable();
        Ok(Self {
            inner: Mutex::new(ClockState {
                publisher: SerializedPublisher::new(node, "/clock", qos)?,
                last: f64::NEG_INFINITY,
                generation: 0,
                published: 0,
            }),
            min_period: 0.001,
        })
    }

    /// Moves `/clock` to a sample the time base took (an arrival stamp
    /// moves nothing), published while somebody subscribes (`/clock` is
    /// volatile: a later subscriber gets the next sample either way; with
    /// none, a publish per frame cost a telemetry bridge a tenth of its
    /// CPU). `Ok` also when there was nothing to publish; the caller counts
    /// a failure on the stream whose frame moved the clock.
    pub fn advance(&self, taken: &Accepted) -> r2r::Result<()> {
        let Some(sim) = taken.sim else { return Ok(()) };
        let mut inner = self.inner.lock().unwrap();
        if clock_moves(
            sim,
            taken.clock_generation,
            inner.last,
            inner.generation,
            self.min_period,
        ) {
            inner.last = sim;
            inner.generation = taken.clock_generation;
            if inner.publisher.subscribed() {
                inner.publisher.publish(&r2r::rosgraph_msgs::msg::Clock {
                    clock: to_ros_time(sim),
                })?;
                inner.published += 1;
            }
        }
        Ok(())
    }

    /// How many `/clock` messages were published.
    pub fn published(&self) -> u64 {
        self.inner.lock().unwrap().published
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    fn sample(sim: f64) -> Accepted {
        Accepted {
            seconds: sim,
            sim: Some(sim),
            generation: 0,
            clock_generation: 0,
        }
    }

    #[test]
    fn clock_is_published_only_while_somebody_subscribes() {
        let ctx = r2r::Context::create().unwrap();
        let mut node = r2r::Node::create(ctx, "clock_publisher_test", "").unwrap();
        let clock = ClockPublisher::new(&mut node).unwrap();
        clock.advance(&sample(1.0)).unwrap();
        assert_eq!(clock.published(), 0, "nobody subscribes: nothing is published");

        let qos = r2r::QosProfile::default().keep_last(1).reliable();
        let mut received = node.subscribe::<r2r::rosgraph_msgs::msg::Clock>("/clock", qos).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !clock.inner.lock().unwrap().publisher.subscribed() {
            assert!(
                std::time::Instant::now() < deadline,
                "the subscription was never matched"
            );
            node.spin_once(std::time::Duration::from_millis(10));
        }
        clock.advance(&sample(2.0)).unwrap();
        assert_eq!(clock.published(), 1);
        let got = loop {
            node.spin_once(std::time::Duration::from_millis(10));
            if let Some(m) = futures::StreamExt::next(&mut received).now_or_never().flatten() {
                break m;
            }
            assert!(std::time::Instant::now() < deadline, "/clock did not arrive");
        };
        assert_eq!(got.clock, to_ros_time(2.0));
    }

    #[test]
    fn the_clock_goes_back_only_at_a_restart() {
        assert!(clock_moves(10.0, 0, 9.0, 0, 0.001));
        assert!(!clock_moves(8.0, 0, 9.0, 0, 0.001), "an out-of-order sample");
        assert!(!clock_moves(9.0005, 0, 9.0, 0, 0.001), "within the period");
        assert!(clock_moves(0.5, 1, 9.0, 0, 0.001), "a restart");
        assert!(!clock_moves(100.0, 0, 0.5, 1, 0.001), "the old run's late sample");
    }
}
