//! The CopterSim IMU (and true state) of each vehicle in `vehicle_ids` → sensor_msgs/Imu (and odometry).
//! Parameters: docs/rflysim.md.

fn main() -> std::process::ExitCode {
    rflysim_ros::app::main(rflysim_ros::app::Role::Imu)
}
