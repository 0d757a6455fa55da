//! SIGINT / SIGTERM, caught one way for every executable: a sigaction
//! handler that records the signal and makes a pipe readable. Blocking jobs
//! (the emulators, the MAVROS launcher and keeper) poll [`stop_requested`]
//! or run under [`run_until_signal`]; a thread (a bridge's main thread,
//! through `ros_common::lifecycle`) blocks in [`wait_for_stop`] on that pipe.
//! The job is then waited for, so that it can clean up
//! (unlink its shared memory, send its neutral commands, print its counts)
//! before the process exits.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

/// How often the waiting thread looks at the signal flag.
pub const POLL: Duration = Duration::from_millis(10);
/// After the first stop signal, how long further ones are taken as the same
/// request rather than as the user insisting.
pub const SECOND_SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// The last of SIGINT / SIGTERM received, 0 before any.
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The write end of the wake pipe, -1 until [`catch_stop_signals`] made it.
static WAKE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// The read end: readable from the first stop signal on (never drained).
static WAKE_READ: OnceLock<libc::c_int> = OnceLock::new();

extern "C" fn note(signal: libc::c_int) {
    RECEIVED.store(signal, Ordering::SeqCst);
    let fd = WAKE_WRITE.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; a full pipe (non-blocking) only means it is readable already.
        unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
    }
}

/// Installs `handler` for each of `signals` (sigaction, system calls
/// restarted): the one way the executables without a tokio runtime catch
/// signals. `handler` must only store to atomics.
pub fn install_handler(signals: &[libc::c_int], handler: extern "C" fn(libc::c_int)) -> std::io::Result<()> {
    for &signal in signals {
        // SAFETY: a zeroed sigaction is valid; the handler only stores to an atomic.
        let failed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut()) != 0
        };
        if failed {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Makes SIGINT and SIGTERM request a stop ([`stop_requested`],
/// [`wait_for_stop`]) instead of ending the process. Idempotent.
pub fn catch_stop_signals() -> std::io::Result<()> {
    if WAKE_READ.get().is_none() {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if WAKE_READ.set(fds[0]).is_ok() {
            WAKE_WRITE.store(fds[1], Ordering::SeqCst);
        } else {
            // Another thread made the pipe first.
            // SAFETY: closing the two descriptors made just above.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
        }
    }
    install_handler(&[libc::SIGINT, libc::SIGTERM], note)?;
    // A signal that came before the pipe existed still wakes the waiters.
    if RECEIVED.load(Ordering::SeqCst) != 0 {
        note(RECEIVED.load(Ordering::SeqCst));
    }
    Ok(())
}

/// A descriptor that becomes readable at the first stop signal and stays so
/// (wait for readability, never read). `None` before [`catch_stop_signals`].
fn stop_wake_fd() -> Option<libc::c_int> {
    WAKE_READ.get().copied()
}

/// Blocks until a stop signal has come, at most `timeout` (`None`: for
/// ever); whether one has. Needs [`catch_stop_signals`] first.
pub fn wait_for_stop(timeout: Option<Duration>) -> bool {
    let Some(fd) = stop_wake_fd() else {
        return stop_requested().is_some();
    };
    let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as libc::c_int);
    while stop_requested().is_none() {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n == 0 {
            break;
        }
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    stop_requested().is_some()
}

/// The name of the stop signal received since [`catch_stop_signals`], if any.
pub fn stop_requested() -> Option<&'static str> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(name(signal)),
    }
}

/// SIGINT or SIGTERM by name, for the log line.
fn name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// SIGINT and SIGTERM end the process again, at once.
pub fn restore_default_handlers() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: resetting a signal's disposition to the default.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
}

/// Runs `job` until it returns; when SIGINT or SIGTERM comes first, calls
/// `on_signal` with its name ("SIGINT", "SIGTERM") and then waits for `job`,
/// which `on_signal` must make return soon. Returns what `job` returned; a
/// panic in `job` goes on in the caller.
pub fn run_until_signal<T, J, S>(job: J, on_signal: S) -> T
where
    T: Send + 'static,
    J: FnOnce() -> T + Send + 'static,
    S: FnOnce(&'static str),
{
    // Without handlers a signal ends the process, which is still correct.
    let _ = catch_stop_signals();
    let handle = thread::spawn(job);
    while !handle.is_finished() {
        if let Some(signal) = stop_requested() {
            on_signal(signal);
            // Ctrl-C under `ros2 launch` comes twice at once (the terminal's to the
            // group, then launch's own): only a signal after SECOND_SIGNAL_GRACE is
            // the user insisting, and it ends a job still running at once. A job
            // that has ended keeps the handlers: the caller's clean-up is next.
            let since = std::time::Instant::now();
            while !handle.is_finished() && since.elapsed() < SECOND_SIGNAL_GRACE {
                thread::sleep(POLL);
            }
            if !handle.is_finished() {
                restore_default_handlers();
            }
            break;
        }
        thread::sleep(POLL);
    }
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Set at SIGINT / SIGTERM while [`emulator_main`] runs its job.
static EMULATOR_STOP: AtomicBool = AtomicBool::new(false);

/// An emulator's `main` after its arguments: runs `run` until it returns
/// (`stop` is set at SIGINT / SIGTERM), then prints its `summary` on stdout,
/// or why it failed on stderr. Write errors are ignored: a closed pipe is no
/// panic.
pub fn emulator_main<C: Send + 'static>(
    name: &str,
    run: impl FnOnce(&'static AtomicBool) -> Result<C, String> + Send + 'static,
    summary: impl FnOnce(&C) -> String,
) -> std::process::ExitCode {
    use std::io::Write;
    let outcome = run_until_signal(
        move || run(&EMULATOR_STOP),
        |_| EMULATOR_STOP.store(true, Ordering::SeqCst),
    );
    match outcome {
        Ok(counts) => {
            let mut stdout = std::io::stdout();
            let _ = writeln!(stdout, "{name}: {}", summary(&counts));
            let _ = stdout.flush();
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Instant;

    use super::*;

    /// One test: the flag is process-wide, so the two cases run in order.
    #[test]
    fn a_job_ends_by_itself_or_on_a_signal() {
        let mut called = false;
        assert_eq!(run_until_signal(|| 7, |_| called = true), 7);
        assert!(!called, "no signal, no call");

        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        // Timed from before the raiser starts its 50 ms: the job itself may start later.
        let started = Instant::now();
        let job = move || {
            while !flag.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(1));
            }
            started.elapsed()
        };
        let raiser = thread::spawn(|| {
            thread::sleep(Duration::from_millis(50));
            // SAFETY: raising a signal whose handler is installed by now.
            unsafe { libc::raise(libc::SIGTERM) };
        });
        let mut seen = None;
        let ran = run_until_signal(job, |name| {
            seen = Some(name);
            stop.store(true, Ordering::SeqCst);
        });
        raiser.join().unwrap();
        assert_eq!(seen, Some("SIGTERM"));
        // SAFETY: reading the dispositions (a null new action changes nothing).
        let disposition = |signal| unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut old);
            old.sa_sigaction
        };
        let defaults = (libc::SIG_DFL, libc::SIG_DFL);
        assert_ne!(
            (disposition(libc::SIGINT), disposition(libc::SIGTERM)),
            defaults,
            "a job that ended at the signal leaves the caller's clean-up to a second one's mercy"
        );
        // A job still running after the grace: the next signal ends the process.
        let late = run_until_signal(
            move || {
                thread::sleep(SECOND_SIGNAL_GRACE + Duration::from_millis(300));
                (disposition(libc::SIGINT), disposition(libc::SIGTERM))
            },
            |_| {},
        );
        assert_eq!(late, defaults, "after the grace, a second signal is not swallowed");
        assert!(
            ran >= Duration::from_millis(50),
            "the job ran until the signal: {ran:?}"
        );
        // The wake pipe is readable from then on, for every waiter.
        assert!(wait_for_stop(Some(Duration::ZERO)) && wait_for_stop(None));
        let mut p = libc::pollfd {
            fd: stop_wake_fd().unwrap(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&mut p, 1, 0) }, 1);
    }
}
