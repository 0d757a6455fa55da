//! The rate line the emulator prints every `--stats` seconds.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::shared::Running;

pub(crate) fn stats_loop(interval: Duration, run: Running) {
    let mut last: HashMap<u16, (u64, u64)> = HashMap::new();
    let mut last_t = Instant::now();
    while !run.stopping() {
        std::thread::sleep(Duration::from_millis(50));
        if last_t.elapsed() < interval {
            continue;
        }
        let dt = last_t.elapsed().as_secs_f64();
        last_t = Instant::now();
        let totals: Vec<(u16, u64, u64)> = run
            .shared
            .stats
            .lock()
            .unwrap()
            .iter()
            .map(|(seq, st)| {
                (
                    *seq,
                    st.frames.load(Ordering::Relaxed),
                    st.bytes.load(Ordering::Relaxed),
                )
            })
            .collect();
        let line = rates_line(&totals, &mut last, dt);
        if !line.is_empty() {
            crate::log::line(&line);
        }
    }
}

/// `sensor<N>: <frames/s> fps <MB/s> MB/s` for each (SeqID, frames, bytes)
/// total, from what `last` held `dt` seconds before (which it then holds).
fn rates_line(totals: &[(u16, u64, u64)], last: &mut HashMap<u16, (u64, u64)>, dt: f64) -> String {
    let mut line = String::new();
    for &(seq, f, b) in totals {
        let (pf, pb) = last.insert(seq, (f, b)).unwrap_or((0, 0));
        line += &format!(
            " sensor{seq}: {:.1} fps {:.2} MB/s;",
            (f - pf) as f64 / dt,
            (b - pb) as f64 / dt / 1e6
        );
    }
    line.trim_end_matches(';').trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_per_second_since_the_last_line() {
        let mut last = HashMap::new();
        let first = rates_line(&[(1, 30, 3_000_000), (7, 10, 0)], &mut last, 1.0);
        assert_eq!(first, "sensor1: 30.0 fps 3.00 MB/s; sensor7: 10.0 fps 0.00 MB/s");
        let second = rates_line(&[(1, 90, 4_000_000)], &mut last, 2.0);
        assert_eq!(second, "sensor1: 30.0 fps 0.50 MB/s");
        assert_eq!(rates_line(&[], &mut last, 1.0), "");
    }
}
