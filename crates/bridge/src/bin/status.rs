//! A live terminal view of the bridge: per stream its rate, drops, latency
//! and the age of its last frame, from `/diagnostics`. `ros2 run
//! rflysim_bridge status`; parameter `once` (print one table and exit).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use r2r::diagnostic_msgs::msg::DiagnosticArray;
use r2r::QosProfile;
use rflysim_ros::names::DIAGNOSTICS_PREFIX;
use ros_common::diagnostics::keys;

fn value<'a>(s: &'a r2r::diagnostic_msgs::msg::DiagnosticStatus, key: &str) -> &'a str {
    s.values
        .iter()
        .find(|kv| kv.key == key)
        .map_or("–", |kv| kv.value.as_str())
}

fn main() -> std::process::ExitCode {
    ros_common::lifecycle::exit_code("status", run())
}

fn run() -> Result<(), String> {
    let ctx = r2r::Context::create().map_err(|e| e.to_string())?;
    let mut node = r2r::Node::create(ctx, "rflysim_status", "").map_err(|e| e.to_string())?;
    let once = ros_common::params::boolean(&node, "once", false).map_err(|e| e.to_string())?;
    let mut sub = node
        .subscribe::<DiagnosticArray>("/diagnostics", QosProfile::default().keep_last(50).reliable())
        .map_err(|e| e.to_string())?;
    let mut latest: BTreeMap<String, r2r::diagnostic_msgs::msg::DiagnosticStatus> = BTreeMap::new();
    let tty = std::io::stdout().is_terminal();
    let mut next_print = Instant::now() + Duration::from_secs(1);
    let started = Instant::now();
    loop {
        node.spin_once(Duration::from_millis(50));
        while let Some(Some(a)) = sub.next().now_or_never() {
            for s in a.status {
                if s.name.starts_with(DIAGNOSTICS_PREFIX) {
                    latest.insert(s.name.clone(), s);
                }
            }
        }
        if Instant::now() < next_print {
            continue;
        }
        next_print += Duration::from_secs(1);
        if latest.is_empty() {
            if once && started.elapsed() > Duration::from_secs(15) {
                return Err(format!("no {DIAGNOSTICS_PREFIX} diagnostics on /diagnostics"));
            }
            continue;
        }
        let mut out = String::new();
        if tty {
            out.push_str("\x1b[2J\x1b[H");
        }
        out.push_str(&format!(
            "{:<48} {:>8} {:>9} {:>9} {:>11} {:>9}  status\n",
            "stream", "rate Hz", "frames", "dropped", "latency ms", "age s"
        ));
        for (name, s) in &latest {
            out.push_str(&format!(
                "{:<48} {:>8} {:>9} {:>9} {:>11} {:>9}  {}\n",
                name.trim_start_matches(DIAGNOSTICS_PREFIX).trim_start_matches(": "),
                value(s, keys::RATE_HZ),
                value(s, keys::FRAMES_PUBLISHED),
                value(s, keys::FRAMES_DROPPED),
                value(s, keys::LATENCY_MS),
                value(s, keys::LAST_FRAME_AGE_S),
                s.message
            ));
        }
        print!("{out}");
        let _ = std::io::stdout().flush();
        if once {
            return Ok(());
        }
    }
}
