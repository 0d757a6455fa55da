//! Publishes a `rflysim_bridge/msg/CameraStatus` (with its nested
//! `CameraParams`) and a `sensor_msgs/PointCloud2` with known contents, so
//! that a subscriber in another process can check every field after a real
//! DDS round trip (`tests/test_roundtrip.py`).
//!
//! Parameters: `count` (messages of each type, 0 = until stopped), `rate_hz`.
//! A test fixture: built with the workspace, never installed.

use std::process::ExitCode;
use std::time::Duration;

use r2r::rflysim_bridge::msg::{CameraParams, CameraStatus};
use r2r::sensor_msgs::msg::{PointCloud2, PointField};
use r2r::std_msgs::msg::Header;
use r2r::QosProfile;
use ros_common::params::IntParam;

fn header(seq: u32) -> Header {
    Header {
        stamp: r2r::builtin_interfaces::msg::Time {
            sec: 1_700_000_000 + seq as i32,
            nanosec: 123_456_789,
        },
        frame_id: "rflysim_camera_optical".into(),
    }
}

fn camera_status(seq: u32) -> CameraStatus {
    CameraStatus {
        header: header(seq),
        id: 9,
        frame_rate: 29.97,
        capture_max_sec: 1.5,
        capture_min_sec: 0.25,
        capture_cur_sec: 0.75,
        height: 1080,
        width: 1920,
        fov: 9000,
        type_: 2,
        roll: -4500,
        pitch: i32::MIN,
        yaw: i32::MAX,
        optics_multiply: 3,
        others: vec![1, -1, 250, 0, -250],
        camera_params: CameraParams {
            fx: 960.5,
            fy: 961.25,
            cx: 960.0,
            cy: 540.0,
            k1: -0.125,
            k2: 0.0625,
            p1: 0.001,
            p2: -0.002,
            k3: 0.5,
            att_type_valid_mask: CameraParams::PLANE_TO_CAM_VALID as u8 | CameraParams::LEVEL_PLANE_TO_CAM_VALID as u8,
            p2c_roll_deg: 1.0,
            p2c_pitch_deg: -30.0,
            p2c_yaw_deg: 45.0,
            ned2c_roll_deg: 2.0,
            ned2c_pitch_deg: -31.0,
            ned2c_yaw_deg: 135.0,
            level2c_roll_deg: 0.0,
            level2c_pitch_deg: -29.5,
            level2c_yaw_deg: 44.5,
            p2c_front_m: 0.2,
            p2c_right_m: -0.05,
            p2c_down_m: 0.1,
        },
    }
}

/// Three points (x, y, z, seg as little-endian f32, 16-byte step): point i is
/// (i + 0.5, -(i + 0.25), 10 i, i).
fn point_cloud(seq: u32) -> PointCloud2 {
    const POINTS: u32 = 3;
    let mut data = Vec::with_capacity(16 * POINTS as usize);
    for i in 0..POINTS {
        let i = i as f32;
        for v in [i + 0.5, -(i + 0.25), 10.0 * i, i] {
            data.extend_from_slice(&v.to_le_bytes());
        }
    }
    let field = |name: &str, offset: u32| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32 as u8,
        count: 1,
    };
    PointCloud2 {
        header: header(seq),
        height: 1,
        width: POINTS,
        fields: vec![field("x", 0), field("y", 4), field("z", 8), field("seg", 12)],
        is_bigendian: false,
        point_step: 16,
        row_step: 16 * POINTS,
        data,
        is_dense: true,
    }
}

const COUNT: IntParam = IntParam::new(
    "count",
    0,
    0..=u32::MAX as i64,
    "messages to publish (0: until stopped)",
);
const RATE_HZ: IntParam = IntParam::new("rate_hz", 10, 1..=1000, "messages a second");

fn main() -> ExitCode {
    ros_common::lifecycle::exit_code("roundtrip_publisher", run())
}

fn run() -> Result<(), String> {
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    let e = |e: r2r::Error| e.to_string();
    let ctx = r2r::Context::create().map_err(|e| format!("ROS 2 context: {e}"))?;
    let mut node = r2r::Node::create(ctx, "roundtrip_publisher", "").map_err(e)?;
    let count: u64 = COUNT.read(&node)?;
    let rate_hz: u64 = RATE_HZ.read(&node)?;

    let qos = QosProfile::default().keep_last(10).reliable();
    let status_pub = node
        .create_publisher::<CameraStatus>("camera/status", qos.clone())
        .map_err(e)?;
    let cloud_pub = node.create_publisher::<PointCloud2>("cloud", qos).map_err(e)?;
    r2r::log_info!(
        node.logger(),
        "publishing {} CameraStatus + PointCloud2 pairs at {rate_hz} Hz",
        if count == 0 {
            "endless".to_string()
        } else {
            count.to_string()
        }
    );

    let period = Duration::from_micros(1_000_000 / rate_hz);
    let mut seq: u32 = 0;
    while (count == 0 || u64::from(seq) < count) && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        status_pub.publish(&camera_status(seq)).map_err(e)?;
        cloud_pub.publish(&point_cloud(seq)).map_err(e)?;
        seq += 1;
        node.spin_once(period);
    }
    Ok(())
}
