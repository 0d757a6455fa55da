//! Per-stream counts of good messages and of each kind of bad input, for
//! diagnostics (the bridge) and for the emulator's own report.

use crate::error::WireError;

/// Every kind a receiver counts: the wire errors, plus a well-formed message
/// for an AUV id nobody asked for.
pub const UNKNOWN_ID: &str = "unknown_id";
const KIND_COUNT: usize = WireError::KINDS.len() + 1;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputCounts {
    pub good: u64,
    bad: [u64; KIND_COUNT],
}

impl InputCounts {
    pub fn record_good(&mut self) {
        self.good += 1;
    }

    pub fn record_error(&mut self, e: &WireError) {
        self.bad[e.kind_index()] += 1;
    }

    pub fn record_unknown_id(&mut self) {
        self.bad[KIND_COUNT - 1] += 1;
    }

    /// Counts a parse result, good or bad.
    pub fn record<T>(&mut self, result: &Result<T, WireError>) {
        match result {
            Ok(_) => self.record_good(),
            Err(e) => self.record_error(e),
        }
    }

    pub fn bad_total(&self) -> u64 {
        self.bad.iter().sum()
    }

    pub fn bad(&self, kind: &str) -> u64 {
        self.by_kind().find(|(k, _)| *k == kind).map_or(0, |(_, n)| n)
    }

    /// Every kind with its count, zeros included, in a stable order.
    pub fn by_kind(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        WireError::KINDS
            .iter()
            .copied()
            .chain([UNKNOWN_ID])
            .zip(self.bad.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thruster::ThrusterCommand;

    #[test]
    fn counts_each_kind_apart() {
        let mut c = InputCounts::default();
        c.record(&ThrusterCommand::decode(&[0, 0, 0, 0, 0]));
        c.record(&ThrusterCommand::decode(&[0, 0, 0, 0]));
        c.record(&ThrusterCommand::decode(&[0, 0, 0, 0, 0x80]));
        c.record(&ThrusterCommand::decode(&[0, 0, 0, 0, 0x80]));
        c.record_unknown_id();
        assert_eq!(c.good, 1);
        assert_eq!(c.bad("wrong_length"), 1);
        assert_eq!(c.bad("out_of_range"), 2);
        assert_eq!(c.bad(UNKNOWN_ID), 1);
        assert_eq!(c.bad("corrupt_jpeg"), 0);
        assert_eq!(c.bad_total(), 4);
        assert_eq!(c.by_kind().count(), WireError::KINDS.len() + 1);
    }
}
