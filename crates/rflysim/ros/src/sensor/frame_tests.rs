//! The sensor core without a node: each kind of frame, good and bad.

use super::*;
use rflysim_proto::config::{parse_config, AngleUnit};
use rflysim_proto::lidar::encode::protocol_float;

fn sensor(type_id: u16, transport: u16, width: u16, height: u16) -> SensorConfig {
    let json = format!(
        r#"{{"VisionSensors":[{{"SeqID":3,"TypeID":{type_id},"TargetCopter":2,"DataWidth":{width},"DataHeight":{height},
            "SendProtocol":[{transport},127,0,0,1,9000,0,0],"CameraFOV":80,"otherParams":[50,0,0,0,0,0,0,0]}}]}}"#
    );
    parse_config(&json, AngleUnit::Radians).unwrap().remove(0)
}

fn mapper(cfg: SensorConfig, tf_from_lidar: bool) -> FrameMapper {
    FrameMapper::new(cfg, 64 << 20, Covariances::default(), tf_from_lidar).unwrap()
}

fn stamp() -> Time {
    Time { sec: 7, nanosec: 8 }
}

fn floats(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn a_raw_frame_is_checked_against_the_configured_size() {
    let m = mapper(sensor(1, 2, 4, 2), false);
    assert!(!m.is_heavy());
    match m.messages(stamp(), vec![9; 4 * 2 * 3], 0).unwrap() {
        Messages::Image { image, fov_deg, header } => {
            assert_eq!((image.width, image.height, image.encoding), (4, 2, Encoding::Bgr8));
            assert_eq!(fov_deg, 80.0);
            assert_eq!(
                (header.frame_id.as_str(), header.stamp),
                ("rflysim/uav2/sensor3_optical", stamp())
            );
        }
        other => panic!("{other:?}"),
    }
    let short = m.messages(stamp(), vec![9; 4 * 2 * 3 - 1], 0).unwrap_err();
    assert_eq!(short.reason(), "bad_length");
    // Nothing is kept between frames: the next good one maps whole.
    assert!(matches!(
        m.messages(stamp(), vec![1; 24], 0),
        Ok(Messages::Image { .. })
    ));
}

/// With the headroom it asks for, a raw frame becomes its serialized
/// `Image` in place: what `rmw_deserialize` reads back is the image the
/// frame makes without headroom; a frame of the wrong size is refused the
/// same way, and the next good one still maps.
#[test]
fn a_raw_frame_with_headroom_is_serialized_in_place() {
    use r2r::sensor_msgs::msg::Image as RosImage;
    use r2r::WrappedTypesupport;
    let m = mapper(sensor(1, 2, 4, 2), false);
    let headroom = m.headroom();
    assert!(headroom > 0);
    assert_eq!(
        mapper(sensor(1, 0, 4, 2), false).headroom(),
        headroom,
        "shared memory: same image"
    );
    assert_eq!(
        mapper(sensor(3, 1, 4, 2), false).headroom(),
        0,
        "JPEG: decoded, no headroom"
    );
    let pixels: Vec<u8> = (0..24).collect();
    let framed = |p: &[u8]| [vec![0xEE; headroom], p.to_vec()].concat();
    let Messages::SerializedImage {
        message,
        width,
        height,
        fov_deg,
        header,
    } = m.messages(stamp(), framed(&pixels), headroom).unwrap()
    else {
        panic!("not serialized in place");
    };
    let Messages::Image {
        image, header: plain, ..
    } = m.messages(stamp(), pixels.clone(), 0).unwrap()
    else {
        panic!("no image without headroom");
    };
    let read = RosImage::from_serialized_bytes(&message).expect("rmw_deserialize");
    assert_eq!((width, height, fov_deg), (4, 2, 80.0));
    assert_eq!((read.header.clone(), header), (plain.clone(), plain));
    assert_eq!(
        (read.width, read.height, read.step),
        (image.width, image.height, image.step)
    );
    assert_eq!((read.encoding.as_str(), read.is_bigendian), ("bgr8", 0));
    assert_eq!(read.data, pixels);
    let short = m.messages(stamp(), framed(&pixels[1..]), headroom).unwrap_err();
    assert_eq!(short.reason(), "bad_length");
    assert!(matches!(
        m.messages(stamp(), framed(&pixels), headroom),
        Ok(Messages::SerializedImage { .. })
    ));
}

/// A depth frame as RflySim3D sends it (millimetres, 65535 where nothing
/// was measured) becomes 16UC1 depth (0 there) on every transport.
#[test]
fn a_depth_frame_becomes_16uc1_with_zero_for_no_return() {
    use r2r::sensor_msgs::msg::Image as RosImage;
    use r2r::WrappedTypesupport;
    use rflysim_proto::image::DEPTH_NO_RETURN;
    let sent: Vec<u8> = [5000u16, DEPTH_NO_RETURN, 65_534, 1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let published: Vec<u8> = [5000u16, 0, 65_534, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    let raw = mapper(sensor(2, 2, 2, 2), false);
    let Messages::Image { image, .. } = raw.messages(stamp(), sent.clone(), 0).unwrap() else {
        panic!("no image");
    };
    assert_eq!((image.encoding.ros_name(), &image.data[..]), ("16UC1", &published[..]));
    let headroom = raw.headroom();
    let framed = [vec![0; headroom], sent.clone()].concat();
    let Messages::SerializedImage { message, .. } = raw.messages(stamp(), framed, headroom).unwrap() else {
        panic!("not serialized in place");
    };
    let read = RosImage::from_serialized_bytes(&message).expect("rmw_deserialize");
    assert_eq!(
        (read.encoding.as_str(), read.step, read.data),
        ("16UC1", 4, published.clone())
    );
    let png = image_codec::encode::png(&sent, 2, 2, Encoding::DepthMm16).unwrap();
    let Messages::Image { image, .. } = mapper(sensor(2, 3, 2, 2), false).messages(stamp(), png, 0).unwrap() else {
        panic!("no image");
    };
    assert_eq!(&image.data[..], &published[..]);
}

#[test]
fn a_jpeg_frame_goes_on_undecoded() {
    let m = mapper(sensor(3, 1, 4, 2), false);
    assert!(m.is_heavy());
    assert_eq!(m.max_jpeg_pixels(Encoding::Mono8), 4 * 4 * 2);
    match m.messages(stamp(), b"not even a JPEG".to_vec(), 0).unwrap() {
        Messages::Jpeg { jpeg, encoding, .. } => {
            assert_eq!((jpeg.as_slice(), encoding), (&b"not even a JPEG"[..], Encoding::Mono8));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_png_frame_decodes_within_four_times_the_configured_pixels() {
    let m = mapper(sensor(3, 3, 4, 2), false);
    let fits = image_codec::encode::png(&[7; 8 * 4], 8, 4, Encoding::Mono8).unwrap();
    match m.messages(stamp(), fits, 0).unwrap() {
        Messages::Image { image, .. } => assert_eq!((image.width, image.height), (8, 4)),
        other => panic!("{other:?}"),
    }
    let too_big = image_codec::encode::png(&[7; 16 * 16], 16, 16, Encoding::Mono8).unwrap();
    assert_eq!(m.messages(stamp(), too_big, 0).unwrap_err().reason(), "bad_image");
    assert_eq!(
        m.messages(stamp(), vec![0x89, b'P'], 0).unwrap_err().reason(),
        "bad_image"
    );
}

#[test]
fn a_vehicle_lidar_frame_is_in_the_sensor_frame_with_local_odometry() {
    let cfg = sensor(20, 2, 4, 1);
    let points = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]];
    let frame = protocol_float(2, 0, [1.0, 2.0, -3.0], [0.0; 3], &points);
    let Messages::Cloud(c) = mapper(cfg.clone(), true).messages(stamp(), frame.clone(), 0).unwrap() else {
        panic!("not a cloud")
    };
    assert_eq!(
        (c.cloud.width, c.cloud.header.frame_id.as_str()),
        (2, "rflysim/uav2/sensor3")
    );
    assert_eq!(floats(c.points.as_slice()), points.concat());
    assert!(!c.global);
    assert_eq!(c.odometry.header.frame_id, "rflysim/uav2/odom");
    assert_eq!(c.odometry.child_frame_id, "rflysim/uav2/base_link");
    assert_eq!(
        (c.odometry.header.stamp.clone(), c.cloud.header.stamp),
        (stamp(), stamp())
    );
    let p = &c.odometry.pose.pose.position;
    assert_eq!((p.x, p.y, p.z), (2.0, 1.0, 3.0));
    let tf = c.tf.expect("odom → base_link asked for");
    assert_eq!(tf.transforms[0].child_frame_id, "rflysim/uav2/base_link");
    let Messages::Cloud(c) = mapper(cfg, false).messages(stamp(), frame, 0).unwrap() else {
        panic!("not a cloud")
    };
    assert!(c.tf.is_none(), "not asked for");
}

#[test]
fn a_world_lidar_frame_is_turned_to_enu_in_the_world_frame() {
    let frame = protocol_float(2, 1, [0.0; 3], [0.0; 3], &[[1.0, 2.0, 3.0, 4.0]]);
    let Messages::Cloud(c) = mapper(sensor(21, 2, 4, 1), true).messages(stamp(), frame, 0).unwrap() else {
        panic!("not a cloud")
    };
    assert_eq!(c.cloud.header.frame_id, "rflysim/map");
    assert_eq!(floats(c.points.as_slice()), vec![2.0, 1.0, -3.0, 4.0]);
    assert!(c.global);
    assert_eq!(c.odometry.header.frame_id, "rflysim/map");
    assert!(c.tf.is_none(), "a world pose is not odom → base_link");
}

/// With the headroom and tailroom it asks for, a UDP cloud of the protocol's
/// layout is serialized in the frame it came in: what `rmw_deserialize`
/// reads back is the cloud the frame makes without headroom, `is_dense`
/// included, for a vehicle LiDAR, a world LiDAR (points turned to ENU in
/// place) and a depth cloud (padding zeroed in place). An SDK int16 frame
/// with headroom is decoded as without; a frame that lies about its count
/// is refused either way.
#[test]
fn a_protocol_cloud_with_headroom_is_serialized_in_place() {
    use r2r::sensor_msgs::msg::PointCloud2;
    use r2r::WrappedTypesupport;
    use rflysim_proto::lidar::encode::sdk_int16;
    let points = [[1.0, 2.0, 3.0, 4.0], [5.0, -6.0, 7.0, 8.0], [0.5, 0.25, -1.0, 9.0]];
    let mut not_finite = points;
    not_finite[1][2] = f32::NAN;
    for type_id in [20, 21, 7] {
        let m = mapper(sensor(type_id, 1, 4, 1), false);
        let (headroom, tailroom) = (m.headroom(), m.tailroom());
        assert!(headroom > 0 && tailroom == 1, "TypeID {type_id}");
        for (pts, dense) in [(&points, true), (&not_finite, false)] {
            let frame = protocol_float(2, 0, [1.0, 2.0, -3.0], [0.0; 3], pts);
            let mut framed = Vec::with_capacity(headroom + frame.len() + tailroom);
            framed.extend_from_slice(&vec![0xEE; headroom]);
            framed.extend_from_slice(&frame);
            let frame_at = framed.as_ptr();
            let Ok(Messages::Cloud(mut in_place)) = m.messages(stamp(), framed, headroom) else {
                panic!("TypeID {type_id}: not a cloud")
            };
            let Ok(Messages::Cloud(mut apart)) = m.messages(stamp(), frame, 0) else {
                panic!("TypeID {type_id}: not a cloud")
            };
            let (mut spare_a, mut spare_b) = (Vec::new(), Vec::new());
            let expected = apart.take_serialized(&mut spare_a).unwrap().to_vec();
            let ours = in_place.take_serialized(&mut spare_b).unwrap();
            assert_eq!(ours.as_ptr(), frame_at, "TypeID {type_id}: serialized where it arrived");
            assert_eq!(&ours[..], &expected[..], "TypeID {type_id}");
            let cloud = PointCloud2::from_serialized_bytes(&ours).expect("rmw_deserialize");
            drop(ours);
            assert!(spare_b.is_empty(), "TypeID {type_id}: nothing copied");
            assert_eq!((cloud.width, cloud.is_dense), (3, dense), "TypeID {type_id}");
            let mut want = floats(&frame_points(pts));
            if type_id == 21 {
                want.chunks_exact_mut(4).for_each(|p| {
                    p.swap(0, 1);
                    p[2] = -p[2];
                });
            }
            if type_id == 7 {
                want.chunks_exact_mut(4).for_each(|p| p[3] = 0.0);
            }
            let got = floats(&cloud.data);
            assert!(
                got.iter().zip(&want).all(|(a, b)| a == b || (a.is_nan() && b.is_nan())),
                "TypeID {type_id}: {got:?}"
            );
            assert_eq!(in_place.odometry, apart.odometry, "TypeID {type_id}");
        }
        let sdk = sdk_int16([0.0; 3], [0.0; 3], &points, 50.0);
        let framed = [vec![0xEE; headroom], sdk.clone()].concat();
        assert_eq!(
            format!("{:?}", m.messages(stamp(), framed, headroom)),
            format!("{:?}", m.messages(stamp(), sdk, 0)),
            "TypeID {type_id}: SDK layout"
        );
        let mut lying = [vec![0xEE; headroom], protocol_float(2, 0, [0.0; 3], [0.0; 3], &points)].concat();
        lying.truncate(lying.len() - 1);
        assert!(m.messages(stamp(), lying, headroom).is_err(), "TypeID {type_id}");
    }
    assert_eq!(
        mapper(sensor(20, 0, 4, 1), false).headroom(),
        0,
        "shared memory: decoded"
    );
}

fn frame_points(points: &[[f32; 4]]) -> Vec<u8> {
    points.iter().flatten().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn a_lidar_frame_that_lies_about_its_count_is_refused() {
    let m = mapper(sensor(20, 2, 4, 1), false);
    let mut frame = protocol_float(2, 0, [0.0; 3], [0.0; 3], &[[1.0, 2.0, 3.0, 4.0]]);
    frame.truncate(frame.len() - 1);
    assert!(m.messages(stamp(), frame, 0).is_err());
    assert_eq!(m.max_frame_bytes(), 36 + 16 * 4);
}

#[test]
fn a_laser_range_frame_is_its_distance() {
    let m = mapper(sensor(5, 2, 1, 1), false);
    let reading = LaserDistance {
        distance: 12.5,
        copter_id: 2,
        ray_start: [0.0; 3],
        ang_euler: [0.0; 3],
        impact_point: [0.0; 3],
        box_origin: [0.0; 3],
    };
    match m.messages(stamp(), reading.encode(), 0).unwrap() {
        Messages::Distance(d) => assert_eq!(d.data, 12.5),
        other => panic!("{other:?}"),
    }
    assert_eq!(m.messages(stamp(), vec![0; 10], 0).unwrap_err().reason(), "bad_length");
}

#[test]
fn kinds_without_a_ros_message_are_refused_by_name() {
    let e = FrameMapper::new(sensor(30, 2, 1, 1), 1 << 20, Covariances::default(), false).unwrap_err();
    assert!(e.contains("sensor 3: detection boxes (TypeID 30)"), "{e}");
    // The config reader refuses these; a mapper made otherwise refuses them too.
    let mut unknown = sensor(1, 2, 1, 1);
    unknown.type_id = 99;
    let e = FrameMapper::new(unknown, 1 << 20, Covariances::default(), false).unwrap_err();
    assert!(e.contains("unknown TypeID 99"), "{e}");
    let mut unknown = sensor(1, 2, 1, 1);
    unknown.send_protocol[0] = 7;
    let e = FrameMapper::new(unknown, 1 << 20, Covariances::default(), false).unwrap_err();
    assert!(e.contains("unknown transport"), "{e}");
}

#[test]
fn the_frame_bound_is_the_sensors_never_above_the_parameter() {
    let cfg = sensor(1, 2, 640, 480);
    assert_eq!(mapper(cfg.clone(), false).max_frame_bytes(), 640 * 480 * 3);
    let small = FrameMapper::new(cfg, 1000, Covariances::default(), false).unwrap();
    assert_eq!(small.max_frame_bytes(), 1000);
    assert_eq!(small.max_jpeg_pixels(Encoding::Bgr8), 333);
}

/// A bounded fuzz run of the shared-memory chain as the node runs it
/// (region → `ShmReader` → `FrameMapper`), for every kind shared memory
/// carries: whatever a mutated region holds (flag, stamp, counts, length),
/// nothing panics, no allocation outgrows the region, and the next good
/// frame the writer puts in a clean region maps exactly as it does through
/// a reader that never saw the bad one.
#[test]
fn fuzzed_shm_regions_never_change_the_next_good_frame() {
    use fuzz_harness::{iterations, measured, mutate_bytes, Mutations, Overwrite};
    use rflysim_proto::lidar::encode::{sdk_int16, sdk_int16_xyz};
    use rflysim_proto::shm::{payload_capacity, region_len, ShmReader, ShmWriter};
    use std::time::Duration;

    fn laser(i: usize) -> Vec<u8> {
        LaserDistance {
            distance: i as f32 * 0.5,
            copter_id: 2,
            ray_start: [1.0, 2.0, 3.0],
            ang_euler: [0.0; 3],
            impact_point: [4.0, 5.0, i as f32],
            box_origin: [0.0; 3],
        }
        .encode()
    }
    type Payload = fn(usize) -> Vec<u8>;
    let kinds: [(u16, u16, u16, Payload); 4] = [
        (1, 8, 4, |i| (0..8 * 4 * 3).map(|b| (b + i) as u8).collect()),
        (20, 16, 4, |i| {
            let points: Vec<[f32; 4]> = (0..1 + i % 64).map(|k| [k as f32, -1.0, (i % 9) as f32, 3.0]).collect();
            sdk_int16([1.0, 2.0, 3.0], [0.0, 0.1, 0.2], &points, 50.0)
        }),
        (7, 8, 4, |i| {
            let points: Vec<[f32; 3]> = (0..1 + i % 32).map(|k| [k as f32, 2.0, -((i % 5) as f32)]).collect();
            sdk_int16_xyz([0.0; 3], [0.0; 3], &points, 50.0)
        }),
        (5, 1, 1, laser),
    ];
    let extremes = [
        [0, 0, 0, 0],
        [0xFF, 0xFF, 0xFF, 0x7F],
        [0, 0, 0xC0, 0x7F],
        [0xFF; 4],
        [2, 0, 0, 0],
    ];
    let mutations = Mutations {
        overwrite: Overwrite::Extremes(&extremes),
        max_rounds: 4,
        max_garbage: 200,
    };
    let mut rng = fuzz_harness::Rng::from_state(0x5DEE_CE66_D1CE_4E5B);
    let _one = fuzz_harness::one_at_a_time();
    for (type_id, w, h, payload) in kinds {
        let m = mapper(sensor(type_id, 0, w, h), false);
        let (capacity, headroom) = (payload_capacity(m.kind(), w, h), m.headroom());
        let len = region_len(m.kind(), w, h);
        let written = |i: usize, stamp: f64| {
            let mut region = vec![0u8; len];
            assert!(ShmWriter::new().write(&mut region[..], stamp, &payload(i), Duration::ZERO));
            region
        };
        let through = |reader: &mut ShmReader, region: &mut [u8]| {
            let mut out = Vec::new();
            let t = reader.poll(region, capacity, &mut out, Duration::ZERO)?;
            Some(format!(
                "{t} {:?}",
                m.messages(ros_common::time::to_ros_time(t), out, headroom)
            ))
        };
        let seeds = vec![written(0, 1.0), written(1, 2.0)];
        let mut reader = ShmReader::new().with_headroom(headroom);
        fuzz_harness::reset_largest();
        for i in 0..iterations("RFLYSIM_FUZZ_ITERS") / kinds.len() {
            let mut bad = mutate_bytes(&mut rng, &seeds[i % 2], &seeds, &mutations);
            measured(|| through(&mut reader, &mut bad[..]));
            let stamp = 10.0 + i as f64 * 0.01;
            let alone = through(
                &mut ShmReader::new().with_headroom(headroom),
                &mut written(i, stamp)[..],
            );
            let after_bad = through(&mut reader, &mut written(i, stamp)[..]);
            assert!(
                alone.as_deref().is_some_and(|s| s.contains("Ok(")),
                "TypeID {type_id}: {alone:?}"
            );
            assert_eq!(
                after_bad, alone,
                "TypeID {type_id}, good frame {i} after a mutated region"
            );
        }
        let largest = fuzz_harness::largest();
        assert!(
            largest <= 4 * (headroom + len) + 4096,
            "TypeID {type_id}: an allocation of {largest} bytes for a {len}-byte region"
        );
    }
}

/// A bounded fuzz run of UDP clouds through the mapper with the headroom it
/// asks for, next to the same frames without: whatever a mutated frame
/// holds, both ways agree (refused for the same reason, or the same
/// serialized cloud and odometry), so that a cloud serialized in place is
/// never another cloud than the one decoded apart; and each good frame after
/// a bad one serializes as it does alone.
#[test]
fn fuzzed_udp_clouds_serialize_in_place_as_apart() {
    use fuzz_harness::{iterations, measured, mutate_bytes, Mutations, Overwrite};
    use rflysim_proto::lidar::encode::{sdk_int16, sdk_int16_xyz};

    let points = |i: usize| -> Vec<[f32; 4]> {
        (0..1 + i % 40)
            .map(|k| [k as f32, -1.5, (i % 7) as f32, (k % 3) as f32])
            .collect()
    };
    let extremes = [
        [0, 0, 0, 0],
        [0xFF, 0xFF, 0xFF, 0x7F],
        [0, 0, 0xC0, 0x7F],
        [0, 0, 0x80, 0x7F],
        [0xFF; 4],
        [3, 0, 0, 0],
    ];
    let mutations = Mutations {
        overwrite: Overwrite::Extremes(&extremes),
        max_rounds: 3,
        max_garbage: 200,
    };
    let mut rng = fuzz_harness::Rng::from_state(0x0C10_0D5E_ED5A_F00D);
    let _one = fuzz_harness::one_at_a_time();
    for type_id in [20, 21, 7] {
        let m = mapper(sensor(type_id, 1, 64, 1), false);
        let headroom = m.headroom();
        let good = |i: usize| protocol_float(2, (i % 2) as i32, [1.0, 2.0, 3.0], [0.1, 0.2, 0.3], &points(i));
        let seeds = vec![
            good(0),
            good(1),
            sdk_int16([0.0; 3], [0.0; 3], &points(5), 50.0),
            sdk_int16_xyz([0.0; 3], [0.0; 3], &[[1.0, 2.0, 3.0]; 9], 50.0),
        ];
        let outcome = |frame: Vec<u8>, headroom: usize| -> String {
            match m.messages(stamp(), frame, headroom) {
                Ok(Messages::Cloud(mut c)) => {
                    let mut spare = Vec::new();
                    let bytes = c.take_serialized(&mut spare).map(|b| b.to_vec());
                    format!("{bytes:?} {:?} {:?} {}", c.odometry, c.tf, c.global)
                }
                Ok(other) => panic!("TypeID {type_id}: {other:?}"),
                Err(e) => format!("refused: {}", e.reason()),
            }
        };
        let framed = |frame: &[u8]| {
            let mut v = Vec::with_capacity(headroom + frame.len() + 1);
            v.extend_from_slice(&vec![0xEE; headroom]);
            v.extend_from_slice(frame);
            v
        };
        for i in 0..iterations("RFLYSIM_FUZZ_ITERS") / 3 {
            let bad = mutate_bytes(&mut rng, &seeds[i % seeds.len()], &seeds, &mutations);
            let in_place = measured(|| outcome(framed(&bad), headroom));
            assert_eq!(in_place, outcome(bad, 0), "TypeID {type_id}, mutated frame {i}");
            let next = good(i);
            let alone = outcome(next.clone(), 0);
            assert!(alone.starts_with("Ok("), "TypeID {type_id}: {alone}");
            assert_eq!(
                outcome(framed(&next), headroom),
                alone,
                "TypeID {type_id}, good frame {i}"
            );
        }
    }
}
