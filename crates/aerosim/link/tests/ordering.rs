//! The order in which a writer's records reach the broker over a slow or
//! stalling link (a proxy between writer and broker, as a bad network
//! would behave): a record is written at once behind one still waiting for
//! its answer, and a record not acknowledged in time keeps its connection,
//! so the record sent after it is appended after it.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use aerosim_link::broker::Broker;
use aerosim_link::{now_ms, Link, Reader, StartFrom};

/// The bytes that mark the chunk to hold up, and by how much.
type Stall = Option<(Vec<u8>, Duration)>;

/// A TCP proxy that delays every chunk each way by `delay_ms`, and holds the
/// next chunk towards the broker that carries a marker (and what follows it
/// on its connection) longer. A fault injector, not a broker.
#[derive(Clone, Default)]
struct SlowLink {
    delay_ms: Arc<AtomicU64>,
    stall: Arc<Mutex<Stall>>,
}

impl SlowLink {
    /// Takes the connections of `listener` and forwards each to `127.0.0.1:target`.
    fn start(listener: TcpListener, target: u16) -> Self {
        let link = Self::default();
        let proxy = link.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(upstream) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                for (from, to, to_broker) in [
                    (client.try_clone().unwrap(), upstream.try_clone().unwrap(), true),
                    (upstream, client, false),
                ] {
                    let proxy = proxy.clone();
                    std::thread::spawn(move || proxy.pump(from, to, to_broker));
                }
            }
        });
        link
    }

    fn set_delay(&self, d: Duration) {
        self.delay_ms.store(d.as_millis() as u64, Ordering::Relaxed);
    }

    fn stall_next(&self, marker: &[u8], by: Duration) {
        *self.stall.lock().unwrap() = Some((marker.to_vec(), by));
    }

    /// Forwards `from` → `to` in order, each chunk when it is due.
    fn pump(&self, mut from: TcpStream, mut to: TcpStream, to_broker: bool) {
        let (queue, due) = mpsc::channel::<(Instant, Vec<u8>)>();
        std::thread::spawn(move || {
            for (at, data) in due {
                std::thread::sleep(at.saturating_duration_since(Instant::now()));
                if to.write_all(&data).is_err() {
                    return;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        });
        let mut buf = vec![0; 64 << 10];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            let data = buf[..n].to_vec();
            let mut at = Instant::now() + Duration::from_millis(self.delay_ms.load(Ordering::Relaxed));
            if to_broker {
                let mut stall = self.stall.lock().unwrap();
                if let Some((_, by)) = stall.take_if(|(m, _)| data.windows(m.len()).any(|w| w == m.as_slice())) {
                    at += by;
                }
            }
            if queue.send((at, data)).is_err() {
                return;
            }
        }
    }
}

const TOPIC: &str = "aerosim.actor1.autopilot_command";

/// A broker reached through a slow link only (it advertises the link's
/// port); the link, and the address to give a writer.
fn slow_broker() -> (Broker, SlowLink, String) {
    // The link's port is held from here on: a port only looked up could be
    // taken meanwhile by a connection's ephemeral end (the broker's start polls).
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let proxied = listener.local_addr().unwrap().port();
    let broker =
        Broker::start_on_free_port_advertising(Some(proxied)).expect("the broker (scripts/setup.sh builds it)");
    let link = SlowLink::start(listener, broker.port);
    (broker, link, format!("127.0.0.1:{proxied}"))
}

/// Every value on the topic, from its beginning, read straight from the broker.
async fn values_on_broker(broker: &Broker, want: usize) -> Vec<Vec<u8>> {
    let link = Link::new(&broker.bootstrap(), "ordering-test-reader", 1 << 20);
    let mut reader: Reader = link.reader(TOPIC, StartFrom::Earliest, Duration::from_millis(5), 1 << 20);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        if let Ok(batch) = reader.next().await {
            got.extend(batch.into_iter().map(|f| f.value));
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_is_written_at_once_behind_one_waiting_for_its_answer() {
    let (broker, slow, proxied) = slow_broker();
    let link = Link::new(&proxied, "ordering-test", 1 << 20);
    let writer = Arc::new(link.writer(TOPIC).acknowledged_within(Duration::from_secs(5)));
    writer.send(b"warm".to_vec(), now_ms()).await.expect("connected");
    slow.set_delay(Duration::from_millis(300));
    let began = Instant::now();
    let w = writer.clone();
    let first = tokio::spawn(async move { w.send(b"first".to_vec(), now_ms()).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    writer.send(b"second".to_vec(), now_ms()).await.expect("acknowledged");
    let second_took = began.elapsed();
    first.await.unwrap().expect("acknowledged");
    // Written at 0.1 s, answered 0.6 s later; after the first's answer it
    // would have been written at 0.6 s and answered at 1.2 s.
    assert!(second_took < Duration::from_millis(950), "{second_took:?}");
    assert_eq!(
        values_on_broker(&broker, 3).await,
        [b"warm".to_vec(), b"first".to_vec(), b"second".to_vec()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_not_acknowledged_in_time_is_appended_before_the_next() {
    let (broker, slow, proxied) = slow_broker();
    let link = Link::new(&proxied, "ordering-test", 1 << 20);
    // Longer than the client's own 2 s for a request.
    let writer = link.writer(TOPIC).acknowledged_within(Duration::from_secs(3));
    writer.send(b"warm".to_vec(), now_ms()).await.expect("connected");
    slow.stall_next(b"late", Duration::from_secs(5));
    let began = Instant::now();
    let e = writer.send(b"late".to_vec(), now_ms()).await.unwrap_err();
    assert_eq!(e.reason, "timeout", "{e}");
    let gave_up = began.elapsed();
    // Queued behind the late record on its connection: answered once it is.
    writer.send(b"next".to_vec(), now_ms()).await.expect("acknowledged");
    assert_eq!(
        values_on_broker(&broker, 3).await,
        [b"warm".to_vec(), b"late".to_vec(), b"next".to_vec()]
    );
    assert!(
        gave_up >= Duration::from_millis(2900),
        "the writer's own wait: {gave_up:?}"
    );
}
