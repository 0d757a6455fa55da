//! A Fetch v4 response read off the socket batch by batch, never whole: a
//! batch larger than a partition may keep, or one this client cannot decode
//! (a compressed one), is passed over unread and reported with its offsets,
//! and what a partition keeps is bounded (a broker that ignores the
//! request's byte limits, as tansu does, cannot make the reader hold a whole
//! backlog). Only the partitions asked for are kept, each once: any other
//! entry is read past without a copy, so what a response makes the reader
//! hold is bounded by the request, not by the counts the response claims.
//! Layout: Kafka's protocol guide, Fetch v4 and the record batch.

use std::io::{Cursor, Read};

use rskafka::protocol::error::Error as ApiError;
use rskafka::protocol::record::RecordBatch;
use rskafka::protocol::traits::ReadType;

use crate::LinkError;

/// The reason of a response longer than the connection allows.
pub const TOO_LARGE: &str = "response_too_large";

/// The bytes of a batch after its length field up to `lastOffsetDelta`'s
/// end: partitionLeaderEpoch 4, magic 1, crc 4, attributes 2, lastOffsetDelta 4.
const TO_LAST_OFFSET_DELTA: usize = 15;
/// The smallest batch after its length field (a header with no record).
const MIN_BATCH: usize = 49;
/// More topics or partitions than any AeroSim bridge asks for: a corrupt count.
const MAX_ENTRIES: i32 = 100_000;

/// A batch passed over unread: its first and last offsets, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    pub first: i64,
    pub last: i64,
    pub why: &'static str,
}

/// One partition of the response that was asked for.
#[derive(Debug)]
pub struct PartitionData {
    /// Which of the topics asked for (partition [`crate::PARTITION`] of each).
    pub asked: usize,
    pub error: Option<ApiError>,
    pub high_watermark: i64,
    pub batches: Vec<RecordBatch>,
    pub passed_over: Vec<PassedOver>,
}

fn malformed(what: &str) -> LinkError {
    LinkError {
        reason: "invalid_response",
        detail: format!("fetch response: {what}"),
    }
}

fn io(e: std::io::Error) -> LinkError {
    match e.into_inner().map(|inner| inner.downcast::<LinkError>()) {
        Some(Ok(link)) => *link,
        Some(Err(other)) => malformed(&other.to_string()),
        None => malformed("cut short"),
    }
}

fn bytes<const N: usize>(r: &mut impl Read) -> Result<[u8; N], LinkError> {
    let mut b = [0; N];
    r.read_exact(&mut b).map_err(io)?;
    Ok(b)
}

fn i16_of(r: &mut impl Read) -> Result<i16, LinkError> {
    Ok(i16::from_be_bytes(bytes(r)?))
}

fn i32_of(r: &mut impl Read) -> Result<i32, LinkError> {
    Ok(i32::from_be_bytes(bytes(r)?))
}

fn i64_of(r: &mut impl Read) -> Result<i64, LinkError> {
    Ok(i64::from_be_bytes(bytes(r)?))
}

/// Reads and drops `n` bytes.
fn discard(r: &mut impl Read, n: usize) -> Result<(), LinkError> {
    let copied = std::io::copy(&mut r.by_ref().take(n as u64), &mut std::io::sink()).map_err(io)?;
    if copied < n as u64 {
        return Err(malformed("cut short"));
    }
    Ok(())
}

fn count(r: &mut impl Read, what: &str) -> Result<usize, LinkError> {
    match i32_of(r)? {
        -1 => Ok(0),
        n if (0..=MAX_ENTRIES).contains(&n) => Ok(n as usize),
        n => Err(malformed(&format!("{n} {what}"))),
    }
}

/// The response body after its header (the correlation id): the partitions
/// asked for (partition [`crate::PARTITION`] of each topic in `asked`), each
/// once, `keep` bytes of batches kept at most per partition: the first batch
/// always, unless it alone is larger than `keep`. Other topics and
/// partitions, and a partition named twice, are read past, their names
/// never copied.
pub fn read(r: &mut impl Read, asked: &[&str], keep: usize) -> Result<Vec<PartitionData>, LinkError> {
    let _throttle_time_ms = i32_of(r)?;
    let mut out: Vec<PartitionData> = Vec::new();
    let longest = asked.iter().map(|t| t.len()).max().unwrap_or(0);
    let mut name = Vec::with_capacity(longest);
    for _ in 0..count(r, "topics")? {
        let name_len = usize::try_from(i16_of(r)?).map_err(|_| malformed("a topic without a name"))?;
        let topic = if name_len <= longest {
            name.resize(name_len, 0);
            r.read_exact(&mut name).map_err(io)?;
            asked.iter().position(|t| t.as_bytes() == name.as_slice())
        } else {
            discard(r, name_len)?;
            None
        };
        for _ in 0..count(r, "partitions")? {
            let partition = i32_of(r)?;
            let error = ApiError::new(i16_of(r)?);
            let high_watermark = i64_of(r)?;
            let _last_stable_offset = i64_of(r)?;
            let aborted = count(r, "aborted transactions")?;
            discard(r, aborted * 16)?;
            let records = match i32_of(r)? {
                -1 => 0,
                n => usize::try_from(n).map_err(|_| malformed("a negative record set"))?,
            };
            let wanted = topic.filter(|&i| partition == crate::PARTITION && !out.iter().any(|p| p.asked == i));
            let Some(asked) = wanted else {
                discard(r, records)?;
                continue;
            };
            let (batches, passed_over) = read_batches(&mut r.by_ref().take(records as u64), records, keep)?;
            out.push(PartitionData {
                asked,
                error,
                high_watermark,
                batches,
                passed_over,
            });
        }
    }
    Ok(out)
}

/// The batches of a record set of `len` bytes: kept up to `keep` bytes,
/// passed over where too large or unreadable, the rest read and dropped
/// (a broker may end a set with a batch cut short; what was not kept is
/// fetched again next time).
fn read_batches(r: &mut impl Read, len: usize, keep: usize) -> Result<(Vec<RecordBatch>, Vec<PassedOver>), LinkError> {
    let (mut batches, mut passed_over) = (Vec::new(), Vec::new());
    let (mut left, mut kept) = (len, 0usize);
    while left >= 12 {
        let base_offset = i64_of(r)?;
        let batch_len = i32_of(r)?;
        left -= 12;
        let n = usize::try_from(batch_len).unwrap_or(usize::MAX);
        if n > left {
            break;
        }
        if n < MIN_BATCH {
            return Err(malformed(&format!("a record batch of {batch_len} bytes")));
        }
        left -= n;
        if n > keep {
            let head: [u8; TO_LAST_OFFSET_DELTA] = bytes(r)?;
            discard(r, n - TO_LAST_OFFSET_DELTA)?;
            passed_over.push(passed(base_offset, &head, TOO_LARGE));
            continue;
        }
        if kept + n > keep {
            // No room left here: the next fetch starts at this batch.
            left += n;
            break;
        }
        let mut batch = Vec::with_capacity(12 + n);
        batch.extend_from_slice(&base_offset.to_be_bytes());
        batch.extend_from_slice(&batch_len.to_be_bytes());
        batch.resize(12 + n, 0);
        r.read_exact(&mut batch[12..]).map_err(io)?;
        match RecordBatch::read(&mut Cursor::new(&batch)) {
            Ok(b) => {
                kept += n;
                batches.push(b);
            }
            Err(_) => {
                let head: [u8; TO_LAST_OFFSET_DELTA] =
                    batch[12..12 + TO_LAST_OFFSET_DELTA].try_into().expect("a batch header");
                passed_over.push(passed(base_offset, &head, "unreadable_batch"));
            }
        }
    }
    discard(r, left)?;
    Ok((batches, passed_over))
}

fn passed(first: i64, head: &[u8; TO_LAST_OFFSET_DELTA], why: &'static str) -> PassedOver {
    let delta = i32::from_be_bytes(head[11..15].try_into().expect("4 bytes"));
    PassedOver {
        first,
        last: first.saturating_add(i64::from(delta.max(0))),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rskafka::protocol::record::{ControlBatchOrRecords, Record, RecordBatchCompression, RecordBatchTimestampType};
    use rskafka::protocol::traits::WriteType;

    fn batch(base: i64, values: &[&[u8]]) -> Vec<u8> {
        let b = RecordBatch {
            base_offset: base,
            partition_leader_epoch: 0,
            last_offset_delta: values.len() as i32 - 1,
            first_timestamp: 1000,
            max_timestamp: 1000,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: ControlBatchOrRecords::Records(
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Record {
                        timestamp_delta: 0,
                        offset_delta: i as i32,
                        key: None,
                        value: Some(v.to_vec()),
                        headers: vec![],
                    })
                    .collect(),
            ),
            compression: RecordBatchCompression::NoCompression,
            is_transactional: false,
            timestamp_type: RecordBatchTimestampType::CreateTime,
        };
        let mut out = Vec::new();
        b.write(&mut out).unwrap();
        out
    }

    /// One partition entry: `partition`, high watermark 99, no aborted
    /// transactions, `records` as its record set.
    fn partition_entry(partition: i32, records: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&partition.to_be_bytes());
        r.extend_from_slice(&0i16.to_be_bytes());
        r.extend_from_slice(&99i64.to_be_bytes()); // high watermark
        r.extend_from_slice(&99i64.to_be_bytes());
        r.extend_from_slice(&(-1i32).to_be_bytes()); // no aborted transactions
        r.extend_from_slice(&(records.len() as i32).to_be_bytes());
        r.extend_from_slice(records);
        r
    }

    /// A topic entry: its name and its partition entries.
    fn topic_entry(topic: &str, partitions: &[Vec<u8>]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&(topic.len() as i16).to_be_bytes());
        r.extend_from_slice(topic.as_bytes());
        r.extend_from_slice(&(partitions.len() as i32).to_be_bytes());
        for p in partitions {
            r.extend_from_slice(p);
        }
        r
    }

    fn body(topics: &[Vec<u8>]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&0i32.to_be_bytes()); // throttle
        r.extend_from_slice(&(topics.len() as i32).to_be_bytes());
        for t in topics {
            r.extend_from_slice(t);
        }
        r
    }

    fn response(topic: &str, records: &[u8]) -> Vec<u8> {
        body(&[topic_entry(topic, &[partition_entry(0, records)])])
    }

    fn values(p: &PartitionData) -> Vec<Vec<u8>> {
        p.batches
            .iter()
            .flat_map(|b| match &b.records {
                ControlBatchOrRecords::Records(r) => r.iter().map(|r| r.value.clone().unwrap()).collect(),
                _ => vec![],
            })
            .collect()
    }

    #[test]
    fn an_oversized_batch_is_passed_over_and_the_ones_around_it_kept() {
        let big = vec![7u8; 5000];
        let set = [batch(10, &[b"a"]), batch(11, &[&big, &big]), batch(13, &[b"b"])].concat();
        let parts = read(&mut Cursor::new(response("t", &set)), &["t"], 4096).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(values(&parts[0]), [b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(
            parts[0].passed_over,
            [PassedOver {
                first: 11,
                last: 12,
                why: TOO_LARGE
            }]
        );
    }

    #[test]
    fn a_partition_keeps_what_fits_and_the_rest_is_left_for_the_next_fetch() {
        let set: Vec<u8> = (0..10).flat_map(|i| batch(i, &[&[i as u8; 300]])).collect();
        let parts = read(&mut Cursor::new(response("t", &set)), &["t"], 1000).unwrap();
        assert_eq!(values(&parts[0]).len(), 2, "what fits in 1000 bytes");
        assert!(parts[0].passed_over.is_empty(), "nothing skipped: fetched again");
        // A batch cut short at the end of a set is dropped, not an error.
        let cut = [batch(0, &[b"x"]), batch(1, &[b"y"])[..20].to_vec()].concat();
        let parts = read(&mut Cursor::new(response("t", &cut)), &["t"], 1000).unwrap();
        assert_eq!(values(&parts[0]), [b"x".to_vec()]);
    }

    #[test]
    fn an_undecodable_batch_is_passed_over() {
        let mut bad = batch(5, &[b"z"]);
        bad[12 + 10] |= 1; // attributes: gzip, which this client does not inflate
        let set = [bad, batch(6, &[b"ok"])].concat();
        let parts = read(&mut Cursor::new(response("t", &set)), &["t"], 4096).unwrap();
        assert_eq!(values(&parts[0]), [b"ok".to_vec()]);
        assert_eq!(parts[0].passed_over[0].why, "unreadable_batch");
        assert_eq!((parts[0].passed_over[0].first, parts[0].passed_over[0].last), (5, 5));
    }

    /// Recovery, not just survival: after any corruption of a response, a
    /// good one reads back exactly.
    #[test]
    fn fuzzed_responses_never_panic_and_the_next_good_one_reads() {
        let good = response("t", &[batch(0, &[b"a"]), batch(1, &[b"b"])].concat());
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let mut bad = good.clone();
            let at = (rng as usize) % bad.len();
            bad[at] = (rng >> 32) as u8;
            if rng % 3 == 0 {
                bad.truncate((rng >> 16) as usize % bad.len());
            }
            let _ = read(&mut Cursor::new(&bad), &["t"], 4096);
            let parts = read(&mut Cursor::new(&good), &["t"], 4096).unwrap();
            assert_eq!(values(&parts[0]), [b"a".to_vec(), b"b".to_vec()]);
        }
    }

    /// 32 KiB topic names and 100,000 partitions a topic: ~6 MB that, with
    /// the name copied into each partition, made ~6 GB. Only what was asked
    /// for is kept, and the names are never copied per partition.
    #[test]
    fn partitions_not_asked_for_are_read_past_without_a_copy() {
        let longest = usize::try_from(i16::MAX).unwrap();
        let (asked, other) = ("a".repeat(longest), "o".repeat(longest));
        let empty = partition_entry(7, &[]);
        let others: Vec<Vec<u8>> = vec![empty.clone(); MAX_ENTRIES as usize];
        let mut own: Vec<Vec<u8>> = (1..MAX_ENTRIES - 1).map(|p| partition_entry(p, &[])).collect();
        own.push(partition_entry(0, &batch(5, &[b"kept"])));
        own.push(partition_entry(0, &batch(6, &[b"named twice"])));
        let wire = body(&[topic_entry(&other, &others), topic_entry(&asked, &own)]);
        assert!(wire.len() > 6_000_000);
        let (parts, peak) = counted::peak(|| read(&mut Cursor::new(&wire), &["short", &asked], 4096).unwrap());
        assert_eq!(parts.len(), 1, "the one partition asked for, once");
        assert_eq!((parts[0].asked, values(&parts[0])), (1, vec![b"kept".to_vec()]));
        assert!(
            peak < 256 << 10,
            "{peak} bytes allocated at once for a {} byte response",
            wire.len()
        );
    }
}

/// Counts what a thread allocates while it is asked to, and refuses to go
/// past a cap: a decode that allocates without bound ends the test binary
/// with an allocation failure instead of taking the machine's memory.
#[cfg(test)]
mod counted {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    const CAP: isize = 256 << 20;

    thread_local! {
        static COUNTING: Cell<bool> = const { Cell::new(false) };
        static LIVE: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    struct Counting;

    #[global_allocator]
    static ALLOCATOR: Counting = Counting;

    /// Notes `delta` bytes for this thread; false when that goes past the cap.
    fn note(delta: isize) -> bool {
        if !COUNTING.try_with(Cell::get).unwrap_or(false) {
            return true;
        }
        let live = LIVE.with(Cell::get) + delta;
        if live > CAP {
            return false;
        }
        LIVE.with(|l| l.set(live));
        PEAK.with(|p| p.set(p.get().max(live)));
        true
    }

    // SAFETY: every call is passed on to the system allocator unchanged.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if !note(layout.size() as isize) {
                return std::ptr::null_mut();
            }
            // SAFETY: the caller's layout, as `alloc` was given it.
            unsafe { System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            note(-(layout.size() as isize));
            // SAFETY: `ptr` came from `System` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            if !note(new_size as isize - layout.size() as isize) {
                return std::ptr::null_mut();
            }
            // SAFETY: as for `alloc` and `dealloc`.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    /// `f`'s output, and the most bytes this thread had allocated at once
    /// while it ran (beyond what it had before).
    pub fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
        LIVE.with(|l| l.set(0));
        PEAK.with(|p| p.set(0));
        COUNTING.with(|c| c.set(true));
        let out = f();
        COUNTING.with(|c| c.set(false));
        (out, usize::try_from(PEAK.with(Cell::get)).unwrap_or(0))
    }
}
