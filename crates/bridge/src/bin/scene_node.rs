//! RflySim3D's scene on ROS 2: the standard Simulation Interfaces services
//! (spawn, move, query, delete, bounds, maps), a console service, bulk poses
//! for a swarm, and each vehicle's collisions, pose and scan lines as
//! RflySim3D reports them; the gimbal cameras of the config too (their
//! status comes in on the same port). Parameters: docs/rflysim.md.

fn main() -> std::process::ExitCode {
    rflysim_ros::app::main(rflysim_ros::app::Role::Scene)
}
