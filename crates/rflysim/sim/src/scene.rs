//! RflySim3D's scene as its UDP structs see it (`rflysim_proto::scene`):
//! the vehicles the pose structs place and CopterSim's own vehicles, the
//! named static objects of the world, the crashes between them, and the
//! replies RflySim3D sends to its status port. Pure: no sockets, no clock;
//! the caller passes the simulation time.
//!
//! Simplifications. A vehicle is an axis-aligned box: its model's box
//! ([`VEHICLE_HALF_EXTENT`] × its scale) turned by its yaw only. A crash is
//! an overlap of boxes, or a vehicle whose origin is below the ground (the
//! map's [`Terrain`]), found
//! in that order: the ground, then the static objects, then the other
//! vehicles (the one with the lowest id). Its scan lines start at its
//! origin: front, back, left and right level along its heading, up and down
//! along the vertical.

use std::collections::{BTreeMap, HashMap};

use frames::{euler_to_quat, Vec3};
use rflysim_proto::console::{ConsoleRequest, SceneItem};
use rflysim_proto::label::{LabelKind, MessageLine, VehicleLabel, MESSAGE_LINES};
use rflysim_proto::scene::{
    CopterData, CrashType, ObjectData, Placement, PoseAndBox, StatusDatagram, VehicleCrashData, VehiclePose, RAY_RANGE,
};

use crate::log::line as log;
use crate::world::{Block, BlockOwner, Scene, Terrain, Trajectory, MAPS};

/// A quadcopter's box: half of 0.55 × 0.55 × 0.3 m, along its x, y, z.
pub const VEHICLE_HALF_EXTENT: Vec3 = [0.275, 0.275, 0.15];
/// Vehicles stand out in every camera kind: magenta (b, g, r), their own
/// segmentation label, warm.
pub const VEHICLE_BGR: [u8; 3] = [255, 0, 255];
pub const VEHICLE_LABEL: u8 = 20;
const VEHICLE_HEAT: u8 = 220;
/// The ground's name, and the box `ObjReqData` gives it: a slab 1 m thick
/// under a nominal square (the rendered ground has no edge).
pub const GROUND_NAME: &str = "Landscape_1";
const GROUND_HALF_EXTENT: Vec3 = [1000.0, 1000.0, 0.5];
/// CopterSim's vehicles are quadcopters.
const COPTERSIM_VEHICLE_TYPE: i32 = 3;
/// Every vehicle's data is sent at least this often while the postback is on, s.
const POSTBACK_PERIOD: f64 = 1.0;

/// Who moves a vehicle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// Its CopterSim, along the trajectory, on the vehicle's own clock
    /// (`clock_offset` s ahead of the shared one).
    CopterSim { clock_offset: f64 },
    /// Pose structs arriving on the request port.
    PoseStructs,
}

/// A vehicle of the scene.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vehicle {
    pub id: i32,
    pub vehicle_type: i32,
    /// m, NED.
    pub pos: Vec3,
    /// roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    pub scale: [f32; 3],
    /// m/s, NED.
    pub vel: [f32; 3],
    /// RPM.
    pub motor_rpm: [f32; 8],
    /// Its own time at its last update, s.
    pub runned_time: f64,
    pub source: Source,
}

impl Vehicle {
    /// Its box in the world: [`VEHICLE_HALF_EXTENT`] scaled, turned by its yaw.
    pub fn block(&self) -> Block {
        let [hx, hy, hz] = self.half_extent();
        let (s, c) = f64::from(self.euler[2]).sin_cos();
        let half = [c.abs() * hx + s.abs() * hy, s.abs() * hx + c.abs() * hy, hz];
        Block {
            owner: BlockOwner::Vehicle(self.id),
            min: std::array::from_fn(|k| self.pos[k] - half[k]),
            max: std::array::from_fn(|k| self.pos[k] + half[k]),
            color: VEHICLE_BGR,
            label: VEHICLE_LABEL,
            heat: VEHICLE_HEAT,
        }
    }

    /// Half its model's box scaled, along its x, y, z.
    pub fn half_extent(&self) -> Vec3 {
        std::array::from_fn(|k| VEHICLE_HALF_EXTENT[k] * f64::from(self.scale[k]).abs())
    }

    fn at_trajectory(&mut self, trajectory: &Trajectory, t: f64) {
        let s = trajectory.state(t);
        self.pos = s.position;
        self.euler = s.euler.map(|v| v as f32);
        self.vel = s.velocity.map(|v| v as f32);
        self.runned_time = t;
    }
}

/// What a vehicle shows over it: its ID label and up to
/// [`MESSAGE_LINES`] message lines, the newest last.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VehicleLabels {
    pub id: Option<VehicleLabel>,
    pub messages: Vec<VehicleLabel>,
}

/// The map asked for last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapChoice {
    Name(String),
    Id(i32),
}

/// The scene: what is in it, and what RflySim3D has to send of it.
#[derive(Debug, Clone)]
pub struct SceneState {
    vehicles: BTreeMap<i32, Vehicle>,
    /// The static objects still in the scene.
    objects: Vec<Block>,
    tile: f64,
    /// The ground of the map shown.
    terrain: Terrain,
    /// The labels shown over each vehicle (RflySetIDLabel, RflySetMsgLabel).
    labels: BTreeMap<i32, VehicleLabels>,
    copters: Vec<(i32, f64)>,
    trajectory: Trajectory,
    map: Option<MapChoice>,
    pos_scale: f64,
    postback: bool,
    /// The data last sent of each vehicle, and when.
    last_sent: HashMap<i32, (VehicleCrashData, f64)>,
    outbox: Vec<StatusDatagram>,
}

impl Default for SceneState {
    fn default() -> Self {
        SceneState::new(&Scene::default(), &[], Trajectory::default())
    }
}

impl SceneState {
    /// The objects of `world`, and CopterSim's vehicles `copters` (id and
    /// clock offset, s) flying `trajectory` (they appear at the first tick).
    pub fn new(world: &Scene, copters: &[(i32, f64)], trajectory: Trajectory) -> Self {
        Self {
            vehicles: BTreeMap::new(),
            objects: world.blocks.clone(),
            tile: world.tile,
            terrain: world.terrain.clone(),
            labels: BTreeMap::new(),
            copters: copters.to_vec(),
            trajectory,
            map: None,
            pos_scale: 1.0,
            postback: false,
            last_sent: HashMap::new(),
            outbox: Vec::new(),
        }
    }

    pub fn vehicle(&self, id: i32) -> Option<&Vehicle> {
        self.vehicles.get(&id)
    }

    pub fn vehicles(&self) -> impl Iterator<Item = &Vehicle> {
        self.vehicles.values()
    }

    pub fn map(&self) -> Option<&MapChoice> {
        self.map.as_ref()
    }

    pub fn postback(&self) -> bool {
        self.postback
    }

    /// The labels vehicle `id` shows.
    pub fn labels(&self, id: i32) -> Option<&VehicleLabels> {
        self.labels.get(&id)
    }

    /// Shows a label over its vehicle as RflySim3D does (display times are
    /// not run out: the last label sent stays); logs what it shows.
    pub fn apply_label(&mut self, label: VehicleLabel) {
        let shown = self.labels.entry(label.copter_id).or_default();
        let [r, g, b] = label.rgb;
        let (seconds, line) = match label.kind {
            LabelKind::Id => {
                log(&format!(
                    "vehicle {} shows ID label: \"{}\" colour {r:02X}{g:02X}{b:02X} size {}",
                    label.copter_id, label.text, label.size
                ));
                shown.id = Some(label);
                return;
            }
            LabelKind::Message { seconds, line } => (seconds, line),
        };
        // A row RflySim3D shows, numbered from 1; any other is added.
        let row = match line {
            MessageLine::Line(n) if (1..=shown.messages.len()).contains(&usize::from(n)) => Some(usize::from(n) - 1),
            _ => None,
        };
        let id = label.copter_id;
        if seconds < 0.0 {
            match (row, line) {
                (Some(i), _) => {
                    shown.messages.remove(i);
                }
                (None, MessageLine::New) => shown.messages.clear(),
                (None, MessageLine::Line(_)) => {}
            }
            log(&format!("vehicle {id} removes message line {line:?}"));
            return;
        }
        log(&format!(
            "vehicle {id} shows message line {line:?} for {seconds} s: \"{}\" colour {r:02X}{g:02X}{b:02X} size {}",
            label.text, label.size
        ));
        match row {
            Some(i) => shown.messages[i] = label,
            None => {
                shown.messages.push(label);
                let excess = shown.messages.len().saturating_sub(MESSAGE_LINES as usize);
                shown.messages.drain(..excess);
            }
        }
    }

    /// Places (or creates) a vehicle as a pose struct says, at sim time `t`;
    /// `true` when it was created.
    pub fn apply_pose(&mut self, pose: &VehiclePose, t: f64) -> bool {
        let scale = pose.scale;
        let mut pos = pose.pos_ned.map(|c| c * self.pos_scale);
        if pose.placement == Placement::OnGround {
            pos[2] = self.terrain.ground_z(pos[0], pos[1]) - VEHICLE_HALF_EXTENT[2] * f64::from(scale[2]).abs();
        }
        let vehicle = Vehicle {
            id: pose.copter_id,
            vehicle_type: pose.vehicle_type,
            pos,
            euler: pose.euler,
            scale,
            vel: pose.vel_ned,
            motor_rpm: pose.motor_rpm,
            runned_time: pose.runned_time.unwrap_or(t),
            source: Source::PoseStructs,
        };
        self.vehicles.insert(pose.copter_id, vehicle).is_none()
    }

    /// Acts on a console request at sim time `t` (the camera requests are
    /// the status loop's, not the scene's).
    pub fn apply_console(&mut self, request: &ConsoleRequest, t: f64) {
        match request {
            ConsoleRequest::VehicleDataPostback(on) => {
                self.postback = *on;
                self.last_sent.clear();
            }
            ConsoleRequest::VehicleData(id) => {
                if let Some(data) = self.copter_data(*id, t) {
                    self.outbox.push(StatusDatagram::CopterData(data));
                }
            }
            ConsoleRequest::ObjectData(name) => {
                if let Some(data) = self.object_data(name, t) {
                    self.outbox.push(StatusDatagram::ObjectData(data));
                }
            }
            ConsoleRequest::Delete(SceneItem::Vehicle(id)) => self.remove_vehicles(|v| v.id == *id),
            ConsoleRequest::Delete(SceneItem::Object(name)) => self.remove_object(name),
            ConsoleRequest::Clear(scope) => {
                if scope.vehicles() {
                    self.remove_vehicles(|_| true);
                }
                if scope.objects() {
                    self.objects.clear();
                }
            }
            ConsoleRequest::DelVehicles(ids) => self.remove_vehicles(|v| ids.contains(&v.id)),
            ConsoleRequest::ChangeMapByName(name) => self.change_map(MapChoice::Name(name.clone())),
            ConsoleRequest::ChangeMapById(id) => self.change_map(MapChoice::Id(*id)),
            ConsoleRequest::SetPosScale(s) => self.pos_scale = f64::from(*s),
            ConsoleRequest::ShowTextTime { text, seconds } => log(&format!("shows \"{text}\" for {seconds} s")),
            ConsoleRequest::CameraData(_)
            | ConsoleRequest::ClearCapture
            | ConsoleRequest::Delete(SceneItem::Camera(_)) => {}
        }
    }

    /// CopterSim's vehicles move along their trajectories to sim time `t`
    /// (coming back if deleted: CopterSim keeps sending them); with the
    /// postback on, the data of every vehicle that changed, or was last sent
    /// a second ago, goes to the outbox.
    pub fn tick(&mut self, t: f64) {
        for &(id, offset) in &self.copters {
            let v = self.vehicles.entry(id).or_insert(Vehicle {
                id,
                vehicle_type: COPTERSIM_VEHICLE_TYPE,
                pos: [0.0; 3],
                euler: [0.0; 3],
                scale: [1.0; 3],
                vel: [0.0; 3],
                motor_rpm: [0.0; 8],
                runned_time: t,
                source: Source::CopterSim { clock_offset: offset },
            });
            v.at_trajectory(&self.trajectory, t + offset);
        }
        if !self.postback {
            return;
        }
        let ids: Vec<i32> = self.vehicles.keys().copied().collect();
        for id in ids {
            let Some(data) = self.crash_data(id) else {
                continue;
            };
            let due = match self.last_sent.get(&id) {
                None => true,
                Some((sent, at)) => {
                    // The time alone is no change; a clock sent back (a restart) is due at once.
                    let changed = VehicleCrashData {
                        runned_time: sent.runned_time,
                        ..data.clone()
                    } != *sent;
                    changed || t - at >= POSTBACK_PERIOD || t < *at
                }
            };
            if due {
                self.last_sent.insert(id, (data.clone(), t));
                self.outbox.push(StatusDatagram::VehicleCrashData(data));
            }
        }
    }

    /// What is to be sent to the status port, oldest first.
    pub fn take_outbox(&mut self) -> Vec<StatusDatagram> {
        std::mem::take(&mut self.outbox)
    }

    /// The world a sensor sees at sim time `t`: the static objects and every
    /// vehicle but `mounted_on` (CopterSim's where they are at `t`, not
    /// where the last tick left them).
    pub fn world_at(&self, t: f64, mounted_on: Option<i32>) -> Scene {
        let vehicles = self.vehicles.values().filter(|v| Some(v.id) != mounted_on).map(|v| {
            let mut v = *v;
            if let Source::CopterSim { clock_offset } = v.source {
                v.at_trajectory(&self.trajectory, t + clock_offset);
            }
            v.block()
        });
        self.world_with(vehicles)
    }

    /// The static objects and `vehicles`.
    fn world_with(&self, vehicles: impl Iterator<Item = Block>) -> Scene {
        Scene {
            blocks: self.objects.iter().copied().chain(vehicles).collect(),
            tile: self.tile,
            terrain: self.terrain.clone(),
        }
    }

    /// `CoptReqData` of vehicle `id` (the 80-byte form).
    pub fn copter_data(&self, id: i32, t: f64) -> Option<CopterData> {
        let v = self.vehicles.get(&id)?;
        let f = |a: Vec3| a.map(|c| c as f32);
        let [roll, pitch, yaw] = v.euler.map(f64::from);
        Some(CopterData {
            copter_id: id,
            pose: PoseAndBox {
                pos: f(v.pos),
                euler: v.euler,
                quat: Some(f32s(euler_to_quat(roll, pitch, yaw))),
                box_origin: f(v.pos),
                box_extent: f(v.half_extent()),
                time_stamp: t,
            },
        })
    }

    /// `ObjReqData` of the object called `name` (the 112-byte form): its
    /// origin at the foot of its box, as a building's model has it.
    pub fn object_data(&self, name: &str, t: f64) -> Option<ObjectData> {
        let (origin, centre, half) = if name == GROUND_NAME {
            ([0.0; 3], [0.0, 0.0, GROUND_HALF_EXTENT[2]], GROUND_HALF_EXTENT)
        } else {
            let b = self.objects.iter().find(|b| b.is_object(name))?;
            let c = b.centre();
            ([c[0], c[1], b.max[2]], c, b.half_extent())
        };
        let f = |a: Vec3| a.map(|c| c as f32);
        Some(ObjectData {
            seq_id: 0,
            pose: PoseAndBox {
                pos: f(origin),
                euler: [0.0; 3],
                quat: Some([1.0, 0.0, 0.0, 0.0]),
                box_origin: f(centre),
                box_extent: f(half),
                time_stamp: t,
            },
            name: name.to_string(),
        })
    }

    /// `reqVeCrashData` of vehicle `id` as it is now.
    pub fn crash_data(&self, id: i32) -> Option<VehicleCrashData> {
        let v = self.vehicles.get(&id)?;
        let f = |a: Vec3| a.map(|c| c as f32);
        let (crash, crash_pos, target_pos, crashed_name) = self.crash_of(v);
        Some(VehicleCrashData {
            copter_id: v.id,
            vehicle_type: v.vehicle_type,
            crash,
            runned_time: v.runned_time,
            vel_ned: v.vel,
            pos_ned: f(v.pos),
            crash_pos: f(crash_pos),
            target_pos: f(target_pos),
            euler: v.euler,
            motor_rpm: v.motor_rpm,
            rays: self.rays(v),
            crashed_name,
        })
    }

    /// What `v` hit, where, the centre of what it hit, and its name.
    fn crash_of(&self, v: &Vehicle) -> (CrashType, Vec3, Vec3, String) {
        let ground_z = self.terrain.ground_z(v.pos[0], v.pos[1]);
        if v.pos[2] > ground_z {
            let ground = [0.0, 0.0, GROUND_HALF_EXTENT[2]];
            return (
                CrashType::Ground,
                [v.pos[0], v.pos[1], ground_z],
                ground,
                GROUND_NAME.into(),
            );
        }
        let mine = v.block();
        let middle = |(min, max): (Vec3, Vec3)| -> Vec3 { std::array::from_fn(|k| (min[k] + max[k]) / 2.0) };
        for b in &self.objects {
            if let (Some(overlap), BlockOwner::Object(name)) = (mine.overlap(b), b.owner) {
                return (CrashType::SceneObject, middle(overlap), b.centre(), name.into());
            }
        }
        for other in self.vehicles.values().filter(|o| o.id != v.id) {
            if let Some(overlap) = mine.overlap(&other.block()) {
                return (CrashType::Vehicle(other.id), middle(overlap), other.pos, String::new());
            }
        }
        (CrashType::None, [0.0; 3], [0.0; 3], String::new())
    }

    /// Front, back, left, right, up, down: the distance to the first thing
    /// (the ground, an object, another vehicle), [`RAY_RANGE`] if none.
    fn rays(&self, v: &Vehicle) -> [f32; 6] {
        let others = self.vehicles.values().filter(|o| o.id != v.id);
        let world = self.world_with(others.map(Vehicle::block));
        let (s, c) = f64::from(v.euler[2]).sin_cos();
        let dirs = [
            [c, s, 0.0],
            [-c, -s, 0.0],
            [s, -c, 0.0],
            [-s, c, 0.0],
            [0.0, 0.0, -1.0],
            [0.0, 0.0, 1.0],
        ];
        let range = f64::from(RAY_RANGE);
        let under_ground = v.pos[2] >= self.terrain.ground_z(v.pos[0], v.pos[1]);
        dirs.map(|d| {
            if d[2] > 0.0 && under_ground {
                return 0.0; // at or under the ground
            }
            world.cast(v.pos, d, range).map_or(RAY_RANGE, |h| h.distance as f32)
        })
    }

    fn remove_vehicles(&mut self, gone: impl Fn(&Vehicle) -> bool) {
        self.vehicles.retain(|_, v| !gone(v));
        self.last_sent.retain(|id, _| self.vehicles.contains_key(id));
        self.labels.retain(|id, _| self.vehicles.contains_key(id));
    }

    fn remove_object(&mut self, name: &str) {
        if name == GROUND_NAME {
            return log("the ground stays: an emulated scene has nothing under it");
        }
        self.objects.retain(|b| !b.is_object(name));
    }

    fn change_map(&mut self, map: MapChoice) {
        let name = match &map {
            MapChoice::Name(name) => name.clone(),
            MapChoice::Id(id) => usize::try_from(*id)
                .ok()
                .and_then(|i| MAPS.get(i))
                .map_or(format!("#{id}"), |n| n.to_string()),
        };
        let ground = match Terrain::of_map(&name) {
            Some(terrain) => {
                self.terrain = terrain;
                "its ground"
            }
            None => "the ground as it was (not one of the emulator's maps)",
        };
        log(&format!(
            "map changed to {name}, {ground}: the vehicles of the pose structs removed"
        ));
        self.map = Some(map);
        self.remove_vehicles(|v| v.source == Source::PoseStructs);
    }
}

fn f32s<const N: usize>(a: [f64; N]) -> [f32; N] {
    a.map(|c| c as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rflysim_proto::console::ClearScope;

    fn pose(id: i32, pos: Vec3) -> VehiclePose {
        VehiclePose {
            placement: Placement::AsSent,
            copter_id: id,
            vehicle_type: 3,
            pos_ned: pos,
            euler: [0.0; 3],
            scale: [1.0; 3],
            motor_rpm: [1000.0; 8],
            vel_ned: [0.0; 3],
            runned_time: None,
        }
    }

    fn crashes(scene: &mut SceneState, t: f64) -> HashMap<i32, VehicleCrashData> {
        scene.tick(t);
        scene
            .take_outbox()
            .into_iter()
            .filter_map(|d| match d {
                StatusDatagram::VehicleCrashData(c) => Some((c.copter_id, c)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn pose_structs_create_and_move_vehicles() {
        let mut scene = SceneState::default();
        assert!(scene.apply_pose(&pose(5, [1.0, 2.0, -3.0]), 0.5));
        assert!(!scene.apply_pose(&pose(5, [4.0, 2.0, -3.0]), 0.6));
        let v = scene.vehicle(5).unwrap();
        assert_eq!(
            (v.pos, v.runned_time, v.source),
            ([4.0, 2.0, -3.0], 0.6, Source::PoseStructs)
        );
        // On the ground: the box's bottom at z = 0, whatever the altitude sent.
        let grounded = VehiclePose {
            placement: Placement::OnGround,
            scale: [1.0, 1.0, 2.0],
            ..pose(6, [0.0, 5.0, -40.0])
        };
        scene.apply_pose(&grounded, 1.0);
        assert_eq!(scene.vehicle(6).unwrap().pos, [0.0, 5.0, -0.3]);
        assert_eq!(scene.vehicle(6).unwrap().block().max[2], 0.0);
        // On the hill, its box's bottom on the hill's ground.
        let on_hill = VehiclePose {
            placement: Placement::OnGround,
            ..pose(7, [40.0, -36.0, 0.0])
        };
        scene.apply_pose(&on_hill, 1.0);
        let ground = Terrain::of_map(MAPS[0]).unwrap().ground_z(40.0, -36.0);
        assert!(ground < -1.0);
        assert!((scene.vehicle(7).unwrap().block().max[2] - ground).abs() < 1e-9);
        scene.apply_console(&ConsoleRequest::SetPosScale(2.0), 1.0);
        scene.apply_pose(&pose(5, [1.0, 2.0, -3.0]), 1.0);
        assert_eq!(scene.vehicle(5).unwrap().pos, [2.0, 4.0, -6.0]);
    }

    #[test]
    fn the_ground_of_the_map_decides_crashes_and_changes_with_the_map() {
        let mut scene = SceneState::default();
        scene.apply_console(&ConsoleRequest::VehicleDataPostback(true), 0.0);
        // 1 m up over flat ground, but 1 m inside Grasslands' hill.
        let ground = Terrain::of_map(MAPS[0]).unwrap().ground_z(40.0, -36.0);
        scene.apply_pose(&pose(1, [40.0, -36.0, ground + 1.0]), 0.0);
        scene.apply_pose(&pose(2, [40.0, -36.0, ground - 1.0]), 0.0);
        let c = crashes(&mut scene, 0.0);
        assert_eq!((c[&1].crash, c[&1].crash_pos[2]), (CrashType::Ground, ground as f32));
        assert_eq!(c[&2].crash, CrashType::None);
        assert!((c[&2].rays[5] - 1.0).abs() < 1e-4, "down: {:?}", c[&2].rays);
        // MountainTerrain is flat there.
        scene.apply_console(&ConsoleRequest::ChangeMapByName("MountainTerrain".into()), 1.0);
        scene.apply_pose(&pose(1, [40.0, -36.0, -0.5]), 1.0);
        assert_eq!(crashes(&mut scene, 1.0)[&1].crash, CrashType::None);
        scene.apply_pose(&pose(1, [40.0, 40.0, -0.5]), 1.0);
        assert_eq!(crashes(&mut scene, 1.0)[&1].crash, CrashType::Ground);
        // A map the emulator does not have leaves the ground as it was; by id, the list's order.
        scene.apply_console(&ConsoleRequest::ChangeMapByName("Nowhere".into()), 2.0);
        scene.apply_pose(&pose(1, [40.0, 40.0, -0.5]), 2.0);
        assert_eq!(crashes(&mut scene, 2.0)[&1].crash, CrashType::Ground);
        scene.apply_console(&ConsoleRequest::ChangeMapById(0), 3.0);
        scene.apply_pose(&pose(1, [40.0, 40.0, -0.5]), 3.0);
        assert_eq!(crashes(&mut scene, 3.0)[&1].crash, CrashType::None);
    }

    #[test]
    fn labels_are_kept_per_vehicle_five_message_lines_at_most() {
        let mut scene = SceneState::default();
        scene.apply_pose(&pose(3, [0.0, 5.0, -3.0]), 0.0);
        let label = |text: &str, kind| VehicleLabel {
            copter_id: 3,
            kind,
            text: text.into(),
            rgb: [255, 0, 0],
            size: 20.0,
        };
        scene.apply_label(label("three", LabelKind::Id));
        let new_line = LabelKind::Message {
            seconds: 5.0,
            line: MessageLine::New,
        };
        for i in 0..7 {
            scene.apply_label(label(&format!("m{i}"), new_line));
        }
        let row = |seconds, n| LabelKind::Message {
            seconds,
            line: MessageLine::Line(n),
        };
        scene.apply_label(label("set", row(1.0, 1)));
        let texts = |scene: &SceneState| -> Vec<String> {
            let shown = scene.labels(3).unwrap();
            shown.messages.iter().map(|m| m.text.clone()).collect()
        };
        assert_eq!(scene.labels(3).unwrap().id.as_ref().unwrap().text, "three");
        assert_eq!(texts(&scene), ["set", "m3", "m4", "m5", "m6"], "row 1 is the first");
        scene.apply_label(label("", row(-1.0, 2)));
        assert_eq!(
            texts(&scene),
            ["set", "m4", "m5", "m6"],
            "a negative time removes the row"
        );
        scene.apply_label(label("past", row(0.0, 5)));
        assert_eq!(
            texts(&scene),
            ["set", "m4", "m5", "m6", "past"],
            "a row not shown is added"
        );
        scene.apply_label(label(
            "",
            LabelKind::Message {
                seconds: -1.0,
                line: MessageLine::New,
            },
        ));
        assert!(texts(&scene).is_empty(), "every message row goes");
        assert_eq!(
            scene.labels(3).unwrap().id.as_ref().unwrap().text,
            "three",
            "the ID row stays"
        );
        scene.apply_console(&ConsoleRequest::DelVehicles(vec![3]), 1.0);
        assert!(scene.labels(3).is_none(), "gone with its vehicle");
    }

    #[test]
    fn a_vehicle_s_box_turns_with_its_yaw_and_grows_with_its_scale() {
        let mut v = Vehicle {
            id: 1,
            vehicle_type: 3,
            pos: [0.0; 3],
            euler: [0.0; 3],
            scale: [2.0, 1.0, 1.0],
            vel: [0.0; 3],
            motor_rpm: [0.0; 8],
            runned_time: 0.0,
            source: Source::PoseStructs,
        };
        assert_eq!(v.block().max, [0.55, 0.275, 0.15]);
        v.euler[2] = std::f32::consts::FRAC_PI_2;
        let b = v.block();
        assert!(
            (b.max[0] - 0.275).abs() < 1e-6 && (b.max[1] - 0.55).abs() < 1e-6,
            "{b:?}"
        );
    }

    #[test]
    fn crashes_with_the_ground_an_object_and_another_vehicle() {
        let mut scene = SceneState::default();
        scene.apply_console(&ConsoleRequest::VehicleDataPostback(true), 0.0);
        scene.apply_pose(&pose(1, [30.0, 30.0, 0.5]), 0.0); // under the ground
        scene.apply_pose(&pose(2, [16.0, 0.0, -2.0]), 0.0); // inside Building_1
        scene.apply_pose(&pose(3, [30.0, -30.0, -5.0]), 0.0);
        scene.apply_pose(&pose(4, [30.3, -30.0, -5.0]), 0.0); // 0.3 m from 3: the boxes overlap
        scene.apply_pose(&pose(5, [-30.0, 30.0, -5.0]), 0.0); // alone
        let c = crashes(&mut scene, 0.0);
        assert_eq!(c.len(), 5);
        assert_eq!(
            (c[&1].crash, c[&1].crash_pos, c[&1].crashed_name.as_str()),
            (CrashType::Ground, [30.0, 30.0, 0.0], "Landscape_1")
        );
        assert_eq!(
            (c[&2].crash, c[&2].target_pos, c[&2].crashed_name.as_str()),
            (CrashType::SceneObject, [16.0, 0.0, -3.0], "Building_1")
        );
        assert_eq!(
            (c[&3].crash, c[&3].target_pos),
            (CrashType::Vehicle(4), [30.3, -30.0, -5.0])
        );
        assert_eq!(c[&4].crash, CrashType::Vehicle(3));
        assert!((c[&3].crash_pos[0] - 30.15).abs() < 1e-5);
        assert_eq!((c[&5].crash, c[&5].crash_pos), (CrashType::None, [0.0; 3]));
    }

    #[test]
    fn scan_lines_reach_the_ground_the_objects_and_the_vehicles() {
        let mut scene = SceneState::default();
        scene.apply_console(&ConsoleRequest::VehicleDataPostback(true), 0.0);
        // 10 m west of Building_1's west face (x = 14.5), 2 m up, facing north.
        scene.apply_pose(&pose(1, [4.5, 0.0, -2.0]), 0.0);
        // 3 m to its right, on the east.
        scene.apply_pose(&pose(2, [4.5, 3.0, -2.0]), 0.0);
        let c = crashes(&mut scene, 0.0);
        let rays = c[&1].rays;
        assert!((rays[0] - 10.0).abs() < 1e-5, "front: {rays:?}");
        assert!((rays[3] - (3.0 - 0.275)).abs() < 1e-5, "right: {rays:?}");
        assert!((rays[5] - 2.0).abs() < 1e-5, "down: {rays:?}");
        assert_eq!(
            (rays[2], rays[4]),
            (RAY_RANGE, RAY_RANGE),
            "left and up: nothing within reach"
        );
        // Back: the pillar in the middle (x = 1 face), 3.5 m away.
        assert!((rays[1] - 3.5).abs() < 1e-5, "back: {rays:?}");
    }

    #[test]
    fn the_postback_sends_on_change_and_once_a_second() {
        let mut scene = SceneState::default();
        scene.apply_pose(&pose(1, [0.0, 5.0, -3.0]), 0.0);
        assert!(crashes(&mut scene, 0.0).is_empty(), "off until asked for");
        scene.apply_console(&ConsoleRequest::VehicleDataPostback(true), 0.0);
        assert_eq!(crashes(&mut scene, 0.1).len(), 1);
        assert!(crashes(&mut scene, 0.2).is_empty(), "nothing changed");
        // The same pose again with a new time: still no change.
        scene.apply_pose(&pose(1, [0.0, 5.0, -3.0]), 0.3);
        assert!(crashes(&mut scene, 0.3).is_empty());
        scene.apply_pose(&pose(1, [0.0, 5.5, -3.0]), 0.4);
        assert_eq!(crashes(&mut scene, 0.4)[&1].pos_ned, [0.0, 5.5, -3.0]);
        assert!(crashes(&mut scene, 1.3).is_empty());
        assert_eq!(crashes(&mut scene, 1.5).len(), 1, "a second after the last");
        assert_eq!(crashes(&mut scene, 0.0).len(), 1, "the clock went back");
        scene.apply_console(&ConsoleRequest::VehicleDataPostback(false), 2.0);
        scene.apply_pose(&pose(1, [9.0, 5.5, -3.0]), 2.0);
        assert!(crashes(&mut scene, 5.0).is_empty());
    }

    #[test]
    fn coptersim_vehicles_follow_their_trajectory_and_come_back() {
        let trajectory = Trajectory::default();
        let mut scene = SceneState::new(&Scene::default(), &[(1, 0.0), (2, 30.0)], trajectory);
        scene.tick(2.0);
        assert_eq!(scene.vehicle(2).unwrap().pos, trajectory.position(32.0));
        scene.apply_console(&ConsoleRequest::DelVehicles(vec![1, 2]), 2.0);
        assert_eq!(scene.vehicles().count(), 0);
        scene.tick(2.1);
        assert_eq!(scene.vehicles().count(), 2, "CopterSim keeps sending them");
        // A map change keeps them, and removes the others.
        scene.apply_pose(&pose(9, [0.0; 3]), 2.1);
        scene.apply_console(&ConsoleRequest::ChangeMapByName("Grasslands".into()), 2.2);
        assert_eq!(scene.vehicles().map(|v| v.id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(scene.map(), Some(&MapChoice::Name("Grasslands".into())));
        // A camera on vehicle 1 sees vehicle 2 where it is at the frame's time.
        let world = scene.world_at(5.0, Some(1));
        let seen: Vec<_> = world.blocks.iter().filter(|b| b.label == VEHICLE_LABEL).collect();
        assert_eq!(seen.len(), 1);
        let (centre, want) = (seen[0].centre(), trajectory.position(35.0));
        assert!((0..3).all(|k| (centre[k] - want[k]).abs() < 1e-9), "{centre:?}");
    }

    #[test]
    fn replies_and_deletions() {
        let mut scene = SceneState::default();
        scene.apply_pose(&pose(7, [1.0, 2.0, -3.0]), 0.0);
        scene.apply_console(&ConsoleRequest::VehicleData(7), 1.5);
        scene.apply_console(&ConsoleRequest::VehicleData(8), 1.5);
        scene.apply_console(&ConsoleRequest::ObjectData("Tree_2".into()), 1.5);
        scene.apply_console(&ConsoleRequest::ObjectData("Nothing_9".into()), 1.5);
        scene.apply_console(&ConsoleRequest::ObjectData(GROUND_NAME.into()), 1.5);
        let out = scene.take_outbox();
        assert_eq!(out.len(), 3, "no reply for what is not there");
        let StatusDatagram::CopterData(c) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(
            (
                c.copter_id,
                c.pose.pos,
                c.pose.box_extent,
                c.pose.quat,
                c.pose.time_stamp
            ),
            (
                7,
                [1.0, 2.0, -3.0],
                [0.275, 0.275, 0.15],
                Some([1.0, 0.0, 0.0, 0.0]),
                1.5
            )
        );
        assert_eq!(c.encode().len(), 80);
        let StatusDatagram::ObjectData(o) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!(
            (o.name.as_str(), o.pose.pos, o.pose.box_origin, o.pose.box_extent),
            ("Tree_2", [0.0, 16.0, 0.0], [0.0, 16.0, -2.0], [2.0, 2.0, 2.0])
        );
        assert_eq!(o.encode().len(), 112);
        scene.apply_console(&ConsoleRequest::Delete(SceneItem::Object("Tree_2".into())), 2.0);
        scene.apply_console(&ConsoleRequest::Delete(SceneItem::Vehicle(7)), 2.0);
        scene.apply_console(&ConsoleRequest::ObjectData("Tree_2".into()), 2.0);
        scene.apply_console(&ConsoleRequest::VehicleData(7), 2.0);
        assert!(scene.take_outbox().is_empty());
        assert_eq!(
            scene.world_at(2.0, None).blocks.len(),
            4,
            "a deleted object is not drawn either"
        );
        // Deleted, then sent again: created again.
        assert!(scene.apply_pose(&pose(7, [1.0, 2.0, -3.0]), 3.0));
        scene.apply_console(&ConsoleRequest::Clear(ClearScope::VehiclesAndObjects), 3.0);
        assert_eq!(
            (scene.vehicles().count(), scene.world_at(3.0, None).blocks.len()),
            (0, 0)
        );
        scene.apply_console(&ConsoleRequest::ObjectData(GROUND_NAME.into()), 3.0);
        assert_eq!(scene.take_outbox().len(), 1, "the ground stays");
    }
}
