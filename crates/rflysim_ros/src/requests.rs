//! `VisionSensorReq`s to RflySim3D: sent for every sensor until its data
//! flows, and again when it stops (e.g. after RflySim3D restarted).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use rflysim_proto::config::SensorConfig;
use rflysim_proto::request::{RequestForm, VisionSensorReq, REQUEST_BASE_PORT, REQUEST_CHECKSUM};

use ros_common::stats::StreamStats;
use ros_common::time::wall_now;

/// The request for one sensor, in the form its config calls for (8
/// `otherParams`: the legacy 92-byte form; else 144 bytes).
pub fn request_bytes(cfg: &SensorConfig) -> Vec<u8> {
    let form = if cfg.legacy_other_params {
        RequestForm::Legacy92
    } else {
        RequestForm::Current144
    };
    VisionSensorReq::from(cfg).encode(form, REQUEST_CHECKSUM)
}

pub fn request_port(window_id: u16) -> u16 {
    REQUEST_BASE_PORT.saturating_add(window_id)
}

/// Sends each sensor's request once a second while it has published nothing
/// for `quiet` (or ever).
pub async fn run_requests(
    sensors: Vec<(SensorConfig, Arc<StreamStats>)>,
    sim_ip: Ipv4Addr,
    window_id: u16,
    logger: String,
    mut shutdown: watch::Receiver<bool>,
) {
    let to = SocketAddrV4::new(sim_ip, request_port(window_id));
    let sock = match ros_common::net::udp_sender().and_then(tokio::net::UdpSocket::from_std) {
        Ok(s) => s,
        Err(e) => return r2r::log_error!(&logger, "cannot send sensor requests: {e}"),
    };
    let quiet = 3.0;
    let mut announced = vec![false; sensors.len()];
    loop {
        let now = wall_now();
        for (i, (cfg, stats)) in sensors.iter().enumerate() {
            if stats.last_frame().is_some_and(|t| now - t < quiet) {
                continue;
            }
            if !announced[i] {
                r2r::log_info!(
                    &logger,
                    "requesting sensor {} (TypeID {}) from RflySim3D at {to}",
                    cfg.seq_id,
                    cfg.type_id
                );
                announced[i] = true;
            }
            let _ = sock.send_to(&request_bytes(cfg), to).await;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = shutdown.changed() => break,
        }
    }
}
