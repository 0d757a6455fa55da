//! Topic names (RflySim's SDK tree, RflySim's SDK: RflyRosStart.py) and frame ids (the rule of
//! [`frames::ids`] under `rflysim/`: RflySim's NED world and FRD body are published as ENU and
//! FLU, REP-103's defaults, so the ids carry no axis suffix).
//!
//! Topic names are relative (`rflysim/sensor3/img_rgb`): in the root
//! namespace they are the SDK's `/rflysim/...` names, and
//! `--ros-args -r __ns:=/drone1` (or a launch file's namespace) moves them,
//! which the SDK's absolute names could not.

use frames::ids;
use rflysim_proto::config::SensorConfig;
use ros_common::diagnostics::{Simulator, StatusId};

pub fn sensor_topic(seq_id: u16, suffix: &str) -> String {
    format!("rflysim/sensor{seq_id}/{suffix}")
}

pub fn odom_topic(copter: u16, global: bool) -> String {
    format!("rflysim/uav{copter}/{}/odom", if global { "global" } else { "local" })
}

/// Odometry from CopterSim's true-state stream.
pub fn state_odom_topic(copter: u16) -> String {
    format!("rflysim/uav{copter}/state/odom")
}

/// `/rflysim/imu` for one vehicle, `/uav<id>/rflysim/imu` for several (RflySim's SDK: RflyRosStart.py).
pub fn imu_topic(copter: u16, several: bool) -> String {
    if several {
        format!("uav{copter}/rflysim/imu")
    } else {
        "rflysim/imu".into()
    }
}

// A macro, not only a `const`: `concat!` builds the `const` world frame from literals alone.
macro_rules! frame_prefix {
    () => {
        "rflysim/"
    };
}
const FRAME_PREFIX: &str = frame_prefix!();

/// ENU world frame for RflySim's global (axis type 1) data.
pub const WORLD_FRAME: &str = frames::map_frame_id!(frame_prefix!());

fn vehicle(copter: u16) -> String {
    format!("uav{copter}")
}

pub fn odom_frame(copter: u16) -> String {
    ids::odom(FRAME_PREFIX, &vehicle(copter))
}

pub fn base_frame(copter: u16) -> String {
    ids::base_link(FRAME_PREFIX, &vehicle(copter))
}

fn sensor_name(cfg: &SensorConfig) -> String {
    format!("sensor{}", cfg.seq_id)
}

/// A sensor's own frame (FLU axes at its mount).
pub fn sensor_frame(cfg: &SensorConfig) -> String {
    ids::sensor(FRAME_PREFIX, &vehicle(cfg.target_copter), &sensor_name(cfg))
}

/// A camera's optical frame (z forward, x right, y down).
pub fn optical_frame(cfg: &SensorConfig) -> String {
    ids::optical(FRAME_PREFIX, &vehicle(cfg.target_copter), &sensor_name(cfg))
}

/// What the `/diagnostics` name of every RflySim stream starts with (the
/// `status` view picks them by it).
pub const DIAGNOSTICS_PREFIX: &str = "rflysim_bridge";

/// The `/diagnostics` name and hardware id of RflySim device `subject`'s
/// (`uav1`, `sensor3`) `stream`: `rflysim_bridge: uav1 imu`, `rflysim/uav1`.
pub fn diagnostics_id(subject: &str, stream: &str) -> StatusId {
    StatusId::of(DIAGNOSTICS_PREFIX, Simulator::RflySim, subject, stream)
}

/// The same for a stream of the whole bridge on `device`: `rflysim_bridge: scene`.
pub fn bridge_diagnostics_id(device: &str, stream: &str) -> StatusId {
    StatusId::bridge_wide(DIAGNOSTICS_PREFIX, Simulator::RflySim, device, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics() {
        assert_eq!(sensor_topic(3, "img_rgb"), "rflysim/sensor3/img_rgb");
        assert_eq!(odom_topic(1, false), "rflysim/uav1/local/odom");
        assert_eq!(odom_topic(2, true), "rflysim/uav2/global/odom");
        assert_eq!(imu_topic(1, false), "rflysim/imu");
        assert_eq!(imu_topic(2, true), "uav2/rflysim/imu");
    }

    #[test]
    fn frames() {
        assert_eq!(WORLD_FRAME, "rflysim/map");
        assert_eq!(odom_frame(2), "rflysim/uav2/odom");
        assert_eq!(base_frame(2), "rflysim/uav2/base_link");
    }
}
