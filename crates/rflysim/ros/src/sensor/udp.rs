//! A sensor's UDP stream: datagrams → reassembled frames → the pipeline.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use ros_common::latest::Latest;
use ros_common::net::{BlockingUdp, Received, SenderGate};
use ros_common::stats::{RateLimitedLog, StreamStats};

use super::SensorPipeline;

/// Receives `p`'s datagrams until `shutdown` turns true.
pub(super) async fn run(p: SensorPipeline, mut shutdown: watch::Receiver<bool>) {
    let seq_id = p.cfg().seq_id;
    let port = p.cfg().udp_port();
    let (std_sock, granted) =
        match ros_common::net::udp_receiver(std::net::Ipv4Addr::UNSPECIFIED, port, p.settings.rcvbuf) {
            Ok(s) => s,
            Err(e) => {
                r2r::log_error!(&p.logger, "sensor {seq_id}: cannot bind UDP {port}: {e}");
                return;
            }
        };
    r2r::log_info!(
        &p.logger,
        "sensor {seq_id} ({}, TypeID {}) on UDP {port} → {} (receive buffer {} KiB granted)",
        p.mapper.kind().description,
        p.cfg().type_id,
        p.topic(),
        granted / 1024
    );
    let sock = match BlockingUdp::new(std_sock, SenderGate::new(p.senders.clone(), p.stats.clone(), &p.logger)) {
        Ok(s) => s,
        Err(e) => {
            r2r::log_error!(&p.logger, "sensor {seq_id}: {e}");
            return;
        }
    };
    // A thread of its own, blocked in `recv`, reads the datagrams: read
    // through tokio's reactor, a 1080p frame cost the bridge ~12 % more CPU
    // (BENCHMARKS.md).
    let closer = sock.closer();
    let mut receiving = tokio::task::spawn_blocking(move || receive(p, sock, granted));
    tokio::select! {
        _ = shutdown.changed() => {
            closer.close();
            let _ = receiving.await;
        }
        _ = &mut receiving => {}
    }
}

/// Where reassembled frames go: converted and published on the receiving
/// thread, or, for a camera whose frames take milliseconds to decode, on a
/// thread of its own that takes the newest frame: a decode slower than the
/// camera costs old frames (counted `superseded`), never seconds of frames
/// queued in the socket.
enum FrameSink {
    Inline(Box<SensorPipeline>),
    Decoder {
        newest: Arc<Latest<(f64, Vec<u8>, usize)>>,
        stats: Arc<StreamStats>,
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
}

impl FrameSink {
    fn new(mut p: SensorPipeline) -> Self {
        if !p.mapper.is_heavy() {
            return FrameSink::Inline(Box::new(p));
        }
        let newest = Arc::new(Latest::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (stats, logger, seq_id) = (p.stats.clone(), p.logger.clone(), p.cfg().seq_id);
        let (taken, stopped) = (newest.clone(), stop.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("decode-{seq_id}"))
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    if let Some((sim_time, payload, headroom)) = taken.take(Duration::from_millis(100)) {
                        p.handle_frame(sim_time, payload, headroom);
                    }
                }
            });
        let thread = match spawned {
            Ok(t) => Some(t),
            Err(e) => {
                // Every frame is then counted `superseded` in /diagnostics.
                r2r::log_error!(
                    &logger,
                    "sensor {seq_id}: cannot start its decoding thread ({e}); its frames are dropped"
                );
                None
            }
        };
        FrameSink::Decoder {
            newest,
            stats,
            stop,
            thread,
        }
    }

    /// Hands a frame on; gives its buffer back when it is done with it.
    fn deliver(&mut self, sim_time: f64, payload: Vec<u8>, headroom: usize) -> Option<Vec<u8>> {
        match self {
            FrameSink::Inline(p) => p.handle_frame(sim_time, payload, headroom),
            FrameSink::Decoder { newest, stats, .. } => {
                if newest.put((sim_time, payload, headroom)).is_some() {
                    stats.drop_frame("superseded");
                }
                None
            }
        }
    }
}

impl Drop for FrameSink {
    fn drop(&mut self) {
        if let FrameSink::Decoder { stop, thread, .. } = self {
            stop.store(true, Ordering::Relaxed);
            if let Some(t) = thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Reassembles `sock`'s datagrams into frames and hands them to `p` until
/// the socket is closed. The first loss of a frame too large for the
/// receive buffer (`granted` bytes) says what fixes it, in the log and in
/// `/diagnostics`.
fn receive(p: SensorPipeline, mut sock: BlockingUdp, granted: usize) {
    let seq_id = p.cfg().seq_id;
    let mut buffer_advice =
        ros_common::net::receive_buffer_advice(p.mapper.max_frame_bytes(), granted, p.settings.rcvbuf);
    let config = ReassemblerConfig::for_frames_of(p.mapper.max_frame_bytes())
        .with_headroom(p.mapper.headroom())
        .with_tailroom(p.mapper.tailroom());
    let (stats, logger) = (p.stats.clone(), p.logger.clone());
    let mut warn_limit = RateLimitedLog::new(Duration::from_secs(5));
    let mut sink = FrameSink::new(p);
    let mut reassembler = Reassembler::new(config);
    let start = Instant::now();
    let mut last_counts = *reassembler.stats();
    // Stale partial frames are evicted on every datagram; a wait that ends
    // when the oldest partial frame goes stale covers a stream that went
    // silent with a frame half filled. The wait is set (a system call) only
    // when a frame starts being filled, when none is left, and after it
    // ended: not once per datagram.
    let mut waits_for_stale = false;
    loop {
        let stale_at = reassembler.next_stale_at();
        if stale_at.is_some() != waits_for_stale {
            let timeout = stale_at.map(|at| at.saturating_sub(start.elapsed()));
            if let Err(e) = sock.set_timeout(timeout) {
                r2r::log_error!(&logger, "sensor {seq_id}: cannot set the socket's timeout: {e}");
                return;
            }
            waits_for_stale = stale_at.is_some();
        }
        // Each datagram is received where the reassembler expects it: a
        // packet that arrives in order lands in its place in its frame.
        let mut slot = reassembler.slot();
        match sock.recv_appended(slot.buf()) {
            Received::Datagram(_) => {
                stats.datagrams.fetch_add(1, Ordering::Relaxed);
                if let Some(frame) = slot.push(start.elapsed()) {
                    if let Some(spent) = sink.deliver(frame.time_stamp, frame.payload, frame.headroom) {
                        reassembler.recycle(spent);
                    }
                }
            }
            Received::TimedOut => {
                drop(slot);
                reassembler.evict_stale(start.elapsed());
                waits_for_stale = false;
            }
            Received::Closed => break,
        }
        let counts = *reassembler.stats();
        if counts.frames_lost() + counts.frames_missing > last_counts.frames_lost() + last_counts.frames_missing {
            if let Some(advice) = buffer_advice.take() {
                r2r::log_warn!(&logger, "sensor {seq_id}: frames lost: {advice}");
                stats.set_advice(advice);
            }
        }
        if counts.input_dropped() != last_counts.input_dropped() {
            let so_far = format_args!(
                "{} frames lost, {} missing, {} garbage, {} bad length, {} inconsistent, {} oversize so far",
                counts.frames_lost(),
                counts.frames_missing,
                counts.garbage,
                counts.bad_length,
                counts.inconsistent,
                counts.oversize
            );
            warn_limit.warn_dropped(&logger, format_args!("sensor{seq_id}"), "input", so_far);
        }
        if counts.restarts > last_counts.restarts {
            r2r::log_info!(
                &logger,
                "sensor {seq_id}: the simulator restarted (frame ids / time went back); following the new run"
            );
        }
        last_counts = counts;
        stats.set_transport_drops(&counts.drop_counts());
    }
}
