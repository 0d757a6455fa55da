//! The world RflySim3D shows: a map's world resource, and `load_world`.

use r2r::simulation_interfaces::msg::{Result as SimResult, WorldResource};
use r2r::simulation_interfaces::srv::LoadWorld;

use rflysim_proto::console::ConsoleRequest;

use super::model;
use super::serving::{failed, ok};
use super::SceneCore;

pub(super) fn world_resource(name: &str) -> WorldResource {
    WorldResource {
        name: name.to_string(),
        world_resource: r2r::simulation_interfaces::msg::Resource {
            uri: format!("{}{name}", model::MAP_RESOURCE),
            resource_string: String::new(),
        },
        ..Default::default()
    }
}

pub(super) fn load_world(core: &SceneCore, r: LoadWorld::Request) -> LoadWorld::Response {
    let refuse = |code: u8, message: String| LoadWorld::Response {
        result: failed(code, message),
        ..Default::default()
    };
    let resource = &r.world_resource;
    if resource.uri.is_empty() {
        return if resource.resource_string.is_empty() {
            refuse(
                LoadWorld::Response::NO_RESOURCE as u8,
                "world_resource names nothing".into(),
            )
        } else {
            refuse(
                LoadWorld::Response::UNSUPPORTED_FORMAT as u8,
                format!(
                    "resource_string is not read: RflySim3D loads maps by name, uri {}<name>",
                    model::MAP_RESOURCE
                ),
            )
        };
    }
    let name = match model::map_of(&resource.uri) {
        Ok(n) => n,
        Err(why) => return refuse(LoadWorld::Response::UNSUPPORTED_FORMAT as u8, why),
    };
    if let Err(why) = core.console(&ConsoleRequest::ChangeMapByName(name.clone())) {
        return refuse(SimResult::RESULT_OPERATION_FAILED as u8, why);
    }
    let forgotten = core.scene.lock().unwrap().forget_spawned();
    core.close_spawned_topics(&forgotten);
    let forgotten = forgotten.len();
    core.unanswered.lock().unwrap().clear();
    *core.world.lock().unwrap() = Some(name.clone());
    r2r::log_info!(
        &core.logger,
        "scene: map {name} asked of RflySim3D (it does not acknowledge); {forgotten} spawned entities gone with the old one"
    );
    LoadWorld::Response {
        result: ok(),
        world: world_resource(&name),
    }
}
