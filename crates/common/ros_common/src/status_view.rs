//! The `status` view: every bridge's streams on the graph, from
//! `/diagnostics`, as one table per bridge (rate, frames, drops and their
//! reasons, latency, age of the last message), each simulator's clock as
//! its time base sees it, and each process's memory.

use std::collections::BTreeMap;

use r2r::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus};

use crate::diagnostics::keys;

/// The newest status of every stream and process heard.
#[derive(Debug, Default)]
pub struct View {
    streams: BTreeMap<(String, String), DiagnosticStatus>,
    clocks: BTreeMap<String, DiagnosticStatus>,
    memory: BTreeMap<String, DiagnosticStatus>,
}

fn value<'a>(s: &'a DiagnosticStatus, key: &str) -> &'a str {
    s.values
        .iter()
        .find(|kv| kv.key == key)
        .map_or("–", |kv| kv.value.as_str())
}

/// `bridge: stream` → (bridge, stream); a status without the stream keys
/// is not a stream's.
fn stream_name(s: &DiagnosticStatus) -> Option<(String, String)> {
    s.values.iter().any(|kv| kv.key == keys::RATE_HZ).then_some(())?;
    let (bridge, stream) = s.name.split_once(": ")?;
    Some((bridge.to_string(), stream.to_string()))
}

impl View {
    /// Keeps the statuses of `array` whose bridge's name contains `only`
    /// (every bridge for "").
    pub fn take(&mut self, array: DiagnosticArray, only: &str) {
        for s in array.status {
            if let Some(node) = s.name.strip_suffix(keys::MEMORY_SUFFIX) {
                if node.contains(only) {
                    self.memory.insert(node.to_string(), s);
                }
            } else if s.values.iter().any(|kv| kv.key == keys::CLOCK_OFFSET_MS) {
                if s.name.contains(only) {
                    self.clocks.insert(s.name.clone(), s);
                }
            } else if let Some(key) = stream_name(&s) {
                if key.0.contains(only) {
                    self.streams.insert(key, s);
                }
            }
        }
    }

    /// The bridges heard, by name.
    pub fn bridges(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.streams.keys().map(|(b, _)| b.as_str()).collect();
        names.dedup();
        names
    }

    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// One table per bridge: a row per stream, what it dropped by reason.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut current = None;
        for ((bridge, stream), s) in &self.streams {
            if current != Some(bridge) {
                current = Some(bridge);
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!(
                    "{:<48} {:>8} {:>9} {:>9} {:>11} {:>9}  status\n",
                    bridge, "rate Hz", "frames", "dropped", "latency ms", "age s"
                ));
            }
            let reasons: Vec<String> = s
                .values
                .iter()
                .filter_map(|kv| {
                    let reason = kv.key.strip_prefix(keys::DROPPED_PREFIX)?;
                    (kv.value != "0").then(|| format!("{reason} {}", kv.value))
                })
                .collect();
            let why = if reasons.is_empty() {
                String::new()
            } else {
                format!(" (dropped: {})", reasons.join(", "))
            };
            out.push_str(&format!(
                "  {:<46} {:>8} {:>9} {:>9} {:>11} {:>9}  {}{why}\n",
                stream,
                value(s, keys::RATE_HZ),
                value(s, keys::FRAMES_PUBLISHED),
                value(s, keys::FRAMES_DROPPED),
                value(s, keys::LATENCY_MS),
                value(s, keys::LAST_FRAME_AGE_S),
                s.message
            ));
            if let Some(advice) = s.values.iter().find(|kv| kv.key == keys::ADVICE) {
                out.push_str(&format!("    ↳ {}\n", advice.value));
            }
        }
        if !self.clocks.is_empty() {
            out.push_str(&format!(
                "\n{:<48} {:>7} {:>16} {:>11} {:>8}  status\n",
                "time bases", "pace", "clock offset ms", "drift ppm", "refused"
            ));
            for (name, s) in &self.clocks {
                out.push_str(&format!(
                    "  {name:<46} {:>7} {:>16} {:>11} {:>8}  {}\n",
                    value(s, keys::PACE),
                    value(s, keys::CLOCK_OFFSET_MS),
                    value(s, keys::CLOCK_DRIFT_PPM),
                    value(s, keys::ANCHORS_REFUSED),
                    s.message
                ));
            }
        }
        if !self.memory.is_empty() {
            out.push_str("\nmemory\n");
            for (node, s) in &self.memory {
                out.push_str(&format!("  {node:<46} {}\n", s.message));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::diagnostic_msgs::msg::KeyValue;

    fn status(name: &str, values: &[(&str, &str)]) -> DiagnosticStatus {
        DiagnosticStatus {
            name: name.into(),
            message: "10.0 Hz".into(),
            values: values
                .iter()
                .map(|(k, v)| KeyValue {
                    key: (*k).into(),
                    value: (*v).into(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn every_bridge_gets_its_table_and_drops_say_why() {
        let mut v = View::default();
        v.take(
            DiagnosticArray {
                status: vec![
                    status(
                        "auv_bridge: auv0 images",
                        &[("rate_hz", "10.00"), ("dropped_corrupt_jpeg", "2")],
                    ),
                    status(
                        "rflysim_bridge: sensor1 img",
                        &[("rate_hz", "15.00"), ("dropped_bad_length", "0")],
                    ),
                    status("/auv_bridge: memory", &[("resident_kib", "1")]),
                    status(
                        "rflysim_bridge: uav1 time base",
                        &[
                            ("clock_offset_ms", "10000.2"),
                            ("anchors_refused", "0"),
                            ("pace", "0.500"),
                        ],
                    ),
                    status("not a stream", &[]),
                ],
                ..Default::default()
            },
            "",
        );
        assert_eq!(v.bridges(), ["auv_bridge", "rflysim_bridge"]);
        let out = v.render();
        assert!(
            out.contains("auv0 images") && out.contains("(dropped: corrupt_jpeg 2)"),
            "{out}"
        );
        assert!(!out.contains("bad_length"), "{out}");
        assert!(out.contains("/auv_bridge") && !out.contains("not a stream"), "{out}");
        assert!(
            out.contains("uav1 time base") && out.contains("10000.2") && out.contains("0.500"),
            "{out}"
        );

        let mut only = View::default();
        only.take(
            DiagnosticArray {
                status: vec![status("auv_bridge: auv0 images", &[("rate_hz", "1")])],
                ..Default::default()
            },
            "rflysim",
        );
        assert!(only.is_empty());
    }
}
