//! A UDP relay for the tests' two-host rig: it stands in the network path
//! between a simulator and the bridge and drops, duplicates, reorders and
//! delays a set share of datagrams, drawn from a seed (the kernel the tests
//! run on has no netem). One thread per port: datagrams to `LISTEN:port` go
//! on to `TO:port`, from this host's address towards `TO`.
//!
//! udp_relay --listen 127.0.0.1 --to 10.77.0.1 --ports 10001,10002
//!           [--loss P] [--duplicate P] [--reorder P] [--delay-ms MS] [--seed N] [--log FILE]
//!
//! `--log` gets a line per datagram it dropped, duplicated or held back
//! (`drop|duplicate|reorder <port> <first 32 bytes, hex>`), for a test to
//! tell which frames were hit; stdout gets each port's totals every second.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, Default)]
struct Shares {
    loss: f64,
    duplicate: f64,
    reorder: f64,
}

#[derive(Debug, Clone)]
struct Config {
    listen: Ipv4Addr,
    to: Ipv4Addr,
    ports: Vec<u16>,
    shares: Shares,
    delay: Duration,
    seed: u64,
    log: Option<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: udp_relay --listen IP --to IP --ports P,P,.. [--loss P] [--duplicate P] [--reorder P] \
         [--delay-ms MS] [--seed N] [--log FILE]"
    );
    std::process::exit(2)
}

fn share(v: &str) -> f64 {
    match v.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => p,
        _ => usage(),
    }
}

fn parse(args: &[String]) -> Config {
    let mut c = Config {
        listen: Ipv4Addr::LOCALHOST,
        to: Ipv4Addr::LOCALHOST,
        ports: Vec::new(),
        shares: Shares::default(),
        delay: Duration::ZERO,
        seed: 1,
        log: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().map(String::as_str).unwrap_or_else(|| usage());
        match flag.as_str() {
            "--listen" => c.listen = value.parse().unwrap_or_else(|_| usage()),
            "--to" => c.to = value.parse().unwrap_or_else(|_| usage()),
            "--ports" => {
                c.ports = value
                    .split(',')
                    .map(|p| p.parse().unwrap_or_else(|_| usage()))
                    .collect()
            }
            "--loss" => c.shares.loss = share(value),
            "--duplicate" => c.shares.duplicate = share(value),
            "--reorder" => c.shares.reorder = share(value),
            "--delay-ms" => c.delay = Duration::from_secs_f64(value.parse::<f64>().unwrap_or_else(|_| usage()) / 1e3),
            "--seed" => c.seed = value.parse().unwrap_or_else(|_| usage()),
            "--log" => c.log = Some(value.to_string()),
            _ => usage(),
        }
    }
    if c.ports.is_empty() {
        usage();
    }
    c
}

/// xorshift64*: the same seed, the same fates.
struct Fates(u64);

impl Fates {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[derive(Debug, Default)]
struct Totals {
    received: u64,
    forwarded: u64,
    dropped: u64,
    duplicated: u64,
    reordered: u64,
}

type Log = Arc<Mutex<Option<File>>>;

fn note(log: &Log, what: &str, port: u16, datagram: &[u8]) {
    if let Some(f) = log.lock().unwrap().as_mut() {
        let hex: String = datagram.iter().take(32).map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(f, "{what} {port} {hex}");
    }
}

/// One port's relay: receives, decides each datagram's fate, sends what is
/// due. Never returns but on a socket error.
fn relay(c: &Config, port: u16, log: &Log, totals: &Mutex<Totals>) -> io::Result<()> {
    let rx = UdpSocket::bind(SocketAddrV4::new(c.listen, port))?;
    let s = socket2::SockRef::from(&rx);
    let _ = s.set_recv_buffer_size(32 << 20);
    let tx = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    let _ = socket2::SockRef::from(&tx).set_send_buffer_size(8 << 20);
    let dest = SocketAddrV4::new(c.to, port);
    let mut fates = Fates(c.seed ^ (u64::from(port) << 32) | 1);
    let mut held_back: Option<Vec<u8>> = None;
    let mut due: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut buf = vec![0u8; 65536];
    loop {
        let wait = due.front().map_or(Duration::from_millis(100), |(at, _)| {
            at.saturating_duration_since(Instant::now())
        });
        rx.set_read_timeout(Some(wait.max(Duration::from_micros(100))))?;
        match rx.recv(&mut buf) {
            Ok(n) => {
                let d = &buf[..n];
                let mut t = totals.lock().unwrap();
                t.received += 1;
                let r = fates.uniform();
                let sh = c.shares;
                let mut out: Vec<Vec<u8>> = Vec::with_capacity(2);
                if r < sh.loss {
                    t.dropped += 1;
                    note(log, "drop", port, d);
                } else if r < sh.loss + sh.duplicate {
                    t.duplicated += 1;
                    note(log, "duplicate", port, d);
                    out.push(d.to_vec());
                    out.push(d.to_vec());
                } else if r < sh.loss + sh.duplicate + sh.reorder && held_back.is_none() {
                    t.reordered += 1;
                    note(log, "reorder", port, d);
                    held_back = Some(d.to_vec());
                } else {
                    out.push(d.to_vec());
                    // One held back goes out after the next that passes.
                    out.extend(held_back.take());
                }
                let at = Instant::now() + c.delay;
                due.extend(out.into_iter().map(|d| (at, d)));
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
        let now = Instant::now();
        while due.front().is_some_and(|(at, _)| *at <= now) {
            let (_, d) = due.pop_front().expect("checked");
            if tx.send_to(&d, dest).is_ok() {
                totals.lock().unwrap().forwarded += 1;
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let c = Arc::new(parse(&args));
    let log: Log = Arc::new(Mutex::new(c.log.as_ref().map(|p| {
        File::create(p).unwrap_or_else(|e| {
            eprintln!("udp_relay: {p}: {e}");
            std::process::exit(1)
        })
    })));
    let mut all = Vec::new();
    for &port in &c.ports {
        let totals = Arc::new(Mutex::new(Totals::default()));
        all.push((port, totals.clone()));
        let (c, log) = (c.clone(), log.clone());
        std::thread::spawn(move || {
            if let Err(e) = relay(&c, port, &log, &totals) {
                eprintln!("udp_relay: port {port}: {e}");
                std::process::exit(1);
            }
        });
    }
    println!(
        "udp_relay: {}:{:?} -> {}, loss {} duplicate {} reorder {} delay {:?} seed {}",
        c.listen, c.ports, c.to, c.shares.loss, c.shares.duplicate, c.shares.reorder, c.delay, c.seed
    );
    loop {
        std::thread::sleep(Duration::from_secs(1));
        for (port, totals) in &all {
            let t = totals.lock().unwrap();
            println!(
                "port {port}: received {} forwarded {} dropped {} duplicated {} reordered {}",
                t.received, t.forwarded, t.dropped, t.duplicated, t.reordered
            );
        }
        let _ = io::stdout().flush();
        if let Some(f) = log.lock().unwrap().as_mut() {
            let _ = f.flush();
        }
    }
}
