//! `--send-log`: every frame and every IMU sample a receiver gets has its
//! line (stream, the stamp it carries, when it left), which latency
//! benchmarks match receipts to; lines of the sensor and CopterSim threads
//! never run into each other.

use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};

// Shared with tests/wire.rs, which uses the rest of it.
#[allow(dead_code)]
mod support;

use support::*;

fn wall() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Stamps in nanoseconds, the log's 9 decimals (the wire carries f64): in
/// microseconds a stamp on a half microsecond rounds one way from the wire
/// and the other from the log.
fn nanos(t: f64) -> i64 {
    (t * 1e9).round() as i64
}

#[test]
fn every_frame_and_imu_sample_received_has_its_line() {
    let copter: u16 = 9;
    let (camera_port, imu_port) = (41101, 41302);
    let camera = listener(camera_port);
    let imu = listener(imu_port);
    let dir = std::env::temp_dir().join(format!("rflysim_send_log_test_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("send.log");
    let _ = std::fs::remove_file(&log);
    let (_sim, _) = start(
        &config(&[camera_json(1, 1, 2, camera_port, 32, 24, 20)]),
        &[
            "--no-requests",
            "--copters",
            "9",
            "--gimbal-target",
            "none",
            "--send-log",
            log.to_str().unwrap(),
        ],
    );
    let samples = imu_samples(copter, &imu, imu_port, 100, wall);
    assert_eq!(samples.len(), 100);
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let got = frames(&camera, &mut r, 5, Duration::from_secs(10));
    assert_eq!(got.len(), 5);
    // The last lines are written just after their datagram left.
    std::thread::sleep(Duration::from_millis(200));

    let text = std::fs::read_to_string(&log).unwrap();
    let mut logged: HashSet<(String, i64)> = HashSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 3, "a whole line: {line:?}");
        let (stamp, left): (f64, f64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        assert!((left - wall()).abs() < 30.0, "{line:?}");
        logged.insert((f[0].to_string(), nanos(stamp)));
    }
    for (_, s) in &samples {
        assert!(
            logged.contains(&("imu9".into(), nanos(s.time_stamp))),
            "IMU {} not logged",
            s.time_stamp
        );
    }
    for f in &got {
        assert!(
            logged.contains(&("1".into(), nanos(f.time_stamp))),
            "frame {} not logged",
            f.time_stamp
        );
    }
}
