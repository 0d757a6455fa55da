//! RflySim3D's status port (UDP 20006, joined to 224.0.0.10): one receiver
//! per process, because the kernel hands a unicast datagram to one socket
//! only. Every datagram is read by `rflysim_proto::scene::StatusDatagram`
//! (by length, then checksum) and handed to each handler (the gimbals'
//! status, the scene); only `sim_host`, loopback and `allowed_senders` may send.

use std::sync::Arc;
use std::time::Duration;

use rflysim_proto::scene::StatusDatagram;
use tokio::sync::watch;

use ros_common::net::{FilteredUdp, SenderFilter, SenderGate};
use ros_common::stats::{RateLimitedLog, StreamStats};

/// What reads the status port's datagrams.
pub trait StatusHandler: Send {
    /// One datagram that decoded.
    fn on_datagram(&mut self, d: &StatusDatagram);
    /// Every [`TICK`]: what the handler does when nothing comes (asking again).
    fn tick(&mut self) {}
}

/// How often the handlers' `tick` runs.
pub const TICK: Duration = Duration::from_secs(2);

/// The longest the port is read after the stop (for the stop's neutrals).
const READ_AFTER_STOP: Duration = ros_common::command::SHUTDOWN_BUDGET.saturating_add(Duration::from_millis(200));

/// Where the datagrams come in and who may send them.
#[derive(Debug, Clone)]
pub struct StatusInput {
    pub port: u16,
    pub multicast: bool,
    pub senders: SenderFilter,
    /// Datagrams taken and refused, by reason.
    pub stats: Arc<StreamStats>,
    /// After the stop, the port is read until this turns true (the gimbals'
    /// neutrals at the stop await their echo), for at most [`READ_AFTER_STOP`];
    /// `None`: not at all.
    pub read_after_stop: Option<watch::Receiver<bool>>,
}

/// Until `settled` turns true (or its sender is gone); never without one.
async fn settled(settled: &mut Option<watch::Receiver<bool>>) {
    match settled {
        Some(s) => {
            let _ = s.wait_for(|done| *done).await;
        }
        None => std::future::pending().await,
    }
}

/// Reads the port until the stop (and after it, as `read_after_stop` says),
/// handing every datagram that decodes to every handler; one that does not
/// is counted and logged (limited in rate).
pub async fn run(
    mut handlers: Vec<Box<dyn StatusHandler>>,
    mut input: StatusInput,
    logger: String,
    mut shutdown: watch::Receiver<bool>,
) {
    let gate = SenderGate::new(input.senders.clone(), input.stats.clone(), &logger);
    let group = input.multicast.then_some(rflysim_proto::ports::MULTICAST_GROUP);
    let bound = ros_common::net::udp_receiver_with_group(
        input.port,
        1 << 20,
        group,
        &input.senders,
        &logger,
        "RflySim3D status",
    )
    .and_then(|(sock, _)| FilteredUdp::new(sock, gate));
    let mut rx = match bound {
        Ok(r) => r,
        Err(e) => return r2r::log_error!(&logger, "no RflySim3D status: cannot bind UDP {}: {e}", input.port),
    };
    r2r::log_info!(&logger, "RflySim3D status (gimbals, scene) from UDP {}", input.port);
    let mut warn = RateLimitedLog::new(Duration::from_secs(5));
    let mut buf = [0u8; 2048];
    let mut tick = tokio::time::interval(TICK);
    let mut read_until: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            n = rx.recv(&mut buf) => match StatusDatagram::decode(&buf[..n]) {
                Ok(d) => {
                    input.stats.published(n);
                    for h in &mut handlers {
                        h.on_datagram(&d);
                    }
                }
                Err(e) => {
                    input.stats.drop_frame(e.reason());
                    warn.warn_dropped(&logger, "status port", format_args!("datagram of {n} bytes"), &e);
                }
            },
            _ = tick.tick() => {
                for h in &mut handlers {
                    h.tick();
                }
            }
            _ = shutdown.changed(), if read_until.is_none() => {
                if input.read_after_stop.as_ref().is_none_or(|s| *s.borrow()) {
                    break;
                }
                read_until = Some(tokio::time::Instant::now() + READ_AFTER_STOP);
            }
            _ = settled(&mut input.read_after_stop), if read_until.is_some() => break,
            _ = tokio::time::sleep_until(read_until.unwrap_or_else(tokio::time::Instant::now)), if read_until.is_some() => break,
        }
    }
}
