//! The keeper: the small process that leads each vehicle's process group
//! (the launcher's own executable, started again with [`KEEPER_FLAG`]).
//! `ros2 launch` runs as its child, in its group, and forks mavros_node; a
//! parent-death signal reaches only the group's leader, so the leader has to
//! be a process that then ends the rest of the group. The keeper
//! - ends the group (SIGTERM, SIGKILL after [`GROUP_GRACE`]) when the
//!   launcher dies, even by SIGKILL ([`PARENT_GONE_SIGNAL`], set by the
//!   launcher as the keeper's parent-death signal);
//! - ends what `ros2` left behind in the group when `ros2` exits, then exits
//!   with `ros2`'s status, so that a restart never finds the port held;
//! - is a child subreaper, so the descendants that `ros2` leaves become its
//!   children: it knows when the last has ended (waitpid: no child left), and
//!   ends those that left the group, too.
//!
//! SIGINT and SIGTERM reach the whole group from the launcher; the keeper
//! outlives them to do the above.

use std::ffi::{OsStr, OsString};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::process;
use super::supervisor::GROUP_GRACE;

/// The first argument that makes the launcher's executable a keeper:
/// `<exe> --mavros-keeper <launcher pid> <vehicle id> <ros2> <ros2 arguments…>`.
pub const KEEPER_FLAG: &str = "--mavros-keeper";
/// The keeper's parent-death signal.
pub const PARENT_GONE_SIGNAL: libc::c_int = libc::SIGUSR1;
/// After SIGKILL, how long the keeper waits for its last descendants.
const REAP_AFTER_KILL: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_millis(20);

static PARENT_GONE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_parent_gone(_: libc::c_int) {
    PARENT_GONE.store(true, Ordering::SeqCst);
}

/// The exit code that passes on a wait status: the code, or 128 + the signal.
pub fn exit_code(wait_status: libc::c_int) -> u8 {
    if libc::WIFEXITED(wait_status) {
        libc::WEXITSTATUS(wait_status) as u8
    } else if libc::WIFSIGNALED(wait_status) {
        128u8.saturating_add(libc::WTERMSIG(wait_status) as u8)
    } else {
        1
    }
}

/// When `args` (the process's, with the executable first) ask for a keeper,
/// runs it and gives its exit code.
pub fn run_if_asked(args: &[OsString]) -> Option<u8> {
    if args.get(1).map(OsString::as_os_str) != Some(OsStr::new(KEEPER_FLAG)) {
        return None;
    }
    let number = |i: usize| args.get(i).and_then(|a| a.to_str()).and_then(|a| a.parse::<i32>().ok());
    let code = match (number(2), number(3), args.get(4)) {
        (Some(launcher), Some(id), Some(ros2)) => keep(launcher, id, ros2, &args[5..]),
        _ => {
            process::log_line(format!(
                "[mavros_launcher] {KEEPER_FLAG}: expected <launcher pid> <vehicle id> <ros2> <arguments>"
            ));
            2
        }
    };
    process::flush_log(Duration::from_millis(200));
    Some(code)
}

fn keep(launcher: i32, id: i32, ros2: &OsStr, args: &[OsString]) -> u8 {
    let log = |m: &str| process::log_line(format!("[mavros_launcher] vehicle {id}: {m}"));
    // SIGINT and SIGTERM are noted, not obeyed: the group's ros2 gets them
    // too, and the keeper stays to reap what it leaves.
    let set_up =
        process::catch_stop_signals().and_then(|()| process::install_handler(&[PARENT_GONE_SIGNAL], on_parent_gone));
    // SAFETY: prctl with integer arguments.
    let subreaper = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    if let Err(e) = set_up.and_then(|()| match subreaper {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }) {
        log(&format!("keeper: {e}"));
        return 1;
    }
    if process::stop_requested() || parent_gone(launcher) {
        return 0;
    }
    let ros2_pid = match Command::new(ros2).args(args).spawn() {
        // The child is reaped by waitpid(-1) below, not through `Child`.
        Ok(child) => child.id() as i32,
        Err(e) => {
            log(&format!("cannot start {}: {e}", ros2.to_string_lossy()));
            return 127;
        }
    };
    // SAFETY: getpgrp has no preconditions.
    let pgid = unsafe { libc::getpgrp() };
    let mut ros2_status = None;
    // When the group was told to end, and whether SIGKILL has followed.
    let mut ending: Option<(Instant, bool)> = None;
    loop {
        let (status, descendants_left) = reap(ros2_pid);
        ros2_status = ros2_status.or(status);
        let code = ros2_status.map_or(0, exit_code);
        if !descendants_left {
            return code;
        }
        let gone = parent_gone(launcher);
        match ending {
            None if ros2_status.is_some() || gone => {
                log(&format!(
                    "{}: ending the rest of process group {pgid} (SIGTERM, SIGKILL after {} s)",
                    if gone {
                        "the launcher has gone".to_string()
                    } else {
                        format!("ros2 exited (code {code})")
                    },
                    GROUP_GRACE.as_secs()
                ));
                process::signal_group(pgid, libc::SIGTERM);
                ending = Some((Instant::now(), false));
            }
            Some((since, killed)) if since.elapsed() >= GROUP_GRACE => {
                if !killed {
                    log(&format!("process group {pgid} still runs: SIGKILL"));
                }
                kill_all_but_self(pgid);
                ending = Some((since, true));
                if since.elapsed() >= GROUP_GRACE + REAP_AFTER_KILL {
                    log("descendants survive SIGKILL; leaving them");
                    return code;
                }
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    }
}

fn parent_gone(launcher: i32) -> bool {
    // SAFETY: getppid has no preconditions.
    PARENT_GONE.load(Ordering::SeqCst) || unsafe { libc::getppid() } != launcher
}

/// Reaps every ended child: `ros2`'s wait status if it was among them, and
/// whether any descendant is left (as a subreaper, every orphaned
/// descendant becomes a child).
fn reap(ros2_pid: i32) -> (Option<libc::c_int>, bool) {
    let mut ros2_status = None;
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status to a local.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid == ros2_pid {
            ros2_status = Some(status);
        } else if pid == 0 {
            return (ros2_status, true);
        } else if pid < 0 {
            let error = std::io::Error::last_os_error().raw_os_error();
            if error != Some(libc::EINTR) {
                return (ros2_status, error != Some(libc::ECHILD));
            }
        }
    }
}

/// SIGKILL to every process of the group and every child (the orphans that
/// left the group) but the keeper itself.
fn kill_all_but_self(pgid: i32) {
    let me = std::process::id() as i32;
    for p in process::running_processes() {
        if p.pid != me && (p.pgrp == pgid || p.ppid == me) {
            process::signal_process(p.pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_pass_on_codes_and_signals() {
        assert_eq!(exit_code(3 << 8), 3);
        assert_eq!(exit_code(0), 0);
        assert_eq!(exit_code(libc::SIGKILL), 137);
    }

    #[test]
    fn only_the_flag_makes_a_keeper() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(run_if_asked(&args(&["mavros_launcher", "--ros-args"])), None);
        assert_eq!(run_if_asked(&args(&["mavros_launcher"])), None);
        assert_eq!(run_if_asked(&args(&["mavros_launcher", KEEPER_FLAG, "x"])), Some(2));
    }
}
