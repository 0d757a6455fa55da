//! Launches MAVROS for every simulated vehicle and supervises the children:
//! `ros2 launch mavros px4.launch.xml tgt_system:=<id>
//! fcu_url:=udp://:<p+1>@<ip>:<p>` with p = 20100 + 2·(id − 1) (RflySim's SDK: RflyRosStart.py),
//! namespace `mavros<id>` when there are several vehicles. Each vehicle runs
//! in a process group of its own, led by a [`keeper`]; [`supervisor`] says
//! what happens to the groups (restarts with back-off, a stop within a
//! second); only the groups started here are ever signalled (RflySim's SDK
//! `kill -9`s every mavros on the host).

pub mod keeper;
pub mod process;
pub mod supervisor;

use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub use supervisor::backoff;
use supervisor::{Host, Supervisor, STOP_SCHEDULE};

pub use rflysim_proto::ports::mavros_port;

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

/// What [`check_mavros`] gives when a stop was requested while it waited.
pub const STOPPED: &str = "stopped";

/// Whether the mavros package is installed, asked of `ros2 pkg prefix`; a
/// stop request ends the question (and its process group) with [`STOPPED`].
pub fn check_mavros(ros2: &Path, stop: &dyn Fn() -> bool) -> Result<(), String> {
    let mut cmd = Command::new(ros2);
    cmd.args(["pkg", "prefix", "mavros"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    process::die_with_parent(&mut cmd, libc::SIGTERM);
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", ros2.display()))?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if stop() => {
                end_group_now(&mut child);
                return Err(STOPPED.into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("{}: {e}", ros2.display())),
        }
    };
    if status.success() {
        Ok(())
    } else {
        let distro = std::env::var("ROS_DISTRO").unwrap_or_else(|_| "<distro>".into());
        Err(format!(
            "the mavros package is not installed: sudo apt install ros-{distro}-mavros ros-{distro}-mavros-extras"
        ))
    }
}

/// Ends `child`'s process group within a fraction of a second.
fn end_group_now(child: &mut Child) {
    let pgid = child.id() as i32;
    for (signal, wait) in [(libc::SIGTERM, 200), (libc::SIGKILL, 200)] {
        process::signal_group(pgid, signal);
        let deadline = Instant::now() + Duration::from_millis(wait);
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The real host: each vehicle's group is led by a [`keeper`] (this
/// executable again) that runs `ros2`.
#[derive(Debug)]
struct Keepers {
    ros2: PathBuf,
}

impl Host for Keepers {
    type Leader = Child;

    fn spawn(&mut self, id: u16, args: &[String]) -> std::io::Result<(Child, i32)> {
        // /proc/self/exe: this very executable even if the file was replaced since.
        let mut cmd = Command::new("/proc/self/exe");
        cmd.arg0("mavros_keeper")
            .arg(keeper::KEEPER_FLAG)
            .arg(std::process::id().to_string())
            .arg(id.to_string())
            .arg(&self.ros2)
            .args(args)
            .process_group(0);
        // Called on the main thread (see `supervise`): the parent-death
        // signal fires when the spawning thread ends.
        process::die_with_parent(&mut cmd, keeper::PARENT_GONE_SIGNAL);
        let child = cmd.spawn()?;
        let pgid = child.id() as i32;
        Ok((child, pgid))
    }

    fn exited(&mut self, leader: &mut Child) -> Option<String> {
        match leader.try_wait() {
            Ok(Some(status)) => Some(describe(status)),
            Ok(None) => None,
            Err(e) => Some(format!("lost: {e}")),
        }
    }

    fn group_running(&mut self, pgid: i32) -> bool {
        process::group_running(pgid)
    }

    fn signal_group(&mut self, pgid: i32, signal: libc::c_int) {
        process::signal_group(pgid, signal);
    }
}

/// Runs until `stop` says so, then ends every group (SIGINT, SIGTERM,
/// SIGKILL: [`STOP_SCHEDULE`]) and returns. Call it on the main thread.
pub fn supervise(ros2: &Path, copter_ids: &[u16], sim_ip: Ipv4Addr, stop: &dyn Fn() -> bool, log: &dyn Fn(&str)) {
    let several = copter_ids.len() > 1;
    let vehicles = copter_ids
        .iter()
        .map(|&id| (id, launch_args(id, sim_ip, several)))
        .collect();
    let mut groups = Supervisor::new(
        Keepers {
            ros2: ros2.to_path_buf(),
        },
        vehicles,
        Instant::now(),
    );
    while !stop() {
        groups.step(Instant::now(), log);
        std::thread::sleep(Duration::from_millis(50));
    }
    let [_, (term_at, _), (kill_at, _)] = STOP_SCHEDULE;
    log(&format!(
        "stopping: SIGINT to every MAVROS process group, SIGTERM after {} ms, SIGKILL after {} ms",
        term_at.as_millis(),
        kill_at.as_millis()
    ));
    let began = Instant::now();
    while !groups.stop_step(began.elapsed()) {
        if began.elapsed() > kill_at + Duration::from_millis(250) {
            log("a MAVROS process survives SIGKILL; leaving it");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
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
    fn missing_ros2_says_what_to_do() {
        let e = find_ros2(Some(std::ffi::OsStr::new("/nonexistent"))).unwrap_err();
        assert!(e.contains("source your ROS 2"));
    }
}
