//! An emulator of the GPS-denied landing drone simulator: the
//! same JSON over real UDP, a rendered downward camera, simple dynamics
//! driven by the commands it receives, and faults on demand — so that the
//! bridge can be demonstrated, tested and benchmarked without PyBullet.

pub mod emulator;
pub mod faults;
pub mod render;
pub mod world;
