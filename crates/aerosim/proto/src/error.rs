//! Why a record did not decode.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Larger than the configured limit: not parsed at all.
    TooLarge { len: usize, max: usize },
    /// Not JSON, or JSON cut short.
    NotJson(String),
    /// JSON, but not an envelope (no `metadata`, or a malformed one).
    BadEnvelope(String),
    /// An envelope of another type than the topic carries.
    WrongType { expected: &'static str, found: String },
    /// The envelope's type, with a field missing, of the wrong kind or out of range.
    BadField(String),
    /// A bincode image record that ends before its fields do.
    Truncated { needed: usize, left: usize },
    /// A bincode image record whose fields are impossible.
    BadImage(String),
}

impl DecodeError {
    /// A short name for counters and diagnostics.
    pub fn reason(&self) -> &'static str {
        match self {
            DecodeError::TooLarge { .. } => "too_large",
            DecodeError::NotJson(_) => "not_json",
            DecodeError::BadEnvelope(_) => "bad_envelope",
            DecodeError::WrongType { .. } => "wrong_type",
            DecodeError::BadField(_) => "bad_field",
            DecodeError::Truncated { .. } => "truncated",
            DecodeError::BadImage(_) => "bad_image",
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TooLarge { len, max } => write!(f, "{len} bytes, more than the limit of {max}"),
            DecodeError::NotJson(e) => write!(f, "not JSON: {e}"),
            DecodeError::BadEnvelope(e) => write!(f, "not an AeroSim envelope: {e}"),
            DecodeError::WrongType { expected, found } => write!(f, "a {found} where a {expected} belongs"),
            DecodeError::BadField(e) => write!(f, "bad field: {e}"),
            DecodeError::Truncated { needed, left } => {
                write!(f, "cut short: {needed} more bytes needed, {left} left")
            }
            DecodeError::BadImage(e) => write!(f, "bad image record: {e}"),
        }
    }
}

impl std::error::Error for DecodeError {}
