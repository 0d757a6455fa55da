//! `rflysim/scene/poses`: a swarm's poses, taken serialized and placed in
//! RflySim3D with as few datagrams as the wire allows.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::StreamExt;

use rflysim_proto::scene::{MultiVehicleUpdate, PlacedVehicle, Placement};

use super::model;
use super::SceneCore;

/// The type `rflysim/scene/poses` is taken as, serialized.
pub(super) const SCENE_POSES_TYPE: &str = "rflysim_bridge/msg/ScenePoses";

/// `rflysim/scene/poses` → RflySim3D's 100-vehicle datagrams, all of a
/// message sent with one system call. The messages are taken serialized
/// and their arrays read where they are ([`ScenePosesView`]): converted to
/// a C message and then to Rust vectors first, the 1 000 poses of a tick
/// cost as much as DDS alone's whole take.
pub(super) async fn bulk_poses(mut poses: impl futures::Stream<Item = Vec<u8>> + Unpin, core: Arc<SceneCore>) {
    let mut placed: Vec<PlacedVehicle> = Vec::new();
    let mut datagrams: Vec<u8> = Vec::new();
    let to = SocketAddr::V4(core.window_port(core.window));
    while let Some(m) = poses.next().await {
        match ScenePosesView::of(&m).and_then(|v| placements(&v, &mut placed)) {
            Ok(()) => {
                let n = MultiVehicleUpdate::encode_all_into(Placement::AsSent, &placed, &mut datagrams);
                match ros_common::net::send_datagrams(&core.sock, &datagrams, MultiVehicleUpdate::LEN, to) {
                    Ok(()) => core.stats.published(n * MultiVehicleUpdate::LEN),
                    Err(e) => {
                        core.stats.drop_frame("send_failed");
                        core.warn(format_args!("scene/poses: cannot send to {to}: {e}"));
                    }
                }
            }
            Err(why) => {
                core.stats.drop_frame("invalid");
                core.warn(format_args!("scene/poses refused, nothing sent: {why}"));
            }
        }
    }
}

/// A serialized `ScenePoses`, its arrays read in place.
struct ScenePosesView<'a> {
    little_endian: bool,
    /// `uint16` each.
    ids: &'a [u8],
    vehicle_types: &'a [u8],
    /// `geometry_msgs/Pose` each: seven `float64`.
    poses: &'a [u8],
    /// `float32` each.
    scales: &'a [u8],
}

/// A `Pose` serialized: position x, y, z, orientation x, y, z, w.
const POSE_LEN: usize = 7 * 8;

impl<'a> ScenePosesView<'a> {
    fn of(message: &'a [u8]) -> Result<Self, String> {
        let cut = || "a truncated message".to_string();
        let mut r = ros_common::cdr::Reader::new(message).ok_or("not plain CDR")?;
        r.time().ok_or_else(cut)?;
        r.string().ok_or_else(cut)?;
        Ok(Self {
            little_endian: r.little_endian(),
            ids: r.sequence(2, 2).ok_or_else(cut)?,
            vehicle_types: r.sequence(2, 2).ok_or_else(cut)?,
            poses: r.sequence(POSE_LEN, 8).ok_or_else(cut)?,
            scales: r.sequence(4, 4).ok_or_else(cut)?,
        })
    }

    fn u16s(&self, b: &'a [u8]) -> impl Iterator<Item = u16> + 'a {
        let le = self.little_endian;
        b.chunks_exact(2).map(move |c| {
            let c = [c[0], c[1]];
            if le {
                u16::from_le_bytes(c)
            } else {
                u16::from_be_bytes(c)
            }
        })
    }

    fn f32s(&self, b: &'a [u8]) -> impl Iterator<Item = f32> + 'a {
        let le = self.little_endian;
        b.chunks_exact(4).map(move |c| {
            let c = [c[0], c[1], c[2], c[3]];
            if le {
                f32::from_le_bytes(c)
            } else {
                f32::from_be_bytes(c)
            }
        })
    }

    /// Position (ENU) and orientation (w, x, y, z) of each pose.
    fn poses(&self) -> impl Iterator<Item = ([f64; 3], [f64; 4])> + 'a {
        let le = self.little_endian;
        self.poses.chunks_exact(POSE_LEN).map(move |p| {
            let f = |i: usize| {
                let b: [u8; 8] = p[8 * i..8 * i + 8].try_into().expect("8 bytes");
                if le {
                    f64::from_le_bytes(b)
                } else {
                    f64::from_be_bytes(b)
                }
            };
            ([f(0), f(1), f(2)], [f(6), f(3), f(4), f(5)])
        })
    }
}

/// A `ScenePoses` message as the wire's vehicles, into `out` (reused).
fn placements(m: &ScenePosesView<'_>, out: &mut Vec<PlacedVehicle>) -> Result<(), String> {
    let n = m.ids.len() / 2;
    let poses = m.poses.len() / POSE_LEN;
    if poses != n {
        return Err(format!("{n} ids, {poses} poses"));
    }
    let one_or_each = |len: usize, what: &str| {
        if len == 0 || len == 1 || len == n {
            Ok(())
        } else {
            Err(format!("{len} {what} for {n} vehicles (one, one each, or none)"))
        }
    };
    let (types, scales) = (m.vehicle_types.len() / 2, m.scales.len() / 4);
    one_or_each(types, "vehicle types")?;
    one_or_each(scales, "scales")?;
    let (mut each_type, mut each_scale) = (m.u16s(m.vehicle_types), m.f32s(m.scales));
    let first_type = m.u16s(m.vehicle_types).next();
    let first_scale = m.f32s(m.scales).next();
    out.clear();
    for (i, (id, (position, q))) in m.u16s(m.ids).zip(m.poses()).enumerate() {
        if id == 0 {
            return Err(format!("ids[{i}] is 0 (RflySim3D's empty slot)"));
        }
        // The field named only on an error: no string built per pose.
        let pose = model::ned_pose("", position, q).map_err(|e| format!("poses[{i}]{e}"))?;
        // None (the default), one value for all, or one each.
        let scale = match scales {
            0 => 1.0,
            1 => first_scale.unwrap_or(1.0),
            _ => each_scale.next().unwrap_or(1.0),
        };
        if !(0.0..=655.0).contains(&scale) {
            return Err(format!("scale {scale} of vehicle {id} outside 0..655"));
        }
        let default_type = model::DEFAULT_VEHICLE_TYPE as u16;
        let vehicle_type = match types {
            0 => default_type,
            1 => first_type.unwrap_or(default_type),
            _ => each_type.next().unwrap_or(default_type),
        };
        let placed = PlacedVehicle {
            id,
            vehicle_type,
            pos_ned: pose.position.map(|v| v as f32),
            euler: pose.euler.map(|a| a as f32),
            scale: [scale; 3],
            motor_rpm_mean: 0.0,
        };
        if let Some(field) = placed.not_finite() {
            return Err(format!("vehicle {id}: {field} would not be finite on the wire"));
        }
        out.push(placed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::geometry_msgs::msg::Pose;
    use r2r::rflysim_bridge::msg::ScenePoses;

    fn poses(n: usize) -> ScenePoses {
        ScenePoses {
            ids: (1..=n as u16).collect(),
            poses: (0..n)
                .map(|i| {
                    let mut p = Pose::default();
                    p.position.x = i as f64;
                    p.orientation.w = 1.0;
                    p
                })
                .collect(),
            ..Default::default()
        }
    }

    /// The message as the subscription takes it: serialized by the middleware.
    fn placements(m: &ScenePoses, out: &mut Vec<PlacedVehicle>) -> Result<(), String> {
        use r2r::WrappedTypesupport;
        let bytes = m.to_serialized_bytes().expect("rmw_serialize");
        super::placements(&ScenePosesView::of(&bytes)?, out)
    }

    #[test]
    fn bulk_poses_become_ned_placements_or_are_refused_whole() {
        let mut out = Vec::new();
        placements(&poses(3), &mut out).unwrap();
        assert_eq!(out.len(), 3);
        // ENU x (east) 2 → NED y 2; FLU level, facing east → NED yaw 90°.
        assert_eq!(out[2].pos_ned, [0.0, 2.0, 0.0]);
        assert!((out[2].euler[2] - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
        assert_eq!((out[0].vehicle_type, out[0].scale), (3, [1.0; 3]));
        let mut bad = poses(3);
        bad.poses[1].position.y = f64::NAN;
        assert!(placements(&bad, &mut out).unwrap_err().contains("poses[1]"));
        // Finite in f64, ±∞ in the datagram's f32: refused, with the field.
        let mut far = poses(3);
        far.poses[2].position.x = 1e39;
        let why = placements(&far, &mut out).unwrap_err();
        assert!(why.contains("poses[2].position.x = 1e39"), "{why}");
        let mut bad = poses(3);
        bad.scales = vec![1.0, 2.0];
        assert!(placements(&bad, &mut out).is_err());
        let mut bad = poses(3);
        bad.ids[0] = 0;
        assert!(placements(&bad, &mut out).is_err());
        let mut two = poses(2);
        two.scales = vec![2.5];
        two.vehicle_types = vec![1003, 5];
        placements(&two, &mut out).unwrap();
        assert_eq!((out[1].vehicle_type, out[1].scale[0]), (5, 2.5));
        assert_eq!(MultiVehicleUpdate::datagram_count(1000), 10);
        two.scales = vec![2.5, 0.5];
        two.vehicle_types = vec![7];
        two.header.frame_id = "rflysim/map".into();
        placements(&two, &mut out).unwrap();
        assert_eq!(
            out.iter().map(|v| (v.vehicle_type, v.scale[0])).collect::<Vec<_>>(),
            [(7, 2.5), (7, 0.5)]
        );
    }

    /// Every pose's fields read from where the middleware put them, for
    /// every frame id length (the padding before the poses).
    #[test]
    fn the_serialized_message_reads_as_the_typed_one() {
        let mut out = Vec::new();
        for frame_id in ["", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg"] {
            let mut m = poses(5);
            m.header.frame_id = frame_id.into();
            for (i, p) in m.poses.iter_mut().enumerate() {
                p.position.y = -(i as f64);
                p.position.z = 0.5 * i as f64;
                let half = 0.1 * i as f64;
                (p.orientation.w, p.orientation.z) = (half.cos(), half.sin());
            }
            placements(&m, &mut out).unwrap();
            for (i, (v, p)) in out.iter().zip(&m.poses).enumerate() {
                let q = [p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z];
                let want = model::ned_pose("", [p.position.x, p.position.y, p.position.z], q).unwrap();
                assert_eq!(v.id, i as u16 + 1);
                assert_eq!(v.pos_ned, want.position.map(|x| x as f32), "{frame_id:?} {i}");
                assert_eq!(v.euler, want.euler.map(|x| x as f32), "{frame_id:?} {i}");
            }
        }
        assert!(ScenePosesView::of(&[0, 1, 0, 0, 1]).is_err(), "cut short");
    }
}
