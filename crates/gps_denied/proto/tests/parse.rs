//! The lenient telemetry parser, part by part.

use gps_denied_proto::image::encode_base64;
use gps_denied_proto::{
    parse_telemetry, CameraGeometry, DroneTelemetry, Euler, Fault, LandingPad, Limits, PadReport, Parsed, Part,
    RoverTelemetry, Telemetry, TelemetryError, Vector3,
};
use serde_json::{json, Value};

/// The telemetry example, verbatim.
const DOCUMENTED_EXAMPLE: &str = r#"{ "imu": { "orientation": {"roll": 0.0, "pitch": 0.0, "yaw": 0.0}, "angular_velocity": {"x": 0.0, "y": 0.0, "z": 0.0}, "linear_acceleration": {"x": 0.0, "y": 0.0, "z": 9.81} }, "altimeter": { "altitude": 5.0, "vertical_velocity": -0.1 }, "velocity": {"x": 0.0, "y": 0.0, "z": -0.1}, "landing_pad": { "relative_x": 0.5, "relative_y": -0.2, "distance": 4.5, "confidence": 0.85 }, "camera": { "width": 320, "height": 240, "fov": 60.0, "image": "" }, "landed": false, "timestamp": 1.234 }"#;

const JPEG_START: &[u8] = &[0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00];

fn parse(v: &Value) -> Parsed {
    parse_telemetry(v.to_string().as_bytes(), &Limits::default()).unwrap()
}

fn drone(p: &Parsed) -> &DroneTelemetry {
    match &p.telemetry {
        Telemetry::Drone(d) => d,
        other => panic!("not a drone frame: {other:?}"),
    }
}

fn documented_value() -> Value {
    serde_json::from_str(DOCUMENTED_EXAMPLE).unwrap()
}

#[test]
fn the_documented_example_parses_completely() {
    let p = parse_telemetry(DOCUMENTED_EXAMPLE.as_bytes(), &Limits::default()).unwrap();
    assert!(p.faults.is_empty(), "{:?}", p.faults);
    let want = DroneTelemetry {
        orientation: Some(Euler::default()),
        angular_velocity: Some(Vector3::default()),
        linear_acceleration: Some(Vector3::new(0.0, 0.0, 9.81)),
        altitude: Some(5.0),
        vertical_velocity: Some(-0.1),
        velocity: Some(Vector3::new(0.0, 0.0, -0.1)),
        landing_pad: Some(PadReport::Detected(LandingPad {
            relative_x: 0.5,
            relative_y: -0.2,
            distance: 4.5,
            confidence: 0.85,
        })),
        camera: Some(CameraGeometry {
            width: 320,
            height: 240,
            fov_deg: 60.0,
        }),
        image: None,
        landed: Some(false),
        timestamp: Some(1.234),
    };
    assert_eq!(drone(&p), &want);
}

#[test]
fn one_wrong_part_is_dropped_alone() {
    let cases: [(&str, Value, Part); 8] = [
        ("/imu/orientation/roll", json!("level"), Part::Orientation),
        ("/imu/angular_velocity", json!([0, 0, 0]), Part::AngularVelocity),
        ("/altimeter/altitude", json!(null), Part::Altitude),
        ("/velocity/y", json!({"v": 1}), Part::Velocity),
        ("/landing_pad/confidence", json!(1.5), Part::LandingPad),
        ("/camera/width", json!("320"), Part::Camera),
        ("/landed", json!(0), Part::Landed),
        ("/timestamp", json!(-1.0), Part::Timestamp),
    ];
    for (path, bad, part) in cases {
        let mut v = documented_value();
        *v.pointer_mut(path).unwrap() = bad;
        let p = parse(&v);
        let faults: Vec<_> = p.faults.iter().collect();
        assert_eq!(faults, vec![(part, Fault::Invalid)], "{path}");
        let d = drone(&p);
        assert!(d.altitude.is_some() || part == Part::Altitude, "{path}");
        assert!(d.timestamp.is_some() || part == Part::Timestamp, "{path}");
        assert!(d.camera.is_some() || part == Part::Camera, "{path}");
    }
}

#[test]
fn a_wrong_enclosing_object_drops_its_parts_as_invalid() {
    let mut v = documented_value();
    v["imu"] = json!("calibrating");
    v["altimeter"] = json!(null);
    let p = parse(&v);
    for part in [
        Part::Orientation,
        Part::AngularVelocity,
        Part::LinearAcceleration,
        Part::Altitude,
        Part::VerticalVelocity,
    ] {
        assert_eq!(p.faults.get(part), Some(Fault::Invalid), "{part:?}");
    }
    assert_eq!(p.faults.len(), 5);
    assert!(drone(&p).velocity.is_some());
}

#[test]
fn missing_parts_are_reported_missing_and_unknown_fields_ignored() {
    let p = parse(&json!({"timestamp": 3.5, "battery": {"voltage": 11.1}, "gps": null}));
    let d = drone(&p);
    assert_eq!(d.timestamp, Some(3.5));
    for part in [
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
    ] {
        assert_eq!(p.faults.get(part), Some(Fault::Missing), "{part:?}");
    }
    assert_eq!(p.faults.get(Part::Timestamp), None);
    assert_eq!(
        p.faults.get(Part::RoverPosition),
        None,
        "a drone frame lacks no rover part"
    );

    let mut v = documented_value();
    v["camera"].as_object_mut().unwrap().remove("fov");
    v["imu"].as_object_mut().unwrap().remove("orientation");
    let p = parse(&v);
    assert_eq!(p.faults.get(Part::Camera), Some(Fault::Missing));
    assert_eq!(p.faults.get(Part::Orientation), Some(Fault::Missing));
    assert_eq!(p.faults.len(), 2);
}

#[test]
fn landing_pad_null_means_not_visible() {
    let mut v = documented_value();
    v["landing_pad"] = Value::Null;
    let p = parse(&v);
    assert!(p.faults.is_empty());
    assert_eq!(drone(&p).landing_pad, Some(PadReport::NotVisible));
}

#[test]
fn images_decode_and_each_image_fault_has_its_name() {
    let mut v = documented_value();
    v["camera"]["image"] = encode_base64(JPEG_START).into();
    let p = parse(&v);
    assert!(p.faults.is_empty());
    assert_eq!(drone(&p).image.as_deref(), Some(JPEG_START));

    let cases = [
        (Value::Null, None),
        (json!(""), None),
        (json!(12), Some(Fault::Invalid)),
        (json!("not base64!"), Some(Fault::BadBase64)),
        (encode_base64(b"GIF89a").into(), Some(Fault::NotJpeg)),
    ];
    for (image, fault) in cases {
        v["camera"]["image"] = image.clone();
        let p = parse(&v);
        assert_eq!(p.faults.get(Part::Image), fault, "{image}");
        assert_eq!(drone(&p).image, None);
        assert!(drone(&p).camera.is_some(), "the geometry survives a bad image");
    }
}

#[test]
fn an_image_over_the_limit_is_refused_unread() {
    let mut v = documented_value();
    v["camera"]["image"] = "*".repeat(2000).into();
    let limits = Limits {
        max_image_base64_bytes: 1999,
        ..Limits::default()
    };
    let p = parse_telemetry(v.to_string().as_bytes(), &limits).unwrap();
    assert_eq!(p.faults.get(Part::Image), Some(Fault::ImageTooLong));
    let limits = Limits {
        max_image_base64_bytes: 2000,
        ..Limits::default()
    };
    let p = parse_telemetry(v.to_string().as_bytes(), &limits).unwrap();
    assert_eq!(p.faults.get(Part::Image), Some(Fault::BadBase64));
}

#[test]
fn rover_objects_are_recognised() {
    let text = r#"{"position": {"x": 1.5, "y": 0.8, "z": 0.15}, "velocity": {"x": 0.3, "y": 0.4, "z": 0.0}, "pattern": "circular", "timestamp": 1.234}"#;
    let p = parse_telemetry(text.as_bytes(), &Limits::default()).unwrap();
    assert!(p.faults.is_empty());
    assert_eq!(
        p.telemetry,
        Telemetry::Rover(RoverTelemetry {
            position: Some(Vector3::new(1.5, 0.8, 0.15)),
            velocity: Some(Vector3::new(0.3, 0.4, 0.0)),
            pattern: Some("circular".into()),
            timestamp: Some(1.234),
        })
    );
    let p = parse(&json!({"position": {"x": 1, "y": 2}, "pattern": 8}));
    assert!(matches!(p.telemetry, Telemetry::Rover(_)));
    assert_eq!(p.faults.get(Part::RoverPosition), Some(Fault::Invalid));
    assert_eq!(p.faults.get(Part::RoverVelocity), Some(Fault::Missing));
    assert_eq!(p.faults.get(Part::RoverPattern), Some(Fault::Invalid));
    assert_eq!(p.faults.get(Part::Timestamp), Some(Fault::Missing));
    // A drone frame that happens to carry a position is still a drone frame.
    let p = parse(&json!({"position": {"x": 1, "y": 2, "z": 3}, "landed": true}));
    assert!(matches!(p.telemetry, Telemetry::Drone(_)));
}

#[test]
fn numbers_beyond_float32_drop_only_their_part() {
    let text = DOCUMENTED_EXAMPLE
        .replace(r#""altitude": 5.0"#, r#""altitude": 1e39"#)
        .replace(r#""relative_x": 0.5"#, r#""relative_x": -3.5e38"#);
    let p = parse_telemetry(text.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(p.faults.get(Part::Altitude), Some(Fault::Invalid));
    assert_eq!(p.faults.get(Part::LandingPad), Some(Fault::Invalid));
    assert_eq!(p.faults.len(), 2);
    // The largest float32 is still a number.
    let text = DOCUMENTED_EXAMPLE.replace(r#""altitude": 5.0"#, r#""altitude": 3.4028234e38"#);
    assert!(parse_telemetry(text.as_bytes(), &Limits::default())
        .unwrap()
        .faults
        .is_empty());
}

#[test]
fn python_non_finite_numbers_drop_only_their_part() {
    let text = DOCUMENTED_EXAMPLE
        .replace(r#""altitude": 5.0"#, r#""altitude": NaN"#)
        .replace(r#""z": -0.1}"#, r#""z": -Infinity}"#);
    let p = parse_telemetry(text.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(p.faults.get(Part::Altitude), Some(Fault::Invalid));
    assert_eq!(p.faults.get(Part::Velocity), Some(Fault::Invalid));
    assert_eq!(p.faults.len(), 2);
    // Inside a string, "NaN" is text and stays so.
    let p = parse(&json!({"position": {"x": 0, "y": 0, "z": 0}, "pattern": "NaN Infinity"}));
    assert_eq!(
        p.telemetry,
        Telemetry::Rover(RoverTelemetry {
            position: Some(Vector3::default()),
            pattern: Some("NaN Infinity".into()),
            ..Default::default()
        })
    );
}

#[test]
fn what_is_not_a_telemetry_object_is_an_error() {
    let l = Limits::default();
    assert!(matches!(parse_telemetry(b"", &l), Err(TelemetryError::Malformed(_))));
    assert!(matches!(
        parse_telemetry(b"[1, 2]", &l),
        Err(TelemetryError::NotAnObject)
    ));
    assert!(matches!(parse_telemetry(b"null", &l), Err(TelemetryError::NotAnObject)));
    let truncated = &DOCUMENTED_EXAMPLE.as_bytes()[..DOCUMENTED_EXAMPLE.len() / 2];
    assert!(matches!(
        parse_telemetry(truncated, &l),
        Err(TelemetryError::Malformed(_))
    ));
    let deep = "[".repeat(100_000);
    assert!(matches!(
        parse_telemetry(
            deep.as_bytes(),
            &Limits {
                max_message_bytes: 200_000,
                ..l
            }
        ),
        Err(TelemetryError::Malformed(_))
    ));
    let long = vec![b' '; l.max_message_bytes + 1];
    assert!(matches!(
        parse_telemetry(&long, &l),
        Err(TelemetryError::TooLong { .. })
    ));
}
