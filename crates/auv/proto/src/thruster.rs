//! Thruster messages: one part `[id: u8][left, right, side, vertical: i8]`,
//! each level in ±100, or −127 to leave that thruster as it is.
//!
//! Sign convention (the protocol gives none; the emulator follows it and the
//! bridge's mixing gains can flip it): left and right push forward when
//! positive, side pushes to starboard (right), vertical pushes up.

use crate::error::{id_of, WireError};
use crate::{THRUSTER_MESSAGE_LEN, THRUST_KEEP, THRUST_MAX};

/// The four thrusters, in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Thruster {
    Left,
    Right,
    Side,
    Vertical,
}

impl Thruster {
    pub const ALL: [Thruster; 4] = [Thruster::Left, Thruster::Right, Thruster::Side, Thruster::Vertical];

    pub fn name(self) -> &'static str {
        match self {
            Thruster::Left => "left",
            Thruster::Right => "right",
            Thruster::Side => "side",
            Thruster::Vertical => "vertical",
        }
    }
}

/// A checked command: every level is in ±100 or `None` (keep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrusterCommand {
    auv_id: u8,
    levels: [Option<i8>; 4],
}

impl ThrusterCommand {
    pub fn new(auv_id: u8, levels: [Option<i8>; 4]) -> Result<Self, WireError> {
        for (level, thruster) in levels.iter().zip(Thruster::ALL) {
            if let Some(v) = *level {
                check_level(thruster, v)?;
            }
        }
        Ok(ThrusterCommand { auv_id, levels })
    }

    /// Every thruster at zero: what a watchdog or a shutdown sends.
    pub fn stop(auv_id: u8) -> Self {
        ThrusterCommand {
            auv_id,
            levels: [Some(0); 4],
        }
    }

    pub fn auv_id(&self) -> u8 {
        self.auv_id
    }

    /// Left, right, side, vertical; `None` leaves that thruster as it is.
    pub fn levels(&self) -> [Option<i8>; 4] {
        self.levels
    }

    pub fn level(&self, thruster: Thruster) -> Option<i8> {
        self.levels[thruster as usize]
    }

    pub fn encode(&self) -> [u8; THRUSTER_MESSAGE_LEN] {
        let mut out = [self.auv_id, 0, 0, 0, 0];
        for (byte, level) in out[1..].iter_mut().zip(self.levels) {
            *byte = level.unwrap_or(THRUST_KEEP) as u8;
        }
        out
    }

    /// Reads one received part (the message has exactly one part; the
    /// receiver checks that before calling this).
    pub fn decode(data: &[u8]) -> Result<Self, WireError> {
        let Ok(bytes) = <&[u8; THRUSTER_MESSAGE_LEN]>::try_from(data) else {
            return Err(WireError::Length {
                what: "thruster message",
                got: data.len(),
                expected: THRUSTER_MESSAGE_LEN,
            });
        };
        let auv_id = id_of("thruster message", &bytes[..1])?;
        let mut levels = [None; 4];
        for ((level, &byte), thruster) in levels.iter_mut().zip(&bytes[1..]).zip(Thruster::ALL) {
            let v = byte as i8;
            if v != THRUST_KEEP {
                check_level(thruster, v)?;
                *level = Some(v);
            }
        }
        Ok(ThrusterCommand { auv_id, levels })
    }
}

fn check_level(thruster: Thruster, v: i8) -> Result<(), WireError> {
    if (-THRUST_MAX..=THRUST_MAX).contains(&v) {
        Ok(())
    } else {
        Err(WireError::OutOfRange {
            what: thruster.name(),
            value: f64::from(v),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_protocol_example() {
        // Python: struct.pack("Bbbbb", 0, 75, -50, 0, -127)
        let seed = [0x00, 0x4B, 0xCE, 0x00, 0x81];
        let c = ThrusterCommand::decode(&seed).unwrap();
        assert_eq!(c.auv_id(), 0);
        assert_eq!(c.levels(), [Some(75), Some(-50), Some(0), None]);
        assert_eq!(c.level(Thruster::Right), Some(-50));
        assert_eq!(c.encode(), seed);
        assert_eq!(ThrusterCommand::stop(9).encode(), [9, 0, 0, 0, 0]);
    }

    #[test]
    fn refuses_levels_outside_the_range() {
        assert_eq!(
            ThrusterCommand::new(1, [Some(101), None, None, None])
                .unwrap_err()
                .kind(),
            "out_of_range"
        );
        assert_eq!(
            ThrusterCommand::new(1, [None, None, None, Some(-101)])
                .unwrap_err()
                .kind(),
            "out_of_range"
        );
        assert!(ThrusterCommand::new(1, [Some(100), Some(-100), None, Some(0)]).is_ok());
        assert_eq!(
            ThrusterCommand::decode(&[0, 0, 0, 0, 0x80]).unwrap_err().kind(),
            "out_of_range"
        );
        assert_eq!(
            ThrusterCommand::decode(&[0, 101, 0, 0, 0]).unwrap_err().kind(),
            "out_of_range"
        );
        assert_eq!(
            ThrusterCommand::decode(&[0, 0, 0, 0]).unwrap_err().kind(),
            "wrong_length"
        );
        assert_eq!(ThrusterCommand::decode(&[0; 6]).unwrap_err().kind(), "wrong_length");
    }
}
