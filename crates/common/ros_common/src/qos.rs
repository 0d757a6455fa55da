//! Quality-of-service choices shared by every publisher of every bridge.

use r2r::QosProfile;

/// Default history depth for sensor topics (a ROS parameter, `qos_depth`, overrides it).
pub const DEFAULT_SENSOR_DEPTH: usize = 5;

/// QoS for sensor data publishers.
///
/// Reliable and volatile: a reliable publisher is matched by reliable
/// subscribers (rviz2's default) *and* by best-effort ones, whereas the
/// `sensor_data` profile (best effort) is invisible to reliable subscribers.
/// A short history keeps a slow subscriber from holding many frames.
pub fn sensor_publisher(depth: usize) -> QosProfile {
    QosProfile::default().keep_last(depth.max(1)).reliable().volatile()
}

/// QoS of `/tf`: what tf2's listeners subscribe with (reliable, volatile,
/// a history deep enough for bursts of transforms).
pub fn tf() -> QosProfile {
    QosProfile::default().keep_last(100).reliable()
}

/// QoS for data that a late subscriber still needs (static transforms).
pub fn latched() -> QosProfile {
    QosProfile::default().keep_last(1).reliable().transient_local()
}

/// QoS of commands and control messages a node subscribes to or sends:
/// reliable, a short history (a command is not to be lost, nor replayed late).
pub fn commands() -> QosProfile {
    QosProfile::default().keep_last(10).reliable()
}

/// QoS of `/diagnostics`: reliable, as `diagnostic_aggregator` and
/// `rqt_runtime_monitor` subscribe.
pub fn diagnostics() -> QosProfile {
    QosProfile::default().keep_last(10).reliable()
}
