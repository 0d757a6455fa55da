//! The `--dump` files: what the emulator rendered and sent, for tests to
//! compare with what the bridge publishes.

use std::io::{self, Write};
use std::path::Path;

/// Appends `line` and a newline to the file at `path`.
pub(crate) fn append_line(path: &Path, line: &str) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    writeln!(f, "{line}")
}
