//! Starts and supervises `ros2 launch mavros px4.launch.xml` for every
//! vehicle of `copter_ids`, towards CopterSim at `sim_ip` (spec §9).
//! Parameters: `copter_ids` (default [1]), `sim_ip` (default 127.0.0.1).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rflysim_ros::mavros;
use ros_common::params;
use tokio::signal::unix::SignalKind;

fn main() -> std::process::ExitCode {
    let fail = |e: String| {
        eprintln!("[mavros_launcher] error: {e}");
        std::process::ExitCode::FAILURE
    };
    let ctx = match r2r::Context::create() {
        Ok(c) => c,
        Err(e) => return fail(format!("ROS 2 context: {e}")),
    };
    let node = match r2r::Node::create(ctx, "rflysim_mavros_launcher", "") {
        Ok(n) => n,
        Err(e) => return fail(e.to_string()),
    };
    let logger = node.logger().to_string();
    let ids: Vec<u16> = match params::int_array(&node, "copter_ids", &[1]) {
        Ok(v) => match v
            .iter()
            .map(|&i| u16::try_from(i).ok().filter(|i| *i > 0))
            .collect::<Option<Vec<u16>>>()
        {
            Some(ids) if !ids.is_empty() => ids,
            _ => return fail(format!("parameter copter_ids: {v:?} are not vehicle ids")),
        },
        Err(e) => return fail(e.to_string()),
    };
    let Ok(Ok(sim_ip)) = params::string(&node, "sim_ip", "127.0.0.1").map(|s| s.parse::<std::net::Ipv4Addr>()) else {
        return fail("parameter sim_ip: not an IPv4 address".into());
    };
    let ros2 = match mavros::find_ros2(std::env::var_os("PATH").as_deref())
        .and_then(|r| mavros::check_mavros(&r).map(|()| r))
    {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SignalKind::terminate(), SignalKind::interrupt()] {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok(mut s) = tokio::signal::unix::signal(signal) {
                    s.recv().await;
                }
            });
            stop.store(true, Ordering::Relaxed);
        });
    }
    r2r::log_info!(&logger, "MAVROS for vehicles {ids:?}, CopterSim at {sim_ip}");
    let log = |m: &str| r2r::log_info!(&logger, "{m}");
    match mavros::supervise(&ros2, &ids, sim_ip, &|| stop.load(Ordering::Relaxed), &log) {
        Ok(()) => {
            r2r::log_info!(&logger, "every MAVROS child ended");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
