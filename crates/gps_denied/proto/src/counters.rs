//! Counts of what arrived, per kind of bad input, for the bridge's
//! diagnostics: messages refused whole (per reason), parts dropped (per part
//! and fault), datagrams from elsewhere, simulator restarts (time going
//! back). Pure bookkeeping; no allocation per message.

use crate::parse::{Fault, Parsed, Part, TelemetryError};
use crate::telemetry::Telemetry;

/// Refusal reasons of whole messages, in `TelemetryError::kind` order.
const REFUSALS: [&str; 3] = ["too_long", "malformed_json", "not_an_object"];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputCounters {
    pub messages: u64,
    pub drone_frames: u64,
    pub rover_frames: u64,
    /// Datagrams from a host other than the simulator's (not parsed).
    pub foreign_sender: u64,
    /// Drone frames whose timestamp went back: the simulator restarted.
    pub restarts: u64,
    refused: [u64; REFUSALS.len()],
    parts: [[u64; Fault::COUNT]; Part::COUNT],
    last_timestamp: Option<f64>,
}

fn refusal_index(e: &TelemetryError) -> usize {
    match e {
        TelemetryError::TooLong { .. } => 0,
        TelemetryError::Malformed(_) => 1,
        TelemetryError::NotAnObject => 2,
    }
}

impl InputCounters {
    /// Counts one parsed (or refused) message. Returns true when it shows a
    /// simulator restart (a drone timestamp earlier than the last one).
    pub fn record(&mut self, result: &Result<Parsed, TelemetryError>) -> bool {
        self.messages += 1;
        let parsed = match result {
            Ok(p) => p,
            Err(e) => {
                self.refused[refusal_index(e)] += 1;
                return false;
            }
        };
        for (part, fault) in parsed.faults.iter() {
            self.parts[part as usize][fault as usize] += 1;
        }
        match &parsed.telemetry {
            Telemetry::Rover(_) => {
                self.rover_frames += 1;
                false
            }
            Telemetry::Drone(d) => {
                self.drone_frames += 1;
                let Some(t) = d.timestamp else { return false };
                let restarted = self.last_timestamp.is_some_and(|last| t < last);
                self.last_timestamp = Some(t);
                if restarted {
                    self.restarts += 1;
                }
                restarted
            }
        }
    }

    pub fn refused(&self, e: &TelemetryError) -> u64 {
        self.refused[refusal_index(e)]
    }

    pub fn part(&self, part: Part, fault: Fault) -> u64 {
        self.parts[part as usize][fault as usize]
    }

    /// Messages refused whole plus parts dropped plus foreign datagrams.
    pub fn bad_total(&self) -> u64 {
        self.refused.iter().sum::<u64>() + self.parts.iter().flatten().sum::<u64>() + self.foreign_sender
    }

    /// Every non-zero count of bad input, named `reason` or `part/fault`
    /// (e.g. `malformed_json`, `camera.image/bad_base64`), in a fixed order.
    pub fn bad_input(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let refused = REFUSALS.iter().copied().zip(self.refused);
        let parts = Part::ALL
            .iter()
            .flat_map(move |&p| Fault::ALL.iter().map(move |&f| (p.key(f), self.part(p, f))));
        let foreign = std::iter::once(("foreign_sender", self.foreign_sender));
        refused.chain(parts).chain(foreign).filter(|(_, c)| *c > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_telemetry, Limits};

    fn record(c: &mut InputCounters, text: &str) -> bool {
        c.record(&parse_telemetry(text.as_bytes(), &Limits::default()))
    }

    #[test]
    fn counts_each_kind_apart_and_names_them() {
        let mut c = InputCounters::default();
        record(
            &mut c,
            r#"{"timestamp": 1.0, "landed": "no", "camera": {"width": 320, "height": 240, "fov": 60, "image": "%%"}}"#,
        );
        record(&mut c, r#"{"timestamp": 1.1, "landed": 3}"#);
        record(&mut c, "{\"timestamp\": ");
        record(&mut c, "[]");
        record(
            &mut c,
            r#"{"position": {"x": 0, "y": 0, "z": 0}, "pattern": "linear", "timestamp": 0.5}"#,
        );
        c.foreign_sender += 2;
        assert_eq!((c.messages, c.drone_frames, c.rover_frames), (5, 2, 1));
        assert_eq!(c.part(Part::Landed, Fault::Invalid), 2);
        assert_eq!(c.part(Part::Image, Fault::BadBase64), 1);
        assert_eq!(c.part(Part::Image, Fault::Missing), 1);
        let named: Vec<(&str, u64)> = c.bad_input().collect();
        assert!(named.contains(&("malformed_json", 1)));
        assert!(named.contains(&("not_an_object", 1)));
        assert!(named.contains(&("landed/invalid", 2)));
        assert!(named.contains(&("camera.image/bad_base64", 1)));
        assert!(named.contains(&("foreign_sender", 2)));
        assert!(named.iter().all(|(_, n)| *n > 0));
        assert_eq!(c.bad_total(), named.iter().map(|(_, n)| n).sum::<u64>());
    }

    #[test]
    fn keys_are_part_slash_fault() {
        for p in Part::ALL {
            for f in [Fault::Missing, Fault::Invalid] {
                assert_eq!(p.key(f), format!("{}/{}", p.name(), f.name()));
            }
        }
        for f in [Fault::ImageTooLong, Fault::BadBase64, Fault::NotJpeg] {
            assert_eq!(Part::Image.key(f), format!("camera.image/{}", f.name()));
        }
    }

    #[test]
    fn a_timestamp_going_back_is_a_restart_and_rover_frames_do_not_count() {
        let mut c = InputCounters::default();
        assert!(!record(&mut c, r#"{"timestamp": 5.0}"#));
        assert!(!record(
            &mut c,
            r#"{"position": {"x": 0, "y": 0, "z": 0}, "timestamp": 0.1}"#
        ));
        assert!(!record(&mut c, r#"{"timestamp": 5.04}"#));
        assert!(record(&mut c, r#"{"timestamp": 0.0}"#));
        assert!(!record(&mut c, r#"{"timestamp": 0.04}"#));
        assert_eq!(c.restarts, 1);
    }
}
