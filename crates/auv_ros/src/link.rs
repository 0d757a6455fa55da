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

/// The PUSH socket for thruster commands. Messages go only to a simulator
/// that is connected (`ZMQ_IMMEDIATE`): nothing waits in the bridge for a
/// simulator that is away and reaches it late.
pub fn pusher(ctx: &zmq::Context, host: &str, port: u16, reconnect: Duration) -> Result<zmq::Socket, String> {
    let endpoint = tcp_endpoint(host, port);
    let err = |e: zmq::Error| format!("PUSH {endpoint}: {e}");
    let s = ctx.socket(zmq::PUSH).map_err(err)?;
    configure(&s, reconnect).map_err(err)?;
    s.set_immediate(true).map_err(err)?;
    s.set_sndhwm(16).map_err(err)?;
    // The stop commands sent at shutdown get this long to leave.
    s.set_linger(200).map_err(err)?;
    s.connect(&endpoint).map_err(err)?;
    Ok(s)
}

pub fn stopping(stop: &StopSignal) -> bool {
    *stop.borrow()
}

/// Every message waiting on `socket`, after waiting up to [`POLL`] for the first.
pub fn receive_all(socket: &zmq::Socket, mut each: impl FnMut(Vec<Vec<u8>>)) {
    let mut items = [socket.as_poll_item(zmq::POLLIN)];
    if zmq::poll(&mut items, POLL.as_millis() as i64).unwrap_or(0) == 0 {
        return;
    }
    // Bounded so that a flood cannot keep the loop from its stop check.
    for _ in 0..10_000 {
        match socket.recv_multipart(zmq::DONTWAIT) {
            Ok(parts) => each(parts),
            Err(_) => break,
        }
    }
}
