//! RflySim3D's text console commands (`Ue4CMD`, RflySim's SDK:
//! VisionSensorReq; RflySim's Python SDK `UE4CtrlAPI`,
//! rflysim.com/doc/en/4.DevRef/pysdk/ue/ue4ctrl.html): a checked text,
//! the verbs the bridge and the SDK send, built from a typed request, and
//! their parser for the emulator. They go to the window's request port as
//! `<i52s>` for up to 51 bytes of text and as `<i252s>` for longer ones.
//!
//! RflySim3D runs a text through Unreal's console, which splits it into
//! commands as `FParse::Line` does ([`console_lines`]): at a line break, at a
//! `|` outside quotes (one command after another), and drops what follows a
//! `//` outside quotes. A [`ConsoleCommand`] is a text read as one command,
//! whole; a name put into one passes [`check_name`].

use std::fmt;

use crate::error::DecodeError;
use crate::wire::{Fields, Writer};

/// The checksum of a text console command.
pub const CONSOLE_CHECKSUM: i32 = 1_234_567_890;

/// A command text RflySim3D can read, and reads as one command: ASCII,
/// without NUL (RflySim3D reads up to the first one) or another control
/// character, at most [`ConsoleCommand::LONG_TEXT_MAX`] bytes, and what
/// Unreal's console reads as itself alone ([`console_lines`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleCommand(String);

/// Why a command text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandTextError {
    /// A byte outside ASCII, at this offset.
    NotAscii {
        at: usize,
    },
    /// A NUL at this offset: RflySim3D would read the text only up to it.
    Nul {
        at: usize,
    },
    /// Another control character (a line break, a tab, …) at this offset.
    Control {
        at: usize,
        byte: u8,
    },
    /// Unreal's console would not run the text as it is: it would run these
    /// commands (a `|` outside quotes chains two; `//` outside quotes drops the rest).
    NotOneCommand {
        read_as: Vec<String>,
    },
    TooLong {
        len: usize,
        max: usize,
    },
    /// An argument RflySim3D would not read back as meant (a quote inside a
    /// quoted text, not finite).
    BadArgument {
        verb: &'static str,
        detail: String,
    },
    /// A name RflySim3D's console or its replies cannot carry.
    BadName {
        verb: &'static str,
        name: String,
        why: NameError,
    },
}

impl fmt::Display for CommandTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandTextError::NotAscii { at } => write!(f, "console command: a byte outside ASCII at {at}"),
            CommandTextError::Nul { at } => write!(f, "console command: a NUL at {at}"),
            CommandTextError::Control { at, byte } => {
                write!(f, "console command: a control character (0x{byte:02x}) at {at}")
            }
            CommandTextError::NotOneCommand { read_as } => write!(
                f,
                "console command: RflySim3D's console would run {read_as:?} ('|' chains commands, '//' drops the rest, \
                 outside quotes): send one command a call"
            ),
            CommandTextError::TooLong { len, max } => write!(f, "console command: {len} bytes, at most {max}"),
            CommandTextError::BadArgument { verb, detail } => write!(f, "{verb}: {detail}"),
            CommandTextError::BadName { verb, name, why } => write!(f, "{verb}: name {name:?}: {why}"),
        }
    }
}

impl std::error::Error for CommandTextError {}

impl ConsoleCommand {
    /// The most text the 56-byte form carries: its 52-byte field keeps a NUL.
    pub const SHORT_TEXT_MAX: usize = 51;
    /// The most text the SDK's `sendUE4Cmd` puts in the 256-byte form (its
    /// 252-byte field would hold 251 and a NUL): RflySim3D is known to read that much.
    pub const LONG_TEXT_MAX: usize = 249;
    /// `<i52s>`.
    pub const SHORT_LEN: usize = 56;
    /// `<i252s>`.
    pub const LONG_LEN: usize = 256;

    /// The text, or why RflySim3D could not read it.
    pub fn new(text: impl Into<String>) -> Result<Self, CommandTextError> {
        let text = text.into();
        if let Some(at) = text.bytes().position(|b| !b.is_ascii()) {
            return Err(CommandTextError::NotAscii { at });
        }
        if let Some(at) = text.bytes().position(|b| b == 0) {
            return Err(CommandTextError::Nul { at });
        }
        if let Some(at) = text.bytes().position(|b| b.is_ascii_control()) {
            let byte = text.as_bytes()[at];
            return Err(CommandTextError::Control { at, byte });
        }
        if text.len() > Self::LONG_TEXT_MAX {
            return Err(CommandTextError::TooLong {
                len: text.len(),
                max: Self::LONG_TEXT_MAX,
            });
        }
        let read_as = console_lines(&text);
        if read_as != [text.as_str()] {
            return Err(CommandTextError::NotOneCommand { read_as });
        }
        Ok(Self(text))
    }

    pub fn text(&self) -> &str {
        &self.0
    }

    pub fn fits_short_form(&self) -> bool {
        self.0.len() <= Self::SHORT_TEXT_MAX
    }

    /// The datagram: the 56-byte form when the text fits it, else the 256-byte one.
    pub fn encode(&self) -> Vec<u8> {
        let len = if self.fits_short_form() {
            Self::SHORT_LEN
        } else {
            Self::LONG_LEN
        };
        let mut w = Writer::with_capacity(len);
        w.i32(CONSOLE_CHECKSUM).text(&self.0, len - 4);
        w.finish()
    }
}

/// A text console command (e.g. `RflyReqObjData 0 2 0`) as a datagram; `None`
/// when RflySim3D could not read it ([`ConsoleCommand::new`] says why).
pub fn console_command(text: &str) -> Option<Vec<u8>> {
    ConsoleCommand::new(text).ok().map(|c| c.encode())
}

/// Reads a console command back (for the emulator): either form, up to the
/// first NUL; bytes that are not UTF-8 read as U+FFFD.
pub fn decode_console_command(p: &[u8]) -> Result<String, DecodeError> {
    const WHAT: &str = "console command";
    if p.len() != ConsoleCommand::SHORT_LEN && p.len() != ConsoleCommand::LONG_LEN {
        return Err(DecodeError::length(WHAT, p.len(), "56 or 256"));
    }
    let f = Fields(p);
    let got = f.i32(0);
    if got != CONSOLE_CHECKSUM {
        return Err(DecodeError::Checksum {
            what: WHAT,
            got: i64::from(got),
        });
    }
    Ok(f.text(4, p.len() - 4))
}

/// The commands Unreal's console runs for `text`, in order, as its
/// `FParse::Line` splits a line: a command ends at NUL, CR, LF or a `|`
/// outside double quotes (the separators after it are skipped); from a `//`
/// outside quotes, the rest of that command is dropped. Empty commands are
/// left out (they run nothing).
pub fn console_lines(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let mut commands = Vec::new();
    let mut i = 0;
    while i < end {
        let (mut quoted, mut comment) = (false, false);
        let mut command = Vec::new();
        while i < end && b[i] != b'\n' && b[i] != b'\r' {
            if !quoted && b[i..end].starts_with(b"//") {
                comment = true;
            }
            if !quoted && b[i] == b'|' {
                break;
            }
            quoted ^= b[i] == b'"';
            if !comment {
                command.push(b[i]);
            }
            i += 1;
        }
        while i < end && matches!(b[i], b'\n' | b'\r' | b'|') {
            i += 1;
        }
        if !command.is_empty() {
            commands.push(String::from_utf8_lossy(&command).into_owned());
        }
    }
    commands
}

/// The longest name a command carries: `ObjReqData` answers with the name
/// in a 32-byte field, which keeps a NUL (a longer name would come back cut,
/// and never match).
pub const NAME_MAX: usize = crate::scene::ObjectData::NAME_LEN - 1;

/// Why a name cannot go into a console command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    Empty,
    TooLong {
        len: usize,
    },
    /// A byte that would change how the console splits the command, at this offset.
    Byte {
        at: usize,
        byte: u8,
    },
    /// `//` at this offset: the console drops the rest of the command.
    Comment {
        at: usize,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NameError::Empty => write!(f, "empty"),
            NameError::TooLong { len } => write!(
                f,
                "{len} bytes, at most {NAME_MAX} (RflySim3D answers with names in a 32-byte field)"
            ),
            NameError::Byte { at, byte: b'|' } => write!(
                f,
                "'|' at {at}: RflySim3D's console would run what follows as a command of its own"
            ),
            NameError::Byte { at, byte: b'"' } => {
                write!(
                    f,
                    "'\"' at {at}: it would change where RflySim3D's console splits commands"
                )
            }
            NameError::Byte { at, byte: b' ' } => write!(f, "a space at {at}: a name is one word"),
            NameError::Byte { at, byte } if byte.is_ascii_control() => write!(
                f,
                "a control character (0x{byte:02x}) at {at} (CR and LF end a command)"
            ),
            NameError::Byte { at, .. } => write!(f, "a byte outside ASCII at {at}"),
            NameError::Comment { at } => write!(f, "'//' at {at}: RflySim3D's console would drop the rest"),
        }
    }
}

impl std::error::Error for NameError {}

/// `name` if it can be the name argument of a console command (an object,
/// a map): one word of printable ASCII, without `"` or `|`, without `//`,
/// 1 to [`NAME_MAX`] bytes. Every name the bridge puts on the wire passes here.
pub fn check_name(name: &str) -> Result<&str, NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some(at) = name
        .bytes()
        .position(|b| !b.is_ascii_graphic() || b == b'"' || b == b'|')
    {
        return Err(NameError::Byte {
            at,
            byte: name.as_bytes()[at],
        });
    }
    if let Some(at) = name.find("//") {
        return Err(NameError::Comment { at });
    }
    if name.len() > NAME_MAX {
        return Err(NameError::TooLong { len: name.len() });
    }
    Ok(name)
}

/// The console command that asks RflySim3D for the `CameraData` of sensor
/// `seq_id` on its status port (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq; RflySim's vision protocol, rflysim.com/doc/en/4.DevRef/vis-comm.html, section 2.2).
pub fn camera_data_command(seq_id: u16) -> String {
    format!("{REQ_OBJ_DATA} {} {seq_id} 0", obj_op::CAMERA)
}

const REQ_OBJ_DATA: &str = "RflyReqObjData";
const CLEAR_CAPTURE: &str = "RflyClearCapture";
const REQ_VEHICLE_DATA: &str = "RflyReqVehicleData";
const DEL_VEHICLES: &str = "RflyDelVehicles";
const CHANGE_MAP_BY_NAME: &str = "RflyChangeMapbyName";
const CHANGE_MAP_BY_ID: &str = "RflyChangeMapbyID";
const SET_POS_SCALE: &str = "RflySetPosScale";
const SHOW_TEXT_TIME: &str = "RflyShowTextTime";

/// `RflyReqObjData`'s first argument, its `opFlag` (as `UE4CtrlAPI`'s
/// `reqObjData` sends it): ask for one item, delete one (10 + the asking
/// code), or clear a kind.
mod obj_op {
    pub const CAMERA: i32 = 0;
    pub const VEHICLE: i32 = 1;
    pub const OBJECT: i32 = 2;
    pub const DELETE: i32 = 10;
    pub const CLEAR_CAMERAS: i32 = 20;
    pub const CLEAR_VEHICLES: i32 = 21;
    pub const CLEAR_OBJECTS: i32 = 22;
    pub const CLEAR_VEHICLES_AND_OBJECTS: i32 = 23;
    pub const CLEAR_ALL: i32 = 24;
}

/// One thing of the scene `RflyReqObjData` names: a camera by SeqID, a
/// vehicle by CopterID, an object by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SceneItem {
    Camera(u16),
    Vehicle(i32),
    Object(String),
}

impl SceneItem {
    /// The `opFlag` that asks for an item of this kind.
    fn op(&self) -> i32 {
        match self {
            SceneItem::Camera(_) => obj_op::CAMERA,
            SceneItem::Vehicle(_) => obj_op::VEHICLE,
            SceneItem::Object(_) => obj_op::OBJECT,
        }
    }

    fn parse(op: i32, name: &str) -> Option<SceneItem> {
        match op {
            obj_op::CAMERA => name.parse().ok().map(SceneItem::Camera),
            obj_op::VEHICLE => name.parse().ok().map(SceneItem::Vehicle),
            obj_op::OBJECT => Some(SceneItem::Object(name.to_string())),
            _ => None,
        }
    }

    fn name(&self) -> String {
        match self {
            SceneItem::Camera(seq) => seq.to_string(),
            SceneItem::Vehicle(id) => id.to_string(),
            SceneItem::Object(name) => name.clone(),
        }
    }
}

/// What `RflyReqObjData 20`…`24` clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClearScope {
    Cameras,
    Vehicles,
    Objects,
    VehiclesAndObjects,
    All,
}

impl ClearScope {
    fn op(self) -> i32 {
        match self {
            ClearScope::Cameras => obj_op::CLEAR_CAMERAS,
            ClearScope::Vehicles => obj_op::CLEAR_VEHICLES,
            ClearScope::Objects => obj_op::CLEAR_OBJECTS,
            ClearScope::VehiclesAndObjects => obj_op::CLEAR_VEHICLES_AND_OBJECTS,
            ClearScope::All => obj_op::CLEAR_ALL,
        }
    }

    fn from_op(op: i32) -> Option<ClearScope> {
        [
            ClearScope::Cameras,
            ClearScope::Vehicles,
            ClearScope::Objects,
            ClearScope::VehiclesAndObjects,
            ClearScope::All,
        ]
        .into_iter()
        .find(|s| s.op() == op)
    }

    pub fn cameras(self) -> bool {
        matches!(self, ClearScope::Cameras | ClearScope::All)
    }

    pub fn vehicles(self) -> bool {
        matches!(
            self,
            ClearScope::Vehicles | ClearScope::VehiclesAndObjects | ClearScope::All
        )
    }

    pub fn objects(self) -> bool {
        matches!(
            self,
            ClearScope::Objects | ClearScope::VehiclesAndObjects | ClearScope::All
        )
    }
}

/// What a console command asks of RflySim3D, as far as the bridge sends it
/// and the emulator acts on it. [`ConsoleRequest::commands`] builds the text,
/// [`ConsoleRequest::parse`] reads it back.
#[derive(Debug, Clone, PartialEq)]
pub enum ConsoleRequest {
    /// `RflyReqObjData 0 <SeqID> 0`: send that camera's `CameraData`.
    CameraData(u16),
    /// `RflyClearCapture`: stop every `CameraData`.
    ClearCapture,
    /// `RflyReqVehicleData 1` / `0`: send (or stop sending) every vehicle's
    /// `reqVeCrashData` when it changes and at least once a second.
    VehicleDataPostback(bool),
    /// `RflyReqObjData 1 <CopterID> 0`: send that vehicle's `CoptReqData`.
    VehicleData(i32),
    /// `RflyReqObjData 2 <name> 0`: send that object's `ObjReqData`.
    ObjectData(String),
    /// `RflyReqObjData 10|11|12 <name> 0`: delete one camera, vehicle or object.
    Delete(SceneItem),
    /// `RflyReqObjData 20`…`24`.
    Clear(ClearScope),
    /// `RflyDelVehicles 1,2,…`: remove these vehicles (data arriving for one
    /// again creates it again).
    DelVehicles(Vec<i32>),
    /// `RflyChangeMapbyName <name>`.
    ChangeMapByName(String),
    /// `RflyChangeMapbyID <n>`.
    ChangeMapById(i32),
    /// `RflySetPosScale <s>`: RflySim3D multiplies every position it receives by `s`.
    SetPosScale(f32),
    /// `RflyShowTextTime "<text>" <seconds>`.
    ShowTextTime { text: String, seconds: f32 },
}

/// `name` as the name argument of `verb`, or why it cannot be one.
fn name_argument<'a>(verb: &'static str, name: &'a str) -> Result<&'a str, CommandTextError> {
    check_name(name).map_err(|why| CommandTextError::BadName {
        verb,
        name: name.to_string(),
        why,
    })
}

fn finite(verb: &'static str, v: f32) -> Result<f32, CommandTextError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(CommandTextError::BadArgument {
            verb,
            detail: format!("{v} is not finite"),
        })
    }
}

impl ConsoleRequest {
    /// The command texts that carry the request: one, but for
    /// `RflyDelVehicles`, split so that each fits the 56-byte form (none for
    /// no vehicle).
    pub fn commands(&self) -> Result<Vec<ConsoleCommand>, CommandTextError> {
        let text = match self {
            ConsoleRequest::CameraData(seq) => camera_data_command(*seq),
            ConsoleRequest::ClearCapture => CLEAR_CAPTURE.to_string(),
            ConsoleRequest::VehicleDataPostback(on) => format!("{REQ_VEHICLE_DATA} {}", i32::from(*on)),
            ConsoleRequest::VehicleData(id) => format!("{REQ_OBJ_DATA} {} {id} 0", obj_op::VEHICLE),
            ConsoleRequest::ObjectData(name) => {
                format!(
                    "{REQ_OBJ_DATA} {} {} 0",
                    obj_op::OBJECT,
                    name_argument(REQ_OBJ_DATA, name)?
                )
            }
            ConsoleRequest::Delete(item) => {
                let name = item.name();
                format!(
                    "{REQ_OBJ_DATA} {} {} 0",
                    obj_op::DELETE + item.op(),
                    name_argument(REQ_OBJ_DATA, &name)?
                )
            }
            ConsoleRequest::Clear(scope) => format!("{REQ_OBJ_DATA} {} 0 0", scope.op()),
            ConsoleRequest::DelVehicles(ids) => return Ok(del_vehicles_commands(ids)),
            ConsoleRequest::ChangeMapByName(name) => {
                format!("{CHANGE_MAP_BY_NAME} {}", name_argument(CHANGE_MAP_BY_NAME, name)?)
            }
            ConsoleRequest::ChangeMapById(n) => format!("{CHANGE_MAP_BY_ID} {n}"),
            ConsoleRequest::SetPosScale(s) => format!("{SET_POS_SCALE} {}", finite(SET_POS_SCALE, *s)?),
            ConsoleRequest::ShowTextTime { text, seconds } => {
                if text.contains('"') {
                    return Err(CommandTextError::BadArgument {
                        verb: SHOW_TEXT_TIME,
                        detail: "a quote inside the text".into(),
                    });
                }
                format!("{SHOW_TEXT_TIME} \"{text}\" {}", finite(SHOW_TEXT_TIME, *seconds)?)
            }
        };
        Ok(vec![ConsoleCommand::new(text)?])
    }

    /// The request in a console command's text; `None` for any other
    /// command. Verbs are matched without regard to case, as RflySim3D's
    /// console does; arguments after those a verb reads are ignored.
    pub fn parse(text: &str) -> Option<ConsoleRequest> {
        let text = text.trim();
        let (verb, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let rest = rest.trim_start();
        let mut words = rest.split_whitespace();
        let is = |v: &str| verb.eq_ignore_ascii_case(v);
        if is(REQ_OBJ_DATA) {
            let op: i32 = words.next()?.parse().ok()?;
            let name = words.next();
            return match op {
                obj_op::CAMERA => name?.parse().ok().map(ConsoleRequest::CameraData),
                obj_op::VEHICLE => name?.parse().ok().map(ConsoleRequest::VehicleData),
                obj_op::OBJECT => Some(ConsoleRequest::ObjectData(name?.to_string())),
                _ if (obj_op::DELETE..obj_op::DELETE + 3).contains(&op) => {
                    SceneItem::parse(op - obj_op::DELETE, name?).map(ConsoleRequest::Delete)
                }
                _ => ClearScope::from_op(op).map(ConsoleRequest::Clear),
            };
        }
        if is(CLEAR_CAPTURE) {
            return Some(ConsoleRequest::ClearCapture);
        }
        if is(REQ_VEHICLE_DATA) {
            let on: i32 = words.next()?.parse().ok()?;
            return Some(ConsoleRequest::VehicleDataPostback(on != 0));
        }
        if is(DEL_VEHICLES) {
            let ids: Option<Vec<i32>> = words
                .next()?
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().ok())
                .collect();
            return ids.filter(|ids| !ids.is_empty()).map(ConsoleRequest::DelVehicles);
        }
        if is(CHANGE_MAP_BY_NAME) {
            return Some(ConsoleRequest::ChangeMapByName(words.next()?.to_string()));
        }
        if is(CHANGE_MAP_BY_ID) {
            return words.next()?.parse().ok().map(ConsoleRequest::ChangeMapById);
        }
        if is(SET_POS_SCALE) {
            let s: f32 = words.next()?.parse().ok()?;
            return s.is_finite().then_some(ConsoleRequest::SetPosScale(s));
        }
        if is(SHOW_TEXT_TIME) {
            // A quoted text may hold spaces; an unquoted one is one word.
            let (text, after) = match rest.strip_prefix('"') {
                Some(quoted) => quoted.split_once('"')?,
                None => rest.split_once(char::is_whitespace)?,
            };
            let seconds: f32 = after.split_whitespace().next()?.parse().ok()?;
            return seconds.is_finite().then(|| ConsoleRequest::ShowTextTime {
                text: text.to_string(),
                seconds,
            });
        }
        None
    }
}

/// `RflyDelVehicles` with `ids` comma-separated, as many commands as it
/// takes to keep each in the 56-byte form.
fn del_vehicles_commands(ids: &[i32]) -> Vec<ConsoleCommand> {
    let mut texts: Vec<String> = Vec::new();
    for id in ids {
        let id = id.to_string();
        match texts.last_mut() {
            Some(t) if t.len() + 1 + id.len() <= ConsoleCommand::SHORT_TEXT_MAX => {
                t.push(',');
                t.push_str(&id);
            }
            _ => texts.push(format!("{DEL_VEHICLES} {id}")),
        }
    }
    texts
        .into_iter()
        .map(|t| ConsoleCommand::new(t).expect("digits, commas and the verb fit the short form"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(r: &ConsoleRequest) -> Vec<String> {
        r.commands().unwrap().iter().map(|c| c.text().to_string()).collect()
    }

    #[test]
    fn console_commands() {
        let c = console_command("RflyReqObjData 0 2 0").unwrap();
        assert_eq!(c.len(), 56);
        assert_eq!(&c[0..4], &[0xD2, 0x02, 0x96, 0x49]);
        assert_eq!(&c[4..24], b"RflyReqObjData 0 2 0");
        assert!(c[24..].iter().all(|&b| b == 0));
        assert_eq!(decode_console_command(&c).unwrap(), "RflyReqObjData 0 2 0");
        assert_eq!(console_command(&"x".repeat(51)).unwrap().len(), 56);
        assert_eq!(console_command(&"x".repeat(52)).unwrap().len(), 256);
        assert!(console_command(&"x".repeat(250)).is_none());
    }

    /// `struct.pack("<i252s", 1234567890, text)`, the SDK's `Ue4CMD` for a
    /// text of 52 to 249 bytes: checksum, the text, zeros to 256 bytes.
    #[test]
    fn a_long_command_is_the_sdk_s_second_form() {
        for len in [52, 249] {
            let text = format!("RflyShowTextTime \"{}\" 5", "t".repeat(len - 21));
            assert_eq!(text.len(), len);
            let mut sdk = vec![0xD2, 0x02, 0x96, 0x49];
            sdk.extend_from_slice(text.as_bytes());
            sdk.resize(256, 0);
            assert_eq!(ConsoleCommand::new(text.clone()).unwrap().encode(), sdk, "{len} bytes");
            assert_eq!(decode_console_command(&sdk).unwrap(), text);
        }
        let over = format!("RflyShowTextTime \"{}\" 5", "t".repeat(250 - 21));
        assert_eq!(
            ConsoleCommand::new(over),
            Err(CommandTextError::TooLong { len: 250, max: 249 }),
            "beyond what the SDK sends"
        );
    }

    #[test]
    fn the_long_form_reads_back() {
        let text = format!("RflyShowTextTime \"{}\" 5", "a".repeat(200));
        let c = ConsoleCommand::new(text.clone()).unwrap();
        assert!(!c.fits_short_form());
        let bytes = c.encode();
        assert_eq!((bytes.len(), &bytes[..4]), (256, &CONSOLE_CHECKSUM.to_le_bytes()[..]));
        assert_eq!(decode_console_command(&bytes).unwrap(), text);
        let mut wrong = bytes.clone();
        wrong[0] ^= 1;
        assert!(matches!(
            decode_console_command(&wrong),
            Err(DecodeError::Checksum { .. })
        ));
        assert!(matches!(
            decode_console_command(&bytes[..255]),
            Err(DecodeError::Length { .. })
        ));
    }

    #[test]
    fn a_refused_text_says_why() {
        assert_eq!(
            ConsoleCommand::new("RflyShowTextTime \"é\" 5"),
            Err(CommandTextError::NotAscii { at: 18 })
        );
        assert_eq!(ConsoleCommand::new("a\0b"), Err(CommandTextError::Nul { at: 1 }));
        assert_eq!(
            ConsoleCommand::new("x".repeat(252)),
            Err(CommandTextError::TooLong { len: 252, max: 249 })
        );
        assert!(ConsoleRequest::ChangeMapByName("two words".into()).commands().is_err());
        assert!(ConsoleRequest::ObjectData(String::new()).commands().is_err());
        assert_eq!(
            ConsoleCommand::new("RflyShowTextTime a 1\nquit"),
            Err(CommandTextError::Control { at: 20, byte: b'\n' })
        );
        assert!(ConsoleRequest::SetPosScale(f32::NAN).commands().is_err());
        let quoted = ConsoleRequest::ShowTextTime {
            text: "say \"hi\"".into(),
            seconds: 1.0,
        };
        assert!(quoted.commands().unwrap_err().to_string().contains("quote"));
    }

    #[test]
    fn the_console_splits_as_unreal_s_does() {
        assert_eq!(
            console_lines("RflyReqObjData 2 x|quit 0"),
            ["RflyReqObjData 2 x", "quit 0"]
        );
        assert_eq!(console_lines("a||b\r\nc|"), ["a", "b", "c"]);
        assert_eq!(console_lines("say \"a|b\" 1|next"), ["say \"a|b\" 1", "next"]);
        assert_eq!(
            console_lines("a // note|b"),
            ["a ", "b"],
            "a comment ends at the next command"
        );
        assert_eq!(console_lines("say \"http://x\" 2"), ["say \"http://x\" 2"]);
        assert_eq!(console_lines("a\0|quit"), ["a"], "NUL ends the text");
        assert!(console_lines("").is_empty() && console_lines("|").is_empty());
    }

    #[test]
    fn a_command_is_what_the_console_reads_as_one() {
        assert!(ConsoleCommand::new("RflyShowTextTime \"a|b // c\" 5").is_ok());
        for chained in ["RflyReqObjData 2 x|quit 0", "RflyShowTextTime a 1 // b", "|quit", ""] {
            assert!(
                matches!(
                    ConsoleCommand::new(chained),
                    Err(CommandTextError::NotOneCommand { .. })
                ),
                "{chained:?}"
            );
        }
        let why = ConsoleCommand::new("a|quit").unwrap_err().to_string();
        assert!(why.contains("\"quit\""), "{why}");
    }

    #[test]
    fn names_are_one_word_the_console_and_the_replies_carry_whole() {
        for good in [
            "Building_1",
            "Landscape_1",
            "a-b.c",
            "x/y",
            "Cube(2)",
            &"n".repeat(NAME_MAX),
        ] {
            assert_eq!(check_name(good), Ok(good));
        }
        assert_eq!(check_name("x|quit"), Err(NameError::Byte { at: 1, byte: b'|' }));
        assert_eq!(check_name("a\"b"), Err(NameError::Byte { at: 1, byte: b'"' }));
        assert_eq!(check_name("a b"), Err(NameError::Byte { at: 1, byte: b' ' }));
        assert_eq!(check_name("a\nquit"), Err(NameError::Byte { at: 1, byte: b'\n' }));
        assert_eq!(check_name("a\tb"), Err(NameError::Byte { at: 1, byte: b'\t' }));
        assert_eq!(check_name("\u{e9}"), Err(NameError::Byte { at: 0, byte: 0xC3 }));
        assert_eq!(check_name("a//b"), Err(NameError::Comment { at: 1 }));
        assert_eq!(check_name(""), Err(NameError::Empty));
        assert_eq!(
            check_name(&"n".repeat(NAME_MAX + 1)),
            Err(NameError::TooLong { len: NAME_MAX + 1 })
        );
        assert_eq!(NAME_MAX, 31);
        // Every verb that carries a name refuses what the check refuses, and says why.
        for request in [
            ConsoleRequest::ObjectData("x|quit".into()),
            ConsoleRequest::Delete(SceneItem::Object("x|quit".into())),
            ConsoleRequest::ChangeMapByName("x|quit".into()),
        ] {
            let why = request.commands().unwrap_err().to_string();
            assert!(why.contains("'|' at 1"), "{request:?}: {why}");
        }
    }

    #[test]
    fn every_verb_is_built_as_the_sdk_and_the_document_write_it() {
        let cases = [
            (ConsoleRequest::CameraData(2), "RflyReqObjData 0 2 0"),
            (ConsoleRequest::ClearCapture, "RflyClearCapture"),
            (ConsoleRequest::VehicleDataPostback(true), "RflyReqVehicleData 1"),
            (ConsoleRequest::VehicleDataPostback(false), "RflyReqVehicleData 0"),
            (ConsoleRequest::VehicleData(1000), "RflyReqObjData 1 1000 0"),
            (
                ConsoleRequest::ObjectData("Landscape_1".into()),
                "RflyReqObjData 2 Landscape_1 0",
            ),
            (ConsoleRequest::Delete(SceneItem::Camera(3)), "RflyReqObjData 10 3 0"),
            (ConsoleRequest::Delete(SceneItem::Vehicle(7)), "RflyReqObjData 11 7 0"),
            (
                ConsoleRequest::Delete(SceneItem::Object("Tree_2".into())),
                "RflyReqObjData 12 Tree_2 0",
            ),
            (ConsoleRequest::Clear(ClearScope::Cameras), "RflyReqObjData 20 0 0"),
            (ConsoleRequest::Clear(ClearScope::All), "RflyReqObjData 24 0 0"),
            (
                ConsoleRequest::DelVehicles(vec![1000, 1001]),
                "RflyDelVehicles 1000,1001",
            ),
            (
                ConsoleRequest::ChangeMapByName("Grasslands".into()),
                "RflyChangeMapbyName Grasslands",
            ),
            (ConsoleRequest::ChangeMapById(5), "RflyChangeMapbyID 5"),
            (ConsoleRequest::SetPosScale(100.0), "RflySetPosScale 100"),
            (ConsoleRequest::SetPosScale(0.01), "RflySetPosScale 0.01"),
            (
                ConsoleRequest::ShowTextTime {
                    text: "Hello RflySim".into(),
                    seconds: 5.0,
                },
                "RflyShowTextTime \"Hello RflySim\" 5",
            ),
        ];
        for (request, text) in cases {
            assert_eq!(texts(&request), [text], "{request:?}");
            assert_eq!(ConsoleRequest::parse(text), Some(request), "{text}");
        }
    }

    #[test]
    fn deleting_many_vehicles_takes_several_short_commands() {
        let ids: Vec<i32> = (1000..1030).collect();
        let request = ConsoleRequest::DelVehicles(ids.clone());
        let commands = request.commands().unwrap();
        assert!(commands.len() > 1);
        assert!(commands.iter().all(|c| c.fits_short_form() && c.encode().len() == 56));
        let back: Vec<i32> = commands
            .iter()
            .flat_map(|c| match ConsoleRequest::parse(c.text()) {
                Some(ConsoleRequest::DelVehicles(ids)) => ids,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(back, ids);
        assert!(ConsoleRequest::DelVehicles(vec![]).commands().unwrap().is_empty());
        // Three of the widest ids fill the 51 bytes exactly; a fourth takes a second command.
        let widest = ConsoleRequest::DelVehicles(vec![i32::MIN; 3]).commands().unwrap();
        assert_eq!((widest.len(), widest[0].text().len()), (1, 51));
        assert_eq!(
            ConsoleRequest::DelVehicles(vec![i32::MIN; 4]).commands().unwrap().len(),
            2
        );
    }

    #[test]
    fn the_parser_reads_what_rflysim3d_reads() {
        let parse = ConsoleRequest::parse;
        assert_eq!(
            parse("RflyReqObjData 1 1000 FFFFFF"),
            Some(ConsoleRequest::VehicleData(1000))
        );
        assert_eq!(
            parse("  rflyreqvehicledata 2 "),
            Some(ConsoleRequest::VehicleDataPostback(true))
        );
        assert_eq!(
            parse("RflyReqObjData 21"),
            Some(ConsoleRequest::Clear(ClearScope::Vehicles))
        );
        assert_eq!(
            parse("RflyDelVehicles 1,,2,"),
            Some(ConsoleRequest::DelVehicles(vec![1, 2]))
        );
        assert_eq!(
            parse("RflyShowTextTime hello 2.5"),
            Some(ConsoleRequest::ShowTextTime {
                text: "hello".into(),
                seconds: 2.5
            })
        );
        assert_eq!(
            ConsoleRequest::parse("RflyClearCapture"),
            Some(ConsoleRequest::ClearCapture)
        );
        for other in [
            "RflyReqObjData 0 x 0",
            "RflyReqObjData 0",
            "RflyReqObjData 1 x 0",
            "RflyReqObjData 3 a 0",
            "RflyReqObjData 25 a 0",
            "RflyReqVehicleData yes",
            "RflyDelVehicles",
            "RflyDelVehicles 1,a",
            "RflyChangeMapbyName",
            "RflyChangeMapbyID x",
            "RflySetPosScale inf",
            "RflyShowTextTime \"unclosed 5",
            "RflyShowTextTime \"text\"",
            "RflyShowTextTime \"text\" NaN",
            "RflyUnknown 1",
            "",
        ] {
            assert_eq!(parse(other), None, "{other:?}");
        }
    }

    #[test]
    fn clear_scopes_name_what_they_clear() {
        let all = [
            ClearScope::Cameras,
            ClearScope::Vehicles,
            ClearScope::Objects,
            ClearScope::VehiclesAndObjects,
            ClearScope::All,
        ];
        let kinds: Vec<_> = all.iter().map(|s| (s.cameras(), s.vehicles(), s.objects())).collect();
        assert_eq!(
            kinds,
            [
                (true, false, false),
                (false, true, false),
                (false, false, true),
                (false, true, true),
                (true, true, true)
            ]
        );
    }
}
