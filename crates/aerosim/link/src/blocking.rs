//! A broker connection that blocks on its socket: a request is one write, its
//! response one or a few reads, on the caller's thread, with no reactor, task
//! or timer in between. The topics reader polls over it: the broker holds each
//! fetch for its wait, so the thread sleeps in `read` and a poll costs one
//! wake-up: a quarter less CPU than over rskafka's async connection, and
//! polling is most of what the bridge spends on Kafka.

use std::collections::HashMap;
use std::io::{Cursor, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rskafka::protocol::api_key::ApiKey;
use rskafka::protocol::api_version::{ApiVersion, ApiVersionRange};
use rskafka::protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, ReadVersionedType, RequestBody, RequestHeader, WriteVersionedType,
};
use rskafka::protocol::primitives::{Int16, Int32, NullableString, TaggedFields};
use rskafka::protocol::traits::ReadType;

use crate::fetch_response::TOO_LARGE;
use crate::LinkError;

pub(crate) fn unreachable_broker(what: &str, e: impl std::fmt::Display) -> LinkError {
    LinkError {
        reason: "broker_unreachable",
        detail: format!("{what}: {e}"),
    }
}

fn invalid(what: &str, e: impl std::fmt::Display) -> LinkError {
    LinkError {
        reason: "invalid_response",
        detail: format!("{what}: {e}"),
    }
}

fn io_error(what: &str, e: &std::io::Error) -> LinkError {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => crate::timed_out(what),
        _ => unreachable_broker(what, e),
    }
}

/// Ends the blocking calls of the connections registered with it, from
/// another thread: at the stop, a thread blocked in a read must not wait
/// for a broker that trickles or never answers.
#[derive(Debug, Clone)]
pub struct Closer {
    inner: Arc<Mutex<CloserState>>,
    /// Wakes a [`Closer::wait_until`] at the close.
    woken: Arc<Condvar>,
    /// Turns true at the close: ends [`Closer::unless_closed`].
    closed: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Default for Closer {
    fn default() -> Self {
        Self {
            inner: Arc::default(),
            woken: Arc::default(),
            closed: Arc::new(tokio::sync::watch::channel(false).0),
        }
    }
}

#[derive(Debug, Default)]
struct CloserState {
    closed: bool,
    /// A clone of each open connection's socket, by connection number.
    open: Vec<(u64, TcpStream)>,
}

/// Numbers the connections a closer knows.
static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

impl Closer {
    /// Shuts every registered socket down (their reads and writes fail at
    /// once) and refuses new connections from now on.
    pub fn close(&self) {
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        state.closed = true;
        for (_, s) in state.open.drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        self.woken.notify_all();
        self.closed.send_replace(true);
    }

    /// `f`'s output, or `None` once the closer closes (an async call has no
    /// socket the close could shut).
    pub async fn unless_closed<F: std::future::Future>(&self, f: F) -> Option<F::Output> {
        let mut closed = self.closed.subscribe();
        tokio::select! {
            biased;
            _ = closed.wait_for(|c| *c) => None,
            r = f => Some(r),
        }
    }

    pub fn is_closed(&self) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).closed
    }

    /// Waits until `deadline` or the close, whichever comes first.
    pub fn wait_until(&self, deadline: Instant) {
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        while !state.closed {
            let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                return;
            };
            state = self
                .woken
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn register(&self, stream: &TcpStream) -> Result<u64, LinkError> {
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if state.closed {
            return Err(unreachable_broker("connect", "the reader is stopping"));
        }
        let id = NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed);
        let clone = stream.try_clone().map_err(|e| unreachable_broker("connect", e))?;
        state.open.push((id, clone));
        Ok(id)
    }

    fn forget(&self, id: u64) {
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        state.open.retain(|(i, _)| *i != id);
    }
}

/// The highest version both sides speak (what rskafka's own connection picks).
fn common_version(broker: ApiVersionRange, ours: ApiVersionRange) -> Option<ApiVersion> {
    (broker.min() <= ours.max() && ours.min() <= broker.max()).then(|| broker.max().min(ours.max()))
}

/// How often a name lookup under way looks at the closer.
const LOOKUP_SLICE: Duration = Duration::from_millis(20);

/// `address`'s socket addresses, by `lookup` unless it is one already. The
/// lookup runs on a thread of its own, left behind when it outlasts
/// `timeout` or the closer closes: a resolver that does not answer holds
/// getaddrinfo for as long as its own timeouts allow (seconds each), and
/// neither the reader nor the stop that joins it waits for that.
fn resolve(
    address: &str,
    timeout: Duration,
    closer: Option<&Closer>,
    lookup: fn(&str) -> std::io::Result<Vec<SocketAddr>>,
) -> Result<Vec<SocketAddr>, LinkError> {
    if let Ok(a) = address.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    let (found, answer) = std::sync::mpsc::channel();
    let name = address.to_string();
    std::thread::Builder::new()
        .name("kafka_lookup".into())
        .spawn(move || {
            let _ = found.send(lookup(&name));
        })
        .map_err(|e| unreachable_broker(address, e))?;
    let deadline = Instant::now() + timeout;
    loop {
        match answer.recv_timeout(LOOKUP_SLICE) {
            Ok(r) => return r.map_err(|e| unreachable_broker(address, e)),
            Err(RecvTimeoutError::Disconnected) => return Err(unreachable_broker(address, "the lookup failed")),
            Err(RecvTimeoutError::Timeout) => {}
        }
        if closer.is_some_and(Closer::is_closed) {
            return Err(unreachable_broker(address, "the reader is stopping"));
        }
        if Instant::now() >= deadline {
            return Err(LinkError {
                reason: "timeout",
                detail: format!("{address}: no answer from the name lookup within {timeout:?}"),
            });
        }
    }
}

/// One connection to one broker, its API versions agreed. After any error
/// its framing may be lost: drop it and connect again.
#[derive(Debug)]
pub struct BlockingConnection {
    stream: TcpStream,
    address: String,
    client_id: String,
    max_message_bytes: usize,
    correlation_id: i32,
    versions: HashMap<ApiKey, ApiVersionRange>,
    request: Vec<u8>,
    read_timeout: Option<Duration>,
    /// Its number with the closer that can end its calls.
    closer: Option<(Closer, u64)>,
}

impl Drop for BlockingConnection {
    fn drop(&mut self) {
        if let Some((closer, id)) = &self.closer {
            closer.forget(*id);
        }
    }
}

/// The body of a response as it comes off the socket, bounded by its
/// length and its deadline.
struct Body<'a> {
    connection: &'a mut BlockingConnection,
    left: usize,
    deadline: Instant,
}

impl Read for Body<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.left);
        if n == 0 {
            return Ok(0);
        }
        let got = self
            .connection
            .read_some(&mut buf[..n], self.deadline)
            .map_err(std::io::Error::other)?;
        self.left -= got;
        Ok(got)
    }
}

/// The longest one read waits before the deadline is looked at again.
const READ_SLICE: Duration = Duration::from_millis(100);

impl BlockingConnection {
    /// Some bytes into `buf` (at least one) before `deadline`.
    fn read_some(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, LinkError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LinkError {
                    reason: "timeout",
                    detail: format!("{}: the response did not come whole in time", self.address),
                });
            }
            // Each read waits a slice at most, never past the deadline.
            let slice = left.min(READ_SLICE).max(Duration::from_millis(1));
            if self.read_timeout.is_none_or(|t| t > left || t * 2 < slice) {
                self.stream
                    .set_read_timeout(Some(slice))
                    .map_err(|e| io_error(&self.address, &e))?;
                self.read_timeout = Some(slice);
            }
            match self.stream.read(buf) {
                Ok(0) => return Err(unreachable_broker(&self.address, "the broker closed the connection")),
                Ok(n) => return Ok(n),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(io_error(&self.address, &e)),
            }
        }
    }

    /// Fills `buf` from the socket before `deadline`.
    fn read_by(&mut self, buf: &mut [u8], deadline: Instant) -> Result<(), LinkError> {
        let mut filled = 0;
        while filled < buf.len() {
            filled += self.read_some(&mut buf[filled..], deadline)?;
        }
        Ok(())
    }

    /// The length and header of the answer to the last request: how many
    /// bytes of body follow.
    fn response_header(&mut self, deadline: Instant) -> Result<usize, LinkError> {
        let mut head = [0; 8];
        self.read_by(&mut head, deadline)?;
        let length = usize::try_from(i32::from_be_bytes(head[..4].try_into().expect("4 bytes")))
            .ok()
            .and_then(|n| n.checked_sub(4))
            .ok_or_else(|| invalid(&self.address, "a response of negative length"))?;
        if i32::from_be_bytes(head[4..].try_into().expect("4 bytes")) != self.correlation_id {
            return Err(invalid(&self.address, "a response to another request"));
        }
        Ok(length)
    }

    /// The answer to a Fetch v4 [`Self::send`] wrote last, read batch by
    /// batch straight off the socket (never whole: see `fetch_response`):
    /// the partitions of the topics `asked`, at most `keep` bytes of batches
    /// kept for each; whole within `timeout`.
    pub fn receive_fetch(
        &mut self,
        version: ApiVersion,
        timeout: Duration,
        asked: &[&str],
        keep: usize,
    ) -> Result<Vec<crate::fetch_response::PartitionData>, LinkError> {
        if version != ApiVersion(Int16(4)) {
            return Err(invalid(&self.address, format!("fetch version {version:?} (4 is read)")));
        }
        let deadline = Instant::now() + timeout;
        let length = self.response_header(deadline)?;
        let mut body = Body {
            connection: self,
            left: length,
            deadline,
        };
        let parts = crate::fetch_response::read(&mut body, asked, keep)?;
        // Whatever the parts did not use.
        let left = body.left;
        std::io::copy(&mut body.take(left as u64), &mut std::io::sink()).map_err(|e| invalid("fetch", e))?;
        Ok(parts)
    }

    /// Connects (Nagle off: a camera record is more than one segment) and
    /// asks the broker for its API versions; `closer` can end its calls.
    pub fn connect(
        address: &str,
        client_id: &str,
        max_message_bytes: usize,
        timeout: Duration,
        closer: Option<&Closer>,
    ) -> Result<Self, LinkError> {
        let addresses = resolve(address, timeout, closer, |a| a.to_socket_addrs().map(Iterator::collect))?;
        let mut last = None;
        let stream = addresses
            .into_iter()
            .find_map(|a| {
                TcpStream::connect_timeout(&a, timeout)
                    .inspect_err(|e| last = Some(io_error(address, e)))
                    .ok()
            })
            .ok_or_else(|| last.unwrap_or_else(|| unreachable_broker(address, "no address")))?;
        stream.set_nodelay(true).map_err(|e| io_error(address, &e))?;
        stream
            .set_write_timeout(Some(timeout))
            .map_err(|e| io_error(address, &e))?;
        let closer = match closer {
            Some(c) => Some((c.clone(), c.register(&stream)?)),
            None => None,
        };
        let mut connection = Self {
            stream,
            address: address.to_string(),
            client_id: client_id.to_string(),
            max_message_bytes,
            correlation_id: 0,
            versions: HashMap::new(),
            request: Vec::new(),
            read_timeout: None,
            closer,
        };
        // Version 0: every broker answers it.
        let asked = ApiVersionsRequest {
            client_software_name: None,
            client_software_version: None,
            tagged_fields: None,
        };
        let version = ApiVersion(Int16(0));
        connection.send_as(&asked, version)?;
        let answer: ApiVersionsResponse = connection.receive::<ApiVersionsRequest>(version, timeout)?;
        if let Some(e) = answer.error_code {
            return Err(LinkError {
                reason: crate::protocol_reason(&e),
                detail: format!("{address}: api versions: {e:?}"),
            });
        }
        connection.versions = answer
            .api_keys
            .iter()
            .map(|k| (k.api_key, ApiVersionRange::new(k.min_version, k.max_version)))
            .collect();
        Ok(connection)
    }

    /// The version `R` goes out in, or an error when the broker speaks none
    /// that this client does.
    fn version_of<R: RequestBody>(&self) -> Result<ApiVersion, LinkError> {
        self.versions
            .get(&R::API_KEY)
            .and_then(|&broker| common_version(broker, R::API_VERSION_RANGE))
            .ok_or_else(|| LinkError {
                reason: "broker_error",
                detail: format!("{}: no common version of {:?}", self.address, R::API_KEY),
            })
    }

    /// `body` and its answer.
    pub fn request<R>(&mut self, body: &R, timeout: Duration) -> Result<R::ResponseBody, LinkError>
    where
        R: RequestBody + WriteVersionedType<Vec<u8>>,
        R::ResponseBody: ReadVersionedType<Cursor<Vec<u8>>>,
    {
        let version = self.send(body)?;
        self.receive::<R>(version, timeout)
    }

    /// Writes `body` as the next request, in the version it returns;
    /// [`Self::receive`] reads its answer (several connections can each have
    /// a request out before any is read).
    pub fn send<R>(&mut self, body: &R) -> Result<ApiVersion, LinkError>
    where
        R: RequestBody + WriteVersionedType<Vec<u8>>,
    {
        let version = self.version_of::<R>()?;
        self.send_as(body, version)?;
        Ok(version)
    }

    fn send_as<R>(&mut self, body: &R, version: ApiVersion) -> Result<(), LinkError>
    where
        R: RequestBody + WriteVersionedType<Vec<u8>>,
    {
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let header = RequestHeader {
            request_api_key: R::API_KEY,
            request_api_version: version,
            correlation_id: Int32(self.correlation_id),
            client_id: Some(NullableString(Some(self.client_id.clone()))),
            tagged_fields: Some(TaggedFields::default()),
        };
        let header_version = ApiVersion(Int16(if version >= R::FIRST_TAGGED_FIELD_IN_REQUEST_VERSION {
            2
        } else {
            1
        }));
        let buf = &mut self.request;
        buf.clear();
        buf.extend_from_slice(&[0; 4]);
        header
            .write_versioned(buf, header_version)
            .map_err(|e| invalid("request header", e))?;
        body.write_versioned(buf, version).map_err(|e| invalid("request", e))?;
        let length = i32::try_from(buf.len() - 4).map_err(|e| invalid("request", e))?;
        buf[..4].copy_from_slice(&length.to_be_bytes());
        self.stream.write_all(buf).map_err(|e| io_error(&self.address, &e))
    }

    /// The answer to the request [`Self::send`] wrote last, whole within
    /// `timeout` (a broker that trickles bytes gets no more time than a
    /// silent one).
    pub fn receive<R>(&mut self, version: ApiVersion, timeout: Duration) -> Result<R::ResponseBody, LinkError>
    where
        R: RequestBody,
        R::ResponseBody: ReadVersionedType<Cursor<Vec<u8>>>,
    {
        let deadline = Instant::now() + timeout;
        let length = self.response_header(deadline)?;
        if length > self.max_message_bytes {
            return Err(LinkError {
                reason: TOO_LARGE,
                detail: format!(
                    "{}: a response of {length} bytes, more than the {} allowed",
                    self.address, self.max_message_bytes
                ),
            });
        }
        let mut message = vec![0; length];
        self.read_by(&mut message, deadline)?;
        let mut cursor = Cursor::new(message);
        if version >= R::FIRST_TAGGED_FIELD_IN_RESPONSE_VERSION {
            TaggedFields::read(&mut cursor).map_err(|e| invalid("response header", e))?;
        }
        let body = R::ResponseBody::read_versioned(&mut cursor, version).map_err(|e| invalid("response", e))?;
        if cursor.position() != cursor.get_ref().len() as u64 {
            return Err(invalid(&self.address, "bytes left after the response"));
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rskafka::protocol::messages::{FetchRequest, MetadataRequest};
    use std::net::TcpListener;

    fn range(min: i16, max: i16) -> ApiVersionRange {
        ApiVersionRange::new(ApiVersion(Int16(min)), ApiVersion(Int16(max)))
    }

    #[test]
    fn the_highest_version_both_speak() {
        assert_eq!(common_version(range(0, 16), range(4, 4)), Some(ApiVersion(Int16(4))));
        assert_eq!(common_version(range(0, 2), range(0, 4)), Some(ApiVersion(Int16(2))));
        assert_eq!(common_version(range(5, 9), range(0, 4)), None);
    }

    /// A peer that reads each connection's first request and answers it
    /// with the next of `answers`.
    fn peer_of(answers: Vec<Vec<u8>>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let mut open = Vec::new();
            for answer in answers {
                let (mut s, _) = listener.accept().unwrap();
                let mut length = [0; 4];
                s.read_exact(&mut length).unwrap();
                let mut request = vec![0; i32::from_be_bytes(length) as usize];
                s.read_exact(&mut request).unwrap();
                let _ = s.write_all(&answer);
                open.push(s);
            }
            std::thread::sleep(Duration::from_secs(2));
        });
        address
    }

    fn peer(answer: Vec<u8>) -> String {
        peer_of(vec![answer])
    }

    /// ApiVersions v0's answer to the first request: Fetch (key 1) in 4..=4.
    fn fetch_v4_only() -> Vec<u8> {
        let body: [&[u8]; 5] = [
            &1i32.to_be_bytes(), // correlation id
            &0i16.to_be_bytes(), // no error
            &1i32.to_be_bytes(), // one API
            &1i16.to_be_bytes(), // Fetch
            &[0, 4, 0, 4],       // versions 4 to 4
        ];
        let body = body.concat();
        [&(body.len() as i32).to_be_bytes()[..], &body].concat()
    }

    #[test]
    fn after_a_bad_answer_the_next_connection_agrees_its_versions() {
        let address = peer_of(vec![
            [i32::MAX.to_be_bytes(), 1i32.to_be_bytes()].concat(),
            fetch_v4_only(),
        ]);
        let e = BlockingConnection::connect(&address, "test", 1 << 20, Duration::from_secs(2), None).unwrap_err();
        assert_eq!(e.reason, TOO_LARGE, "{e}");
        let c = BlockingConnection::connect(&address, "test", 1 << 20, Duration::from_secs(2), None).unwrap();
        assert_eq!(c.version_of::<FetchRequest>().unwrap(), ApiVersion(Int16(4)));
        assert!(
            c.version_of::<MetadataRequest>().is_err(),
            "the peer lists no Metadata version"
        );
    }

    #[test]
    fn a_response_longer_than_allowed_is_refused_unread() {
        let address = peer([i32::MAX.to_be_bytes(), 1i32.to_be_bytes()].concat());
        let e = BlockingConnection::connect(&address, "test", 1 << 20, Duration::from_secs(2), None).unwrap_err();
        assert_eq!(e.reason, TOO_LARGE, "{e}");
    }

    /// A peer that answers the first request one byte at a time, `every` apart.
    fn trickling_peer(every: Duration) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut length = [0; 4];
            s.read_exact(&mut length).unwrap();
            let mut request = vec![0; i32::from_be_bytes(length) as usize];
            s.read_exact(&mut request).unwrap();
            for b in fetch_v4_only() {
                std::thread::sleep(every);
                if s.write_all(&[b]).is_err() {
                    return;
                }
            }
        });
        address
    }

    #[test]
    fn a_trickling_broker_gets_one_deadline_for_the_whole_response() {
        // 27 bytes at 150 ms: 4 s in all, each byte well within the timeout.
        let address = trickling_peer(Duration::from_millis(150));
        let began = Instant::now();
        let e = BlockingConnection::connect(&address, "test", 1 << 20, Duration::from_millis(600), None).unwrap_err();
        assert_eq!(e.reason, "timeout", "{e}");
        assert!(began.elapsed() < Duration::from_millis(900), "{:?}", began.elapsed());
    }

    #[test]
    fn the_closer_ends_a_blocked_read_at_once_and_refuses_new_connections() {
        let address = peer(Vec::new());
        let closer = Closer::default();
        let (a, c) = (address.clone(), closer.clone());
        let blocked = std::thread::spawn(move || {
            let began = Instant::now();
            let r = BlockingConnection::connect(&a, "test", 1 << 20, Duration::from_secs(30), Some(&c));
            (r.map(|_| ()), began.elapsed())
        });
        std::thread::sleep(Duration::from_millis(200));
        closer.close();
        let (r, took) = blocked.join().unwrap();
        assert_eq!(r.unwrap_err().reason, "broker_unreachable");
        assert!(took < Duration::from_millis(600), "{took:?}");
        let e =
            BlockingConnection::connect(&address, "test", 1 << 20, Duration::from_secs(1), Some(&closer)).unwrap_err();
        assert!(e.detail.contains("stopping"), "{e}");
    }

    #[test]
    fn an_answer_to_another_request_is_refused() {
        // Length 4, then correlation id 77 (the first request has 1).
        let address = peer([4i32.to_be_bytes(), 77i32.to_be_bytes()].concat());
        let e = BlockingConnection::connect(&address, "test", 1 << 20, Duration::from_secs(2), None).unwrap_err();
        assert_eq!(e.reason, "invalid_response", "{e}");
        assert!(e.detail.contains("another request"), "{e}");
    }

    #[test]
    fn a_silent_broker_times_out() {
        let address = peer(Vec::new());
        let e = BlockingConnection::connect(&address, "test", 1 << 20, Duration::from_millis(100), None).unwrap_err();
        assert_eq!(e.reason, "timeout", "{e}");
    }

    /// A stand-in for a resolver that does not answer: getaddrinfo waiting
    /// out its timeouts.
    fn silent_resolver(_: &str) -> std::io::Result<Vec<SocketAddr>> {
        std::thread::sleep(Duration::from_secs(30));
        Ok(Vec::new())
    }

    #[test]
    fn a_name_lookup_that_does_not_answer_ends_at_the_close_or_its_timeout() {
        let closer = Closer::default();
        let c = closer.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            c.close();
        });
        let began = Instant::now();
        let e = resolve(
            "broker.test:9092",
            Duration::from_secs(10),
            Some(&closer),
            silent_resolver,
        )
        .unwrap_err();
        assert!(e.detail.contains("stopping"), "{e}");
        assert!(began.elapsed() < Duration::from_millis(400), "{:?}", began.elapsed());
        let began = Instant::now();
        let e = resolve("broker.test:9092", Duration::from_millis(200), None, silent_resolver).unwrap_err();
        assert_eq!(e.reason, "timeout", "{e}");
        assert!(began.elapsed() < Duration::from_millis(500), "{:?}", began.elapsed());
        let no_lookup: fn(&str) -> std::io::Result<Vec<SocketAddr>> = |_| unreachable!("an address needs no lookup");
        assert_eq!(
            resolve("127.0.0.1:9092", Duration::ZERO, None, no_lookup).unwrap(),
            ["127.0.0.1:9092".parse::<SocketAddr>().unwrap()]
        );
    }
}
