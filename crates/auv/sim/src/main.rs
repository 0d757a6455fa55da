//! `auv_sim`: the ZeroMQ AUV simulator emulator. See `--help`.

use std::process::ExitCode;
use std::sync::Arc;

use auv_sim::faults::AuvFault;
use auv_sim::options::parse_args;
use auv_sim::sim::{say, Report, Simulator};
use process_support::faults::FaultKind;

fn main() -> ExitCode {
    let options = match parse_args(std::env::args_os()) {
        Ok(o) => o,
        // --help, or why the command line is refused (exit status 2).
        Err(e) => e.exit(),
    };
    let sim = match Simulator::start(options) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            say(&e);
            return ExitCode::FAILURE;
        }
    };
    let p = sim.ports();
    say(&format!(
        "bound: images {}, thrusters {}, telemetry {}",
        p.image, p.thruster, p.telemetry
    ));
    let waiter = sim.clone();
    process_support::stop_signal::run_until_signal(
        move || waiter.wait(),
        |signal| {
            say(&format!("{signal}: stopping"));
            sim.request_stop();
        },
    );
    let report = sim.report();
    say(&summary(&report));
    if report.error.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn summary(r: &Report) -> String {
    let bad: Vec<String> = r
        .thrusters
        .by_kind()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k}={n}"))
        .collect();
    let f = |c: &auv_sim::faults::FaultCounts| {
        AuvFault::ALL
            .iter()
            .map(|k| format!("{}={}", k.name(), c.get(*k)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "sent {} image and {} telemetry messages; thruster commands: {} good, bad [{}]; \
         faults: images [{}] telemetry [{}]; restarts {}",
        r.image_messages,
        r.telemetry_messages,
        r.thrusters.good,
        bad.join(" "),
        f(&r.image_faults),
        f(&r.telemetry_faults),
        r.restarts
    )
}
