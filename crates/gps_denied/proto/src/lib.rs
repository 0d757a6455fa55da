//! The wire of the GPS-denied landing drone simulator: one JSON
//! object per UDP datagram. Telemetry (drone or rover) comes from the
//! simulator, command objects go to it.
//!
//! Shared by the ROS bridge and the emulator; no ROS types, no I/O. The
//! telemetry parser is lenient by design — the simulator's schema drifts
//! between versions — and reports, part by part, what was missing or bad so
//! that the bridge can publish the rest and count the rest.

pub mod camera;
pub mod command;
pub mod counters;
pub mod frames;
pub mod image;
pub mod parse;
pub mod telemetry;
pub mod wire;

pub use command::{Command, CommandError, TwistGains};
pub use counters::InputCounters;
pub use parse::{parse_telemetry, Fault, Limits, Parsed, Part, PartFaults, TelemetryError};
pub use telemetry::{CameraGeometry, DroneTelemetry, Euler, LandingPad, PadReport, RoverTelemetry, Telemetry, Vector3};
