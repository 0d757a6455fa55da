//! What receiving a frame's datagrams costs on its own: the floor under a
//! bridge's CPU per UDP frame, which the end-to-end reference (an r2r
//! program publishing a ready message) does not pay. A child process sends
//! frames of 60 000-byte datagrams at a rate; this process takes them into a frame-sized buffer, one datagram after the
//! other, and its CPU time is divided by the frames received. Three ways to
//! receive: a tokio socket on a runtime of two workers (`recv_buf_from`,
//! how the UDP sensors once received), a blocking `recv` (how they
//! do since, `ros_common::net::BlockingUdp`) and `recvmmsg` of up to 32
//! datagrams a call. Next to them, in the same run,
//! the reference: a `memcpy` of the same bytes, from memory not in cache,
//! into the frame buffer.
//!
//! `cargo bench -p ros_common --bench udp_receive`; prints a table, asserts
//! nothing. `RFLYSIM_BENCH_SECONDS` sets each window (default 4).

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use bench_support::StoppedOnDrop;

const DATAGRAM: usize = 60_000;
const BATCH: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Receive {
    Tokio,
    Blocking,
    Recvmmsg,
}

fn thread_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Sends frames of `per_frame` datagrams at `hz` to `to` for `seconds`, in
/// a child process: the receiving process's CPU time is then the receiving
/// alone.
fn sender(to: SocketAddr, per_frame: usize, hz: f64, seconds: f64) {
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let datagram = vec![0x5A; DATAGRAM];
    let start = Instant::now();
    let mut frames = 0u64;
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..per_frame {
            let _ = sock.send_to(&datagram, to);
        }
        frames += 1;
        let next = start + Duration::from_secs_f64(frames as f64 / hz);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// The CPU time of this process, every thread: the clock the end-to-end
/// benches read for a bridge.
fn process_cpu() -> Duration {
    Duration::from_secs_f64(bench_support::cpu_seconds(std::process::id()))
}

/// Datagrams received, and the CPU time when the warm-up ended.
#[derive(Debug, Clone, Copy)]
struct Tally {
    warm_until: Instant,
    cpu_at_warm: Option<Duration>,
    datagrams: u64,
}

impl Tally {
    fn add(&mut self, datagrams: u64) {
        if Instant::now() >= self.warm_until {
            match self.cpu_at_warm {
                None => self.cpu_at_warm = Some(process_cpu()),
                Some(_) => self.datagrams += datagrams,
            }
        }
    }
}

/// Receives for `window` after a second of warm-up; CPU ms per frame.
fn receive(how: Receive, per_frame: usize, hz: f64, window: Duration) -> f64 {
    let (sock, _) = ros_common::net::udp_receiver(Ipv4Addr::LOCALHOST, 0, 4 << 20).unwrap();
    let to = sock.local_addr().unwrap();
    let seconds = (window + Duration::from_secs(5)).as_secs_f64().to_string();
    let _send = StoppedOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--send",
                &to.to_string(),
                &per_frame.to_string(),
                &hz.to_string(),
                &seconds,
            ])
            .spawn()
            .unwrap(),
    );
    let frame_bytes = per_frame * DATAGRAM;
    let warm_until = Instant::now() + Duration::from_secs(1);
    let end = warm_until + window;
    let mut tally = Tally {
        warm_until,
        cpu_at_warm: None,
        datagrams: 0,
    };
    // Room for a frame, or a whole batch of `recvmmsg`, and one datagram more.
    let mut frame = vec![0u8; frame_bytes.max(BATCH * DATAGRAM) + DATAGRAM];
    let mut at = 0usize;
    match how {
        Receive::Tokio => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let task = runtime.spawn(async move {
                let sock = tokio::net::UdpSocket::from_std(sock).unwrap();
                let mut buf: Vec<u8> = Vec::with_capacity(frame_bytes + DATAGRAM);
                // One timer for the whole window, as the bridges' loops keep
                // theirs: a fresh one per datagram would be measured too.
                let done = tokio::time::sleep_until(end.into());
                tokio::pin!(done);
                loop {
                    if buf.len() + DATAGRAM > frame_bytes {
                        buf.clear();
                    }
                    tokio::select! {
                        r = sock.recv_buf_from(&mut buf) => if r.is_ok() { tally.add(1) },
                        _ = &mut done => break,
                    }
                }
                tally
            });
            tally = runtime.block_on(task).unwrap();
        }
        Receive::Blocking => {
            sock.set_nonblocking(false).unwrap();
            sock.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
            while Instant::now() < end {
                if at + DATAGRAM > frame_bytes {
                    at = 0;
                }
                if let Ok(n) = sock.recv(&mut frame[at..at + DATAGRAM]) {
                    at += n;
                    tally.add(1);
                }
            }
        }
        Receive::Recvmmsg => {
            sock.set_nonblocking(false).unwrap();
            sock.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
            let fd = sock.as_raw_fd();
            while Instant::now() < end {
                if at + BATCH * DATAGRAM > frame.len() {
                    at = 0;
                }
                // Each datagram of the batch where the one before it ends.
                let base = frame[at..].as_mut_ptr();
                let mut iov: Vec<libc::iovec> = (0..BATCH)
                    .map(|i| libc::iovec {
                        // SAFETY: `at + BATCH * DATAGRAM` is within `frame` (checked above).
                        iov_base: unsafe { base.add(i * DATAGRAM) }.cast(),
                        iov_len: DATAGRAM,
                    })
                    .collect();
                let mut headers: Vec<libc::mmsghdr> = iov
                    .iter_mut()
                    .map(|v| {
                        // SAFETY: an all-zero mmsghdr is valid; its iovec is set below.
                        let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                        h.msg_hdr.msg_iov = v;
                        h.msg_hdr.msg_iovlen = 1;
                        h
                    })
                    .collect();
                // SAFETY: `headers` and the iovecs they point to outlive the call.
                let n = unsafe {
                    libc::recvmmsg(
                        fd,
                        headers.as_mut_ptr(),
                        BATCH as u32,
                        libc::MSG_WAITFORONE,
                        std::ptr::null_mut(),
                    )
                };
                if n > 0 {
                    at += headers[..n as usize].iter().map(|h| h.msg_len as usize).sum::<usize>();
                    tally.add(n as u64);
                }
            }
        }
    }
    let cpu = process_cpu() - tally.cpu_at_warm.unwrap_or_default();
    let frames = tally.datagrams as f64 / per_frame as f64;
    cpu.as_secs_f64() * 1e3 / frames
}

/// The reference: copying the same bytes in user space, 60 KB at a time,
/// from memory that is not in cache (as a datagram the sender's core wrote
/// is not in the receiver's): a 64 MB source, twice the last-level cache.
fn memcpy_ms_per_frame(per_frame: usize) -> f64 {
    let source = vec![0x5Au8; 64 << 20];
    let mut frame = vec![0u8; per_frame * DATAGRAM];
    let frames = 200u32;
    let mut from = 0;
    let start = thread_cpu();
    for _ in 0..frames {
        for chunk in frame.chunks_exact_mut(DATAGRAM) {
            if from + DATAGRAM > source.len() {
                from = 0;
            }
            chunk.copy_from_slice(&source[from..from + DATAGRAM]);
            from += DATAGRAM;
        }
        std::hint::black_box(&mut frame);
    }
    (thread_cpu() - start).as_secs_f64() * 1e3 / f64::from(frames)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--send") {
        sender(
            args[i + 1].parse().unwrap(),
            args[i + 2].parse().unwrap(),
            args[i + 3].parse().unwrap(),
            args[i + 4].parse().unwrap(),
        );
        return;
    }
    let window = Duration::from_secs_f64(bench_support::seconds_from_env("RFLYSIM_BENCH_SECONDS", 4.0));
    let cases = [
        ("LiDAR 100k points (27 datagrams) @ 20 Hz", 27, 20.0),
        ("LiDAR 100k points (27 datagrams) @ 700 Hz", 27, 700.0),
        ("1080p bgr8 (104 datagrams) @ 60 Hz", 104, 60.0),
    ];
    println!(
        "UDP receive alone: CPU ms per frame of the receiving process ({} s windows)",
        window.as_secs_f64()
    );
    println!("| frames | tokio | blocking recv (the UDP sensors') | recvmmsg ×{BATCH} | memcpy of the same bytes, uncached (reference) | blocking ÷ memcpy |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, per_frame, hz) in cases {
        let tokio = receive(Receive::Tokio, per_frame, hz, window);
        let blocking = receive(Receive::Blocking, per_frame, hz, window);
        let batched = receive(Receive::Recvmmsg, per_frame, hz, window);
        let copy = memcpy_ms_per_frame(per_frame);
        println!(
            "| {name} | {tokio:.3} | {blocking:.3} | {batched:.3} | {copy:.3} | {:.1} |",
            blocking / copy
        );
    }
}
