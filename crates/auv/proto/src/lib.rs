//! The ZeroMQ AUV simulator's wire, free of ROS and of ZeroMQ:
//! what the bridge and the emulator (`auv_sim`) share. Messages are handled
//! as lists of frames (ZeroMQ multipart parts); the sockets live elsewhere.
//!
//! The simulator binds; clients connect:
//! - images: PUB on [`IMAGE_PORT`], `[id: u8][front JPEG][bottom JPEG]`;
//! - thrusters: PULL on [`THRUSTER_PORT`], one part `[id: u8][left, right, side, vertical: i8]`;
//! - telemetry: PUB on [`TELEMETRY_PORT`], `[id: u8][x, y, z, yaw, pitch, roll: f32 LE]`.
//!
//! The protocol gives no units or axes. This crate reads them as metres and
//! radians, a NED world and an FRD body with Z-Y-X (yaw, pitch, roll) angles;
//! [`pose::AngleUnit`] and [`pose::WorldFrame`] cover the other readings.

pub mod counts;
pub mod error;
pub mod image;
pub mod mixing;
pub mod pose;
pub mod telemetry;
pub mod thruster;

pub use error::WireError;

/// Where the simulator publishes both cameras of every AUV.
pub const IMAGE_PORT: u16 = 5555;
/// Where the simulator pulls thruster commands.
pub const THRUSTER_PORT: u16 = 5556;
/// Where the simulator publishes every AUV's pose.
pub const TELEMETRY_PORT: u16 = 5557;

/// Every message starts with a one-byte AUV id part; subscribing to that one
/// byte as a topic prefix selects one AUV.
pub const ID_LEN: usize = 1;
/// Parts of an image message: id, front JPEG, bottom JPEG.
pub const IMAGE_PARTS: usize = 3;
/// Parts of a telemetry message: id, payload.
pub const TELEMETRY_PARTS: usize = 2;
/// Six little-endian f32: x, y, z, yaw, pitch, roll.
pub const TELEMETRY_PAYLOAD_LEN: usize = 6 * 4;
/// id + four i8 levels, in one part.
pub const THRUSTER_MESSAGE_LEN: usize = 1 + 4;
/// A thruster level outside ±[`THRUST_MAX`] that leaves the thruster as it is.
pub const THRUST_KEEP: i8 = -127;
/// Thruster levels are in `-THRUST_MAX..=THRUST_MAX`.
pub const THRUST_MAX: i8 = 100;
/// The largest JPEG accepted by default (a 4K frame at high quality is ~5 MB).
pub const DEFAULT_MAX_JPEG_BYTES: usize = 16 << 20;

/// The endpoint a client connects to (ZeroMQ syntax).
pub fn tcp_endpoint(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("tcp://[{host}]:{port}")
    } else {
        format!("tcp://{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn endpoints() {
        assert_eq!(super::tcp_endpoint("127.0.0.1", 5555), "tcp://127.0.0.1:5555");
        assert_eq!(super::tcp_endpoint("::1", 5557), "tcp://[::1]:5557");
        assert_eq!(super::tcp_endpoint("sim.local", 5556), "tcp://sim.local:5556");
    }
}
