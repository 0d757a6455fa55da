//! ROS 2 plumbing that is not specific to a simulator, shared by every
//! bridge of this package (RflySim, the ZeroMQ AUV, the GPS-denied drone,
//! AeroSim):
//! a simulator's nodes add its wire protocol and its topic tree, nothing of
//! what is here. Nothing in this crate knows a simulator.

pub mod bridge;
pub mod camera;
pub mod cdr;
pub mod command;
pub mod dds;
pub mod deadline;
pub mod demand;
pub mod diagnostics;
pub mod latest;
pub mod lifecycle;
pub mod memory;
pub mod msgs;
pub mod net;
pub mod params;
pub mod qos;
pub mod serialized;
pub mod sim_host;
pub mod stats;
pub mod status_view;
pub mod tf;
pub mod time;
