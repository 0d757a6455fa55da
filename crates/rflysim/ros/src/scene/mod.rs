//! RflySim3D's scene on ROS 2, through the standard Simulation Interfaces
//! (`simulation_interfaces` 2.1): spawn, move, query and delete vehicles,
//! query scene objects by name, their bounds, maps; a console service, a bulk
//! path that places a swarm in as few datagrams as the wire allows, each
//! vehicle's collisions, pose and scan lines as RflySim3D reports them and
//! its label; the ground's height from RflySim's map files.
//!
//! Units, from RflySim3D's own documents: every pose RflySim3D takes or
//! reports is NED metres with roll, pitch, yaw in radians, its replies'
//! `PosUE` and box origin included (its "cm" is its internal unit and
//! `RflySetPosScale`'s, left at 1); a box's extents are half sizes along the
//! object's forward, right and up axes. ROS sees ENU / FLU (REP-103).
//!
//! Nothing here blocks the node: a call that needs RflySim3D's answer waits
//! on a task of its own, at most `scene_timeout`, and answers with the
//! standard's result code either way. Hostile callers are bounded: each kind
//! of lookup has its own number of calls that may wait at once
//! ([`WaitKind`]), a name RflySim3D did not answer for is answered "not
//! found" for a while without asking ([`model::Unanswered`]), spawns stop at
//! `max_scene_entities`, every name put on the wire passes
//! `rflysim_proto::console::check_name`, and no value leaves or is published
//! that is not finite in the wire's own `f32`.

mod bulk_poses;
mod catalog;
mod labels;
pub mod model;
mod reports;
mod services;
mod serving;
pub mod terrain;
mod world;

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use r2r::rflysim_bridge::msg::{Collision, RayDistances};
use r2r::{Node, Publisher};
use tokio::sync::{oneshot, watch};

use rflysim_proto::console::{ConsoleCommand, ConsoleRequest};
use rflysim_proto::scene::{
    CopterData, CrashType, ObjectData, Placement, PoseAndBox, StatusDatagram, VehicleCrashData, VehicleUpdate,
};
use ros_common::lifecycle::SpinnerTask;
use ros_common::sim_host::SimHost;
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::ArrivalStamps;

use crate::names;
use crate::settings::SceneSettings;
use crate::status_port::StatusHandler;
use model::{NedPose, Observed, Scene, Unanswered};
use reports::{collision, scene_odometry, vehicle_outputs, VehicleOutputs};

/// The first request port; window `i` listens on `REQUEST_PORT + i`.
const WINDOWS: u16 = 20;
/// RflySim3D re-sends every vehicle's data at least once a second when asked to.
const POSTBACK_FRESH: Duration = Duration::from_millis(1500);

/// The kind of a call that waits for RflySim3D's answer: each kind has its
/// own budget of calls waiting at once, so that a flood of one kind (names
/// nobody has, a listing of thousands) leaves the others their room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitKind {
    /// `get_entity_state` / `get_entity_bounds` of an entity the scene knows.
    Known,
    /// `get_entities_states`: one lookup per entity listed.
    Listing,
    /// A name the scene does not know (yet): RflySim3D may have it, or nobody.
    Unknown,
}

impl WaitKind {
    /// Calls of this kind waiting at once, at most.
    const fn budget(self) -> usize {
        match self {
            WaitKind::Known | WaitKind::Listing => 256,
            WaitKind::Unknown => 64,
        }
    }

    const fn what(self) -> &'static str {
        match self {
            WaitKind::Known => "lookups of known entities",
            WaitKind::Listing => "get_entities_states lookups",
            WaitKind::Unknown => "lookups of names the scene does not know",
        }
    }
}

/// Why a call got no answer from RflySim3D.
#[derive(Debug, Clone, PartialEq)]
enum AskError {
    /// Its kind's budget of waiting calls is spent: nothing was asked.
    Busy(String),
    /// The request could not be sent.
    Unsent(String),
    /// RflySim3D did not answer within `scene_timeout`.
    Silent(String),
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Busy(why) | AskError::Unsent(why) | AskError::Silent(why) => f.write_str(why),
        }
    }
}

/// What a waiting call is waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Awaited {
    Vehicle(i32),
    Object(String),
}

/// An answer RflySim3D gave to `RflyReqObjData 1` / `2`.
type Reply = PoseAndBox;

struct Waiter {
    what: Awaited,
    kind: WaitKind,
    reply: oneshot::Sender<Reply>,
}

/// The scene's state, shared by the services, the bulk path and the
/// status port's handler.
pub struct SceneCore {
    scene: Mutex<Scene>,
    waiters: Mutex<Vec<Waiter>>,
    /// Names RflySim3D did not answer for lately.
    unanswered: Mutex<Unanswered>,
    /// The last crash each vehicle reported: a collision is published when it changes.
    crashes: Mutex<HashMap<i32, CrashType>>,
    world: Mutex<Option<String>>,
    sock: std::net::UdpSocket,
    sim_host: SimHost,
    window: u16,
    settings: SceneSettings,
    logger: String,
    stats: Arc<StreamStats>,
    log: Mutex<RateLimitedLog>,
    /// The status port's structs dropped: a log of their own, so that
    /// refused requests do not hold these lines back.
    dropped_log: Mutex<RateLimitedLog>,
    /// Publishers are `Send`, not `Sync`: behind locks in the shared core.
    outputs: Mutex<HashMap<u16, VehicleOutputs>>,
    /// The node that holds spawned vehicles' topics. r2r makes and destroys
    /// publishers only with their node in hand, and the scene's own node is
    /// on its spinner thread: this one only publishes, so it is never spun.
    spawned_node: Mutex<Node>,
    /// Per spawned vehicle with topics, the task taking its labels: ended
    /// at its delete (r2r drops the subscription at its next message).
    spawned_labels: Mutex<HashMap<u16, tokio::task::JoinHandle<()>>>,
    /// The bridge's runtime: spawns need it from any thread.
    runtime: tokio::runtime::Handle,
    qos: r2r::QosProfile,
    all_collisions: Mutex<Publisher<Collision>>,
    /// When a vehicle's crash data last came (the postback is on).
    last_postback: Mutex<Option<Instant>>,
    terrain: terrain::Terrain,
    /// RflySim3D's answers and reports carry no time of their own.
    stamps: ArrivalStamps,
}

impl std::fmt::Debug for SceneCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneCore")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SceneCore {
    fn window_port(&self, window: u16) -> SocketAddrV4 {
        SocketAddrV4::new(self.sim_host.ip(), crate::requests::request_port(window))
    }

    /// Sends `bytes` to the node's window, or to every window (`None`).
    fn send(&self, bytes: &[u8], window: Option<u16>) -> std::io::Result<()> {
        match window {
            Some(w) => self.sock.send_to(bytes, self.window_port(w)).map(|_| ()),
            None => (0..WINDOWS).try_for_each(|w| self.sock.send_to(bytes, self.window_port(w)).map(|_| ())),
        }
    }

    fn warn(&self, what: std::fmt::Arguments) {
        self.log.lock().unwrap().warn_event(&self.logger, "scene", what);
    }

    /// Sends a console request to the node's window; whether it left.
    fn console(&self, request: &ConsoleRequest) -> Result<(), String> {
        for c in request.commands().map_err(|e| e.to_string())? {
            self.send(&c.encode(), Some(self.window))
                .map_err(|e| format!("cannot send {:?}: {e}", c.text()))?;
        }
        Ok(())
    }

    /// Places (or moves) vehicle `id` of `vehicle_type` at `pose`, moving at
    /// `vel_ned`; refused when a value would not be finite on the wire.
    fn place(&self, id: u16, vehicle_type: i32, pose: &NedPose, vel_ned: [f64; 3]) -> Result<(), String> {
        let update = VehicleUpdate {
            placement: Placement::AsSent,
            copter_id: i32::from(id),
            vehicle_type,
            pwms: [0.0; 8],
            vel_ned: vel_ned.map(|v| v as f32),
            euler: pose.euler.map(|a| a as f32),
            pos_ned: pose.position,
            runned_time: VehicleUpdate::UNSET_TIME,
        };
        if let Some(field) = update.not_finite() {
            return Err(format!("{field} would not be finite on the wire: nothing sent"));
        }
        self.send(&update.encode(), Some(self.window))
            .map_err(|e| format!("cannot send to RflySim3D: {e}"))
    }

    /// Asks RflySim3D for an item's pose and box and waits for the answer,
    /// at most `reply_timeout`, if fewer than its kind's budget of calls wait.
    async fn ask(&self, what: Awaited, kind: WaitKind) -> Result<Reply, AskError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut waiters = self.waiters.lock().unwrap();
            waiters.retain(|w| !w.reply.is_closed());
            if waiters.iter().filter(|w| w.kind == kind).count() >= kind.budget() {
                self.stats.drop_frame("lookups_over_budget");
                return Err(AskError::Busy(format!(
                    "{} {} already wait for RflySim3D: try again later",
                    kind.budget(),
                    kind.what()
                )));
            }
            waiters.push(Waiter {
                what: what.clone(),
                kind,
                reply: tx,
            });
        }
        let request = match &what {
            Awaited::Vehicle(id) => ConsoleRequest::VehicleData(*id),
            Awaited::Object(name) => ConsoleRequest::ObjectData(name.clone()),
        };
        self.console(&request).map_err(AskError::Unsent)?;
        match tokio::time::timeout(self.settings.reply_timeout, rx).await {
            Ok(Ok(reply)) => Ok(reply),
            _ => Err(AskError::Silent(format!(
                "RflySim3D did not answer within {:?} (is it running, on sim_host {}, window {}?)",
                self.settings.reply_timeout,
                self.sim_host.describe(),
                self.window
            ))),
        }
    }

    /// A struct of the status port with a value that is not finite: counted,
    /// logged at a limited rate, and not taken.
    fn refuse_not_finite(&self, what: &str, field: &str) {
        self.stats.drop_frame("not_finite");
        let reason = format_args!("{field} is not finite");
        self.dropped_log
            .lock()
            .unwrap()
            .warn_dropped(&self.logger, "scene", what, reason);
    }

    fn answered(&self, what: &Awaited, reply: &Reply) {
        let mut waiters = self.waiters.lock().unwrap();
        let mut i = 0;
        while i < waiters.len() {
            if &waiters[i].what == what {
                let _ = waiters.swap_remove(i).reply.send(*reply);
            } else {
                i += 1;
            }
        }
    }

    /// Gives spawned vehicle `id` its collision, odometry, ray and label
    /// topics, before RflySim3D can report it; beyond
    /// `max_spawned_vehicle_topics` it has none (logged).
    fn open_spawned_topics(self: &Arc<Self>, id: u16) -> Result<(), String> {
        let mut spawned = self.spawned_labels.lock().unwrap();
        if spawned.len() >= self.settings.max_spawned_topics {
            self.warn(format_args!(
                "uav{id} is spawned without topics of its own: {} spawned vehicles have theirs, as many as \
                 max_spawned_vehicle_topics allows",
                spawned.len()
            ));
            return Ok(());
        }
        let mut node = self.spawned_node.lock().unwrap();
        let outputs = vehicle_outputs(&mut node, id, &self.qos)?;
        let label = labels::subscribe(&mut node, self, id)?;
        self.outputs.lock().unwrap().insert(id, outputs);
        spawned.insert(id, label);
        Ok(())
    }

    /// Removes the topics of spawned vehicles `ids` (deleted, or gone with a map).
    fn close_spawned_topics(&self, ids: &[u16]) {
        // The order open_spawned_topics takes the two locks in.
        let mut spawned = self.spawned_labels.lock().unwrap();
        let mut node = self.spawned_node.lock().unwrap();
        for id in ids {
            if let Some(label) = spawned.remove(id) {
                label.abort();
            }
            let Some(out) = self.outputs.lock().unwrap().remove(id) else {
                continue;
            };
            node.destroy_publisher(out.collision);
            node.destroy_publisher(out.odom);
            node.destroy_publisher(out.rays);
        }
    }

    fn on_crash_data(&self, d: &VehicleCrashData) {
        *self.last_postback.lock().unwrap() = Some(Instant::now());
        let Ok(id) = u16::try_from(d.copter_id) else {
            return self.stats.drop_frame("bad_vehicle_id");
        };
        if let Some(field) = d.not_finite() {
            return self.refuse_not_finite(&format!("reqVeCrashData of vehicle {id}"), field);
        }
        let pose = NedPose {
            position: d.pos_ned.map(f64::from),
            euler: d.euler.map(f64::from),
        };
        let seen = Observed::now(pose, Some(d.vel_ned.map(f64::from)));
        self.scene
            .lock()
            .unwrap()
            .observe_vehicle(id, d.vehicle_type, seen, self.settings.max_entities);
        let started = {
            let mut crashes = self.crashes.lock().unwrap();
            let before = crashes.insert(d.copter_id, d.crash).unwrap_or(CrashType::None);
            d.crash != CrashType::None && d.crash != before
        };
        let stamp = self.stamps.now();
        let outputs = self.outputs.lock().unwrap();
        if started {
            let c = collision(d, stamp.clone());
            let sent = self.all_collisions.lock().unwrap().publish(&c);
            self.stats.count_publish(sent, "publish_failed");
            if let Some(out) = outputs.get(&id) {
                self.stats.count_publish(out.collision.publish(&c), "publish_failed");
            }
        }
        if let Some(out) = outputs.get(&id) {
            let odom = scene_odometry(id, &pose, d.vel_ned.map(f64::from), stamp.clone());
            self.stats.count_publish(out.odom.publish(&odom), "publish_failed");
            let rays = RayDistances {
                header: ros_common::msgs::header(stamp, &names::base_frame(id)),
                front: d.rays[0],
                back: d.rays[1],
                left: d.rays[2],
                right: d.rays[3],
                up: d.rays[4],
                down: d.rays[5],
            };
            self.stats.count_publish(out.rays.publish(&rays), "publish_failed");
        }
    }

    fn on_copter_data(&self, d: &CopterData) {
        if let Some(field) = d.pose.not_finite() {
            return self.refuse_not_finite(&format!("CoptReqData of vehicle {}", d.copter_id), field);
        }
        if let Ok(id) = u16::try_from(d.copter_id) {
            self.scene.lock().unwrap().observe_vehicle(
                id,
                0,
                Observed::now(ned_pose_of(&d.pose), None),
                self.settings.max_entities,
            );
        }
        self.answered(&Awaited::Vehicle(d.copter_id), &d.pose);
    }

    fn on_object_data(&self, d: &ObjectData) {
        if let Some(field) = d.pose.not_finite() {
            return self.refuse_not_finite(&format!("ObjReqData of {:?}", d.name), field);
        }
        self.scene.lock().unwrap().observe_object(
            &d.name,
            Observed::now(ned_pose_of(&d.pose), None),
            self.settings.max_entities,
        );
        self.unanswered.lock().unwrap().forget(&d.name);
        self.answered(&Awaited::Object(d.name.clone()), &d.pose);
    }

    /// Whether RflySim3D's postback of every vehicle is flowing.
    fn postback_on(&self) -> bool {
        self.last_postback
            .lock()
            .unwrap()
            .is_some_and(|t| t.elapsed() < POSTBACK_FRESH)
    }
}

/// The pose of a reply (one whose values are finite: the status port's
/// handler takes no other).
fn ned_pose_of(p: &PoseAndBox) -> NedPose {
    NedPose {
        position: p.pos.map(f64::from),
        euler: p.euler.map(f64::from),
    }
}

/// The scene's side of the status port.
pub struct SceneFeed {
    core: Arc<SceneCore>,
}

impl std::fmt::Debug for SceneFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneFeed").finish_non_exhaustive()
    }
}

impl StatusHandler for SceneFeed {
    fn on_datagram(&mut self, d: &StatusDatagram) {
        match d {
            StatusDatagram::VehicleCrashData(c) => self.core.on_crash_data(c),
            StatusDatagram::CopterData(c) => self.core.on_copter_data(c),
            StatusDatagram::ObjectData(o) => self.core.on_object_data(o),
            _ => {}
        }
    }

    /// RflySim3D forgets the postback when it restarts: asked again while
    /// nothing flows.
    fn tick(&mut self) {
        if !self.core.postback_on() {
            if let Err(e) = self.core.console(&ConsoleRequest::VehicleDataPostback(true)) {
                self.core.warn(format_args!("{e}"));
            }
        }
    }
}

/// The scene's services and topics on `node`, its bulk path on `poses_node`
/// (the task taking them, for that node's spinner thread); its side of the
/// status port (for the process's one receiver of it).
pub fn start(
    node: &mut Node,
    poses_node: &mut Node,
    spawned_node: Node,
    settings: &crate::settings::Settings,
    stamps: ArrivalStamps,
    stats: Arc<StreamStats>,
    shutdown: watch::Receiver<bool>,
) -> Result<(SceneFeed, SpinnerTask), String> {
    let vehicles = &settings.copters.ids;
    let scene_settings = settings.scene.clone();
    let logger = node.logger().to_string();
    let qos = settings.output.qos.clone();
    let e = |what: &str, err: r2r::Error| format!("scene: {what}: {err}");
    let core = Arc::new(SceneCore {
        scene: Mutex::new(Scene::new(vehicles, scene_settings.first_spawn_id)),
        waiters: Mutex::default(),
        unanswered: Mutex::default(),
        crashes: Mutex::default(),
        world: Mutex::new((!scene_settings.world.is_empty()).then(|| scene_settings.world.clone())),
        sock: ros_common::net::udp_sender().map_err(|e| format!("scene: UDP: {e}"))?,
        sim_host: settings.link.sim_host.clone(),
        window: settings.link.window_id,
        settings: scene_settings,
        logger: logger.clone(),
        stats,
        log: Mutex::new(RateLimitedLog::new(Duration::from_secs(5))),
        dropped_log: Mutex::new(RateLimitedLog::new(Duration::from_secs(5))),
        outputs: Mutex::default(),
        spawned_node: Mutex::new(spawned_node),
        spawned_labels: Mutex::default(),
        runtime: tokio::runtime::Handle::current(),
        qos: qos.clone(),
        all_collisions: Mutex::new(
            node.create_publisher("rflysim/scene/collisions", qos.clone())
                .map_err(|x| e("scene/collisions", x))?,
        ),
        last_postback: Mutex::default(),
        terrain: terrain::Terrain::new(
            node,
            settings.scene.map_dir.clone(),
            settings.scene.terrain_cloud_points,
        )?,
        stamps,
    });
    for &id in vehicles {
        vehicle_topics(node, &core, id, &qos)?;
    }
    if let Some(world) = core.world.lock().unwrap().clone() {
        terrain::load_blocking(&core, &world);
    }
    services::serve(node, &core, shutdown.clone())?;
    terrain::serve(node, &core, shutdown.clone())?;
    catalog::serve(node, &core, shutdown.clone())?;
    let poses = poses_node
        .subscribe_raw(
            "rflysim/scene/poses",
            bulk_poses::SCENE_POSES_TYPE,
            r2r::QosProfile::default(),
        )
        .map_err(|x| e("scene/poses", x))?;
    let bulk = Box::pin(bulk_poses::bulk_poses(poses, core.clone()));
    if let Err(why) = core.console(&ConsoleRequest::VehicleDataPostback(true)) {
        r2r::log_warn!(&logger, "scene: {why}");
    }
    r2r::log_info!(
        &logger,
        "scene of RflySim3D window {} at {}: Simulation Interfaces services, rflysim/console, rflysim/scene/poses, \
         rflysim/get_terrain_height (maps in {})",
        core.window,
        core.sim_host.describe(),
        core.terrain.dir().display()
    );
    let (spinning, stop) = (Arc::downgrade(&core), shutdown.clone());
    std::thread::Builder::new()
        .name("spawned labels".into())
        .spawn(move || spin_spawned_labels(spinning, stop))
        .map_err(|e| format!("scene: a thread for spawned vehicles' labels: {e}"))?;
    Ok((SceneFeed { core }, bulk))
}

/// Every topic of vehicle `id` on `node`: RflySim3D's collisions, pose and
/// scan lines of it (published), and its label (subscribed). Per-vehicle
/// topics are made here alone.
fn vehicle_topics(node: &mut Node, core: &Arc<SceneCore>, id: u16, qos: &r2r::QosProfile) -> Result<(), String> {
    let outputs = vehicle_outputs(node, id, qos)?;
    core.outputs.lock().unwrap().insert(id, outputs);
    labels::subscribe(node, core, id).map(drop)
}

/// Takes the labels of spawned vehicles: their node is spun here, between
/// spawns and deletes (which hold it only to make or drop endpoints), until the stop.
/// It holds the core only while it spins: the process drops the core (and
/// the node) at its stop, before the ROS context goes.
fn spin_spawned_labels(core: std::sync::Weak<SceneCore>, shutdown: watch::Receiver<bool>) {
    while !*shutdown.borrow() {
        let Some(core) = core.upgrade() else { return };
        if !core.spawned_labels.lock().unwrap().is_empty() {
            core.spawned_node.lock().unwrap().spin_once(Duration::ZERO);
        }
        drop(core);
        std::thread::sleep(SPAWNED_LABELS_EVERY);
    }
}

/// How often the spawned vehicles' labels are taken: they change at human pace.
const SPAWNED_LABELS_EVERY: Duration = Duration::from_millis(50);

/// A console command text for RflySim3D: why not, when it cannot be one.
pub fn console_text(text: &str) -> Result<ConsoleCommand, String> {
    ConsoleCommand::new(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_texts_are_checked_with_the_reason() {
        assert!(console_text("RflyChangeMapbyName Grasslands").is_ok());
        assert_eq!(console_text(&"x".repeat(249)).unwrap().encode().len(), 256);
        assert!(console_text(&"x".repeat(250)).unwrap_err().contains("at most 249"));
        assert!(console_text("Rfly\u{e9}").is_err());
        assert!(console_text("a\0b").is_err());
        // One command a call: Unreal's console would run a second one after a '|'.
        assert!(console_text("RflyShowTextTime a 1|quit")
            .unwrap_err()
            .contains("\"quit\""));
        assert!(console_text("RflyShowTextTime a 1\nquit")
            .unwrap_err()
            .contains("control"));
        assert!(
            console_text("RflyShowTextTime \"a|b\" 1").is_ok(),
            "quoted, as the console reads it"
        );
    }
}
