//! A bounded, deterministic in-process fuzz run of AeroSim's decoders (CI
//! runs it with the other tests; `RFLYSIM_FUZZ_ITERS` makes it longer):
//! valid records mutated by bit flips, truncation, extension, splicing,
//! JSON-aware token swaps (binary extremes for the image records) and
//! random bytes.
//!
//! Checked: no panic; no single allocation above a bound linear in the
//! largest input (a counting global allocator); and recovery: good records
//! interleaved with the mutated ones each decode exactly as they do alone.

use aerosim_proto::envelope::{decode_envelope, encode_envelope, TimeStamp};
use aerosim_proto::frames::quaternion_from_roll_pitch_yaw;
use aerosim_proto::image::{decode_image, encode_image, CompressedImage, ImageFormat};
use aerosim_proto::types::{
    check_finite, ActorState, AutopilotCommand, AutopilotFlightPlanCommand, FlightControlCommand, HsiMode, JsonData,
    Pose, PrimaryFlightDisplayData, Quaternion, Vector3, VehicleState,
};
use fuzz_harness::{one_at_a_time, run_recovering, CountingAlloc, Mutations, Overwrite, JSON_TOKENS};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const EXTREMES: [[u8; 4]; 6] = [
    [0xFF; 4],
    [0; 4],
    [0x00, 0x00, 0x00, 0x80],
    [0xFF, 0xFF, 0xFF, 0x7F],
    [0x01, 0x00, 0x00, 0x00],
    [0x00, 0x10, 0x00, 0x00],
];

fn state() -> VehicleState {
    let q = quaternion_from_roll_pitch_yaw(0.1, -0.05, 1.2);
    let v = |x, y, z| Vector3 { x, y, z };
    VehicleState {
        state: ActorState {
            pose: Pose {
                position: v(120.5, -40.25, -300.0),
                orientation: Quaternion {
                    w: q[0],
                    x: q[1],
                    y: q[2],
                    z: q[3],
                },
            },
        },
        velocity: v(35.0, 12.0, -1.5),
        angular_velocity: v(0.01, 0.02, 0.1),
        acceleration: v(0.3, 0.0, -0.1),
        angular_acceleration: v(0.0, 0.0, 0.0),
    }
}

/// One decoded record of any of the JSON types, to compare recoveries with.
#[derive(Debug, PartialEq)]
enum Decoded {
    State(VehicleState),
    Display(PrimaryFlightDisplayData),
    Control(FlightControlCommand),
    Autopilot(AutopilotCommand),
    Json(JsonData),
}

/// Tries every type, as the bridge's topics do, and returns what decoded.
fn decode_any(d: &[u8], max: usize) -> Vec<Decoded> {
    let mut out = Vec::new();
    if let Ok(e) = decode_envelope::<VehicleState>(d, max) {
        out.push(Decoded::State(e.data));
    }
    if let Ok(e) = decode_envelope::<PrimaryFlightDisplayData>(d, max) {
        out.push(Decoded::Display(e.data));
    }
    if let Ok(e) = decode_envelope::<FlightControlCommand>(d, max) {
        out.push(Decoded::Control(e.data));
    }
    if let Ok(e) = decode_envelope::<AutopilotCommand>(d, max) {
        out.push(Decoded::Autopilot(e.data));
    }
    if let Ok(e) = decode_envelope::<JsonData>(d, max) {
        out.push(Decoded::Json(e.data));
    }
    out
}

fn json_samples() -> Vec<Vec<u8>> {
    let sim = TimeStamp::from_seconds(12.5);
    let platform = TimeStamp::from_seconds(1_764_000_000.25);
    vec![
        encode_envelope("aerosim.actor1.vehicle_state", &state(), sim, platform),
        encode_envelope(
            "aerosim.actor1.primary_flight_display_data",
            &PrimaryFlightDisplayData {
                airspeed_kts: 80.0,
                altitude_ft: 1000.0,
                hsi_mode: HsiMode::Vor2,
                ..Default::default()
            },
            sim,
            platform,
        ),
        encode_envelope(
            "aerosim.actor1.flight_control_command",
            &FlightControlCommand {
                power_cmd: vec![0.5, 0.25],
                roll_cmd: -0.2,
                ..Default::default()
            },
            TimeStamp::UNSET,
            platform,
        ),
        encode_envelope(
            "aerosim.actor1.autopilot_command",
            &AutopilotCommand {
                flight_plan: "{\"waypoints\": []}".into(),
                flight_plan_command: AutopilotFlightPlanCommand::Run,
                altitude_hold: true,
                altitude_setpoint_ft: 1500.0,
                ..Default::default()
            },
            sim,
            platform,
        ),
        encode_envelope(
            "aerosim.clock",
            &JsonData::new(&serde_json::json!({"tick": 5})),
            sim,
            platform,
        ),
    ]
}

#[test]
fn envelopes_decode_and_recover() {
    let _one = one_at_a_time();
    let corpus = json_samples();
    let expected: Vec<Vec<Decoded>> = corpus.iter().map(|s| decode_any(s, 1 << 16)).collect();
    // Each sample decodes as exactly its own type.
    assert!(expected.iter().all(|d| d.len() == 1), "{expected:?}");
    let (mut ok, mut err) = (0usize, 0usize);
    let mutations = Mutations {
        overwrite: Overwrite::Tokens(&JSON_TOKENS),
        max_rounds: 3,
        max_garbage: 300,
    };
    run_recovering(
        "envelope",
        "RFLYSIM_FUZZ_ITERS",
        &corpus,
        &mutations,
        64,
        |d| {
            let decoded = decode_any(d, 1 << 16);
            // A record is one type or none: never two.
            assert!(decoded.len() <= 1);
            match decoded.first() {
                Some(Decoded::State(s)) => {
                    ok += 1;
                    // A mutated state that passes the check converts without overflow.
                    if check_finite(s).is_ok() {
                        assert!(s.velocity.x.abs() <= 1e150);
                    }
                }
                Some(_) => ok += 1,
                None => err += 1,
            }
        },
        |i, good| assert_eq!(decode_any(good, 1 << 16), expected[i]),
    );
    assert!(
        ok > 100 && err > 100,
        "mutations should both decode and fail: {ok} ok, {err} errors"
    );
}

#[test]
fn image_records_decode_and_recover() {
    let _one = one_at_a_time();
    let jpeg = |n: usize| {
        let mut j = vec![0xFF, 0xD8, 0xFF, 0xE0];
        j.extend((0..n).map(|i| (i * 7 % 251) as u8));
        j.extend([0xFF, 0xD9]);
        j
    };
    let corpus: Vec<Vec<u8>> = [
        (10, ImageFormat::Jpeg),
        (700, ImageFormat::Jpeg),
        (300, ImageFormat::Png),
    ]
    .into_iter()
    .map(|(n, format)| {
        encode_image(
            "aerosim.renderer.responses",
            TimeStamp::UNSET,
            TimeStamp::from_seconds(1_764_000_000.5),
            &CompressedImage { format, data: jpeg(n) },
        )
    })
    .collect();
    let expected: Vec<_> = corpus.iter().map(|s| decode_image(s, 1 << 16).unwrap()).collect();
    let max = 1 << 12;
    let mutations = Mutations {
        overwrite: Overwrite::Extremes(&EXTREMES),
        max_rounds: 3,
        max_garbage: 300,
    };
    let (mut ok, mut err) = (0usize, 0usize);
    run_recovering(
        "image",
        "RFLYSIM_FUZZ_ITERS",
        &corpus,
        &mutations,
        2,
        |d| match decode_image(d, max) {
            Ok((_, img)) => {
                ok += 1;
                assert!(!img.data.is_empty() && img.data.len() <= max && img.data.len() < d.len());
            }
            Err(_) => err += 1,
        },
        |i, good| assert_eq!(decode_image(good, 1 << 16).unwrap(), expected[i]),
    );
    assert!(
        ok > 50 && err > 50,
        "mutations should both decode and fail: {ok} ok, {err} errors"
    );
}
