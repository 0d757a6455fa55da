//! SIGINT / SIGTERM ask a blocking job to stop: what every emulator's `main`
//! does (RflySim, AUV, GPS-denied), written once. The job runs on a thread
//! of its own; the signal is noticed within [`POLL`], handed to the caller
//! (which tells the job to stop, e.g. by setting its stop flag), and the job
//! is then waited for, so that it can clean up (unlink its shared memory,
//! print its counts) before the process exits.

use std::sync::atomic::{AtomicI32, Ordering};
use std::thread;
use std::time::Duration;

/// How often the waiting thread looks at the signal flag.
pub const POLL: Duration = Duration::from_millis(10);

/// The last of SIGINT / SIGTERM received, 0 before any.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(signal: libc::c_int) {
    RECEIVED.store(signal, Ordering::SeqCst);
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

/// Makes SIGINT and SIGTERM request a stop ([`stop_requested`]) instead of
/// ending the process.
pub fn catch_stop_signals() -> std::io::Result<()> {
    install_handler(&[libc::SIGINT, libc::SIGTERM], note)
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

fn restore_default_handlers() {
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
            // A second signal is the user insisting: it ends the process at once.
            restore_default_handlers();
            on_signal(signal);
            break;
        }
        thread::sleep(POLL);
    }
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
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
        let job = move || {
            let started = Instant::now();
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
        assert_eq!(
            (disposition(libc::SIGINT), disposition(libc::SIGTERM)),
            (libc::SIG_DFL, libc::SIG_DFL),
            "after the first signal, a second one is not swallowed"
        );
        assert!(
            ran >= Duration::from_millis(50),
            "the job ran until the signal: {ran:?}"
        );
    }
}
