//! A live terminal view of every bridge on the graph: per stream its rate,
//! drops and why, latency and the age of its last message, from
//! `/diagnostics` (`ros_common::status_view`). `ros2 run rflysim_bridge
//! status`; parameters `bridge` (only bridges whose name contains it) and
//! `once` (print one table after `settle` seconds and exit).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use r2r::diagnostic_msgs::msg::DiagnosticArray;
use r2r::QosProfile;
use ros_common::params::{BoolParam, FloatParam, Renamed, StringParam};
use ros_common::status_view::View;

const ONCE: BoolParam = BoolParam::new("once", false, "print one table after `settle_s` seconds and exit");
// Every bridge reports once a second: two reports' worth hears them all.
const SETTLE: FloatParam = FloatParam::new(
    "settle_s",
    2.5,
    0.0..=60.0,
    "with `once`: seconds of listening before the table is printed",
);
const RENAMED: &[Renamed] = &[Renamed::new("settle", "settle_s")];
const BRIDGE: StringParam = StringParam::new(
    "bridge",
    "",
    "only the bridges whose name contains it (\"\": every one)",
);

fn main() -> std::process::ExitCode {
    ros_common::lifecycle::exit_code("status", run())
}

fn run() -> Result<(), String> {
    let ctx = r2r::Context::create().map_err(|e| e.to_string())?;
    let mut node = r2r::Node::create(ctx, "rflysim_status", "").map_err(|e| e.to_string())?;
    ros_common::params::apply_renamed(&node, &[RENAMED])?;
    let once = ONCE.read(&node)?;
    let settle = SETTLE.read(&node)?;
    let only = BRIDGE.read(&node)?;
    if ros_common::params::write_parameters_if_asked("rflysim_status")? {
        return Ok(());
    }
    let mut sub = node
        .subscribe::<DiagnosticArray>("/diagnostics", QosProfile::default().keep_last(50).reliable())
        .map_err(|e| e.to_string())?;
    let mut view = View::default();
    let tty = std::io::stdout().is_terminal();
    let started = Instant::now();
    let mut next_print = started + Duration::from_secs_f64(if once { settle } else { 1.0 });
    loop {
        node.spin_once(Duration::from_millis(50));
        while let Some(Some(a)) = sub.next().now_or_never() {
            view.take(a, &only);
        }
        if Instant::now() < next_print {
            continue;
        }
        next_print += Duration::from_secs(1);
        if view.is_empty() {
            if once && started.elapsed() > Duration::from_secs_f64(settle + 15.0) {
                return Err("no bridge's diagnostics on /diagnostics".into());
            }
            continue;
        }
        let clear = if tty { "\x1b[2J\x1b[H" } else { "" };
        print!("{clear}{}", view.render());
        let _ = std::io::stdout().flush();
        if once {
            return Ok(());
        }
    }
}
