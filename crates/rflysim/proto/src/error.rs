//! Why a payload could not be decoded.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// The payload's length fits none of the layouts of its kind.
    Length {
        what: &'static str,
        got: usize,
        expected: String,
    },
    Checksum {
        what: &'static str,
        got: i64,
    },
    /// A value inside the payload is impossible (e.g. a negative point count).
    Invalid {
        what: &'static str,
        detail: String,
    },
    /// An image that the JPEG or PNG decoder refused, or of the wrong size.
    Image(String),
}

impl DecodeError {
    pub(crate) fn length(what: &'static str, got: usize, expected: impl Into<String>) -> Self {
        DecodeError::Length {
            what,
            got,
            expected: expected.into(),
        }
    }
    pub(crate) fn invalid(what: &'static str, detail: impl Into<String>) -> Self {
        DecodeError::Invalid {
            what,
            detail: detail.into(),
        }
    }
    /// A short, stable name for counters and diagnostics.
    pub fn reason(&self) -> &'static str {
        match self {
            DecodeError::Length { .. } => "bad_length",
            DecodeError::Checksum { .. } => "bad_checksum",
            DecodeError::Invalid { .. } => "invalid",
            DecodeError::Image(_) => "bad_image",
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Length { what, got, expected } => {
                write!(f, "{what}: {got} bytes, expected {expected}")
            }
            DecodeError::Checksum { what, got } => write!(f, "{what}: unexpected checksum {got}"),
            DecodeError::Invalid { what, detail } => write!(f, "{what}: {detail}"),
            DecodeError::Image(m) => write!(f, "image: {m}"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<image_codec::CodecError> for DecodeError {
    fn from(e: image_codec::CodecError) -> Self {
        DecodeError::Image(e.0)
    }
}
