//! AeroSim over Kafka: vehicle state, flight display, cameras and clock →
//! typed ROS 2 topics, ROS commands → AeroSim's command topics.
//! Parameters: docs/aerosim.md.

fn main() -> std::process::ExitCode {
    aerosim_ros::main()
}
