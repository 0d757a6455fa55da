//! A bounded, deterministic in-process fuzz run of every decoder (CI runs it
//! with the other tests; `RFLYSIM_FUZZ_ITERS` makes it longer). Inputs are
//! valid messages mutated by bit flips, truncation, extension, splicing,
//! JSON-aware token swaps and overwriting with random bytes.
//!
//! Checked: no panic; no single allocation above a bound linear in the
//! largest input (a counting global allocator); and recovery: good messages
//! interleaved with the mutated ones each decode exactly as they do alone.

use fuzz_harness::{one_at_a_time, run_recovering, CountingAlloc, Mutations, Overwrite, JSON_TOKENS};

use gps_denied_proto::image::{decode_base64_jpeg, encode_base64};
use gps_denied_proto::{
    parse_telemetry, CameraGeometry, Command, DroneTelemetry, Euler, LandingPad, Limits, PadReport, Parsed,
    RoverTelemetry, Telemetry, Vector3,
};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// JSON tokens over short runs; rounds and garbage as the RflySim wire's run.
const MUTATIONS: Mutations<'static> = Mutations {
    overwrite: Overwrite::Tokens(&JSON_TOKENS),
    max_rounds: 4,
    max_garbage: 200,
};

fn jpeg_like(n: usize) -> Vec<u8> {
    let mut j = vec![0xFF, 0xD8, 0xFF, 0xE0];
    j.extend((0..n).map(|i| (i * 7 % 251) as u8));
    j
}

fn telemetry_seeds() -> Vec<Vec<u8>> {
    let full = DroneTelemetry {
        orientation: Some(Euler {
            roll: 0.01,
            pitch: -0.02,
            yaw: 1.5,
        }),
        angular_velocity: Some(Vector3::new(0.1, 0.2, 0.3)),
        linear_acceleration: Some(Vector3::new(0.0, 0.1, 9.81)),
        altitude: Some(4.2),
        vertical_velocity: Some(-0.3),
        velocity: Some(Vector3::new(0.5, -0.1, -0.3)),
        landing_pad: Some(PadReport::Detected(LandingPad {
            relative_x: 0.4,
            relative_y: -0.7,
            distance: 3.9,
            confidence: 0.8,
        })),
        camera: Some(CameraGeometry {
            width: 320,
            height: 240,
            fov_deg: 60.0,
        }),
        image: Some(jpeg_like(600)),
        landed: Some(false),
        timestamp: Some(12.48),
    };
    let no_image = DroneTelemetry {
        image: None,
        landing_pad: Some(PadReport::NotVisible),
        ..full.clone()
    };
    let rover = RoverTelemetry {
        position: Some(Vector3::new(1.5, 0.8, 0.15)),
        velocity: Some(Vector3::new(0.3, 0.4, 0.0)),
        pattern: Some("figure8".into()),
        timestamp: Some(1.234),
    };
    vec![
        full.encode(),
        no_image.encode(),
        rover.encode(),
        br#"{"imu": {"orientation": {"roll": NaN, "pitch": 0, "yaw": 0}}, "altimeter": {"altitude": Infinity}, "timestamp": 3}"#
            .to_vec(),
        br#"{"camera": {"width": 320, "height": 240, "fov": 60, "image": "/9j/4AAQSkZJRg=="}, "landed": true}"#.to_vec(),
    ]
}

#[test]
fn telemetry_parser_and_recovery() {
    let _one = one_at_a_time();
    let limits = Limits::default();
    let seeds = telemetry_seeds();
    let expected: Vec<Parsed> = seeds.iter().map(|s| parse_telemetry(s, &limits).unwrap()).collect();
    let (mut ok, mut err) = (0usize, 0usize);
    // serde_json's Value: a few words per input byte at most (arrays of one-byte numbers).
    run_recovering(
        "telemetry",
        "RFLYSIM_FUZZ_ITERS",
        &seeds,
        &MUTATIONS,
        64,
        |d| match parse_telemetry(d, &limits) {
            Ok(p) => {
                ok += 1;
                if let Telemetry::Drone(t) = &p.telemetry {
                    if let Some(j) = &t.image {
                        assert!(j.starts_with(&[0xFF, 0xD8, 0xFF]) && j.len() <= d.len());
                    }
                    if let Some(c) = t.camera {
                        assert!(c.width >= 1 && c.height >= 1 && c.fov_deg > 0.0 && c.fov_deg < 180.0);
                    }
                }
            }
            Err(_) => err += 1,
        },
        |i, good| assert_eq!(parse_telemetry(good, &limits).unwrap(), expected[i]),
    );
    assert!(
        ok > 100 && err > 100,
        "mutations should both parse and fail: {ok} ok, {err} errors"
    );
}

#[test]
fn small_limits_bound_what_is_decoded() {
    let _one = one_at_a_time();
    let limits = Limits {
        max_message_bytes: 2048,
        max_image_base64_bytes: 256,
    };
    let seeds = telemetry_seeds();
    run_recovering(
        "limits",
        "RFLYSIM_FUZZ_ITERS",
        &seeds,
        &MUTATIONS,
        64,
        |d| {
            if let Ok(Parsed {
                telemetry: Telemetry::Drone(t),
                ..
            }) = parse_telemetry(d, &limits)
            {
                assert!(d.len() <= 2048);
                assert!(t.image.is_none_or(|j| j.len() <= 192));
            }
        },
        |_, _| {},
    );
}

#[test]
fn command_decoder_and_recovery() {
    let _one = one_at_a_time();
    let seeds: Vec<Vec<u8>> = [(0.5, 0.1, -0.2, 0.0), (-1.0, 0.5, -0.5, 0.25), (0.0, 0.0, 0.0, 0.0)]
        .iter()
        .map(|&(t, p, r, y)| Command::new(t, p, r, y).unwrap().encode())
        .chain([br#"{"yaw": 0.1, "roll": 0, "pitch": -0.4, "thrust": 1, "mode": "x"}"#.to_vec()])
        .collect();
    let expected: Vec<Command> = seeds.iter().map(|s| Command::decode(s).unwrap()).collect();
    run_recovering(
        "command",
        "RFLYSIM_FUZZ_ITERS",
        &seeds,
        &MUTATIONS,
        64,
        |d| {
            if let Ok(c) = Command::decode(d) {
                assert!(c.thrust().abs() <= 1.0 && c.pitch().abs() <= 0.5);
                assert!(c.roll().abs() <= 0.5 && c.yaw().abs() <= 0.5);
                assert_eq!(Command::decode(&c.encode()).unwrap(), c);
            }
        },
        |i, good| assert_eq!(Command::decode(good).unwrap(), expected[i]),
    );
}

#[test]
fn base64_image_decoder() {
    let _one = one_at_a_time();
    let seeds: Vec<Vec<u8>> = [10, 200, 1000]
        .into_iter()
        .map(|n| encode_base64(&jpeg_like(n)).into_bytes())
        .collect();
    let max = 1024;
    run_recovering(
        "base64",
        "RFLYSIM_FUZZ_ITERS",
        &seeds,
        &MUTATIONS,
        4,
        |d| {
            if let Ok(text) = std::str::from_utf8(d) {
                if let Ok(j) = decode_base64_jpeg(text, max) {
                    assert!(text.len() <= max && j.len() <= text.len() * 3 / 4 + 3);
                }
            }
        },
        |_, good| {
            assert!(decode_base64_jpeg(std::str::from_utf8(good).unwrap(), 1 << 16).is_ok());
        },
    );
}
