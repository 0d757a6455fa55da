//! The cases with the emulator on a second host, its datagrams crossing a
//! link at MTU 1500 as IP fragments (`bench_support::netns`, root only):
//! 1080p bgr8 raw at 60 Hz next to the same on loopback and to the
//! references, and the bridge's receive buffer at several sizes.

use super::*;
pub use bench_support::netns::LinkedHost;
use bench_support::netns::RmemMax;

/// The words that name a case across the link.
pub const ACROSS: &str = "across a link";
// No comma (`RFLYSIM_BENCH_CASES` splits on commas) and no "@ 60 Hz"
// (the loopback sections pick their cases by it).
const BRIDGE: &str = "1080p bgr8 raw UDP across a link at 60 Hz";
const RECEIVING: &str = "receiving reference: 1080p Image from raw UDP across a link at 60 Hz";
const LOOPBACK: &str = "1080p bgr8 raw UDP @ 60 Hz";

/// Where the emulator runs.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    Here,
    /// On the simulator's host, sending to this one across the link.
    Across(&'a LinkedHost),
}

impl Place<'_> {
    /// The command prefix that starts a program there.
    pub fn prefix(&self) -> Vec<String> {
        match self {
            Place::Here => Vec::new(),
            Place::Across(h) => h.prefix(),
        }
    }

    /// The bridge's parameters for a simulator there: datagrams are taken
    /// from `sim_ip` (and loopback) only; the emulator is told where to
    /// send, so no request goes out.
    pub fn bridge_params(&self) -> Vec<String> {
        match self {
            Place::Here => Vec::new(),
            Place::Across(h) => vec![format!("sim_host:={}", h.sim_ip), "send_requests:=false".into()],
        }
    }

    /// The emulator's arguments there.
    pub fn sim_args(&self) -> Vec<String> {
        match self {
            Place::Here => Vec::new(),
            Place::Across(h) => vec!["--target-ip".into(), h.this_host.to_string()],
        }
    }
}

/// The second host, when `only` picks a case across the link; otherwise, or
/// when it cannot be made, `None`, and the output says why.
pub fn host_if_wanted(only: &str) -> Option<LinkedHost> {
    let names = receive_buffer_sizes().into_iter().map(|(_, n)| n);
    if !names.chain([BRIDGE.into(), RECEIVING.into()]).any(|n| wanted(only, &n)) {
        return None;
    }
    match LinkedHost::create() {
        Ok(h) => Some(h),
        Err(e) => {
            println!(
                "cases {ACROSS}: not run: {e} (a second host here is a network namespace joined by a veth \
                 pair: root, or CAP_NET_ADMIN and CAP_SYS_ADMIN)\n"
            );
            None
        }
    }
}

/// The bridge's receive buffer granted when it asks for `rcvbuf_bytes`
/// (its default) and the kernel caps requests at `rmem_max`: Linux grants
/// twice what it allows.
fn granted(rmem_max: u64) -> u64 {
    let asked = rflysim_ros::settings::param::RCVBUF_BYTES.default_as::<u64>();
    2 * asked.min(rmem_max)
}

fn size(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

/// `net.core.rmem_max` values measured, from a stock kernel's, with each one's case name.
pub fn receive_buffer_sizes() -> Vec<(u64, String)> {
    [212_992, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20]
        .into_iter()
        .map(|r| {
            let name = format!(
                "1080p bgr8 raw UDP {ACROSS} with rmem_max {} ({} granted)",
                size(r),
                size(granted(r))
            );
            (r, name)
        })
        .collect()
}

/// The cases across the link: the bridge and the receiving reference at 60
/// Hz, then the bridge at each receive buffer of `sweep`.
pub fn cases<'a>(host: &'a LinkedHost, sweep: &'a [(u64, String)], topic: (&'a str, u16)) -> Vec<Case<'a>> {
    let across = Place::Across(host);
    let mut out: Vec<Case<'a>> = vec![
        (
            BRIDGE,
            Box::new(move |n, name| {
                let mut row = bridge_case_at(across, n, name, &camera_config(2, 60), topic, Kind::Image, &[]);
                row.nominal_hz = 60.0;
                row
            }),
        ),
        (
            RECEIVING,
            Box::new(move |n, name| {
                let config = camera_config(2, 60);
                let stream = (CAMERA_PORT, topic.1);
                let mut row = receiving_reference_case_at(across, n, name, &config, stream, Kind::Image);
                row.nominal_hz = 60.0;
                row
            }),
        ),
    ];
    for (rmem_max, name) in sweep {
        out.push((
            name.as_str(),
            Box::new(move |n, name| {
                // Set before the bridge makes its socket; put back after the case.
                let _cap = RmemMax::set(*rmem_max).expect("root, as the second host needs");
                bridge_case_at(across, n, name, &camera_config(2, 60), topic, Kind::Image, &[])
            }),
        ));
    }
    out
}

/// Across the link next to loopback, and the receive-buffer table, for
/// the rows of a round that has them.
pub fn print_tables(rows: &[Result]) {
    let find = |name: &str| rows.iter().find(|r| r.name == name);
    if let (Some(link), Some(lo)) = (find(BRIDGE), find(LOOPBACK)) {
        println!("\nthe bridge {ACROSS} (MTU 1500) / on loopback, 1080p bgr8 raw at 60 Hz:");
        println!(
            "  delivered fps {:.1} / {:.1}; latency p99 {:.2} / {:.2} ms; CPU ms/frame {} / {}",
            link.delivered,
            lo.delivered,
            link.p99_ms,
            lo.p99_ms,
            ms_per_frame(link).map_or("–".into(), |m| format!("{m:.2}")),
            ms_per_frame(lo).map_or("–".into(), |m| format!("{m:.2}")),
        );
    }
    let sweep: Vec<(u64, &Result)> = receive_buffer_sizes()
        .into_iter()
        .filter_map(|(r, name)| Some((r, find(&name)?)))
        .collect();
    if sweep.is_empty() {
        return;
    }
    println!(
        "\nthe bridge's receive buffer {ACROSS}, 1080p bgr8 raw at 60 Hz (a 60 000-byte datagram crosses \
         as 41 IP fragments), rcvbuf_bytes as shipped:"
    );
    println!(
        "| net.core.rmem_max | granted | offered fps | delivered fps | frames lost | datagrams dropped at the bridge's socket |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (rmem_max, r) in sweep {
        let lost = if r.offered > 0.0 {
            format!("{:.1} %", (1.0 - r.delivered / r.offered).max(0.0) * 100.0)
        } else {
            "–".into()
        };
        println!(
            "| {} | {} | {:.1} | {:.1} | {lost} | {} |",
            size(rmem_max),
            size(granted(rmem_max)),
            r.offered,
            r.delivered,
            r.socket_drops.get(&CAMERA_PORT).copied().unwrap_or(0)
        );
    }
}
