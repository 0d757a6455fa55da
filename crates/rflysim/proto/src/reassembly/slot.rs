//! Receiving a datagram straight into its place in its frame's buffer.
//!
//! A frame's packets mostly arrive in order and all but the last carry
//! `chunk` bytes: the next packet's body belongs right after the last one's.
//! A [`Slot`] lends the caller that frame's buffer cut back by a header's
//! length (the bytes cut are kept aside): the datagram the socket appends
//! to it lands with its body in place, and the bytes kept aside go back over
//! its header. Whatever else arrives (another frame's packet, a reordered
//! one, garbage) is copied out, the buffer restored, and pushed as
//! [`Reassembler::push`] takes it: a slot never changes what a frame
//! becomes, only how often its bytes are copied.

use std::time::Duration;

use super::{Frame, FrameKey, Reassembler};
use crate::header::{DatagramHeader, HeaderKind};

/// More than the largest UDP payload (65 507 bytes): the room a slot keeps
/// by default ([`ReassemblerConfig::max_datagram`]), so that no datagram is
/// cut short.
///
/// [`ReassemblerConfig::max_datagram`]: super::ReassemblerConfig::max_datagram
pub const MAX_DATAGRAM: usize = 65_536;

/// The longest header: what a slot keeps aside.
const MAX_HEADER_LEN: usize = HeaderKind::Frame32.header_len();

/// Where the predicted packet goes.
#[derive(Debug)]
struct Place {
    key: FrameKey,
    id: u32,
    /// Where its header begins in the frame's buffer.
    start: usize,
    header_len: usize,
    /// The frame's bytes its header covers.
    kept: [u8; MAX_HEADER_LEN],
}

/// The buffer the next datagram is appended to: see the module's text.
/// Dropped unused, it leaves the reassembler as it was.
#[derive(Debug)]
pub struct Slot<'r> {
    reassembler: &'r mut Reassembler,
    /// `None` once pushed.
    lent: Option<(Vec<u8>, Option<Place>)>,
}

impl Reassembler {
    /// Where to receive the next datagram: append it to [`Slot::buf`], then
    /// [`Slot::push`] it.
    pub fn slot(&mut self) -> Slot<'_> {
        let lent = match self.predict() {
            Some((idx, place)) => {
                let mut buf = std::mem::take(&mut self.partials[idx].buf);
                buf.truncate(place.start);
                (buf, Some(place))
            }
            None => {
                let mut buf = std::mem::take(&mut self.scratch);
                buf.clear();
                buf.reserve(self.config.max_datagram);
                (buf, None)
            }
        };
        Slot {
            reassembler: self,
            lent: Some(lent),
        }
    }

    /// The frame that took the last packet and where its next packet goes,
    /// when that one has not arrived yet and room for any datagram is left
    /// after it (the last packet of a frame seldom has: it is copied).
    fn predict(&self) -> Option<(usize, Place)> {
        let key = self.last_key?;
        let idx = self.partials.iter().position(|p| p.key == key)?;
        let p = &self.partials[idx];
        let chunk = p.chunk?;
        let filled = p.buf.len().checked_sub(p.headroom)?;
        let id = u32::try_from(filled / chunk).ok()?;
        let header_len = key.kind.header_len();
        if filled % chunk != 0 || id >= p.pkg_num || p.has(id) || p.buf.len() < header_len {
            return None;
        }
        let start = p.buf.len() - header_len;
        if p.buf.capacity() - start < self.config.max_datagram {
            return None;
        }
        let mut kept = [0u8; MAX_HEADER_LEN];
        kept[..header_len].copy_from_slice(&p.buf[start..]);
        Some((
            idx,
            Place {
                key,
                id,
                start,
                header_len,
                kept,
            },
        ))
    }

    /// Whether `header` is the packet `place` was predicted for, and one
    /// that `push` would add to its frame as it is: then its body stays
    /// where it landed.
    fn lands_in_place(&self, header: &DatagramHeader, body_len: usize, place: &Place) -> Option<usize> {
        let key = FrameKey::of(header);
        let idx = self.partials.iter().position(|p| p.key == place.key)?;
        let p = &self.partials[idx];
        let chunk = p.chunk?;
        let last = place.id + 1 == p.pkg_num;
        let fits = if last { body_len <= chunk } else { body_len == chunk };
        let expected = key == place.key
            && header.pkg_id == place.id as i32
            && header.pkg_num == p.pkg_num as i32
            && header.pkg_len >= place.header_len as i32
            && !p.has(place.id)
            && fits
            && !self.is_restart(header.time_stamp, header.frame_id);
        expected.then_some(idx)
    }
}

impl Slot<'_> {
    /// Append one datagram here (e.g. tokio's `UdpSocket::recv_buf_from`):
    /// there is room for the config's `max_datagram` bytes; what it holds
    /// already must stay as it is.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.lent.as_mut().expect("a slot is lent until pushed").0
    }

    /// Takes the datagram appended to [`Slot::buf`], which arrived at `now`:
    /// what [`Reassembler::push`] returns for it.
    pub fn push(mut self, now: Duration) -> Option<Frame> {
        let (mut buf, place) = self.lent.take().expect("a slot is lent until pushed");
        let r = &mut *self.reassembler;
        r.stats.datagrams += 1;
        r.evict_stale(now);
        let Some(place) = place else {
            let frame = r.push_counted(&buf, now);
            r.scratch = buf;
            return frame;
        };
        let datagram_at = place.start.min(buf.len());
        let datagram = &buf[datagram_at..];
        let datagram_len = datagram.len();
        let in_place = DatagramHeader::parse(datagram).ok().and_then(|header| {
            let body_len = datagram_len.checked_sub(header.kind.header_len())?;
            r.lands_in_place(&header, body_len, &place)
                .map(|idx| (header, body_len, idx))
        });
        if let Some((header, body_len, idx)) = in_place {
            buf[place.start..place.start + place.header_len].copy_from_slice(&place.kept[..place.header_len]);
            r.partials[idx].buf = buf;
            return r.push_parsed(&header, None, body_len, datagram_len, now);
        }
        let mut scratch = std::mem::take(&mut r.scratch);
        scratch.clear();
        scratch.extend_from_slice(&buf[datagram_at..]);
        r.give_back(buf, &place);
        let frame = r.push_counted(&scratch, now);
        r.scratch = scratch;
        frame
    }
}

impl Reassembler {
    /// Puts a lent frame buffer back as it was, if its frame is still there.
    fn give_back(&mut self, mut buf: Vec<u8>, place: &Place) {
        buf.truncate(place.start);
        buf.extend_from_slice(&place.kept[..place.header_len]);
        if let Some(p) = self.partials.iter_mut().find(|p| p.key == place.key) {
            p.buf = buf;
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        match self.lent.take() {
            Some((buf, Some(place))) => self.reassembler.give_back(buf, &place),
            Some((buf, None)) => self.reassembler.scratch = buf,
            None => {}
        }
    }
}
