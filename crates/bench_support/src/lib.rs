//! What the end-to-end benchmarks (`rflysim_ros`, `auv_ros`,
//! `gps_denied_ros`) share: the processes they start, the CPU time and
//! machine load they read from `/proc`, the kernel's UDP drops, and
//! percentiles. Benchmarks only (a dev-dependency); Linux only.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Wall-clock seconds since the Unix epoch: the clock the emulators' send
/// logs and the subscribers' receipts share across processes.
pub fn wall() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Where `cargo build --release` put the workspace's executables.
pub fn release_bin_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")));
    target.join("release")
}

/// A child process sent SIGINT when dropped (the way a user stops it), and
/// killed if it has not exited 5 s later.
#[derive(Debug)]
pub struct StoppedOnDrop(pub Child);

impl StoppedOnDrop {
    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for StoppedOnDrop {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-INT", &self.0.id().to_string()]).status();
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// User + system CPU seconds of a process so far (`/proc/<pid>/stat`,
/// clock ticks of 1/100 s); 0 once it is gone.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name may hold spaces and parentheses: count fields after the last ')'.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// The 1-minute load average.
pub fn load_average() -> f64 {
    loadavg_line()
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// `/proc/loadavg` as it reads: on a shared machine, figures taken under a
/// high load are to be repeated.
pub fn loadavg_line() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The machine's cores, as the benchmarks' headers state them.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(0, usize::from)
}

/// Datagrams the kernel dropped for full receive buffers, machine-wide
/// (`RcvbufErrors` of `/proc/net/snmp`).
pub fn udp_rcvbuf_errors() -> u64 {
    let snmp = std::fs::read_to_string("/proc/net/snmp").unwrap_or_default();
    let lines: Vec<&str> = snmp.lines().filter(|l| l.starts_with("Udp:")).collect();
    if lines.len() < 2 {
        return 0;
    }
    let names: Vec<&str> = lines[0].split_whitespace().collect();
    let values: Vec<&str> = lines[1].split_whitespace().collect();
    names
        .iter()
        .position(|n| *n == "RcvbufErrors")
        .and_then(|i| values.get(i))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The `p` quantile (0..=1, nearest rank) of an ascending slice; NaN when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        assert_eq!(
            (percentile(&v, 0.5), percentile(&v, 0.99), percentile(&v, 1.0)),
            (51.0, 100.0, 101.0)
        );
        assert!(percentile(&[], 0.5).is_nan());
    }

    #[test]
    fn own_cpu_time_grows_while_spinning() {
        let pid = std::process::id();
        let before = cpu_seconds(pid);
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        assert!(cpu_seconds(pid) - before >= 0.1, "{before} → {}", cpu_seconds(pid));
        assert_eq!(cpu_seconds(u32::MAX), 0.0);
    }

    #[test]
    fn proc_readings_are_present() {
        assert!(load_average() >= 0.0);
        assert!(cores() >= 1);
        assert!(std::fs::read_to_string("/proc/net/snmp").is_ok_and(|s| s.contains("RcvbufErrors")));
    }
}
