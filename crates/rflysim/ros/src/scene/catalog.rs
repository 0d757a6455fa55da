//! What the scene can be asked about beyond its entities' states: the
//! vehicle types a spawn may name (`get_spawnables`), what an entity is
//! (`get_entity_info`), and the worlds there are map files for
//! (`get_available_worlds`).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use r2r::simulation_interfaces::msg::{
    Bounds, EntityCategory, EntityInfo, Resource, Result as SimResult, Spawnable, WorldResource,
};
use r2r::simulation_interfaces::srv::{GetAvailableWorlds, GetEntityInfo, GetSpawnables};
use r2r::Node;
use tokio::sync::watch;

use rflysim_proto::terrain::HeightMap;

use super::model::{self, Kind, Origin};
use super::SceneCore;

/// RflySim3D's vehicle classes a spawn URI may name
/// (`rflysim://vehicle/<type>`; + 1000 × n for the class's style n).
pub const VEHICLE_CLASSES: &[(i32, &str)] = &[
    (3, "quadcopter"),
    (5, "hexacopter"),
    (6, "hexacopter"),
    (30, "person"),
    (50, "car"),
    (100, "fixed-wing aircraft"),
    (150, "target"),
    (151, "target"),
    (152, "target"),
];

/// Worlds listed at most (a folder of anything is not read to its end).
const MAX_WORLDS: usize = 1000;

fn result(code: u8, message: impl Into<String>) -> SimResult {
    SimResult {
        result: code,
        error_message: message.into(),
    }
}

fn ok() -> SimResult {
    result(SimResult::RESULT_OK as u8, "")
}

/// The standard's category of a vehicle of RflySim3D's `vehicle_type`.
pub fn vehicle_category(vehicle_type: i32) -> u8 {
    match vehicle_type.rem_euclid(1000) {
        30 => EntityCategory::CATEGORY_HUMAN as u8,
        150..=152 => EntityCategory::CATEGORY_DYNAMIC_OBJECT as u8,
        _ => EntityCategory::CATEGORY_ROBOT as u8,
    }
}

fn class_name(vehicle_type: i32) -> &'static str {
    let class = vehicle_type.rem_euclid(1000);
    VEHICLE_CLASSES
        .iter()
        .find(|(t, _)| *t == class)
        .map_or("vehicle", |(_, name)| name)
}

fn spawnables(r: GetSpawnables::Request) -> GetSpawnables::Response {
    let spawnables = VEHICLE_CLASSES
        .iter()
        .map(|&(t, name)| Spawnable {
            entity_resource: Resource {
                uri: format!("{}{t}", model::VEHICLE_RESOURCE),
                resource_string: String::new(),
            },
            description: format!(
                "RflySim3D vehicle type {t}: a {name} (+ 1000 x n for its style n, where RflySim3D has one)"
            ),
            spawn_bounds: Bounds::default(),
        })
        .collect();
    let message = if r.sources.is_empty() {
        String::new()
    } else {
        format!(
            "sources not searched (RflySim3D's vehicle types are built in): {}",
            r.sources.join(", ")
        )
    };
    GetSpawnables::Response {
        result: result(SimResult::RESULT_OK as u8, message),
        spawnables,
    }
}

fn entity_info(core: &SceneCore, r: GetEntityInfo::Request) -> GetEntityInfo::Response {
    let Some(entity) = core.scene.lock().unwrap().get(&r.entity).cloned() else {
        return GetEntityInfo::Response {
            result: result(
                SimResult::RESULT_NOT_FOUND as u8,
                format!(
                    "no entity named {:?} (get_entities lists them; a scene object is known once asked for by name)",
                    r.entity
                ),
            ),
            ..Default::default()
        };
    };
    let (category, description) = match entity.kind {
        Kind::Vehicle { id, vehicle_type } => {
            let by = match entity.origin {
                Origin::Spawned => "spawned by this node",
                _ => "sent by its CopterSim or reported by RflySim3D",
            };
            (
                vehicle_category(vehicle_type),
                format!(
                    "RflySim3D vehicle {id}, type {vehicle_type} (a {}), {by}",
                    class_name(vehicle_type)
                ),
            )
        }
        Kind::Object => (
            EntityCategory::CATEGORY_STATIC_OBJECT as u8,
            "an object of RflySim3D's map".to_string(),
        ),
    };
    GetEntityInfo::Response {
        result: ok(),
        info: EntityInfo {
            category: EntityCategory { category },
            description,
            tags: Vec::new(),
        },
    }
}

/// The folder an additional source of worlds names: one inside `map_dir`,
/// relative to it or under it, so that a caller lists and reads map files
/// nowhere else.
fn folder_in(map_dir: &Path, source: &str) -> Result<PathBuf, String> {
    let path = Path::new(source);
    let relative = path.strip_prefix(map_dir).unwrap_or(path);
    let inside = !source.contains(['\\', '\0'])
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if inside {
        Ok(map_dir.join(relative))
    } else {
        Err(format!(
            "{source}: not a folder inside map_dir {} (give one relative to it, without `..`)",
            map_dir.display()
        ))
    }
}

/// The maps with both files in `dir` (names a map may have), sorted, at most
/// [`MAX_WORLDS`].
fn maps_in(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut maps = Vec::new();
    for entry in std::fs::read_dir(dir)?.take(100 * MAX_WORLDS) {
        let path = entry?.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".png"))
        else {
            continue;
        };
        if model::map_of(name).is_ok() && dir.join(format!("{name}.txt")).is_file() {
            maps.push(name.to_string());
        }
    }
    maps.sort();
    maps.truncate(MAX_WORLDS);
    Ok(maps)
}

/// A world of `dir`, its description saying what its terrain is.
fn world_of(dir: &Path, name: &str) -> WorldResource {
    let description = match HeightMap::extent(dir, name) {
        Ok((c, columns, rows)) => {
            format!(
                "RflySim3D map with terrain: {columns}x{rows} heights, x {}..{} m, y {}..{} m (NED) in {}",
                c.lower_left[0] / 100.0,
                c.upper_right[0] / 100.0,
                c.lower_left[1] / 100.0,
                c.upper_right[1] / 100.0,
                dir.display()
            )
        }
        Err(why) => format!("RflySim3D map; its terrain files cannot be read: {why}"),
    };
    WorldResource {
        name: name.to_string(),
        world_resource: Resource {
            uri: format!("{}{name}", model::MAP_RESOURCE),
            resource_string: String::new(),
        },
        description,
        tags: Vec::new(),
    }
}

fn available_worlds(core: &SceneCore, r: GetAvailableWorlds::Request) -> GetAvailableWorlds::Response {
    if !r.filter.tags.is_empty() {
        return GetAvailableWorlds::Response {
            result: result(
                SimResult::RESULT_FEATURE_UNSUPPORTED as u8,
                "worlds have no tags here: filter by none",
            ),
            worlds: Vec::new(),
        };
    }
    let map_dir = core.terrain.dir();
    let mut sources: Vec<Result<PathBuf, String>> = vec![Ok(map_dir.to_path_buf())];
    sources.extend(r.additional_sources.iter().map(|s| folder_in(map_dir, s)));
    let (mut worlds, mut failed) = (Vec::new(), Vec::new());
    for (i, source) in sources.into_iter().enumerate() {
        let listed = source.and_then(|dir| match maps_in(&dir) {
            Ok(maps) => Ok((dir, maps)),
            Err(e) => Err(format!("{}: {e}", dir.display())),
        });
        match listed {
            Ok((dir, maps)) => worlds.extend(maps.iter().map(|m| world_of(&dir, m))),
            Err(e) if r.continue_on_error => failed.push(e),
            Err(e) => {
                let code = if i == 0 {
                    GetAvailableWorlds::Response::DEFAULT_SOURCES_FAILED as u8
                } else {
                    SimResult::RESULT_OPERATION_FAILED as u8
                };
                return GetAvailableWorlds::Response {
                    result: result(code, e),
                    worlds: Vec::new(),
                };
            }
        }
    }
    // The current world, even without map files: the node knows it.
    if let Some(current) = core.world.lock().unwrap().clone() {
        if !worlds.iter().any(|w: &WorldResource| w.name == current) {
            worlds.push(WorldResource {
                description: "RflySim3D map (the current one; no map files for it)".into(),
                ..super::world::world_resource(&current)
            });
        }
    }
    worlds.truncate(MAX_WORLDS);
    // With continue_on_error: a success when any source gave worlds.
    let code = if failed.is_empty() || !worlds.is_empty() {
        SimResult::RESULT_OK as u8
    } else {
        GetAvailableWorlds::Response::DEFAULT_SOURCES_FAILED as u8
    };
    GetAvailableWorlds::Response {
        result: result(code, failed.join("; ")),
        worlds,
    }
}

/// Serves the three services.
pub fn serve(node: &mut Node, core: &Arc<SceneCore>, shutdown: watch::Receiver<bool>) -> Result<(), String> {
    use super::serving::serve_one;
    serve_one::<GetSpawnables::Service, _, _>(node, "get_spawnables", core, shutdown.clone(), |_, r| async move {
        spawnables(r)
    })?;
    serve_one::<GetEntityInfo::Service, _, _>(node, "get_entity_info", core, shutdown.clone(), |c, r| async move {
        entity_info(&c, r)
    })?;
    serve_one::<GetAvailableWorlds::Service, _, _>(node, "get_available_worlds", core, shutdown, |c, r| async move {
        let c2 = c.clone();
        tokio::task::spawn_blocking(move || available_worlds(&c2, r))
            .await
            .unwrap_or_else(|e| GetAvailableWorlds::Response {
                result: result(SimResult::RESULT_OPERATION_FAILED as u8, e.to_string()),
                worlds: Vec::new(),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_a_uri_the_spawn_takes_and_has_a_category() {
        let r = spawnables(GetSpawnables::Request::default());
        assert_eq!(r.spawnables.len(), VEHICLE_CLASSES.len());
        for s in &r.spawnables {
            assert!(model::vehicle_type_of(&s.entity_resource.uri, "").is_ok(), "{s:?}");
        }
        assert_eq!(vehicle_category(3), EntityCategory::CATEGORY_ROBOT as u8);
        assert_eq!(vehicle_category(1030), EntityCategory::CATEGORY_HUMAN as u8);
        assert_eq!(vehicle_category(151), EntityCategory::CATEGORY_DYNAMIC_OBJECT as u8);
        assert_eq!(class_name(2100), "fixed-wing aircraft");
        let asked = spawnables(GetSpawnables::Request {
            sources: vec!["/somewhere".into()],
        });
        assert_eq!(asked.result.result, SimResult::RESULT_OK as u8);
        assert!(asked.result.error_message.contains("/somewhere"));
    }

    #[test]
    fn a_folder_lists_the_maps_with_both_files() {
        let dir = std::env::temp_dir().join(format!("rflysim_worlds_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in [
            "B.png",
            "B.txt",
            "A.png",
            "A.txt",
            "OnlyPng.png",
            "bad name.png",
            "bad name.txt",
            "x.txt",
        ] {
            std::fs::write(dir.join(f), b"").unwrap();
        }
        assert_eq!(maps_in(&dir).unwrap(), ["A", "B"]);
        assert!(world_of(&dir, "A").description.contains("cannot be read"));
        assert!(maps_in(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn more_sources_of_worlds_are_folders_inside_map_dir() {
        let maps = Path::new("/srv/maps");
        for (source, folder) in [
            ("extra", "/srv/maps/extra"),
            ("./a/b", "/srv/maps/a/b"),
            ("/srv/maps/extra", "/srv/maps/extra"),
        ] {
            assert_eq!(folder_in(maps, source), Ok(PathBuf::from(folder)), "{source}");
        }
        for source in [
            "/tmp",
            "..",
            "../maps2",
            "extra/../../etc",
            "/srv/maps/../etc",
            "a\\..\\b",
            "/srv/maps2",
        ] {
            let why = folder_in(maps, source).unwrap_err();
            assert!(why.contains("not a folder inside map_dir /srv/maps"), "{source}: {why}");
        }
    }
}
