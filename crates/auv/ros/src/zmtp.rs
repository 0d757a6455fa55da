//! A ZeroMQ SUB socket's end of ZMTP 3.0 (rfc.zeromq.org/spec/23) over
//! TCP, read on the calling thread: the simulator's PUB sockets (libzmq,
//! pyzmq) send straight to the thread that publishes.
//!
//! Why not libzmq's SUB: it reads the TCP stream on an I/O thread of its
//! own and hands each message to the reading thread through a queue and a
//! socket-pair wake-up, so every message woke two threads, and a JPEG was
//! copied once more out of libzmq's message: a quarter of the AUV bridge's
//! CPU (BENCHMARKS.md). Here one thread waits on the TCP socket, reads what
//! arrived in as few calls as it can, and a large frame lands in a buffer
//! with room in front of it for the ROS message's fields.
//!
//! What it does as libzmq's SUB does: it connects (the simulator binds),
//! retries every reconnect interval with no back-off whatever the start
//! order, subscribes to its one-byte prefixes (the PUB filters), hands on
//! whole messages only (a message cut by a disconnect is dropped), and
//! drops the connection of a peer that sends a frame over the size bound
//! before any of it is held. It speaks the NULL mechanism only, as the
//! simulator's sockets do, and answers a PING with a PONG.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use frames::{
    frame, frame_header, hello, subscriptions, COMMAND, GREETING_LEN, MECHANISM_AT, MECHANISM_NULL, MORE, SIGNATURE,
};

mod frames;

/// A frame at least this long is read straight into its own buffer, not
/// through the reading buffer.
const DIRECT_READ: usize = 16 << 10;
/// What one read takes in at most when frames are small.
const READ_CHUNK: usize = 64 << 10;

/// One frame of a received message, after `at` bytes of room the reader
/// left in front of it (see [`Subscriber::new`]).
pub struct Part {
    buf: Vec<u8>,
    at: usize,
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Part({} bytes)", self.len())
    }
}

impl AsRef<[u8]> for Part {
    fn as_ref(&self) -> &[u8] {
        &self.buf[self.at..]
    }
}

impl Part {
    pub fn len(&self) -> usize {
        self.buf.len() - self.at
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer and where the frame starts in it: `at` bytes in front
    /// are free for whoever serializes the frame as part of a message.
    pub fn into_buffer(self) -> (Vec<u8>, usize) {
        (self.buf, self.at)
    }

    #[cfg(test)]
    pub fn from_bytes(bytes: &[u8]) -> Self {
        Part {
            buf: bytes.to_vec(),
            at: 0,
        }
    }
}

/// Where the handshake is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The peer's greeting.
    Greeting,
    /// The peer's READY.
    Ready,
    /// Messages.
    Messages,
}

/// Why a connection is dropped (the connection is simply made again).
#[derive(Debug)]
enum Dropped {
    Closed,
    Io,
    Protocol,
}

impl From<io::Error> for Dropped {
    fn from(_: io::Error) -> Self {
        Dropped::Io
    }
}

/// A frame whose bytes are still arriving.
struct Body {
    flags: u8,
    /// Kept (room in front, then the frame) or, past the message's
    /// frames kept, `None`: its bytes are read and dropped.
    buf: Option<(Vec<u8>, usize)>,
    missing: usize,
}

/// A connected stream and what of it has been read.
struct Connection {
    stream: TcpStream,
    stage: Stage,
    opened: Instant,
    /// Bytes read and not yet taken (from `taken` on).
    input: Vec<u8>,
    taken: usize,
    body: Option<Body>,
    /// The frames of the message under way.
    parts: Vec<Part>,
    /// The last read stopped at [`MAX_MESSAGES`]: more may be buffered.
    cut_short: bool,
    /// `read` calls made, for the tests.
    reads: u64,
    /// Sent at the peer's READY.
    subscriptions: Vec<u8>,
}

/// Messages one call hands on at most, so that a flood cannot keep the
/// caller from its stop check.
const MAX_MESSAGES: usize = 10_000;

/// How long the peer may take to greet and say READY (libzmq's own handshake interval).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection attempt may take before the next one starts.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

enum State {
    Idle { retry_at: Instant },
    Connecting { socket: Socket, since: Instant },
    Open(Box<Connection>),
}

/// What shapes the frames a [`Subscriber`] hands on.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A frame longer than this drops the connection before any of it is held.
    pub max_frame: usize,
    /// Frames of a message kept at most (the rest are read and dropped).
    pub max_parts: usize,
    /// Room left in front of a frame read straight into a buffer of its own.
    pub headroom: usize,
}

/// The SUB socket.
pub struct Subscriber {
    host: String,
    port: u16,
    hello: Vec<u8>,
    subscriptions: Vec<u8>,
    limits: Limits,
    reconnect: Duration,
    wait: Duration,
    state: State,
    /// Buffers handed back ([`Self::recycle`]) for the next large frames.
    spare: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Idle { .. } => "idle",
            State::Connecting { .. } => "connecting",
            State::Open(c) if c.stage == Stage::Messages => "open",
            State::Open(_) => "handshaking",
        };
        write!(f, "Subscriber(tcp://{}:{}, {state})", self.host, self.port)
    }
}

impl Subscriber {
    /// A SUB of `prefixes` on the PUB at `host:port`, connected by the first
    /// [`Self::receive_all`]; `wait` is the longest a call waits for input.
    pub fn new(
        host: &str,
        port: u16,
        prefixes: &[Vec<u8>],
        limits: Limits,
        reconnect: Duration,
        wait: Duration,
    ) -> Self {
        Self {
            host: host.trim_start_matches('[').trim_end_matches(']').to_string(),
            port,
            hello: hello(),
            subscriptions: subscriptions(prefixes),
            limits,
            reconnect,
            wait,
            state: State::Idle {
                retry_at: Instant::now(),
            },
            spare: Vec::new(),
        }
    }

    /// Whether the handshake with the PUB is done.
    pub fn is_connected(&self) -> bool {
        matches!(&self.state, State::Open(c) if c.stage == Stage::Messages)
    }

    /// A frame's buffer back, for a later large frame.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < 4 {
            self.spare.push(buf);
        }
    }

    /// Every whole message that has arrived, as its frames, after waiting
    /// up to the wait for the first bytes (connecting, or reconnecting,
    /// first when needed).
    pub fn receive_all(&mut self, mut each: impl FnMut(Vec<Part>)) {
        let deadline = Instant::now() + self.wait;
        loop {
            let idle_now = State::Idle {
                retry_at: Instant::now() + self.reconnect,
            };
            self.state = match std::mem::replace(&mut self.state, idle_now) {
                State::Idle { retry_at } => {
                    let now = Instant::now();
                    if now < retry_at {
                        self.state = State::Idle { retry_at };
                        if now >= deadline {
                            return;
                        }
                        std::thread::sleep(retry_at.min(deadline) - now);
                        continue;
                    }
                    self.connect()
                }
                State::Connecting { socket, since } => {
                    if !wait_for(socket.as_raw_fd(), libc::POLLOUT, deadline) {
                        if since.elapsed() < CONNECT_TIMEOUT {
                            self.state = State::Connecting { socket, since };
                        }
                        return;
                    }
                    match socket.take_error() {
                        Ok(None) => match self.open(socket.into()) {
                            Ok(c) => State::Open(Box::new(c)),
                            Err(_) => continue,
                        },
                        _ => continue,
                    }
                }
                State::Open(mut c) => {
                    if !c.cut_short && !wait_for(c.stream.as_raw_fd(), libc::POLLIN, deadline) {
                        if c.stage == Stage::Messages || c.opened.elapsed() < HANDSHAKE_TIMEOUT {
                            self.state = State::Open(c);
                        }
                        return;
                    }
                    match read_available(&mut c, &self.limits, &mut self.spare, &mut each) {
                        Ok(()) => {
                            self.state = State::Open(c);
                            return;
                        }
                        // The connection goes; the next is tried a reconnect interval from now.
                        Err(_) => continue,
                    }
                }
            };
        }
    }

    /// A non-blocking connection attempt to the host's first address.
    fn connect(&self) -> State {
        let idle = || State::Idle {
            retry_at: Instant::now() + self.reconnect,
        };
        let Some(addr) = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
        else {
            return idle();
        };
        match start_connect(addr) {
            Ok(socket) => State::Connecting {
                socket,
                since: Instant::now(),
            },
            Err(_) => idle(),
        }
    }

    /// The connected stream, greeted, subscribed.
    fn open(&self, stream: TcpStream) -> io::Result<Connection> {
        stream.set_nodelay(true)?;
        stream.set_nonblocking(false)?;
        // A few hundred bytes into a fresh socket's empty send buffer.
        stream.set_write_timeout(Some(Duration::from_secs(1)))?;
        (&stream).write_all(&self.hello)?;
        stream.set_nonblocking(true)?;
        Ok(Connection {
            stream,
            stage: Stage::Greeting,
            opened: Instant::now(),
            input: Vec::with_capacity(READ_CHUNK),
            taken: 0,
            body: None,
            parts: Vec::new(),
            cut_short: false,
            reads: 0,
            subscriptions: self.subscriptions.clone(),
        })
    }
}

fn start_connect(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_nonblocking(true)?;
    match socket.connect(&addr.into()) {
        Ok(()) => Ok(socket),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(socket),
        Err(e) => Err(e),
    }
}

/// Waits until `fd` is ready for `events` (or failed) or `deadline` passes.
fn wait_for(fd: i32, events: libc::c_short, deadline: Instant) -> bool {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    let ms = deadline.saturating_duration_since(Instant::now()).as_millis();
    let ms = i32::try_from(ms).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n > 0 && p.revents != 0
}

/// `read` into the first `n` bytes of `buf`'s spare capacity, which it keeps.
fn read_into_spare(stream: &TcpStream, buf: &mut Vec<u8>, n: usize) -> io::Result<usize> {
    buf.reserve(n);
    let room = &mut buf.spare_capacity_mut()[..n];
    // SAFETY: `read` only writes into the slice; the length grows by what it reports written,
    // which the kernel initialised.
    let got = unsafe {
        let room = &mut *(std::ptr::from_mut(room) as *mut [u8]);
        let got = (&*stream).read(room)?;
        buf.set_len(buf.len() + got);
        got
    };
    Ok(got)
}

/// Reads what the socket has (no wait), handing on each whole message, up
/// to [`MAX_MESSAGES`]. A read that filled less than it asked for emptied
/// the socket: the caller waits next, with no read to be told `EAGAIN`
/// (a system call per burst of messages).
fn read_available(
    c: &mut Connection,
    limits: &Limits,
    spare: &mut Vec<Vec<u8>>,
    each: &mut impl FnMut(Vec<Part>),
) -> Result<(), Dropped> {
    let handed = std::cell::Cell::new(0usize);
    let each = &mut |m: Vec<Part>| {
        handed.set(handed.get() + 1);
        each(m)
    };
    c.cut_short = false;
    let mut drained = false;
    loop {
        if handed.get() >= MAX_MESSAGES {
            c.cut_short = true;
            return Ok(());
        }
        let asked;
        let got = if let Some(body) = &mut c.body {
            if body.missing == 0 {
                let body = c.body.take().expect("a frame under way");
                finish_frame(c, body, each);
                continue;
            }
            if drained {
                return Ok(());
            }
            // A large frame's rest goes straight into its buffer; a dropped one's through the input.
            c.reads += 1;
            match &mut body.buf {
                Some((buf, _)) => {
                    asked = body.missing;
                    read_into_spare(&c.stream, buf, asked)
                }
                None => {
                    c.input.clear();
                    c.taken = 0;
                    asked = body.missing.min(READ_CHUNK);
                    read_into_spare(&c.stream, &mut c.input, asked).inspect(|_| c.input.clear())
                }
            }
            .inspect(|&n| body.missing -= n.min(body.missing))
        } else {
            if decode(c, limits, spare, each)? {
                continue;
            }
            if drained {
                return Ok(());
            }
            if c.taken > 0 {
                c.input.drain(..c.taken);
                c.taken = 0;
            }
            c.reads += 1;
            asked = READ_CHUNK;
            read_into_spare(&c.stream, &mut c.input, asked)
        };
        match got {
            Ok(0) => return Err(Dropped::Closed),
            Ok(n) => drained = n < asked,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Takes what it can from the reading buffer: the handshake's next step or
/// a frame (of a large one its start, leaving the rest to be read into
/// it). `false` when it needs more bytes.
fn decode(
    c: &mut Connection,
    limits: &Limits,
    spare: &mut Vec<Vec<u8>>,
    each: &mut impl FnMut(Vec<Part>),
) -> Result<bool, Dropped> {
    let input = &c.input[c.taken..];
    if c.stage == Stage::Greeting {
        // A peer that is not ZMTP at all shows it by its first byte.
        if input.first().is_some_and(|&b| b != SIGNATURE[0]) {
            return Err(Dropped::Protocol);
        }
        let Some(g) = input.get(..GREETING_LEN) else {
            return Ok(false);
        };
        let mechanism = &g[MECHANISM_AT..MECHANISM_AT + 20];
        let null = mechanism.starts_with(MECHANISM_NULL) && mechanism[MECHANISM_NULL.len()..].iter().all(|&b| b == 0);
        if g[9] & 1 != 1 || g[10] < 3 || !null {
            return Err(Dropped::Protocol);
        }
        c.taken += GREETING_LEN;
        c.stage = Stage::Ready;
        return Ok(true);
    }
    let Some((flags, len, header)) = frame_header(input) else {
        return Ok(false);
    };
    if flags & COMMAND != 0 {
        return command(c, flags, len, header);
    }
    if c.stage != Stage::Messages || len > limits.max_frame {
        return Err(Dropped::Protocol);
    }
    let available = input.len() - header;
    let keep = c.parts.len() < limits.max_parts;
    if len < DIRECT_READ {
        // Small frames are taken whole from the reading buffer.
        if available < len {
            return Ok(false);
        }
        let buf = keep.then(|| (input[header..header + len].to_vec(), 0));
        c.taken += header + len;
        finish_frame(c, Body { flags, buf, missing: 0 }, each);
        return Ok(true);
    }
    let have = available.min(len);
    let buf = keep.then(|| {
        let mut b = spare.pop().unwrap_or_default();
        b.clear();
        b.reserve_exact(limits.headroom + len);
        b.resize(limits.headroom, 0);
        b.extend_from_slice(&input[header..header + have]);
        (b, limits.headroom)
    });
    c.taken += header + have;
    c.body = Some(Body {
        flags,
        buf,
        missing: len - have,
    });
    Ok(true)
}

/// A command frame, once whole in the reading buffer: the peer's READY
/// ends the handshake; a PING is answered.
fn command(c: &mut Connection, flags: u8, len: usize, header: usize) -> Result<bool, Dropped> {
    // Commands are small; a long one is no peer of this protocol.
    if len > 4096 || flags & MORE != 0 {
        return Err(Dropped::Protocol);
    }
    let input = &c.input[c.taken..];
    let Some(body) = input.get(header..header + len) else {
        return Ok(false);
    };
    let name_len = usize::from(*body.first().unwrap_or(&0));
    let name = body.get(1..1 + name_len).unwrap_or_default();
    let mut pong = None;
    match (c.stage, name) {
        (Stage::Ready, b"READY") => {
            c.stage = Stage::Messages;
            // A few bytes into a socket that has sent only the greeting.
            (&c.stream).write_all(&c.subscriptions)?;
        }
        (Stage::Ready, _) => return Err(Dropped::Protocol),
        (_, b"PING") => {
            // The PONG carries the PING's context (after its 2-byte TTL).
            let context = body.get(1 + name_len + 2..).unwrap_or_default();
            let mut reply = vec![4];
            reply.extend_from_slice(b"PONG");
            reply.extend_from_slice(context);
            let mut out = Vec::new();
            frame(&mut out, COMMAND, &reply);
            pong = Some(out);
        }
        _ => {}
    }
    c.taken += header + len;
    if let Some(out) = pong {
        // Into the send buffer or not at all: the peer's next PING asks again.
        let _ = (&c.stream).write(&out);
    }
    Ok(true)
}

/// A whole frame into its message; the message handed on after its last frame.
fn finish_frame(c: &mut Connection, body: Body, each: &mut impl FnMut(Vec<Part>)) {
    if let Some((buf, at)) = body.buf {
        c.parts.push(Part { buf, at });
    }
    if body.flags & MORE == 0 {
        each(std::mem::take(&mut c.parts));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    const WAIT: Duration = Duration::from_millis(20);

    fn limits(max_parts: usize) -> Limits {
        Limits {
            max_frame: 1 << 20,
            max_parts,
            headroom: 64,
        }
    }

    /// A libzmq PUB on a free port of loopback.
    fn publisher(ctx: &zmq::Context) -> (zmq::Socket, u16) {
        let pub_ = ctx.socket(zmq::PUB).unwrap();
        pub_.set_linger(0).unwrap();
        pub_.bind("tcp://127.0.0.1:0").unwrap();
        let endpoint = pub_.get_last_endpoint().unwrap().unwrap();
        let port = endpoint.rsplit(':').next().unwrap().parse().unwrap();
        (pub_, port)
    }

    fn subscriber(port: u16, ids: &[u8], limits: Limits) -> Subscriber {
        let prefixes: Vec<Vec<u8>> = ids.iter().map(|i| vec![*i]).collect();
        Subscriber::new("127.0.0.1", port, &prefixes, limits, Duration::from_millis(50), WAIT)
    }

    fn frames(m: &[Part]) -> Vec<Vec<u8>> {
        m.iter().map(|p| p.as_ref().to_vec()).collect()
    }

    /// Sends `message` until the subscriber gets one (a SUB joins a moment
    /// after it connects), then returns everything received after it.
    fn joined(pub_: &zmq::Socket, sub: &mut Subscriber, message: &[Vec<u8>]) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            assert!(Instant::now() < deadline, "the subscription never took ({sub:?})");
            pub_.send_multipart(message, 0).unwrap();
            let mut got = Vec::new();
            sub.receive_all(|m| got.push(frames(&m)));
            if got.iter().any(|m| m == message) {
                return;
            }
        }
    }

    fn collect(sub: &mut Subscriber, n: usize) -> Vec<Vec<Vec<u8>>> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut got = Vec::new();
        while got.len() < n {
            assert!(Instant::now() < deadline, "{} of {n} messages", got.len());
            sub.receive_all(|m| got.push(frames(&m)));
        }
        got
    }

    #[test]
    fn hands_on_each_subscribed_message_whole_and_in_order() {
        let ctx = zmq::Context::new();
        let (pub_, port) = publisher(&ctx);
        let mut sub = subscriber(port, &[7, 9], limits(4));
        joined(&pub_, &mut sub, &[vec![7u8], vec![0]]);
        let jpeg: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
        let small = b"\xff\xd8".to_vec();
        let sent: Vec<Vec<Vec<u8>>> = vec![
            vec![vec![7], jpeg.clone(), small.clone()],
            vec![vec![8], vec![1, 2, 3]],
            vec![vec![9], vec![4; 300], vec![]],
            vec![vec![7], small.clone(), jpeg.clone()],
        ];
        for m in &sent {
            pub_.send_multipart(m, 0).unwrap();
        }
        let got = collect(&mut sub, 3);
        // Id 8 was not subscribed to: the publisher keeps it.
        assert_eq!(got, vec![sent[0].clone(), sent[2].clone(), sent[3].clone()]);
    }

    /// A burst is read until a read comes back short, not until one says
    /// `EAGAIN`: a message that arrived whole costs one read.
    #[test]
    fn a_burst_is_read_with_no_read_past_its_end() {
        let ctx = zmq::Context::new();
        let (pub_, port) = publisher(&ctx);
        let mut sub = subscriber(port, &[3], limits(4));
        joined(&pub_, &mut sub, &[vec![3u8]]);
        let reads = |sub: &Subscriber| match &sub.state {
            State::Open(c) => c.reads,
            _ => panic!("not connected"),
        };
        let jpeg: Vec<u8> = (0..(DIRECT_READ as u32 * 2)).map(|i| (i % 251) as u8).collect();
        for message in [vec![vec![3u8], vec![1, 2, 3]], vec![vec![3u8], jpeg.clone()]] {
            // Sent whole before the subscriber looks, so that one wait finds it all.
            pub_.send_multipart(&message, 0).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let before = reads(&sub);
            let got = collect(&mut sub, 1);
            assert_eq!(got, vec![message.clone()]);
            let made = reads(&sub) - before;
            assert_eq!(made, 1, "reads for a message of {} bytes", message[1].len());
        }
    }

    #[test]
    fn a_large_frame_has_room_in_front_and_its_buffer_is_reused() {
        let ctx = zmq::Context::new();
        let (pub_, port) = publisher(&ctx);
        let mut sub = subscriber(port, &[1], limits(4));
        joined(&pub_, &mut sub, &[vec![1u8]]);
        let jpeg: Vec<u8> = (0..100_000u32).map(|i| (i % 241) as u8).collect();
        for _ in 0..3 {
            pub_.send_multipart([vec![1u8], jpeg.clone()], 0).unwrap();
            let mut got = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(10);
            while got.is_empty() {
                assert!(Instant::now() < deadline);
                sub.receive_all(|m| got.push(m));
            }
            let mut parts = got.pop().unwrap();
            let (buf, at) = parts.pop().unwrap().into_buffer();
            assert_eq!((at, &buf[at..]), (64, &jpeg[..]));
            assert_eq!(parts[0].as_ref(), [1]);
            sub.recycle(buf);
        }
        assert_eq!(sub.spare.len(), 1, "the one buffer went round");
    }

    /// More frames than kept: the message keeps `max_parts` of them (and so
    /// fails every part count), the rest are read past, and nothing spills
    /// into the next message.
    #[test]
    fn a_message_of_too_many_frames_is_cut_not_stitched() {
        let ctx = zmq::Context::new();
        let (pub_, port) = publisher(&ctx);
        let mut sub = subscriber(port, &[1], limits(4));
        joined(&pub_, &mut sub, &[vec![1u8]]);
        let mut many: Vec<Vec<u8>> = (0..50u8).map(|i| vec![1, i]).collect();
        many[20] = vec![5; 40_000];
        pub_.send_multipart(&many, 0).unwrap();
        pub_.send_multipart([vec![1u8], vec![0; 24]], 0).unwrap();
        let got = collect(&mut sub, 2);
        assert_eq!(got[0], many[..4].to_vec());
        assert_eq!(got[1], vec![vec![1], vec![0; 24]]);
    }

    #[test]
    fn resumes_after_the_publisher_restarts_on_its_port() {
        let ctx = zmq::Context::new();
        let (pub_, port) = publisher(&ctx);
        let mut sub = subscriber(port, &[3], limits(4));
        joined(&pub_, &mut sub, &[vec![3u8], b"before".to_vec()]);
        drop(pub_);
        // Away for a while: the subscriber retries every 50 ms meanwhile.
        let away = Instant::now() + Duration::from_millis(300);
        while Instant::now() < away {
            sub.receive_all(|m| panic!("{m:?} from a closed publisher"));
        }
        let again = ctx.socket(zmq::PUB).unwrap();
        again.set_linger(0).unwrap();
        again.bind(&format!("tcp://127.0.0.1:{port}")).unwrap();
        joined(&again, &mut sub, &[vec![3u8], b"after".to_vec()]);
    }

    /// A frame over the bound: the connection goes before it is read, and
    /// the messages after the reconnection arrive.
    #[test]
    fn a_frame_over_the_bound_drops_the_connection_not_the_subscriber() {
        let ctx = zmq::Context::new();
        let (pub_, port) = publisher(&ctx);
        let small = Limits {
            max_frame: 1000,
            ..limits(4)
        };
        let mut sub = subscriber(port, &[2], small);
        joined(&pub_, &mut sub, &[vec![2u8], vec![0; 1000]]);
        pub_.send_multipart([vec![2u8], vec![0; 1001]], 0).unwrap();
        let mut dropped = false;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !dropped {
            assert!(Instant::now() < deadline, "still connected");
            sub.receive_all(|m| panic!("{} bytes handed on", m[1].len()));
            dropped = !sub.is_connected();
        }
        joined(&pub_, &mut sub, &[vec![2u8], vec![1; 10]]);
    }

    /// A publisher that checks its peers' liveness (ZMTP heartbeats) keeps
    /// this subscriber, which answers its PINGs.
    #[test]
    fn pings_are_answered_and_the_connection_stays() {
        let ctx = zmq::Context::new();
        let pub_ = ctx.socket(zmq::PUB).unwrap();
        pub_.set_linger(0).unwrap();
        pub_.set_heartbeat_ivl(50).unwrap();
        pub_.set_heartbeat_timeout(150).unwrap();
        pub_.bind("tcp://127.0.0.1:0").unwrap();
        let port = pub_
            .get_last_endpoint()
            .unwrap()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let mut sub = subscriber(port, &[4], limits(4));
        joined(&pub_, &mut sub, &[vec![4u8]]);
        let until = Instant::now() + Duration::from_millis(800);
        while Instant::now() < until {
            sub.receive_all(|_| {});
            assert!(sub.is_connected(), "dropped by the publisher's heartbeat");
        }
        pub_.send_multipart([vec![4u8], b"still here".to_vec()], 0).unwrap();
        assert_eq!(collect(&mut sub, 1), vec![vec![vec![4u8], b"still here".to_vec()]]);
    }

    /// Whatever a peer that is not a ZMQ publisher says, the subscriber
    /// returns within its wait and keeps trying.
    #[test]
    fn a_peer_that_is_no_publisher_is_left_and_retried() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let peer = std::thread::spawn(move || {
            for reply in [&b"HTTP/1.1 400 Bad Request\r\n\r\n"[..], &[0xFF; 200][..]] {
                let (mut s, _) = listener.accept().unwrap();
                let _ = s.write_all(reply);
            }
        });
        let mut sub = subscriber(port, &[1], limits(4));
        let deadline = Instant::now() + Duration::from_secs(3);
        while !peer.is_finished() {
            assert!(Instant::now() < deadline, "the subscriber stopped trying");
            let t = Instant::now();
            sub.receive_all(|m| panic!("{m:?}"));
            assert!(t.elapsed() < Duration::from_secs(1));
            assert!(!sub.is_connected());
        }
        peer.join().unwrap();
    }

    #[test]
    fn returns_within_its_wait_with_no_publisher() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut sub = subscriber(port, &[1], limits(4));
        for _ in 0..5 {
            let t = Instant::now();
            sub.receive_all(|m| panic!("{m:?}"));
            assert!(t.elapsed() < Duration::from_millis(500), "{:?}", t.elapsed());
        }
    }
}
