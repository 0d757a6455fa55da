//! Every sensor of a RflySim Config.json (parameter `rflysim_config`), and the IMU and true state of `copter_ids`, in one process: one r2r node per sensor, one runtime.
//! Parameters: docs/rflysim.md.

fn main() -> std::process::ExitCode {
    rflysim_ros::app::main(rflysim_ros::app::Role::Bridge)
}
