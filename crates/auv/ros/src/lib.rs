//! The ROS 2 side of the ZeroMQ AUV simulator: the `auv_bridge`
//! node. The wire is `auv_proto`'s; the simulator-independent plumbing (QoS,
//! parameters, time, diagnostics, cameras, TF) is `ros_common`'s.

pub mod app;
pub mod convert;
pub mod images;
pub mod link;
pub mod names;
pub mod settings;
pub mod telemetry;
pub mod thrusters;
pub mod zmtp;

pub use app::main;
