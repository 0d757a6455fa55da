//! How much a reassembler holds, and the room it keeps around each frame.

use std::time::Duration;

use super::MAX_DATAGRAM;

#[derive(Debug, Clone)]
pub struct ReassemblerConfig {
    /// The largest frame accepted; larger claims are dropped before any allocation.
    pub max_frame_bytes: usize,
    pub max_packets_per_frame: u32,
    /// Frames being filled at once; reordering across more frames than this loses the oldest.
    pub max_partial_frames: usize,
    /// Bytes held by all partial frames together; a new frame that needs more
    /// room drops the oldest ones.
    pub max_buffered_bytes: usize,
    /// A partial frame with no new packet for this long is dropped.
    pub stale_after: Duration,
    /// How many finished (or abandoned) frames are remembered to recognise late packets.
    pub remembered_frames: usize,
    /// A time stamp going back by more than this (seconds) counts as a simulator restart.
    pub restart_time_jump: f64,
    /// Bytes reserved in front of every frame's payload, for the consumer to
    /// fill (the header of the message the frame becomes, so that it is
    /// published from the buffer the datagrams were copied into).
    pub headroom: usize,
    /// Bytes of capacity kept after every frame's payload, for the fields
    /// the consumer appends (the end of that message): appending them then
    /// does not move the frame.
    pub tailroom: usize,
    /// The longest datagram a [`Slot`](super::Slot) makes room for: a
    /// socket cuts longer ones short ([`MAX_DATAGRAM`] holds any UDP payload).
    pub max_datagram: usize,
}

/// Frames [`ReassemblerConfig::for_frames_of`] makes room for at once: a
/// frame and its successor overtaking it (its last packet reordered behind
/// the next frame's first).
const FRAMES_IN_FLIGHT: usize = 2;

impl ReassemblerConfig {
    /// For a stream whose frames are at most `max_frame_bytes`: room for
    /// [`FRAMES_IN_FLIGHT`] of them. A frame's buffer holds whole packets
    /// (its last one as long as the others), so a frame at the bound takes
    /// up to a datagram more than the bound.
    pub fn for_frames_of(max_frame_bytes: usize) -> Self {
        let defaults = Self::default();
        Self {
            max_frame_bytes,
            max_buffered_bytes: max_frame_bytes
                .saturating_add(defaults.max_datagram)
                .saturating_mul(FRAMES_IN_FLIGHT)
                .max(1 << 20),
            ..defaults
        }
    }

    /// `headroom` bytes in front of every frame; the budget grows by that
    /// much for each frame in flight.
    pub fn with_headroom(self, headroom: usize) -> Self {
        Self {
            max_buffered_bytes: self.room_for(headroom.saturating_sub(self.headroom)),
            headroom,
            ..self
        }
    }

    /// `tailroom` bytes of capacity after every frame; the budget grows by
    /// that much for each frame in flight.
    pub fn with_tailroom(self, tailroom: usize) -> Self {
        Self {
            max_buffered_bytes: self.room_for(tailroom.saturating_sub(self.tailroom)),
            tailroom,
            ..self
        }
    }

    /// The budget with `extra` bytes more around each frame in flight.
    fn room_for(&self, extra: usize) -> usize {
        self.max_buffered_bytes
            .saturating_add(extra.saturating_mul(FRAMES_IN_FLIGHT))
    }
}

impl Default for ReassemblerConfig {
    fn default() -> Self {
        Self {
            max_frame_bytes: 64 << 20,
            max_packets_per_frame: 4096,
            max_partial_frames: 4,
            max_buffered_bytes: 128 << 20,
            stale_after: Duration::from_millis(500),
            remembered_frames: 256,
            restart_time_jump: 1.0,
            headroom: 0,
            tailroom: 0,
            max_datagram: MAX_DATAGRAM,
        }
    }
}
