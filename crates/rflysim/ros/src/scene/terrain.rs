//! The ground of the current world, from RflySim's map files for it
//! (`<map_dir>/<world>.png` and `.txt`, read by [`rflysim_proto::terrain`]):
//! the `rflysim/get_terrain_height` service, the height map as a latched
//! cloud on `rflysim/scene/terrain`, and where a spawned vehicle meets the
//! ground. The files are read when the world becomes known (at start from
//! parameter `world`, then at each `load_world`), off the node's threads.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use r2r::builtin_interfaces::msg::Time;
use r2r::rflysim_bridge::srv::GetTerrainHeight;
use r2r::sensor_msgs::msg::PointCloud2;
use r2r::{Node, Publisher};
use tokio::sync::watch;

use rflysim_proto::scene::{Placement, SimpleVehicleUpdate};
use rflysim_proto::terrain::HeightMap;

use super::model::NedPose;
use super::SceneCore;
pub use crate::maps::expand_home;
use crate::names;

/// The map of the current world, or why there is none.
#[derive(Debug)]
struct WorldMap {
    world: String,
    map: Result<Arc<HeightMap>, String>,
}

/// The scene's terrain: the map of the current world and the latched cloud of it.
pub struct Terrain {
    dir: PathBuf,
    max_points: usize,
    current: Mutex<Option<WorldMap>>,
    cloud: Mutex<Publisher<PointCloud2>>,
}

impl std::fmt::Debug for Terrain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terrain")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Terrain {
    /// The latched cloud's publisher on `node`; no map yet.
    pub fn new(node: &mut Node, dir: PathBuf, max_points: usize) -> Result<Self, String> {
        let cloud = node
            .create_publisher("rflysim/scene/terrain", ros_common::qos::latched())
            .map_err(|e| format!("scene: rflysim/scene/terrain: {e}"))?;
        Ok(Self {
            dir,
            max_points,
            current: Mutex::new(None),
            cloud: Mutex::new(cloud),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current world's map, if it has one.
    fn map(&self) -> Option<Arc<HeightMap>> {
        self.current
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|w| w.map.as_ref().ok().cloned())
    }
}

/// Reads the map files of `world` (blocking: a large map takes a moment),
/// makes it the current one and publishes its cloud; logs either way.
pub fn load_blocking(core: &SceneCore, world: &str) {
    let t = &core.terrain;
    let map = HeightMap::load(&t.dir, world).map(Arc::new).map_err(|e| e.to_string());
    match &map {
        Ok(m) => {
            let cloud = terrain_cloud(m, t.max_points, core.stamps.now());
            let sent = t.cloud.lock().unwrap().publish(&cloud);
            core.stats.count_publish(sent, "publish_failed");
            r2r::log_info!(
                &core.logger,
                "scene: terrain of {world}: {}×{} heights from {} ({} points on rflysim/scene/terrain)",
                m.columns(),
                m.rows(),
                t.dir.display(),
                cloud.width as usize * cloud.height as usize
            );
        }
        Err(why) => r2r::log_warn!(&core.logger, "scene: no terrain for {world}: {why}"),
    }
    *t.current.lock().unwrap() = Some(WorldMap {
        world: world.to_string(),
        map,
    });
}

/// The same, on a blocking thread: done when it returns.
pub async fn load(core: &Arc<SceneCore>, world: String) {
    let core = core.clone();
    if let Err(e) = tokio::task::spawn_blocking(move || load_blocking(&core, &world)).await {
        r2r::log_error!("rflysim_scene", "scene: reading a terrain failed: {e}");
    }
}

/// The ground's ENU height under ENU (east, north), whether the point is on
/// the map, and the world; or why not.
fn height(core: &SceneCore, east: f64, north: f64) -> Result<(f64, bool, String), String> {
    if !east.is_finite() || !north.is_finite() {
        return Err(format!("({east}, {north}) is not a finite point"));
    }
    let current = core.terrain.current.lock().unwrap();
    let Some(w) = current.as_ref() else {
        return Err("the world is not known to the bridge: set parameter world, or load one (load_world)".into());
    };
    let map = w
        .map
        .as_ref()
        .map_err(|why| format!("no terrain for {}: {why}", w.world))?;
    Ok((map.height_enu(east, north), map.contains(north, east), w.world.clone()))
}

/// `pose` (NED) put on the ground when it is at or under it: whether it was.
/// Without a map of the current world, the pose stays as asked.
pub fn onto_ground(core: &SceneCore, pose: &mut NedPose) -> bool {
    let Some(map) = core.terrain.map() else {
        return false;
    };
    let ground_z = map.terrain_alt(pose.position[0], pose.position[1]);
    if pose.position[2] < ground_z {
        return false;
    }
    pose.position[2] = ground_z;
    true
}

impl SceneCore {
    /// Places vehicle `id` on RflySim3D's ground under `pose`, as the SDK's
    /// `sendUE4Pos2Ground` does (`SOut2SimulatorSimple`, checksum 1234567891):
    /// RflySim3D fits it to the ground itself.
    pub(super) fn place_on_ground(&self, id: u16, vehicle_type: i32, pose: &NedPose) -> Result<(), String> {
        let update = SimpleVehicleUpdate {
            placement: Placement::OnGround,
            copter_id: i32::from(id),
            vehicle_type,
            motor_rpm_mean: 0.0,
            pos_ned: pose.position.map(|v| v as f32),
            euler: pose.euler.map(|a| a as f32),
            scale: None,
        };
        self.send(&update.encode(), Some(self.window))
            .map_err(|e| format!("cannot send to RflySim3D: {e}"))
    }
}

/// Serves `rflysim/get_terrain_height`.
pub fn serve(node: &mut Node, core: &Arc<SceneCore>, shutdown: watch::Receiver<bool>) -> Result<(), String> {
    super::serving::serve_one::<GetTerrainHeight::Service, _, _>(
        node,
        "rflysim/get_terrain_height",
        core,
        shutdown,
        |c, r| async move {
            match height(&c, r.x, r.y) {
                Ok((height, inside, world)) => GetTerrainHeight::Response {
                    success: true,
                    height,
                    inside,
                    world,
                    message: String::new(),
                },
                Err(message) => GetTerrainHeight::Response {
                    success: false,
                    message,
                    ..Default::default()
                },
            }
        },
    )
}

/// The map as an organized cloud in the ENU world frame: one point (x, y, z
/// float32) per grid point, every `stride`-th row and column so that at
/// most `max_points` remain.
fn terrain_cloud(map: &HeightMap, max_points: usize, stamp: Time) -> PointCloud2 {
    let (rows, cols) = (map.rows(), map.columns());
    let mut stride = 1;
    while rows.div_ceil(stride) * cols.div_ceil(stride) > max_points.max(1) {
        stride += 1;
    }
    let (height, width) = (rows.div_ceil(stride), cols.div_ceil(stride));
    let mut data = Vec::with_capacity(height * width * 12);
    for row in (0..rows).step_by(stride) {
        for col in (0..cols).step_by(stride) {
            let (x_ned, y_ned) = map.grid_point(row, col);
            let p = [y_ned, x_ned, -map.ned_z(row, col)].map(|v| v as f32);
            p.iter().for_each(|v| data.extend_from_slice(&v.to_le_bytes()));
        }
    }
    let field = ros_common::msgs::float32_field;
    PointCloud2 {
        header: ros_common::msgs::header(stamp, names::WORLD_FRAME),
        height: height as u32,
        width: width as u32,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        is_bigendian: false,
        point_step: 12,
        row_step: 12 * width as u32,
        data,
        is_dense: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rflysim_proto::terrain::Calibration;

    #[test]
    fn the_cloud_is_the_grid_in_enu_thinned_to_its_bound() {
        // 3 columns along north (x 0..2 m), 2 rows along east (y 0..1 m).
        let c = Calibration::parse("200,100,300,0,0,0,200,100,300").unwrap();
        let m = HeightMap::new(&[32768, 32868, 32968, 32768, 32868, 33068], 2, 3, c).unwrap();
        let cloud = terrain_cloud(&m, 100, Time::default());
        assert_eq!((cloud.height, cloud.width, cloud.row_step), (2, 3, 36));
        let point = |i: usize| -> Vec<f32> {
            (0..3)
                .map(|k| f32::from_le_bytes(cloud.data[12 * i + 4 * k..12 * i + 4 * k + 4].try_into().unwrap()))
                .collect()
        };
        // Row 1, column 2: NED (2, 1), 3 m up → ENU (1, 2, 3).
        assert_eq!(point(5), [1.0, 2.0, 3.0]);
        assert_eq!(point(1), [0.0, 1.0, 1.0]);
        assert_eq!(cloud.header.frame_id, names::WORLD_FRAME);
        let thin = terrain_cloud(&m, 2, Time::default());
        assert_eq!((thin.height, thin.width, thin.data.len()), (1, 2, 24));
    }
}
