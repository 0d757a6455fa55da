//! RflySim's wire formats, free of any ROS dependency, so that they build,
//! test and fuzz in seconds. The spec is `docs/rflysim-wire-protocol.md` of
//! the project's shared documents; section numbers below refer to it.

pub mod config;
pub mod console;
pub mod error;
pub mod gimbal;
pub mod header;
pub mod image;
pub mod label;
pub mod lidar;
pub mod ports;
pub mod reassembly;
pub mod request;
pub mod scene;
pub mod sensor;
pub mod shm;
pub mod telemetry;
pub mod terrain;
mod wire;
