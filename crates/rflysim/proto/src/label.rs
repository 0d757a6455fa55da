//! RflySim3D's labels over a vehicle, two console commands (RflySim3D's
//! console reference; its personal advanced edition and up):
//!
//! - `RflySetIDLabel CopterID "Text" RRGGBB size`: the text at the vehicle's
//!   ID position, in place of the CopterID RflySim3D shows there;
//! - `RflySetMsgLabel CopterID "Text" RRGGBB size time flag`: a message
//!   line below it for `time` seconds; RflySim3D keeps 5 lines, `flag` < 0
//!   adds a new one, else names the line to set.
//!
//! A label is checked whole before it becomes a command
//! ([`VehicleLabel::command`]): the text must survive the trip through
//! Unreal's console as one quoted argument, the colour and numbers must be
//! in range. [`VehicleLabel::parse`] reads a command back (the emulator).

use std::fmt;

use crate::console::{CommandTextError, ConsoleCommand};

const SET_ID_LABEL: &str = "RflySetIDLabel";
const SET_MSG_LABEL: &str = "RflySetMsgLabel";

/// The longest label text taken, in bytes: the longest message command
/// then still fits RflySim3D's 251-byte console text.
pub const TEXT_MAX: usize = 128;
/// Text sizes taken: RflySim3D's reference uses 20.
pub const SIZE_RANGE: std::ops::RangeInclusive<f32> = 0.1..=1000.0;
/// Display times of a message, seconds.
pub const TIME_RANGE: std::ops::RangeInclusive<f32> = 0.01..=86_400.0;
/// RflySim3D shows this many message lines.
pub const MESSAGE_LINES: i32 = 5;

/// Which label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LabelKind {
    /// `RflySetIDLabel`.
    Id,
    /// `RflySetMsgLabel`, shown for `seconds`.
    Message { seconds: f32, line: MessageLine },
}

/// The `flag` of `RflySetMsgLabel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageLine {
    /// `flag` −1: a new line.
    New,
    /// `flag` 0…4: that line.
    Line(u8),
}

impl MessageLine {
    pub fn flag(self) -> i32 {
        match self {
            MessageLine::New => -1,
            MessageLine::Line(n) => i32::from(n),
        }
    }

    /// The line a flag names; `None` at or past [`MESSAGE_LINES`].
    pub fn from_flag(flag: i32) -> Option<Self> {
        match flag {
            f if f < 0 => Some(MessageLine::New),
            f if f < MESSAGE_LINES => Some(MessageLine::Line(f as u8)),
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
    /// A byte the console would not carry inside a quoted text, at this offset.
    TextByte {
        at: usize,
        byte: u8,
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
    /// The command the label makes is refused (it should not be, once the above pass).
    Command(CommandTextError),
}

impl fmt::Display for LabelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LabelError::TextTooLong { len } => write!(f, "text of {len} bytes: at most {TEXT_MAX}"),
            LabelError::TextByte { at, byte: b'"' } => {
                write!(f, "a '\"' at {at}: it would end RflySim3D's quoted text")
            }
            LabelError::TextByte { at, byte: b'|' } => write!(
                f,
                "a '|' at {at}: Unreal's console would run what follows as another command"
            ),
            LabelError::TextByte { at, byte: b'\\' } => write!(
                f,
                "a '\\' at {at}: Unreal's console reads it as an escape in a quoted text"
            ),
            LabelError::TextByte { at, byte } if byte.is_ascii() => {
                write!(f, "a control character (0x{byte:02x}) at {at}: printable ASCII only")
            }
            LabelError::TextByte { at, .. } => write!(f, "a byte outside ASCII at {at}: printable ASCII only"),
            LabelError::Colour { component, value } => {
                write!(f, "colour {component} = {value}: 0 to 1")
            }
            LabelError::Size(s) => write!(f, "size {s}: {} to {}", SIZE_RANGE.start(), SIZE_RANGE.end()),
            LabelError::Time(t) => write!(
                f,
                "display time {t} s: {} to {} s",
                TIME_RANGE.start(),
                TIME_RANGE.end()
            ),
            LabelError::Line(l) => write!(
                f,
                "line {l}: 0 to {} (RflySim3D shows {MESSAGE_LINES}), or −1 for a new one",
                MESSAGE_LINES - 1
            ),
            LabelError::Kind(k) => write!(f, "kind {k}: 0 (the ID label) or 1 (a message line)"),
            LabelError::Command(ref e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LabelError {}

/// `text` if RflySim3D's console carries it whole as a quoted label text:
/// at most [`TEXT_MAX`] bytes of printable ASCII, without `"` (it would end
/// the quoted text), `|` (Unreal's console chains commands at it) or `\`
/// (an escape in Unreal's quoted texts). Empty is fine.
pub fn check_label_text(text: &str) -> Result<(), LabelError> {
    if text.len() > TEXT_MAX {
        return Err(LabelError::TextTooLong { len: text.len() });
    }
    match text
        .bytes()
        .position(|b| !(b' '..=b'~').contains(&b) || matches!(b, b'"' | b'|' | b'\\'))
    {
        Some(at) => Err(LabelError::TextByte {
            at,
            byte: text.as_bytes()[at],
        }),
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

fn hex(rgb: [u8; 3]) -> String {
    format!("{:02X}{:02X}{:02X}", rgb[0], rgb[1], rgb[2])
}

impl VehicleLabel {
    /// The checks, then the command.
    pub fn command(&self) -> Result<ConsoleCommand, LabelError> {
        check_label_text(&self.text)?;
        if !SIZE_RANGE.contains(&self.size) {
            return Err(LabelError::Size(self.size));
        }
        let text = match self.kind {
            LabelKind::Id => format!(
                "{SET_ID_LABEL} {} \"{}\" {} {}",
                self.copter_id,
                self.text,
                hex(self.rgb),
                self.size
            ),
            LabelKind::Message { seconds, line } => {
                if !TIME_RANGE.contains(&seconds) {
                    return Err(LabelError::Time(seconds));
                }
                if MessageLine::from_flag(line.flag()) != Some(line) {
                    return Err(LabelError::Line(line.flag()));
                }
                format!(
                    "{SET_MSG_LABEL} {} \"{}\" {} {} {} {}",
                    self.copter_id,
                    self.text,
                    hex(self.rgb),
                    self.size,
                    seconds,
                    line.flag()
                )
            }
        };
        ConsoleCommand::new(text).map_err(LabelError::Command)
    }

    /// The label a console command sets; `None` for any other command or
    /// one RflySim3D could not read (verbs matched without regard to case).
    pub fn parse(text: &str) -> Option<VehicleLabel> {
        let text = text.trim();
        let (verb, rest) = text.split_once(char::is_whitespace)?;
        let id_label = verb.eq_ignore_ascii_case(SET_ID_LABEL);
        if !id_label && !verb.eq_ignore_ascii_case(SET_MSG_LABEL) {
            return None;
        }
        let (id, rest) = rest.trim_start().split_once(char::is_whitespace)?;
        let copter_id: i32 = id.parse().ok()?;
        let (label, after) = rest.trim_start().strip_prefix('"')?.split_once('"')?;
        let mut words = after.split_whitespace();
        let colour = words.next()?;
        if colour.len() != 6 {
            return None;
        }
        let rgb_value = u32::from_str_radix(colour, 16).ok()?;
        let [_, r, g, b] = rgb_value.to_be_bytes();
        let size: f32 = words.next()?.parse().ok().filter(|s: &f32| s.is_finite())?;
        let kind = if id_label {
            LabelKind::Id
        } else {
            let seconds: f32 = words.next()?.parse().ok().filter(|s: &f32| s.is_finite())?;
            let line = MessageLine::from_flag(words.next()?.parse().ok()?)?;
            LabelKind::Message { seconds, line }
        };
        Some(VehicleLabel {
            copter_id,
            kind,
            text: label.to_string(),
            rgb: [r, g, b],
            size,
        })
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

    #[test]
    fn labels_are_written_as_rflysim3d_s_reference_writes_them_and_read_back() {
        let id = id_label("Hi, here's the test string");
        let c = id.command().unwrap();
        assert_eq!(c.text(), "RflySetIDLabel 1000 \"Hi, here's the test string\" FFFF00 20");
        assert_eq!(VehicleLabel::parse(c.text()), Some(id));
        let msg = VehicleLabel {
            copter_id: 1000,
            kind: LabelKind::Message {
                seconds: 5.0,
                line: MessageLine::New,
            },
            text: "Hi, here's the test string2".into(),
            rgb: [0xFF, 0, 0xFF],
            size: 20.0,
        };
        let c = msg.command().unwrap();
        assert_eq!(
            c.text(),
            "RflySetMsgLabel 1000 \"Hi, here's the test string2\" FF00FF 20 5 -1"
        );
        assert_eq!(VehicleLabel::parse(c.text()), Some(msg));
        let line2 = VehicleLabel {
            kind: LabelKind::Message {
                seconds: 2.5,
                line: MessageLine::Line(2),
            },
            size: 12.5,
            ..id_label("")
        };
        let c = line2.command().unwrap();
        assert_eq!(c.text(), "RflySetMsgLabel 1000 \"\" FFFF00 12.5 2.5 2");
        assert_eq!(VehicleLabel::parse(c.text()), Some(line2));
        // The longest text, in the longest message command, fits the console.
        let longest = VehicleLabel {
            copter_id: i32::MIN,
            kind: LabelKind::Message {
                seconds: 0.01,
                line: MessageLine::New,
            },
            size: 0.1,
            ..id_label(&"w".repeat(TEXT_MAX))
        };
        assert!(longest.command().is_ok());
    }

    #[test]
    fn texts_the_console_would_split_or_misread_are_refused_with_the_reason() {
        assert!(check_label_text("").is_ok());
        assert!(check_label_text("a-b_c: 1.5 m (ok) // fine inside quotes").is_ok());
        for (bad, byte) in [
            ("say \"hi\"", b'"'),
            ("a | RflyDelVehicles 1", b'|'),
            ("back\\slash", b'\\'),
            ("line\nbreak", b'\n'),
            ("tab\there", b'\t'),
            ("del\x7f", 0x7f),
        ] {
            let e = check_label_text(bad).unwrap_err();
            assert!(
                matches!(e, LabelError::TextByte { byte: b, .. } if b == byte),
                "{bad:?}: {e}"
            );
            assert!(id_label(bad).command().is_err());
        }
        assert!(matches!(
            check_label_text("caf\u{e9}"),
            Err(LabelError::TextByte { at: 3, .. })
        ));
        assert_eq!(
            check_label_text(&"x".repeat(TEXT_MAX + 1)),
            Err(LabelError::TextTooLong { len: TEXT_MAX + 1 })
        );
    }

    #[test]
    fn colours_sizes_times_and_lines_are_range_checked() {
        assert_eq!(rgb_from_unit(1.0, 0.5, 0.0), Ok([255, 128, 0]));
        assert!(matches!(
            rgb_from_unit(1.5, 0.0, 0.0),
            Err(LabelError::Colour { component: "r", .. })
        ));
        assert!(rgb_from_unit(0.0, f32::NAN, 0.0).is_err());
        assert!(rgb_from_unit(0.0, 0.0, -0.1).is_err());
        for size in [0.0, -1.0, f32::NAN, f32::INFINITY, 1000.5] {
            let refused = VehicleLabel { size, ..id_label("x") }.command();
            assert!(matches!(refused, Err(LabelError::Size(_))), "{size}: {refused:?}");
        }
        let message = |seconds, line| VehicleLabel {
            kind: LabelKind::Message { seconds, line },
            ..id_label("x")
        };
        assert!(message(0.0, MessageLine::New).command().is_err());
        assert!(message(f32::NAN, MessageLine::New).command().is_err());
        assert!(message(1.0, MessageLine::Line(5)).command().is_err());
        assert!(message(1.0, MessageLine::Line(4)).command().is_ok());
        assert_eq!(MessageLine::from_flag(-7), Some(MessageLine::New));
        assert_eq!(MessageLine::from_flag(5), None);
    }

    #[test]
    fn the_parser_reads_only_labels_rflysim3d_could_read() {
        assert_eq!(
            VehicleLabel::parse("rflysetidlabel 3 \"a b\" 00ff00 8").map(|l| (l.copter_id, l.rgb, l.text)),
            Some((3, [0, 255, 0], "a b".to_string()))
        );
        for other in [
            "RflySetIDLabel",
            "RflySetIDLabel x \"a\" FF0000 20",
            "RflySetIDLabel 1 a FF0000 20",
            "RflySetIDLabel 1 \"a FF0000 20",
            "RflySetIDLabel 1 \"a\" FF00 20",
            "RflySetIDLabel 1 \"a\" GG0000 20",
            "RflySetIDLabel 1 \"a\" FF0000 NaN",
            "RflySetMsgLabel 1 \"a\" FF0000 20 5",
            "RflySetMsgLabel 1 \"a\" FF0000 20 5 9",
            "RflyShowTextTime \"a\" 5",
        ] {
            assert_eq!(VehicleLabel::parse(other), None, "{other:?}");
        }
    }
}
