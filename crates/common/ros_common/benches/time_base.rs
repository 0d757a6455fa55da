//! What the time base costs a sample on its own: one stream's
//! `StreamClock::stamp_at` on a shared `TimeBase` (the order check, the
//! epoch and pace estimates, the stamp) over a synthetic series of 1000 Hz
//! samples with a few hundred microseconds of arrival jitter. Next to it, in
//! the same run, the floor every stamp pays: reading this machine's clock
//! and making a ROS `Time` of it. The cases: a simulator keeping real time,
//! one at 10× and at 0.1× its pace, and each with `use_sim_time`.
//!
//! `cargo bench -p ros_common --bench time_base`; prints a table, asserts
//! nothing. `RFLYSIM_BENCH_SAMPLES` sets the samples a case (default 2 000 000).

use std::hint::black_box;
use std::time::Instant;

use ros_common::time::{to_ros_time, wall_now, StreamClock, TimeBase};

/// Arrival jitter: a fixed pseudo-random series, the same every run.
fn jitter(i: u64) -> f64 {
    let x = i.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (x >> 40) as f64 / (1u64 << 24) as f64 * 400e-6
}

/// Nanoseconds a sample of `samples`, sim time running at `pace`.
fn stamp_case(use_sim_time: bool, pace: f64, samples: u64) -> f64 {
    let base = TimeBase::new(use_sim_time);
    let mut clock = StreamClock::new("bench imu", "time_base_bench");
    let t0 = 1.8e9;
    let start = Instant::now();
    for i in 0..samples {
        let wall = t0 + i as f64 * 1e-3 + jitter(i);
        let sim = i as f64 * 1e-3 * pace;
        let _ = black_box(clock.stamp_at(&base, black_box(sim), wall));
    }
    start.elapsed().as_secs_f64() * 1e9 / samples as f64
}

/// The floor: this machine's clock read and made a ROS `Time`.
fn clock_floor(samples: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..samples {
        black_box(to_ros_time(wall_now()));
    }
    start.elapsed().as_secs_f64() * 1e9 / samples as f64
}

fn main() {
    let samples: u64 = std::env::var("RFLYSIM_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let floor = clock_floor(samples);
    println!("time base: one stream's stamp_at, {samples} samples at 1000 Hz a case");
    println!();
    println!("| case | ns a sample | over the floor (ns) |");
    println!("|---|---:|---:|");
    println!("| floor: this machine's clock read, made a ROS Time | {floor:.0} | – |");
    for (use_sim_time, pace, name) in [
        (false, 1.0, "real time, this machine's clock"),
        (false, 10.0, "10× real time, this machine's clock"),
        (false, 0.1, "0.1× real time, this machine's clock"),
        (true, 1.0, "real time, use_sim_time"),
        (true, 10.0, "10× real time, use_sim_time"),
        (true, 0.1, "0.1× real time, use_sim_time"),
    ] {
        let ns = stamp_case(use_sim_time, pace, samples);
        println!("| {name} | {ns:.0} | {:.0} |", ns - floor);
    }
}
