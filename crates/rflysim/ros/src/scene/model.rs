//! What the scene node knows of RflySim3D's scene, without ROS or sockets:
//! the entities by name (vehicles spawned here, CopterSim's, those RflySim3D
//! reports, and scene objects asked for by name), the ids spawned vehicles
//! get, what a spawn resource names, and the conversions between ROS's ENU /
//! FLU and RflySim's NED / FRD. Pure, so that the rules are tested without a node.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use frames::{enu_flu_to_ned_frd_euler, enu_to_ned, euler_to_quat, ned_frd_to_enu_flu, ned_to_enu, Quat, Vec3};
use rflysim_proto::scene::wire_f32;

/// The scheme of every resource this simulator takes.
pub const SCHEME: &str = "rflysim://";
/// `rflysim://vehicle/<type>`: a vehicle of RflySim3D's type (3 quadcopter,
/// 5 / 6 hexacopter, 30 person, 50 car, 100 fixed wing, 150–152 targets;
/// + 1000 × style).
pub const VEHICLE_RESOURCE: &str = "rflysim://vehicle/";
pub use crate::maps::{map_of, MAP_RESOURCE};
/// A quadcopter, when a spawn names no type.
pub const DEFAULT_VEHICLE_TYPE: i32 = 3;
/// The longest name a spawned vehicle takes (it never goes on the wire:
/// RflySim3D knows a vehicle by its id).
pub const MAX_NAME: usize = 64;
/// How long a name RflySim3D did not answer for is answered "not found"
/// without asking again.
pub const UNANSWERED_FOR: Duration = Duration::from_secs(5);
/// For this long after its delete, RflySim3D's reports of a vehicle are
/// taken as sent before it removed the vehicle, not as a new one: else it
/// would come back as a vehicle of its CopterSim, which cannot be deleted.
pub const DELETED_FOR: Duration = Duration::from_secs(1);
/// Names remembered so at most; the oldest makes room.
pub const UNANSWERED_MAX: usize = 1024;

/// What an entity is to RflySim3D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Addressed by its CopterID.
    Vehicle { id: u16, vehicle_type: i32 },
    /// A static scene object, addressed by its name.
    Object,
}

/// Who put the entity in the scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `spawn_entity` of this node.
    Spawned,
    /// A vehicle of `copter_ids` (its CopterSim moves it) or one RflySim3D reported.
    Vehicle,
    /// An object found when asked for by name.
    Object,
}

/// A pose in RflySim's terms: NED metres, FRD attitude as Z-Y-X Euler radians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NedPose {
    pub position: Vec3,
    pub euler: Vec3,
}

/// The last that RflySim3D said of an entity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observed {
    pub pose: NedPose,
    /// NED m/s, when the report has it.
    pub velocity: Option<Vec3>,
    pub at: Instant,
}

impl Observed {
    /// What a report received just now says.
    pub fn now(pose: NedPose, velocity: Option<Vec3>) -> Self {
        Self {
            pose,
            velocity,
            at: Instant::now(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub kind: Kind,
    pub origin: Origin,
    /// The last pose this node sent for it (a spawned or moved vehicle).
    pub commanded: Option<NedPose>,
    pub observed: Option<Observed>,
}

/// Why a spawn is refused (each maps to a result code of the standard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpawnRefusal {
    NameNotUnique(String),
    NameInvalid(String),
    NoResource,
    UnsupportedFormat(String),
    ResourceParseError(String),
    NoFreeId,
    /// The scene holds `max_scene_entities` (this many) entities already.
    SceneFull(usize),
}

impl std::fmt::Display for SpawnRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnRefusal::NameNotUnique(n) => write!(f, "an entity named {n:?} exists (allow_renaming is false)"),
            SpawnRefusal::NameInvalid(why) => write!(f, "invalid name: {why}"),
            SpawnRefusal::NoResource => write!(f, "entity_resource names nothing: give uri {VEHICLE_RESOURCE}<type>"),
            SpawnRefusal::UnsupportedFormat(what) => write!(
                f,
                "{what}: RflySim3D spawns vehicles by type, uri {VEHICLE_RESOURCE}<type> (resource_string is not read)"
            ),
            SpawnRefusal::ResourceParseError(what) => write!(f, "{what}: not a vehicle type 1..65535"),
            SpawnRefusal::NoFreeId => write!(f, "every vehicle id of the spawn range is taken"),
            SpawnRefusal::SceneFull(max) => write!(
                f,
                "the scene holds {max} entities, as many as max_scene_entities allows: delete some first"
            ),
        }
    }
}

/// The vehicle type a resource names.
pub fn vehicle_type_of(uri: &str, resource_string: &str) -> Result<i32, SpawnRefusal> {
    if uri.is_empty() {
        return Err(if resource_string.is_empty() {
            SpawnRefusal::NoResource
        } else {
            SpawnRefusal::UnsupportedFormat("resource_string".into())
        });
    }
    let Some(rest) = uri.strip_prefix(VEHICLE_RESOURCE) else {
        return Err(SpawnRefusal::UnsupportedFormat(format!("uri {uri:?}")));
    };
    if rest.is_empty() {
        return Ok(DEFAULT_VEHICLE_TYPE);
    }
    match rest.parse::<i32>() {
        Ok(t) if (1..=65_535).contains(&t) => Ok(t),
        _ => Err(SpawnRefusal::ResourceParseError(format!("uri {uri:?}"))),
    }
}

fn check_name(name: &str) -> Result<(), SpawnRefusal> {
    if name.len() > MAX_NAME {
        return Err(SpawnRefusal::NameInvalid(format!("longer than {MAX_NAME} bytes")));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'/')
    {
        return Err(SpawnRefusal::NameInvalid(format!(
            "{name:?}: letters, digits, _, - and / only"
        )));
    }
    Ok(())
}

/// The scene as this node knows it.
#[derive(Debug)]
pub struct Scene {
    entities: BTreeMap<String, Entity>,
    /// The name of each vehicle, by its id: an id is looked up, never searched for.
    vehicle_names: HashMap<u16, String>,
    /// Spawned vehicles get ids from here on, the lowest not in use.
    first_spawn_id: u16,
    /// Ids from here up have not been handed out (nor skipped as in use)…
    next_fresh: u32,
    /// …and these, below it, are free again: a spawn finds its id in
    /// O(log n), however many vehicles the scene holds.
    freed: BTreeSet<u16>,
    /// Vehicles deleted lately, and when (see [`DELETED_FOR`]).
    deleted: HashMap<u16, Instant>,
}

/// The name of a vehicle this node did not spawn.
pub fn vehicle_name(id: u16) -> String {
    format!("uav{id}")
}

impl Scene {
    /// `vehicles`: those of `copter_ids`; spawned vehicles get ids from `first_spawn_id` up.
    pub fn new(vehicles: &[u16], first_spawn_id: u16) -> Self {
        let first_spawn_id = first_spawn_id.max(1);
        let mut scene = Self {
            entities: BTreeMap::new(),
            vehicle_names: HashMap::new(),
            first_spawn_id,
            next_fresh: u32::from(first_spawn_id),
            freed: BTreeSet::new(),
            deleted: HashMap::new(),
        };
        for &id in vehicles {
            scene.insert_vehicle(id, DEFAULT_VEHICLE_TYPE, Origin::Vehicle);
        }
        scene
    }

    fn insert_vehicle(&mut self, id: u16, vehicle_type: i32, origin: Origin) -> String {
        let name = vehicle_name(id);
        if !self.entities.contains_key(&name) {
            self.insert(
                name.clone(),
                Entity {
                    kind: Kind::Vehicle { id, vehicle_type },
                    origin,
                    commanded: None,
                    observed: None,
                },
            );
        }
        name
    }

    /// Adds (or replaces) an entity, keeping the id index.
    fn insert(&mut self, name: String, entity: Entity) {
        if let Kind::Vehicle { id, .. } = entity.kind {
            self.vehicle_names.insert(id, name.clone());
        }
        if let Some(Kind::Vehicle { id, .. }) = self.entities.insert(name, entity).map(|e| e.kind) {
            self.released(id);
        }
    }

    /// Vehicle `id` is gone: its id is free again (if it is no other's).
    fn released(&mut self, id: u16) {
        if self
            .vehicle_names
            .get(&id)
            .is_some_and(|n| self.entities.get(n).is_some_and(|e| is_vehicle(e, id)))
        {
            return;
        }
        self.vehicle_names.remove(&id);
        if id >= self.first_spawn_id && u32::from(id) < self.next_fresh {
            self.freed.insert(id);
        }
    }

    /// The lowest id from `first_spawn_id` up that no vehicle has.
    fn free_id(&mut self) -> Option<u16> {
        while let Some(id) = self.freed.pop_first() {
            if !self.vehicle_names.contains_key(&id) {
                return Some(id);
            }
        }
        while let Ok(id) = u16::try_from(self.next_fresh) {
            self.next_fresh += 1;
            if !self.vehicle_names.contains_key(&id) {
                return Some(id);
            }
        }
        None
    }

    pub fn get(&self, name: &str) -> Option<&Entity> {
        self.entities.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.entities.keys()
    }

    pub fn entities(&self) -> impl Iterator<Item = (&String, &Entity)> {
        self.entities.iter()
    }

    /// The entity named for vehicle `id`, if the scene has it.
    pub fn name_of_vehicle(&self, id: u16) -> Option<&String> {
        self.vehicle_names.get(&id)
    }

    /// Adds a spawned vehicle, while the scene holds fewer than
    /// `max_entities`: its unique name and id.
    pub fn spawn(
        &mut self,
        name: &str,
        allow_renaming: bool,
        vehicle_type: i32,
        pose: NedPose,
        max_entities: usize,
    ) -> Result<(String, u16), SpawnRefusal> {
        check_name(name)?;
        if self.entities.len() >= max_entities {
            return Err(SpawnRefusal::SceneFull(max_entities));
        }
        let rename = name.is_empty() || self.entities.contains_key(name);
        if rename && !allow_renaming {
            return Err(if name.is_empty() {
                SpawnRefusal::NameInvalid("empty (allow_renaming is false)".into())
            } else {
                SpawnRefusal::NameNotUnique(name.into())
            });
        }
        let id = self.free_id().ok_or(SpawnRefusal::NoFreeId)?;
        let unique = if rename {
            let stem = if name.is_empty() { "vehicle" } else { name };
            (0..)
                .map(|n| {
                    if n == 0 {
                        format!("{stem}_{id}")
                    } else {
                        format!("{stem}_{id}_{n}")
                    }
                })
                .find(|candidate| !self.entities.contains_key(candidate))
                .expect("an unused name")
        } else {
            name.to_string()
        };
        self.insert(
            unique.clone(),
            Entity {
                kind: Kind::Vehicle { id, vehicle_type },
                origin: Origin::Spawned,
                commanded: Some(pose),
                observed: None,
            },
        );
        Ok((unique, id))
    }

    pub fn remove(&mut self, name: &str) -> Option<Entity> {
        let gone = self.entities.remove(name)?;
        if let Kind::Vehicle { id, .. } = gone.kind {
            self.released(id);
            let now = Instant::now();
            self.deleted.retain(|_, at| now.duration_since(*at) < DELETED_FOR);
            self.deleted.insert(id, now);
        }
        Some(gone)
    }

    /// A new pose sent for `name`.
    pub fn commanded(&mut self, name: &str, pose: NedPose) {
        if let Some(e) = self.entities.get_mut(name) {
            e.commanded = Some(pose);
        }
    }

    /// What RflySim3D reported of vehicle `id`; a vehicle not known yet is
    /// added (`uav<id>`), up to `max_entities` entities in all, unless it
    /// was deleted lately ([`DELETED_FOR`]). Its name.
    pub fn observe_vehicle(
        &mut self,
        id: u16,
        vehicle_type: i32,
        seen: Observed,
        max_entities: usize,
    ) -> Option<String> {
        let deleted_lately = |at: &Instant| seen.at.saturating_duration_since(*at) < DELETED_FOR;
        let name = match self.name_of_vehicle(id) {
            Some(n) => n.clone(),
            None if self.deleted.get(&id).is_some_and(deleted_lately) => return None,
            None if self.entities.len() < max_entities => self.insert_vehicle(id, vehicle_type, Origin::Vehicle),
            None => return None,
        };
        let e = self.entities.get_mut(&name).expect("found or inserted");
        e.observed = Some(Observed {
            velocity: seen.velocity.or(e.observed.and_then(|o| o.velocity)),
            ..seen
        });
        Some(name)
    }

    /// A scene object RflySim3D answered for.
    pub fn observe_object(&mut self, name: &str, seen: Observed, max_entities: usize) -> bool {
        if let Some(e) = self.entities.get_mut(name) {
            e.observed = Some(seen);
            return true;
        }
        if self.entities.len() >= max_entities || rflysim_proto::console::check_name(name).is_err() {
            return false;
        }
        self.entities.insert(
            name.to_string(),
            Entity {
                kind: Kind::Object,
                origin: Origin::Object,
                commanded: None,
                observed: Some(seen),
            },
        );
        true
    }

    /// A map change: what this node spawned is gone with the old map. The
    /// ids of the vehicles gone.
    pub fn forget_spawned(&mut self) -> Vec<u16> {
        let spawned: Vec<String> = self
            .entities
            .iter()
            .filter(|(_, e)| e.origin == Origin::Spawned)
            .map(|(n, _)| n.clone())
            .collect();
        spawned
            .iter()
            .filter_map(|name| match self.remove(name)?.kind {
                Kind::Vehicle { id, .. } => Some(id),
                Kind::Object => None,
            })
            .collect()
    }
}

fn is_vehicle(e: &Entity, id: u16) -> bool {
    matches!(e.kind, Kind::Vehicle { id: i, .. } if i == id)
}

/// `v`, the x, y, z of request field `field`, if each fits the wire's `f32`
/// finitely (RflySim3D takes and reports positions and velocities in `f32`);
/// else which value does not.
pub fn wire_vec(field: &str, v: Vec3) -> Result<Vec3, String> {
    match v.iter().zip(["x", "y", "z"]).find(|(c, _)| wire_f32(**c).is_none()) {
        Some((c, axis)) => Err(format!(
            "{field}.{axis} = {c:e} does not fit RflySim3D's f32 (finite, at most 3.4e38 in size)"
        )),
        None => Ok(v),
    }
}

/// A ROS pose (ENU position, FLU-in-ENU quaternion `[w, x, y, z]`) of
/// request field `field` in RflySim's terms, or which value RflySim3D
/// cannot take: a position beyond `f32`, an orientation that is not finite
/// or not a rotation.
pub fn ned_pose(field: &str, position_enu: Vec3, q_enu_flu: Quat) -> Result<NedPose, String> {
    wire_vec(&format!("{field}.position"), position_enu)?;
    if !q_enu_flu.iter().all(|v| v.is_finite()) {
        return Err(format!("{field}.orientation is not finite"));
    }
    // |q| in 0.5..=1.5, squared.
    let norm2 = q_enu_flu.iter().map(|v| v * v).sum::<f64>();
    if !(0.25..=2.25).contains(&norm2) {
        return Err(format!(
            "{field}.orientation is not a rotation (|q| = {:.3})",
            norm2.sqrt()
        ));
    }
    let euler = enu_flu_to_ned_frd_euler(q_enu_flu);
    Ok(NedPose {
        position: enu_to_ned(position_enu),
        euler,
    })
}

/// The names RflySim3D did not answer for lately: asked again only
/// [`UNANSWERED_FOR`] later, so that lookups of names it does not have
/// neither wait nor hold a waiting call. At most [`UNANSWERED_MAX`] names.
#[derive(Debug, Default)]
pub struct Unanswered {
    since: HashMap<String, Instant>,
}

impl Unanswered {
    /// RflySim3D did not answer for `name`, asked at `now`.
    pub fn remember(&mut self, name: &str, now: Instant) {
        if self.since.len() >= UNANSWERED_MAX && !self.since.contains_key(name) {
            self.since
                .retain(|_, at| now.saturating_duration_since(*at) < UNANSWERED_FOR);
            if self.since.len() >= UNANSWERED_MAX {
                if let Some(oldest) = self.since.iter().min_by_key(|(_, at)| **at).map(|(n, _)| n.clone()) {
                    self.since.remove(&oldest);
                }
            }
        }
        self.since.insert(name.to_string(), now);
    }

    /// How long ago RflySim3D did not answer for `name`, if that is recent.
    pub fn recent(&self, name: &str, now: Instant) -> Option<Duration> {
        let ago = now.saturating_duration_since(*self.since.get(name)?);
        (ago < UNANSWERED_FOR).then_some(ago)
    }

    /// `name` exists now (spawned, or RflySim3D answered for it).
    pub fn forget(&mut self, name: &str) {
        self.since.remove(name);
    }

    /// A new map: names missing from the old one may be in it.
    pub fn clear(&mut self) {
        self.since.clear();
    }
}

/// A pose in RflySim's terms → ENU position and FLU-in-ENU quaternion.
pub fn enu_pose(p: &NedPose) -> (Vec3, Quat) {
    let [roll, pitch, yaw] = p.euler;
    let q = ned_frd_to_enu_flu(euler_to_quat(roll, pitch, yaw));
    // q and -q are one rotation; w ≥ 0 gives each pose one spelling.
    let q = if q[0] < 0.0 { q.map(|v| -v) } else { q };
    (ned_to_enu(p.position), q)
}

/// A box RflySim3D reports (centre in NED metres, half extents along the
/// object's forward, right, up) about an entity at `pose` → the two corners
/// of the standard's TYPE_BOX in the entity's FLU frame: upper (max), then
/// lower (min).
pub fn box_corners(pose: &NedPose, centre_ned: Vec3, half_extent_fru: Vec3) -> [Vec3; 2] {
    let [roll, pitch, yaw] = pose.euler;
    let q = euler_to_quat(roll, pitch, yaw);
    let inverse = [q[0], -q[1], -q[2], -q[3]];
    let d = [
        centre_ned[0] - pose.position[0],
        centre_ned[1] - pose.position[1],
        centre_ned[2] - pose.position[2],
    ];
    let frd = frames::rotate(inverse, d);
    let centre_flu = frames::frd_to_flu(frd);
    let e = half_extent_fru.map(f64::abs);
    [
        [centre_flu[0] + e[0], centre_flu[1] + e[1], centre_flu[2] + e[2]],
        [centre_flu[0] - e[0], centre_flu[1] - e[1], centre_flu[2] - e[2]],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANY: usize = 10_000;

    fn pose() -> NedPose {
        NedPose {
            position: [1.0, 2.0, -3.0],
            euler: [0.0, 0.0, 0.0],
        }
    }

    #[test]
    fn resources_name_a_vehicle_type_or_are_refused_with_the_standard_s_reasons() {
        assert_eq!(vehicle_type_of("rflysim://vehicle/3", ""), Ok(3));
        assert_eq!(vehicle_type_of("rflysim://vehicle/1003", ""), Ok(1003));
        assert_eq!(vehicle_type_of("rflysim://vehicle/", ""), Ok(DEFAULT_VEHICLE_TYPE));
        assert_eq!(vehicle_type_of("", ""), Err(SpawnRefusal::NoResource));
        assert!(matches!(
            vehicle_type_of("", "<sdf/>"),
            Err(SpawnRefusal::UnsupportedFormat(_))
        ));
        assert!(matches!(
            vehicle_type_of("model://x500", ""),
            Err(SpawnRefusal::UnsupportedFormat(_))
        ));
        assert!(matches!(
            vehicle_type_of("rflysim://vehicle/0", ""),
            Err(SpawnRefusal::ResourceParseError(_))
        ));
        assert!(matches!(
            vehicle_type_of("rflysim://vehicle/x", ""),
            Err(SpawnRefusal::ResourceParseError(_))
        ));
        assert_eq!(map_of("rflysim://map/Grasslands").as_deref(), Ok("Grasslands"));
        assert_eq!(map_of("3Ddisplay").as_deref(), Ok("3Ddisplay"));
        assert!(map_of("").is_err() && map_of("a b").is_err() && map_of("rflysim://vehicle/3").is_err());
    }

    #[test]
    fn names_are_unique_and_ids_skip_those_in_use() {
        let mut s = Scene::new(&[1, 1000], 1000);
        assert_eq!(s.spawn("x", false, 3, pose(), MANY), Ok(("x".into(), 1001)));
        assert_eq!(
            s.spawn("x", false, 3, pose(), MANY),
            Err(SpawnRefusal::NameNotUnique("x".into()))
        );
        assert_eq!(s.spawn("x", true, 3, pose(), MANY), Ok(("x_1002".into(), 1002)));
        assert!(matches!(
            s.spawn("", false, 3, pose(), MANY),
            Err(SpawnRefusal::NameInvalid(_))
        ));
        assert_eq!(s.spawn("", true, 3, pose(), MANY), Ok(("vehicle_1003".into(), 1003)));
        assert!(matches!(
            s.spawn("a b", true, 3, pose(), MANY),
            Err(SpawnRefusal::NameInvalid(_))
        ));
        assert!(s.remove("x").is_some());
        assert_eq!(
            s.spawn("y", false, 3, pose(), MANY),
            Ok(("y".into(), 1001)),
            "a freed id is used again"
        );
        assert_eq!(s.name_of_vehicle(1).map(String::as_str), Some("uav1"));
        assert_eq!(s.forget_spawned().len(), 3);
        assert_eq!(s.names().cloned().collect::<Vec<_>>(), ["uav1", "uav1000"]);
    }

    #[test]
    fn spawns_stop_at_the_bound_and_take_the_lowest_free_id_at_once() {
        let mut s = Scene::new(&[1], 1000);
        for i in 0..9 {
            assert_eq!(s.spawn("x", true, 3, pose(), 10).map(|(_, id)| id), Ok(1000 + i));
        }
        assert_eq!(s.spawn("y", false, 3, pose(), 10), Err(SpawnRefusal::SceneFull(10)));
        assert!(s
            .spawn("z", true, 3, pose(), 10)
            .unwrap_err()
            .to_string()
            .contains("max_scene_entities"));
        assert!(s.remove("x_1004").is_some() && s.remove("x_1002").is_some());
        assert_eq!(s.spawn("y", false, 3, pose(), 10), Ok(("y".into(), 1002)));
        // Reports of a vehicle just deleted were sent before RflySim3D removed it.
        let seen = Observed::now(pose(), None);
        assert_eq!(s.observe_vehicle(1004, 3, seen, 10), None);
        assert!(s.get("uav1004").is_none());
        // Later, a vehicle RflySim3D reports takes an id: spawns skip it.
        let later = Observed {
            at: seen.at + DELETED_FOR,
            ..seen
        };
        assert_eq!(s.observe_vehicle(1004, 3, later, 10).as_deref(), Some("uav1004"));
        assert_eq!(s.spawn("w", false, 3, pose(), 11), Ok(("w".into(), 1009)));
        assert_eq!(s.name_of_vehicle(1004).map(String::as_str), Some("uav1004"));
        assert_eq!(s.forget_spawned().len(), 9);
        assert_eq!(s.spawn("v", false, 3, pose(), 10), Ok(("v".into(), 1000)));
        assert_eq!(s.name_of_vehicle(1002), None);
        // The last ids of the range, then none.
        let mut s = Scene::new(&[], u16::MAX - 1);
        assert_eq!(s.spawn("a", false, 3, pose(), 10).map(|(_, id)| id), Ok(u16::MAX - 1));
        assert_eq!(s.spawn("b", false, 3, pose(), 10).map(|(_, id)| id), Ok(u16::MAX));
        assert_eq!(s.spawn("c", false, 3, pose(), 10), Err(SpawnRefusal::NoFreeId));
    }

    #[test]
    fn a_full_scene_spawns_in_time_independent_of_its_size() {
        // 60 000 spawns: a scan of the scene per spawn (quadratic) would take minutes.
        let mut s = Scene::new(&[], 1);
        let began = Instant::now();
        for _ in 0..60_000 {
            s.spawn("v", true, 3, pose(), 100_000).unwrap();
        }
        assert!(s.remove("v_30000").is_some());
        assert_eq!(s.spawn("w", false, 3, pose(), 100_000), Ok(("w".into(), 30_000)));
        assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
    }

    #[test]
    fn names_without_an_answer_are_remembered_briefly_and_boundedly() {
        let mut u = Unanswered::default();
        let t0 = Instant::now();
        u.remember("ghost", t0);
        assert_eq!(
            u.recent("ghost", t0 + Duration::from_secs(1)),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            u.recent("ghost", t0 + UNANSWERED_FOR),
            None,
            "asked again after its lifetime"
        );
        assert_eq!(u.recent("other", t0), None);
        u.forget("ghost");
        assert_eq!(u.recent("ghost", t0), None);
        for i in 0..UNANSWERED_MAX + 10 {
            u.remember(&format!("n{i}"), t0 + Duration::from_millis(i as u64));
        }
        assert_eq!(u.since.len(), UNANSWERED_MAX);
        let last = t0 + Duration::from_millis(UNANSWERED_MAX as u64 + 9);
        assert!(u.recent("n0", last).is_none(), "the oldest made room");
        assert!(u.recent(&format!("n{}", UNANSWERED_MAX + 9), last).is_some());
        u.clear();
        assert!(u.since.is_empty());
    }

    #[test]
    fn reported_vehicles_and_objects_join_the_scene_up_to_a_bound() {
        let mut s = Scene::new(&[], 1000);
        let seen = Observed::now(pose(), Some([1.0, 0.0, 0.0]));
        assert_eq!(s.observe_vehicle(7, 3, seen, 2).as_deref(), Some("uav7"));
        assert!(s.observe_object("Building_1", seen, 2));
        assert_eq!(s.observe_vehicle(8, 3, seen, 2), None, "bounded");
        assert!(!s.observe_object("Tree_2", seen, 2));
        // A report without a velocity keeps the last one known.
        s.observe_vehicle(7, 3, Observed { velocity: None, ..seen }, 2);
        assert_eq!(s.get("uav7").unwrap().observed.unwrap().velocity, Some([1.0, 0.0, 0.0]));
    }

    #[test]
    fn poses_go_between_enu_flu_and_ned_frd() {
        // Facing north (ENU yaw +90°) at 10 m up, 5 m east: NED (0, 5, -10), yaw 0.
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let p = ned_pose("p", [5.0, 0.0, 10.0], [h, 0.0, 0.0, h]).unwrap();
        assert_eq!(p.position, [0.0, 5.0, -10.0]);
        assert!(p.euler.iter().all(|a| a.abs() < 1e-9), "{p:?}");
        let (enu, q) = enu_pose(&p);
        assert_eq!(enu, [5.0, 0.0, 10.0]);
        assert!((q[0] - h).abs() < 1e-9 && (q[3] - h).abs() < 1e-9, "{q:?}");
        assert!(ned_pose("p", [f64::NAN, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]).is_err());
        assert!(ned_pose("p", [0.0; 3], [0.0; 4])
            .unwrap_err()
            .contains("p.orientation is not a rotation"));
        assert!(ned_pose("p", [0.0; 3], [f64::NAN, 0.0, 0.0, 1.0]).is_err());
        // Finite in f64, not in RflySim3D's f32.
        let far = ned_pose("initial_pose.pose", [0.0, 1e39, 0.0], [1.0, 0.0, 0.0, 0.0]).unwrap_err();
        assert!(far.contains("initial_pose.pose.position.y = 1e39"), "{far}");
        assert!(ned_pose("p", [3.0e38, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]).is_ok());
        assert!(wire_vec("v", [0.0, 0.0, -1e300]).unwrap_err().starts_with("v.z"));
    }

    #[test]
    fn a_box_is_given_in_the_entity_s_flu_frame() {
        // Yawed 90° (facing east): a centre 1 m east of it is 1 m ahead.
        let p = NedPose {
            position: [0.0, 0.0, -5.0],
            euler: [0.0, 0.0, std::f64::consts::FRAC_PI_2],
        };
        let [upper, lower] = box_corners(&p, [0.0, 1.0, -5.0], [0.3, 0.2, 0.1]);
        for (got, want) in upper.iter().zip([1.3, 0.2, 0.1]) {
            assert!((got - want).abs() < 1e-9, "{upper:?}");
        }
        for (got, want) in lower.iter().zip([0.7, -0.2, -0.1]) {
            assert!((got - want).abs() < 1e-9, "{lower:?}");
        }
    }
}
