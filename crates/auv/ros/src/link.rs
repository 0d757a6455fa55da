//! The bridge's ZeroMQ sockets. The simulator binds; the bridge connects, so
//! libzmq reconnects by itself whenever the simulator comes (back), whatever
//! the start order, and a SUB re-sends its subscriptions when it does.

use std::time::Duration;

use auv_proto::tcp_endpoint;
use ros_common::lifecycle::StopSignal;

/// How long a receive loop waits before looking at the stop signal again.
pub const POLL: Duration = Duration::from_millis(100);

fn configure(socket: &zmq::Socket, reconnect: Duration) -> zmq::Result<()> {
    let ms = reconnect.as_millis().clamp(1, i32::MAX as u128) as i32;
    socket.set_reconnect_ivl(ms)?;
    // No back-off: the simulator is retried at the same pace however long it was away.
    socket.set_reconnect_ivl_max(0)?;
    socket.set_linger(0)
}

/// A SUB socket for the messages of `ids` only (one-byte topic prefixes).
/// `max_message` bounds what libzmq accepts from the simulator at all.
pub fn subscriber(
    ctx: &zmq::Context,
    host: &str,
    port: u16,
    ids: &[u8],
    queue: i32,
    max_message: i64,
    reconnect: Duration,
) -> Result<zmq::Socket, String> {
    let endpoint = tcp_endpoint(host, port);
    let err = |e: zmq::Error| format!("SUB {endpoint}: {e}");
    let s = ctx.socket(zmq::SUB).map_err(err)?;
    configure(&s, reconnect).map_err(err)?;
    s.set_rcvhwm(queue).map_err(err)?;
    s.set_maxmsgsize(max_message).map_err(err)?;
    for id in ids {
        s.set_subscribe(&[*id]).map_err(err)?;
    }
    s.connect(&endpoint).map_err(err)?;
    Ok(s)
}

/// One AUV's PUSH socket for thruster commands: to a connected simulator
/// only (`ZMQ_IMMEDIATE`: nothing is kept for one that is away), one
/// message queued at most (the command path keeps the newest and offers it
/// when there is room; `ZMQ_CONFLATE` would do the same but lost a message
/// closed right after it was queued, here), a small kernel send buffer, and
/// a link whose peer stops answering ZMTP heartbeats dropped and redialled.
pub fn pusher(ctx: &zmq::Context, host: &str, port: u16, reconnect: Duration) -> Result<zmq::Socket, String> {
    let endpoint = tcp_endpoint(host, port);
    let err = |e: zmq::Error| format!("PUSH {endpoint}: {e}");
    let s = ctx.socket(zmq::PUSH).map_err(err)?;
    configure(&s, reconnect).map_err(err)?;
    s.set_immediate(true).map_err(err)?;
    s.set_sndhwm(1).map_err(err)?;
    s.set_sndbuf(4096).map_err(err)?;
    s.set_heartbeat_ivl(HEARTBEAT.as_millis() as i32).map_err(err)?;
    s.set_heartbeat_timeout(3 * HEARTBEAT.as_millis() as i32).map_err(err)?;
    s.connect(&endpoint).map_err(err)?;
    Ok(s)
}

/// How often the command link is probed (ZMTP PING); three missed: dead.
pub const HEARTBEAT: Duration = Duration::from_millis(500);

pub fn stopping(stop: &StopSignal) -> bool {
    *stop.borrow()
}

/// One frame of a received message, as libzmq filled it in: handing it on
/// costs no copy of the (JPEG-sized) bytes.
pub struct Part(zmq::Message);

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Part({} bytes)", self.0.len())
    }
}

impl AsRef<[u8]> for Part {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Part {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The first byte of a message (the AUV id, if it is one).
pub fn first_byte(parts: &[Part]) -> Option<u8> {
    parts.first().and_then(|p| p.as_ref().first()).copied()
}

/// More frames than any message of the protocol has: the rest of a longer
/// message is read and dropped, so it is refused for its part count
/// without being held.
const MAX_PARTS: usize = if auv_proto::IMAGE_PARTS > auv_proto::TELEMETRY_PARTS {
    auv_proto::IMAGE_PARTS + 1
} else {
    auv_proto::TELEMETRY_PARTS + 1
};

const _: () = assert!(MAX_PARTS > auv_proto::IMAGE_PARTS && MAX_PARTS > auv_proto::TELEMETRY_PARTS);

/// The next message waiting on `socket`, if any, as at most [`MAX_PARTS`]
/// frames (a longer one keeps one past the protocol's counts, so it fails them).
fn receive_message(socket: &zmq::Socket) -> Option<Vec<Part>> {
    let mut parts = Vec::with_capacity(3);
    let mut flags = zmq::DONTWAIT;
    loop {
        let msg = socket.recv_msg(flags).ok()?;
        // libzmq delivers a message's frames together: the rest never blocks.
        flags = 0;
        let more = msg.get_more();
        if parts.len() < MAX_PARTS {
            parts.push(Part(msg));
        }
        if !more {
            return Some(parts);
        }
    }
}

/// Every message waiting on `socket`, after waiting up to [`POLL`] for the first.
pub fn receive_all(socket: &zmq::Socket, mut each: impl FnMut(Vec<Part>)) {
    let mut items = [socket.as_poll_item(zmq::POLLIN)];
    if zmq::poll(&mut items, POLL.as_millis() as i64).unwrap_or(0) == 0 {
        return;
    }
    // Bounded so that a flood cannot keep the loop from its stop check.
    for _ in 0..10_000 {
        match receive_message(socket) {
            Some(parts) => each(parts),
            None => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(ctx: &zmq::Context, name: &str) -> (zmq::Socket, zmq::Socket) {
        let rx = ctx.socket(zmq::PAIR).unwrap();
        rx.bind(&format!("inproc://{name}")).unwrap();
        let tx = ctx.socket(zmq::PAIR).unwrap();
        tx.connect(&format!("inproc://{name}")).unwrap();
        (tx, rx)
    }

    fn received(rx: &zmq::Socket) -> Vec<Vec<Vec<u8>>> {
        let mut got = Vec::new();
        receive_all(rx, |parts| {
            got.push(parts.iter().map(|p| p.as_ref().to_vec()).collect())
        });
        got
    }

    #[test]
    fn hands_on_each_message_whole_and_in_order() {
        let ctx = zmq::Context::new();
        let (tx, rx) = pair(&ctx, "whole");
        let jpeg: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
        tx.send_multipart([&[7u8][..], &jpeg, b"\xff\xd8"], 0).unwrap();
        tx.send_multipart([&[9u8][..], &[1, 2, 3]], 0).unwrap();
        let got = received(&rx);
        assert_eq!(
            got,
            vec![vec![vec![7], jpeg, vec![0xff, 0xd8]], vec![vec![9], vec![1, 2, 3]]]
        );
        assert_eq!(first_byte(&[]), None);
    }

    /// A message of many frames keeps one frame more than the protocol's
    /// longest (so it fails every part-count check) and never spills into
    /// the next message.
    #[test]
    fn a_message_of_too_many_frames_is_cut_not_stitched() {
        let ctx = zmq::Context::new();
        let (tx, rx) = pair(&ctx, "many");
        let frames: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i]).collect();
        tx.send_multipart(&frames, 0).unwrap();
        tx.send_multipart([&[1u8][..], &[0; 24]], 0).unwrap();
        let got = received(&rx);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], frames[..MAX_PARTS].to_vec());
        assert_eq!(got[1], vec![vec![1], vec![0; 24]]);
    }
}
