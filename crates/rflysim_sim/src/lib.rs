//! A built-in RflySim emulator: behaves like RflySim3D + CopterSim on this
//! machine, over real UDP sockets and real shared memory, so that the
//! bridge can be demonstrated, tested and benchmarked without the simulator.

pub mod emulator;
pub mod faults;
pub mod log;
pub mod render;
pub mod transport;
pub mod world;
