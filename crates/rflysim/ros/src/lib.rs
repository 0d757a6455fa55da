//! RflySim's ROS 2 nodes: how RflySim data becomes ROS 2 messages and how the
//! nodes are put together. Wire formats live in `rflysim_proto`; plumbing
//! that any simulator's nodes share (QoS, parameters, time, diagnostics,
//! camera info, lazy JPEG decode, TF) in `ros_common`; this crate maps
//! RflySim's payloads onto ROS types and its topic tree.

pub mod app;
pub mod coptersim;
pub mod gimbal;
pub mod gimbal_node;
pub mod gimbal_requests;
pub mod maps;
pub mod msgs;
pub mod names;
pub mod requests;
pub mod scene;
pub mod sensor;
pub mod settings;
pub mod status_port;
pub mod tf;

// The fuzz runs among the unit tests bound the largest allocation a hostile
// input can cause; only allocations inside `fuzz_harness::measured` count.
#[cfg(test)]
#[global_allocator]
static COUNTING_ALLOC: fuzz_harness::CountingAlloc = fuzz_harness::CountingAlloc;
