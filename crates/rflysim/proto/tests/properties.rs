//! Property tests: round trips through the encoders and the reassembler.

use std::time::Duration;

use proptest::prelude::*;
use rflysim_proto::header::{split_frame, HeaderKind};
use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use rflysim_proto::request::{RequestForm, VisionSensorReq};

fn kind() -> impl Strategy<Value = HeaderKind> {
    prop_oneof![Just(HeaderKind::Image24), Just(HeaderKind::Frame32)]
}

proptest! {
    /// Frames split into datagrams, each frame's datagrams shuffled, pairs of
    /// frames interleaved and some datagrams lost: every delivered frame is one
    /// of the originals byte for byte, and every frame that lost nothing is delivered.
    #[test]
    fn reassembly_never_stitches_and_loses_only_damaged_frames(
        kind in kind(),
        frames in prop::collection::vec((prop::collection::vec(any::<u8>(), 1..3000), 1usize..700), 1..8),
        shuffle_seed in any::<u64>(),
        lose in prop::collection::vec(any::<bool>(), 64),
    ) {
        let mut rng = shuffle_seed | 1;
        let mut next = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
        let mut stream: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut damaged = vec![false; frames.len()];
        for (i, (payload, chunk)) in frames.iter().enumerate() {
            let mut d = split_frame(kind, i as i32, 10.0 + i as f64 * 0.01, payload, *chunk);
            for j in (1..d.len()).rev() {
                d.swap(j, (next() % (j as u64 + 1)) as usize);
            }
            for (j, dg) in d.into_iter().enumerate() {
                if lose[(i * 7 + j) % lose.len()] && j % 3 == 0 {
                    damaged[i] = true;
                } else {
                    stream.push((i, dg));
                }
            }
        }
        // Interleave neighbouring frames (reordering across two frames at most).
        for j in (1..stream.len()).rev() {
            if stream[j].0 != stream[j - 1].0 && next() % 2 == 0 {
                stream.swap(j, j - 1);
            }
        }
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let mut delivered = vec![false; frames.len()];
        for (_, d) in &stream {
            if let Some(f) = r.push(d, Duration::from_millis(1)) {
                let i = frames.iter().position(|(p, _)| *p == f.payload);
                prop_assert!(i.is_some(), "a delivered frame is none of the originals");
                let i = i.unwrap();
                prop_assert!(!damaged[i], "frame {} delivered although a packet was lost", i);
                delivered[i] = true;
            }
        }
        for i in 0..frames.len() {
            prop_assert_eq!(delivered[i], !damaged[i], "frame {}", i);
        }
        prop_assert_eq!(r.stats().frames as usize, delivered.iter().filter(|d| **d).count());
    }

    #[test]
    fn vision_sensor_request_round_trips(
        ids in prop::array::uniform8(any::<u16>()),
        floats in prop::collection::vec(-1e6f32..1e6, 28),
        bitmask in any::<u32>(),
    ) {
        let mut other = [0f32; 16];
        other.copy_from_slice(&floats[12..28]);
        let req = VisionSensorReq {
            seq_id: ids[0], bitmask, type_id: ids[1], target_copter: ids[2], target_mount_type: ids[3],
            data_width: ids[4], data_height: ids[5], data_check_freq: ids[6], send_protocol: ids,
            camera_fov: floats[0], sensor_pos_xyz: [floats[1], floats[2], floats[3]], eular_or_quat: floats[4],
            sensor_ang_eular: [floats[5], floats[6], floats[7]], sensor_ang_quat: [floats[8], floats[9], floats[10], floats[11]],
            other_params: other,
        };
        let (back, form, ck) = VisionSensorReq::decode(&req.encode(RequestForm::Gimbal148, 12346)).unwrap();
        prop_assert_eq!((form, ck), (RequestForm::Gimbal148, 12346));
        prop_assert_eq!(back, req);
        let (back, _, _) = VisionSensorReq::decode(&req.encode(RequestForm::Current144, 12345)).unwrap();
        prop_assert_eq!(back, VisionSensorReq { bitmask: 0, ..req });
    }
}
