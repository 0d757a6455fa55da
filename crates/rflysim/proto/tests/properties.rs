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

    /// Frames at their sensor's bound (the reassembler configured for it,
    /// with room around each frame), a packet of each reordered behind the
    /// next frame's first, nothing lost: every frame is delivered whole,
    /// within the sensor's budget.
    #[test]
    fn a_reordered_frame_at_the_bound_is_never_lost(
        kind in kind(),
        bound in 1_100_000usize..2_000_000,
        chunk in 1_000usize..60_000,
        short_by in 0usize..1_000,
        headroom in 0usize..300,
        tailroom in 0usize..2,
        held_back in any::<prop::sample::Index>(),
    ) {
        let cfg = ReassemblerConfig::for_frames_of(bound).with_headroom(headroom).with_tailroom(tailroom);
        let budget = cfg.max_buffered_bytes;
        let mut r = Reassembler::new(cfg);
        let frames: Vec<Vec<u8>> = (0..3u8)
            .map(|i| (0..bound - short_by).map(|b| (b as u8).wrapping_mul(7).wrapping_add(i)).collect())
            .collect();
        let mut datagrams: Vec<Vec<Vec<u8>>> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| split_frame(kind, i as i32, 10.0 + i as f64 * 0.01, f, chunk))
            .collect();
        let mut stream = Vec::new();
        for i in 0..datagrams.len() {
            if i + 1 < datagrams.len() {
                // One of its packets comes after the next frame's first.
                let at = held_back.index(datagrams[i].len());
                let held = datagrams[i].remove(at);
                let next_first = datagrams[i + 1].remove(0);
                stream.append(&mut datagrams[i]);
                stream.push(next_first);
                stream.push(held);
            } else {
                stream.append(&mut datagrams[i]);
            }
        }
        let mut delivered = Vec::new();
        for d in &stream {
            if let Some(f) = r.push(d, Duration::from_millis(1)) {
                delivered.push(f.payload[f.headroom..].to_vec());
            }
            prop_assert!(r.buffered_bytes() <= budget, "{} > {}", r.buffered_bytes(), budget);
        }
        prop_assert_eq!(r.stats().frames_lost(), 0, "{:?}", r.stats());
        prop_assert_eq!(delivered, frames);
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
