//! `cargo bench -p rflysim_proto`: reassembly + decode of the frames the
//! bridge handles most, each next to a plain memcpy of the same bytes
//! measured in the same run. Prints a table; asserts nothing.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use image_codec::{encode, JpegDecoder};
use rflysim_proto::header::{split_frame, HeaderKind, MAX_PACKET_PAYLOAD};
use rflysim_proto::image::raw_image;
use rflysim_proto::lidar::{self, decode_lidar};
use rflysim_proto::reassembly::Reassembler;
use rflysim_proto::sensor::Encoding;

/// Median of `runs` timings of `f`, after a warm-up.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..3 {
        f();
    }
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[runs / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Row {
    name: &'static str,
    bytes: usize,
    took: Duration,
    memcpy_warm: Duration,
    memcpy_fresh: Duration,
    target: Option<f64>,
}

/// memcpy of `bytes` bytes into a reused buffer, and into a freshly allocated one.
fn memcpy_refs(bytes: usize, runs: usize) -> (Duration, Duration) {
    let src = vec![0x5Au8; bytes];
    let mut dst = vec![0u8; bytes];
    let warm = median(runs, || {
        dst.copy_from_slice(black_box(&src));
        black_box(&dst);
    });
    let fresh = median(runs, || {
        let v = black_box(&src).to_vec();
        black_box(v);
    });
    (warm, fresh)
}

/// Reassembles one frame; its datagrams get a new time stamp first (a few
/// hundred bytes written), since a frame already delivered is refused as late.
fn reassemble_all(r: &mut Reassembler, datagrams: &mut [Vec<u8>], t: &mut Duration) -> Vec<u8> {
    *t += Duration::from_millis(1);
    let stamp = t.as_secs_f64();
    for d in datagrams.iter_mut() {
        let at = if d[0..4] == 1_234_567_893i32.to_le_bytes() {
            24
        } else {
            16
        };
        d[at..at + 8].copy_from_slice(&stamp.to_le_bytes());
    }
    let mut out = None;
    for d in datagrams {
        if let Some(f) = r.push(d, *t) {
            out = Some(f.payload);
        }
    }
    out.expect("a whole frame")
}

fn synthetic_bgr(w: usize, h: usize) -> Vec<u8> {
    let mut px = Vec::with_capacity(w * h * 3);
    let mut s = 12345u32;
    for y in 0..h {
        for x in 0..w {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let noise = (s >> 27) as u8;
            px.extend_from_slice(&[(x / 8) as u8 ^ noise, (y / 4) as u8, ((x + y) / 16) as u8 ^ (noise / 2)]);
        }
    }
    px
}

/// A render-like picture: smooth shading, hard-edged boxes, faint noise.
fn synthetic_render(w: usize, h: usize) -> Vec<u8> {
    let mut px = Vec::with_capacity(w * h * 3);
    let mut s = 777u32;
    for y in 0..h {
        for x in 0..w {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let n = (s >> 30) as u8;
            let in_box = (x / 240 + y / 180) % 3 == 0 && x % 240 > 40 && y % 180 > 30;
            let p = if y < h / 3 {
                [200u8.saturating_sub((y / 4) as u8), 150, 90 + n] // sky
            } else if in_box {
                [30 + n, 60, 200]
            } else {
                [(60 + (x / 30) % 40) as u8 + n, (120 + (y / 20) % 50) as u8, 70]
            };
            px.extend_from_slice(&p);
        }
    }
    px
}

fn main() {
    let runs: usize = std::env::var("RFLYSIM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(31);
    let mut rows = Vec::new();
    let mut t = Duration::ZERO;

    // LiDAR, 100 000 points, the protocol's float layout.
    let points: Vec<[f32; 4]> = (0..100_000)
        .map(|i| [i as f32 * 0.01, 1.0, -2.0, (i % 7) as f32])
        .collect();
    let sample = lidar::encode::protocol_float(1, 0, [1.0, 2.0, 3.0], [0.0, 0.0, 0.5], &points);
    let mut sample_dgrams = split_frame(HeaderKind::Frame32, 1, 1.0, &sample, MAX_PACKET_PAYLOAD);
    let mut r = Reassembler::new(Default::default());
    let took = median(runs, || {
        let p = reassemble_all(&mut r, &mut sample_dgrams, &mut t);
        black_box(decode_lidar(Bytes::from(p), 50.0).unwrap());
    });
    let (w, f) = memcpy_refs(sample.len(), runs);
    rows.push(Row {
        name: "LiDAR 100k, protocol float (1.6 MB)",
        bytes: sample.len(),
        took,
        memcpy_warm: w,
        memcpy_fresh: f,
        target: Some(2.0),
    });

    // LiDAR, 100 000 points, SDK int16 layout (output is twice the input).
    let sdk = lidar::encode::sdk_int16([1.0, 2.0, 3.0], [0.0, 0.0, 0.5], &points, 50.0);
    let mut sdk_dgrams = split_frame(HeaderKind::Frame32, 1, 1.0, &sdk, MAX_PACKET_PAYLOAD);
    let took = median(runs, || {
        let p = reassemble_all(&mut r, &mut sdk_dgrams, &mut t);
        black_box(decode_lidar(Bytes::from(p), 50.0).unwrap());
    });
    // The int16 path writes 16-byte points: compare with a copy of its output size.
    let (w, f) = memcpy_refs(points.len() * 16, runs);
    rows.push(Row {
        name: "LiDAR 100k, SDK int16 → f32 (0.8 → 1.6 MB)",
        bytes: points.len() * 16,
        took,
        memcpy_warm: w,
        memcpy_fresh: f,
        target: Some(4.0),
    });

    // 1920×1080 bgr8 raw from 60 000-byte datagrams.
    let (iw, ih) = (1920usize, 1080usize);
    let image = synthetic_bgr(iw, ih);
    let mut img_dgrams = split_frame(HeaderKind::Image24, 0, 1.0, &image, MAX_PACKET_PAYLOAD);
    let took = median(runs, || {
        let p = reassemble_all(&mut r, &mut img_dgrams, &mut t);
        black_box(raw_image(Bytes::from(p), iw as u32, ih as u32, Encoding::Bgr8).unwrap());
    });
    let (w, f) = memcpy_refs(image.len(), runs);
    rows.push(Row {
        name: "1920×1080 bgr8 raw, 104 datagrams (6.2 MB)",
        bytes: image.len(),
        took,
        memcpy_warm: w,
        memcpy_fresh: f,
        target: Some(2.0),
    });

    // 1080p JPEG decode: a render-like picture and a noisy worst case.
    let mut dec = JpegDecoder::new(1 << 26).unwrap();
    let (w, f) = memcpy_refs(image.len(), runs);
    let render = synthetic_render(iw, ih);
    let mut jpeg_sizes = Vec::new();
    for (name, pixels) in [
        ("1920×1080 JPEG → bgr8, render-like", &render),
        ("1920×1080 JPEG → bgr8, noisy", &image),
    ] {
        let jpeg = encode::jpeg(pixels, iw as u32, ih as u32, Encoding::Bgr8, 90).unwrap();
        jpeg_sizes.push(jpeg.len());
        let took = median(runs, || {
            black_box(dec.decode(black_box(&jpeg), Encoding::Bgr8).unwrap());
        });
        rows.push(Row {
            name,
            bytes: image.len(),
            took,
            memcpy_warm: w,
            memcpy_fresh: f,
            target: None,
        });
    }

    println!("rflysim_proto decode benchmark — median of {runs} runs; memcpy of the same bytes measured in this run");
    println!(
        "(JPEG at quality 90: render-like {} bytes, noisy {} bytes; target ≤ 6 ms)\n",
        jpeg_sizes[0], jpeg_sizes[1]
    );
    println!(
        "| case | time (ms) | GB/s | memcpy warm (ms) | memcpy fresh (ms) | × memcpy warm | × memcpy fresh | target |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    for r in &rows {
        let ratio_w = r.took.as_secs_f64() / r.memcpy_warm.as_secs_f64();
        let ratio_f = r.took.as_secs_f64() / r.memcpy_fresh.as_secs_f64();
        let target = match r.target {
            Some(x) => format!("≤ {x}× memcpy"),
            None => "≤ 6 ms".to_string(),
        };
        println!(
            "| {} | {:.3} | {:.2} | {:.3} | {:.3} | {:.2} | {:.2} | {} |",
            r.name,
            ms(r.took),
            r.bytes as f64 / r.took.as_secs_f64() / 1e9,
            ms(r.memcpy_warm),
            ms(r.memcpy_fresh),
            ratio_w,
            ratio_f,
            target
        );
    }
    println!("\nreassembler counters: {:?}", r.stats());
}
