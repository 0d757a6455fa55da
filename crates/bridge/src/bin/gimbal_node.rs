//! Gimbal control and status for the gimbal cameras (TypeID 9) of a RflySim
//! Config.json (parameter `rflysim_config`): `camera/ctrl` and
//! `camera/ai_ctrl` → 148-byte requests to RflySim3D; its echoes → `camera/status`.
//! Parameters: docs/rflysim.md.

fn main() -> std::process::ExitCode {
    rflysim_ros::app::main(rflysim_ros::app::Role::Gimbal)
}
