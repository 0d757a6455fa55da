//! `/clock` from simulation time (with `use_sim_time`): the one clock every
//! simulator instance of the process is mapped onto, never going back
//! except at a restart of that clock.

use std::sync::Mutex;

use crate::serialized::SerializedPublisher;

use super::{to_ros_time, Accepted};

/// Publishes `/clock`, at most every `min_period`.
pub struct ClockPublisher {
    /// The publisher, the last time published and its clock generation (a publisher is not `Sync`).
    inner: Mutex<(SerializedPublisher<r2r::rosgraph_msgs::msg::Clock>, f64, u64)>,
    min_period: f64,
}

impl std::fmt::Debug for ClockPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockPublisher")
            .field("last", &self.inner.lock().unwrap().1)
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
            inner: Mutex::new((SerializedPublisher::new(node, "/clock", qos)?, f64::NEG_INFINITY, 0)),
            min_period: 0.001,
        })
    }

    /// Moves `/clock` to a sample the time base took (an arrival stamp
    /// moves nothing). `Ok` also when there was nothing to publish; the
    /// caller counts a failure on the stream whose frame moved the clock.
    pub fn advance(&self, taken: &Accepted) -> r2r::Result<()> {
        let Some(sim) = taken.sim else { return Ok(()) };
        let mut inner = self.inner.lock().unwrap();
        if clock_moves(sim, taken.clock_generation, inner.1, inner.2, self.min_period) {
            inner.1 = sim;
            inner.2 = taken.clock_generation;
            inner.0.publish(&r2r::rosgraph_msgs::msg::Clock {
                clock: to_ros_time(sim),
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_goes_back_only_at_a_restart() {
        assert!(clock_moves(10.0, 0, 9.0, 0, 0.001));
        assert!(!clock_moves(8.0, 0, 9.0, 0, 0.001), "an out-of-order sample");
        assert!(!clock_moves(9.0005, 0, 9.0, 0, 0.001), "within the period");
        assert!(clock_moves(0.5, 1, 9.0, 0, 0.001), "a restart");
        assert!(!clock_moves(100.0, 0, 0.5, 1, 0.001), "the old run's late sample");
    }
}
