//! Log lines for a process whose reader may go away (a `ros2 launch` that
//! was killed orphans its children) or stop reading: a line must then
//! neither panic (as `eprintln!` does on a closed pipe) nor block a thread
//! that has to stop. Lines go through a bounded queue to one detached writer
//! thread; when the queue is full they are dropped.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const QUEUE_LINES: usize = 256;
/// Lines queued and not yet written, for [`flush`].
static PENDING: AtomicUsize = AtomicUsize::new(0);

fn writer() -> &'static SyncSender<String> {
    static SENDER: OnceLock<SyncSender<String>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (tx, rx) = sync_channel::<String>(QUEUE_LINES);
        // Detached: a write blocked on a pipe nobody reads must not keep the
        // process alive. Errors (EPIPE once the reader has gone) are ignored.
        // Without the thread, `rx` is gone and every line is dropped.
        let _ = std::thread::Builder::new().name("log".into()).spawn(move || {
            let mut err = std::io::stderr();
            for line in rx {
                let _ = writeln!(err, "{line}");
                PENDING.fetch_sub(1, Ordering::SeqCst);
            }
        });
        tx
    })
}

/// Queues one line for stderr; dropped when the queue is full.
pub fn line(line: String) {
    PENDING.fetch_add(1, Ordering::SeqCst);
    if writer().try_send(line).is_err() {
        PENDING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits (at most `within`) for the queued lines to be written.
pub fn flush(within: Duration) {
    let deadline = Instant::now() + within;
    while PENDING.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}
