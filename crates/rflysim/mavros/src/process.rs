//! The process plumbing of the MAVROS launcher: stop signals caught from the
//! first line of `main`, log lines that neither panic nor block when the
//! reader of stderr has gone, process groups found and signalled through
//! `/proc`, and children that learn of their parent's death.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Stop signals are caught the way every executable without a runtime
/// catches them: the first thing the launcher does, so that no signal can
/// cut it short while it has children.
pub use process_support::stop_signal::{catch_stop_signals, install_handler};

/// Whether SIGINT or SIGTERM has arrived since [`catch_stop_signals`].
pub fn stop_requested() -> bool {
    process_support::stop_signal::stop_requested().is_some()
}

/// Queues one line for stderr (never panics, never blocks; see `stderr_queue`).
pub use process_support::stderr_queue::line as log_line;

/// Waits (at most `within`) for the queued lines to be written.
pub use process_support::stderr_queue::flush as flush_log;

/// Sends `signal` to every process of group `pgid`.
pub fn signal_group(pgid: i32, signal: libc::c_int) {
    if pgid > 1 {
        // SAFETY: kill(2) has no memory effects; pgid > 1 never means "every process".
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Sends `signal` to process `pid`.
pub fn signal_process(pid: i32, signal: libc::c_int) {
    if pid > 1 {
        // SAFETY: as in signal_group.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub state: u8,
    pub ppid: i32,
    pub pgrp: i32,
}

impl ProcStat {
    /// Whether it still runs: a zombie has ended (only its parent has not looked yet).
    pub fn running(&self) -> bool {
        !matches!(self.state, b'Z' | b'X' | b'x')
    }
}

/// Parses `/proc/<pid>/stat`. The command name may hold spaces and
/// parentheses, so the fields after it are found from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let (pid, _) = text.split_once(" (")?;
    let after_name = text.get(text.rfind(')')? + 1..)?;
    let mut fields = after_name.split_ascii_whitespace();
    let state = *fields.next()?.as_bytes().first()?;
    Some(ProcStat {
        pid: pid.parse().ok()?,
        state,
        ppid: fields.next()?.parse().ok()?,
        pgrp: fields.next()?.parse().ok()?,
    })
}

/// Every process on the host that still runs (a process that ends while
/// the list is read is left out).
pub fn running_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let entry = entry.ok()?;
        entry.file_name().to_str()?.parse::<u32>().ok()?;
        parse_stat(&std::fs::read_to_string(entry.path().join("stat")).ok()?)
    })
    .filter(ProcStat::running)
    .collect()
}

/// Whether any process of group `pgid` still runs.
pub fn group_running(pgid: i32) -> bool {
    running_processes().iter().any(|p| p.pgrp == pgid)
}

/// Makes the child get `signal` when the thread that spawns it ends (the
/// kernel's parent-death signal, kept across exec), and refuses to start it
/// if its parent has already gone. Spawn from the thread that lives as long
/// as the process: the main thread.
pub fn die_with_parent(cmd: &mut Command, signal: libc::c_int) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and only makes
    // async-signal-safe system calls; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (a b) (c) S 17 4200 4200 0 -1 4194560 100 0 0 0";
        assert_eq!(
            parse_stat(stat),
            Some(ProcStat {
                pid: 4242,
                state: b'S',
                ppid: 17,
                pgrp: 4200
            })
        );
        assert!(!parse_stat("7 (z) Z 1 7 7").unwrap().running());
    }

    #[test]
    fn truncated_or_foreign_stat_is_refused() {
        for text in [
            "",
            "12",
            "12 (x",
            "12 (x) S",
            "12 (x) S 1",
            "x (y) S 1 2",
            "12 (x) S one 2",
        ] {
            assert_eq!(parse_stat(text), None, "{text:?}");
        }
    }

    #[test]
    fn this_process_is_found_in_its_group() {
        // SAFETY: getpgrp has no preconditions.
        let own_group = unsafe { libc::getpgrp() };
        let me = running_processes()
            .into_iter()
            .find(|p| p.pid == std::process::id() as i32);
        assert_eq!(me.map(|p| p.pgrp), Some(own_group));
        assert!(group_running(own_group));
    }
}
