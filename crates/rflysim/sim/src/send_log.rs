//! `--send-log`: a line `stream time_stamp wall_time` when a frame or an IMU
//! sample has left, so that latency benchmarks match each receipt to its
//! send by the stream and the simulation-time stamp the bridge publishes.

use std::fmt::Display;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// One thread's handle on the log file. Several threads append to the same
/// file: each line goes out in one `write` on an `O_APPEND` file, so lines
/// of different threads never interleave.
pub(crate) struct SendLog(BufWriter<File>);

impl SendLog {
    /// `None` when no log was asked for.
    pub(crate) fn open(path: Option<&Path>) -> io::Result<Option<Self>> {
        path.map(|p| {
            let file = std::fs::OpenOptions::new().create(true).append(true).open(p)?;
            Ok(Self(BufWriter::new(file)))
        })
        .transpose()
    }

    /// Logs that `stream`'s item stamped `t` (simulation seconds) has just left.
    pub(crate) fn sent(&mut self, stream: impl Display, t: f64) {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let _ = writeln!(self.0, "{stream} {t:.9} {wall:.9}");
        let _ = self.0.flush();
    }
}
