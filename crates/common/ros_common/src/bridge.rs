//! The skeleton every bridge executable stands on: the ROS context on the
//! package's DDS profile, the main node, the runtime, one stop signal, the
//! latched static TF, the streams `/diagnostics` reports on, and the
//! threads to join before the nodes go. A bridge adds its settings, its wire
//! loops and its conversions; [`BridgeProcess::run`] does the rest.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use r2r::tf2_msgs::msg::TFMessage;
use r2r::{Context, Node, Publisher};
use tokio::runtime::{Handle, Runtime};
use tokio::sync::watch;

use crate::command::{CommandSender, CommandTransport};
use crate::diagnostics::{Reporter, StatusId, Watched, WatchedClock};
use crate::lifecycle::{SpinnerTask, SpunNode, StopSignal};
use crate::stats::StreamStats;
use crate::tf::Mount;
use crate::time::{to_ros_time, wall_now, ClockPublisher, StampSource, TimeBase, TimeBases};

/// A bridge process while it starts, then while it runs.
pub struct BridgeProcess {
    ctx: Context,
    /// The node the bridge's own topics, `/diagnostics` and `/tf_static` are on.
    pub node: Node,
    pub logger: String,
    runtime: Runtime,
    stop_tx: watch::Sender<bool>,
    stop: StopSignal,
    /// More nodes of the process (RflySim: one per sensor and vehicle).
    nodes: Vec<SpunNode>,
    watched: Vec<Watched>,
    clocks: Vec<WatchedClock>,
    threads: Vec<JoinHandle<()>>,
    /// Kept for late subscribers: the latched mounts.
    static_tf: Option<Publisher<TFMessage>>,
    /// The command sender's count of neutral commands owed at its stop.
    neutrals_owed: Option<Arc<AtomicUsize>>,
}

impl std::fmt::Debug for BridgeProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeProcess")
            .field("logger", &self.logger)
            .field("watched", &self.watched.len())
            .finish_non_exhaustive()
    }
}

impl BridgeProcess {
    /// The context (on the package's DDS profile, logged), node `name` in
    /// `namespace` (when `__ns` does not say otherwise), the runtime and the
    /// stop signal. Freed frame buffers are kept for the next frame.
    pub fn start(name: &str, namespace: &str) -> Result<Self, String> {
        // From the first moment: a Ctrl-C during the start-up is a clean stop
        // after it, not a kill that leaves the DDS shared memory behind.
        process_support::stop_signal::catch_stop_signals().map_err(|e| format!("catching SIGINT/SIGTERM: {e}"))?;
        crate::memory::keep_frame_buffers();
        let (ctx, dds_profile) = crate::dds::context()?;
        let node = Node::create(ctx.clone(), name, namespace).map_err(|e| e.to_string())?;
        let logger = node.logger().to_string();
        crate::dds::log_profile(&logger, dds_profile.as_deref());
        let runtime = crate::lifecycle::runtime()?;
        let (stop_tx, stop) = crate::lifecycle::stop_channel();
        Ok(Self {
            ctx,
            node,
            logger,
            runtime,
            stop_tx,
            stop,
            nodes: Vec::new(),
            watched: Vec::new(),
            clocks: Vec::new(),
            threads: Vec::new(),
            static_tf: None,
            neutrals_owed: None,
        })
    }

    /// The time base of a bridge with one simulator clock and, under
    /// `use_sim_time`, the `/clock` publisher on the main node.
    pub fn time_base(
        &mut self,
        use_sim_time: bool,
        source: StampSource,
    ) -> Result<(Arc<TimeBase>, Option<Arc<ClockPublisher>>), String> {
        Ok((
            Arc::new(TimeBase::with_source(use_sim_time, source)),
            self.clock(use_sim_time)?,
        ))
    }

    /// The same for a bridge with a clock per simulator instance (a swarm's CopterSims).
    pub fn time_bases(
        &mut self,
        use_sim_time: bool,
        source: StampSource,
    ) -> Result<(Arc<TimeBases>, Option<Arc<ClockPublisher>>), String> {
        Ok((
            Arc::new(TimeBases::new(use_sim_time, source)),
            self.clock(use_sim_time)?,
        ))
    }

    fn clock(&mut self, use_sim_time: bool) -> Result<Option<Arc<ClockPublisher>>, String> {
        use_sim_time
            .then(|| ClockPublisher::new(&mut self.node).map(Arc::new))
            .transpose()
            .map_err(|e| e.to_string())
    }

    /// The runtime's handle: `handle().enter()` while creating what needs
    /// its reactor (tokio sockets), `handle().spawn(..)` for the loops.
    pub fn handle(&self) -> Handle {
        self.runtime.handle().clone()
    }

    pub fn stop_signal(&self) -> StopSignal {
        self.stop.clone()
    }

    /// Publishes the mounts once on `/tf_static`, latched for late
    /// subscribers; stamped 0 under `use_sim_time` (valid at any sim time).
    pub fn static_tf(&mut self, use_sim_time: bool, mounts: &[Mount]) -> Result<(), String> {
        let p = self
            .node
            .create_publisher::<TFMessage>("/tf_static", crate::qos::latched())
            .map_err(|e| e.to_string())?;
        let stamp = to_ros_time(if use_sim_time { 0.0 } else { wall_now() });
        let transforms = mounts.iter().map(|m| m.stamped(stamp.clone())).collect();
        p.publish(&TFMessage { transforms }).map_err(|e| e.to_string())?;
        self.static_tf = Some(p);
        Ok(())
    }

    /// A stream `/diagnostics` reports on, as `id`.
    pub fn watch(&mut self, id: StatusId, stats: Arc<StreamStats>) {
        self.watched.push(Watched { id, stats });
    }

    /// A simulator instance's time base `/diagnostics` reports on: where
    /// its stamps come from, the simulator PC's clock offset and drift.
    pub fn watch_time_base(&mut self, id: StatusId, base: Arc<TimeBase>) {
        self.clocks.push(WatchedClock { id, base });
    }

    /// A node of the process besides the main one (add it with [`Self::add_node`]).
    pub fn create_node(&self, name: &str) -> Result<Node, String> {
        Node::create(self.ctx.clone(), name, "").map_err(|e| e.to_string())
    }

    /// How many nodes the process spins.
    pub fn node_count(&self) -> usize {
        1 + self.nodes.len()
    }

    /// Another node of the process, spun with the main one.
    pub fn add_node(&mut self, node: Node) {
        self.nodes.push(node.into());
    }

    /// Another node, whose subscriptions `task` alone takes, on the node's
    /// spinner thread (see [`SpunNode`]).
    pub fn add_node_with_task(&mut self, node: Node, task: SpinnerTask) {
        self.nodes.push(SpunNode { node, task: Some(task) });
    }

    /// A thread of the bridge, joined at the stop before the nodes go.
    pub fn thread(&mut self, name: &str, body: impl FnOnce() + Send + 'static) -> Result<(), String> {
        let t = std::thread::Builder::new()
            .name(name.into())
            .spawn(body)
            .map_err(|e| format!("thread {name}: {e}"))?;
        self.threads.push(t);
        Ok(())
    }

    /// Calls `f` at the stop, from a thread of its own blocked until then
    /// (not a task: the runtime's tasks may be dropped at the stop before
    /// they run): for ending a wait that blocks a thread of the bridge, such
    /// as a socket's `recv`.
    pub fn at_stop(&mut self, name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), String> {
        let mut stop = self.stop.clone();
        self.thread(name, move || {
            let _ = futures::executor::block_on(stop.wait_for(|stopped| *stopped));
            f();
        })
    }

    /// A wire loop on a thread of its own, on a single-threaded runtime: for
    /// a loop that blocks on its transport (the AeroSim topics reader), which
    /// would hold up the shared runtime's workers. `body` must end at the
    /// stop signal; the thread is joined then.
    pub fn loop_thread(
        &mut self,
        name: &str,
        body: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("runtime of {name}: {e}"))?;
        self.thread(name, move || runtime.block_on(body))
    }

    /// The command sender's thread: it runs until the stop, then sends the
    /// neutral command to every vehicle with a command in force before the
    /// process exits (with status 1 when one could not be delivered).
    pub fn command_sender<T: CommandTransport + 'static>(
        &mut self,
        mut sender: CommandSender<T>,
    ) -> Result<(), String> {
        let stop = self.stop.clone();
        self.neutrals_owed = Some(sender.owed_at_stop());
        let waker = sender.waker();
        self.at_stop("commands_stop", move || waker.wake())?;
        self.thread("commands", move || sender.run(move || *stop.borrow()))
    }

    /// Publishes `/diagnostics` every `diagnostics_period`, serves and spins
    /// the nodes until SIGINT or SIGTERM, then stops every task and thread
    /// and publishes the last diagnostics (what the stop did included).
    pub fn run(self, diagnostics_period: Duration) -> Result<(), String> {
        // Asked only for its parameters: it stops at once, the usual way.
        let wait_for_signal = !crate::params::write_parameters_if_asked(&self.logger)?;
        let mut nodes = vec![SpunNode::from(self.node)];
        let reporter = if self.watched.is_empty() && self.clocks.is_empty() {
            None
        } else {
            let p = crate::diagnostics::publisher(&mut nodes[0].node).map_err(|e| e.to_string())?;
            let reporter = Arc::new(Mutex::new(Reporter::new(p, self.watched, self.clocks)));
            self.runtime.spawn(crate::diagnostics::run(
                reporter.clone(),
                diagnostics_period,
                self.stop.clone(),
            ));
            Some(reporter)
        };
        nodes.extend(self.nodes);
        let last_report = move || {
            if let Some(r) = reporter {
                r.lock().unwrap_or_else(|e| e.into_inner()).publish();
            }
        };
        crate::lifecycle::run_until_signalled(
            self.runtime,
            nodes,
            self.stop_tx,
            self.threads,
            &self.logger,
            last_report,
            wait_for_signal,
        );
        drop(self.static_tf);
        match self.neutrals_owed.map_or(0, |n| n.load(Ordering::Relaxed)) {
            0 => Ok(()),
            n => Err(format!(
                "{n} vehicle(s) got no neutral command at the stop and may keep their last command"
            )),
        }
    }
}
