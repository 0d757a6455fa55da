//! A decoded LiDAR or depth-cloud frame → its `PointCloud2`, the vehicle's
//! odometry from the pose that came with it, and odom → base_link. Pure: no
//! node, no I/O.

use std::borrow::Cow;

use bytes::Bytes;
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Twist, TwistWithCovariance};
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::PointCloud2;
use r2r::std_msgs::msg::Header;
use r2r::tf2_msgs::msg::TFMessage;

use frames::{euler_to_quat, ned_frd_to_enu_flu, ned_to_enu};
use rflysim_proto::config::SensorConfig;
use rflysim_proto::lidar::{LidarPose, PointCloud, FLOAT_HEADER_LEN, POINT_STEP};
use ros_common::cdr;
use ros_common::msgs::{header, pose_with_covariance, unknown_covariance, Covariances};

use crate::names;

/// Where a cloud's points are.
#[derive(Debug, Clone)]
pub enum CloudPoints {
    /// On their own: serialized by a copy after the cloud's other fields.
    Apart(Bytes),
    /// In the frame they arrived in, after `headroom` free bytes that the
    /// cloud's other fields take exactly (see [`FrameMapper::headroom`]):
    /// serialized there, without a copy (a 100k-point cloud is 1.6 MB).
    ///
    /// [`FrameMapper::headroom`]: super::frame::FrameMapper::headroom
    InFrame { frame: Vec<u8>, headroom: usize },
}

impl CloudPoints {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            CloudPoints::Apart(b) => b,
            CloudPoints::InFrame { frame, headroom } => &frame[*headroom..],
        }
    }
}

/// What one LiDAR frame becomes.
#[derive(Debug, Clone)]
pub struct CloudMessages {
    /// Every field of the cloud but its points (`data` is left empty) and
    /// `is_dense`, which is found when it is serialized
    /// ([`CloudMessages::take_serialized`]).
    pub cloud: PointCloud2,
    pub points: CloudPoints,
    /// In the world frame (`global`) or the vehicle's odom frame.
    pub odometry: Odometry,
    pub global: bool,
    /// odom → base_link, when asked for and the pose is not global.
    pub tf: Option<TFMessage>,
}

impl CloudMessages {
    /// The serialized `PointCloud2`, `is_dense` found from its points:
    /// written in the frame when the points are still in it, else into
    /// `spare` (a buffer the publisher reuses). The points are taken: a
    /// cloud is serialized once, and only when somebody receives it.
    pub fn take_serialized<'a>(&mut self, spare: &'a mut Vec<u8>) -> Result<Cow<'a, [u8]>, cdr::TooLong> {
        let points = std::mem::replace(&mut self.points, CloudPoints::Apart(Bytes::new()));
        self.cloud.is_dense = all_finite(points.as_slice());
        match points {
            CloudPoints::InFrame { mut frame, headroom } => {
                if cdr::point_cloud2_in_place(&mut frame, headroom, &self.cloud)? {
                    return Ok(Cow::Owned(frame));
                }
                cdr::point_cloud2(spare, &self.cloud, &frame[headroom..])?;
            }
            CloudPoints::Apart(points) => cdr::point_cloud2(spare, &self.cloud, &points)?,
        }
        Ok(Cow::Borrowed(spare))
    }
}

/// Where a frame's points come from.
#[derive(Debug)]
pub enum Points {
    /// Decoded: the pose and the points apart.
    Decoded(PointCloud),
    /// A protocol-layout frame, undecoded but for a depth cloud's padding
    /// (zeroed), after `headroom` free bytes
    /// (`rflysim_proto::lidar::protocol_float_frame` has read its pose).
    FloatFrame {
        frame: Vec<u8>,
        headroom: usize,
        pose: LidarPose,
    },
}

/// The frame of sensor `cfg`'s clouds: the world's for TypeID 21 (points
/// in the world frame), else the sensor's.
pub fn cloud_frame(cfg: &SensorConfig) -> String {
    if cfg.kind().is_some_and(|k| k.points_in_world_frame()) {
        names::WORLD_FRAME.to_string()
    } else {
        names::sensor_frame(cfg)
    }
}

/// The messages of a frame of sensor `cfg`, all with one stamp. TypeID 21's
/// points are in RflySim's NED world: they are published in ENU in the
/// world frame.
pub fn cloud_messages(
    cfg: &SensorConfig,
    points: Points,
    stamp: Time,
    covariances: &Covariances,
    tf_wanted: bool,
) -> CloudMessages {
    let world = cfg.kind().is_some_and(|k| k.points_in_world_frame());
    let frame = cloud_frame(cfg);
    let (pose, points) = match points {
        Points::Decoded(decoded) => {
            let data = if world {
                let mut data = ros_common::msgs::into_vec(decoded.data);
                ned_points_to_enu(&mut data);
                Bytes::from(data)
            } else {
                decoded.data
            };
            (decoded.pose, CloudPoints::Apart(data))
        }
        Points::FloatFrame {
            mut frame,
            headroom,
            pose,
        } => {
            // The protocol's header in front of the points becomes room for the cloud's fields.
            let points_at = headroom + FLOAT_HEADER_LEN;
            if world {
                ned_points_to_enu(&mut frame[points_at..]);
            }
            (
                pose,
                CloudPoints::InFrame {
                    frame,
                    headroom: points_at,
                },
            )
        }
    };
    let copter = pose
        .copter_id
        .and_then(|c| u16::try_from(c).ok())
        .unwrap_or(cfg.target_copter);
    let global = pose.axis_type.map_or(world, |a| a == 1);
    let odom_frame = if global {
        names::WORLD_FRAME.to_string()
    } else {
        names::odom_frame(copter)
    };
    let odometry = odometry_from_lidar_pose(
        &pose,
        header(stamp.clone(), &odom_frame),
        &names::base_frame(copter),
        covariances,
    );
    let tf = (tf_wanted && !global).then(|| ros_common::tf::odometry_tf(&odometry));
    CloudMessages {
        cloud: point_cloud_without_data(points.as_slice().len(), header(stamp, &frame)),
        points,
        odometry,
        global,
        tf,
    }
}

/// The fields of a cloud of `data_len` bytes of points: x, y, z, seg
/// (FLOAT32 at 0, 4, 8, 12; point_step 16; height 1); its own `data` is left
/// empty and `is_dense` false ([`CloudMessages::take_serialized`] finds it).
pub fn point_cloud_without_data(data_len: usize, header: Header) -> PointCloud2 {
    let width = (data_len / POINT_STEP) as u32;
    let field = ros_common::msgs::float32_field;
    PointCloud2 {
        header,
        height: 1,
        width,
        fields: vec![field("x", 0), field("y", 4), field("z", 8), field("seg", 12)],
        is_bigendian: false,
        point_step: POINT_STEP as u32,
        row_step: POINT_STEP as u32 * width,
        data: Vec::new(),
        is_dense: false,
    }
}

/// Whether every f32 of `data` is finite. A float is not finite when its
/// exponent bits are all ones, and exactly then does adding 1 to them carry
/// into the sign bit: OR-ing those sums over a block is one integer pass the
/// compiler vectorizes, without a branch inside (twice as fast as comparing
/// each float, which was a tenth of a 100k-point LiDAR's CPU).
fn all_finite(data: &[u8]) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    const EXPONENT_ONE: u32 = 0x0080_0000;
    data.chunks(4096).all(|block| {
        let carries = block.chunks_exact(4).fold(0u32, |acc, c| {
            acc | ((u32::from_le_bytes([c[0], c[1], c[2], c[3]]) & EXPONENT) + EXPONENT_ONE)
        });
        carries & 0x8000_0000 == 0
    })
}

/// World points in NED → ENU, in place (x, y, z, seg f32 records).
pub fn ned_points_to_enu(data: &mut [u8]) {
    for p in data.chunks_exact_mut(POINT_STEP) {
        let x = [p[0], p[1], p[2], p[3]];
        p.copy_within(4..8, 0);
        p[4..8].copy_from_slice(&x);
        // Negating an IEEE float flips its sign bit (the last byte, little-endian).
        p[11] ^= 0x80;
    }
}

/// The pose that comes with a LiDAR frame, as odometry in ENU / FLU. Its
/// twist is unknown (covariance −1, as REP-145 marks unknown data).
pub fn odometry_from_lidar_pose(pose: &LidarPose, header: Header, child_frame: &str, cov: &Covariances) -> Odometry {
    let p = ned_to_enu(pose.position.map(f64::from));
    let e = pose.euler.map(f64::from);
    let q = ned_frd_to_enu_flu(euler_to_quat(e[0], e[1], e[2]));
    Odometry {
        header,
        child_frame_id: child_frame.to_string(),
        pose: pose_with_covariance(p, q, cov),
        twist: TwistWithCovariance {
            twist: Twist::default(),
            covariance: unknown_covariance(36),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> Header {
        header(Time { sec: 1, nanosec: 2 }, "f")
    }

    #[test]
    fn lidar_pose_odometry_is_enu_flu() {
        let pose = LidarPose {
            copter_id: Some(1),
            axis_type: Some(0),
            position: [1.0, 2.0, -3.0],
            euler: [0.0, 0.0, 0.0],
        };
        let o = odometry_from_lidar_pose(&pose, h(), "base", &Covariances::default());
        assert_eq!(
            (o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z),
            (2.0, 1.0, 3.0)
        );
        // Nose north = ENU yaw +90°: q = (cos 45°, 0, 0, sin 45°).
        let q = &o.pose.pose.orientation;
        assert!((q.w.abs() - q.z.abs()).abs() < 1e-9 && q.x.abs() < 1e-9 && q.y.abs() < 1e-9 && q.w * q.z > 0.0);
        assert_eq!(o.twist.covariance[0], -1.0);
        assert_eq!(o.child_frame_id, "base");
    }

    #[test]
    fn point_cloud_layout_and_world_points() {
        let mut data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        ned_points_to_enu(&mut data);
        let v: Vec<f32> = data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(v, vec![2.0, 1.0, -3.0, 4.0]);
        let pc = point_cloud_without_data(data.len(), h());
        assert_eq!((pc.width, pc.height, pc.point_step, pc.row_step), (1, 1, 16, 16));
        assert_eq!(
            pc.fields
                .iter()
                .map(|f| (f.name.as_str(), f.offset))
                .collect::<Vec<_>>(),
            vec![("x", 0), ("y", 4), ("z", 8), ("seg", 12)]
        );
    }

    #[test]
    fn is_dense_only_without_nan_or_infinity_anywhere() {
        let cloud = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|f| f.to_le_bytes()).collect() };
        let mut points = vec![1.5f32; 4 * 3000];
        points[7] = f32::MAX;
        points[8] = -0.0;
        points[9] = f32::MIN_POSITIVE / 2.0;
        assert!(all_finite(&cloud(&points)));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for at in [0, 1023, 1024, 4 * 3000 - 1] {
                let mut p = points.clone();
                p[at] = bad;
                assert!(!all_finite(&cloud(&p)), "{bad} at {at}");
            }
        }
    }
}
