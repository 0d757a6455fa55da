//! Starts and supervises `ros2 launch mavros px4.launch.xml` for every
//! vehicle of `vehicle_ids`, towards CopterSim at `sim_host` (RflySim's SDK: RflyRosStart.py).
//! Parameters: `vehicle_ids` (default [1]), `sim_host` (default 127.0.0.1; a host name is looked up at start).
//! Started with `--mavros-keeper …` it is instead one vehicle's keeper
//! (`rflysim_mavros::keeper`).

use std::process::ExitCode;
use std::time::Duration;

use rflysim_mavros::{self as mavros, keeper, process};
use rflysim_ros::settings;

fn log(message: &str) {
    process::log_line(format!("[mavros_launcher] {message}"));
}

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    if let Some(code) = keeper::run_if_asked(&args) {
        return ExitCode::from(code);
    }
    // Before anything else: a signal during start-up must not leave children.
    let result = match process::catch_stop_signals() {
        Ok(()) => run(),
        Err(e) => Err(format!("cannot catch SIGINT and SIGTERM: {e}")),
    };
    let code = ros_common::lifecycle::exit_code("mavros_launcher", result);
    process::flush_log(Duration::from_millis(200));
    code
}

fn run() -> Result<(), String> {
    let ctx = r2r::Context::create().map_err(|e| format!("ROS 2 context: {e}"))?;
    let node = r2r::Node::create(ctx, "rflysim_mavros_launcher", "").map_err(|e| e.to_string())?;
    settings::take_former_names(&node)?;
    let ids = settings::copter_ids(&node)?;
    let sim_host = settings::sim_host(&node)?;
    if ros_common::params::write_parameters_if_asked("rflysim_mavros_launcher")? {
        return Ok(());
    }
    let ros2 = mavros::find_ros2(std::env::var_os("PATH").as_deref())?;
    match mavros::check_mavros(&ros2, &process::stop_requested) {
        Err(e) if e == mavros::STOPPED => {}
        result => result?,
    }
    if process::stop_requested() {
        log("stopped during start-up");
        return Ok(());
    }
    // MAVROS is given the address the name has at start.
    log(&format!(
        "MAVROS for vehicles {ids:?}, CopterSim at {}",
        sim_host.describe()
    ));
    mavros::supervise(&ros2, &ids, sim_host.ip(), &process::stop_requested, &log);
    log("every MAVROS process group ended");
    Ok(())
}
