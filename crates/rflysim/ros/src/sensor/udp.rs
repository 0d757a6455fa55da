//! A sensor's UDP stream: datagrams → reassembled frames → the pipeline.

use std::time::Instant;

use tokio::sync::watch;

use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use ros_common::net::{BlockingUdp, Received, SenderGate};

use super::SensorPipeline;

/// Receives `p`'s datagrams until `shutdown` turns true.
pub(super) async fn run(p: SensorPipeline, mut shutdown: watch::Receiver<bool>) {
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

/// Reassembles `sock`'s datagrams into frames and hands them to `p` until
/// the socket is closed. The first loss of a frame too large for the
/// receive buffer (`granted` bytes) says what fixes it, in the log and in
/// `/diagnostics`.
fn receive(mut p: SensorPipeline, mut sock: BlockingUdp, granted: usize) {
    let seq_id = p.cfg().seq_id;
    let mut buffer_advice =
        ros_common::net::receive_buffer_advice(p.mapper.max_frame_bytes(), granted, p.settings.rcvbuf);
    let config = ReassemblerConfig::for_frames_of(p.mapper.max_frame_bytes())
        .with_headroom(p.mapper.headroom())
        .with_tailroom(p.mapper.tailroom());
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
                r2r::log_error!(&p.logger, "sensor {seq_id}: cannot set the socket's timeout: {e}");
                return;
            }
            waits_for_stale = stale_at.is_some();
        }
        // Each datagram is received where the reassembler expects it: a
        // packet that arrives in order lands in its place in its frame.
        let mut slot = reassembler.slot();
        match sock.recv_appended(slot.buf()) {
            Received::Datagram(_) => {
                p.stats.datagrams.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let Some(frame) = slot.push(start.elapsed()) {
                    p.handle_frame(frame.time_stamp, frame.payload, frame.headroom);
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
                r2r::log_warn!(&p.logger, "sensor {seq_id}: frames lost: {advice}");
                p.stats.set_advice(advice);
            }
        }
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
