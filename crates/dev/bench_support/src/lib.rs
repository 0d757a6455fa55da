//! What the end-to-end benchmarks (`rflysim_ros`, `auv_ros`,
//! `gps_denied_ros`, `aerosim_ros`) share: the processes they start, the CPU
//! time, memory and machine load they read from `/proc`, the kernel's UDP
//! drops, percentiles, the emulators' send logs and the pacing of a
//! "DDS alone" publisher. Benchmarks only (a
//! dev-dependency); Linux only.

pub mod netns;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
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
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../target")));
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

/// A benchmark's Python reference (`$RFLYSIM_PYTHON`, else `python3`):
/// `script` with `args`, its ROS names under `namespace`, output discarded.
pub fn start_python_reference(script: &Path, args: &[&str], namespace: &str) -> StoppedOnDrop {
    let python = std::env::var("RFLYSIM_PYTHON").unwrap_or_else(|_| "python3".into());
    StoppedOnDrop(
        Command::new(python)
            .arg(script)
            .args(args)
            .args(["--ros-args", "-r", &format!("__ns:={namespace}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("the Python reference {} ($RFLYSIM_PYTHON): {e}", script.display())),
    )
}

/// This benchmark's executable again, as its "DDS alone" publisher
/// (`--dds-alone NAMESPACE LOG`; [`dds_alone_arguments`] reads them).
pub fn start_dds_alone(namespace: &str, log: &Path) -> StoppedOnDrop {
    StoppedOnDrop(
        Command::new(std::env::current_exe().expect("the benchmark's own path"))
            .args(["--dds-alone", namespace])
            .arg(log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("this benchmark as the DDS-alone publisher"),
    )
}

/// The namespace and send-log path when this process is a benchmark's
/// "DDS alone" publisher ([`start_dds_alone`]).
pub fn dds_alone_arguments() -> Option<(String, PathBuf)> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == "--dds-alone")?;
    Some((args.get(i + 1)?.clone(), PathBuf::from(args.get(i + 2)?)))
}

/// What this run of an end-to-end bench is: `cargo test`'s listing (nothing
/// to do), a "DDS alone" child ([`start_dds_alone`]: its namespace and send
/// log), or the bench itself. DDS stays on this host unless
/// `ROS_AUTOMATIC_DISCOVERY_RANGE` says otherwise.
#[derive(Debug)]
pub enum BenchRole {
    Listing,
    DdsAlone(String, PathBuf),
    Bench,
}

pub fn bench_role() -> BenchRole {
    if std::env::args().any(|a| a == "--list") {
        return BenchRole::Listing;
    }
    if std::env::var_os("ROS_AUTOMATIC_DISCOVERY_RANGE").is_none() {
        std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    }
    match dds_alone_arguments() {
        Some((namespace, log)) => BenchRole::DdsAlone(namespace, log),
        None => BenchRole::Bench,
    }
}

/// A ROS time of `seconds`.
pub fn ros_time(seconds: f64) -> (i32, u32) {
    (
        seconds.floor() as i32,
        ((seconds - seconds.floor()) * 1e9).round() as u32,
    )
}

/// User + system CPU seconds of a process so far, to the nanosecond (its
/// CPU-time clock, `clock_getcpuclockid`: every thread, ended ones too);
/// from `/proc/<pid>/stat` in clock ticks of 1/100 s where that clock
/// cannot be read; 0 once the process is gone. Ticks were too coarse: one
/// is 6 % of a 100k-point LiDAR bridge's CPU over an 8-s window at 20 Hz.
pub fn cpu_seconds(pid: u32) -> f64 {
    cpu_clock_seconds(pid).unwrap_or_else(|| cpu_tick_seconds(pid))
}

fn cpu_clock_seconds(pid: u32) -> Option<f64> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid out-pointer; the call only looks the process up.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    if unsafe { libc::clock_gettime(clock, &mut t) } != 0 {
        return None;
    }
    Some(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
}

fn cpu_tick_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name may hold spaces and parentheses: count fields after the last ')'.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// Resident memory of a process in bytes (`VmRSS` of `/proc/<pid>/status`);
/// 0 once it is gone.
pub fn rss_bytes(pid: u32) -> u64 {
    status_bytes(pid, "VmRSS:")
}

/// Peak resident memory of a process in bytes (`VmHWM`); 0 once it is gone.
pub fn peak_rss_bytes(pid: u32) -> u64 {
    status_bytes(pid, "VmHWM:")
}

/// A `kB` field of `/proc/<pid>/status` in bytes; 0 once the process is gone.
fn status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Seconds from the environment variable `name` (a measuring window), or `default`.
pub fn seconds_from_env(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|s: &f64| *s > 0.0)
        .unwrap_or(default)
}

/// How many rounds the environment variable `name` asks for (at least 1; `default` when unset or unreadable).
pub fn rounds_from_env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
        .max(1)
}

/// What `rflysim_sim --send-log` wrote: when each stream's item (a sensor's
/// frame by its SeqID, `imu<id>` for IMU samples) with a given
/// simulation-time stamp left the emulator (wall-clock seconds).
#[derive(Debug, Default)]
pub struct SendLog {
    sent: HashMap<(String, i64), f64>,
}

impl SendLog {
    /// Reads the log at `path`; a missing file or a torn line gives fewer entries.
    pub fn read(path: &Path) -> Self {
        Self::parse(&std::fs::read_to_string(path).unwrap_or_default())
    }

    pub fn parse(text: &str) -> Self {
        let sent = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let stream = f.next()?.to_string();
                let stamp: f64 = f.next()?.parse().ok()?;
                let left: f64 = f.next()?.parse().ok()?;
                Some(((stream, stamp_key(stamp)), left))
            })
            .collect();
        Self { sent }
    }

    /// When `stream`'s item stamped `stamp` left, if it did.
    pub fn sent_at(&self, stream: &str, stamp: f64) -> Option<f64> {
        self.sent.get(&(stream.to_string(), stamp_key(stamp))).copied()
    }

    /// How many of `stream`'s items left in `[from, to)` (wall-clock seconds).
    pub fn sent_between(&self, stream: &str, from: f64, to: f64) -> usize {
        self.sent
            .iter()
            .filter(|((s, _), &t)| s == stream && t >= from && t < to)
            .count()
    }
}

/// Stamps compared in microseconds: the log writes 9 decimals, a ROS stamp
/// carries nanoseconds, and both came from the same f64.
fn stamp_key(stamp: f64) -> i64 {
    (stamp * 1e6).round() as i64
}

/// One stream of a "DDS alone" publisher: its name in the send log, its
/// rate, and what publishes one message stamped with the given time.
pub struct PacedStream<'a> {
    pub name: &'a str,
    pub hz: f64,
    pub publish: Box<dyn FnMut(f64) -> bool + 'a>,
}

impl std::fmt::Debug for PacedStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacedStream")
            .field("name", &self.name)
            .field("hz", &self.hz)
            .finish()
    }
}

/// Publishes every stream at its rate until `stop()`, the n-th message of a
/// stream stamped 1 + n / rate seconds (as a simulation time), and returns
/// the send log of what was published ([`SendLog::parse`] reads it). The
/// floor of a bridge benchmark: the same messages, no simulator, no decoding.
pub fn publish_paced(streams: &mut [PacedStream<'_>], stop: impl Fn() -> bool) -> String {
    use std::fmt::Write;
    let mut log = String::new();
    let start = Instant::now();
    let mut sent = vec![0u64; streams.len()];
    while !stop() {
        for (s, n) in streams.iter_mut().zip(sent.iter_mut()) {
            if (*n as f64) / s.hz > start.elapsed().as_secs_f64() {
                continue;
            }
            let stamp = 1.0 + *n as f64 / s.hz;
            let left = wall();
            if (s.publish)(stamp) {
                let _ = writeln!(log, "{} {stamp:.9} {left:.6}", s.name);
            }
            *n += 1;
        }
        let due = streams
            .iter()
            .zip(&sent)
            .map(|(s, &n)| n as f64 / s.hz)
            .fold(f64::MAX, f64::min);
        let wait = due - start.elapsed().as_secs_f64();
        if wait > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(wait.min(0.05)));
        }
    }
    log
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

/// Datagrams the kernel dropped so far per local UDP port, summed over the
/// IPv4 sockets bound to it (the `drops` column of `/proc/net/udp`): which
/// receiver lost them, where `udp_rcvbuf_errors` only counts them all.
pub fn udp_drops_by_port() -> HashMap<u16, u64> {
    parse_udp_drops(&std::fs::read_to_string("/proc/net/udp").unwrap_or_default())
}

fn parse_udp_drops(table: &str) -> HashMap<u16, u64> {
    let mut drops = HashMap::new();
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let port = f
            .get(1)
            .and_then(|a| a.rsplit_once(':'))
            .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
        let dropped = f.last().and_then(|d| d.parse::<u64>().ok());
        if let (Some(port), Some(dropped), true) = (port, dropped, f.len() >= 13) {
            *drops.entry(port).or_insert(0) += dropped;
        }
    }
    drops
}

/// The median of an ascending, non-empty slice (of an even count, the mean
/// of the middle two).
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The `p` quantile (0..=1, nearest rank) of an ascending slice; NaN when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// One stream of a case: offered and delivered rates over the window, and
/// the latencies of what arrived.
#[derive(Debug, Default, Clone)]
pub struct StreamResult {
    pub offered_hz: f64,
    pub delivered_hz: f64,
    pub missed: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl StreamResult {
    /// `expected` messages were sent in `span` seconds; `latencies` (ms) are
    /// those of the distinct ones received.
    pub fn summarise(expected: usize, mut latencies: Vec<f64>, span: f64) -> Self {
        latencies.sort_by(f64::total_cmp);
        StreamResult {
            offered_hz: expected as f64 / span,
            delivered_hz: latencies.len() as f64 / span,
            missed: expected.saturating_sub(latencies.len()),
            p50_ms: percentile(&latencies, 0.5),
            p99_ms: percentile(&latencies, 0.99),
            max_ms: latencies.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// A case's subscriptions, each mapping a message to a receipt; receipts are
/// timed when drained, right after a spin.
pub struct Subscriptions<R>(pub Vec<Box<dyn futures::Stream<Item = R> + Unpin>>);

impl<R> Subscriptions<R> {
    /// Moves every receipt ready now into `out`.
    pub fn drain(&mut self, out: &mut Vec<R>) {
        use futures::{FutureExt, StreamExt};
        for s in &mut self.0 {
            while let Some(Some(r)) = s.next().now_or_never() {
                out.push(r);
            }
        }
    }
}

impl<R> std::fmt::Debug for Subscriptions<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Subscriptions({})", self.0.len())
    }
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
    fn the_cpu_clock_agrees_with_the_ticks_and_is_finer() {
        let pid = std::process::id();
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(200) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let (clock, ticks) = (cpu_clock_seconds(pid).expect("own CPU clock"), cpu_tick_seconds(pid));
        assert!((clock - ticks).abs() < 0.05, "clock {clock} ticks {ticks}");
        assert!(clock * 100.0 != (clock * 100.0).round(), "{clock} is whole ticks");
    }

    #[test]
    fn send_log_matches_by_stream_and_stamp() {
        let log = SendLog::parse("1 0.033333333 100.5\nimu1 0.033333333 100.25\nimu1 0.038333333 100.75\ntorn 0.1\n");
        assert_eq!(log.sent_at("1", 1.0 / 30.0), Some(100.5));
        assert_eq!(log.sent_at("imu1", 1.0 / 30.0), Some(100.25));
        assert_eq!(log.sent_at("imu2", 1.0 / 30.0), None);
        assert_eq!(log.sent_at("torn", 0.1), None);
        assert_eq!(
            (
                log.sent_between("imu1", 100.0, 100.75),
                log.sent_between("imu1", 100.0, 101.0)
            ),
            (1, 2)
        );
    }

    #[test]
    fn udp_drops_are_summed_per_local_port() {
        let table = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
             1: 0100007F:2711 00000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 5 2 00000000a 12\n\
             2: 00000000:2711 00000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 6 2 00000000b 3\n\
             3: 0100007F:7918 00000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 7 2 00000000c 0\n";
        let drops = parse_udp_drops(table);
        assert_eq!(
            (drops.get(&10001), drops.get(&31000), drops.len()),
            (Some(&15), Some(&0), 2)
        );
        assert!(udp_drops_by_port().values().all(|&d| d < u64::MAX));
    }

    #[test]
    fn own_rss_is_plausible() {
        let rss = rss_bytes(std::process::id());
        assert!((1 << 20..1 << 34).contains(&rss), "{rss}");
        assert_eq!(rss_bytes(u32::MAX), 0);
    }

    #[test]
    fn proc_readings_are_present() {
        assert!(load_average() >= 0.0);
        assert!(cores() >= 1);
        assert!(std::fs::read_to_string("/proc/net/snmp").is_ok_and(|s| s.contains("RcvbufErrors")));
    }
}
