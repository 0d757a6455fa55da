//! The gimbal's command mapping and status without a node.

use super::*;
use rflysim_proto::config::{parse_config, AngleUnit};
use rflysim_proto::gimbal::{PROTOCOL_BITS, SDK_BITS};

/// A command's request from `state`, and the state once it has left.
fn ctrl_request(
    state: &GimbalCommandState,
    c: &Ctrl,
    bits: &GimbalBitTable,
) -> Result<(VisionSensorReq, GimbalCommandState), String> {
    ctrl_change(c, bits).map(|change| state.request(&change))
}

fn ai_request(
    state: &GimbalCommandState,
    ctrl_id: u8,
    pixel_pos: &[u32],
    bits: &GimbalBitTable,
) -> Result<VisionSensorReq, String> {
    ai_change(state, ctrl_id, pixel_pos, bits).map(|change| state.request(&change).0)
}

fn state() -> GimbalCommandState {
    let cfg = parse_config(
        r#"{"VisionSensors":[{"SeqID":6,"TypeID":9,"DataWidth":640,"DataHeight":360,"CameraFOV":60,"SensorAngEular":[0,-0.5,0]}]}"#,
        AngleUnit::Auto,
    )
    .unwrap();
    GimbalCommandState::new(&cfg[0])
}

#[test]
fn extreme_angles_are_refused_not_wrapped() {
    for (roll, pitch, yaw) in [(i32::MIN, 0, 0), (0, i32::MIN, 0), (0, 0, i32::MIN), (i32::MAX, 0, 0)] {
        let c = Ctrl {
            ctrl_type: 0x4,
            roll,
            pitch,
            yaw,
            ..Default::default()
        };
        let e = ctrl_request(&state(), &c, &PROTOCOL_BITS).unwrap_err();
        assert!(e.contains("outside"), "{e}");
    }
}

#[test]
fn attitude_fov_and_resolution_go_in_the_request_fields() {
    let c = Ctrl {
        ctrl_type: 0x7,
        width: 1280,
        height: 720,
        fov: 4550,
        roll: 0,
        pitch: -3000,
        yaw: 9000,
        ..Default::default()
    };
    let (r, next) = ctrl_request(&state(), &c, &PROTOCOL_BITS).unwrap();
    assert_eq!((r.data_width, r.data_height, r.camera_fov), (1280, 720, 45.5));
    assert!(
        (r.sensor_ang_eular[1] + 30f32.to_radians()).abs() < 1e-6
            && (r.sensor_ang_eular[2] - 90f32.to_radians()).abs() < 1e-6
    );
    assert_eq!(r.bitmask, 0, "the vision protocol has no bits for FOV and angles");
    assert_eq!(next.base.data_width, 1280);
    let (sdk, _) = ctrl_request(&state(), &c, &SDK_BITS).unwrap();
    assert_eq!(sdk.bitmask, 1 << 6 | 1 << 7);
}

#[test]
fn zoom_doubles_halves_and_steps() {
    let s = state();
    let zoom = |s: &GimbalCommandState, v| {
        ctrl_request(
            s,
            &Ctrl {
                ctrl_type: 0x8,
                optics_multiply: v,
                ..Default::default()
            },
            &PROTOCOL_BITS,
        )
        .unwrap()
    };
    let (r, s2) = zoom(&s, i32::MAX);
    assert_eq!((s2.zoom, r.other_params[4], r.bitmask), (2.0, 1.0, 1 << 7));
    let (_, s3) = zoom(&s2, i32::MAX);
    assert_eq!(s3.zoom, 4.0);
    let (_, s4) = zoom(&s3, i32::MIN);
    assert_eq!(s4.zoom, 2.0);
    let (r, s5) = zoom(&s4, 5);
    assert_eq!((s5.zoom, r.other_params[4]), (6.0, 5.0));
    let (r, _) = ctrl_request(
        &s,
        &Ctrl {
            ctrl_type: 0x8,
            optics_multiply: 1,
            base_optics: 10,
            ..Default::default()
        },
        &PROTOCOL_BITS,
    )
    .unwrap();
    assert_eq!((r.bitmask, r.other_params[5]), (1 << 7 | 1 << 13, 10.0));
}

#[test]
fn centring_rates_and_the_other_controls() {
    let c = Ctrl {
        ctrl_type: 0x70,
        others: vec![1, -1, 1500, 1, 250, 3, 1, 2],
        ..Default::default()
    };
    let (r, _) = ctrl_request(&state(), &c, &PROTOCOL_BITS).unwrap();
    assert_eq!(r.bitmask, 1 << 5 | 1 << 6 | 1 << 8 | 1 << 9 | 1 << 10);
    assert_eq!(r.other_params[1], 1.0);
    assert!(
        (r.other_params[3] + 15f32.to_radians()).abs() < 1e-6,
        "yaw left at 15°/s"
    );
    assert!(
        (r.other_params[2] - 2.5f32.to_radians()).abs() < 1e-6,
        "pitch up at 2.5°/s"
    );
    assert_eq!(
        (r.other_params[5], r.other_params[6], r.other_params[7]),
        (3.0, 1.0, 2.0)
    );
}

#[test]
fn invalid_commands_are_refused() {
    let bad = |c: Ctrl| ctrl_request(&state(), &c, &PROTOCOL_BITS).unwrap_err();
    assert!(bad(Ctrl {
        ctrl_type: 0x80,
        ..Default::default()
    })
    .contains("unknown bits"));
    assert!(bad(Ctrl {
        ctrl_type: 0x2,
        fov: 0,
        ..Default::default()
    })
    .contains("fov"));
    assert!(bad(Ctrl {
        ctrl_type: 0x2,
        fov: 20_000,
        ..Default::default()
    })
    .contains("fov"));
    assert!(bad(Ctrl {
        ctrl_type: 0x1,
        width: 70_000,
        height: 10,
        ..Default::default()
    })
    .contains("resolution"));
    assert!(bad(Ctrl {
        ctrl_type: 0x4,
        pitch: 9_001,
        ..Default::default()
    })
    .contains("pitch"));
    assert!(bad(Ctrl {
        ctrl_type: 0x8,
        optics_multiply: -5,
        ..Default::default()
    })
    .contains("optics_multiply"));
    assert!(bad(Ctrl {
        ctrl_type: 0x8,
        base_optics: 2,
        ..Default::default()
    })
    .contains("base_optics"));
    assert!(bad(Ctrl {
        others: vec![2],
        ..Default::default()
    })
    .contains("centring"));
    assert!(bad(Ctrl {
        others: vec![0, 2],
        ..Default::default()
    })
    .contains("yaw direction"));
    assert!(bad(Ctrl {
        others: vec![0, 1, -5],
        ..Default::default()
    })
    .contains("yaw rate"));
    assert!(bad(Ctrl {
        others: vec![0; 9],
        ..Default::default()
    })
    .contains("at most 8"));
    assert!(bad(Ctrl {
        ctrl_type: 0x40,
        others: vec![0, 0, 0, 0, 0, 0, 0, 3],
        ..Default::default()
    })
    .contains("light source"));
    // The SDK numbering has no light-source bit.
    assert!(ctrl_request(
        &state(),
        &Ctrl {
            ctrl_type: 0x40,
            ..Default::default()
        },
        &SDK_BITS
    )
    .unwrap_err()
    .contains("no bit"));
}

#[test]
fn ai_box_select() {
    let r = ai_request(&state(), 0, &[], &PROTOCOL_BITS).unwrap();
    assert_eq!((r.bitmask, r.other_params[8]), (1 << 11, 1.0));
    let r = ai_request(&state(), 1, &[320, 100], &PROTOCOL_BITS).unwrap();
    assert_eq!(
        (r.other_params[8], r.other_params[9], r.other_params[10]),
        (2.0, 320.0, 100.0)
    );
    assert!(ai_request(&state(), 1, &[1], &PROTOCOL_BITS).is_err());
    assert!(ai_request(&state(), 1, &[700, 1], &PROTOCOL_BITS).is_err());
    assert!(ai_request(&state(), 0, &[1, 2], &PROTOCOL_BITS).is_err());
    assert!(ai_request(&state(), 2, &[], &PROTOCOL_BITS).is_err());
    assert!(ai_request(&state(), 0, &[], &SDK_BITS).is_err());
}

/// A bounded fuzz run of the command mapping: random and extreme fields
/// never panic, a refused command leaves the state as it was, and a good
/// command after any refused one maps exactly as it would alone.
#[test]
fn fuzzed_commands_never_panic_and_refusals_change_nothing() {
    let extremes = [i32::MIN, i32::MIN + 1, -1, 0, 1, 9_000, 18_001, i32::MAX];
    let mut rng = process_support::seeded_rng::Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = || rng.next_u64();
    let good = Ctrl {
        ctrl_type: 0x7,
        width: 1280,
        height: 720,
        fov: 4550,
        pitch: -3000,
        yaw: 9000,
        ..Default::default()
    };
    let (expected, _) = ctrl_request(&state(), &good, &PROTOCOL_BITS).unwrap();
    let mut st = state();
    for i in 0..20_000 {
        let mut pick = || {
            let r = next();
            if r % 3 == 0 {
                extremes[(r >> 8) as usize % extremes.len()]
            } else {
                (r >> 16) as i32
            }
        };
        let c = Ctrl {
            ctrl_type: pick() as u8,
            height: pick() as u32,
            width: pick() as u32,
            fov: pick() as u32,
            roll: pick(),
            pitch: pick(),
            yaw: pick(),
            optics_multiply: pick(),
            base_optics: pick() as u32,
            others: (0..(pick() as u32 % 10)).map(|_| pick()).collect(),
        };
        let bits = if i % 2 == 0 { &PROTOCOL_BITS } else { &SDK_BITS };
        if let Ok((req, next_state)) = ctrl_request(&st, &c, bits) {
            assert!(req.sensor_ang_eular.iter().all(|a| a.is_finite() && a.abs() <= 3.15));
            st = next_state;
        }
        let before = st.clone();
        if ctrl_request(&st, &c, bits).is_err() {
            assert_eq!(st, before);
        }
        // The good command maps the same from the start state, whatever came before it.
        assert_eq!(
            ctrl_request(&state(), &good, &PROTOCOL_BITS).unwrap().0,
            expected,
            "after {i}"
        );
    }
}

#[test]
fn zoom_changes_compose_as_applied_one_after_the_other() {
    let mut rng = process_support::seeded_rng::Rng::new(11);
    let pick = |r: u64| match r % 4 {
        0 => ZoomChange::double(),
        1 => ZoomChange::halve(),
        _ => ZoomChange::set(1.0 + (r >> 8) as f64 % 1000.0),
    };
    for _ in 0..2_000 {
        let changes: Vec<ZoomChange> = (0..1 + rng.below(30)).map(|_| pick(rng.next_u64())).collect();
        let composed = changes[1..].iter().fold(changes[0], |c, n| c.then(*n));
        for start in [1.0, 3.0, 500.0, 1000.0] {
            let stepwise = changes.iter().fold(start, |z, c| c.apply(z));
            assert_eq!(composed.apply(start), stepwise, "{changes:?} from ×{start}");
        }
    }
}

#[test]
fn commands_waiting_together_leave_as_they_would_one_after_the_other() {
    let bits = &PROTOCOL_BITS;
    let change = |c: Ctrl| ctrl_change(&c, bits).unwrap();
    let fov = change(Ctrl {
        ctrl_type: 0x2 | 0x8,
        fov: 4000,
        optics_multiply: i32::MAX,
        ..Default::default()
    });
    let turn = change(Ctrl {
        ctrl_type: 0x4 | 0x8,
        pitch: -4500,
        optics_multiply: i32::MAX,
        others: vec![0, 1, 1500, 0, 0],
        ..Default::default()
    });
    let s = state();
    let (_, after_fov) = s.request(&fov);
    let (alone, after_both) = after_fov.request(&turn);
    let (together, after_together) = s.request(&fov.then(turn, bits));
    assert_eq!(together, alone, "the FOV, both doublings and the rate");
    assert_eq!(after_together, after_both);
    assert_eq!((together.camera_fov, after_together.zoom), (40.0, 4.0));
}

#[test]
fn the_state_changes_only_by_a_request_that_leaves() {
    let s = state();
    let pitch_down = ctrl_change(
        &Ctrl {
            ctrl_type: 0x4,
            pitch: -9000,
            ..Default::default()
        },
        &PROTOCOL_BITS,
    )
    .unwrap();
    let (req, next) = s.request(&pitch_down);
    assert_eq!(s, state(), "working out a request changes nothing");
    assert!((req.sensor_ang_eular[1] + 90f32.to_radians()).abs() < 1e-6);
    assert_eq!(next.base.sensor_ang_eular, req.sensor_ang_eular);
    // The neutral: the rates bit alone, both 0, on the angles of the state it is sent from.
    let (stop, _) = s.request(&GimbalChange::stop_rates(&PROTOCOL_BITS));
    assert!(rflysim_proto::gimbal::stops_rates_only(&stop, &PROTOCOL_BITS));
    assert_eq!(stop.sensor_ang_eular, s.base.sensor_ang_eular);
    assert!(!GimbalChange::stop_rates(&PROTOCOL_BITS).moves(&PROTOCOL_BITS));
    let turning = ctrl_change(
        &Ctrl {
            others: vec![0, -1, 100, 0, 0],
            ..Default::default()
        },
        &PROTOCOL_BITS,
    )
    .unwrap();
    assert!(turning.moves(&PROTOCOL_BITS));
}
