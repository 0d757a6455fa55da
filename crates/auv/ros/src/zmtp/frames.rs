//! ZMTP 3.0's bytes as a SUB socket writes and reads them: the greeting,
//! the READY and subscription messages, a frame and its header.

/// The greeting's fixed parts: signature, version 3.0, mechanism NULL, as a client.
pub(super) const SIGNATURE: [u8; 10] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F];
pub(super) const GREETING_LEN: usize = 64;
pub(super) const MECHANISM_AT: usize = 12;
pub(super) const MECHANISM_NULL: &[u8] = b"NULL";

/// Frame flags.
pub(super) const MORE: u8 = 0x01;
pub(super) const LONG: u8 = 0x02;
pub(super) const COMMAND: u8 = 0x04;

/// The greeting and READY: what a SUB sends on connecting.
pub(super) fn hello() -> Vec<u8> {
    let mut out = Vec::with_capacity(GREETING_LEN + 64);
    out.extend_from_slice(&SIGNATURE);
    out.extend_from_slice(&[3, 0]);
    let mut mechanism = [0u8; 20];
    mechanism[..MECHANISM_NULL.len()].copy_from_slice(MECHANISM_NULL);
    out.extend_from_slice(&mechanism);
    // as-server 0, then filler.
    out.extend_from_slice(&[0u8; 32]);
    let mut ready = vec![5];
    ready.extend_from_slice(b"READY");
    ready.push(11);
    ready.extend_from_slice(b"Socket-Type");
    ready.extend_from_slice(&3u32.to_be_bytes());
    ready.extend_from_slice(b"SUB");
    frame(&mut out, COMMAND, &ready);
    out
}

/// The subscriptions, sent once the peer's READY is in: libzmq takes
/// whatever arrives before it has sent its own READY for a handshake
/// command, and drops a connection whose READY is followed by a message.
pub(super) fn subscriptions(prefixes: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    // ZMTP 3.0: a subscription is a message of 1 and the prefix.
    for p in prefixes {
        let mut body = vec![1];
        body.extend_from_slice(p);
        frame(&mut out, 0, &body);
    }
    out
}

pub(super) fn frame(out: &mut Vec<u8>, flags: u8, body: &[u8]) {
    match u8::try_from(body.len()) {
        Ok(n) => out.extend_from_slice(&[flags, n]),
        Err(_) => {
            out.push(flags | LONG);
            out.extend_from_slice(&(body.len() as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(body);
}

/// A frame's flags, length and header length, once the buffer holds its header.
pub(super) fn frame_header(input: &[u8]) -> Option<(u8, usize, usize)> {
    let flags = *input.first()?;
    if flags & LONG != 0 {
        let size = u64::from_be_bytes(input.get(1..9)?.try_into().ok()?);
        Some((flags, usize::try_from(size).unwrap_or(usize::MAX), 9))
    } else {
        Some((flags, usize::from(*input.get(1)?), 2))
    }
}
