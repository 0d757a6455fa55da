//! One RflySim camera (parameters `rflysim_config`, `seq_id`) → Image, CameraInfo (and CompressedImage for JPEG streams).
//! Parameters: docs/rflysim.md.

fn main() -> std::process::ExitCode {
    rflysim_ros::app::main(rflysim_ros::app::Role::Camera)
}
