//! The emulator's log lines. Whoever reads its output may go away (a `ros2
//! launch` that was killed orphans it) or stop reading: a line must then
//! neither panic (as `eprintln!` does on a closed pipe) nor block a thread
//! that has to stop. Lines go through a bounded queue to one writer thread;
//! when the queue is full they are dropped.

use std::io::Write;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::OnceLock;

const QUEUE_LINES: usize = 256;

fn writer() -> &'static SyncSender<String> {
    static SENDER: OnceLock<SyncSender<String>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (tx, rx) = sync_channel::<String>(QUEUE_LINES);
        // Detached: a write blocked on a full pipe must not keep the process
        // alive. Without the thread, `rx` is gone and every line is dropped.
        let _ = std::thread::Builder::new().name("log".into()).spawn(move || {
            let mut err = std::io::stderr();
            for line in rx {
                let _ = writeln!(err, "{line}");
            }
        });
        tx
    })
}

/// Queues one line for stderr, prefixed with the emulator's name.
pub fn line(msg: &str) {
    let _ = writer().try_send(format!("[rflysim_sim] {msg}"));
}
