//! Topic names (relative: the node's namespace, `auv` by default, moves
//! them) and frame ids of one AUV: `<frame_prefix>auv<id>/<frame>`, by the
//! rule of [`frames::ids`].

use auv_proto::image::Camera;
use frames::ids;

pub fn auv_prefix(id: u8) -> String {
    format!("auv{id}")
}

pub fn image_topic(id: u8, camera: Camera) -> String {
    format!("auv{id}/{}/image_raw", camera.name())
}

pub fn pose_topic(id: u8) -> String {
    format!("auv{id}/pose")
}

pub fn odom_topic(id: u8) -> String {
    format!("auv{id}/odom")
}

pub fn thrusters_topic(id: u8) -> String {
    format!("auv{id}/thrusters")
}

pub fn cmd_vel_topic(id: u8) -> String {
    format!("auv{id}/cmd_vel")
}

/// The body, FLU.
pub fn base_link(frame_prefix: &str, id: u8) -> String {
    ids::base_link(frame_prefix, &auv_prefix(id))
}

/// A camera's optical frame (z forward, x right, y down).
pub fn optical_frame(frame_prefix: &str, id: u8, camera: Camera) -> String {
    ids::optical(frame_prefix, &auv_prefix(id), &format!("{}_camera", camera.name()))
}
