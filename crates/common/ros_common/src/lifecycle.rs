//! How every bridge executable lives and ends: one tokio runtime for its
//! streams, its nodes spun (each on a thread of its own when they are few)
//! with their parameter services, and an orderly stop on SIGINT or SIGTERM (within a second,
//! whatever happened to the process's output), the nodes dropped last.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

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
            process_support::stderr_queue::line(format!("[{program}] error: {e}"));
            process_support::stderr_queue::flush(Duration::from_millis(200));
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

/// A flag set at the first SIGINT or SIGTERM, for a program that loops on
/// its own thread with no runtime (test fixtures, benchmark references).
/// Killed by either signal instead, a ROS 2 process leaves its Fast DDS
/// shared-memory segment in /dev/shm (64 MB with the large-data profile);
/// ending its loop and returning drops its nodes, and Fast DDS removes it.
/// The handlers are in place when this returns.
pub fn stop_flag_at_signal() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    if process_support::stop_signal::catch_stop_signals().is_ok() {
        let flag = stop.clone();
        let _ = std::thread::Builder::new().name("stop_signals".into()).spawn(move || {
            if process_support::stop_signal::wait_for_stop(None) {
                flag.store(true, Ordering::Relaxed);
            }
        });
    }
    stop
}

/// Sets the node's `use_sim_time` parameter if it has one; returns what it
/// was. (r2r's own switch for its /clock subscription exists only in some of
/// its builds; the parameter it reads exists in all.)
fn set_use_sim_time(node: &Node, on: bool) -> bool {
    let mut params = node.params.lock().unwrap_or_else(|e| e.into_inner());
    match params.get_mut("use_sim_time") {
        Some(p) => match std::mem::replace(&mut p.value, r2r::ParameterValue::Bool(on)) {
            r2r::ParameterValue::Bool(was) => was,
            other => {
                p.value = other;
                false
            }
        },
        None => false,
    }
}

/// A task that takes only what its node's subscriptions deliver.
pub type SpinnerTask = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A node to spin, and maybe the one task its subscriptions feed, run on
/// the node's spinner thread right after each spin: the message is handled
/// where it was taken, with no wake-up of a runtime worker in between (for
/// a stream where that hand-off costs as much as the work: the scene's
/// bulk poses). The task must not block, and ends with the spinner.
pub struct SpunNode {
    pub node: Node,
    pub task: Option<SpinnerTask>,
}

impl std::fmt::Debug for SpunNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpunNode")
            .field("node", &self.node.name().unwrap_or_default())
            .field("task", &self.task.is_some())
            .finish()
    }
}

impl From<Node> for SpunNode {
    fn from(node: Node) -> Self {
        Self { node, task: None }
    }
}

impl SpunNode {
    fn spin(&mut self, wait: Duration) {
        self.node.spin_once(wait);
        if let Some(task) = &mut self.task {
            // Polled after every spin, so it needs no waker of its own.
            if let Poll::Ready(()) = task.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                self.task = None;
            }
        }
    }
}

/// Serves the nodes' parameters, spins them, and returns at SIGINT or
/// SIGTERM after stopping every task of `runtime` through `stop`, joining
/// `threads` (a command sender's last neutral command may still need its
/// node's publisher) and calling `last` while the nodes are still there.
pub fn run_until_signalled(
    runtime: Runtime,
    mut nodes: Vec<SpunNode>,
    stop: watch::Sender<bool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    logger: &str,
    last: impl FnOnce(),
    wait_for_signal: bool,
) {
    let _guard = runtime.enter();
    // Parameter services (`ros2 param`). Under use_sim_time the handler
    // would also subscribe the node to /clock for its ROS clock, which only a
    // node stamping on arrival reads, and that one subscribed itself
    // (`ArrivalStamps::for_node`); elsewhere stamps come from the time base
    // and the subscription would only wake the node once per tick.
    for SpunNode { node, .. } in &mut nodes {
        let use_sim_time = set_use_sim_time(node, false);
        if let Ok((handler, _events)) = node.make_parameter_handler() {
            runtime.spawn(handler);
        }
        set_use_sim_time(node, use_sim_time);
    }
    // A few nodes get a thread each, blocked in their wait set (polling in
    // turn woke an idle bridge 50 times a second per node); many share one
    // thread at `RoundPace` (the swarm bench, when every node still took
    // /clock: 85 % of a core against 112 % with a thread each at 49 nodes).
    let wake = SpinnerWake::new(&mut nodes);
    let lone_wait = if wake.is_some() { WOKEN_SPIN_WAIT } else { SPIN_WAIT };
    let groups: Vec<Vec<SpunNode>> = if nodes.len() <= OWN_THREAD_NODES {
        nodes.into_iter().map(|n| vec![n]).collect()
    } else {
        vec![nodes]
    };
    let spinners: Vec<_> = groups
        .into_iter()
        .map(|mut group| {
            let stop = stop.subscribe();
            std::thread::Builder::new()
                .name("ros_spin".into())
                .spawn(move || {
                    let mut pace = RoundPace::new(group.len(), lone_wait);
                    while !*stop.borrow() {
                        let mut busy = false;
                        for node in &mut group {
                            let began = Instant::now();
                            node.spin(pace.wait());
                            // Back before its time: one of its entities was ready.
                            busy |= began.elapsed() < pace.wait();
                        }
                        pace.round_done(busy);
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
    // A plain wait on the signal pipe: it needs no worker of the runtime free.
    if wait_for_signal {
        process_support::stop_signal::wait_for_stop(None);
    }
    r2r::log_info!(logger, "shutting down");
    // Ctrl-C under `ros2 launch` comes twice at once; one more after the
    // grace is the user insisting: it ends the process, whatever still runs.
    let _ = std::thread::Builder::new().name("second_signal".into()).spawn(|| {
        std::thread::sleep(process_support::stop_signal::SECOND_SIGNAL_GRACE);
        process_support::stop_signal::restore_default_handlers();
    });
    let _ = stop.send(true);
    if let Some(wake) = &wake {
        wake.wake();
    }
    runtime.shutdown_timeout(Duration::from_secs(1) / 2);
    for t in threads {
        let _ = t.join();
    }
    last();
    // The nodes (and their publishers) go last, after every task using them.
    let _nodes: Vec<Vec<SpunNode>> = spinners.into_iter().filter_map(|s| s.ok()?.join().ok()).collect();
}

/// How long a node's own spinner waits for its entities before it looks at
/// the stop signal again, if [`SpinnerWake`] could not be set up: with the
/// runtime's half second, the stop stays within a second.
const SPIN_WAIT: Duration = Duration::from_millis(200);

/// The same, with a [`SpinnerWake`] to end the wait at the stop: only a
/// lost wake-up would make the stop wait this long.
const WOKEN_SPIN_WAIT: Duration = Duration::from_secs(2);

/// Ends every spinner's wait at the stop. Every node subscribes to a hidden
/// topic that is this process's own, and one message on it makes every
/// node's wait set ready. Without it a spinner woke five times a second
/// to look at the stop signal, making and tearing down a wait set each
/// time: ~1.5 ms of CPU a second for a bridge of three nodes here, 0.07 ms
/// of every frame of a 20-Hz LiDAR.
struct SpinnerWake {
    publisher: r2r::Publisher<r2r::std_msgs::msg::Empty>,
}

impl SpinnerWake {
    fn new(nodes: &mut [SpunNode]) -> Option<Self> {
        // Unique to this process on any host of the domain: another's
        // message would take the one this process's stop needs.
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let topic = format!("/_rflysim_bridge/stop_{}_{started}", std::process::id());
        let qos = r2r::QosProfile::default().reliable().keep_last(1);
        for SpunNode { node, .. } in nodes.iter_mut() {
            // The stream is not kept: r2r then drops the subscription when
            // its one message has woken the node.
            drop(node.subscribe::<r2r::std_msgs::msg::Empty>(&topic, qos.clone()).ok()?);
        }
        let publisher = nodes.first_mut()?.node.create_publisher(&topic, qos).ok()?;
        Some(Self { publisher })
    }

    fn wake(&self) {
        let _ = self.publisher.publish(&r2r::std_msgs::msg::Empty {});
    }
}

/// Up to this many nodes, each has a spinner thread of its own.
const OWN_THREAD_NODES: usize = 4;

/// How long a thread waits on each node in turn. A node alone waits as long
/// as the stop allows: its wait ends as soon as one of its entities is
/// ready. Nodes that share a thread wait a slice of a round each: a round
/// of [`BUSY_ROUND`] while any of them had something to do in the last
/// round (a parameter request, a command), then twice as long each idle
/// round up to [`IDLE_ROUND`]. Rounds of 20 ms whatever came cost an idle
/// RflySim bridge of the shipped config (13 nodes) 3-5 % of a core, a wait
/// set made and torn down 650 times a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RoundPace {
    busy: Duration,
    idle: Duration,
    now: Duration,
}

/// A round of the nodes sharing a thread while they have work.
const BUSY_ROUND: Duration = Duration::from_millis(20);

/// A round of the nodes sharing a thread when none has had work for a
/// while: what the first request to an idle bridge may wait.
const IDLE_ROUND: Duration = Duration::from_millis(200);

impl RoundPace {
    /// For `nodes` on one thread; a lone node waits `lone_wait`.
    fn new(nodes: usize, lone_wait: Duration) -> Self {
        if nodes <= 1 {
            return Self {
                busy: lone_wait,
                idle: lone_wait,
                now: lone_wait,
            };
        }
        let n = u32::try_from(nodes).unwrap_or(u32::MAX);
        let busy = (BUSY_ROUND / n).max(Duration::from_millis(1));
        let idle = (IDLE_ROUND / n).max(busy);
        Self { busy, idle, now: busy }
    }

    fn wait(&self) -> Duration {
        self.now
    }

    fn round_done(&mut self, busy: bool) {
        self.now = if busy { self.busy } else { (self.now * 2).min(self.idle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_rounds_slow_down_when_idle_and_speed_up_at_work() {
        let mut pace = RoundPace::new(10, WOKEN_SPIN_WAIT);
        assert_eq!(pace.wait(), Duration::from_millis(2));
        let waits: Vec<u128> = (0..6)
            .map(|_| {
                pace.round_done(false);
                pace.wait().as_millis()
            })
            .collect();
        assert_eq!(waits, [4, 8, 16, 20, 20, 20], "a round of 10 nodes grows to IDLE_ROUND");
        pace.round_done(true);
        assert_eq!(pace.wait(), Duration::from_millis(2));
    }

    #[test]
    fn a_lone_node_always_waits_all_it_may_and_many_wait_a_millisecond() {
        let mut pace = RoundPace::new(1, WOKEN_SPIN_WAIT);
        pace.round_done(true);
        assert_eq!(pace.wait(), WOKEN_SPIN_WAIT);
        let mut many = RoundPace::new(49, WOKEN_SPIN_WAIT);
        assert_eq!(many.wait(), Duration::from_millis(1));
        for _ in 0..10 {
            many.round_done(false);
        }
        assert_eq!(many.wait(), IDLE_ROUND / 49);
    }
}
