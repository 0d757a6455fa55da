//! How every bridge executable lives and ends: one tokio runtime for its
//! streams, its nodes spun (each on a thread of its own when they are few)
//! with their parameter services, and an orderly stop on SIGINT or SIGTERM (within a second,
//! whatever happened to the process's output), the nodes dropped last.

use std::process::ExitCode;
use std::time::Duration;

use r2r::Node;
use tokio::runtime::Runtime;
use tokio::sync::watch;

/// How every executable ends: status 0, or `[program] error: <why>` on
/// stderr and status 1. The line goes through `stderr_queue`: it neither
/// panics nor blocks when nobody reads stderr any more.
pub fn exit_code(program: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            stderr_queue::line(format!("[{program}] error: {e}"));
            stderr_queue::flush(Duration::from_millis(200));
            ExitCode::FAILURE
        }
    }
}

/// What a bridge's tasks hold: they end when it turns true.
pub type StopSignal = watch::Receiver<bool>;

/// The runtime of a bridge: two workers (the machines this runs on often
/// have two cores; heavy decoding goes to blocking threads, not to them).
pub fn runtime() -> Result<Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// A stop signal and its sender.
pub fn stop_channel() -> (watch::Sender<bool>, StopSignal) {
    watch::channel(false)
}

/// Resolves at the first SIGINT or SIGTERM.
pub async fn signalled() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(t) => { t.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}

/// Serves the nodes' parameters, spins them, and returns at SIGINT or
/// SIGTERM after stopping every task of `runtime` through `stop`.
pub fn run_until_signalled(runtime: Runtime, mut nodes: Vec<Node>, stop: watch::Sender<bool>, logger: &str) {
    let _guard = runtime.enter();
    // Parameter services (`ros2 param`), and use_sim_time's /clock subscription.
    for node in &mut nodes {
        if let Ok((handler, _events)) = node.make_parameter_handler() {
            runtime.spawn(handler);
        }
    }
    // A few nodes (the AUV and GPS-denied bridges, a RflySim bridge with a
    // sensor or two) get a thread each, blocked in the node's wait set until
    // one of its entities is ready: spinning them in turn with short
    // timeouts woke up 50 times a second per node whatever came, most of an
    // idle bridge's CPU (≈ 1 % of a core; ≈ 0.65 ms of every 20-Hz LiDAR
    // frame). Many nodes share one thread that takes them in turn: a thread
    // each then wakes every one of them for each /clock message and costs
    // each an allocator arena (swarm bench, 16 vehicles with use_sim_time,
    // 49 nodes: 112 % of a core and 237 MB against 85 % and 181 MB).
    let groups: Vec<Vec<Node>> = if nodes.len() <= OWN_THREAD_NODES {
        nodes.into_iter().map(|n| vec![n]).collect()
    } else {
        vec![nodes]
    };
    let spinners: Vec<_> = groups
        .into_iter()
        .map(|mut group| {
            let stop = stop.subscribe();
            let wait = if group.len() == 1 {
                SPIN_WAIT
            } else {
                Duration::from_millis((20 / group.len() as u64).max(1))
            };
            std::thread::Builder::new()
                .name("ros_spin".into())
                .spawn(move || {
                    while !*stop.borrow() {
                        for node in &mut group {
                            node.spin_once(wait);
                        }
                    }
                    group
                })
                .inspect_err(|e| {
                    r2r::log_error!(
                        logger,
                        "cannot start a spinner thread ({e}): its nodes' parameters and subscriptions go unserved"
                    );
                })
        })
        .collect();
    runtime.block_on(signalled());
    r2r::log_info!(logger, "shutting down");
    let _ = stop.send(true);
    runtime.shutdown_timeout(Duration::from_secs(1) / 2);
    // The nodes (and their publishers) go last, after every task using them.
    let _nodes: Vec<Vec<Node>> = spinners.into_iter().filter_map(|s| s.ok()?.join().ok()).collect();
}

/// How long a node's own spinner waits for its entities before it looks at
/// the stop signal again: with the runtime's half second, the stop stays
/// within a second.
const SPIN_WAIT: Duration = Duration::from_millis(200);

/// Up to this many nodes, each has a spinner thread of its own.
const OWN_THREAD_NODES: usize = 4;
