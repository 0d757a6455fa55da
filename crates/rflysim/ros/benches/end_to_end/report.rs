//! The tables: one round's, and the summary over rounds (medians of each
//! bridge row's CPU-per-frame ratio to its reference).

use super::*;

pub fn print_table(rows: &[Result]) {
    println!(
        "end-to-end: emulator → bridge → native r2r subscriber; {} s windows after {WARMUP} s warm-up",
        window()
    );
    println!(
        "(CPU is the bridge's, or for references the reference publisher's, in % of one core; \
         CPU ms/frame = CPU time per delivered frame)"
    );
    for var in [
        "ROS_AUTOMATIC_DISCOVERY_RANGE",
        "FASTRTPS_DEFAULT_PROFILES_FILE",
        "FASTDDS_BUILTIN_TRANSPORTS",
        "RMW_IMPLEMENTATION",
    ] {
        println!("subscriber {var}={}", std::env::var(var).unwrap_or_default());
    }
    println!("publishers' extra environment: {:?}\n", publisher_env());
    println!(
        "| case | offered fps | delivered fps | kernel UDP drops | latency p50 (ms) | latency p99 (ms) | CPU % | CPU ms/frame | peak RSS (MiB) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let offered = if r.offered.is_nan() {
            "flat out".into()
        } else {
            format!("{:.1}", r.offered)
        };
        println!(
            "| {} | {offered} | {:.1} | {} | {:.2} | {:.2} | {} | {} | {:.0} |",
            r.name,
            r.delivered,
            r.kernel_drops,
            r.p50_ms,
            r.p99_ms,
            r.cpu_percent.map_or("–".into(), |c| format!("{c:.0}")),
            r.cpu_percent
                .filter(|_| r.delivered > 0.0)
                .map_or("–".into(), |c| format!("{:.2}", c * 10.0 / r.delivered)),
            r.peak_rss_mib
        );
    }
    let ratio = |a: &str, b: &str| {
        let find = |n: &str| rows.iter().find(|r| r.name == n).map(|r| r.delivered);
        match (find(a), find(b)) {
            (Some(x), Some(y)) if y > 0.0 => format!("{:.2}", x / y),
            _ => "–".into(),
        }
    };
    println!("\nflat-out ratios to the reference (delivered fps):");
    println!(
        "  1080p UDP: {}",
        ratio("1080p bgr8 raw UDP, flat out", "reference: 1080p Image, flat out")
    );
    println!(
        "  1080p shared memory: {}",
        ratio("1080p bgr8 shm, flat out", "reference: 1080p Image, flat out")
    );
    println!(
        "  LiDAR 100k: {}",
        ratio(
            "LiDAR 100k points UDP, flat out",
            "reference: 100k PointCloud2, flat out"
        )
    );
    for against in Against::BOTH {
        println!("\nCPU ms/frame over {} at the same rate:", against.title());
        for b in rows {
            if let Some(ratio) = cpu_ratio(rows, b, against) {
                println!("  {}: {ratio:.2}", b.name);
            }
        }
    }
}

pub fn ms_per_frame(r: &Result) -> Option<f64> {
    r.cpu_percent
        .filter(|_| r.delivered > 0.0)
        .map(|c| c * 10.0 / r.delivered)
}

/// The two references a bridge row is measured against: DDS alone, and
/// (UDP streams at rate) DDS alone after receiving the same frames.
#[derive(Clone, Copy, PartialEq)]
pub enum Against {
    DdsAlone,
    Receiving,
}

impl Against {
    const BOTH: [Against; 2] = [Against::DdsAlone, Against::Receiving];

    fn title(self) -> &'static str {
        match self {
            Against::DdsAlone => "the reference's",
            Against::Receiving => "the receiving reference's (DDS alone after the same receive)",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Against::DdsAlone => "reference",
            Against::Receiving => "receiving reference",
        }
    }

    fn is_reference(name: &str) -> bool {
        name.starts_with(Against::DdsAlone.prefix()) || name.starts_with(Against::Receiving.prefix())
    }

    /// The row of `rows` that `bridge` is measured against, if any.
    fn reference<'a>(self, rows: &'a [Result], bridge: &Result) -> Option<&'a Result> {
        // A receiving reference may itself be measured against DDS alone.
        let eligible = match self {
            Against::DdsAlone => !bridge.name.starts_with(Against::DdsAlone.prefix()),
            Against::Receiving => !Against::is_reference(&bridge.name) && !bridge.name.contains("JPEG"),
        };
        // A receiving reference receives as its bridge row does: over UDP
        // (on this host or across a link) or from shared memory.
        let transport = |name: &str| {
            if name.contains("shm") {
                "shm"
            } else if name.contains(link::ACROSS) {
                "UDP across a link"
            } else {
                "UDP"
            }
        };
        if !eligible {
            return None;
        }
        rows.iter().find(|r| {
            r.name.starts_with(self.prefix())
                && r.kind == bridge.kind
                && r.nominal_hz == bridge.nominal_hz
                && size_of(&r.name) == size_of(&bridge.name)
                && (self == Against::DdsAlone || transport(&r.name) == transport(&bridge.name))
        })
    }
}

/// A row's CPU per frame over its round's reference of the same kind at
/// the same rate (none for flat-out rows and for the reference itself).
pub fn cpu_ratio(rows: &[Result], bridge: &Result, against: Against) -> Option<f64> {
    cpu_per_frame(rows, bridge, against).map(|(b, r)| b / r)
}

/// CPU ms per frame of a row and of the reference it is measured against.
pub fn cpu_per_frame(rows: &[Result], bridge: &Result, against: Against) -> Option<(f64, f64)> {
    let reference = against.reference(rows, bridge)?;
    Some((ms_per_frame(bridge)?, ms_per_frame(reference).filter(|&m| m > 0.0)?))
}

/// Each bridge case's ratio to either reference in every round, their
/// median and spread, and the ratio of the rounds' mean CPU per frame.
pub fn print_rounds_summary(rounds: &[Vec<Result>]) {
    for against in Against::BOTH {
        print_rounds_against(rounds, against);
    }
}

pub fn print_rounds_against(rounds: &[Vec<Result>], against: Against) {
    println!(
        "\nover {} rounds: CPU ms/frame over {} at the same rate",
        rounds.len(),
        against.title()
    );
    println!("| case | ratio per round | median | min-max | mean ms/frame bridge / reference | ratio of means |");
    println!("|---|---|---:|---:|---:|---:|");
    // Paced rows are named by their rate, which differs between rounds.
    let stem = |name: &str| name.split(", paced at").next().unwrap_or(name).to_string();
    let mut stems: Vec<String> = Vec::new();
    for r in rounds.iter().flatten() {
        let s = stem(&r.name);
        if !r.name.starts_with(against.prefix()) && !r.nominal_hz.is_nan() && !stems.contains(&s) {
            stems.push(s);
        }
    }
    for s in stems {
        let paced = if rounds
            .iter()
            .flatten()
            .any(|r| r.name.starts_with(&format!("{s}, paced")))
        {
            ", paced"
        } else {
            ""
        };
        let mut ratios = Vec::new();
        let (mut bridge_ms, mut reference_ms) = (Vec::new(), Vec::new());
        for rows in rounds {
            let Some(b) = rows.iter().find(|r| stem(&r.name) == s && !r.nominal_hz.is_nan()) else {
                continue;
            };
            if let Some((bm, rm)) = cpu_per_frame(rows, b, against) {
                ratios.push(bm / rm);
                bridge_ms.push(bm);
                reference_ms.push(rm);
            }
        }
        if ratios.is_empty() {
            continue;
        }
        let listed: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        let mut sorted = ratios.clone();
        sorted.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "| {s}{paced} | {} | {:.2} | {:.2}-{:.2} | {:.2} / {:.2} | {:.2} |",
            listed.join(", "),
            bench_support::median(&sorted),
            sorted[0],
            sorted[sorted.len() - 1],
            mean(&bridge_ms),
            mean(&reference_ms),
            mean(&bridge_ms) / mean(&reference_ms)
        );
    }
}
