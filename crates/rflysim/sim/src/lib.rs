//! A built-in RflySim emulator: behaves like RflySim3D + CopterSim on this
//! machine, over real UDP sockets and real shared memory, so that the
//! bridge can be demonstrated, tested and benchmarked without the simulator.
//!
//! [`emulator::Emulator`] starts the threads; each lives in a module of its
//! own: `stream` (one per sensor), `requests`, `coptersim`, `status` and
//! `stats`. [`gimbal`] is the gimbal's pure state machine, [`scene`] the
//! scene's (vehicles placed over UDP, crashes, replies), [`clock`] the
//! simulation time, [`render`] and [`world`] what the sensors see.

pub mod clock;
mod coptersim;
mod dump;
pub mod emulator;
pub mod faults;
pub mod gimbal;
pub mod log;
pub mod options;
pub mod render;
mod requests;
pub mod scene;
mod send_log;
mod shared;
mod stats;
mod status;
mod stream;
pub mod transport;
pub mod world;
