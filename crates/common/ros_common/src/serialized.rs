//! Typed messages published in their serialized form, written by
//! [`crate::cdr::Writer`] into a buffer the publisher reuses.
//!
//! Why: `Publisher::publish` turns each message into a freshly allocated C
//! message (every string and sequence allocated again), has the middleware
//! serialize that, and frees it: per message, about as much CPU as the
//! bridge's own conversion and as the middleware's send. Written straight
//! into the serialized form, a message costs one pass over its fields and
//! the middleware's copy of the bytes (`rcl_publish_serialized_message`).
//! The form is the one `rmw_serialize` writes (the tests compare them).

use std::cell::Cell;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

use r2r::geometry_msgs::msg::{
    Point, PointStamped, Pose, PoseStamped, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist,
    TwistStamped, TwistWithCovariance, Vector3,
};
use r2r::nav_msgs::msg::Odometry;
use r2r::rosgraph_msgs::msg::Clock;
use r2r::sensor_msgs::msg::{CameraInfo, Imu};
use r2r::std_msgs::msg::{Bool, Header};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::{Node, PublisherUntyped, QosProfile};

use crate::cdr::{TooLong, Writer};
use crate::demand::subscribed_untyped;

/// A message this crate writes in its serialized form.
pub trait CdrMessage {
    /// The ROS type name, `package/msg/Name`.
    const TYPE: &'static str;
    /// Appends the message's fields in order.
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong>;
}

/// Replaces `out` with the serialized `m`.
pub fn serialize<T: CdrMessage>(m: &T, out: &mut Vec<u8>) -> Result<(), TooLong> {
    let mut w = Writer::start(out, 256);
    m.write(&mut w)
}

/// A publisher of `T` that serializes each message into a buffer it keeps.
pub struct SerializedPublisher<T> {
    publisher: PublisherUntyped,
    buf: Vec<u8>,
    /// The middleware's last answer to "anybody subscribed?", and when.
    asked: Cell<Option<(Instant, bool)>>,
    message: PhantomData<fn(&T)>,
}

/// How long the answer to "anybody subscribed?" holds: asked of the
/// middleware for every message at 1000 Hz it was a visible share of an
/// IMU sample's cost, and a subscriber's discovery takes longer anyway.
const SUBSCRIBED_HOLDS: Duration = Duration::from_millis(50);

impl<T> std::fmt::Debug for SerializedPublisher<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerializedPublisher").finish_non_exhaustive()
    }
}

impl<T: CdrMessage> SerializedPublisher<T> {
    pub fn new(node: &mut Node, topic: &str, qos: QosProfile) -> r2r::Result<Self> {
        Ok(Self {
            publisher: node.create_publisher_untyped(topic, T::TYPE, qos)?,
            buf: Vec::new(),
            asked: Cell::new(None),
            message: PhantomData,
        })
    }

    /// Publishes `m` (a field it cannot carry fails the publish).
    pub fn publish(&mut self, m: &T) -> r2r::Result<()> {
        serialize(m, &mut self.buf).map_err(|_| r2r::Error::RCL_RET_INVALID_ARGUMENT)?;
        self.publisher.publish_raw(&self.buf)
    }

    /// Whether a message published now would reach anybody (see
    /// [`crate::demand`]), as the middleware said at most
    /// [`SUBSCRIBED_HOLDS`] ago.
    pub fn subscribed(&self) -> bool {
        let now = Instant::now();
        if let Some((at, answer)) = self.asked.get() {
            if now.duration_since(at) < SUBSCRIBED_HOLDS {
                return answer;
            }
        }
        let answer = subscribed_untyped(&self.publisher);
        self.asked.set(Some((now, answer)));
        answer
    }

    /// Publishes the message `build` makes, if somebody subscribes.
    pub fn publish_if_subscribed(&mut self, build: impl FnOnce() -> T) -> r2r::Result<()> {
        if self.subscribed() {
            self.publish(&build())
        } else {
            Ok(())
        }
    }
}

fn header(w: &mut Writer<'_>, h: &Header) -> Result<(), TooLong> {
    w.header(&h.stamp, &h.frame_id)
}

fn xyz(w: &mut Writer<'_>, x: f64, y: f64, z: f64) {
    w.f64(x);
    w.f64(y);
    w.f64(z);
}

fn point(w: &mut Writer<'_>, p: &Point) {
    xyz(w, p.x, p.y, p.z);
}

fn vector3(w: &mut Writer<'_>, v: &Vector3) {
    xyz(w, v.x, v.y, v.z);
}

fn quaternion(w: &mut Writer<'_>, q: &Quaternion) {
    xyz(w, q.x, q.y, q.z);
    w.f64(q.w);
}

fn pose(w: &mut Writer<'_>, p: &Pose) {
    point(w, &p.position);
    quaternion(w, &p.orientation);
}

fn twist(w: &mut Writer<'_>, t: &Twist) {
    vector3(w, &t.linear);
    vector3(w, &t.angular);
}

fn pose_with_covariance(w: &mut Writer<'_>, p: &PoseWithCovariance) -> Result<(), TooLong> {
    pose(w, &p.pose);
    w.f64_array::<36>(&p.covariance)
}

fn twist_with_covariance(w: &mut Writer<'_>, t: &TwistWithCovariance) -> Result<(), TooLong> {
    twist(w, &t.twist);
    w.f64_array::<36>(&t.covariance)
}

fn transform(w: &mut Writer<'_>, t: &Transform) {
    vector3(w, &t.translation);
    quaternion(w, &t.rotation);
}

fn transform_stamped(w: &mut Writer<'_>, t: &TransformStamped) -> Result<(), TooLong> {
    header(w, &t.header)?;
    w.string(&t.child_frame_id)?;
    transform(w, &t.transform);
    Ok(())
}

impl CdrMessage for PoseStamped {
    const TYPE: &'static str = "geometry_msgs/msg/PoseStamped";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        header(w, &self.header)?;
        pose(w, &self.pose);
        Ok(())
    }
}

impl CdrMessage for PointStamped {
    const TYPE: &'static str = "geometry_msgs/msg/PointStamped";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        header(w, &self.header)?;
        point(w, &self.point);
        Ok(())
    }
}

impl CdrMessage for TwistStamped {
    const TYPE: &'static str = "geometry_msgs/msg/TwistStamped";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        header(w, &self.header)?;
        twist(w, &self.twist);
        Ok(())
    }
}

impl CdrMessage for Odometry {
    const TYPE: &'static str = "nav_msgs/msg/Odometry";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        header(w, &self.header)?;
        w.string(&self.child_frame_id)?;
        pose_with_covariance(w, &self.pose)?;
        twist_with_covariance(w, &self.twist)
    }
}

impl CdrMessage for TFMessage {
    const TYPE: &'static str = "tf2_msgs/msg/TFMessage";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        w.len(self.transforms.len())?;
        self.transforms.iter().try_for_each(|t| transform_stamped(w, t))
    }
}

impl CdrMessage for Imu {
    const TYPE: &'static str = "sensor_msgs/msg/Imu";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        header(w, &self.header)?;
        quaternion(w, &self.orientation);
        w.f64_array::<9>(&self.orientation_covariance)?;
        vector3(w, &self.angular_velocity);
        w.f64_array::<9>(&self.angular_velocity_covariance)?;
        vector3(w, &self.linear_acceleration);
        w.f64_array::<9>(&self.linear_acceleration_covariance)
    }
}

impl CdrMessage for CameraInfo {
    const TYPE: &'static str = "sensor_msgs/msg/CameraInfo";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        header(w, &self.header)?;
        w.u32(self.height);
        w.u32(self.width);
        w.string(&self.distortion_model)?;
        w.f64_seq(&self.d)?;
        w.f64_array::<9>(&self.k)?;
        w.f64_array::<9>(&self.r)?;
        w.f64_array::<12>(&self.p)?;
        w.u32(self.binning_x);
        w.u32(self.binning_y);
        let roi = &self.roi;
        w.u32(roi.x_offset);
        w.u32(roi.y_offset);
        w.u32(roi.height);
        w.u32(roi.width);
        w.bool(roi.do_rectify);
        Ok(())
    }
}

impl CdrMessage for Bool {
    const TYPE: &'static str = "std_msgs/msg/Bool";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        w.bool(self.data);
        Ok(())
    }
}

impl CdrMessage for Clock {
    const TYPE: &'static str = "rosgraph_msgs/msg/Clock";
    fn write(&self, w: &mut Writer<'_>) -> Result<(), TooLong> {
        w.time(&self.clock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::builtin_interfaces::msg::Time;
    use r2r::sensor_msgs::msg::RegionOfInterest;
    use r2r::WrappedTypesupport;

    /// `ours` is what `rmw_serialize` makes of `expected`, but for padding,
    /// which CDR leaves unspecified and this writer zeroes: same length,
    /// reads back as `expected`, every byte that differs is zero here.
    pub(crate) fn assert_same_as_rmw<T>(expected: &T, what: &str)
    where
        T: CdrMessage + WrappedTypesupport + PartialEq + std::fmt::Debug,
    {
        let mut ours = vec![0xEE; 5];
        serialize(expected, &mut ours).expect("serializable");
        let mut reference = expected.to_serialized_bytes().expect("rmw_serialize");
        // rmw_fastrtps gives a fixed-size type (`Bool`) its size rounded up to
        // 4 bytes: trailing padding, left unwritten, which no reader looks at.
        if reference.len() > ours.len() && reference.len() == ours.len().next_multiple_of(4) {
            reference.truncate(ours.len());
        }
        assert_eq!(ours.len(), reference.len(), "{what}: length");
        for (at, (a, b)) in ours.iter().zip(&reference).enumerate() {
            assert!(a == b || *a == 0, "{what}: byte {at} is {a}, rmw_serialize wrote {b}");
        }
        assert_eq!(
            &T::from_serialized_bytes(&ours).expect("rmw_deserialize"),
            expected,
            "{what}"
        );
    }

    /// Frame ids of every length modulo 8: every padding case after a string.
    fn time(sec: i32, nanosec: u32) -> Time {
        Time { sec, nanosec }
    }

    const NAMES: [&str; 9] = [
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "abcde",
        "abcdef",
        "abcdefg",
        "auv12/base_link",
    ];

    fn header(i: usize) -> Header {
        Header {
            stamp: time(-5 + i as i32, 999_999_000 + i as u32),
            frame_id: NAMES[i % NAMES.len()].into(),
        }
    }

    fn f(i: usize, k: usize) -> f64 {
        (i * 31 + k) as f64 * 0.125 - 3.0
    }

    fn pose_of(i: usize) -> Pose {
        let mut p = Pose::default();
        (p.position.x, p.position.y, p.position.z) = (f(i, 1), f(i, 2), f(i, 3));
        (p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w) = (f(i, 4), f(i, 5), f(i, 6), f(i, 7));
        p
    }

    fn twist_of(i: usize) -> Twist {
        let mut t = Twist::default();
        (t.linear.x, t.linear.y, t.linear.z) = (f(i, 8), f(i, 9), f(i, 10));
        (t.angular.x, t.angular.y, t.angular.z) = (f(i, 11), f(i, 12), f(i, 13));
        t
    }

    fn array(n: usize, i: usize) -> Vec<f64> {
        (0..n).map(|k| f(i, k + 20)).collect()
    }

    #[test]
    fn geometry_and_navigation_messages_match_rmw_serialize() {
        for i in 0..NAMES.len() {
            let what = format!("frame id {:?}", NAMES[i]);
            assert_same_as_rmw(
                &PoseStamped {
                    header: header(i),
                    pose: pose_of(i),
                },
                &what,
            );
            assert_same_as_rmw(
                &PointStamped {
                    header: header(i),
                    point: pose_of(i).position,
                },
                &what,
            );
            assert_same_as_rmw(
                &TwistStamped {
                    header: header(i),
                    twist: twist_of(i),
                },
                &what,
            );
            assert_same_as_rmw(
                &Odometry {
                    header: header(i),
                    child_frame_id: NAMES[(i + 3) % NAMES.len()].into(),
                    pose: PoseWithCovariance {
                        pose: pose_of(i),
                        covariance: array(36, i),
                    },
                    twist: TwistWithCovariance {
                        twist: twist_of(i),
                        covariance: array(36, i + 1),
                    },
                },
                &what,
            );
            let transforms = (0..i % 4)
                .map(|k| {
                    let p = pose_of(i + k);
                    TransformStamped {
                        header: header(i + k),
                        child_frame_id: NAMES[(i + k + 5) % NAMES.len()].into(),
                        transform: Transform {
                            translation: Vector3 {
                                x: p.position.x,
                                y: p.position.y,
                                z: p.position.z,
                            },
                            rotation: p.orientation,
                        },
                    }
                })
                .collect();
            assert_same_as_rmw(&TFMessage { transforms }, &what);
        }
    }

    #[test]
    fn sensor_and_plain_messages_match_rmw_serialize() {
        for i in 0..NAMES.len() {
            let what = format!("frame id {:?}", NAMES[i]);
            let p = pose_of(i);
            let t = twist_of(i);
            assert_same_as_rmw(
                &Imu {
                    header: header(i),
                    orientation: p.orientation,
                    orientation_covariance: array(9, i),
                    angular_velocity: t.angular,
                    angular_velocity_covariance: array(9, i + 1),
                    linear_acceleration: t.linear,
                    linear_acceleration_covariance: array(9, i + 2),
                },
                &what,
            );
            for d in [0, 1, 5, 8] {
                assert_same_as_rmw(
                    &CameraInfo {
                        header: header(i),
                        height: 480 + i as u32,
                        width: 640,
                        distortion_model: NAMES[(i + d) % NAMES.len()].into(),
                        d: array(d, i),
                        k: array(9, i + 1),
                        r: array(9, i + 2),
                        p: array(12, i + 3),
                        binning_x: 1,
                        binning_y: 2,
                        roi: RegionOfInterest {
                            x_offset: 3,
                            y_offset: 4,
                            height: 5,
                            width: 6,
                            do_rectify: i % 2 == 0,
                        },
                    },
                    &format!("{what}, {d} distortion coefficients"),
                );
            }
            assert_same_as_rmw(&Bool { data: i % 2 == 1 }, &what);
            assert_same_as_rmw(&Clock { clock: header(i).stamp }, &what);
        }
    }

    #[test]
    fn a_fixed_array_of_the_wrong_length_is_refused() {
        let mut odom = Odometry::default();
        odom.pose.covariance.pop();
        assert_eq!(serialize(&odom, &mut Vec::new()), Err(35));
    }
}
