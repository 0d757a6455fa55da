//! The Simulation Interfaces services of the scene node, and its console.
//! Each request is answered on a task of its own: one waiting for
//! RflySim3D never holds up another.

use std::sync::Arc;

use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Point, Pose, Quaternion, Twist, Vector3};
use r2r::rflysim_bridge::srv::Console;
use r2r::simulation_interfaces::msg::{Bounds, EntityState, Result as SimResult, SimulatorFeatures};
use r2r::simulation_interfaces::srv::{
    DeleteEntity, GetCurrentWorld, GetEntities, GetEntitiesStates, GetEntityBounds, GetEntityState,
    GetSimulatorFeatures, LoadWorld, SetEntityState, SpawnEntity,
};
use r2r::Node;
use tokio::sync::watch;

use rflysim_proto::console::{ConsoleRequest, SceneItem};

use super::model::{self, Entity, Kind, NedPose, Origin, SpawnRefusal};
use super::serving::{failed, ok, serve_one};
use super::world::{load_world, world_resource};
use super::{AskError, Awaited, Reply, SceneCore, WaitKind};
use crate::names;

/// Every service of the scene node.
pub fn serve(node: &mut Node, core: &Arc<SceneCore>, shutdown: watch::Receiver<bool>) -> Result<(), String> {
    let s = shutdown;
    serve_one::<GetSimulatorFeatures::Service, _, _>(node, "get_simulator_features", core, s.clone(), |_, _| async {
        features()
    })?;
    serve_one::<SpawnEntity::Service, _, _>(
        node,
        "spawn_entity",
        core,
        s.clone(),
        |c, r| async move { spawn(&c, r) },
    )?;
    serve_one::<DeleteEntity::Service, _, _>(
        node,
        "delete_entity",
        core,
        s.clone(),
        |c, r| async move { delete(&c, r) },
    )?;
    serve_one::<GetEntities::Service, _, _>(
        node,
        "get_entities",
        core,
        s.clone(),
        |c, r| async move { entities(&c, r) },
    )?;
    serve_one::<GetEntityState::Service, _, _>(node, "get_entity_state", core, s.clone(), |c, r| async move {
        match state_of(&c, &r.entity, false).await {
            Ok(state) => GetEntityState::Response { result: ok(), state },
            Err(result) => GetEntityState::Response {
                result,
                ..Default::default()
            },
        }
    })?;
    serve_one::<GetEntitiesStates::Service, _, _>(node, "get_entities_states", core, s.clone(), |c, r| async move {
        entities_states(&c, r).await
    })?;
    serve_one::<SetEntityState::Service, _, _>(node, "set_entity_state", core, s.clone(), |c, r| async move {
        set_state(&c, r)
    })?;
    serve_one::<GetEntityBounds::Service, _, _>(node, "get_entity_bounds", core, s.clone(), |c, r| async move {
        bounds(&c, r).await
    })?;
    serve_one::<LoadWorld::Service, _, _>(node, "load_world", core, s.clone(), |c, r| async move {
        let loaded = load_world(&c, r);
        if loaded.result.result == SimResult::RESULT_OK as u8 {
            super::terrain::load(&c, loaded.world.name.clone()).await;
        }
        loaded
    })?;
    serve_one::<GetCurrentWorld::Service, _, _>(node, "get_current_world", core, s.clone(), |c, _| async move {
        match c.world.lock().unwrap().clone() {
            Some(name) => GetCurrentWorld::Response {
                result: ok(),
                world: world_resource(&name),
            },
            None => GetCurrentWorld::Response {
                result: failed(
                    GetCurrentWorld::Response::NO_WORLD_LOADED as u8,
                    "the map RflySim3D started with is not known to the bridge: load one, or set parameter world_name",
                ),
                ..Default::default()
            },
        }
    })?;
    serve_one::<Console::Service, _, _>(node, "rflysim/console", core, s, |c, r| async move { console(&c, r) })
}

fn features() -> GetSimulatorFeatures::Response {
    let features = vec![
        SimulatorFeatures::SPAWNING as u16,
        SimulatorFeatures::DELETING as u16,
        SimulatorFeatures::ENTITY_BOUNDS as u16,
        SimulatorFeatures::ENTITY_STATE_GETTING as u16,
        SimulatorFeatures::ENTITY_STATE_SETTING as u16,
        SimulatorFeatures::WORLD_LOADING as u16,
        SimulatorFeatures::WORLD_INFO_GETTING as u16,
        SimulatorFeatures::SPAWNABLES as u16,
        SimulatorFeatures::ENTITY_INFO_GETTING as u16,
        SimulatorFeatures::AVAILABLE_WORLDS as u16,
    ];
    GetSimulatorFeatures::Response {
        features: SimulatorFeatures {
            features,
            spawn_formats: vec!["rflysim".into()],
            custom_info: format!(
                "RflySim3D. spawn_entity: entity_resource.uri {}<type> (3 quadcopter, 5/6 hexacopter, 30 person, \
                 50 car, 100 fixed wing, 150-152 targets; + 1000 x style); a vehicle asked for at or under the \
                 ground of a map with files in map_dir is put on it. load_world: {}<name>. Poses in {} (ENU). \
                 The ground's height: rflysim/get_terrain_height.",
                model::VEHICLE_RESOURCE,
                model::MAP_RESOURCE,
                names::WORLD_FRAME
            ),
        },
    }
}

/// Whether a pose's frame is the scene's: empty, "world" or the ENU world frame.
fn scene_frame(frame_id: &str) -> bool {
    frame_id.is_empty() || frame_id == "world" || frame_id == names::WORLD_FRAME
}

fn pose_parts(p: &Pose) -> ([f64; 3], [f64; 4]) {
    (
        [p.position.x, p.position.y, p.position.z],
        [p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z],
    )
}

fn spawn(core: &Arc<SceneCore>, r: SpawnEntity::Request) -> SpawnEntity::Response {
    let refuse = |code: u8, message: String| SpawnEntity::Response {
        result: failed(code, message),
        entity_name: String::new(),
    };
    let vehicle_type = match model::vehicle_type_of(&r.entity_resource.uri, &r.entity_resource.resource_string) {
        Ok(t) => t,
        Err(e) => {
            let code = match e {
                SpawnRefusal::NoResource => SpawnEntity::Response::NO_RESOURCE as u8,
                SpawnRefusal::ResourceParseError(_) => SpawnEntity::Response::RESOURCE_PARSE_ERROR as u8,
                _ => SpawnEntity::Response::UNSUPPORTED_FORMAT as u8,
            };
            return refuse(code, e.to_string());
        }
    };
    if !r.entity_namespace.is_empty() && !valid_namespace(&r.entity_namespace) {
        return refuse(
            SpawnEntity::Response::NAMESPACE_INVALID as u8,
            format!("{:?} is not a ROS namespace", r.entity_namespace),
        );
    }
    if !scene_frame(&r.initial_pose.header.frame_id) {
        return refuse(
            SpawnEntity::Response::INVALID_POSE as u8,
            format!(
                "frame {:?} unknown: give poses in {}",
                r.initial_pose.header.frame_id,
                names::WORLD_FRAME
            ),
        );
    }
    let (position, q) = pose_parts(&r.initial_pose.pose);
    let mut pose = match model::ned_pose("initial_pose.pose", position, q) {
        Ok(p) => p,
        Err(why) => return refuse(SpawnEntity::Response::INVALID_POSE as u8, why),
    };
    let on_ground = super::terrain::onto_ground(core, &mut pose);
    let spawned = core.scene.lock().unwrap().spawn(
        &r.name,
        r.allow_renaming,
        vehicle_type,
        pose,
        core.settings.max_entities,
    );
    let (name, id) = match spawned {
        Ok(x) => x,
        Err(e) => {
            let code = match e {
                SpawnRefusal::NameNotUnique(_) => SpawnEntity::Response::NAME_NOT_UNIQUE as u8,
                SpawnRefusal::NameInvalid(_) => SpawnEntity::Response::NAME_INVALID as u8,
                _ => SimResult::RESULT_OPERATION_FAILED as u8,
            };
            return refuse(code, e.to_string());
        }
    };
    // Its topics first: RflySim3D may report the vehicle (a crash) as soon as it is placed.
    if let Err(why) = core.open_spawned_topics(id) {
        core.scene.lock().unwrap().remove(&name);
        return refuse(SimResult::RESULT_OPERATION_FAILED as u8, why);
    }
    let sent = if on_ground {
        core.place_on_ground(id, vehicle_type, &pose)
    } else {
        core.place(id, vehicle_type, &pose, [0.0; 3])
    };
    if let Err(why) = sent {
        core.scene.lock().unwrap().remove(&name);
        core.close_spawned_topics(&[id]);
        return refuse(SimResult::RESULT_OPERATION_FAILED as u8, why);
    }
    core.unanswered.lock().unwrap().forget(&name);
    r2r::log_info!(
        &core.logger,
        "scene: spawned {name} (vehicle {id}, type {vehicle_type}){}",
        if on_ground { ", on the ground" } else { "" }
    );
    SpawnEntity::Response {
        result: ok(),
        entity_name: name,
    }
}

fn valid_namespace(ns: &str) -> bool {
    ns.split('/').filter(|s| !s.is_empty()).all(|s| {
        s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') && !s.starts_with(|c: char| c.is_ascii_digit())
    })
}

fn delete(core: &SceneCore, r: DeleteEntity::Request) -> DeleteEntity::Response {
    let entity = core.scene.lock().unwrap().get(&r.entity).cloned();
    let result = match entity {
        None => failed(
            SimResult::RESULT_NOT_FOUND as u8,
            format!("no entity named {:?}", r.entity),
        ),
        Some(e) => {
            let request = match e.kind {
                Kind::Vehicle { id, .. } if e.origin == Origin::Spawned => {
                    ConsoleRequest::DelVehicles(vec![i32::from(id)])
                }
                Kind::Vehicle { id, .. } => {
                    return DeleteEntity::Response {
                        result: failed(
                            SimResult::RESULT_OPERATION_FAILED as u8,
                            format!(
                                "vehicle {id} is sent by its CopterSim, which would create it again: stop it there"
                            ),
                        ),
                    }
                }
                Kind::Object => ConsoleRequest::Delete(SceneItem::Object(r.entity.clone())),
            };
            match core.console(&request) {
                Ok(()) => {
                    if let Some(Kind::Vehicle { id, .. }) = core.scene.lock().unwrap().remove(&r.entity).map(|e| e.kind)
                    {
                        core.close_spawned_topics(&[id]);
                    }
                    ok()
                }
                Err(why) => failed(SimResult::RESULT_OPERATION_FAILED as u8, why),
            }
        }
    };
    DeleteEntity::Response { result }
}

fn entities(core: &SceneCore, r: GetEntities::Request) -> GetEntities::Response {
    match matching(core, &r.filters) {
        Ok(entities) => GetEntities::Response { result: ok(), entities },
        Err(result) => GetEntities::Response {
            result,
            entities: Vec::new(),
        },
    }
}

/// The names of the entities `filters` selects: by name only (categories,
/// tags and bounds are not features of this simulator).
fn matching(
    core: &SceneCore,
    filters: &r2r::simulation_interfaces::msg::EntityFilters,
) -> Result<Vec<String>, SimResult> {
    if !filters.categories.is_empty()
        || !filters.tags.tags.is_empty()
        || filters.bounds.type_ != Bounds::TYPE_EMPTY as u8
    {
        return Err(failed(
            SimResult::RESULT_FEATURE_UNSUPPORTED as u8,
            "only the name filter is supported (no categories, tags or bounds)",
        ));
    }
    let pattern = regex::RegexBuilder::new(&filters.filter)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| failed(SimResult::RESULT_OPERATION_FAILED as u8, format!("filter: {e}")))?;
    Ok(core
        .scene
        .lock()
        .unwrap()
        .names()
        .filter(|n| pattern.is_match(n))
        .cloned()
        .collect())
}

/// What an entity name stands for, known (`entity`) or not: a vehicle
/// (`uav<id>` or one spawned) or a scene object.
fn awaited(name: &str, entity: Option<&Entity>) -> Awaited {
    match entity.map(|e| e.kind) {
        Some(Kind::Vehicle { id, .. }) => Awaited::Vehicle(i32::from(id)),
        Some(Kind::Object) => Awaited::Object(name.to_string()),
        None => match name.strip_prefix("uav").and_then(|n| n.parse::<u16>().ok()) {
            Some(id) => Awaited::Vehicle(i32::from(id)),
            None => Awaited::Object(name.to_string()),
        },
    }
}

/// RflySim3D's answer for `name` (and the entity, if the scene knows it),
/// or the standard's result saying why none. A name the scene does not know
/// is checked before it goes on the wire, and one RflySim3D did not answer
/// for lately is not found at once, without asking.
async fn look_up(core: &SceneCore, name: &str, listing: bool) -> Result<(Reply, Option<Entity>), SimResult> {
    let known = core.scene.lock().unwrap().get(name).cloned();
    let kind = match (&known, listing) {
        (Some(_), false) => WaitKind::Known,
        (Some(_), true) => WaitKind::Listing,
        (None, _) => WaitKind::Unknown,
    };
    if known.is_none() {
        if let Err(why) = rflysim_proto::console::check_name(name) {
            return Err(failed(
                SimResult::RESULT_NOT_FOUND as u8,
                format!("no entity can be named {name:?}: {why}; nothing sent to RflySim3D"),
            ));
        }
        let ago = core.unanswered.lock().unwrap().recent(name, std::time::Instant::now());
        if let Some(ago) = ago {
            return Err(failed(
                SimResult::RESULT_NOT_FOUND as u8,
                format!(
                    "no entity named {name:?}: RflySim3D did not answer for it {:.1} s ago (asked again {} s after)",
                    ago.as_secs_f64(),
                    model::UNANSWERED_FOR.as_secs()
                ),
            ));
        }
    }
    match core.ask(awaited(name, known.as_ref()), kind).await {
        Ok(reply) => Ok((reply, known)),
        Err(AskError::Silent(why)) if known.is_none() => {
            core.unanswered
                .lock()
                .unwrap()
                .remember(name, std::time::Instant::now());
            Err(failed(
                SimResult::RESULT_NOT_FOUND as u8,
                format!("no entity named {name:?}: {why}"),
            ))
        }
        Err(why) => Err(failed(SimResult::RESULT_OPERATION_FAILED as u8, why.to_string())),
    }
}

fn entity_state(pose: &NedPose, velocity: Option<[f64; 3]>, stamp: Time) -> EntityState {
    let (position, q) = model::enu_pose(pose);
    let v = velocity.map(frames::ned_to_enu).unwrap_or_default();
    EntityState {
        header: ros_common::msgs::header(stamp, names::WORLD_FRAME),
        pose: Pose {
            position: Point {
                x: position[0],
                y: position[1],
                z: position[2],
            },
            orientation: Quaternion {
                w: q[0],
                x: q[1],
                y: q[2],
                z: q[3],
            },
        },
        // World frame velocities, as the header's frame says.
        twist: Twist {
            linear: Vector3 {
                x: v[0],
                y: v[1],
                z: v[2],
            },
            angular: Vector3::default(),
        },
        ..Default::default()
    }
}

/// An entity's state: from RflySim3D's postback while it flows, else asked
/// for. An unknown name RflySim3D does not answer for is not found.
async fn state_of(core: &SceneCore, name: &str, listing: bool) -> Result<EntityState, SimResult> {
    let seen = core.scene.lock().unwrap().get(name).and_then(|e| e.observed);
    if let Some(seen) = seen {
        if seen.at.elapsed() < super::POSTBACK_FRESH && seen.velocity.is_some() {
            return Ok(entity_state(&seen.pose, seen.velocity, core.stamps.now()));
        }
    }
    let (reply, known) = look_up(core, name, listing).await?;
    let velocity = known.and_then(|e| e.observed).and_then(|o| o.velocity);
    Ok(entity_state(&super::ned_pose_of(&reply), velocity, core.stamps.now()))
}

async fn entities_states(core: &SceneCore, r: GetEntitiesStates::Request) -> GetEntitiesStates::Response {
    let names = match matching(core, &r.filters) {
        Ok(n) => n,
        Err(result) => {
            return GetEntitiesStates::Response {
                result,
                ..Default::default()
            }
        }
    };
    let states = futures::future::join_all(names.iter().map(|n| state_of(core, n, true))).await;
    let (mut entities, mut out, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for (name, state) in names.into_iter().zip(states) {
        match state {
            Ok(s) => {
                entities.push(name);
                out.push(s);
            }
            Err(_) => missing.push(name),
        }
    }
    let result = if missing.is_empty() {
        ok()
    } else {
        SimResult {
            error_message: format!("no state from RflySim3D for {}", missing.join(", ")),
            ..ok()
        }
    };
    GetEntitiesStates::Response {
        result,
        entities,
        states: out,
    }
}

fn set_state(core: &SceneCore, r: SetEntityState::Request) -> SetEntityState::Response {
    let answer = |result| SetEntityState::Response { result };
    let Some(entity) = core.scene.lock().unwrap().get(&r.entity).cloned() else {
        return answer(failed(
            SimResult::RESULT_NOT_FOUND as u8,
            format!("no entity named {:?}", r.entity),
        ));
    };
    let Kind::Vehicle { id, vehicle_type } = entity.kind else {
        return answer(failed(
            SimResult::RESULT_OPERATION_FAILED as u8,
            "scene objects are static: they cannot be moved",
        ));
    };
    if !scene_frame(&r.state.header.frame_id) {
        return answer(failed(
            SetEntityState::Response::INVALID_POSE as u8,
            format!(
                "frame {:?} unknown: give states in {}",
                r.state.header.frame_id,
                names::WORLD_FRAME
            ),
        ));
    }
    let pose = if r.set_pose {
        let (position, q) = pose_parts(&r.state.pose);
        match model::ned_pose("state.pose", position, q) {
            Ok(p) => p,
            Err(why) => return answer(failed(SetEntityState::Response::INVALID_POSE as u8, why)),
        }
    } else {
        match entity.commanded.or(entity.observed.map(|o| o.pose)) {
            Some(p) => p,
            None => {
                return answer(failed(
                    SimResult::RESULT_OPERATION_FAILED as u8,
                    "no pose known to keep: set_pose too",
                ))
            }
        }
    };
    let l = &r.state.twist.linear;
    let velocity = if r.set_twist {
        match model::wire_vec("state.twist.linear", [l.x, l.y, l.z]) {
            Ok(v) => frames::enu_to_ned(v),
            Err(why) => return answer(failed(SimResult::RESULT_OPERATION_FAILED as u8, why)),
        }
    } else {
        [0.0; 3]
    };
    match core.place(id, vehicle_type, &pose, velocity) {
        Ok(()) => {
            core.scene.lock().unwrap().commanded(&r.entity, pose);
            answer(ok())
        }
        Err(why) => answer(failed(SimResult::RESULT_OPERATION_FAILED as u8, why)),
    }
}

async fn bounds(core: &SceneCore, r: GetEntityBounds::Request) -> GetEntityBounds::Response {
    match look_up(core, &r.entity, false).await {
        Ok((reply, _)) => {
            let pose = super::ned_pose_of(&reply);
            let corners = model::box_corners(&pose, reply.box_origin.map(f64::from), reply.box_extent.map(f64::from));
            GetEntityBounds::Response {
                result: ok(),
                bounds: Bounds {
                    type_: Bounds::TYPE_BOX as u8,
                    points: corners
                        .iter()
                        .map(|c| Vector3 {
                            x: c[0],
                            y: c[1],
                            z: c[2],
                        })
                        .collect(),
                },
            }
        }
        Err(result) => GetEntityBounds::Response {
            result,
            ..Default::default()
        },
    }
}

fn console(core: &SceneCore, r: Console::Request) -> Console::Response {
    let refuse = |message: String| Console::Response {
        success: false,
        message,
    };
    let command = match super::console_text(&r.command) {
        Ok(c) => c,
        Err(why) => return refuse(format!("refused, nothing sent: {why}")),
    };
    let window = match r.window {
        -1 => None,
        w if (0..i32::from(super::WINDOWS)).contains(&w) => Some(w as u16),
        w => return refuse(format!("window {w}: 0..19, or -1 for every window")),
    };
    match core.send(&command.encode(), window) {
        Ok(()) => Console::Response {
            success: true,
            message: String::new(),
        },
        Err(e) => refuse(format!("cannot send: {e}")),
    }
}
