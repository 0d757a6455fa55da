//! Lenient telemetry parsing. The schema drifts between versions of the
//! simulator, so every part is optional and unknown fields are ignored; a
//! part of the wrong type is dropped alone, never the frame. What was
//! missing or bad is reported part by part (`PartFaults`) for the bridge's
//! counters. A datagram that is not a JSON object at all is an error.

use crate::image::{decode_base64_jpeg, ImageError};
use crate::telemetry::{
    CameraGeometry, DroneTelemetry, Euler, LandingPad, PadReport, RoverTelemetry, Telemetry, Vector3,
};
use crate::wire::{MAX_DATAGRAM_BYTES, MAX_IMAGE_DIMENSION};

// The value type and its serde visitors are one job apart from reading the parts.
mod json;

use json::{non_finite_as_null, Json, Object};

/// The bounds a hostile message cannot push the parser past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A longer message is refused unread.
    pub max_message_bytes: usize,
    /// A longer `camera.image` is refused before it is decoded.
    pub max_image_base64_bytes: usize,
}

impl Default for Limits {
    /// What one datagram can hold.
    fn default() -> Self {
        Self {
            max_message_bytes: MAX_DATAGRAM_BYTES,
            max_image_base64_bytes: MAX_DATAGRAM_BYTES,
        }
    }
}

/// The parts the bridge publishes (or counts) one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    Orientation,
    AngularVelocity,
    LinearAcceleration,
    Altitude,
    VerticalVelocity,
    Velocity,
    LandingPad,
    Camera,
    Image,
    Landed,
    Timestamp,
    RoverPosition,
    RoverVelocity,
    RoverPattern,
}

impl Part {
    pub const COUNT: usize = 14;
    pub const ALL: [Part; Part::COUNT] = [
        Part::Orientation,
        Part::AngularVelocity,
        Part::LinearAcceleration,
        Part::Altitude,
        Part::VerticalVelocity,
        Part::Velocity,
        Part::LandingPad,
        Part::Camera,
        Part::Image,
        Part::Landed,
        Part::Timestamp,
        Part::RoverPosition,
        Part::RoverVelocity,
        Part::RoverPattern,
    ];

    /// The wire path, for logs and diagnostics.
    pub fn name(self) -> &'static str {
        self.names().0
    }

    /// `part/fault` (e.g. `landed/invalid`), a counter's name.
    pub fn key(self, fault: Fault) -> &'static str {
        match fault {
            Fault::Missing => self.names().1,
            Fault::Invalid => self.names().2,
            // Only `camera.image` has these.
            Fault::ImageTooLong => "camera.image/image_too_long",
            Fault::BadBase64 => "camera.image/bad_base64",
            Fault::NotJpeg => "camera.image/not_jpeg",
        }
    }

    /// Static names, so that counters can be keyed without allocating.
    fn names(self) -> (&'static str, &'static str, &'static str) {
        macro_rules! named {
            ($($part:ident => $name:literal),* $(,)?) => {
                match self {
                    $(Part::$part => ($name, concat!($name, "/missing"), concat!($name, "/invalid")),)*
                }
            };
        }
        named! {
            Orientation => "imu.orientation",
            AngularVelocity => "imu.angular_velocity",
            LinearAcceleration => "imu.linear_acceleration",
            Altitude => "altimeter.altitude",
            VerticalVelocity => "altimeter.vertical_velocity",
            Velocity => "velocity",
            LandingPad => "landing_pad",
            Camera => "camera",
            Image => "camera.image",
            Landed => "landed",
            Timestamp => "timestamp",
            RoverPosition => "rover.position",
            RoverVelocity => "rover.velocity",
            RoverPattern => "rover.pattern",
        }
    }
}

/// Why a part is not in the parsed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Absent (or its enclosing object is).
    Missing,
    /// Wrong type, incomplete, `null` where a value belongs, or out of its domain.
    Invalid,
    /// `camera.image` longer than the limit (not decoded).
    ImageTooLong,
    /// `camera.image` is not base64.
    BadBase64,
    /// `camera.image` decodes to something that is not a JPEG.
    NotJpeg,
}

impl Fault {
    pub const COUNT: usize = 5;
    pub const ALL: [Fault; Fault::COUNT] = [
        Fault::Missing,
        Fault::Invalid,
        Fault::ImageTooLong,
        Fault::BadBase64,
        Fault::NotJpeg,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::Missing => "missing",
            Fault::Invalid => "invalid",
            Fault::ImageTooLong => "image_too_long",
            Fault::BadBase64 => "bad_base64",
            Fault::NotJpeg => "not_jpeg",
        }
    }
}

impl From<ImageError> for Fault {
    fn from(e: ImageError) -> Self {
        match e {
            ImageError::TooLong { .. } => Fault::ImageTooLong,
            ImageError::BadBase64 => Fault::BadBase64,
            ImageError::NotJpeg => Fault::NotJpeg,
        }
    }
}

/// At most one fault per part of one message (no allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PartFaults([Option<Fault>; Part::COUNT]);

impl PartFaults {
    pub fn get(&self, part: Part) -> Option<Fault> {
        self.0[part as usize]
    }
    pub fn set(&mut self, part: Part, fault: Fault) {
        self.0[part as usize] = Some(fault);
    }
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }
    pub fn len(&self) -> usize {
        self.0.iter().flatten().count()
    }
    pub fn iter(&self) -> impl Iterator<Item = (Part, Fault)> + '_ {
        Part::ALL.iter().filter_map(|&p| self.get(p).map(|f| (p, f)))
    }
}

/// A parsed message and what it lacked.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub telemetry: Telemetry,
    pub faults: PartFaults,
}

/// A message that is not a telemetry object at all.
#[derive(Debug)]
pub enum TelemetryError {
    TooLong {
        len: usize,
        max: usize,
    },
    /// Not JSON (or truncated).
    Malformed(serde_json::Error),
    /// JSON, but not an object.
    NotAnObject,
}

impl TelemetryError {
    /// A short name for counters.
    pub fn kind(&self) -> &'static str {
        match self {
            TelemetryError::TooLong { .. } => "too_long",
            TelemetryError::Malformed(_) => "malformed_json",
            TelemetryError::NotAnObject => "not_an_object",
        }
    }
}

impl std::fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TelemetryError::TooLong { len, max } => write!(f, "message of {len} bytes (at most {max})"),
            TelemetryError::Malformed(e) => write!(f, "not JSON: {e}"),
            TelemetryError::NotAnObject => f.write_str("JSON but not an object"),
        }
    }
}

impl std::error::Error for TelemetryError {}

/// Parses one telemetry message (one datagram, or one `std_msgs/String`).
pub fn parse_telemetry(input: &[u8], limits: &Limits) -> Result<Parsed, TelemetryError> {
    if input.len() > limits.max_message_bytes {
        return Err(TelemetryError::TooLong {
            len: input.len(),
            max: limits.max_message_bytes,
        });
    }
    let value: Json<'_> = match serde_json::from_slice(input) {
        Ok(v) => v,
        Err(e) => {
            let Some(repaired) = non_finite_as_null(input) else {
                return Err(TelemetryError::Malformed(e));
            };
            let value: Json<'_> = serde_json::from_slice(&repaired).map_err(|_| TelemetryError::Malformed(e))?;
            return parsed(value, limits);
        }
    };
    parsed(value, limits)
}

fn parsed(value: Json<'_>, limits: &Limits) -> Result<Parsed, TelemetryError> {
    let Json::Object(map) = value else {
        return Err(TelemetryError::NotAnObject);
    };
    let mut faults = PartFaults::default();
    let telemetry = if is_rover(&map) {
        Telemetry::Rover(rover(&map, &mut faults))
    } else {
        Telemetry::Drone(drone(&map, limits, &mut faults))
    };
    Ok(Parsed { telemetry, faults })
}

const DRONE_KEYS: [&str; 5] = ["imu", "altimeter", "camera", "landing_pad", "landed"];

/// A rover object has a `position` or `pattern` and none of the drone's
/// own objects.
fn is_rover(map: &Object<'_>) -> bool {
    (map.contains_key("position") || map.contains_key("pattern")) && !DRONE_KEYS.iter().any(|k| map.contains_key(k))
}

/// Records the fault of `part` and turns the result into an `Option`.
fn keep<T>(faults: &mut PartFaults, part: Part, r: Result<T, Fault>) -> Option<T> {
    r.map_err(|f| faults.set(part, f)).ok()
}

fn field<'a>(map: Option<&'a Object<'a>>, key: &str) -> Result<&'a Json<'a>, Fault> {
    map.and_then(|m| m.get(key)).ok_or(Fault::Missing)
}

/// A sub-object: `Err(Missing)` when absent, `Err(Invalid)` when not an object.
fn object<'a>(map: &'a Object<'a>, key: &str) -> Result<&'a Object<'a>, Fault> {
    match map.get(key) {
        None => Err(Fault::Missing),
        Some(Json::Object(o)) => Ok(o),
        Some(_) => Err(Fault::Invalid),
    }
}

/// A finite number that a ROS message's `float32` holds (beyond ±3.4e38 it
/// would become ±inf there): nothing a simulator measures is larger.
fn number(v: &Json<'_>) -> Result<f64, Fault> {
    v.as_f64()
        .filter(|x| x.abs() <= f64::from(f32::MAX))
        .ok_or(Fault::Invalid)
}

fn number_field(map: Option<&Object<'_>>, key: &str) -> Result<f64, Fault> {
    number(field(map, key)?)
}

fn three(v: &Json<'_>, keys: [&str; 3]) -> Result<[f64; 3], Fault> {
    let Json::Object(o) = v else {
        return Err(Fault::Invalid);
    };
    let get = |k: &str| o.get(k).ok_or(Fault::Invalid).and_then(number);
    Ok([get(keys[0])?, get(keys[1])?, get(keys[2])?])
}

fn vector(v: &Json<'_>) -> Result<Vector3, Fault> {
    three(v, ["x", "y", "z"]).map(|[x, y, z]| Vector3 { x, y, z })
}

/// The enclosing object's own fault is its parts' fault.
fn inner<'a>(outer: Result<&'a Object<'a>, Fault>, key: &str) -> Result<&'a Json<'a>, Fault> {
    outer?.get(key).ok_or(Fault::Missing)
}

fn dimension(v: &Json<'_>) -> Result<u32, Fault> {
    let x = number(v)?;
    if x.fract() == 0.0 && (1.0..=f64::from(MAX_IMAGE_DIMENSION)).contains(&x) {
        Ok(x as u32)
    } else {
        Err(Fault::Invalid)
    }
}

fn landing_pad(v: &Json<'_>) -> Result<PadReport, Fault> {
    let Json::Object(o) = v else {
        return if v.is_null() {
            Ok(PadReport::NotVisible)
        } else {
            Err(Fault::Invalid)
        };
    };
    let get = |k: &str| o.get(k).ok_or(Fault::Invalid).and_then(number);
    let pad = LandingPad {
        relative_x: get("relative_x")?,
        relative_y: get("relative_y")?,
        distance: get("distance")?,
        confidence: get("confidence")?,
    };
    if (0.0..=1.0).contains(&pad.confidence) {
        Ok(PadReport::Detected(pad))
    } else {
        Err(Fault::Invalid)
    }
}

fn camera(o: &Object<'_>) -> Result<CameraGeometry, Fault> {
    let get = |k: &str| o.get(k).ok_or(Fault::Missing);
    // A wrong value outweighs a missing one: it is the likelier schema change.
    let (width, height, fov) = (get("width"), get("height"), get("fov"));
    let width = width.and_then(dimension);
    let height = height.and_then(dimension);
    let fov = fov.and_then(number).and_then(|f| {
        if f > 0.0 && f < 180.0 {
            Ok(f)
        } else {
            Err(Fault::Invalid)
        }
    });
    let faults = [width.err(), height.err(), fov.err()];
    if faults.contains(&Some(Fault::Invalid)) {
        return Err(Fault::Invalid);
    }
    Ok(CameraGeometry {
        width: width?,
        height: height?,
        fov_deg: fov?,
    })
}

/// `null` and `""` mean "no image in this frame", which is no fault.
fn image(camera: Result<&Object<'_>, Fault>, limits: &Limits) -> Result<Option<Vec<u8>>, Fault> {
    match inner(camera, "image")? {
        Json::Null => Ok(None),
        Json::String(s) if s.is_empty() => Ok(None),
        Json::String(s) => decode_base64_jpeg(s, limits.max_image_base64_bytes)
            .map(Some)
            .map_err(Fault::from),
        _ => Err(Fault::Invalid),
    }
}

fn timestamp(map: &Object<'_>) -> Result<f64, Fault> {
    let t = number_field(Some(map), "timestamp")?;
    if t >= 0.0 {
        Ok(t)
    } else {
        Err(Fault::Invalid)
    }
}

fn drone(map: &Object<'_>, limits: &Limits, faults: &mut PartFaults) -> DroneTelemetry {
    let imu = object(map, "imu");
    let altimeter = object(map, "altimeter");
    let camera_object = object(map, "camera");
    let orientation = inner(imu, "orientation")
        .and_then(|v| three(v, ["roll", "pitch", "yaw"]))
        .map(|[roll, pitch, yaw]| Euler { roll, pitch, yaw });
    let image = image(camera_object, limits);
    DroneTelemetry {
        orientation: keep(faults, Part::Orientation, orientation),
        angular_velocity: keep(
            faults,
            Part::AngularVelocity,
            inner(imu, "angular_velocity").and_then(vector),
        ),
        linear_acceleration: keep(
            faults,
            Part::LinearAcceleration,
            inner(imu, "linear_acceleration").and_then(vector),
        ),
        altitude: keep(faults, Part::Altitude, inner(altimeter, "altitude").and_then(number)),
        vertical_velocity: keep(
            faults,
            Part::VerticalVelocity,
            inner(altimeter, "vertical_velocity").and_then(number),
        ),
        velocity: keep(faults, Part::Velocity, field(Some(map), "velocity").and_then(vector)),
        landing_pad: keep(
            faults,
            Part::LandingPad,
            field(Some(map), "landing_pad").and_then(landing_pad),
        ),
        camera: keep(faults, Part::Camera, camera_object.and_then(camera)),
        image: keep(faults, Part::Image, image).flatten(),
        landed: keep(
            faults,
            Part::Landed,
            field(Some(map), "landed").and_then(|v| v.as_bool().ok_or(Fault::Invalid)),
        ),
        timestamp: keep(faults, Part::Timestamp, timestamp(map)),
    }
}

/// Longer pattern names are taken as wrong rather than copied.
const MAX_PATTERN_LEN: usize = 64;

fn rover(map: &Object<'_>, faults: &mut PartFaults) -> RoverTelemetry {
    let pattern = field(Some(map), "pattern").and_then(|v| match v {
        Json::String(s) if s.len() <= MAX_PATTERN_LEN => Ok(s.to_string()),
        _ => Err(Fault::Invalid),
    });
    RoverTelemetry {
        position: keep(
            faults,
            Part::RoverPosition,
            field(Some(map), "position").and_then(vector),
        ),
        velocity: keep(
            faults,
            Part::RoverVelocity,
            field(Some(map), "velocity").and_then(vector),
        ),
        pattern: keep(faults, Part::RoverPattern, pattern),
        timestamp: keep(faults, Part::Timestamp, timestamp(map)),
    }
}
