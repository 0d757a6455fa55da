//! AeroSim's messages as they travel on its Kafka topics: every record is
//! an envelope `{"metadata": {...}, "data": {...}}` in JSON, except the
//! renderer's camera images, which are bincode. Shared by the ROS bridge and
//! the emulator; no ROS types, no I/O.
//!
//! The facts come from AeroSim's source (`aerosim-data`: `types/`,
//! `middleware/kafka.rs`, `middleware/common/`).

pub mod envelope;
pub mod error;
pub mod frames;
pub mod image;
pub mod topics;
pub mod types;

pub use error::DecodeError;

/// A type AeroSim names in its envelopes' `type_name`.
pub trait AeroSimType {
    /// `aerosim::types::<Struct>`, as AeroSim's message macro writes it.
    const TYPE_NAME: &'static str;
}
