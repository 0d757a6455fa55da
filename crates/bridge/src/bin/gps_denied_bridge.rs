//! The GPS-denied landing drone: JSON telemetry → typed ROS 2
//! topics, typed commands → JSON. Parameters: docs/gps-denied.md.

fn main() -> std::process::ExitCode {
    gps_denied_ros::main()
}
