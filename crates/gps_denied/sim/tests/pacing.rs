//! The emulator keeps the rate it is asked for, also above the few hundred
//! hertz that a socket timeout (counted in kernel ticks of up to 4 ms) can
//! pace: benchmarks run it at rates their consumers just keep up with.

use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;

use gps_denied_sim::emulator::{run, Options};

/// Frames sent in `seconds` at `rate_hz`, to a socket nobody reads (the
/// kernel drops what does not fit: the sender does not notice).
fn frames_sent(rate_hz: f64, seconds: f64) -> u64 {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let options = Options {
        bind: "127.0.0.1:0".parse().unwrap(),
        target: sink.local_addr().unwrap(),
        rate_hz,
        reuse_image: true,
        duration: Some(seconds),
        stats_interval: None,
        ..Options::default()
    };
    let counts = run(&options, &AtomicBool::new(false), &mut std::io::sink()).unwrap();
    counts.frames
}

#[test]
fn a_rate_of_a_thousand_hertz_is_kept() {
    let frames = frames_sent(1000.0, 1.5);
    // A stall of the machine is caught up (up to STALL_S), so only a much
    // longer one could lose frames here.
    assert!((1350..=1520).contains(&frames), "{frames} frames in 1.5 s at 1000 Hz");
}

#[test]
fn the_simulators_own_rate_is_kept() {
    let frames = frames_sent(25.0, 1.0);
    assert!((24..=26).contains(&frames), "{frames} frames in 1 s at 25 Hz");
}
