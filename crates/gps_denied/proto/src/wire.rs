//! Protocol facts, each in one place.

/// The simulator's UDP port: commands go there (its documented host port).
pub const DEFAULT_SIM_PORT: u16 = 5555;
/// The bridge's own UDP port, where the simulator's telemetry arrives. The
/// seed fixes no reply address; this is the bridge's choice.
pub const DEFAULT_LOCAL_PORT: u16 = 5556;
/// One JSON object per datagram, and a UDP datagram is at most 64 KiB.
pub const MAX_DATAGRAM_BYTES: usize = 64 * 1024;

/// `thrust` is in [-THRUST_LIMIT, THRUST_LIMIT] (positive = up).
pub const THRUST_LIMIT: f32 = 1.0;
/// `pitch`, `roll` and `yaw` are each in [-ATTITUDE_LIMIT, ATTITUDE_LIMIT].
pub const ATTITUDE_LIMIT: f32 = 0.5;

pub const DEFAULT_IMAGE_WIDTH: u32 = 320;
pub const DEFAULT_IMAGE_HEIGHT: u32 = 240;
/// Horizontal field of view, degrees.
pub const DEFAULT_FOV_DEG: f64 = 60.0;
/// The camera image is a JPEG of this quality...
pub const JPEG_QUALITY: i32 = 70;
/// ...sent with every this-many-th telemetry frame (~5 Hz at 25 Hz).
pub const IMAGE_EVERY_NTH_FRAME: u64 = 5;
/// The simulator's telemetry rate, Hz.
pub const DEFAULT_TELEMETRY_RATE_HZ: f64 = 25.0;
/// Bigger image sizes than this in `camera.width` / `camera.height` are
/// taken as wrong, not as a request to allocate.
pub const MAX_IMAGE_DIMENSION: u32 = 8192;

/// Where setups that carry the telemetry on ROS publish it (`std_msgs/String`).
pub const TELEMETRY_TOPIC: &str = "/drone/telemetry";
/// Where commands go as JSON strings in those setups (the protocol names none;
/// the bridge's choice).
pub const COMMAND_TOPIC: &str = "/drone/command";
