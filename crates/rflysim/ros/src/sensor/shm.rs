//! A sensor's shared-memory region: polled for complete frames, opened again
//! when the simulator replaces, removes or shrinks it.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use rflysim_proto::shm::{payload_capacity, RawRegion, ShmReader, HEADER_LEN};

use super::SensorPipeline;

/// A mapping of another process's region, moved between tokio's threads.
struct MappedRegion(shared_memory::Shmem);

// SAFETY: a Unix shared-memory mapping is a plain address range; nothing in
// it is tied to the thread that mapped it.
unsafe impl Send for MappedRegion {}

/// Which file a mapping is of, and how long that file was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RegionIdentity {
    inode: u64,
    len: u64,
}

impl RegionIdentity {
    fn of(path: &str) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Self {
            inode: m.ino(),
            len: m.len(),
        })
    }
}

/// Maps `/dev/shm/<name>` if it is there and at least a header long, with
/// the identity of the file that was mapped (looked at before and after: a
/// region replaced during the open is opened again on the next try).
fn open_region(name: &str, path: &str) -> Option<(MappedRegion, RegionIdentity)> {
    let before = RegionIdentity::of(path)?;
    let shmem = shared_memory::ShmemConf::new().os_id(name).open().ok()?;
    let after = RegionIdentity::of(path)?;
    let fits = shmem.len() >= HEADER_LEN && shmem.len() as u64 <= after.len;
    (before == after && fits).then_some((MappedRegion(shmem), after))
}

/// Polls `p`'s shared-memory region until `shutdown` turns true.
pub(super) async fn run(mut p: SensorPipeline, mut shutdown: watch::Receiver<bool>) {
    let seq_id = p.cfg().seq_id;
    let name = p.cfg().shm_name();
    let path = format!("/dev/shm/{name}");
    let (w, h) = p.cfg().size();
    let area_len = payload_capacity(p.mapper.kind(), w, h);
    let start = Instant::now();
    let headroom = p.mapper.headroom();
    let mut reader = ShmReader::new().with_headroom(headroom);
    let mut logged_wait = false;
    // One pass per mapping: the writer may replace the region (a
    // simulator restart) or shrink it; both send us back here.
    'open: loop {
        let Some((shmem, identity)) = open_region(&name, &path) else {
            if !logged_wait {
                r2r::log_info!(&p.logger, "sensor {seq_id}: waiting for shared memory {path}");
                logged_wait = true;
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(200)) => continue 'open,
                _ = shutdown.changed() => return,
            }
        };
        logged_wait = false;
        r2r::log_info!(
            &p.logger,
            "sensor {seq_id} ({}) on shared memory {path} ({} bytes) → {}",
            p.mapper.kind().description,
            shmem.0.len(),
            p.topic()
        );
        // SAFETY: `shmem` keeps the mapping alive for as long as `region` is used,
        // and the region is checked against the file before every access.
        let mut region = unsafe { RawRegion::new(shmem.0.as_ptr(), shmem.0.len()) };
        let mut buf = Vec::new();
        let mut tick = tokio::time::interval(p.settings.shm_poll);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = shutdown.changed() => return,
            }
            // Touching a page past the end of a shrunk file is SIGBUS: the
            // file is looked at before the mapping is.
            match RegionIdentity::of(&path) {
                Some(now) if now.inode == identity.inode && now.len >= identity.len => {}
                _ => {
                    r2r::log_warn!(
                        &p.logger,
                        "sensor {seq_id}: {path} was replaced, removed or shrunk; opening it again"
                    );
                    p.stats.drop_frame("region_replaced");
                    continue 'open;
                }
            }
            let (torn, reclaimed) = (reader.stats().torn, reader.stats().reclaimed);
            if let Some(t) = reader.poll(&mut region, area_len, &mut buf, start.elapsed()) {
                buf = p
                    .handle_frame_off_worker(t, std::mem::take(&mut buf), headroom)
                    .unwrap_or_default();
            }
            if reader.stats().torn > torn {
                p.warn_drop("torn", "the frame changed while it was copied");
            }
            if reader.stats().reclaimed > reclaimed {
                p.warn_drop("stale_reader", "the slot was held by a reader that died; taken back");
            }
        }
    }
}
