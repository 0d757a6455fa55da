//! Stamps for what carries no time of its own (a reply, a status echo, a
//! simulator that sends none): the arrival, on the wall clock, or with
//! `use_sim_time` on the node's ROS clock, which follows `/clock` whatever
//! publishes it (zero until its first message, as for any ROS node).

use std::sync::{Arc, Mutex};

use r2r::builtin_interfaces::msg::Time;

use super::{to_ros_time, wall_now};

#[derive(Clone, Default)]
pub struct ArrivalStamps {
    /// The node's ROS clock, following `/clock` (`None`: the wall clock).
    ros_clock: Option<Arc<Mutex<r2r::Clock>>>,
}

impl std::fmt::Debug for ArrivalStamps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ros_clock.is_some() {
            "ArrivalStamps(/clock)"
        } else {
            "ArrivalStamps(wall clock)"
        })
    }
}

impl ArrivalStamps {
    /// With `use_sim_time`, stamps from `/clock` through `node`'s ROS clock
    /// (`node` subscribes to it); else the wall clock. Once per node.
    pub fn for_node(node: &mut r2r::Node, use_sim_time: bool) -> Result<Self, String> {
        if !use_sim_time {
            return Ok(Self::default());
        }
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

    /// The stamp of what arrives now (zero before `/clock` has said).
    pub fn now(&self) -> Time {
        self.arrival().0
    }

    /// The stamp of what arrives now, and now on the wall clock (for a latency).
    pub fn arrival(&self) -> (Time, f64) {
        let wall = wall_now();
        let stamp = match &self.ros_clock {
            None => to_ros_time(wall),
            Some(_) => self.now_s().map(to_ros_time).unwrap_or_default(),
        };
        (stamp, wall)
    }
}
