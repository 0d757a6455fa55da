//! The simulator's three ZeroMQ sockets, bound the way the simulator
//! binds them, and rebound on a restart.

use std::time::{Duration, Instant};

use crate::options::Options;

/// The ports actually bound (differs from the options when they asked for 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    pub image: u16,
    pub thruster: u16,
    pub telemetry: u16,
}

pub struct Sockets {
    pub images: zmq::Socket,
    pub thrusters: zmq::Socket,
    pub telemetry: zmq::Socket,
}

impl std::fmt::Debug for Sockets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sockets { images: PUB, thrusters: PULL, telemetry: PUB }")
    }
}

/// The largest message the thruster socket accepts: a peer sending more is
/// disconnected by libzmq before anything is allocated for it.
const MAX_THRUSTER_MESSAGE: i64 = 4096;
/// A restarted simulator may find its old listener still closing.
const REBIND_PATIENCE: Duration = Duration::from_secs(3);

impl Sockets {
    pub fn bind(ctx: &zmq::Context, options: &Options, ports: Ports) -> Result<(Sockets, Ports), String> {
        let host = &options.host;
        let (images, image) = bind_one(ctx, zmq::PUB, host, ports.image, "image")?;
        let (thrusters, thruster) = bind_one(ctx, zmq::PULL, host, ports.thruster, "thruster")?;
        thrusters
            .set_maxmsgsize(MAX_THRUSTER_MESSAGE)
            .map_err(|e| format!("thruster socket: {e}"))?;
        let (telemetry, telemetry_port) = bind_one(ctx, zmq::PUB, host, ports.telemetry, "telemetry")?;
        Ok((
            Sockets {
                images,
                thrusters,
                telemetry,
            },
            Ports {
                image,
                thruster,
                telemetry: telemetry_port,
            },
        ))
    }
}

fn bind_one(
    ctx: &zmq::Context,
    kind: zmq::SocketType,
    host: &str,
    port: u16,
    what: &str,
) -> Result<(zmq::Socket, u16), String> {
    let err = |e: zmq::Error| format!("{what} socket on {host}:{port}: {e}");
    let socket = ctx.socket(kind).map_err(err)?;
    // Closing must never wait for unsent messages: a restart or a stop is immediate.
    socket.set_linger(0).map_err(err)?;
    let mut endpoint = auv_proto::tcp_endpoint(host, port);
    if port == 0 {
        // ZeroMQ's syntax for "any free port".
        endpoint.pop();
        endpoint.push('*');
    }
    let started = Instant::now();
    loop {
        match socket.bind(&endpoint) {
            Ok(()) => break,
            Err(zmq::Error::EADDRINUSE) if started.elapsed() < REBIND_PATIENCE => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) => return Err(err(e)),
        }
    }
    let bound = socket
        .get_last_endpoint()
        .map_err(err)?
        .map_err(|_| format!("{what} socket: unreadable endpoint"))?;
    let port = bound
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("{what} socket: cannot read the port of {bound}"))?;
    Ok((socket, port))
}
