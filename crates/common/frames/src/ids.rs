//! Frame ids, one rule for every bridge (docs/names.md): REP-105's names
//! (`map`, `odom`, `base_link`) carry REP-103's default axes (ENU world, FLU
//! body) and no suffix; only a frame with other axes says so (`_optical`).
//! `prefix` is empty or ends in `/` (`rflysim/`, a bridge's `frame_prefix`).

/// `<prefix>map` as a literal, for a frame id that must be a `const`.
#[macro_export]
macro_rules! map_frame_id {
    ($prefix:expr) => {
        concat!($prefix, "map")
    };
}

/// The world frame's name after the prefix (the default of `world_frame_id`).
pub const MAP: &str = map_frame_id!("");

/// The world, no vehicle: `<prefix><name>`.
pub fn world(prefix: &str, name: &str) -> String {
    format!("{prefix}{name}")
}

/// A vehicle's odometry frame, ENU, continuous: `<prefix><vehicle>/odom`.
pub fn odom(prefix: &str, vehicle: &str) -> String {
    format!("{prefix}{vehicle}/odom")
}

/// A vehicle's body, FLU: `<prefix><vehicle>/base_link`.
pub fn base_link(prefix: &str, vehicle: &str) -> String {
    format!("{prefix}{vehicle}/base_link")
}

/// A sensor at its mount, x along where it looks (a LiDAR's FLU, a range
/// sensor's beam): `<prefix><vehicle>/<sensor>`.
pub fn sensor(prefix: &str, vehicle: &str, sensor: &str) -> String {
    format!("{prefix}{vehicle}/{sensor}")
}

/// A camera's optical frame (z forward, x right, y down):
/// `<prefix><vehicle>/<camera>_optical`.
pub fn optical(prefix: &str, vehicle: &str, camera: &str) -> String {
    format!("{prefix}{vehicle}/{camera}_optical")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rep_105_names_without_axis_suffixes() {
        assert_eq!(map_frame_id!("rflysim/"), "rflysim/map");
        assert_eq!(world("auv/", MAP), "auv/map");
        assert_eq!(odom("rflysim/", "uav1"), "rflysim/uav1/odom");
        assert_eq!(base_link("", "auv0"), "auv0/base_link");
        assert_eq!(sensor("rflysim/", "uav2", "sensor3"), "rflysim/uav2/sensor3");
        assert_eq!(optical("auv/", "auv0", "front_camera"), "auv/auv0/front_camera_optical");
    }
}
