//! A bounded, deterministic in-process fuzz run of every parser of the AUV
//! wire (CI runs it with the other tests; `AUV_FUZZ_ITERS` makes it longer).
//! Inputs are valid messages mutated part by part (bit flips, truncation,
//! extension, splicing, extreme values) and as multipart lists (parts
//! dropped, duplicated, merged, split, swapped, invented).
//!
//! Checked: no panic; no single allocation above a bound (a counting global
//! allocator); what is accepted is exactly what was sent (re-encoding gives
//! the input back); and recovery: a good message after every bad one decodes
//! exactly, and each bad one is counted once under one kind.

use fuzz_harness::{iterations, measured, mutate_bytes, one_at_a_time, CountingAlloc, Mutations, Overwrite, Rng};

use auv_proto::counts::InputCounts;
use auv_proto::image::{jpeg_comment, jpeg_dimensions, with_comment, ImageLimits, ImageMessage};
use auv_proto::telemetry::Telemetry;
use auv_proto::thruster::ThrusterCommand;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const EXTREMES: [[u8; 4]; 7] = [
    [0, 0, 0, 0],
    [0xFF, 0xFF, 0xFF, 0x7F],
    [0, 0, 0x80, 0x7F], // +∞
    [0, 0, 0xC0, 0x7F], // NaN
    [0x81, 0x80, 0x7F, 0x64],
    [0xFF, 0xD8, 0xFF, 0xD9],
    [0xFF, 0xD9, 0xFF, 0xC0],
];

fn mutate_part(rng: &mut Rng, seed: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let m = Mutations {
        overwrite: Overwrite::Extremes(&EXTREMES),
        max_rounds: 3,
        max_garbage: 40,
    };
    mutate_bytes(rng, seed, others, &m)
}

fn mutate_parts(rng: &mut Rng, seed: &[Vec<u8>], pool: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut parts = seed.to_vec();
    for _ in 0..1 + rng.below(2) {
        let n = parts.len();
        match rng.below(8) {
            0..=2 if n > 0 => {
                let i = rng.below(n);
                parts[i] = mutate_part(rng, &parts[i], pool);
            }
            3 if n > 0 => {
                parts.remove(rng.below(n));
            }
            4 if n > 0 => {
                let i = rng.below(n);
                let copy = parts[i].clone();
                parts.insert(rng.below(n + 1), copy);
            }
            5 if n > 1 => {
                let i = rng.below(n - 1);
                let next = parts.remove(i + 1);
                parts[i].extend_from_slice(&next);
            }
            6 if n > 0 => {
                let i = rng.below(n);
                let at = rng.below(parts[i].len() + 1);
                let tail = parts[i].split_off(at);
                parts.insert(i + 1, tail);
            }
            7 if n > 1 => {
                let (a, b) = (rng.below(n), rng.below(n));
                parts.swap(a, b);
            }
            _ => parts.push((0..rng.below(8)).map(|_| rng.next_u64() as u8).collect()),
        }
    }
    parts
}

/// Runs `target` on mutations of `seeds` (each a multipart message) and then,
/// after every mutated input, `recover` on a good message; checks the
/// allocation bound over the whole run.
fn fuzz(
    name: &str,
    seeds: &[Vec<Vec<u8>>],
    max_alloc: usize,
    mut target: impl FnMut(&[Vec<u8>]),
    mut recover: impl FnMut(usize),
) {
    let mut rng = Rng::from_state(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
    let pool: Vec<Vec<u8>> = seeds.iter().flatten().cloned().collect();
    fuzz_harness::reset_largest();
    for i in 0..iterations("AUV_FUZZ_ITERS") {
        let seed = &seeds[rng.below(seeds.len())];
        let input = mutate_parts(&mut rng, seed, &pool);
        measured(|| target(&input));
        recover(i);
    }
    let largest = fuzz_harness::largest();
    assert!(
        largest <= max_alloc,
        "{name}: an allocation of {largest} bytes (bound {max_alloc})"
    );
}

fn jpeg(width: u32, height: u32, shade: u8) -> Vec<u8> {
    let pixels: Vec<u8> = (0..width * height * 3).map(|i| (i as u8).wrapping_mul(shade)).collect();
    image_codec::encode::jpeg(&pixels, width, height, image_codec::Encoding::Bgr8, 80).unwrap()
}

/// Counts one input's outcome and checks that exactly one counter moved.
fn count_once<T>(counts: &mut InputCounts, result: &Result<T, auv_proto::WireError>) {
    let before = counts.good + counts.bad_total();
    counts.record(result);
    assert_eq!(counts.good + counts.bad_total(), before + 1);
}

#[test]
fn image_messages() {
    let _one = one_at_a_time();
    let (a, b) = (jpeg(32, 24, 3), with_comment(&jpeg(16, 16, 7), b"seq 1"));
    let seeds = vec![
        vec![vec![0], a.clone(), b.clone()],
        vec![vec![255], b.clone(), a.clone()],
        vec![vec![7], a.clone(), a.clone()],
    ];
    let good: Vec<&[u8]> = vec![&[42], &b, &a];
    let limits = ImageLimits { max_jpeg_bytes: 4096 };
    let mut counts = InputCounts::default();
    let mut rejected = 0u64;
    fuzz(
        "images",
        &seeds,
        1 << 16,
        |parts| {
            let result = ImageMessage::parse(parts.to_vec(), &limits);
            count_once(&mut counts, &result);
            match result {
                Ok(m) => {
                    assert_eq!(parts.len(), 3);
                    assert_eq!(parts[0], [m.auv_id]);
                    assert_eq!((&m.front, &m.bottom), (&parts[1], &parts[2]));
                    assert!(m.front.len() <= limits.max_jpeg_bytes);
                }
                Err(_) => rejected += 1,
            }
            for part in parts {
                if let Some((w, h)) = jpeg_dimensions(part) {
                    assert!(w > 0 && h > 0);
                }
                if let Some(c) = jpeg_comment(part) {
                    assert!(c.len() < part.len());
                }
            }
        },
        |_| {
            let m = ImageMessage::parse(good.clone(), &limits).unwrap();
            assert_eq!((m.auv_id, m.front, m.bottom), (42, &b[..], &a[..]));
        },
    );
    assert!(rejected > 1000, "the mutations must mostly be refused: {rejected}");
    assert_eq!(counts.bad_total(), rejected);
    for kind in ["wrong_part_count", "wrong_id_length", "corrupt_jpeg"] {
        assert!(counts.bad(kind) > 0, "{kind} never seen: {counts:?}");
    }
    assert_eq!(jpeg_dimensions(&a), Some((32, 24)));
}

#[test]
fn telemetry_messages() {
    let _one = one_at_a_time();
    let sample = |auv_id, x: f32| Telemetry {
        auv_id,
        x,
        y: -x,
        z: 2.5,
        yaw: 0.1,
        pitch: -0.2,
        roll: 3.0,
    };
    let seeds: Vec<Vec<Vec<u8>>> = [sample(0, 1.0), sample(200, -7.5)]
        .iter()
        .map(|t| vec![t.id_part().to_vec(), t.payload().to_vec()])
        .collect();
    let good = sample(9, 123.25);
    let good_parts = [good.id_part().to_vec(), good.payload().to_vec()];
    let mut counts = InputCounts::default();
    fuzz(
        "telemetry",
        &seeds,
        4096,
        |parts| {
            let result = Telemetry::parse(parts);
            count_once(&mut counts, &result);
            if let Ok(t) = result {
                assert_eq!([t.id_part().to_vec(), t.payload().to_vec()], parts);
            }
        },
        |_| assert_eq!(Telemetry::parse(&good_parts), Ok(good)),
    );
    for kind in ["wrong_part_count", "wrong_id_length", "wrong_length", "non_finite"] {
        assert!(counts.bad(kind) > 0, "{kind} never seen: {counts:?}");
    }
}

#[test]
fn thruster_messages() {
    let _one = one_at_a_time();
    let seeds: Vec<Vec<Vec<u8>>> = [
        ThrusterCommand::new(0, [Some(75), Some(-50), Some(0), None]).unwrap(),
        ThrusterCommand::new(255, [Some(100), Some(-100), None, Some(1)]).unwrap(),
        ThrusterCommand::stop(3),
    ]
    .iter()
    .map(|c| vec![c.encode().to_vec()])
    .collect();
    let good = ThrusterCommand::new(5, [None, Some(12), Some(-12), Some(99)]).unwrap();
    let good_bytes = good.encode();
    let mut counts = InputCounts::default();
    fuzz(
        "thrusters",
        &seeds,
        4096,
        |parts| {
            // A receiver refuses multipart thruster messages before decoding.
            let [part] = parts else { return };
            let result = ThrusterCommand::decode(part);
            count_once(&mut counts, &result);
            if let Ok(c) = result {
                assert_eq!(&c.encode()[..], &part[..]);
                assert!(c.levels().iter().flatten().all(|v| (-100..=100).contains(v)));
            }
        },
        |_| assert_eq!(ThrusterCommand::decode(&good_bytes), Ok(good)),
    );
    for kind in ["wrong_length", "out_of_range"] {
        assert!(counts.bad(kind) > 0, "{kind} never seen: {counts:?}");
    }
}
