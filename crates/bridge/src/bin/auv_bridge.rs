//! The ZeroMQ AUV simulator ↔ ROS 2: both cameras, pose, odometry
//! and TF of every AUV of `auv_ids`, thruster commands and cmd_vel back.
//! Parameters: docs/auv.md.

fn main() -> std::process::ExitCode {
    auv_ros::main()
}
