//! The labels RflySim3D shows over a vehicle, set as RflySim's SDK sets them
//! (`UE4CtrlAPI.sendUE4LabelID` / `sendUE4LabelMsg`): the binary `CopterMsg`
//! (`6i2f120s`, 152 bytes, checksum 1234567899) on the window's request
//! port, 20010 + i. No console parses it: the text is 120 bytes of UTF-8.
//!
//! What RflySim3D does with it, as the SDK describes the fields:
//!
//! - `dispFlag` 0: the ID row, the text in place of the CopterID;
//! - `dispFlag` 1–5: that message row below it; a row past those shown is
//!   added as a new one;
//! - `dispFlag` < 0: a new message row (RflySim3D keeps 5, the oldest goes);
//! - `dispTime` > 0: seconds the message stays; 0: for good; < 0: the row
//!   goes at once (with a negative flag, every message row);
//! - `CopterID` ≤ 0 labels every vehicle.
//!
//! A label is checked whole before it becomes a message
//! ([`VehicleLabel::message`]); [`VehicleLabel::from_message`] reads one
//! back (the emulator).

use std::fmt;

use crate::error::DecodeError;
use crate::wire::{checksum, exact, Writer};

/// `CopterMsg`'s checksum.
pub const CHECKSUM: i32 = 1_234_567_899;
/// The longest label text taken, in bytes of UTF-8: the 120-byte field with
/// a NUL kept, so that RflySim3D finds the text's end inside it.
pub const TEXT_MAX: usize = CopterMsg::TEXT_LEN - 1;
/// Text sizes taken: the SDK's `fontSize` defaults to 20 (30 in its calls).
pub const SIZE_RANGE: std::ops::RangeInclusive<f32> = 0.1..=1000.0;
/// The longest display time taken, seconds (a day).
pub const TIME_MAX: f32 = 86_400.0;
/// RflySim3D shows this many message rows, numbered from 1.
pub const MESSAGE_LINES: i32 = 5;
/// The `dispFlag` of the ID row.
const ID_ROW_FLAG: i32 = 0;
/// The `dispFlag` that adds a message row, as the SDK's default.
const NEW_ROW_FLAG: i32 = -1;
/// The `dispTime` the SDK's `sendUE4LabelID` sends: for the ID row RflySim3D
/// reads only that it is not negative.
const ID_ROW_TIME: f32 = 1.0;

/// `CopterMsg` (`6i2f120s`) as it travels.
#[derive(Debug, Clone, PartialEq)]
pub struct CopterMsg {
    pub copter_id: i32,
    pub disp_flag: i32,
    /// Red, green, blue, 0–255.
    pub rgb: [i32; 3],
    pub disp_time: f32,
    pub font_size: f32,
    pub text: String,
}

impl CopterMsg {
    pub const LEN: usize = 152;
    pub const TEXT_LEN: usize = 120;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(CHECKSUM).i32(self.copter_id).i32(self.disp_flag).i32s(&self.rgb);
        w.f32(self.disp_time)
            .f32(self.font_size)
            .text(&self.text, Self::TEXT_LEN);
        w.finish()
    }

    /// The text up to its first NUL; bytes that are not UTF-8 read as U+FFFD.
    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "CopterMsg";
        let f = exact(WHAT, p, Self::LEN)?;
        checksum(WHAT, f, CHECKSUM)?;
        Ok(Self {
            copter_id: f.i32(4),
            disp_flag: f.i32(8),
            rgb: f.i32s(12),
            disp_time: f.f32(24),
            font_size: f.f32(28),
            text: f.text(32, Self::TEXT_LEN),
        })
    }
}

/// Which label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LabelKind {
    /// The ID row.
    Id,
    /// A message row, for `seconds` (0: for good; < 0: removed).
    Message { seconds: f32, line: MessageLine },
}

/// A message row, as the SDK numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageLine {
    /// A new row (`dispFlag` −1).
    New,
    /// Row 1…[`MESSAGE_LINES`].
    Line(u8),
}

impl MessageLine {
    pub fn flag(self) -> i32 {
        match self {
            MessageLine::New => NEW_ROW_FLAG,
            MessageLine::Line(n) => i32::from(n),
        }
    }

    /// The row a message's flag names: negative a new one, 1…5 that one.
    /// `None` for 0 (the ID row) and past the rows RflySim3D shows.
    pub fn from_flag(flag: i32) -> Option<Self> {
        match flag {
            f if f < 0 => Some(MessageLine::New),
            f if (1..=MESSAGE_LINES).contains(&f) => Some(MessageLine::Line(f as u8)),
            _ => None,
        }
    }
}

/// A label over vehicle `copter_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct VehicleLabel {
    pub copter_id: i32,
    pub kind: LabelKind,
    pub text: String,
    /// Red, green, blue.
    pub rgb: [u8; 3],
    pub size: f32,
}

/// Why a label cannot be sent.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelError {
    /// Longer than [`TEXT_MAX`] bytes.
    TextTooLong {
        len: usize,
    },
    /// A control character at this byte offset.
    TextControl {
        at: usize,
        ch: char,
    },
    /// A colour component outside 0…1 (or not finite).
    Colour {
        component: &'static str,
        value: f32,
    },
    Size(f32),
    Time(f32),
    Line(i32),
    /// Neither an ID label nor a message (the ROS message's `kind`).
    Kind(u8),
    /// 0 or less: RflySim3D would label every vehicle.
    CopterId(i32),
}

impl fmt::Display for LabelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LabelError::TextTooLong { len } => write!(
                f,
                "text of {len} bytes: at most {TEXT_MAX} (RflySim3D's 120-byte field, a NUL kept)"
            ),
            LabelError::TextControl { at, ch } => write!(
                f,
                "a control character (U+{:04X}) at {at}: a label is one line of text",
                u32::from(ch)
            ),
            LabelError::Colour { component, value } => {
                write!(f, "colour {component} = {value}: 0 to 1")
            }
            LabelError::Size(s) => write!(f, "size {s}: {} to {}", SIZE_RANGE.start(), SIZE_RANGE.end()),
            LabelError::Time(t) => write!(
                f,
                "display time {t} s: at most {TIME_MAX} s (0: for good, negative: removes the line)"
            ),
            LabelError::Line(0) => write!(
                f,
                "line 0 is the ID row (kind ID): message lines are 1 to {MESSAGE_LINES}, or −1 for a new one"
            ),
            LabelError::Line(l) => write!(
                f,
                "line {l}: 1 to {MESSAGE_LINES} (RflySim3D shows {MESSAGE_LINES}), or −1 for a new one"
            ),
            LabelError::Kind(k) => write!(f, "kind {k}: 0 (the ID label) or 1 (a message line)"),
            LabelError::CopterId(id) => write!(f, "vehicle {id}: RflySim3D would label every vehicle"),
        }
    }
}

impl std::error::Error for LabelError {}

/// `text` if RflySim3D shows it whole as a label: at most [`TEXT_MAX`]
/// bytes of UTF-8 without a control character (a NUL would end it early).
/// Empty is fine.
pub fn check_label_text(text: &str) -> Result<(), LabelError> {
    if text.len() > TEXT_MAX {
        return Err(LabelError::TextTooLong { len: text.len() });
    }
    match text.char_indices().find(|(_, c)| c.is_control()) {
        Some((at, ch)) => Err(LabelError::TextControl { at, ch }),
        None => Ok(()),
    }
}

/// Red, green, blue of 0…1 each (a ROS colour) as bytes, rounded.
pub fn rgb_from_unit(r: f32, g: f32, b: f32) -> Result<[u8; 3], LabelError> {
    let byte = |component: &'static str, value: f32| {
        if (0.0..=1.0).contains(&value) {
            Ok((value * 255.0).round() as u8)
        } else {
            Err(LabelError::Colour { component, value })
        }
    };
    Ok([byte("r", r)?, byte("g", g)?, byte("b", b)?])
}

impl VehicleLabel {
    /// The checks, then the message.
    pub fn message(&self) -> Result<CopterMsg, LabelError> {
        if self.copter_id <= 0 {
            return Err(LabelError::CopterId(self.copter_id));
        }
        check_label_text(&self.text)?;
        if !SIZE_RANGE.contains(&self.size) {
            return Err(LabelError::Size(self.size));
        }
        let (disp_flag, disp_time) = match self.kind {
            LabelKind::Id => (ID_ROW_FLAG, ID_ROW_TIME),
            LabelKind::Message { seconds, line } => {
                if !(seconds.is_finite() && seconds <= TIME_MAX) {
                    return Err(LabelError::Time(seconds));
                }
                if MessageLine::from_flag(line.flag()) != Some(line) {
                    return Err(LabelError::Line(line.flag()));
                }
                (line.flag(), seconds)
            }
        };
        Ok(CopterMsg {
            copter_id: self.copter_id,
            disp_flag,
            rgb: self.rgb.map(i32::from),
            disp_time,
            font_size: self.size,
            text: self.text.clone(),
        })
    }

    /// The label a message sets, as RflySim3D reads it: a row past the five
    /// is a new one, a colour component is taken within 0–255.
    pub fn from_message(m: &CopterMsg) -> VehicleLabel {
        let kind = match m.disp_flag {
            ID_ROW_FLAG => LabelKind::Id,
            flag => LabelKind::Message {
                seconds: m.disp_time,
                line: MessageLine::from_flag(flag).unwrap_or(MessageLine::New),
            },
        };
        VehicleLabel {
            copter_id: m.copter_id,
            kind,
            text: m.text.clone(),
            rgb: m.rgb.map(|c| c.clamp(0, 255) as u8),
            size: m.font_size,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_label(text: &str) -> VehicleLabel {
        VehicleLabel {
            copter_id: 1000,
            kind: LabelKind::Id,
            text: text.into(),
            rgb: [0xFF, 0xFF, 0],
            size: 20.0,
        }
    }

    /// `struct.pack("<6i2f120s", 1234567899, CopterID, dispFlag, R, G, B, dispTime, fontSize, text)`.
    fn sdk_copter_msg(id: i32, flag: i32, rgb: [i32; 3], time: f32, size: f32, text: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [1_234_567_899, id, flag, rgb[0], rgb[1], rgb[2]] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&time.to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(text);
        b.resize(152, 0);
        b
    }

    #[test]
    fn an_id_label_is_the_sdk_s_send_ue4_label_id() {
        // sendUE4LabelID(1000, "Hi", 20, [255, 255, 0]): dispFlag 0, dispTime 1.
        let sdk = sdk_copter_msg(1000, 0, [255, 255, 0], 1.0, 20.0, b"Hi");
        #[rustfmt::skip]
        let head = [
            0xDB, 0x02, 0x96, 0x49, 0xE8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x00, 0x00,
            0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0xA0, 0x41,
            b'H', b'i',
        ];
        assert_eq!(&sdk[..34], &head);
        let m = id_label("Hi").message().unwrap();
        assert_eq!(m.encode(), sdk);
        assert_eq!(CopterMsg::decode(&sdk).unwrap(), m);
        assert_eq!(VehicleLabel::from_message(&m), id_label("Hi"));
    }

    #[test]
    fn message_lines_are_numbered_as_the_sdk_numbers_them() {
        let message = |seconds, line| VehicleLabel {
            kind: LabelKind::Message { seconds, line },
            rgb: [255, 0, 255],
            size: 12.5,
            ..id_label("battery 80% \"ok\" | \\ é")
        };
        let text = "battery 80% \"ok\" | \\ é".as_bytes();
        for (line, flag) in [
            (MessageLine::New, -1),
            (MessageLine::Line(1), 1),
            (MessageLine::Line(5), 5),
        ] {
            let label = message(5.0, line);
            let sdk = sdk_copter_msg(1000, flag, [255, 0, 255], 5.0, 12.5, text);
            assert_eq!(label.message().unwrap().encode(), sdk, "{line:?}");
            assert_eq!(VehicleLabel::from_message(&CopterMsg::decode(&sdk).unwrap()), label);
        }
        // Row 0 is the ID row; past five RflySim3D shows none.
        for n in [0, 6] {
            assert_eq!(
                message(5.0, MessageLine::Line(n)).message(),
                Err(LabelError::Line(i32::from(n)))
            );
        }
        assert!(LabelError::Line(0).to_string().contains("ID row"));
        // 0: for good; negative: the row goes.
        assert_eq!(message(0.0, MessageLine::Line(2)).message().unwrap().disp_time, 0.0);
        assert_eq!(message(-1.0, MessageLine::New).message().unwrap().disp_time, -1.0);
        // A flag past the rows RflySim3D shows adds one, as it does.
        let past = CopterMsg {
            disp_flag: 9,
            ..message(1.0, MessageLine::New).message().unwrap()
        };
        assert_eq!(VehicleLabel::from_message(&past), message(1.0, MessageLine::New));
    }

    #[test]
    fn the_text_is_utf8_in_the_120_byte_field_with_its_nul() {
        let longest = "é".repeat(59) + "w";
        assert_eq!(longest.len(), TEXT_MAX);
        let b = id_label(&longest).message().unwrap().encode();
        assert_eq!((b.len(), &b[32..151], b[151]), (152, longest.as_bytes(), 0));
        assert_eq!(
            id_label(&"w".repeat(TEXT_MAX + 1)).message(),
            Err(LabelError::TextTooLong { len: TEXT_MAX + 1 })
        );
        for (bad, at) in [("a\0b", 1), ("line\nbreak", 4), ("tab\there", 3), ("del\x7f", 3)] {
            assert!(
                matches!(id_label(bad).message(), Err(LabelError::TextControl { at: a, .. }) if a == at),
                "{bad:?}"
            );
        }
        assert!(check_label_text("").is_ok());
    }

    #[test]
    fn colours_sizes_times_and_vehicles_are_range_checked() {
        assert_eq!(rgb_from_unit(1.0, 0.5, 0.0), Ok([255, 128, 0]));
        assert!(matches!(
            rgb_from_unit(1.5, 0.0, 0.0),
            Err(LabelError::Colour { component: "r", .. })
        ));
        assert!(rgb_from_unit(0.0, f32::NAN, 0.0).is_err());
        assert!(rgb_from_unit(0.0, 0.0, -0.1).is_err());
        for size in [0.0, -1.0, f32::NAN, f32::INFINITY, 1000.5] {
            let refused = VehicleLabel { size, ..id_label("x") }.message();
            assert!(matches!(refused, Err(LabelError::Size(_))), "{size}: {refused:?}");
        }
        for seconds in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, TIME_MAX + 1.0] {
            let m = VehicleLabel {
                kind: LabelKind::Message {
                    seconds,
                    line: MessageLine::New,
                },
                ..id_label("x")
            };
            assert!(matches!(m.message(), Err(LabelError::Time(_))), "{seconds}");
        }
        for id in [0, -3] {
            assert_eq!(
                VehicleLabel {
                    copter_id: id,
                    ..id_label("x")
                }
                .message(),
                Err(LabelError::CopterId(id))
            );
        }
        assert_eq!(MessageLine::from_flag(-7), Some(MessageLine::New));
        assert_eq!(MessageLine::from_flag(0), None);
        assert_eq!(MessageLine::from_flag(6), None);
    }

    #[test]
    fn a_datagram_of_another_length_or_checksum_is_not_a_label() {
        let good = id_label("x").message().unwrap().encode();
        assert!(matches!(
            CopterMsg::decode(&good[..151]),
            Err(DecodeError::Length { .. })
        ));
        let mut wrong = good.clone();
        wrong[0] ^= 1;
        assert!(matches!(CopterMsg::decode(&wrong), Err(DecodeError::Checksum { .. })));
    }
}
