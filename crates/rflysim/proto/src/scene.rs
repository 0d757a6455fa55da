//! RflySim3D's scene over UDP (RflySim's Python SDK `UE4CtrlAPI`,
//! rflysim.com/doc/en/4.DevRef/pysdk/ue/ue4ctrl.html): the structs that place vehicles in the
//! scene, sent to window i's request port 20010 + i, and everything
//! RflySim3D sends back on its status port 20006, read by
//! [`StatusDatagram::decode`] as the SDK reads it: by exact length, then
//! checksum. The console verbs that ask about the scene are in
//! [`crate::console`].
//!
//! Units. Positions are metres in the world's NED frame (z down) and angles
//! radians (roll, pitch, yaw), both ways: the replies' `PosUE` and
//! `boxOrigin` are in the frame of the `PosE` vehicles are placed with (the
//! SDK's `CoptReqData` and `ObjReqData`), and `BoxExtent` is half the box's size in metres
//! along the object's X forward, Y right, Z up. RflySim3D's "the space
//! unit is cm" concerns RflySim3D's inside and `RflySetPosScale`, which the
//! bridge leaves at 1.
//!
//! Layout. Little-endian. The SDK packs with Python's native alignment,
//! which pads only `SOut2SimulatorSimpleTime` (4 bytes before its first
//! double): [`VehicleUpdate`] sends those 104 bytes and reads the packed 100 too.

// One module per direction: what places vehicles, what comes back.
mod placement;
mod status;

pub use placement::*;
pub use status::*;

/// `v` as an `f32` field of the wire, `None` where it is not finite there:
/// NaN, ±∞, or beyond ±[`f32::MAX`] (3.4e38), which an `f32` holds as ±∞.
pub fn wire_f32(v: f64) -> Option<f32> {
    let f = v as f32;
    f.is_finite().then_some(f)
}

/// The name of the first of `fields` that holds a value that is not finite.
fn not_finite(f32s: &[(&'static str, &[f32])], f64s: &[(&'static str, &[f64])]) -> Option<&'static str> {
    let bad32 = f32s.iter().find(|(_, v)| !v.iter().all(|x| x.is_finite()));
    let bad64 = || f64s.iter().find(|(_, v)| !v.iter().all(|x| x.is_finite()));
    bad32.map(|(name, _)| *name).or_else(|| bad64().map(|(name, _)| *name))
}

#[cfg(test)]
mod tests {
    use super::placement::tests::{three, update};
    use super::status::tests::{copter, crash};
    use super::*;

    pub(super) fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn values_beyond_f32_or_not_finite_are_named_by_their_field() {
        assert_eq!(wire_f32(1.5), Some(1.5));
        assert_eq!(wire_f32(-3.0e38), Some(-3.0e38));
        for bad in [1e39, -1e39, f64::NAN, f64::INFINITY] {
            assert_eq!(wire_f32(bad), None, "{bad}");
        }
        assert_eq!(update().not_finite(), None);
        let u = VehicleUpdate {
            vel_ned: [0.0, 1e39_f64 as f32, 0.0],
            ..update()
        };
        assert_eq!(u.not_finite(), Some("vel_ned"));
        let u = VehicleUpdate {
            pos_ned: [f64::NAN, 0.0, 0.0],
            ..update()
        };
        assert_eq!(u.not_finite(), Some("pos_ned"));
        assert_eq!(three()[1].not_finite(), None);
        let v = PlacedVehicle {
            pos_ned: [f32::INFINITY, 0.0, 0.0],
            ..three()[1]
        };
        assert_eq!(v.not_finite(), Some("pos_ned"));
        assert_eq!(crash().not_finite(), None);
        for (field, bad) in [
            (
                "vel_ned",
                VehicleCrashData {
                    vel_ned: [f32::NAN; 3],
                    ..crash()
                },
            ),
            (
                "rays",
                VehicleCrashData {
                    rays: [1.0, f32::NAN, 1.0, 1.0, 1.0, 1.0],
                    ..crash()
                },
            ),
            (
                "crash_pos",
                VehicleCrashData {
                    crash_pos: [0.0, f32::NEG_INFINITY, 0.0],
                    ..crash()
                },
            ),
            (
                "target_pos",
                VehicleCrashData {
                    target_pos: [f32::NAN; 3],
                    ..crash()
                },
            ),
            (
                "runned_time",
                VehicleCrashData {
                    runned_time: f64::NAN,
                    ..crash()
                },
            ),
        ] {
            assert_eq!(bad.not_finite(), Some(field));
        }
        assert_eq!(copter().pose.not_finite(), None);
        let odd = PoseAndBox {
            box_extent: [1.0, f32::NAN, 1.0],
            ..copter().pose
        };
        assert_eq!(odd.not_finite(), Some("box_extent"));
        let odd = PoseAndBox {
            quat: Some([f32::NAN, 0.0, 0.0, 0.0]),
            ..copter().pose
        };
        assert_eq!(odd.not_finite(), Some("quat"));
    }
}
