//! Property tests: telemetry and commands round-trip through their encoders,
//! every absent part is reported missing, and the Euler convention is the
//! composition of its three single-axis rotations.

use gps_denied_proto::frames::{body_to_world, orientation};
use gps_denied_proto::{
    parse_telemetry, CameraGeometry, Command, DroneTelemetry, Euler, Fault, LandingPad, Limits, PadReport, Part,
    RoverTelemetry, Telemetry, Vector3,
};
use proptest::prelude::*;

fn real() -> impl Strategy<Value = f64> {
    prop_oneof![-1e6..1e6f64, Just(0.0), -1.0..1.0f64]
}

fn vector() -> impl Strategy<Value = Vector3> {
    (real(), real(), real()).prop_map(|(x, y, z)| Vector3 { x, y, z })
}

fn pad() -> impl Strategy<Value = PadReport> {
    prop_oneof![
        Just(PadReport::NotVisible),
        (real(), real(), real(), 0.0..=1.0f64).prop_map(|(relative_x, relative_y, distance, confidence)| {
            PadReport::Detected(LandingPad {
                relative_x,
                relative_y,
                distance,
                confidence,
            })
        })
    ]
}

fn jpeg() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..200).prop_map(|mut tail| {
        let mut j = vec![0xFF, 0xD8, 0xFF];
        j.append(&mut tail);
        j
    })
}

prop_compose! {
    fn drone()(
        orientation in prop::option::of((real(), real(), real()).prop_map(|(roll, pitch, yaw)| Euler { roll, pitch, yaw })),
        angular_velocity in prop::option::of(vector()),
        linear_acceleration in prop::option::of(vector()),
        altitude in prop::option::of(real()),
        vertical_velocity in prop::option::of(real()),
        velocity in prop::option::of(vector()),
        landing_pad in prop::option::of(pad()),
        camera in prop::option::of((1u32..=8192, 1u32..=8192, 0.1..179.9f64)
            .prop_map(|(width, height, fov_deg)| CameraGeometry { width, height, fov_deg })),
        image in prop::option::of(jpeg()),
        landed in prop::option::of(any::<bool>()),
        timestamp in prop::option::of(0.0..1e7f64),
    ) -> DroneTelemetry {
        DroneTelemetry {
            orientation, angular_velocity, linear_acceleration, altitude, vertical_velocity, velocity,
            landing_pad, camera, image, landed, timestamp,
        }
    }
}

proptest! {
    #[test]
    fn drone_telemetry_round_trips_and_absent_parts_are_missing(t in drone()) {
        let parsed = parse_telemetry(&t.encode(), &Limits::default()).unwrap();
        prop_assert_eq!(&parsed.telemetry, &Telemetry::Drone(t.clone()));
        let camera_object = t.camera.is_some() || t.image.is_some();
        let expected_missing = [
            (Part::Orientation, t.orientation.is_none()),
            (Part::AngularVelocity, t.angular_velocity.is_none()),
            (Part::LinearAcceleration, t.linear_acceleration.is_none()),
            (Part::Altitude, t.altitude.is_none()),
            (Part::VerticalVelocity, t.vertical_velocity.is_none()),
            (Part::Velocity, t.velocity.is_none()),
            (Part::LandingPad, t.landing_pad.is_none()),
            (Part::Camera, t.camera.is_none()),
            // A camera object always has `image` (null in frames without one).
            (Part::Image, !camera_object),
            (Part::Landed, t.landed.is_none()),
            (Part::Timestamp, t.timestamp.is_none()),
        ];
        for (part, missing) in expected_missing {
            prop_assert_eq!(parsed.faults.get(part), missing.then_some(Fault::Missing), "{:?}", part);
        }
        prop_assert_eq!(parsed.faults.len(), expected_missing.iter().filter(|(_, m)| *m).count());
    }

    #[test]
    fn rover_telemetry_round_trips(
        position in vector(),
        velocity in prop::option::of(vector()),
        pattern in prop::option::of("[a-z0-9_]{0,20}"),
        timestamp in prop::option::of(0.0..1e7f64),
    ) {
        let r = RoverTelemetry { position: Some(position), velocity, pattern, timestamp };
        let parsed = parse_telemetry(&r.encode(), &Limits::default()).unwrap();
        prop_assert_eq!(parsed.telemetry, Telemetry::Rover(r));
    }

    #[test]
    fn commands_in_range_round_trip_and_keep_the_documented_layout(
        thrust in -1.0..=1.0f64, pitch in -0.5..=0.5f64, roll in -0.5..=0.5f64, yaw in -0.5..=0.5f64,
    ) {
        let c = Command::new(thrust, pitch, roll, yaw).unwrap();
        let text = String::from_utf8(c.encode()).unwrap();
        prop_assert!(text.starts_with("{\"thrust\":") && text.ends_with('}'), "{}", text);
        let keys: Vec<usize> = ["\"thrust\":", ",\"pitch\":", ",\"roll\":", ",\"yaw\":"]
            .iter().map(|k| text.find(k).unwrap()).collect();
        prop_assert!(keys.windows(2).all(|w| w[0] < w[1]), "{}", text);
        prop_assert_eq!(Command::decode(text.as_bytes()).unwrap(), c);
        prop_assert_eq!(f64::from(c.thrust()), f64::from(thrust as f32));
    }

    #[test]
    fn commands_out_of_range_are_never_built(
        over in 1e-6..1e6f64, sign in prop::bool::ANY, which in 0usize..4,
    ) {
        let mut v = [0.0; 4];
        let limit = if which == 0 { 1.0 } else { 0.5 };
        v[which] = if sign { limit + over } else { -limit - over };
        prop_assert!(Command::new(v[0], v[1], v[2], v[3]).is_err());
    }

    #[test]
    fn euler_quaternion_is_yaw_then_pitch_then_roll_in_body_axes(
        roll in -3.2..3.2f64, pitch in -1.6..1.6f64, yaw in -3.2..3.2f64, v in vector(),
    ) {
        let e = Euler { roll, pitch, yaw };
        let q = orientation(e);
        let norm: f64 = q.iter().map(|c| c * c).sum();
        prop_assert!((norm - 1.0).abs() < 1e-12);
        let (sr, cr) = roll.sin_cos();
        let (sp, cp) = pitch.sin_cos();
        let (sy, cy) = yaw.sin_cos();
        let v = v.to_array();
        let rx = [v[0], cr * v[1] - sr * v[2], sr * v[1] + cr * v[2]];
        let ry = [cp * rx[0] + sp * rx[2], rx[1], -sp * rx[0] + cp * rx[2]];
        let rz = [cy * ry[0] - sy * ry[1], sy * ry[0] + cy * ry[1], ry[2]];
        let got = body_to_world(e, v);
        let scale = v.iter().fold(1.0f64, |m, c| m.max(c.abs()));
        for i in 0..3 {
            prop_assert!((got[i] - rz[i]).abs() < 1e-9 * scale, "{:?} vs {:?}", got, rz);
        }
    }
}
