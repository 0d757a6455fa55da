//! A sensor's UDP stream: datagrams → reassembled frames → the pipeline.

use std::time::Instant;

use tokio::sync::watch;

use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use ros_common::deadline::Deadline;
use ros_common::net::FilteredUdp;

use super::SensorPipeline;

/// Receives `p`'s datagrams until `shutdown` turns true.
pub(super) async fn run(mut p: SensorPipeline, mut shutdown: watch::Receiver<bool>) {
    let seq_id = p.cfg().seq_id;
    let port = p.cfg().udp_port();
    let (std_sock, granted) =
        match ros_common::net::udp_receiver(std::net::Ipv4Addr::UNSPECIFIED, port, p.settings.rcvbuf, None) {
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
    let mut sock = match FilteredUdp::new(std_sock, p.senders.clone(), p.stats.clone(), &p.logger) {
        Ok(s) => s,
        Err(e) => {
            r2r::log_error!(&p.logger, "sensor {seq_id}: {e}");
            return;
        }
    };
    let config = ReassemblerConfig::for_frames_of(p.mapper.max_frame_bytes())
        .with_headroom(p.mapper.headroom())
        .with_tailroom(p.mapper.tailroom());
    let mut reassembler = Reassembler::new(config);
    let start = Instant::now();
    let mut last_counts = *reassembler.stats();
    // Stale partial frames are evicted on every datagram; this deadline
    // covers a stream that went silent with a frame half filled, and exists
    // only while a frame is being filled.
    let mut evict = Deadline::new();
    loop {
        evict.arm_if_unarmed(reassembler.next_stale_at().map(|at| start + at));
        // Each datagram is received where the reassembler expects it: a
        // packet that arrives in order lands in its place in its frame.
        let mut slot = reassembler.slot();
        tokio::select! {
            _ = sock.recv_appended(slot.buf()) => {
                p.stats.datagrams.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let Some(frame) = slot.push(start.elapsed()) {
                    p.handle_frame_off_worker(frame.time_stamp, frame.payload, frame.headroom);
                }
            }
            _ = evict.fired() => {
                drop(slot);
                reassembler.evict_stale(start.elapsed());
            }
            _ = shutdown.changed() => break,
        }
        let counts = *reassembler.stats();
        if counts.input_dropped() != last_counts.input_dropped() {
            if let Some(held_back) = p.warn_limit.allow() {
                r2r::log_warn!(
                    &p.logger,
                    "sensor {seq_id}: dropping input: {} lost, {} missing, {} garbage, {} bad length, {} inconsistent, {} oversize so far ({held_back} similar reports held back)",
                    counts.frames_lost(),
                    counts.frames_missing,
                    counts.garbage,
                    counts.bad_length,
                    counts.inconsistent,
                    counts.oversize
                );
            }
        }
        if counts.restarts > last_counts.restarts {
            r2r::log_info!(
                &p.logger,
                "sensor {seq_id}: the simulator restarted (frame ids / time went back); following the new run"
            );
        }
        last_counts = counts;
        p.stats.set_transport_drops(&counts.drop_counts());
    }
}
