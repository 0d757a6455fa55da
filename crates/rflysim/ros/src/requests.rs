//! `VisionSensorReq`s to RflySim3D: sent for every sensor until its data
//! flows, and again when it stops (e.g. after RflySim3D restarted).

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use rflysim_proto::config::SensorConfig;
use rflysim_proto::request::{RequestForm, VisionSensorReq, REQUEST_BASE_PORT, REQUEST_CHECKSUM};

use ros_common::sim_host::{SimEndpoint, SimHost};
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

/// The sensor as RflySim3D at `sim_host` must be asked for it. A receiver of
/// 127.0.0.1 (or 0.0.0.0) in Config.json means "this host" to the bridge; to
/// a simulator on another host it would mean itself, and the data would
/// never leave that host. So `this_host` (the bridge's address towards
/// `sim_host`) goes in instead; any other receiver address is kept as written.
pub fn as_asked_of(cfg: &SensorConfig, sim_ip: Ipv4Addr, this_host: Ipv4Addr) -> SensorConfig {
    if sim_ip.is_loopback() || !cfg.receiver_ip().is_loopback() || this_host.is_loopback() {
        cfg.clone()
    } else {
        cfg.with_receiver_ip(this_host)
    }
}

/// Sends each sensor's request once a second while it has published nothing
/// for `quiet` (or ever), to the address `sim_host` has now: the requests
/// are made again for a new one (this host's address towards it may differ).
pub async fn run_requests(
    sensors: Vec<(SensorConfig, Arc<StreamStats>)>,
    sim_host: SimHost,
    window_id: u16,
    logger: String,
    mut shutdown: watch::Receiver<bool>,
) {
    let to = SimEndpoint::new(&sim_host, request_port(window_id));
    let sock = match ros_common::net::udp_sender().and_then(tokio::net::UdpSocket::from_std) {
        Ok(s) => s,
        Err(e) => return r2r::log_error!(&logger, "cannot send sensor requests: {e}"),
    };
    let quiet = 3.0;
    let mut asked_of = None;
    let mut requests = Vec::new();
    let mut announced = vec![false; sensors.len()];
    loop {
        let sim_ip = sim_host.ip();
        if asked_of != Some(sim_ip) {
            let this_host = ros_common::net::local_ip_towards(sim_ip);
            requests = sensors
                .iter()
                .map(|(cfg, _)| as_asked_of(cfg, sim_ip, this_host))
                .collect();
            announced.fill(false);
            asked_of = Some(sim_ip);
        }
        let now = wall_now();
        for (i, (cfg, (_, stats))) in requests.iter().zip(&sensors).enumerate() {
            if stats.last_frame().is_some_and(|t| now - t < quiet) {
                continue;
            }
            if !announced[i] {
                r2r::log_info!(
                    &logger,
                    "requesting sensor {} (TypeID {}) from RflySim3D at {to}, to be sent to {}:{}",
                    cfg.seq_id,
                    cfg.type_id,
                    cfg.receiver_ip(),
                    cfg.udp_port()
                );
                announced[i] = true;
            }
            let _ = sock.send_to(&request_bytes(cfg), to.addr()).await;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = shutdown.changed() => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rflysim_proto::config::{parse_config, AngleUnit};

    fn camera_sent_to(ip: &str) -> SensorConfig {
        let octets = ip.replace('.', ", ");
        let json =
            format!(r#"{{"VisionSensors": [{{"SeqID": 3, "TypeID": 1, "SendProtocol": [2, {octets}, 9100, 0, 0]}}]}}"#);
        parse_config(&json, AngleUnit::Auto).unwrap().remove(0)
    }

    #[test]
    fn a_remote_simulator_is_asked_to_send_to_this_hosts_address_not_its_own_loopback() {
        let (sim, here) = (Ipv4Addr::new(10, 1, 0, 2), Ipv4Addr::new(10, 1, 0, 1));
        for written in ["127.0.0.1", "0.0.0.0"] {
            let asked = as_asked_of(&camera_sent_to(written), sim, here);
            assert_eq!((asked.receiver_ip(), asked.udp_port()), (here, 9100), "{written}");
        }
        let elsewhere = as_asked_of(&camera_sent_to("10.1.0.9"), sim, here);
        assert_eq!(
            elsewhere.receiver_ip(),
            Ipv4Addr::new(10, 1, 0, 9),
            "an explicit receiver is kept"
        );
    }

    #[test]
    fn a_simulator_on_this_host_gets_the_config_as_written() {
        let cfg = camera_sent_to("127.0.0.1");
        assert_eq!(as_asked_of(&cfg, Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST), cfg);
        // No route towards sim_ip: loopback is all the bridge knows of itself.
        assert_eq!(as_asked_of(&cfg, Ipv4Addr::new(10, 1, 0, 2), Ipv4Addr::LOCALHOST), cfg);
    }
}
