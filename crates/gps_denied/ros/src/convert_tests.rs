use super::*;
use frames::rotate;
use gps_denied_proto::{Euler, LandingPad as Pad};

fn h(frame: &str) -> Header {
    header(Time { sec: 7, nanosec: 500 }, frame)
}

fn frame() -> DroneTelemetry {
    DroneTelemetry {
        orientation: Some(Euler {
            roll: 0.0,
            pitch: 0.0,
            yaw: std::f64::consts::FRAC_PI_2,
        }),
        angular_velocity: Some(Vector3::new(0.1, -0.2, 0.3)),
        linear_acceleration: Some(Vector3::new(0.0, 0.5, 9.81)),
        altitude: Some(4.25),
        vertical_velocity: Some(-0.5),
        velocity: Some(Vector3::new(1.0, -0.25, -0.5)),
        landing_pad: Some(PadReport::Detected(Pad {
            relative_x: 0.5,
            relative_y: -0.2,
            distance: 4.0,
            confidence: 0.75,
        })),
        landed: Some(false),
        ..Default::default()
    }
}

#[test]
fn imu_orientation_is_a_quarter_turn_of_yaw_and_vectors_pass_through() {
    let cov = Covariances::default();
    let m = imu(&frame(), h("base_link"), &cov).unwrap();
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let q = &m.orientation;
    assert!((q.w - s).abs() < 1e-12 && (q.z - s).abs() < 1e-12 && q.x.abs() < 1e-12 && q.y.abs() < 1e-12);
    assert_eq!(
        (m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z),
        (0.1, -0.2, 0.3)
    );
    assert_eq!(m.linear_acceleration.z, 9.81);
    assert_eq!(m.orientation_covariance[0], cov.imu_orientation);
    assert_eq!(m.angular_velocity_covariance[4], cov.imu_gyro);
    assert_eq!(m.linear_acceleration_covariance[8], cov.imu_accel);
    assert_eq!(m.header.frame_id, "base_link");
}

#[test]
fn a_missing_imu_part_is_marked_unknown_and_no_part_means_no_message() {
    let cov = Covariances::default();
    let t = DroneTelemetry {
        orientation: None,
        ..frame()
    };
    let m = imu(&t, h("b"), &cov).unwrap();
    assert_eq!(m.orientation_covariance[0], -1.0);
    assert_eq!(m.angular_velocity_covariance[0], cov.imu_gyro);
    let t = DroneTelemetry {
        timestamp: Some(1.0),
        ..Default::default()
    };
    assert!(imu(&t, h("b"), &cov).is_none());
}

#[test]
fn altitude_velocity_landed() {
    let t = frame();
    let r = altitude(&t, h("altimeter"), &AltimeterModel::default()).unwrap();
    assert_eq!((r.range, r.min_range, r.max_range), (4.25, 0.0, 100.0));
    assert_eq!(r.radiation_type, Range::INFRARED as u8);
    let v = velocity(&t, h("base_link")).unwrap();
    assert_eq!(
        (v.twist.linear.x, v.twist.linear.y, v.twist.linear.z),
        (1.0, -0.25, -0.5)
    );
    assert_eq!(v.twist.angular.z, 0.3);
    assert!(!landed(&t).unwrap().data);
    let none = DroneTelemetry::default();
    assert!(altitude(&none, h("a"), &AltimeterModel::default()).is_none());
    assert!(velocity(&none, h("a")).is_none());
    assert!(landed(&none).is_none());
}

#[test]
fn landing_pad_every_frame_point_only_when_seen() {
    let t = frame();
    let p = landing_pad(&t, h("base_link"));
    assert!(p.detected);
    assert_eq!(
        (p.relative_x, p.relative_y, p.distance, p.confidence),
        (0.5, -0.2, 4.0, 0.75)
    );
    let pt = pad_point(&t, h("base_link")).unwrap();
    assert_eq!((pt.point.x, pt.point.y, pt.point.z), (0.5, -0.2, -4.0));
    for pad in [Some(PadReport::NotVisible), None] {
        let t = DroneTelemetry {
            landing_pad: pad,
            ..frame()
        };
        let p = landing_pad(&t, h("base_link"));
        assert!(!p.detected && p.relative_x == 0.0 && p.confidence == 0.0);
        assert!(pad_point(&t, h("base_link")).is_none());
    }
}

#[test]
fn rover_odometry_faces_its_velocity() {
    let ids = FrameIds::new("gps_denied/");
    let cov = Covariances::default();
    let r = RoverTelemetry {
        position: Some(Vector3::new(1.5, 0.8, 0.15)),
        velocity: Some(Vector3::new(0.0, 0.4, 0.0)),
        pattern: Some("circular".into()),
        timestamp: Some(1.0),
    };
    let o = rover_odometry(&r, None, Time::default(), &ids, &cov).unwrap();
    assert_eq!(
        (o.header.frame_id.as_str(), o.child_frame_id.as_str()),
        ("gps_denied/map", "gps_denied/rover/base_link")
    );
    assert_eq!(o.pose.pose.position.y, 0.8);
    let q = &o.pose.pose.orientation;
    let forward = rotate([q.w, q.x, q.y, q.z], [1.0, 0.0, 0.0]);
    assert!(forward[0].abs() < 1e-12 && (forward[1] - 1.0).abs() < 1e-12, "faces +y");
    assert!((o.twist.twist.linear.x - 0.4).abs() < 1e-12 && o.twist.twist.linear.y.abs() < 1e-12);
    // Standing still: the last heading, else unknown.
    let still = RoverTelemetry {
        velocity: Some(Vector3::default()),
        ..r.clone()
    };
    let o = rover_odometry(&still, Some(1.0), Time::default(), &ids, &cov).unwrap();
    assert!((o.pose.pose.orientation.z - 0.5f64.sin()).abs() < 1e-12);
    let o = rover_odometry(&still, None, Time::default(), &ids, &cov).unwrap();
    assert_eq!(o.pose.covariance[35], 1e6);
    let nowhere = RoverTelemetry { position: None, ..r };
    assert!(rover_odometry(&nowhere, None, Time::default(), &ids, &cov).is_none());
}

#[test]
fn commands_from_attitude_thrust_and_twist() {
    let m = AttitudeThrust {
        thrust: 0.5,
        pitch: 0.1,
        roll: -0.2,
        yaw: 0.0,
        ..Default::default()
    };
    assert_eq!(
        String::from_utf8(attitude_command(&m).unwrap().encode()).unwrap(),
        r#"{"thrust":0.5,"pitch":0.1,"roll":-0.2,"yaw":0.0}"#
    );
    let too_much = AttitudeThrust {
        thrust: 1.5,
        ..m.clone()
    };
    assert!(attitude_command(&too_much).is_err());
    let nan = AttitudeThrust { yaw: f32::NAN, ..m };
    assert!(attitude_command(&nan).is_err());
    let mut tw = Twist::default();
    tw.linear.z = 2.0;
    tw.angular.x = 0.1;
    tw.angular.y = -0.3;
    tw.angular.z = 0.2;
    let gains = TwistGains {
        thrust: 0.25,
        ..Default::default()
    };
    let (c, clamped) = twist_command(&tw, &gains).unwrap();
    assert_eq!((c.thrust(), c.roll(), c.pitch(), c.yaw()), (0.5, 0.1, -0.3, 0.2));
    assert!(!clamped);
    tw.angular.y = -3.0;
    let (c, clamped) = twist_command(&tw, &gains).unwrap();
    assert_eq!(c.pitch(), -0.5);
    assert!(clamped);
}

#[test]
fn static_mounts_look_down() {
    let ids = FrameIds::new("");
    let m = mounts(&ids);
    let q = |i: usize| m[i].rotation;
    assert_eq!(
        (m[0].parent.as_str(), m[0].child.as_str()),
        ("drone/base_link", "drone/camera_optical")
    );
    let view = rotate(q(0), [0.0, 0.0, 1.0]);
    assert!((view[2] + 1.0).abs() < 1e-12, "the camera's z looks down");
    assert_eq!(m[1].child, "drone/altimeter");
    let ray = rotate(q(1), [1.0, 0.0, 0.0]);
    assert!((ray[2] + 1.0).abs() < 1e-12, "the altimeter's x looks down");
}
