//! AeroSim's Kafka side, shared by the bridge and the emulator.
//!
//! AeroSim gives every stream a topic of one partition and reads it by
//! assigning partition 0 at the end offset, without a consumer group: a
//! [`Reader`] does the same (or from the earliest offset, when asked). A
//! broker may start empty or restart with an empty memory store, so topics
//! are created when missing, a reader whose offset is past the end of a
//! restarted log starts over at the new log's beginning, and every error
//! is returned to the caller (to count and log) before the next try.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rskafka::client::error::{Error as KafkaError, ProtocolError};
use rskafka::client::partition::{Compression, OffsetAt, PartitionClient, UnknownTopicHandling};
use rskafka::client::{Client, ClientBuilder};
use rskafka::record::Record;
use rskafka::BackoffConfig;

/// AeroSim's record key on every topic.
pub const RECORD_KEY: &[u8] = b"key";
/// The one partition of every AeroSim topic.
const PARTITION: i32 = 0;
/// How long a request may take before the caller hears of it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Between two tries after an error: short, so that a restarted broker is
/// read again well within 2 s.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

/// Where a reader starts on a topic it has not read yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartFrom {
    /// Only what is produced from now on (AeroSim's own consumers).
    Latest,
    /// The whole history the broker keeps.
    Earliest,
}

/// A failed Kafka operation: a short reason for the counters, the detail
/// for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkError {
    pub reason: &'static str,
    pub detail: String,
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.reason, self.detail)
    }
}

impl std::error::Error for LinkError {}

fn link_error(e: &KafkaError) -> LinkError {
    let reason = match e {
        KafkaError::Connection(_) | KafkaError::Request(_) | KafkaError::RetryFailed(_) => "broker_unreachable",
        KafkaError::ServerError { protocol_error, .. } => protocol_reason(protocol_error),
        KafkaError::InvalidResponse(_) => "invalid_response",
        KafkaError::Timeout => "timeout",
        _ => "kafka_error",
    };
    LinkError {
        reason,
        detail: e.to_string(),
    }
}

/// The reason counted for an error code the broker answered with.
fn protocol_reason(e: &ProtocolError) -> &'static str {
    match e {
        ProtocolError::UnknownTopicOrPartition => "unknown_topic",
        ProtocolError::OffsetOutOfRange => "offset_out_of_range",
        _ => "broker_error",
    }
}

fn timed_out(what: &str) -> LinkError {
    LinkError {
        reason: "timeout",
        detail: format!("{what}: no answer within {REQUEST_TIMEOUT:?}"),
    }
}

/// `f`'s answer, or a timeout error for `what` once `limit` has passed.
async fn bounded<T>(
    limit: Duration,
    what: &str,
    f: impl std::future::Future<Output = Result<T, LinkError>>,
) -> Result<T, LinkError> {
    tokio::time::timeout(limit, f)
        .await
        .unwrap_or_else(|_| Err(timed_out(what)))
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = Result<T, KafkaError>>) -> Result<T, LinkError> {
    bounded(REQUEST_TIMEOUT, what, async { f.await.map_err(|e| link_error(&e)) }).await
}

/// A connection to the broker (`host:port[,host:port…]`), made on first
/// use and made again after it failed.
#[derive(Clone)]
pub struct Link {
    bootstrap: Vec<String>,
    /// The brokers' ports, whose connections get Nagle turned off.
    ports: Vec<u16>,
    /// When that was last done, in ms since the Unix epoch.
    nagle_checked_ms: Arc<AtomicI64>,
    client_id: String,
    max_message_bytes: usize,
    client: Arc<tokio::sync::Mutex<Option<Arc<Client>>>>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("bootstrap", &self.bootstrap)
            .finish_non_exhaustive()
    }
}

impl Link {
    /// `max_message_bytes` bounds what one response may carry.
    pub fn new(bootstrap_servers: &str, client_id: &str, max_message_bytes: usize) -> Self {
        let bootstrap: Vec<String> = bootstrap_servers
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let ports = bootstrap
            .iter()
            .filter_map(|s| s.rsplit_once(':')?.1.parse().ok())
            .collect();
        Self {
            bootstrap,
            ports,
            nagle_checked_ms: Arc::default(),
            client_id: client_id.to_string(),
            max_message_bytes,
            client: Arc::default(),
        }
    }

    pub fn bootstrap(&self) -> String {
        self.bootstrap.join(",")
    }

    async fn client(&self) -> Result<Arc<Client>, LinkError> {
        let mut slot = self.client.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let backoff = BackoffConfig {
            init_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(250),
            base: 2.0,
            // Each call gives up and reports; the caller tries again.
            deadline: Some(REQUEST_TIMEOUT),
        };
        let build = ClientBuilder::new(self.bootstrap.clone())
            .client_id(self.client_id.as_str())
            .max_message_size(self.max_message_bytes)
            .backoff_config(backoff)
            .build();
        let client = Arc::new(within("connect", build).await?);
        self.keep_nagle_off(true);
        *slot = Some(client.clone());
        Ok(client)
    }

    /// On the connections made so far: at once when asked (rskafka connects
    /// to a partition's leader on its first request), else at most once a
    /// second (it may reconnect by itself within a request's retries).
    fn keep_nagle_off(&self, now: bool) {
        let t = now_ms();
        if now || t - self.nagle_checked_ms.load(Ordering::Relaxed) >= 1000 {
            self.nagle_checked_ms.store(t, Ordering::Relaxed);
            nodelay::disable_nagle_to(&self.ports);
        }
    }

    /// After an error that may mean the broker went away: the next call
    /// connects afresh.
    async fn forget(&self) {
        *self.client.lock().await = None;
    }

    /// Creates `topic` with one partition unless it exists.
    pub async fn ensure_topic(&self, topic: &str) -> Result<(), LinkError> {
        let client = self.client().await?;
        let controller = client.controller_client().map_err(|e| link_error(&e))?;
        match within("create topic", controller.create_topic(topic, 1, 1, 5_000)).await {
            Ok(()) => Ok(()),
            Err(e) if e.detail.contains("TopicAlreadyExists") => Ok(()),
            Err(e) => {
                if e.reason == "broker_unreachable" || e.reason == "timeout" {
                    self.forget().await;
                }
                Err(e)
            }
        }
    }

    async fn partition(&self, topic: &str) -> Result<PartitionClient, LinkError> {
        let client = self.client().await?;
        match within(
            "partition",
            client.partition_client(topic, PARTITION, UnknownTopicHandling::Error),
        )
        .await
        {
            Ok(p) => Ok(p),
            Err(e) => {
                if e.reason == "broker_unreachable" || e.reason == "timeout" {
                    self.forget().await;
                }
                Err(e)
            }
        }
    }

    /// A reader of `topic`'s partition 0 (created when missing).
    pub fn reader(&self, topic: &str, start: StartFrom, fetch_wait: Duration, max_fetch_bytes: i32) -> Reader {
        Reader {
            link: self.clone(),
            topic: topic.to_string(),
            start,
            fetch_wait_ms: i32::try_from(fetch_wait.as_millis()).unwrap_or(i32::MAX),
            max_fetch_bytes: max_fetch_bytes.max(1),
            partition: None,
            next: None,
        }
    }

    /// A writer to `topic`'s partition 0 (created when missing), whose
    /// sends wait 2 s for their acknowledgement unless told otherwise
    /// ([`Writer::acknowledged_within`]).
    pub fn writer(&self, topic: &str) -> Writer {
        Writer {
            link: self.clone(),
            topic: topic.to_string(),
            ack_timeout: REQUEST_TIMEOUT,
            partition: tokio::sync::Mutex::new(None),
        }
    }
}

/// One record as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub offset: i64,
    /// Empty for a record without a value.
    pub value: Vec<u8>,
    /// The record's timestamp, milliseconds since the Unix epoch.
    pub timestamp_ms: i64,
}

/// Reads one topic, in order, resuming where it was after an error.
pub struct Reader {
    link: Link,
    topic: String,
    start: StartFrom,
    fetch_wait_ms: i32,
    max_fetch_bytes: i32,
    partition: Option<PartitionClient>,
    next: Option<i64>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("topic", &self.topic)
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl Reader {
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// How long a fetch may take before it counts as failed.
    fn fetch_timeout(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.fetch_wait_ms).unwrap_or(0)) + REQUEST_TIMEOUT
    }

    /// The next records (none when the broker had none within the fetch
    /// wait). After an error the caller counts it and calls again: the
    /// reader has paused and set itself up to resume.
    pub async fn next(&mut self) -> Result<Vec<Fetched>, LinkError> {
        let r = self.try_next().await;
        if let Err(e) = &r {
            self.failed(e).await;
            tokio::time::sleep(RETRY_PAUSE).await;
        }
        r
    }

    async fn try_next(&mut self) -> Result<Vec<Fetched>, LinkError> {
        let fresh = self.partition.is_none();
        let offset = self.prepare().await?;
        let partition = self.partition.as_ref().expect("prepared");
        let fetched = tokio::time::timeout(
            self.fetch_timeout(),
            partition.fetch_records(offset, 1..self.max_fetch_bytes, self.fetch_wait_ms),
        )
        .await
        .map_err(|_| timed_out("fetch"))?;
        self.link.keep_nagle_off(fresh);
        match fetched {
            Ok((records, high_watermark)) => {
                let records = records
                    .into_iter()
                    .map(|r| Fetched {
                        offset: r.offset,
                        value: r.record.value.unwrap_or_default(),
                        timestamp_ms: r.record.timestamp.timestamp_millis(),
                    })
                    .collect();
                self.absorb(offset, records, high_watermark).await
            }
            Err(e) => Err(self.refused(link_error(&e)).await),
        }
    }

    /// Ready to fetch: the partition found (the topic created when missing)
    /// and the offset to fetch from.
    async fn prepare(&mut self) -> Result<i64, LinkError> {
        if self.partition.is_none() {
            let p = match self.link.partition(&self.topic).await {
                Err(e) if e.reason == "unknown_topic" => {
                    self.link.ensure_topic(&self.topic).await?;
                    self.link.partition(&self.topic).await?
                }
                other => other?,
            };
            self.partition = Some(p);
        }
        let partition = self.partition.as_ref().expect("set above");
        match self.next {
            Some(o) => Ok(o),
            None => {
                let at = match self.start {
                    StartFrom::Latest => OffsetAt::Latest,
                    StartFrom::Earliest => OffsetAt::Earliest,
                };
                let o = within("offset", partition.get_offset(at)).await?;
                self.next = Some(o);
                Ok(o)
            }
        }
    }

    /// What a fetch from `offset` brought: the records from `offset` on.
    async fn absorb(
        &mut self,
        offset: i64,
        records: Vec<Fetched>,
        high_watermark: i64,
    ) -> Result<Vec<Fetched>, LinkError> {
        if records.is_empty() && high_watermark < offset {
            // The log is shorter than where we are: the broker restarted
            // with an empty store. Its new records are all new.
            self.next = Some(self.earliest().await?);
            return Ok(Vec::new());
        }
        // A batch may start before the offset asked for.
        let out: Vec<Fetched> = records.into_iter().filter(|r| r.offset >= offset).collect();
        if let Some(last) = out.last() {
            self.next = Some(last.offset + 1);
        }
        Ok(out)
    }

    /// The broker refused a fetch: past the end of a restarted log, the
    /// reader starts over at its beginning.
    async fn refused(&mut self, e: LinkError) -> LinkError {
        if e.reason == "offset_out_of_range" {
            match self.earliest().await {
                Ok(o) => self.next = Some(o),
                Err(e) => return e,
            }
        }
        e
    }

    async fn earliest(&self) -> Result<i64, LinkError> {
        match &self.partition {
            Some(p) => within("offset", p.get_offset(OffsetAt::Earliest)).await,
            None => Err(LinkError {
                reason: "kafka_error",
                detail: format!("{}: no partition to ask for its earliest offset", self.topic),
            }),
        }
    }

    /// After an error: counted by the caller; the next try finds the
    /// partition again (and connects again if the broker may be gone).
    async fn failed(&mut self, e: &LinkError) {
        self.partition = None;
        if e.reason == "broker_unreachable" || e.reason == "timeout" {
            self.link.forget().await;
        }
    }
}

/// Produces to one topic; a record is sent once the broker acknowledged it.
///
/// Every record goes over one connection while it lasts, and the broker
/// appends what comes over one connection in the order it came: a send is
/// written at once, behind the sends still waiting for their answers, never
/// after them. A send not acknowledged in time keeps the connection (its
/// record may still be appended, and a record sent next over a new
/// connection could be appended before it); only an error that breaks the
/// connection makes the next send connect again.
pub struct Writer {
    link: Link,
    topic: String,
    ack_timeout: Duration,
    partition: tokio::sync::Mutex<Option<Arc<PartitionClient>>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("topic", &self.topic)
            .field("ack_timeout", &self.ack_timeout)
            .finish_non_exhaustive()
    }
}

impl Writer {
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Sends wait `ack_timeout_s` for the broker's acknowledgement: the one
    /// timeout of a send, so that no shorter one of the client's own
    /// abandons the connection a record waits on.
    pub fn acknowledged_within(mut self, ack_timeout: Duration) -> Self {
        self.ack_timeout = ack_timeout;
        self
    }

    /// Connected, with the topic's partition found (the topic created when
    /// missing): what makes the first send as quick as the next.
    pub async fn warm(&self) -> Result<(), LinkError> {
        let mut slot = self.partition.lock().await;
        if slot.is_none() {
            *slot = Some(Arc::new(self.find_partition().await?));
            self.link.keep_nagle_off(true);
        }
        Ok(())
    }

    async fn find_partition(&self) -> Result<PartitionClient, LinkError> {
        match self.link.partition(&self.topic).await {
            Err(e) if e.reason == "unknown_topic" => {
                self.link.ensure_topic(&self.topic).await?;
                self.link.partition(&self.topic).await
            }
            other => other,
        }
    }

    /// Sends `value` under AeroSim's key; `Ok(offset)` once acknowledged,
    /// a `timeout` error when not within the writer's acknowledgement wait.
    /// After an error that broke the connection, the next call connects
    /// (and creates the topic) again. A caller that gives up waiting cannot
    /// recall a record whose request was written: the broker may still
    /// append it, before whatever is sent after it.
    pub async fn send(&self, value: Vec<u8>, timestamp_ms: i64) -> Result<i64, LinkError> {
        let deadline = tokio::time::Instant::now() + self.ack_timeout;
        let not_acknowledged = || LinkError {
            reason: "timeout",
            detail: format!("produce: no acknowledgement within {:?}", self.ack_timeout),
        };
        let ready = async {
            let mut slot = self.partition.lock().await;
            let fresh = slot.is_none();
            if fresh {
                *slot = Some(Arc::new(self.find_partition().await?));
            }
            Ok::<_, LinkError>((slot.clone().expect("set above"), fresh))
        };
        let (partition, fresh) = tokio::time::timeout_at(deadline, ready)
            .await
            .map_err(|_| not_acknowledged())??;
        let record = Record {
            key: Some(RECORD_KEY.to_vec()),
            value: Some(value),
            headers: Default::default(),
            timestamp: rskafka::chrono::DateTime::from_timestamp_millis(timestamp_ms).unwrap_or_default(),
        };
        // Written in this same poll, in the order the sends began; the
        // answer is awaited without the slot, so the next send is written
        // at once behind this one.
        let produced =
            tokio::time::timeout_at(deadline, partition.produce(vec![record], Compression::NoCompression)).await;
        match produced {
            Ok(Ok(offsets)) => {
                self.link.keep_nagle_off(fresh);
                Ok(offsets.first().copied().unwrap_or(-1))
            }
            Ok(Err(e)) => {
                let e = link_error(&e);
                let mut slot = self.partition.lock().await;
                if slot.as_ref().is_some_and(|p| Arc::ptr_eq(p, &partition)) {
                    *slot = None;
                }
                drop(slot);
                if e.reason == "broker_unreachable" || e.reason == "timeout" {
                    self.link.forget().await;
                }
                Err(e)
            }
            Err(_) => Err(not_acknowledged()),
        }
    }
}

/// A runtime whose drop does not wait for its blocking threads. The Kafka
/// client looks host names up on them (getaddrinfo), and a resolver that
/// does not answer holds a lookup for as long as its own timeouts allow:
/// the stop leaves such a lookup behind rather than wait for it.
#[derive(Debug)]
pub struct DetachedRuntime(Option<tokio::runtime::Runtime>);

impl DetachedRuntime {
    pub fn new(runtime: tokio::runtime::Runtime) -> Self {
        Self(Some(runtime))
    }
}

impl std::ops::Deref for DetachedRuntime {
    type Target = tokio::runtime::Runtime;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref().expect("until dropped")
    }
}

impl Drop for DetachedRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

mod blocking;
pub mod broker;
mod fetch_response;
mod nodelay;
mod topics_reader;

pub use blocking::Closer;
pub use topics_reader::{FetchWait, Round, TopicsReader};
