//! The GPS-denied landing drone: JSON telemetry → typed ROS 2
//! topics, typed commands → JSON. Parameters: see the README.

fn main() -> std::process::ExitCode {
    gps_denied_ros::main()
}
