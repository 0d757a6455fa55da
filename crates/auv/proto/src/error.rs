//! Why a message was refused, one variant per kind of bad input so that a
//! receiver can count each kind.

use std::fmt;

/// Which stream or field a [`WireError`] is about.
pub type What = &'static str;

#[derive(Debug, Clone, PartialEq)]
pub enum WireError {
    /// The message has the wrong number of multipart parts.
    PartCount { what: What, got: usize, expected: usize },
    /// The id part is not exactly one byte.
    IdLength { what: What, got: usize },
    /// A fixed-size part (telemetry payload, thruster message) has the wrong length.
    Length { what: What, got: usize, expected: usize },
    /// A camera part that is not a complete JPEG (no SOI at the start or no EOI at the end).
    NotJpeg { what: What, len: usize },
    /// A part larger than the configured bound.
    TooLarge { what: What, got: usize, max: usize },
    /// A thruster level neither in ±100 nor the keep value −127 (or a
    /// normalised level outside [−1, 1]).
    OutOfRange { what: What, value: f64 },
    /// A value that must be finite is not (telemetry NaN/∞, a ±∞ thruster level).
    NonFinite { what: What },
}

impl WireError {
    /// Every [`Self::kind`], in [`Self::kind_index`] order.
    pub const KINDS: [&'static str; 7] = [
        "wrong_part_count",
        "wrong_id_length",
        "wrong_length",
        "corrupt_jpeg",
        "too_large",
        "out_of_range",
        "non_finite",
    ];

    /// A short, stable name per kind, for counters and diagnostics.
    pub fn kind(&self) -> &'static str {
        Self::KINDS[self.kind_index()]
    }

    pub fn kind_index(&self) -> usize {
        match self {
            WireError::PartCount { .. } => 0,
            WireError::IdLength { .. } => 1,
            WireError::Length { .. } => 2,
            WireError::NotJpeg { .. } => 3,
            WireError::TooLarge { .. } => 4,
            WireError::OutOfRange { .. } => 5,
            WireError::NonFinite { .. } => 6,
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::PartCount { what, got, expected } => {
                write!(f, "{what}: {got} parts, expected {expected}")
            }
            WireError::IdLength { what, got } => write!(f, "{what}: id part of {got} bytes, expected 1"),
            WireError::Length { what, got, expected } => write!(f, "{what}: {got} bytes, expected {expected}"),
            WireError::NotJpeg { what, len } => write!(f, "{what}: {len} bytes that are not a complete JPEG"),
            WireError::TooLarge { what, got, max } => write!(f, "{what}: {got} bytes, more than the bound {max}"),
            WireError::OutOfRange { what, value } => write!(f, "{what}: {value} is out of range"),
            WireError::NonFinite { what } => write!(f, "{what}: not a finite number"),
        }
    }
}

impl std::error::Error for WireError {}

/// Splits a message into its exact number of parts, or says how many it had.
pub(crate) fn exact_parts<P, const N: usize>(what: What, parts: Vec<P>) -> Result<[P; N], WireError> {
    let got = parts.len();
    parts
        .try_into()
        .map_err(|_| WireError::PartCount { what, got, expected: N })
}

/// The one-byte id part every message kind starts with.
pub(crate) fn id_of(what: What, part: &[u8]) -> Result<u8, WireError> {
    match part {
        [id] => Ok(*id),
        other => Err(WireError::IdLength { what, got: other.len() }),
    }
}
