//! An emulator of the ZeroMQ AUV simulator, for demos, tests and
//! benchmarks of the bridge without the simulator: the same three sockets,
//! the same messages, AUVs that move by their thruster commands, and both
//! cameras rendered so that the motion shows.

pub mod dynamics;
pub mod faults;
pub mod options;
pub mod render;
pub mod sim;
pub mod sockets;
