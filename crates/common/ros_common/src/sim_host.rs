//! The simulator's host as a bridge's `sim_host` names it: an IPv4 address,
//! or a host name (a DHCP network names the simulator PC, and gives it
//! another address on another day). A name is looked up at start, where one
//! that does not resolve stops the bridge, and again while the simulator is
//! silent ([`follow`]); what sends to the simulator and the sender filter read
//! the address found last, a load of an atomic. No lookup is ever made per
//! datagram.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, ToSocketAddrs};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::stats::StreamStats;

/// How long nothing may come from the simulator before its name is looked up again.
pub const SILENCE: Duration = Duration::from_secs(3);
/// While it stays silent, the name is looked up again this often.
pub const LOOKUP_EVERY: Duration = Duration::from_secs(5);

/// `host`'s IPv4 address: itself when it is one, else the first IPv4 address
/// the system's resolver (`/etc/hosts`, DNS, mDNS) gives for the name.
pub fn lookup(host: &str) -> Result<Ipv4Addr, String> {
    if let Ok(ip) = host.parse() {
        return Ok(ip);
    }
    if host.is_empty() {
        return Err("is empty: give the simulator's IPv4 address or host name".into());
    }
    let found = (host, 0)
        .to_socket_addrs()
        .map_err(|e| format!("host name {host:?} does not resolve ({e})"))?;
    found
        .into_iter()
        .find_map(|a| match a {
            SocketAddr::V4(a) => Some(*a.ip()),
            SocketAddr::V6(_) => None,
        })
        .ok_or_else(|| format!("host name {host:?} has no IPv4 address (the simulators speak IPv4)"))
}

/// The simulator's host: the name given and the address it stands for now.
/// Clones share the address, so that a new one found reaches every user.
#[derive(Debug, Clone)]
pub struct SimHost {
    name: Arc<str>,
    ip: Arc<AtomicU32>,
}

impl SimHost {
    /// Looks `name` up (see [`lookup`]).
    pub fn resolve(name: &str) -> Result<Self, String> {
        let ip = lookup(name)?;
        Ok(Self {
            name: name.into(),
            ip: Arc::new(AtomicU32::new(ip.into())),
        })
    }

    /// The address found last.
    pub fn ip(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.ip.load(Ordering::Relaxed))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it was given as a name: an address stands for itself.
    pub fn is_name(&self) -> bool {
        self.name.parse::<Ipv4Addr>().is_err()
    }

    /// The name looked up again: the address it had when the new one
    /// differs. A failed lookup keeps the address (the resolver may be
    /// down as long as the simulator is).
    pub fn refresh(&self) -> Result<Option<Ipv4Addr>, String> {
        let ip = lookup(&self.name)?;
        let before = Ipv4Addr::from(self.ip.swap(ip.into(), Ordering::Relaxed));
        Ok((before != ip).then_some(before))
    }

    /// As if its name had been found at `ip`.
    #[cfg(test)]
    pub(crate) fn moved_to(&self, ip: Ipv4Addr) {
        self.ip.store(ip.into(), Ordering::Relaxed);
    }

    /// For log lines: `rflysim-pc.lan (192.168.1.10)`, an address alone.
    pub fn describe(&self) -> String {
        if self.is_name() {
            format!("{} ({})", self.name, self.ip())
        } else {
            self.ip().to_string()
        }
    }
}

impl PartialEq for SimHost {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.ip() == other.ip()
    }
}

impl Eq for SimHost {}

impl From<Ipv4Addr> for SimHost {
    fn from(ip: Ipv4Addr) -> Self {
        Self {
            name: ip.to_string().into(),
            ip: Arc::new(AtomicU32::new(ip.into())),
        }
    }
}

/// A port of the simulator's host, at the address the host has now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimEndpoint {
    pub host: SimHost,
    pub port: u16,
}

impl SimEndpoint {
    pub fn new(host: &SimHost, port: u16) -> Self {
        Self {
            host: host.clone(),
            port,
        }
    }

    pub fn addr(&self) -> SocketAddrV4 {
        SocketAddrV4::new(self.host.ip(), self.port)
    }
}

impl From<SocketAddrV4> for SimEndpoint {
    fn from(a: SocketAddrV4) -> Self {
        Self {
            host: SimHost::from(*a.ip()),
            port: a.port(),
        }
    }
}

impl std::fmt::Display for SimEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.is_name() {
            write!(f, "{}:{} ({})", self.host.name(), self.port, self.addr())
        } else {
            write!(f, "{}", self.addr())
        }
    }
}

/// Whether none of `streams` has had data for [`SILENCE`] at wall time `now`.
fn silent(streams: &[Arc<StreamStats>], now: f64) -> bool {
    let last = streams
        .iter()
        .filter_map(|s| s.last_frame())
        .fold(f64::NEG_INFINITY, f64::max);
    now - last > SILENCE.as_secs_f64()
}

/// Looks a named `host` up again every [`LOOKUP_EVERY`] while none of
/// `streams` (what comes from the simulator) has had data for [`SILENCE`]:
/// the simulator stopped, or its PC came back under another address, whose
/// datagrams the sender filter drops until then. Logs each new address. An
/// address given as such is never looked up; the lookups run on a blocking
/// thread, away from every data path.
pub async fn follow(host: SimHost, streams: Vec<Arc<StreamStats>>, logger: String, mut stop: watch::Receiver<bool>) {
    if !host.is_name() || streams.is_empty() {
        return;
    }
    let mut failing = false;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(LOOKUP_EVERY) => {}
            _ = stop.changed() => return,
        }
        if !silent(&streams, crate::time::wall_now()) {
            continue;
        }
        let h = host.clone();
        let Ok(looked_up) = tokio::task::spawn_blocking(move || h.refresh()).await else {
            continue;
        };
        match looked_up {
            Ok(moved) => {
                if let Some(before) = moved {
                    r2r::log_warn!(
                        &logger,
                        "sim_host {} now resolves to {} (was {before}): requests go there, and it may send",
                        host.name(),
                        host.ip()
                    );
                }
                failing = false;
            }
            Err(why) if !failing => {
                r2r::log_warn!(&logger, "sim_host: {why}; {} kept", host.ip());
                failing = true;
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_itself_and_a_name_is_looked_up() {
        assert_eq!(lookup("192.168.1.10"), Ok(Ipv4Addr::new(192, 168, 1, 10)));
        assert_eq!(lookup("localhost"), Ok(Ipv4Addr::LOCALHOST));
        let host = SimHost::resolve("localhost").unwrap();
        assert!(host.is_name() && host.ip().is_loopback());
        assert_eq!(host.describe(), "localhost (127.0.0.1)");
        assert_eq!(host.refresh(), Ok(None), "the same address: nothing moved");
        let plain = SimHost::resolve("10.0.0.2").unwrap();
        assert!(!plain.is_name() && plain.describe() == "10.0.0.2");
        assert_eq!(
            SimEndpoint::new(&host, 20010).to_string(),
            "localhost:20010 (127.0.0.1:20010)"
        );
        assert_eq!(SimEndpoint::new(&plain, 20010).to_string(), "10.0.0.2:20010");
    }

    #[test]
    fn a_name_that_does_not_resolve_is_an_error_that_names_it() {
        // `.invalid` never resolves (RFC 6761).
        let why = SimHost::resolve("no-such-simulator.invalid").unwrap_err();
        assert!(why.contains("\"no-such-simulator.invalid\" does not resolve"), "{why}");
        assert!(lookup("").unwrap_err().contains("is empty"));
    }

    #[test]
    fn clones_share_the_address_found_last() {
        let host = SimHost::resolve("localhost").unwrap();
        let copy = host.clone();
        host.moved_to(Ipv4Addr::new(10, 0, 0, 9));
        assert_eq!(copy.ip(), Ipv4Addr::new(10, 0, 0, 9));
        assert_eq!(
            copy.refresh(),
            Ok(Some(Ipv4Addr::new(10, 0, 0, 9))),
            "back to what the name says"
        );
        assert_eq!(host.ip(), Ipv4Addr::LOCALHOST);
    }

    #[test]
    fn silence_is_no_stream_having_data_lately() {
        let (a, b) = (Arc::new(StreamStats::default()), Arc::new(StreamStats::default()));
        let streams = vec![a.clone(), b.clone()];
        let now = crate::time::wall_now();
        assert!(silent(&streams, now), "nothing ever came");
        b.published(10);
        assert!(!silent(&streams, now + 1.0));
        assert!(silent(&streams, now + SILENCE.as_secs_f64() + 1.0));
    }
}
