//! The link against a real broker: what is written is read back exactly,
//! a reader starts at the end unless asked, and both resume after the
//! broker restarts empty; the same for several topics read in one request.

use std::time::{Duration, Instant};

use aerosim_link::broker::Broker;
use aerosim_link::{now_ms, Closer, Fetched, Link, Reader, StartFrom, TopicsReader};

const WAIT: Duration = Duration::from_millis(5);

async fn read_until(reader: &mut Reader, want: usize, within: Duration) -> Vec<Fetched> {
    let deadline = Instant::now() + within;
    let mut got = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        if let Ok(batch) = reader.next().await {
            got.extend(batch);
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_round_trip_from_the_end_and_from_the_start() {
    let broker = Broker::start_on_free_port().expect("the broker (scripts/setup.sh builds it)");
    let link = Link::new(&broker.bootstrap(), "link-test", 8 << 20);
    let writer = link.writer("aerosim.actor1.vehicle_state");
    let first = writer.send(b"before".to_vec(), now_ms()).await.expect("first send");
    let mut latest = link.reader("aerosim.actor1.vehicle_state", StartFrom::Latest, WAIT, 1 << 20);
    let mut earliest = link.reader("aerosim.actor1.vehicle_state", StartFrom::Earliest, WAIT, 1 << 20);
    // The readers take their offsets on their first fetch.
    assert!(latest.next().await.unwrap().is_empty());
    for i in 0..20u8 {
        writer.send(vec![i; 100 + usize::from(i)], now_ms()).await.unwrap();
    }
    let got = read_until(&mut latest, 20, Duration::from_secs(5)).await;
    assert_eq!(got.len(), 20, "{got:?}");
    for (i, f) in got.iter().enumerate() {
        assert_eq!(f.value, vec![i as u8; 100 + i]);
        assert_eq!(f.offset, first + 1 + i as i64);
    }
    let all = read_until(&mut earliest, 21, Duration::from_secs(5)).await;
    assert_eq!(all[0].value, b"before");
    assert_eq!(all.len(), 21);
}

#[test]
fn a_broker_never_takes_a_port_someone_else_listens_on_for_its_own() {
    let other = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = other.local_addr().unwrap().port();
    let e = Broker::start(port).expect_err("the port answers, but not from our broker");
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_and_a_writer_resume_after_the_broker_restarts_empty() {
    let mut broker = Broker::start_on_free_port().unwrap();
    let port = broker.port;
    let link = Link::new(&broker.bootstrap(), "link-test", 8 << 20);
    let writer = link.writer("aerosim.clock");
    let mut reader = link.reader("aerosim.clock", StartFrom::Latest, WAIT, 1 << 20);
    assert!(reader.next().await.unwrap().is_empty());
    for i in 0..50u8 {
        writer.send(vec![i], now_ms()).await.unwrap();
    }
    assert_eq!(read_until(&mut reader, 50, Duration::from_secs(5)).await.len(), 50);
    broker.stop();
    assert!(
        writer.send(vec![0], now_ms()).await.is_err(),
        "no broker, no acknowledgement"
    );
    let _broker = Broker::start(port).unwrap();
    let restarted = Instant::now();
    // The writer gets through again, the reader sees the new log's records.
    let mut sent = false;
    while !sent && restarted.elapsed() < Duration::from_secs(5) {
        sent = writer.send(b"after".to_vec(), now_ms()).await.is_ok();
    }
    assert!(sent, "the writer resumed");
    let got = read_until(&mut reader, 1, Duration::from_secs(5)).await;
    assert_eq!(got.first().map(|f| f.value.as_slice()), Some(&b"after"[..]));
    assert!(
        restarted.elapsed() < Duration::from_secs(2),
        "{:?}",
        restarted.elapsed()
    );
}

/// A [`TopicsReader`] in an async test: it blocks, so it is used (and its
/// runtime dropped) out of the test runtime's way.
struct OffRuntime(Option<TopicsReader>);

impl OffRuntime {
    fn new(readers: Vec<Reader>, closer: Closer) -> Self {
        Self(Some(tokio::task::block_in_place(|| {
            TopicsReader::new(readers, closer).unwrap()
        })))
    }

    fn idle_fetch_wait_up_to(mut self, ceiling: Duration) -> Self {
        self.0 = self.0.take().map(|r| r.idle_fetch_wait_up_to(ceiling));
        self
    }

    fn fetch_wait(&self) -> Duration {
        self.0.as_ref().expect("until dropped").fetch_wait()
    }

    fn read_round(&mut self) -> aerosim_link::Round {
        let reader = self.0.as_mut().expect("until dropped");
        tokio::task::block_in_place(|| reader.read_round())
    }

    fn topics(&self) -> impl Iterator<Item = &str> {
        self.0.as_ref().expect("until dropped").topics()
    }
}

impl Drop for OffRuntime {
    fn drop(&mut self) {
        let reader = self.0.take();
        tokio::task::block_in_place(|| drop(reader));
    }
}

/// Rounds of `reader` until `want` records per topic came or `within` passed;
/// the records by topic, and the errors seen.
/// (`TopicsReader::read_round` blocks: out of the runtime's way.)
fn read_topics_until(reader: &mut OffRuntime, want: usize, within: Duration) -> (Vec<Vec<Fetched>>, usize) {
    let n = reader.topics().count();
    let deadline = Instant::now() + within;
    let (mut got, mut errors) = (vec![Vec::new(); n], 0);
    while got.iter().any(|g| g.len() < want) && Instant::now() < deadline {
        for (i, r) in reader.read_round() {
            match r {
                Ok(records) => got[i].extend(records),
                Err(_) => errors += 1,
            }
        }
    }
    (got, errors)
}

const TOPICS: [&str; 3] = [
    "aerosim.clock",
    "aerosim.actor1.vehicle_state",
    "aerosim.renderer.responses",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_topics_in_one_request_each_record_once_in_order() {
    let broker = Broker::start_on_free_port().unwrap();
    let link = Link::new(&broker.bootstrap(), "link-test", 8 << 20);
    let writers: Vec<_> = TOPICS.iter().map(|t| link.writer(t)).collect();
    // Before the reader: what it must not read (it starts at the end).
    writers[1].send(b"old".to_vec(), now_ms()).await.unwrap();
    let mut reader = OffRuntime::new(
        TOPICS
            .iter()
            .map(|t| link.reader(t, StartFrom::Latest, WAIT, 1 << 20))
            .collect(),
        Closer::default(),
    );
    // Topics missing on the broker are created; the offsets are taken.
    let (_, errors) = read_topics_until(&mut reader, 1, Duration::from_millis(300));
    assert_eq!(errors, 0);
    for round in 0..30u8 {
        for (k, w) in writers.iter().enumerate() {
            // Sizes up to ~60 KB: records of several segments, as images are.
            let size = 10 + 2000 * usize::from(round) * k;
            w.send(vec![round; size], now_ms()).await.unwrap();
        }
    }
    let (got, errors) = read_topics_until(&mut reader, 30, Duration::from_secs(10));
    assert_eq!(errors, 0);
    for (k, records) in got.iter().enumerate() {
        let values: Vec<Vec<u8>> = records.iter().map(|f| f.value.clone()).collect();
        let expected: Vec<Vec<u8>> = (0..30u8).map(|r| vec![r; 10 + 2000 * usize::from(r) * k]).collect();
        assert!(
            values == expected,
            "{}: {} records, not the 30 sent in order",
            TOPICS[k],
            values.len()
        );
        assert!(records.windows(2).all(|w| w[1].offset == w[0].offset + 1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_topics_resume_after_the_broker_restarts_empty() {
    let mut broker = Broker::start_on_free_port().unwrap();
    let port = broker.port;
    let link = Link::new(&broker.bootstrap(), "link-test", 8 << 20);
    let writers: Vec<_> = TOPICS.iter().map(|t| link.writer(t)).collect();
    let mut reader = OffRuntime::new(
        TOPICS
            .iter()
            .map(|t| link.reader(t, StartFrom::Latest, WAIT, 1 << 20))
            .collect(),
        Closer::default(),
    );
    read_topics_until(&mut reader, 1, Duration::from_millis(300));
    for i in 0..20u8 {
        for w in &writers {
            w.send(vec![i], now_ms()).await.unwrap();
        }
    }
    let (got, _) = read_topics_until(&mut reader, 20, Duration::from_secs(5));
    assert!(
        got.iter().all(|g| g.len() == 20),
        "{:?}",
        got.iter().map(Vec::len).collect::<Vec<_>>()
    );
    broker.stop();
    let (_, errors) = read_topics_until(&mut reader, 1, Duration::from_millis(500));
    assert!(errors > 0, "a broker gone is reported");
    let _broker = Broker::start(port).unwrap();
    let restarted = Instant::now();
    let mut sent = 0;
    while sent < TOPICS.len() && restarted.elapsed() < Duration::from_secs(5) {
        sent = 0;
        for w in &writers {
            sent += usize::from(w.send(b"after".to_vec(), now_ms()).await.is_ok());
        }
    }
    assert_eq!(sent, TOPICS.len(), "the writers resumed");
    let (got, _) = read_topics_until(&mut reader, 1, Duration::from_secs(5));
    for (k, g) in got.iter().enumerate() {
        assert!(g.iter().any(|f| f.value == b"after"), "{}: {g:?}", TOPICS[k]);
    }
    assert!(
        restarted.elapsed() < Duration::from_secs(2),
        "{:?}",
        restarted.elapsed()
    );
}

/// One record larger than a reader may take: skipped and counted; the
/// records after it, and every other topic, are read as if nothing happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_record_is_skipped_and_stops_nothing() {
    let broker = Broker::start_on_free_port().unwrap();
    let writing = Link::new(&broker.bootstrap(), "link-test-writer", 8 << 20);
    let writers: Vec<_> = TOPICS.iter().map(|t| writing.writer(t)).collect();
    let reading = Link::new(&broker.bootstrap(), "link-test", 64 << 10);
    let mut reader = OffRuntime::new(
        TOPICS
            .iter()
            .map(|t| reading.reader(t, StartFrom::Latest, WAIT, 16 << 10))
            .collect(),
        Closer::default(),
    );
    read_topics_until(&mut reader, 1, Duration::from_millis(300));
    for round in 0..10u8 {
        for (k, w) in writers.iter().enumerate() {
            let size = if round == 3 && k == 1 { 2 << 20 } else { 100 };
            w.send(vec![round; size], now_ms()).await.unwrap();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut got, mut skipped) = (vec![Vec::new(); TOPICS.len()], Vec::new());
    while got
        .iter()
        .enumerate()
        .any(|(k, g)| g.len() < if k == 1 { 9 } else { 10 })
        && Instant::now() < deadline
    {
        for (i, r) in reader.read_round() {
            match r {
                Ok(records) => got[i].extend(records.into_iter().map(|f| f.value[0])),
                Err(e) if e.reason == "record_unreadable" => skipped.push(i),
                Err(_) => {}
            }
        }
    }
    assert_eq!(skipped, vec![1], "one record skipped, in the topic that had it");
    assert_eq!(got[1], [0, 1, 2, 4, 5, 6, 7, 8, 9]);
    for k in [0, 2] {
        assert_eq!(got[k], (0..10).collect::<Vec<u8>>(), "{}", TOPICS[k]);
    }
}

/// From the earliest offset: a backlog written before the reader, then what comes after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_topics_from_the_earliest_offset() {
    let broker = Broker::start_on_free_port().unwrap();
    let link = Link::new(&broker.bootstrap(), "link-test", 8 << 20);
    let writers: Vec<_> = TOPICS.iter().map(|t| link.writer(t)).collect();
    for i in 0..20u8 {
        writers[1].send(vec![i; 300], now_ms()).await.unwrap();
    }
    let mut reader = OffRuntime::new(
        TOPICS
            .iter()
            .map(|t| {
                link.reader(
                    t,
                    StartFrom::Earliest,
                    Duration::from_millis(2),
                    (16 << 20) + (64 << 10),
                )
            })
            .collect(),
        Closer::default(),
    );
    let (got, errors) = read_topics_until(&mut reader, 20, Duration::from_secs(3));
    assert_eq!(errors, 0);
    assert_eq!(got[1].len(), 20, "the backlog");
    writers[1].send(vec![99; 10], now_ms()).await.unwrap();
    let (got, _) = read_topics_until(&mut reader, 1, Duration::from_secs(3));
    assert_eq!(got[1].iter().map(|f| f.value[0]).collect::<Vec<_>>(), [99]);
}

/// Silent topics are fetched a few times a second, not once per short wait;
/// the first record after the silence comes within the ceiling and brings
/// the short wait back; a send is not held behind the reader's long fetch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_reader_polls_rarely_and_waits_short_again_once_records_come() {
    let (short, ceiling) = (Duration::from_millis(2), Duration::from_millis(400));
    let broker = Broker::start_on_free_port().unwrap();
    let link = Link::new(&broker.bootstrap(), "link-test", 8 << 20);
    let writer = link.writer(TOPICS[1]);
    writer.warm().await.unwrap();
    let mut reader = OffRuntime::new(
        TOPICS
            .iter()
            .map(|t| link.reader(t, StartFrom::Latest, short, 1 << 20))
            .collect(),
        Closer::default(),
    )
    .idle_fetch_wait_up_to(ceiling);
    // The ceiling's silence, then the doubling up to it.
    let rounds_for = |reader: &mut OffRuntime, d: Duration| {
        let (start, mut rounds) = (Instant::now(), 0);
        while start.elapsed() < d {
            assert!(reader.read_round().is_empty(), "nothing was sent");
            rounds += 1;
        }
        rounds
    };
    rounds_for(&mut reader, Duration::from_millis(1500));
    assert_eq!(reader.fetch_wait(), ceiling);
    let idle_rounds = rounds_for(&mut reader, Duration::from_secs(2));
    assert!(idle_rounds <= 8, "{idle_rounds} fetches in 2 s of silence");
    let sender = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let sent = Instant::now();
        writer.send(b"after the silence".to_vec(), now_ms()).await.unwrap();
        (sent, sent.elapsed())
    });
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut arrived = None;
    while arrived.is_none() && Instant::now() < deadline {
        if reader.read_round().iter().any(|(i, r)| *i == 1 && r.is_ok()) {
            arrived = Some(Instant::now());
        }
    }
    let (sent, acknowledged_in) = sender.await.unwrap();
    let latency = arrived.expect("the record came").duration_since(sent);
    assert!(latency <= ceiling + Duration::from_millis(200), "{latency:?}");
    assert!(
        acknowledged_in < Duration::from_millis(150),
        "the send waited {acknowledged_in:?}, as if behind the {ceiling:?} fetch"
    );
    assert_eq!(reader.fetch_wait(), short);
}
