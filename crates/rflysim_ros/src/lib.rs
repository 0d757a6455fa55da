//! The rflysim_bridge ROS 2 side: how RflySim data becomes ROS 2 messages and
//! how the nodes are put together. Wire formats live in `rflysim_proto`; this
//! crate only maps them onto ROS types, topics, QoS, time and parameters.

pub mod app;
pub mod coptersim;
pub mod diagnostics;
pub mod gimbal;
pub mod gimbal_node;
pub mod mavros;
pub mod msgs;
pub mod names;
pub mod net;
pub mod params;
pub mod qos;
pub mod requests;
pub mod sensor;
pub mod stats;
pub mod tf;
pub mod time;
