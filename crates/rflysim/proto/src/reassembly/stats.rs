//! What a [`super::Reassembler`] counts: frames through, and every reason a
//! datagram or frame was dropped.

/// Why datagrams or frames were dropped, and what went through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassemblyStats {
    pub datagrams: u64,
    pub frames: u64,
    pub payload_bytes: u64,
    /// Not a sensor datagram: too short or an unknown checksum.
    pub garbage: u64,
    /// `pkg_len`, `pkg_id` or `pkg_num` impossible, or lengths that disagree.
    pub bad_length: u64,
    /// A frame claiming more than the configured maximum.
    pub oversize: u64,
    /// Packets of one frame disagreeing (count, chunk size, content of a repeat).
    pub inconsistent: u64,
    pub duplicates: u64,
    /// Packets of frames already finished or abandoned.
    pub late: u64,
    /// Frames dropped with packets missing because newer frames needed the room.
    pub incomplete: u64,
    /// Frames dropped with packets missing because no packet came for `stale_after`.
    pub timed_out: u64,
    pub restarts: u64,
    /// Packets with the 24-byte header that share the time stamp of a
    /// frame already finished or abandoned but are not its packets: another
    /// frame with the same stamp, which that header cannot tell apart.
    pub repeated_stamp: u64,
    /// Frames never seen at all: gaps in the 32-byte header's frame ids
    /// (a frame whose every datagram was lost leaves no other trace).
    pub frames_missing: u64,
}

impl ReassemblyStats {
    /// Frames that were started but never delivered.
    pub fn frames_lost(&self) -> u64 {
        self.incomplete + self.timed_out
    }

    /// Each reason with its count, under the names diagnostics report them by.
    pub fn drop_counts(&self) -> [(&'static str, u64); 11] {
        [
            ("garbage", self.garbage),
            ("bad_length", self.bad_length),
            ("oversize", self.oversize),
            ("inconsistent", self.inconsistent),
            ("duplicate", self.duplicates),
            ("late", self.late),
            ("incomplete", self.incomplete),
            ("timed_out", self.timed_out),
            ("missing", self.frames_missing),
            ("restart", self.restarts),
            ("repeated_stamp", self.repeated_stamp),
        ]
    }

    /// Everything that was dropped because the input was bad or incomplete
    /// (duplicates, late packets and restarts are not faults of the input).
    pub fn input_dropped(&self) -> u64 {
        self.frames_lost()
            + self.frames_missing
            + self.garbage
            + self.bad_length
            + self.inconsistent
            + self.oversize
            + self.repeated_stamp
    }
}
