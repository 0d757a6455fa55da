//! A second host for the benchmarks: a network namespace joined to this one
//! by a veth pair with an MTU of 1500, as a simulator PC on a wired LAN is
//! (the tests' rig is tests/netns_rig.py). A datagram from it larger than
//! the MTU crosses as IP fragments. Needs root (CAP_NET_ADMIN and
//! CAP_SYS_ADMIN) and iproute2's `ip`.

use std::net::Ipv4Addr;
use std::process::Command;

/// The link's MTU: Ethernet's.
pub const MTU: u32 = 1500;

fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("`ip` (iproute2): {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The simulator's host: `sim_ip` in its own namespace, `this_host` here,
/// on a 10.77.X.0/24 nothing else of this machine uses. Removed (with its
/// veth pair) when dropped.
#[derive(Debug)]
pub struct LinkedHost {
    namespace: String,
    pub this_host: Ipv4Addr,
    pub sim_ip: Ipv4Addr,
}

impl LinkedHost {
    /// Makes the namespace and the link, or says why it cannot (not root, no iproute2).
    pub fn create() -> Result<Self, String> {
        let tag = std::process::id() % 100_000;
        let namespace = format!("rflysim_bench{tag}");
        let (here, there) = (format!("rbh{tag}"), format!("rbs{tag}"));
        ip(&["netns", "add", &namespace])?;
        // From here on, dropping it removes the namespace and the pair with it.
        let mut host = LinkedHost {
            namespace,
            this_host: Ipv4Addr::UNSPECIFIED,
            sim_ip: Ipv4Addr::UNSPECIFIED,
        };
        let subnet = unused_subnet(tag)?;
        host.this_host = Ipv4Addr::new(10, 77, subnet, 1);
        host.sim_ip = Ipv4Addr::new(10, 77, subnet, 2);
        let mtu = MTU.to_string();
        let ns = host.namespace.as_str();
        let (here_addr, there_addr) = (format!("{}/24", host.this_host), format!("{}/24", host.sim_ip));
        ip(&[
            "link", "add", &here, "mtu", &mtu, "type", "veth", "peer", "name", &there, "mtu", &mtu, "netns", ns,
        ])?;
        ip(&["addr", "add", &here_addr, "dev", &here])?;
        ip(&["link", "set", &here, "up"])?;
        ip(&["-n", ns, "addr", "add", &there_addr, "dev", &there])?;
        ip(&["-n", ns, "link", "set", &there, "up"])?;
        ip(&["-n", ns, "link", "set", "lo", "up"])?;
        Ok(host)
    }

    /// The command prefix that runs a program on that host.
    pub fn prefix(&self) -> Vec<String> {
        ["ip", "netns", "exec", &self.namespace].map(String::from).to_vec()
    }
}

impl Drop for LinkedHost {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.namespace]);
    }
}

/// A 10.77.X.0/24 (X from `tag`) that no address or route of this host uses.
fn unused_subnet(tag: u32) -> Result<u8, String> {
    let taken = ip(&["-4", "-o", "addr", "show"])? + &ip(&["-4", "route", "show"])?;
    (0..250)
        .map(|i| ((tag + i) % 250) as u8)
        .find(|x| !taken.contains(&format!("10.77.{x}.")))
        .ok_or_else(|| "every 10.77.X.0/24 is in use".into())
}

const RMEM_MAX: &str = "/proc/sys/net/core/rmem_max";

/// The kernel's cap on a socket's receive buffer (`net.core.rmem_max`):
/// Linux grants twice what a socket asks for, up to twice this.
pub fn rmem_max() -> u64 {
    std::fs::read_to_string(RMEM_MAX)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// `net.core.rmem_max` (machine-wide) set for a while, put back when dropped.
#[derive(Debug)]
pub struct RmemMax {
    was: u64,
}

impl RmemMax {
    pub fn set(bytes: u64) -> Result<Self, String> {
        let was = rmem_max();
        std::fs::write(RMEM_MAX, bytes.to_string()).map_err(|e| format!("net.core.rmem_max: {e}"))?;
        Ok(RmemMax { was })
    }
}

impl Drop for RmemMax {
    fn drop(&mut self) {
        let _ = std::fs::write(RMEM_MAX, self.was.to_string());
    }
}
