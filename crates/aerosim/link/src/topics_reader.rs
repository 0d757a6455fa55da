//! Several topics read with one Fetch request per broker and round, as
//! Kafka's own consumers do, instead of one request loop per topic. A broker
//! that holds every fetch for its whole wait (tansu does) is polled once per
//! wait, whatever the number of topics: that polling is most of what an idle
//! or lightly loaded reader costs.
//!
//! Each topic keeps its [`Reader`]'s bookkeeping (partition found or
//! created, start offset, a restarted log read from its beginning); only the
//! fetch itself goes over this reader's own connections, one per partition
//! leader, found from the brokers' metadata. Those connections block
//! ([`BlockingConnection`]), and so does [`TopicsReader::read_round`]: a round
//! holds its thread for the fetch wait, so the reader runs on a thread of
//! its own, and its [`Closer`] ends a round (or a pause) at once from
//! another thread (the stop). The bookkeeping's calls into rskafka's async
//! client run on the reader's own single-threaded runtime.
//!
//! Responses are read batch by batch (`fetch_response`): a batch larger than
//! a topic may take, or one this client cannot decode, is skipped and
//! reported as `record_unreadable`, so that one bad record stops neither the
//! other topics nor the records after it.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rskafka::protocol::error::Error as ApiError;
use rskafka::protocol::messages::{
    FetchRequest, FetchRequestPartition, FetchRequestTopic, IsolationLevel, MetadataRequest, MetadataRequestTopic,
    NORMAL_CONSUMER,
};
use rskafka::protocol::primitives::{Int32, Int64, String_};
use rskafka::protocol::record::{ControlBatchOrRecords, RecordBatch};

use crate::blocking::{unreachable_broker, BlockingConnection, Closer};
use crate::fetch_response::PartitionData;
use crate::{DetachedRuntime, Fetched, LinkError, Reader, PARTITION, REQUEST_TIMEOUT, RETRY_PAUSE};

/// What one round brought: for each topic (by its index) that had records or
/// an error, those records or that error.
pub type Round = Vec<(usize, Result<Vec<Fetched>, LinkError>)>;

/// Reads the topics of its [`Reader`]s together.
pub struct TopicsReader {
    readers: Vec<Reader>,
    /// A topic that failed is left out of the rounds until then.
    paused_until: Vec<Option<Instant>>,
    /// Each topic's partition leader, by node id; `None`: to be looked up.
    leaders: Option<Vec<Option<i32>>>,
    addresses: HashMap<i32, String>,
    connections: HashMap<i32, BlockingConnection>,
    closer: Closer,
    /// Runs the readers' async bookkeeping from this blocking reader.
    runtime: DetachedRuntime,
    wait: FetchWait,
}

/// The wait each round's fetch asks the broker for: the readers' short wait
/// while records flow; once no record has come for the ceiling, twice as long
/// each empty round, up to the ceiling; the short wait again with the first
/// record. A broker that holds every fetch for its whole wait (tansu) is then
/// polled a few times a second while idle, not hundreds, and a stream whose
/// records come at least once per ceiling never waits longer than before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchWait {
    short_ms: i32,
    ceiling_ms: i32,
    current_ms: i32,
    silent_since: Option<Instant>,
}

impl FetchWait {
    /// A ceiling at or below `short_ms` keeps the wait at `short_ms`.
    pub fn new(short_ms: i32, ceiling_ms: i32) -> Self {
        Self {
            short_ms,
            ceiling_ms: ceiling_ms.max(short_ms),
            current_ms: short_ms,
            silent_since: None,
        }
    }

    pub fn current_ms(&self) -> i32 {
        self.current_ms
    }

    /// After a round at `now`, which brought records or not.
    pub fn after_round(&mut self, records_came: bool, now: Instant) {
        if records_came {
            self.current_ms = self.short_ms;
            self.silent_since = None;
            return;
        }
        let since = *self.silent_since.get_or_insert(now);
        let ceiling = Duration::from_millis(u64::try_from(self.ceiling_ms).unwrap_or(0));
        if now.duration_since(since) >= ceiling {
            self.current_ms = self.current_ms.saturating_mul(2).max(1).min(self.ceiling_ms);
        }
    }
}

impl std::fmt::Debug for TopicsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopicsReader")
            .field("topics", &self.readers.iter().map(Reader::topic).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// What a call cut short by the stop reports.
fn stopping() -> LinkError {
    unreachable_broker("read", "the reader is stopping")
}

fn api_error(topic: &str, e: ApiError) -> LinkError {
    // rskafka's partition clients find a new leader by themselves; here the
    // leaders are looked up again.
    let reason = match e {
        ApiError::NotLeaderOrFollower | ApiError::LeaderNotAvailable => "not_leader",
        _ => crate::protocol_reason(&e),
    };
    LinkError {
        reason,
        detail: format!("{topic}: {e:?}"),
    }
}

impl TopicsReader {
    /// The readers must come from one [`crate::Link`] (one bootstrap list
    /// and one size bound); `closer` ends the blocking calls from elsewhere.
    /// It blocks its thread: make, use and drop it on a thread of its own,
    /// not in an async task (or within `tokio::task::block_in_place`).
    pub fn new(readers: Vec<Reader>, closer: Closer) -> std::io::Result<Self> {
        Ok(Self {
            paused_until: vec![None; readers.len()],
            leaders: None,
            addresses: HashMap::new(),
            connections: HashMap::new(),
            wait: FetchWait::new(readers.first().map_or(0, |r| r.fetch_wait_ms), 0),
            readers,
            closer,
            runtime: DetachedRuntime::new(tokio::runtime::Builder::new_current_thread().enable_all().build()?),
        })
    }

    /// The fetch wait grows while no record comes, up to `ceiling`
    /// ([`FetchWait`]); without this call it stays the readers' own.
    pub fn idle_fetch_wait_up_to(mut self, ceiling: Duration) -> Self {
        let ceiling_ms = i32::try_from(ceiling.as_millis()).unwrap_or(i32::MAX);
        self.wait = FetchWait::new(self.wait.short_ms, ceiling_ms);
        self
    }

    /// The wait the next round's fetch asks for.
    pub fn fetch_wait(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.wait.current_ms()).unwrap_or(0))
    }

    pub fn topics(&self) -> impl Iterator<Item = &str> {
        self.readers.iter().map(Reader::topic)
    }

    /// One round: every topic that is not paused fetched from where it is,
    /// one request per leader, every request out before the first answer is
    /// read. Errors come back per topic (to count and log); a topic that
    /// failed pauses. Blocks for the fetch wait, or until the closer closes.
    pub fn read_round(&mut self) -> Round {
        let round = self.fetch_round();
        // A batch passed over unread is records flowing too.
        let records_came = round.iter().any(|(_, r)| {
            r.as_ref()
                .map_or_else(|e| e.reason == "record_unreadable", |r| !r.is_empty())
        });
        self.wait.after_round(records_came, Instant::now());
        round
    }

    fn fetch_round(&mut self) -> Round {
        let mut round = Round::new();
        let now = Instant::now();
        let mut ready = Vec::new();
        for i in 0..self.readers.len() {
            if self.paused_until[i].is_some_and(|t| now < t) {
                continue;
            }
            let prepared = self
                .runtime
                .block_on(self.closer.unless_closed(self.readers[i].prepare()));
            match prepared.unwrap_or_else(|| Err(stopping())) {
                Ok(offset) => ready.push((i, offset)),
                Err(e) => self.fail(i, e, &mut round),
            }
        }
        if ready.is_empty() {
            let wake = self.paused_until.iter().flatten().min().copied();
            self.closer.wait_until(wake.unwrap_or(now + RETRY_PAUSE));
            return round;
        }
        if let Err(e) = self.find_leaders() {
            for (i, _) in ready {
                self.fail(i, e.clone(), &mut round);
            }
            return round;
        }
        let mut groups: HashMap<i32, Vec<(usize, i64)>> = HashMap::new();
        for (i, offset) in ready {
            match self.leaders.as_ref().and_then(|l| l[i]) {
                Some(node) => groups.entry(node).or_default().push((i, offset)),
                None => {
                    let e = LinkError {
                        reason: "not_leader",
                        detail: format!("{}: no leader in the brokers' metadata", self.readers[i].topic()),
                    };
                    self.fail(i, e, &mut round);
                }
            }
        }
        let mut asked = Vec::new();
        for (node, topics) in groups {
            let request = self.fetch_request(&topics);
            match self.connection(node).and_then(|c| c.send(&request)) {
                Ok(version) => asked.push((node, version, topics)),
                Err(e) => self.failed_on(node, e, topics, &mut round),
            }
        }
        for (node, version, topics) in asked {
            let first = &self.readers[topics[0].0];
            let (timeout, keep) = (
                self.fetch_wait() + REQUEST_TIMEOUT,
                usize::try_from(first.max_fetch_bytes).unwrap_or(0),
            );
            let names: Vec<&str> = topics.iter().map(|&(i, _)| self.readers[i].topic()).collect();
            let answer = match self.connections.get_mut(&node) {
                Some(c) => c.receive_fetch(version, timeout, &names, keep),
                None => continue,
            };
            match answer {
                Ok(response) => self.take(response, &topics, &mut round),
                Err(e) => self.failed_on(node, e, topics, &mut round),
            }
        }
        round
    }

    /// The connection to `node` failed: it goes, the leaders are looked up
    /// again and its topics fail.
    fn failed_on(&mut self, node: i32, e: LinkError, topics: Vec<(usize, i64)>, round: &mut Round) {
        self.connections.remove(&node);
        self.leaders = None;
        for (i, _) in topics {
            self.fail(i, e.clone(), round);
        }
    }

    fn fetch_request(&self, topics: &[(usize, i64)]) -> FetchRequest {
        let (wait_ms, per_topic) = (self.wait.current_ms(), self.readers[topics[0].0].max_fetch_bytes);
        FetchRequest {
            replica_id: NORMAL_CONSUMER,
            max_wait_ms: Int32(wait_ms),
            min_bytes: Int32(1),
            max_bytes: Some(Int32(
                per_topic.saturating_mul(i32::try_from(topics.len()).unwrap_or(i32::MAX)),
            )),
            isolation_level: Some(IsolationLevel::ReadCommitted),
            topics: topics
                .iter()
                .map(|&(i, offset)| FetchRequestTopic {
                    topic: String_(self.readers[i].topic().to_string()),
                    partitions: vec![FetchRequestPartition {
                        partition: Int32(PARTITION),
                        fetch_offset: Int64(offset),
                        partition_max_bytes: Int32(per_topic),
                    }],
                })
                .collect(),
        }
    }

    /// Hands each partition's records (or error) to its topic's reader; a
    /// batch passed over unread is reported, and read past.
    fn take(&mut self, response: Vec<PartitionData>, asked: &[(usize, i64)], round: &mut Round) {
        for partition in response {
            let Some(&(i, offset)) = asked.get(partition.asked) else {
                continue;
            };
            if let Some(e) = partition.error {
                let e = api_error(self.readers[i].topic(), e);
                let e = self
                    .runtime
                    .block_on(self.closer.unless_closed(self.readers[i].refused(e)))
                    .unwrap_or_else(stopping);
                self.fail(i, e, round);
                continue;
            }
            for p in partition.passed_over.iter().filter(|p| p.last >= offset) {
                let skipped = LinkError {
                    reason: "record_unreadable",
                    detail: format!(
                        "{}: records {}..={} skipped ({})",
                        self.readers[i].topic(),
                        p.first,
                        p.last,
                        p.why
                    ),
                };
                round.push((i, Err(skipped)));
            }
            let past_skipped = partition.passed_over.iter().map(|p| p.last + 1).max();
            let records = match records_of(partition.batches) {
                Ok(r) => r,
                Err(e) => {
                    self.fail(i, e, round);
                    continue;
                }
            };
            let absorbed = self.runtime.block_on(self.closer.unless_closed(self.readers[i].absorb(
                offset,
                records,
                partition.high_watermark,
            )));
            match absorbed.unwrap_or_else(|| Err(stopping())) {
                Ok(r) => {
                    if let Some(after) = past_skipped {
                        let next = &mut self.readers[i].next;
                        *next = Some(next.map_or(after, |n| n.max(after)));
                    }
                    if !r.is_empty() {
                        round.push((i, Ok(r)));
                    }
                }
                Err(e) => self.fail(i, e, round),
            }
        }
    }

    fn fail(&mut self, i: usize, e: LinkError, round: &mut Round) {
        self.runtime
            .block_on(self.closer.unless_closed(self.readers[i].failed(&e)));
        match e.reason {
            "broker_unreachable" | "timeout" => {
                self.connections.clear();
                self.leaders = None;
            }
            "not_leader" | "unknown_topic" => self.leaders = None,
            _ => {}
        }
        self.paused_until[i] = Some(Instant::now() + RETRY_PAUSE);
        round.push((i, Err(e)));
    }

    /// Each topic's leader, from the metadata of a broker of the bootstrap
    /// list (or of one connected already).
    fn find_leaders(&mut self) -> Result<(), LinkError> {
        if self.leaders.is_some() {
            return Ok(());
        }
        let mut bootstrap = None;
        let connection = match self.connections.values_mut().next() {
            Some(c) => c,
            None => bootstrap.insert(self.bootstrap_connection()?),
        };
        let request = MetadataRequest {
            topics: Some(
                self.readers
                    .iter()
                    .map(|r| MetadataRequestTopic {
                        name: String_(r.topic().to_string()),
                    })
                    .collect(),
            ),
            allow_auto_topic_creation: None,
        };
        let metadata = connection.request(&request, REQUEST_TIMEOUT)?;
        self.addresses = metadata
            .brokers
            .iter()
            .map(|b| (b.node_id.0, format!("{}:{}", b.host.0, b.port.0)))
            .collect();
        let leader_of = |name: &str| {
            let topic = metadata.topics.iter().find(|t| t.name.0 == name && t.error.is_none())?;
            let p = topic
                .partitions
                .iter()
                .find(|p| p.partition_index.0 == PARTITION && p.error.is_none())?;
            (p.leader_id.0 >= 0).then_some(p.leader_id.0)
        };
        self.leaders = Some(self.readers.iter().map(|r| leader_of(r.topic())).collect());
        Ok(())
    }

    fn connection(&mut self, node: i32) -> Result<&mut BlockingConnection, LinkError> {
        if !self.connections.contains_key(&node) {
            let address = self.addresses.get(&node).cloned().ok_or_else(|| LinkError {
                reason: "not_leader",
                detail: format!("broker {node} is not in the metadata"),
            })?;
            let c = self.connect(&address)?;
            self.connections.insert(node, c);
        }
        Ok(self.connections.get_mut(&node).expect("inserted above"))
    }

    fn bootstrap_connection(&self) -> Result<BlockingConnection, LinkError> {
        let mut last = None;
        for address in &self.readers[0].link.bootstrap {
            match self.connect(address) {
                Ok(c) => return Ok(c),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| unreachable_broker("connect", "no bootstrap server")))
    }

    /// A connection whose responses may carry every topic's largest fetch.
    fn connect(&self, address: &str) -> Result<BlockingConnection, LinkError> {
        let link = &self.readers[0].link;
        let per_topic = usize::try_from(self.readers[0].max_fetch_bytes).unwrap_or(0);
        let limit = link.max_message_bytes.max(per_topic * self.readers.len()) + (64 << 10);
        BlockingConnection::connect(address, &link.client_id, limit, REQUEST_TIMEOUT, Some(&self.closer))
    }
}

/// The records of a partition's batches (control batches are Kafka's own).
fn records_of(batches: Vec<RecordBatch>) -> Result<Vec<Fetched>, LinkError> {
    let mut out = Vec::new();
    for batch in batches {
        let ControlBatchOrRecords::Records(records) = batch.records else {
            continue;
        };
        for r in records {
            let timestamp_ms = batch.first_timestamp.checked_add(r.timestamp_delta).ok_or(LinkError {
                reason: "invalid_response",
                detail: "a record's timestamp overflows".into(),
            })?;
            out.push(Fetched {
                offset: batch.base_offset + i64::from(r.offset_delta),
                value: r.value.unwrap_or_default(),
                timestamp_ms,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_wait_stays_short_while_records_come_within_the_ceiling() {
        let (mut wait, t0) = (FetchWait::new(2, 100), Instant::now());
        // A stream at 100 Hz: a record every 10 ms, four empty rounds between.
        for tick in 0..100u64 {
            for empty in 1..5 {
                wait.after_round(false, t0 + ms(tick * 10 + empty * 2));
                assert_eq!(wait.current_ms(), 2);
            }
            wait.after_round(true, t0 + ms(tick * 10 + 10));
        }
    }

    #[test]
    fn the_wait_doubles_up_to_the_ceiling_after_a_silence_and_drops_with_the_first_record() {
        let (mut wait, t0) = (FetchWait::new(2, 100), Instant::now());
        wait.after_round(false, t0);
        wait.after_round(false, t0 + ms(99));
        assert_eq!(wait.current_ms(), 2, "silent for less than the ceiling");
        let mut seen = Vec::new();
        for i in 0..8 {
            wait.after_round(false, t0 + ms(100 + i));
            seen.push(wait.current_ms());
        }
        assert_eq!(seen, [4, 8, 16, 32, 64, 100, 100, 100]);
        wait.after_round(true, t0 + ms(200));
        assert_eq!(wait.current_ms(), 2);
        // The silence is counted again from there.
        wait.after_round(false, t0 + ms(250));
        assert_eq!(wait.current_ms(), 2);
    }

    #[test]
    fn a_ceiling_below_the_short_wait_or_a_zero_wait_behave() {
        let (mut fixed, t0) = (FetchWait::new(20, 0), Instant::now());
        fixed.after_round(false, t0);
        fixed.after_round(false, t0 + ms(1000));
        assert_eq!(fixed.current_ms(), 20);
        let mut from_zero = FetchWait::new(0, 8);
        from_zero.after_round(false, t0);
        from_zero.after_round(false, t0 + ms(8));
        assert_eq!(from_zero.current_ms(), 1);
        from_zero.after_round(true, t0 + ms(9));
        assert_eq!(from_zero.current_ms(), 0);
    }
}
