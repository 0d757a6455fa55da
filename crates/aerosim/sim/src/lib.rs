//! An emulator of AeroSim on Kafka, for the bridge's tests, demo and
//! benchmark: what AeroSim's components publish, from a simple aircraft
//! model driven by the commands AeroSim's components consume.

pub mod emulator;
pub mod faults;
pub mod flight;
pub mod render;
