use aerosim_proto::frames::quaternion_from_roll_pitch_yaw;
use aerosim_proto::types::{ActorState, Pose, Quaternion, Vector3};

use super::*;

fn state(position: Vec3, roll: f64, pitch: f64, yaw: f64, velocity: Vec3, rates: Vec3) -> VehicleState {
    let q = quaternion_from_roll_pitch_yaw(roll, pitch, yaw);
    let v = |a: Vec3| Vector3 {
        x: a[0],
        y: a[1],
        z: a[2],
    };
    VehicleState {
        state: ActorState {
            pose: Pose {
                position: v(position),
                orientation: Quaternion {
                    w: q[0],
                    x: q[1],
                    y: q[2],
                    z: q[3],
                },
            },
        },
        velocity: v(velocity),
        angular_velocity: v(rates),
        acceleration: v([0.0; 3]),
        angular_acceleration: v([0.0; 3]),
    }
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn a_level_aircraft_facing_north_faces_plus_y_in_enu() {
    let k = kinematics(&state([100.0, 50.0, -300.0], 0.0, 0.0, 0.0, [40.0, 0.0, 0.0], [0.0; 3]));
    assert!(close(&k.position_enu, &[50.0, 100.0, 300.0], 1e-12));
    // The body's forward axis points north: ENU +y.
    assert!(close(
        &rotate(k.orientation_enu_flu, [1.0, 0.0, 0.0]),
        &[0.0, 1.0, 0.0],
        1e-12
    ));
    assert!(close(
        &rotate(k.orientation_enu_flu, [0.0, 0.0, 1.0]),
        &[0.0, 0.0, 1.0],
        1e-12
    ));
    assert!(close(&k.velocity_flu, &[40.0, 0.0, 0.0], 1e-12));
    assert!(close(&k.velocity_enu, &[0.0, 40.0, 0.0], 1e-12));
    assert!(close(&k.specific_force_flu, &[0.0, 0.0, G], 1e-12));
}

#[test]
fn banked_right_facing_east_puts_the_left_wing_up() {
    let k = kinematics(&state(
        [0.0; 3],
        30f64.to_radians(),
        0.0,
        90f64.to_radians(),
        [0.0; 3],
        [0.0; 3],
    ));
    // Forward is east (ENU +x); the left wing (FLU +y) points up-ish and north.
    assert!(close(
        &rotate(k.orientation_enu_flu, [1.0, 0.0, 0.0]),
        &[1.0, 0.0, 0.0],
        1e-12
    ));
    let left = rotate(k.orientation_enu_flu, [0.0, 1.0, 0.0]);
    assert!(
        close(&left, &[0.0, 30f64.to_radians().cos(), 30f64.to_radians().sin()], 1e-12),
        "{left:?}"
    );
    assert!((k.attitude.roll - 30f64.to_radians()).abs() < 1e-12);
    assert!((k.attitude.yaw - 90f64.to_radians()).abs() < 1e-12);
}

#[test]
fn a_coordinated_turn_reads_along_the_body_z_axis() {
    // 40 m/s north, banked 30° right, turning right at g·tan(30°)/v.
    let (bank, v) = (30f64.to_radians(), 40.0);
    let r = G * bank.tan() / v;
    let s = state(
        [0.0; 3],
        bank,
        0.0,
        0.0,
        [v, 0.0, 0.0],
        [0.0, r * bank.sin(), r * bank.cos()],
    );
    let f = kinematics(&s).specific_force_flu;
    // No side force; the load factor 1/cos(bank) along body up.
    assert!(close(&f, &[0.0, 0.0, G / bank.cos()], 1e-9), "{f:?}");
}

#[test]
fn geodetic_offsets_follow_the_ellipsoid() {
    let o = Origin {
        latitude_deg: 0.0,
        longitude_deg: 0.0,
        altitude_m: 0.0,
    };
    let (lat, lon, alt) = geodetic(&o, [110_574.0, 111_320.0, -100.0]);
    // One degree of latitude and of longitude at the equator, 100 m up.
    assert!((lat - 1.0).abs() < 1e-3 && (lon - 1.0).abs() < 1e-3 && (alt - 100.0).abs() < 1e-9);
}

#[test]
fn the_failsafe_holds_altitude_heading_and_airspeed() {
    let s = state(
        [0.0, 0.0, -304.8],
        0.0,
        0.0,
        90f64.to_radians(),
        [0.0, 1852.0 / 3600.0 * 80.0, 0.0],
        [0.0; 3],
    );
    let h = hold(&s).unwrap();
    assert!(h.use_manual_setpoints && h.altitude_hold && h.heading_hold && h.airspeed_hold);
    assert!(!h.attitude_hold);
    assert!((h.altitude_setpoint_ft - 1000.0).abs() < 1e-9);
    assert!((h.heading_setpoint_deg - 90.0).abs() < 1e-9);
    assert!((h.airspeed_setpoint_kts - 80.0).abs() < 1e-9);
}

#[test]
fn no_hold_from_a_state_outside_the_command_ranges() {
    // Finite, but 1e150 m up, or at 1e6 m/s: no autopilot command can say it.
    for (position, velocity) in [([0.0, 0.0, -1e150], [0.0; 3]), ([0.0; 3], [1e6, 0.0, 0.0])] {
        let s = state(position, 0.0, 0.0, 0.0, velocity, [0.0; 3]);
        assert_eq!(hold(&s).unwrap_err().reason(), "out_of_range");
    }
    let instead = attitude_hold();
    assert!(instead.use_manual_setpoints && instead.attitude_hold);
    assert!(!instead.altitude_hold && !instead.airspeed_hold && !instead.heading_hold);
}

#[test]
fn the_flight_control_neutral_centres_the_sticks_and_keeps_the_power() {
    let last = FlightControlCommand {
        power_cmd: vec![0.6],
        roll_cmd: -0.4,
        pitch_cmd: 0.3,
        yaw_cmd: 0.2,
        flap_cmd: 0.5,
        ..FlightControlCommand::default()
    };
    let n = centred(&last);
    assert_eq!((n.roll_cmd, n.pitch_cmd, n.yaw_cmd), (0.0, 0.0, 0.0));
    assert_eq!((n.power_cmd, n.flap_cmd), (vec![0.6], 0.5));
}

#[test]
fn commands_outside_their_ranges_are_refused() {
    let mut m = r2r::rflysim_bridge::msg::FlightControlCommand {
        power_cmd: vec![0.5],
        ..Default::default()
    };
    assert!(flight_control(&m).is_ok());
    let empty = r2r::rflysim_bridge::msg::FlightControlCommand::default();
    assert_eq!(flight_control(&empty).unwrap_err().reason(), "missing_value");
    m.roll_cmd = 1.5;
    assert_eq!(flight_control(&m).unwrap_err().reason(), "out_of_range");
    m.roll_cmd = f64::NAN;
    assert_eq!(flight_control(&m).unwrap_err().reason(), "not_finite");
    let mut a = r2r::rflysim_bridge::msg::AutopilotCommand::default();
    assert!(autopilot(&a).is_ok());
    a.flight_plan_command = 3;
    assert_eq!(autopilot(&a).unwrap_err().reason(), "bad_enum");
    let t = Twist {
        linear: r2r::geometry_msgs::msg::Vector3 {
            x: 1e9,
            y: 0.0,
            z: -1e9,
        },
        angular: r2r::geometry_msgs::msg::Vector3 { x: 0.0, y: 0.0, z: 1.0 },
    };
    let c = twist_to_flight_control(
        &t,
        &TwistGains {
            power: 0.02,
            pitch: 0.1,
            roll: 1.0,
            yaw: 0.5,
        },
    )
    .unwrap();
    // A dive asked for (linear.z < 0): full nose-down elevator, positive in AeroSim.
    assert_eq!(
        (c.power_cmd[0], c.pitch_cmd, c.roll_cmd, c.yaw_cmd),
        (1.0, 1.0, -1.0, -0.5)
    );
}
