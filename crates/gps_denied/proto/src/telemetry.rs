//! The telemetry objects as typed values, and their encoder (for
//! the emulator and the tests). Parsing is in `parse`.
//!
//! Every part is optional: a part that is absent or bad on the wire is
//! `None` here (and `parse` says which and why). The IMU, altimeter and
//! camera objects are flattened into their parts, because those are what
//! the bridge publishes one by one.

use serde_json::{json, Map, Value};

use crate::image;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vector3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Vector3 {
    pub const fn new(x: f64, y: f64, z: f64) -> Self {
        Self { x, y, z }
    }
    pub fn to_array(self) -> [f64; 3] {
        [self.x, self.y, self.z]
    }
}

/// `imu.orientation`, radians (see `frames` for the convention).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Euler {
    pub roll: f64,
    pub pitch: f64,
    pub yaw: f64,
}

/// `landing_pad` when the pad is seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LandingPad {
    /// Forward offset of the pad, body frame, metres.
    pub relative_x: f64,
    /// Left offset of the pad, body frame, metres.
    pub relative_y: f64,
    /// Vertical distance from the drone down to the pad, metres.
    pub distance: f64,
    /// Detection confidence, 0..=1.
    pub confidence: f64,
}

/// `landing_pad`: an object when the pad is seen, `null` when it is not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadReport {
    Detected(LandingPad),
    NotVisible,
}

/// `camera.width`, `camera.height`, `camera.fov` (horizontal, degrees).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraGeometry {
    pub width: u32,
    pub height: u32,
    pub fov_deg: f64,
}

/// One drone telemetry object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DroneTelemetry {
    pub orientation: Option<Euler>,
    pub angular_velocity: Option<Vector3>,
    pub linear_acceleration: Option<Vector3>,
    pub altitude: Option<f64>,
    pub vertical_velocity: Option<f64>,
    /// Body frame: x forward, y left, z up.
    pub velocity: Option<Vector3>,
    /// `None` when absent or bad; `Some(NotVisible)` for `null`.
    pub landing_pad: Option<PadReport>,
    pub camera: Option<CameraGeometry>,
    /// The JPEG bytes after base64; `None` for `null`, `""`, absent or bad.
    pub image: Option<Vec<u8>>,
    pub landed: Option<bool>,
    /// Simulation time, seconds.
    pub timestamp: Option<f64>,
}

/// One rover telemetry object (the protocol's "for internal use by
/// RoverController"; some setups forward it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoverTelemetry {
    /// World frame, metres.
    pub position: Option<Vector3>,
    /// World frame, m/s.
    pub velocity: Option<Vector3>,
    /// `circular`, `linear`, `figure8`, ... as the simulator names it.
    pub pattern: Option<String>,
    pub timestamp: Option<f64>,
}

/// What one datagram holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Telemetry {
    Drone(DroneTelemetry),
    Rover(RoverTelemetry),
}

fn vector(v: Vector3) -> Value {
    json!({"x": v.x, "y": v.y, "z": v.z})
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}

fn object_if_any(map: Map<String, Value>) -> Option<Value> {
    (!map.is_empty()).then_some(Value::Object(map))
}

impl DroneTelemetry {
    /// The object as the simulator writes it; parts that are `None` are left
    /// out, except the camera image, which is `null` in a frame without one.
    pub fn to_value(&self) -> Value {
        let mut imu = Map::new();
        put(
            &mut imu,
            "orientation",
            self.orientation
                .map(|o| json!({"roll": o.roll, "pitch": o.pitch, "yaw": o.yaw})),
        );
        put(&mut imu, "angular_velocity", self.angular_velocity.map(vector));
        put(&mut imu, "linear_acceleration", self.linear_acceleration.map(vector));
        let mut altimeter = Map::new();
        put(&mut altimeter, "altitude", self.altitude.map(Value::from));
        put(
            &mut altimeter,
            "vertical_velocity",
            self.vertical_velocity.map(Value::from),
        );
        let mut out = Map::new();
        put(&mut out, "imu", object_if_any(imu));
        put(&mut out, "altimeter", object_if_any(altimeter));
        put(&mut out, "velocity", self.velocity.map(vector));
        put(
            &mut out,
            "landing_pad",
            self.landing_pad.map(|p| match p {
                PadReport::Detected(p) => json!({
                    "relative_x": p.relative_x,
                    "relative_y": p.relative_y,
                    "distance": p.distance,
                    "confidence": p.confidence,
                }),
                PadReport::NotVisible => Value::Null,
            }),
        );
        if self.camera.is_some() || self.image.is_some() {
            let mut camera = Map::new();
            if let Some(g) = self.camera {
                camera.insert("width".into(), g.width.into());
                camera.insert("height".into(), g.height.into());
                camera.insert("fov".into(), g.fov_deg.into());
            }
            let image = self
                .image
                .as_deref()
                .map_or(Value::Null, |j| image::encode_base64(j).into());
            camera.insert("image".into(), image);
            out.insert("camera".into(), Value::Object(camera));
        }
        put(&mut out, "landed", self.landed.map(Value::from));
        put(&mut out, "timestamp", self.timestamp.map(Value::from));
        Value::Object(out)
    }

    /// One datagram's bytes.
    pub fn encode(&self) -> Vec<u8> {
        self.to_value().to_string().into_bytes()
    }
}

impl RoverTelemetry {
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        put(&mut out, "position", self.position.map(vector));
        put(&mut out, "velocity", self.velocity.map(vector));
        put(&mut out, "pattern", self.pattern.clone().map(Value::from));
        put(&mut out, "timestamp", self.timestamp.map(Value::from));
        Value::Object(out)
    }

    pub fn encode(&self) -> Vec<u8> {
        self.to_value().to_string().into_bytes()
    }
}

impl Telemetry {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Telemetry::Drone(d) => d.encode(),
            Telemetry::Rover(r) => r.encode(),
        }
    }

    pub fn timestamp(&self) -> Option<f64> {
        match self {
            Telemetry::Drone(d) => d.timestamp,
            Telemetry::Rover(r) => r.timestamp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_without_image_says_null_and_absent_parts_are_left_out() {
        let t = DroneTelemetry {
            camera: Some(CameraGeometry {
                width: 320,
                height: 240,
                fov_deg: 60.0,
            }),
            landing_pad: Some(PadReport::NotVisible),
            timestamp: Some(1.5),
            ..Default::default()
        };
        let v = t.to_value();
        assert_eq!(v["camera"]["image"], Value::Null);
        assert_eq!(v["camera"]["width"], 320);
        assert_eq!(v["landing_pad"], Value::Null);
        assert!(v.get("imu").is_none() && v.get("altimeter").is_none() && v.get("landed").is_none());
    }

    #[test]
    fn the_documented_layout_is_written() {
        let t = DroneTelemetry {
            orientation: Some(Euler::default()),
            angular_velocity: Some(Vector3::default()),
            linear_acceleration: Some(Vector3::new(0.0, 0.0, 9.81)),
            altitude: Some(5.0),
            vertical_velocity: Some(-0.1),
            velocity: Some(Vector3::new(0.0, 0.0, -0.1)),
            landed: Some(false),
            ..Default::default()
        };
        let v = t.to_value();
        assert_eq!(v["imu"]["linear_acceleration"]["z"], 9.81);
        assert_eq!(v["altimeter"]["vertical_velocity"], -0.1);
        assert_eq!(v["velocity"]["z"], -0.1);
        assert_eq!(v["landed"], false);
    }
}
