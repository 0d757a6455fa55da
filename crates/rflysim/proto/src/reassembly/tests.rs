use super::*;
use crate::header::{split_frame, DatagramHeader, HeaderKind};

const MS: Duration = Duration::from_millis(1);

fn frame_bytes(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn packets(kind: HeaderKind, id: i32, t: f64, payload: &[u8], chunk: usize) -> Vec<Vec<u8>> {
    split_frame(kind, id, t, payload, chunk)
}

fn push_all(r: &mut Reassembler, dgrams: &[Vec<u8>]) -> Vec<Frame> {
    dgrams.iter().filter_map(|d| r.push(d, MS)).collect()
}

#[test]
fn in_order_frames_of_both_header_kinds() {
    for kind in [HeaderKind::Image24, HeaderKind::Frame32] {
        let mut r = Reassembler::new(Default::default());
        let payload = frame_bytes(1, 250);
        let out = push_all(&mut r, &packets(kind, 5, 1.0, &payload, 100));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].payload, payload);
        assert_eq!(out[0].packets, 3);
        assert_eq!(out[0].header_kind, kind);
        assert_eq!(out[0].frame_id, (kind == HeaderKind::Frame32).then_some(5));
        assert_eq!(r.stats().frames, 1);
        assert_eq!(r.partial_frames(), 0);
    }
}

#[test]
fn header_kind_is_decided_per_datagram() {
    let mut r = Reassembler::new(Default::default());
    let a = frame_bytes(1, 300);
    let b = frame_bytes(2, 300);
    let pa = packets(HeaderKind::Image24, 0, 1.0, &a, 100);
    let pb = packets(HeaderKind::Frame32, 1, 1.0, &b, 100);
    let mixed = vec![
        pa[0].clone(),
        pb[0].clone(),
        pa[1].clone(),
        pb[1].clone(),
        pb[2].clone(),
        pa[2].clone(),
    ];
    let out = push_all(&mut r, &mixed);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].payload, b);
    assert_eq!(out[1].payload, a);
}

#[test]
fn out_of_order_and_duplicates() {
    let mut r = Reassembler::new(Default::default());
    let payload = frame_bytes(3, 1000);
    let p = packets(HeaderKind::Frame32, 1, 0.5, &payload, 128);
    let n = p.len();
    let mut order: Vec<Vec<u8>> = p.iter().rev().cloned().collect();
    order.insert(3, p[n - 2].clone()); // duplicate
    let out = push_all(&mut r, &order);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].payload, payload);
    // A duplicate after completion is late, not a new frame.
    assert!(r.push(&p[0], MS).is_none());
    assert_eq!(r.stats().duplicates, 1);
    assert_eq!(r.stats().late, 1);
}

#[test]
fn a_lost_packet_drops_that_frame_only_and_is_never_stitched() {
    for kind in [HeaderKind::Image24, HeaderKind::Frame32] {
        let mut r = Reassembler::new(Default::default());
        let frames: Vec<Vec<u8>> = (0..3).map(|i| frame_bytes(i, 500)).collect();
        let mut out = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            let mut p = packets(kind, i as i32, i as f64 * 0.1, f, 200);
            if i == 1 {
                p.remove(1);
            }
            out.extend(push_all(&mut r, &p));
        }
        assert_eq!(
            out.iter().map(|f| f.payload.clone()).collect::<Vec<_>>(),
            vec![frames[0].clone(), frames[2].clone()]
        );
        assert_eq!(r.partial_frames(), 1);
        assert_eq!(r.next_stale_at(), Some(MS + r.config().stale_after));
        r.evict_stale(MS + r.config().stale_after - MS / 2);
        assert_eq!(r.partial_frames(), 1, "not stale yet");
        r.evict_stale(MS + r.config().stale_after);
        assert_eq!(r.stats().timed_out, 1);
        assert_eq!(r.stats().frames_lost(), 1);
        assert_eq!(r.partial_frames(), 0);
        assert_eq!(r.next_stale_at(), None, "nothing left to time out");
    }
}

#[test]
fn too_many_frames_in_flight_evicts_the_oldest() {
    let cfg = ReassemblerConfig {
        max_partial_frames: 2,
        ..Default::default()
    };
    let mut r = Reassembler::new(cfg);
    for i in 0..3 {
        let p = packets(HeaderKind::Frame32, i, f64::from(i), &frame_bytes(0, 300), 100);
        assert!(r.push(&p[0], MS * i as u32).is_none());
    }
    assert_eq!(r.partial_frames(), 2);
    assert_eq!(r.stats().incomplete, 1);
    // The oldest frame still held (started at 1 ms) times out first.
    assert_eq!(r.next_stale_at(), Some(MS + r.config().stale_after));
}

#[test]
fn lying_sizes_allocate_nothing() {
    let mut r = Reassembler::new(Default::default());
    let mut h = DatagramHeader {
        kind: HeaderKind::Frame32,
        pkg_len: 32 + 60_000,
        pkg_id: 0,
        pkg_num: i32::MAX,
        frame_id: Some(1),
        time_stamp: 0.0,
    };
    let mut d = h.encode();
    d.extend_from_slice(&[0; 60_000]);
    assert!(r.push(&d, MS).is_none());
    h.pkg_num = 2000; // 2000 × 60 000 > 64 MiB
    let mut d2 = h.encode();
    d2.extend_from_slice(&[0; 60_000]);
    assert!(r.push(&d2, MS).is_none());
    h.pkg_num = 1;
    h.pkg_len = i32::MAX;
    assert!(r.push(&h.encode(), MS).is_none());
    assert_eq!(r.stats().oversize, 3);
    assert_eq!(r.buffered_bytes(), 0);
    for (id, num) in [(-1, 2), (2, 2), (0, 0)] {
        h.pkg_id = id;
        h.pkg_num = num;
        h.pkg_len = 32;
        assert!(r.push(&h.encode(), MS).is_none());
    }
    assert_eq!(r.stats().bad_length, 3);
}

#[test]
fn frames_lost_whole_are_counted_from_frame_id_gaps() {
    let mut r = Reassembler::new(Default::default());
    let f = frame_bytes(1, 50);
    for id in [0, 1, 4, 3, 5] {
        assert!(r
            .push(&packets(HeaderKind::Frame32, id, f64::from(id), &f, 100)[0], MS)
            .is_some());
    }
    // 2 never came; 3 came late (after 4) and is not missing.
    assert_eq!(r.stats().frames_missing, 1);
}

#[test]
fn garbage_is_counted() {
    let mut r = Reassembler::new(Default::default());
    for d in [&b""[..], b"abc", &[0xFF; 100]] {
        assert!(r.push(d, MS).is_none());
    }
    assert_eq!(r.stats().garbage, 3);
}

#[test]
fn simulator_restart_recovers_at_once() {
    let mut r = Reassembler::new(Default::default());
    let f = frame_bytes(9, 300);
    for i in 0..5 {
        assert_eq!(
            push_all(&mut r, &packets(HeaderKind::Frame32, i, 10.0 + f64::from(i), &f, 100)).len(),
            1
        );
    }
    // Half a frame of the old run, then the restart: ids and time from zero.
    r.push(&packets(HeaderKind::Frame32, 5, 15.0, &f, 100)[0], MS);
    for i in 0..5 {
        let out = push_all(&mut r, &packets(HeaderKind::Frame32, i, f64::from(i) * 0.01, &f, 100));
        assert_eq!(out.len(), 1, "frame {i} after the restart");
    }
    assert_eq!(r.stats().restarts, 1);
    assert_eq!(r.stats().incomplete, 1);
}

#[test]
fn an_early_restart_is_seen_from_the_frame_ids() {
    let mut r = Reassembler::new(Default::default());
    let f = frame_bytes(2, 300);
    for i in 0..20 {
        push_all(
            &mut r,
            &packets(HeaderKind::Frame32, i, 0.3 + f64::from(i) * 0.03, &f, 100),
        );
    }
    // Sim time back from 0.87 s to 0: less than the time threshold, but ids start over.
    for i in 0..3 {
        assert_eq!(
            push_all(&mut r, &packets(HeaderKind::Frame32, i, f64::from(i) * 0.03, &f, 100)).len(),
            1
        );
    }
    assert_eq!(r.stats().restarts, 1);
    // A late straggler (frame 5 of the new run) is no restart.
    push_all(&mut r, &packets(HeaderKind::Frame32, 7, 0.21, &f, 100));
    push_all(&mut r, &packets(HeaderKind::Frame32, 5, 0.15, &f, 100));
    assert_eq!(r.stats().restarts, 1);
}

#[test]
fn same_stamp_other_bytes_is_two_frames_not_one() {
    let mut r = Reassembler::new(Default::default());
    let a = packets(HeaderKind::Image24, 0, 2.0, &frame_bytes(1, 300), 100);
    let b = packets(HeaderKind::Image24, 0, 2.0, &frame_bytes(2, 300), 100);
    let out = push_all(
        &mut r,
        &[a[0].clone(), a[1].clone(), b[0].clone(), b[1].clone(), b[2].clone()],
    );
    assert!(out.is_empty());
    assert_eq!(r.stats().inconsistent, 1);
}

#[test]
fn pkg_len_as_frame_length_is_accepted_and_truncation_is_not() {
    let payload = frame_bytes(4, 250);
    // RflySim's vision protocol's reading: pkg_len = the frame's payload length in every packet.
    let mut frame_style = packets(HeaderKind::Frame32, 1, 1.0, &payload, 100);
    for d in &mut frame_style {
        d[4..8].copy_from_slice(&250i32.to_le_bytes());
    }
    let mut r = Reassembler::new(Default::default());
    assert_eq!(push_all(&mut r, &frame_style)[0].payload, payload);

    let mut truncated = packets(HeaderKind::Frame32, 2, 2.0, &payload, 100);
    truncated[2].truncate(60);
    assert!(push_all(&mut r, &truncated).is_empty());
    let mut single = packets(HeaderKind::Image24, 0, 3.0, &payload, 1000);
    single[0].truncate(100);
    assert!(push_all(&mut r, &single).is_empty());
    assert_eq!(r.stats().bad_length, 2);
}

#[test]
fn a_chunk_size_change_inside_a_frame_is_refused() {
    let mut r = Reassembler::new(Default::default());
    let a = packets(HeaderKind::Frame32, 1, 1.0, &frame_bytes(1, 300), 100);
    let b = packets(HeaderKind::Frame32, 1, 1.0, &frame_bytes(1, 300), 150);
    assert!(r.push(&a[0], MS).is_none());
    assert!(r.push(&b[1], MS).is_none()); // pkg_num 2 vs 3
    assert_eq!(r.stats().inconsistent, 1);
    assert_eq!(r.partial_frames(), 0);
}

#[test]
fn last_packet_first() {
    let mut r = Reassembler::new(Default::default());
    let payload = frame_bytes(5, 230);
    let p = packets(HeaderKind::Image24, 0, 1.0, &payload, 100);
    let out = push_all(&mut r, &[p[2].clone(), p[0].clone(), p[1].clone()]);
    assert_eq!(out[0].payload, payload);
}

fn lying_datagram(frame_id: i32, pkg_num: i32, body_len: usize) -> Vec<u8> {
    let mut d = DatagramHeader {
        kind: HeaderKind::Frame32,
        pkg_len: (32 + body_len) as i32,
        pkg_id: 0,
        pkg_num,
        frame_id: Some(frame_id),
        time_stamp: 1.0,
    }
    .encode();
    d.extend(std::iter::repeat_n(7u8, body_len));
    d
}

#[test]
fn one_lying_datagram_allocates_nothing_beyond_the_sensors_bound() {
    // A 60 KB datagram claiming 1,100 packets: 66 MB, for a 1 MB sensor.
    let mut r = Reassembler::new(ReassemblerConfig::for_frames_of(1 << 20));
    assert!(r.push(&lying_datagram(1, 1100, 60_000), MS).is_none());
    assert_eq!((r.stats().oversize, r.buffered_bytes()), (1, 0));
}

#[test]
fn partial_frames_stay_within_the_total_budget_and_the_newest_completes() {
    let cfg = ReassemblerConfig::for_frames_of(1 << 20);
    let budget = cfg.max_buffered_bytes;
    let mut r = Reassembler::new(cfg);
    // Frames of 15 × 60 KB = 900 KB, each missing its other packets.
    for id in 0..6 {
        r.push(&lying_datagram(id, 15, 60_000), MS);
        assert!(r.buffered_bytes() <= budget, "{} > {budget}", r.buffered_bytes());
    }
    assert!(r.stats().incomplete >= 4);
    let payload = frame_bytes(3, 900_000);
    let out = push_all(&mut r, &packets(HeaderKind::Frame32, 100, 2.0, &payload, 60_000));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].payload, payload);
    assert!(r.buffered_bytes() <= budget);
}

#[test]
fn a_second_frame_with_the_same_stamp_is_never_joined_and_is_counted() {
    // 24-byte header: no frame id. A loses its last packet; B, with A's
    // time stamp, comes whole. Nothing of the two is joined.
    let mut r = Reassembler::new(Default::default());
    let a = frame_bytes(1, 300);
    let b = frame_bytes(2, 300);
    let pa = packets(HeaderKind::Image24, 0, 5.0, &a, 100);
    let pb = packets(HeaderKind::Image24, 0, 5.0, &b, 100);
    let out = push_all(
        &mut r,
        &[
            pa[0].clone(),
            pa[1].clone(),
            pb[0].clone(),
            pb[1].clone(),
            pb[2].clone(),
        ],
    );
    assert!(out.is_empty(), "a frame made of A's and B's packets");
    assert_eq!(r.stats().inconsistent, 1);
    assert_eq!(r.stats().repeated_stamp, 2);
    assert_eq!(
        r.stats().late,
        0,
        "B's packets are not late duplicates: they are counted as a fault"
    );
    // A late duplicate of a finished frame stays a duplicate, not a fault.
    let c = frame_bytes(3, 300);
    let pc = packets(HeaderKind::Image24, 0, 6.0, &c, 100);
    assert_eq!(push_all(&mut r, &pc).len(), 1);
    assert!(r.push(&pc[1], MS).is_none());
    assert_eq!((r.stats().late, r.stats().repeated_stamp), (1, 2));
}

/// With headroom, every frame is the frame it is without, after that many
/// zero bytes: in order, reversed, last packet first, with a duplicate, in
/// one packet, for both header kinds, and with a protocol-style `pkg_len`.
#[test]
fn headroom_only_puts_zeroes_in_front() {
    let payload = frame_bytes(9, 1000);
    let mut streams: Vec<Vec<Vec<u8>>> = Vec::new();
    for kind in [HeaderKind::Image24, HeaderKind::Frame32] {
        let p = packets(kind, 4, 2.0, &payload, 128);
        streams.push(p.clone());
        streams.push(p.iter().rev().cloned().collect());
        let mut last_first = p.clone();
        last_first.rotate_right(1);
        last_first.insert(4, p[2].clone());
        streams.push(last_first);
        streams.push(packets(kind, 5, 3.0, &payload[..100], 128));
        let mut frame_style = p.clone();
        for d in &mut frame_style {
            d[4..8].copy_from_slice(&(payload.len() as i32).to_le_bytes());
        }
        streams.push(frame_style);
    }
    for (i, stream) in streams.iter().enumerate() {
        let plain = push_all(&mut Reassembler::new(Default::default()), stream);
        let config = ReassemblerConfig::default().with_headroom(13).with_tailroom(5);
        let roomy = push_all(&mut Reassembler::new(config), stream);
        for f in &roomy {
            assert!(f.payload.capacity() >= f.payload.len() + 5, "stream {i}: no tailroom");
        }
        assert_eq!(plain.len(), 1, "stream {i}");
        let expected: Vec<Frame> = plain
            .into_iter()
            .map(|f| Frame {
                payload: [&[0u8; 13][..], &f.payload].concat(),
                headroom: 13,
                ..f
            })
            .collect();
        assert_eq!(roomy, expected, "stream {i}");
    }
}

/// A frame whose packets come in order is received into its own buffer:
/// every packet but the first (which sizes the buffer) and the last ones
/// (no room left for any datagram after them) lands in place, and the
/// frame delivered is the buffer they landed in.
#[test]
fn in_order_packets_land_in_their_frame() {
    let payload = frame_bytes(3, 10 * 60_000 - 123);
    let dgrams = packets(HeaderKind::Frame32, 9, 4.0, &payload, 60_000);
    let mut r = Reassembler::new(ReassemblerConfig::default().with_headroom(5).with_tailroom(1));
    let mut landed = Vec::new();
    let mut frame_buffer = None;
    let mut frames = Vec::new();
    for (k, d) in dgrams.iter().enumerate() {
        let mut slot = r.slot();
        if !slot.buf().is_empty() {
            landed.push(k);
            frame_buffer = Some(slot.buf().as_ptr());
        }
        slot.buf().extend_from_slice(d);
        frames.extend(slot.push(MS));
    }
    assert_eq!(landed, (1..=8).collect::<Vec<_>>());
    assert_eq!(frames.len(), 1);
    assert_eq!(&frames[0].payload[5..], &payload[..]);
    assert_eq!(Some(frames[0].payload.as_ptr()), frame_buffer);
    assert!(frames[0].payload.capacity() > frames[0].payload.len());
    assert_eq!(r.stats().datagrams, 10);
}

#[test]
fn a_recycled_buffer_takes_the_next_frame_and_holds_only_it() {
    let mut r = Reassembler::new(ReassemblerConfig::default().with_headroom(5));
    let first = frame_bytes(1, 3 * 1000 - 7);
    let second = frame_bytes(2, 3 * 1000 - 7);
    let out = push_all(&mut r, &packets(HeaderKind::Frame32, 1, 1.0, &first, 1000));
    let spent = out.into_iter().next().unwrap().payload;
    let reused = spent.as_ptr();
    r.recycle(spent);
    let out = push_all(&mut r, &packets(HeaderKind::Frame32, 2, 1.1, &second, 1000));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].payload.as_ptr(), reused);
    assert_eq!(&out[0].payload[..5], &[0; 5]);
    assert_eq!(&out[0].payload[5..], &second[..]);
    // Too small for the next frame: left alone, a fresh buffer is made.
    r.recycle(Vec::with_capacity(10));
    let third = frame_bytes(3, 3 * 1000 - 7);
    let out = push_all(&mut r, &packets(HeaderKind::Frame32, 3, 1.2, &third, 1000));
    assert_eq!(&out[0].payload[5..], &third[..]);
}

#[test]
fn a_frame_overtaken_by_its_successors_first_packet_still_completes() {
    // A camera's frames at its bound (1080p bgr8 in 60 000-byte packets, the
    // last one short), with room in front for the message: the last packet
    // of frame 1 arrives after frame 2's first, as a network reorders them.
    let (width, height) = (1920, 1080);
    let bound = width * height * 3;
    let mut r = Reassembler::new(ReassemblerConfig::for_frames_of(bound).with_headroom(100));
    let a = frame_bytes(1, bound);
    let b = frame_bytes(2, bound);
    let pa = packets(HeaderKind::Frame32, 1, 1.0, &a, 60_000);
    let pb = packets(HeaderKind::Frame32, 2, 1.1, &b, 60_000);
    let (a_last, a_rest) = pa.split_last().unwrap();
    let mut stream: Vec<Vec<u8>> = a_rest.to_vec();
    stream.push(pb[0].clone());
    stream.push(a_last.clone());
    stream.extend_from_slice(&pb[1..]);
    let out = push_all(&mut r, &stream);
    assert_eq!(r.stats().frames_lost(), 0, "{:?}", r.stats());
    let payloads: Vec<&[u8]> = out.iter().map(|f| &f.payload[f.headroom..]).collect();
    assert_eq!(payloads, [&a[..], &b[..]]);
}
