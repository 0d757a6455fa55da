//! One RflySim LiDAR or depth-cloud sensor (parameters `rflysim_config`, `seq_id`) → PointCloud2 and odometry.
//! Parameters: docs/rflysim.md.

fn main() -> std::process::ExitCode {
    rflysim_ros::app::main(rflysim_ros::app::Role::Lidar)
}
