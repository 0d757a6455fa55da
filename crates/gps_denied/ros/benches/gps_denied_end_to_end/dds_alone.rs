//! "DDS alone": no simulator and no parsing, this executable publishing
//! pre-built messages of every telemetry topic at the simulator's rate (the
//! emulator's own rendered JPEG every fifth frame), with the bridge's QoS,
//! stamped and logged as the emulator logs its frames. The floor no
//! republisher can beat.

use std::path::Path;

use gps_denied_proto::camera::CameraModel;
use gps_denied_proto::wire::{
    DEFAULT_FOV_DEG, DEFAULT_IMAGE_HEIGHT, DEFAULT_IMAGE_WIDTH, IMAGE_EVERY_NTH_FRAME, JPEG_QUALITY,
};
use gps_denied_proto::CameraGeometry;
use gps_denied_sim::render::Renderer;
use gps_denied_sim::world::{Pattern, World};
use r2r::geometry_msgs::msg::{PointStamped, TwistStamped};
use r2r::rflysim_bridge::msg::LandingPad;
use r2r::sensor_msgs::msg::{CameraInfo, CompressedImage, Imu, Range};
use r2r::std_msgs::msg::{Bool, Header};

pub fn run(namespace: &str, log: &Path, hz: f64) {
    let ctx = r2r::Context::create().unwrap();
    let mut node = r2r::Node::create(ctx, "gps_bench_dds_alone", namespace).unwrap();
    let qos = ros_common::qos::sensor_publisher(ros_common::qos::DEFAULT_SENSOR_DEPTH);
    macro_rules! publisher {
        ($t:ty, $topic:expr) => {
            node.create_publisher::<$t>(&format!("drone/{}", $topic), qos.clone())
                .unwrap()
        };
    }
    let imu = publisher!(Imu, "imu");
    let altitude = publisher!(Range, "altitude");
    let velocity = publisher!(TwistStamped, "velocity");
    let pad = publisher!(LandingPad, "landing_pad");
    let point = publisher!(PointStamped, "landing_pad/point");
    let landed = publisher!(Bool, "landed");
    let jpeg_pub = publisher!(CompressedImage, "camera/image_raw/compressed");
    let info_pub = publisher!(CameraInfo, "camera/camera_info");
    let geometry = CameraGeometry {
        width: DEFAULT_IMAGE_WIDTH,
        height: DEFAULT_IMAGE_HEIGHT,
        fov_deg: DEFAULT_FOV_DEG,
    };
    let jpeg = Renderer::new(CameraModel::new(&geometry), JPEG_QUALITY)
        .jpeg(&World::new(Pattern::Circular))
        .unwrap();
    let header = |frame: &str| Header {
        frame_id: frame.into(),
        ..Default::default()
    };
    let mut m_imu = Imu {
        header: header("gps_denied/drone/base_link"),
        ..Default::default()
    };
    let mut m_altitude = Range {
        header: header("gps_denied/drone/altimeter"),
        max_range: 100.0,
        ..Default::default()
    };
    let mut m_velocity = TwistStamped {
        header: header("gps_denied/drone/base_link"),
        ..Default::default()
    };
    let mut m_pad = LandingPad {
        header: header("gps_denied/drone/base_link"),
        detected: true,
        ..Default::default()
    };
    let mut m_point = PointStamped {
        header: header("gps_denied/drone/base_link"),
        ..Default::default()
    };
    let mut m_jpeg = CompressedImage {
        header: header("gps_denied/drone/camera_optical"),
        format: "jpeg".into(),
        data: jpeg,
    };
    let mut m_info = CameraInfo {
        header: header("gps_denied/drone/camera_optical"),
        width: geometry.width,
        height: geometry.height,
        ..Default::default()
    };
    let mut frame = 0u64;
    let mut streams = [bench_support::PacedStream {
        name: "frame",
        hz,
        publish: Box::new(|t| {
            let (sec, nanosec) = bench_support::ros_time(t);
            let stamp = r2r::builtin_interfaces::msg::Time { sec, nanosec };
            for h in [
                &mut m_imu.header,
                &mut m_altitude.header,
                &mut m_velocity.header,
                &mut m_pad.header,
                &mut m_point.header,
                &mut m_jpeg.header,
                &mut m_info.header,
            ] {
                h.stamp = stamp.clone();
            }
            let mut ok = imu.publish(&m_imu).is_ok();
            ok &= altitude.publish(&m_altitude).is_ok();
            ok &= velocity.publish(&m_velocity).is_ok();
            ok &= pad.publish(&m_pad).is_ok();
            ok &= point.publish(&m_point).is_ok();
            ok &= landed.publish(&Bool { data: false }).is_ok();
            // The stamps run 1 + n / rate: frame n carries the image when n is a multiple.
            if frame % IMAGE_EVERY_NTH_FRAME == 0 {
                ok &= jpeg_pub.publish(&m_jpeg).is_ok();
                ok &= info_pub.publish(&m_info).is_ok();
            }
            frame += 1;
            ok
        }),
    }];
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    let sent = bench_support::publish_paced(&mut streams, || stop.load(std::sync::atomic::Ordering::Relaxed));
    // The emulator's send log has no stream name: "timestamp wall" per frame.
    let lines: Vec<&str> = sent
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest))
        .collect();
    std::fs::write(log, lines.join("\n") + "\n").unwrap();
}
