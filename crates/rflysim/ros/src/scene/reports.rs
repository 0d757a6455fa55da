//! Each vehicle's published topics of what RflySim3D reports of it: its
//! collisions, its pose and velocity, its scan lines.

use r2r::nav_msgs::msg::Odometry;
use r2r::rflysim_bridge::msg::{Collision, RayDistances};
use r2r::{Node, Publisher};

use rflysim_proto::scene::{CrashType, VehicleCrashData};

use super::model::{self, NedPose};
use crate::names;

/// Each vehicle's published topics (see `super::vehicle_topics`).
pub(super) struct VehicleOutputs {
    pub(super) collision: Publisher<Collision>,
    pub(super) odom: Publisher<Odometry>,
    pub(super) rays: Publisher<RayDistances>,
}

/// The published topics of vehicle `id`, on `node`.
pub(super) fn vehicle_outputs(node: &mut Node, id: u16, qos: &r2r::QosProfile) -> Result<VehicleOutputs, String> {
    let topic = |t: &str| format!("rflysim/uav{id}/{t}");
    let e = |t: &str, err: r2r::Error| format!("scene: {}: {err}", topic(t));
    Ok(VehicleOutputs {
        collision: node
            .create_publisher(&topic("collision"), qos.clone())
            .map_err(|x| e("collision", x))?,
        odom: node
            .create_publisher(&topic("scene/odom"), qos.clone())
            .map_err(|x| e("scene/odom", x))?,
        rays: node
            .create_publisher(&topic("scene/rays"), qos.clone())
            .map_err(|x| e("scene/rays", x))?,
    })
}

pub(super) fn point(v: [f64; 3]) -> r2r::geometry_msgs::msg::Point {
    r2r::geometry_msgs::msg::Point {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

pub(super) fn collision(d: &VehicleCrashData, stamp: r2r::builtin_interfaces::msg::Time) -> Collision {
    let (crash_type, other) = match d.crash {
        CrashType::Ground => (Collision::CRASH_GROUND as i8, 0),
        CrashType::Vehicle(id) => (Collision::CRASH_VEHICLE as i8, u32::try_from(id).unwrap_or(0)),
        CrashType::SceneObject | CrashType::None | CrashType::Unknown(_) => (Collision::CRASH_STATIC_OBJECT as i8, 0),
    };
    Collision {
        header: ros_common::msgs::header(stamp, names::WORLD_FRAME),
        vehicle_id: u32::try_from(d.copter_id).unwrap_or(0),
        crash_type,
        other_vehicle_id: other,
        object_name: d.crashed_name.clone(),
        contact_point: point(frames::ned_to_enu(d.crash_pos.map(f64::from))),
        object_centre: point(frames::ned_to_enu(d.target_pos.map(f64::from))),
    }
}

/// RflySim3D's pose and velocity of vehicle `id`: ENU world, FLU body (the
/// twist in the body, as nav_msgs/Odometry has it).
pub(super) fn scene_odometry(
    id: u16,
    pose: &NedPose,
    vel_ned: [f64; 3],
    stamp: r2r::builtin_interfaces::msg::Time,
) -> Odometry {
    let (position, q) = model::enu_pose(pose);
    let inverse = [q[0], -q[1], -q[2], -q[3]];
    let v_body = frames::rotate(inverse, frames::ned_to_enu(vel_ned));
    let mut odom = Odometry {
        header: ros_common::msgs::header(stamp, names::WORLD_FRAME),
        child_frame_id: names::base_frame(id),
        ..Default::default()
    };
    odom.pose.pose.position = point(position);
    odom.pose.pose.orientation = r2r::geometry_msgs::msg::Quaternion {
        w: q[0],
        x: q[1],
        y: q[2],
        z: q[3],
    };
    odom.twist.twist.linear = r2r::geometry_msgs::msg::Vector3 {
        x: v_body[0],
        y: v_body[1],
        z: v_body[2],
    };
    odom
}
