//! Topic names (relative: the node's namespace moves them) and frame ids of
//! one AUV.

use auv_proto::image::Camera;

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

pub fn base_link(id: u8) -> String {
    format!("auv{id}/base_link")
}

pub fn optical_frame(id: u8, camera: Camera) -> String {
    format!("auv{id}/{}_camera_optical", camera.name())
}
