//! The bridge's ZeroMQ sockets. The simulator binds; the bridge connects and
//! reconnects whenever the simulator comes (back), whatever the start order,
//! and a SUB re-sends its subscriptions when it does. The SUBs are this
//! crate's own ([`crate::zmtp`]), read on the threads that publish; the PUSH
//! sockets of the command path are libzmq's.

use std::time::Duration;

use auv_proto::tcp_endpoint;
use ros_common::lifecycle::StopSignal;

pub use crate::zmtp::Part;
use crate::zmtp::{Limits, Subscriber};

/// How long a receive loop waits before looking at the stop signal again.
pub const POLL: Duration = Duration::from_millis(100);

fn configure(socket: &zmq::Socket, reconnect: Duration) -> zmq::Result<()> {
    let ms = reconnect.as_millis().clamp(1, i32::MAX as u128) as i32;
    socket.set_reconnect_ivl(ms)?;
    // No back-off: the simulator is retried at the same pace however long it was away.
    socket.set_reconnect_ivl_max(0)?;
    socket.set_linger(0)
}

/// A SUB socket for the messages of `ids` only (one-byte topic prefixes),
/// read on the thread that calls it (see [`crate::zmtp`]). `max_message` bounds
/// every frame the simulator may send; `headroom` is the room kept in front
/// of a large frame (a JPEG) for the fields of the message it becomes.
pub fn subscriber(
    host: &str,
    port: u16,
    ids: &[u8],
    max_message: usize,
    headroom: usize,
    reconnect: Duration,
) -> Subscriber {
    let prefixes: Vec<Vec<u8>> = ids.iter().map(|id| vec![*id]).collect();
    let limits = Limits {
        max_frame: max_message,
        max_parts: MAX_PARTS,
        headroom,
    };
    Subscriber::new(host, port, &prefixes, limits, reconnect, POLL)
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
