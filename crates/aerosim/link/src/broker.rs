//! A Kafka-protocol broker for the tests, the demo and the benchmark: tansu
//! with its in-memory store, on a port of our choice. It creates no topics
//! by itself; [`crate::Link`] does.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where the broker's executable is: `AEROSIM_BROKER_BIN`, else `tansu` on
/// the `PATH` (scripts/setup.sh builds it into `.cache/tansu/bin`).
pub fn broker_bin() -> PathBuf {
    std::env::var_os("AEROSIM_BROKER_BIN").map_or_else(|| PathBuf::from("tansu"), PathBuf::from)
}

/// A free TCP port on the loopback interface, now, and never one this
/// process was given before (two brokers started at once must not share one).
pub fn free_port() -> std::io::Result<u16> {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let port = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))?
            .local_addr()?
            .port();
        if GIVEN.lock().unwrap_or_else(|e| e.into_inner()).insert(port) {
            return Ok(port);
        }
    }
}

/// Whether process `pid` holds the socket listening on TCP `port` (Linux:
/// `/proc`). Connecting alone cannot tell our broker from another's.
fn listens_on(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    let listening = format!(":{port:04X}");
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 9 && f[1].ends_with(&listening) && f[3] == "0A")
        .map(|f| format!("socket:[{}]", f[9]))
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
    })
}

/// A running broker, stopped when dropped.
#[derive(Debug)]
pub struct Broker {
    child: Child,
    pub port: u16,
}

impl Broker {
    /// Starts the broker on `127.0.0.1:port` and waits until it listens
    /// there itself (at most 10 s).
    pub fn start(port: u16) -> std::io::Result<Self> {
        Self::start_advertising(port, port)
    }

    /// Starts the broker on a free port. A port looked up free can be taken
    /// before the broker binds it (seen: by another test's socket bound to
    /// port 0): then another is tried.
    pub fn start_on_free_port() -> std::io::Result<Self> {
        Self::start_on_free_port_advertising(None)
    }

    /// The same, telling clients to connect to `advertised_port` (a proxy's).
    pub fn start_on_free_port_advertising(advertised_port: Option<u16>) -> std::io::Result<Self> {
        let mut tries = 0;
        loop {
            let port = free_port()?;
            match Self::start_advertising(port, advertised_port.unwrap_or(port)) {
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 4 => tries += 1,
                started => return started,
            }
        }
    }

    /// The same, telling clients to connect to `advertised_port` (a proxy's)
    /// for everything after their first request.
    pub fn start_advertising(port: u16, advertised_port: u16) -> std::io::Result<Self> {
        let url = format!("tcp://127.0.0.1:{port}");
        let advertised = format!("tcp://127.0.0.1:{advertised_port}");
        let child = Command::new(broker_bin())
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &advertised,
            ])
            .args(["--storage-engine", "memory://tansu/"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", broker_bin().display())))?;
        let mut broker = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        while TcpStream::connect_timeout(&addr.into(), Duration::from_millis(100)).is_err()
            || !listens_on(broker.child.id(), port)
        {
            if let Some(status) = broker.child.try_wait()? {
                let taken = TcpStream::connect_timeout(&addr.into(), Duration::from_millis(100)).is_ok();
                let (kind, why) = if taken {
                    (std::io::ErrorKind::AddrInUse, ": something else listens on its port")
                } else {
                    (std::io::ErrorKind::Other, "")
                };
                return Err(std::io::Error::new(
                    kind,
                    format!("the broker on port {port} exited at start ({status}){why}"),
                ));
            }
            if Instant::now() > deadline {
                return Err(std::io::Error::other("the broker did not listen within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(broker)
    }

    /// Its process id (benchmarks read its CPU time).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `127.0.0.1:<port>`, as `bootstrap_servers` takes it.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Stops it (its memory store goes with it).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
    }
}
