//! Launches MAVROS for every simulated vehicle and supervises the children:
//! `ros2 launch mavros px4.launch.xml tgt_system:=<id>
//! fcu_url:=udp://:<p+1>@<ip>:<p>` with p = 20100 + 2·(id − 1) (spec §9),
//! namespace `mavros<id>` when there are several vehicles. A crashed child is
//! restarted with back-off; SIGINT / SIGTERM are forwarded; on exit only the
//! process groups started here are ended (RflySim's SDK `kill -9`s every
//! mavros on the host).

use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// MAVROS's UDP port on CopterSim's side for vehicle `id` (1-based).
pub fn mavros_port(id: u16) -> u16 {
    20100 + 2 * id.saturating_sub(1)
}

/// The `ros2` arguments for one vehicle.
pub fn launch_args(id: u16, sim_ip: Ipv4Addr, several: bool) -> Vec<String> {
    let p = mavros_port(id);
    let mut a = vec![
        "launch".to_string(),
        "mavros".into(),
        "px4.launch.xml".into(),
        format!("tgt_system:={id}"),
        format!("fcu_url:=udp://:{}@{sim_ip}:{p}", p + 1),
    ];
    if several {
        a.push(format!("namespace:=mavros{id}"));
    }
    a
}

/// `ros2` on PATH, or a message that says what to do.
pub fn find_ros2(path_var: Option<&std::ffi::OsStr>) -> Result<PathBuf, String> {
    let path = path_var.ok_or("PATH is not set")?;
    std::env::split_paths(path)
        .map(|d| d.join("ros2"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "`ros2` is not on PATH: source your ROS 2 installation (e.g. /opt/ros/jazzy/setup.bash)".to_string()
        })
}

/// Whether the mavros package is installed, asked of `ros2 pkg prefix`.
pub fn check_mavros(ros2: &Path) -> Result<(), String> {
    let out = Command::new(ros2)
        .args(["pkg", "prefix", "mavros"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ros2.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        let distro = std::env::var("ROS_DISTRO").unwrap_or_else(|_| "<distro>".into());
        Err(format!(
            "the mavros package is not installed: sudo apt install ros-{distro}-mavros ros-{distro}-mavros-extras"
        ))
    }
}

/// Back-off after the n-th crash in a row: 1, 2, 4, … 30 s.
pub fn backoff(crashes: u32) -> Duration {
    Duration::from_secs(1u64 << crashes.saturating_sub(1).min(5)).min(Duration::from_secs(30))
}

fn signal_group(pgid: u32, signal: i32) {
    // SAFETY: kill(2) on a process group this launcher created.
    unsafe {
        libc::kill(-(pgid as i32), signal);
    }
}

/// One supervised vehicle.
#[derive(Debug)]
struct Supervised {
    id: u16,
    args: Vec<String>,
    child: Option<Child>,
    started: Instant,
    crashes: u32,
    restart_at: Option<Instant>,
}

fn spawn(ros2: &Path, args: &[String]) -> std::io::Result<Child> {
    // A group of its own: `ros2 launch` forks the mavros node, and both must
    // get the signal, and nothing else on the host.
    Command::new(ros2).args(args).process_group(0).spawn()
}

/// Runs until `stop` says so; returns when every child has ended.
pub fn supervise(
    ros2: &Path,
    copter_ids: &[u16],
    sim_ip: Ipv4Addr,
    stop: &dyn Fn() -> bool,
    log: &dyn Fn(&str),
) -> Result<(), String> {
    let several = copter_ids.len() > 1;
    let mut all: Vec<Supervised> = copter_ids
        .iter()
        .map(|&id| Supervised {
            id,
            args: launch_args(id, sim_ip, several),
            child: None,
            started: Instant::now(),
            crashes: 0,
            restart_at: Some(Instant::now()),
        })
        .collect();
    while !stop() {
        for s in &mut all {
            if let Some(child) = &mut s.child {
                if let Ok(Some(status)) = child.try_wait() {
                    s.child = None;
                    // A run that lasted a minute was no crash loop.
                    if s.started.elapsed() > Duration::from_secs(60) {
                        s.crashes = 0;
                    }
                    s.crashes += 1;
                    let wait = backoff(s.crashes);
                    log(&format!(
                        "mavros for vehicle {} exited ({}); restarting in {} s",
                        s.id,
                        describe(status),
                        wait.as_secs()
                    ));
                    s.restart_at = Some(Instant::now() + wait);
                }
            }
            if s.child.is_none() && s.restart_at.is_some_and(|t| Instant::now() >= t) {
                match spawn(ros2, &s.args) {
                    Ok(c) => {
                        log(&format!(
                            "vehicle {}: {} {} (pid {})",
                            s.id,
                            ros2.display(),
                            s.args.join(" "),
                            c.id()
                        ));
                        s.child = Some(c);
                        s.started = Instant::now();
                        s.restart_at = None;
                    }
                    Err(e) => return Err(format!("cannot start {}: {e}", ros2.display())),
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Forward the stop: SIGINT (as a terminal would), then SIGTERM, then SIGKILL.
    for (signal, wait) in [(libc::SIGINT, 10), (libc::SIGTERM, 5), (libc::SIGKILL, 2)] {
        let mut running: Vec<u32> = Vec::new();
        for c in all.iter_mut().filter_map(|s| s.child.as_mut()) {
            if matches!(c.try_wait(), Ok(None)) {
                running.push(c.id());
            }
        }
        if running.is_empty() {
            break;
        }
        for pgid in &running {
            signal_group(*pgid, signal);
        }
        let deadline = Instant::now() + Duration::from_secs(wait);
        while Instant::now() < deadline
            && all
                .iter_mut()
                .filter_map(|s| s.child.as_mut())
                .any(|c| matches!(c.try_wait(), Ok(None)))
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    for s in &mut all {
        if let Some(c) = &mut s.child {
            let _ = c.wait();
        }
    }
    Ok(())
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_follow_the_spec() {
        let ip = Ipv4Addr::new(192, 168, 1, 5);
        assert_eq!(
            launch_args(1, ip, false),
            [
                "launch",
                "mavros",
                "px4.launch.xml",
                "tgt_system:=1",
                "fcu_url:=udp://:20101@192.168.1.5:20100"
            ]
        );
        assert_eq!(
            launch_args(3, ip, true)[4..],
            [
                "fcu_url:=udp://:20105@192.168.1.5:20104".to_string(),
                "namespace:=mavros3".into()
            ]
        );
    }

    #[test]
    fn backoff_grows_and_caps() {
        assert_eq!([1, 2, 3, 4, 6, 10].map(|n| backoff(n).as_secs()), [1, 2, 4, 8, 30, 30]);
    }

    #[test]
    fn missing_ros2_says_what_to_do() {
        let e = find_ros2(Some(std::ffi::OsStr::new("/nonexistent"))).unwrap_err();
        assert!(e.contains("source your ROS 2"));
    }
}
