//! The emulator's log lines, prefixed with its name, through `stderr_queue`:
//! they never panic on a closed pipe nor block a thread that has to stop.

/// Queues one line for stderr.
pub fn line(msg: &str) {
    process_support::stderr_queue::line(format!("[rflysim_sim] {msg}"));
}
