//! The AUV bridge's stamps. The simulator's messages carry no time, so every
//! stamp is the time of arrival: the wall clock, or with `use_sim_time` the
//! ROS time of the `/clock` whatever drives simulated time publishes (none
//! until its first message, as for any ROS node).

use std::sync::{Arc, Mutex};

use r2r::builtin_interfaces::msg::Time;
use ros_common::time::{to_ros_time, wall_now};

#[derive(Clone, Default)]
pub struct Stamps {
    /// The node's ROS clock, following `/clock` (`None`: the wall clock).
    ros_clock: Option<Arc<Mutex<r2r::Clock>>>,
}

impl std::fmt::Debug for Stamps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ros_clock.is_some() {
            "Stamps(/clock)"
        } else {
            "Stamps(wall clock)"
        })
    }
}

impl Stamps {
    /// Stamps from `/clock`, through the node's ROS clock.
    pub fn following_clock(node: &mut r2r::Node) -> Result<Self, String> {
        node.get_time_source()
            .enable_sim_time(node)
            .map_err(|e| format!("use_sim_time: {e}"))?;
        Ok(Self {
            ros_clock: Some(node.get_ros_clock()),
        })
    }

    /// Now on the stamps' clock, in seconds; `None` before `/clock` has said.
    pub fn now_s(&self) -> Option<f64> {
        let Some(clock) = &self.ros_clock else {
            return Some(wall_now());
        };
        let now = clock.lock().ok()?.get_now().ok()?;
        (!now.is_zero()).then_some(now.as_secs_f64())
    }

    /// The stamp of a message arriving now (zero before `/clock` has said),
    /// and now on the wall clock, for the latency.
    pub fn arrival(&self) -> (Time, f64) {
        let wall = wall_now();
        let stamp = match &self.ros_clock {
            None => to_ros_time(wall),
            Some(_) => self.now_s().map(to_ros_time).unwrap_or_default(),
        };
        (stamp, wall)
    }
}
