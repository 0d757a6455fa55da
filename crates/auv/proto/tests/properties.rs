//! Property tests: every message round-trips through build and parse, unit
//! levels map onto the wire's range, mixing stays in range, and the frame
//! conversion keeps directions.

use auv_proto::mixing::{command_from_unit, mix_twist, MixGains, TwistDemand};
use auv_proto::pose::{AngleUnit, PoseConvention, WorldFrame};
use auv_proto::telemetry::Telemetry;
use auv_proto::thruster::ThrusterCommand;
use frames::{euler_to_quat, ned_to_enu, rotate};
use proptest::prelude::*;

fn level() -> impl Strategy<Value = Option<i8>> {
    prop_oneof![Just(None), (-100i8..=100).prop_map(Some)]
}

fn finite() -> impl Strategy<Value = f32> {
    -1.0e6f32..1.0e6
}

proptest! {
    #[test]
    fn thruster_commands_round_trip(id in any::<u8>(), l in [level(), level(), level(), level()]) {
        let c = ThrusterCommand::new(id, l).unwrap();
        let bytes = c.encode();
        prop_assert_eq!(bytes[0], id);
        prop_assert_eq!(ThrusterCommand::decode(&bytes), Ok(c));
    }

    #[test]
    fn any_five_bytes_decode_or_are_refused_without_panicking(bytes in any::<[u8; 5]>()) {
        let valid = bytes[1..].iter().all(|&b| b as i8 == -127 || (-100..=100).contains(&(b as i8)));
        prop_assert_eq!(ThrusterCommand::decode(&bytes).is_ok(), valid);
    }

    #[test]
    fn telemetry_round_trips(id in any::<u8>(), v in [finite(), finite(), finite(), finite(), finite(), finite()]) {
        let t = Telemetry { auv_id: id, x: v[0], y: v[1], z: v[2], yaw: v[3], pitch: v[4], roll: v[5] };
        let parts = [t.id_part().to_vec(), t.payload().to_vec()];
        prop_assert_eq!(Telemetry::parse(&parts), Ok(t));
    }

    #[test]
    fn unit_levels_land_on_the_nearest_wire_level(l in [-1.0f32..=1.0, -1.0f32..=1.0, -1.0f32..=1.0, -1.0f32..=1.0]) {
        let c = command_from_unit(1, l).unwrap();
        for (wire, unit) in c.levels().iter().zip(l) {
            let wire = f32::from(wire.unwrap());
            prop_assert!((wire - unit * 100.0).abs() <= 0.5 + 1e-4, "{} vs {}", wire, unit);
        }
    }

    #[test]
    fn mixing_stays_in_range_and_keeps_the_turn_sense(
        forward in -50.0f64..50.0, left in -50.0f64..50.0, up in -50.0f64..50.0, yaw in -50.0f64..50.0,
        gain in 0.01f64..10.0,
    ) {
        let g = MixGains { surge: gain, yaw: gain, sway: gain, heave: gain };
        let m = mix_twist(TwistDemand { forward, left, up, yaw_left: yaw }, &g).unwrap();
        prop_assert!(m.iter().all(|v| (-1.0..=1.0).contains(v)), "{:?}", m);
        // Turning left (yaw > 0) never has the left thruster ahead of the right.
        if yaw > 0.0 { prop_assert!(m[1] >= m[0]); }
        if yaw < 0.0 { prop_assert!(m[1] <= m[0]); }
        prop_assert!(command_from_unit(0, m).is_ok());
    }

    /// The body's axes, rotated into the world, agree whichever way they are
    /// computed: NED nose → ENU is the FLU nose; NED right → ENU is minus the FLU left.
    #[test]
    fn ned_frd_axes_map_onto_enu_flu_axes(yaw in -3.1f32..3.1, pitch in -1.5f32..1.5, roll in -3.1f32..3.1) {
        let t = Telemetry { auv_id: 0, x: 0.0, y: 0.0, z: 0.0, yaw, pitch, roll };
        let pose = PoseConvention::default().to_enu_flu(&t);
        let q_ned = euler_to_quat(f64::from(roll), f64::from(pitch), f64::from(yaw));
        let norm: f64 = pose.orientation.iter().map(|v| v * v).sum();
        prop_assert!((norm - 1.0).abs() < 1e-9);
        for (frd, flu) in [([1.0, 0.0, 0.0], [1.0, 0.0, 0.0]), ([0.0, 1.0, 0.0], [0.0, -1.0, 0.0]), ([0.0, 0.0, 1.0], [0.0, 0.0, -1.0])] {
            let a = ned_to_enu(rotate(q_ned, frd));
            let b = rotate(pose.orientation, flu);
            for i in 0..3 { prop_assert!((a[i] - b[i]).abs() < 1e-9, "{:?} vs {:?}", a, b); }
        }
        // Degrees read the same pose.
        let deg = PoseConvention { angle_unit: AngleUnit::Deg, world_frame: WorldFrame::Ned };
        let td = Telemetry { yaw: yaw.to_degrees(), pitch: pitch.to_degrees(), roll: roll.to_degrees(), ..t };
        let pd = deg.to_enu_flu(&td);
        let dot: f64 = pd.orientation.iter().zip(pose.orientation).map(|(a, b)| a * b).sum();
        prop_assert!(dot.abs() > 1.0 - 1e-6);
    }
}
