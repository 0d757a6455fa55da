//! RflySim3D's scene over UDP (RflySim's Python SDK `UE4CtrlAPI`,
//! rflysim.com/doc/en/4.DevRef/pysdk/ue/ue4ctrl.html): the structs that place vehicles in the
//! scene, sent to window i's request port 20010 + i, and everything
//! RflySim3D sends back on its status port 20006, read by
//! [`StatusDatagram::decode`] as the SDK reads it: by exact length, then
//! checksum. The console verbs that ask about the scene are in
//! [`crate::console`].
//!
//! Units. Positions are metres in the world's NED frame (z down) and angles
//! radians (roll, pitch, yaw), both ways: the replies' `PosUE` and
//! `boxOrigin` are in the frame of the `PosE` vehicles are placed with (the
//! SDK's `CoptReqData` and `ObjReqData`), and `BoxExtent` is half the box's size in metres
//! along the object's X forward, Y right, Z up. RflySim3D's "the space
//! unit is cm" concerns RflySim3D's inside and `RflySetPosScale`, which the
//! bridge leaves at 1.
//!
//! Layout. Little-endian. The SDK packs with Python's native alignment,
//! which pads only `SOut2SimulatorSimpleTime` (4 bytes before its first
//! double): [`VehicleUpdate`] sends those 104 bytes and reads the packed 100 too.

use crate::error::DecodeError;
use crate::gimbal::GimbalEcho;
use crate::telemetry::{CameraData, CAMERA_DATA_CHECKSUM};
use crate::wire::{checksum, exact, Fields, FieldsMut, Writer};

/// `v` as an `f32` field of the wire, `None` where it is not finite there:
/// NaN, ±∞, or beyond ±[`f32::MAX`] (3.4e38), which an `f32` holds as ±∞.
pub fn wire_f32(v: f64) -> Option<f32> {
    let f = v as f32;
    f.is_finite().then_some(f)
}

/// The name of the first of `fields` that holds a value that is not finite.
fn not_finite(f32s: &[(&'static str, &[f32])], f64s: &[(&'static str, &[f64])]) -> Option<&'static str> {
    let bad32 = f32s.iter().find(|(_, v)| !v.iter().all(|x| x.is_finite()));
    let bad64 = || f64s.iter().find(|(_, v)| !v.iter().all(|x| x.is_finite()));
    bad32.map(|(name, _)| *name).or_else(|| bad64().map(|(name, _)| *name))
}

/// Where RflySim3D puts a vehicle a pose struct places: its checksum says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Where the struct says.
    #[default]
    AsSent,
    /// On the ground under that place, whatever the altitude sent.
    OnGround,
}

impl Placement {
    pub const AS_SENT_CHECKSUM: i32 = 1_234_567_890;
    pub const ON_GROUND_CHECKSUM: i32 = 1_234_567_891;

    pub const fn checksum(self) -> i32 {
        match self {
            Placement::AsSent => Self::AS_SENT_CHECKSUM,
            Placement::OnGround => Self::ON_GROUND_CHECKSUM,
        }
    }

    fn read(what: &'static str, f: Fields<'_>) -> Result<Placement, DecodeError> {
        match f.i32(0) {
            Self::AS_SENT_CHECKSUM => Ok(Placement::AsSent),
            Self::ON_GROUND_CHECKSUM => Ok(Placement::OnGround),
            got => Err(DecodeError::Checksum {
                what,
                got: i64::from(got),
            }),
        }
    }
}

/// `SOut2SimulatorSimpleTime` (`3i14f4d`), what the SDK's `sendUE4PosNew`
/// and `sendUE4Pos` send: one vehicle's whole pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VehicleUpdate {
    pub placement: Placement,
    pub copter_id: i32,
    /// The model: a class (3 quadcopter, 5 or 6 hexacopter, 30 person, 100
    /// fixed wing, …) plus 1000 × a style of it.
    pub vehicle_type: i32,
    /// `PWMs` in the SDK; its senders fill them with the motors' RPM.
    pub pwms: [f32; 8],
    /// m/s, NED.
    pub vel_ned: [f32; 3],
    /// roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    /// m, NED.
    pub pos_ned: [f64; 3],
    /// s; [`VehicleUpdate::UNSET_TIME`] when the sender gives none (the SDK's default).
    pub runned_time: f64,
}

impl VehicleUpdate {
    /// What the SDK sends: native alignment puts 4 bytes after `AngEuler`.
    pub const LEN: usize = 104;
    /// `<3i14f4d`, the same without the padding.
    pub const PACKED_LEN: usize = 100;
    /// `6i14f4d`, what the newest SDK (2025) sends instead: `PosGpsInt[3]`
    /// after the vehicle type (zeros, ignored), and 1234567891 as its plain
    /// checksum (it has no ground-fitting form). Told apart by its length.
    pub const GPS_LEN: usize = 112;
    pub const UNSET_TIME: f64 = -1.0;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(self.placement.checksum())
            .i32(self.copter_id)
            .i32(self.vehicle_type);
        w.f32s(&self.pwms).f32s(&self.vel_ned).f32s(&self.euler);
        w.bytes(&[0; 4]); // the doubles' native alignment
        w.f64s(&self.pos_ned).f64(self.runned_time);
        w.finish()
    }

    /// Any of the three forms, told apart by length.
    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "SOut2SimulatorSimpleTime";
        let f = Fields(p);
        let (floats, doubles, placement) = match p.len() {
            Self::LEN => (12, 72, Placement::read(WHAT, f)?),
            Self::PACKED_LEN => (12, 68, Placement::read(WHAT, f)?),
            Self::GPS_LEN => {
                checksum(WHAT, f, Placement::ON_GROUND_CHECKSUM)?;
                (24, 80, Placement::AsSent)
            }
            n => return Err(DecodeError::length(WHAT, n, "104, 100 or 112")),
        };
        Ok(Self {
            placement,
            copter_id: f.i32(4),
            vehicle_type: f.i32(8),
            pwms: f.f32s(floats),
            vel_ned: f.f32s(floats + 32),
            euler: f.f32s(floats + 44),
            pos_ned: f.f64s(doubles),
            runned_time: f.f64(doubles + 24),
        })
    }

    /// The time sent, `None` when unset (negative).
    pub fn runned_time(&self) -> Option<f64> {
        (self.runned_time >= 0.0).then_some(self.runned_time)
    }

    /// The first field holding a value that is not finite (NaN or ±∞), if any.
    pub fn not_finite(&self) -> Option<&'static str> {
        not_finite(
            &[("pwms", &self.pwms), ("vel_ned", &self.vel_ned), ("euler", &self.euler)],
            &[("pos_ned", &self.pos_ned), ("runned_time", &[self.runned_time])],
        )
    }
}

/// `SOut2SimulatorSimple` (`3i7f`, 40 bytes: `sendUE4Pos2Ground`, and
/// `sendUE4Pos` in old SDKs) and `SOut2SimulatorSimple1` (`3i10f`, 52
/// bytes, with size multipliers: `sendUE4PosScale`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimpleVehicleUpdate {
    pub placement: Placement,
    pub copter_id: i32,
    pub vehicle_type: i32,
    /// RPM; RflySim3D gives it to all 8 motors.
    pub motor_rpm_mean: f32,
    /// m, NED.
    pub pos_ned: [f32; 3],
    /// roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    /// Size multipliers along x, y, z; only in the 52-byte form.
    pub scale: Option<[f32; 3]>,
}

impl SimpleVehicleUpdate {
    pub const LEN: usize = 40;
    pub const SCALED_LEN: usize = 52;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::SCALED_LEN);
        w.i32(self.placement.checksum())
            .i32(self.copter_id)
            .i32(self.vehicle_type);
        w.f32(self.motor_rpm_mean).f32s(&self.pos_ned).f32s(&self.euler);
        if let Some(s) = self.scale {
            w.f32s(&s);
        }
        w.finish()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "SOut2SimulatorSimple";
        if p.len() != Self::LEN && p.len() != Self::SCALED_LEN {
            return Err(DecodeError::length(WHAT, p.len(), "40 or 52"));
        }
        let f = Fields(p);
        Ok(Self {
            placement: Placement::read(WHAT, f)?,
            copter_id: f.i32(4),
            vehicle_type: f.i32(8),
            motor_rpm_mean: f.f32(12),
            pos_ned: f.f32s(16),
            euler: f.f32s(28),
            scale: (p.len() == Self::SCALED_LEN).then(|| f.f32s(40)),
        })
    }
}

/// One slot of a [`MultiVehicleUpdate`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlacedVehicle {
    /// 0: an empty slot, which RflySim3D does not show.
    pub id: u16,
    pub vehicle_type: u16,
    /// m, NED.
    pub pos_ned: [f32; 3],
    /// roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    /// Size multipliers (1: real size); they travel as hundredths in a
    /// `u16`, so 0 to 655.35 in steps of 0.01.
    pub scale: [f32; 3],
    /// RPM.
    pub motor_rpm_mean: f32,
}

impl PlacedVehicle {
    /// The first field holding a value that is not finite (NaN or ±∞), if any.
    pub fn not_finite(&self) -> Option<&'static str> {
        not_finite(
            &[
                ("pos_ned", &self.pos_ned),
                ("euler", &self.euler),
                ("scale", &self.scale),
                ("motor_rpm_mean", &[self.motor_rpm_mean]),
            ],
            &[],
        )
    }
}

/// `Multi3DData100New` (`i200H600f300H100f`, 3804 bytes: the SDK's
/// `sendUE4PosScale100`): 100 vehicle slots, laid out field by field (every
/// id, then every type, every position, …).
#[derive(Debug, Clone, PartialEq)]
pub struct MultiVehicleUpdate {
    pub placement: Placement,
    pub slots: [PlacedVehicle; MultiVehicleUpdate::SLOTS],
}

/// A size multiplier as the `u16` hundredths `Multi3DData100New` carries.
fn scale_hundredths(scale: f32) -> u16 {
    // Rounded half up, as round() does for a scale ≥ 0, without a libm
    // call (three a vehicle, thousands a tick); `as` truncates, saturates
    // (a negative scale is 0) and reads NaN as 0.
    (scale * 100.0 + 0.5) as u16
}

impl MultiVehicleUpdate {
    pub const LEN: usize = 3804;
    pub const SLOTS: usize = 100;
    const IDS: usize = 4;
    const TYPES: usize = 204;
    const POSITIONS: usize = 404;
    const ANGLES: usize = 1604;
    const SCALES: usize = 2804;
    const RPMS: usize = 3404;

    /// Packs up to 100 of `vehicles` into `out`, the other slots empty
    /// (zeros, as the SDK pads them); returns how many it packed: the rest
    /// is for the next datagram.
    pub fn encode_into(placement: Placement, vehicles: &[PlacedVehicle], out: &mut [u8; Self::LEN]) -> usize {
        out.fill(0);
        let packed = vehicles.len().min(Self::SLOTS);
        let mut f = FieldsMut(out);
        f.i32(0, placement.checksum());
        for (i, v) in vehicles[..packed].iter().enumerate() {
            f.u16(Self::IDS + 2 * i, v.id);
            f.u16(Self::TYPES + 2 * i, v.vehicle_type);
            f.f32s(Self::POSITIONS + 12 * i, &v.pos_ned);
            f.f32s(Self::ANGLES + 12 * i, &v.euler);
            f.u16s(Self::SCALES + 6 * i, &v.scale.map(scale_hundredths));
            f.f32(Self::RPMS + 4 * i, v.motor_rpm_mean);
        }
        packed
    }

    /// How many datagrams `vehicles` vehicles take: ⌈vehicles / 100⌉.
    pub fn datagram_count(vehicles: usize) -> usize {
        vehicles.div_ceil(Self::SLOTS)
    }

    /// Replaces `out` with the datagrams of `vehicles`, 100 to a datagram,
    /// one after the other ([`Self::LEN`] bytes each); returns how many.
    pub fn encode_all_into(placement: Placement, vehicles: &[PlacedVehicle], out: &mut Vec<u8>) -> usize {
        let n = Self::datagram_count(vehicles.len());
        out.clear();
        out.resize(n * Self::LEN, 0);
        for (chunk, datagram) in vehicles.chunks(Self::SLOTS).zip(out.chunks_exact_mut(Self::LEN)) {
            let datagram: &mut [u8; Self::LEN] = datagram.try_into().expect("LEN bytes");
            Self::encode_into(placement, chunk, datagram);
        }
        n
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = [0u8; Self::LEN];
        Self::encode_into(self.placement, &self.slots, &mut out);
        out.to_vec()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "Multi3DData100New";
        let f = exact(WHAT, p, Self::LEN)?;
        let placement = Placement::read(WHAT, f)?;
        let slots = std::array::from_fn(|i| PlacedVehicle {
            id: f.u16(Self::IDS + 2 * i),
            vehicle_type: f.u16(Self::TYPES + 2 * i),
            pos_ned: f.f32s(Self::POSITIONS + 12 * i),
            euler: f.f32s(Self::ANGLES + 12 * i),
            scale: f.u16s::<3>(Self::SCALES + 6 * i).map(|s| f32::from(s) / 100.0),
            motor_rpm_mean: f.f32(Self::RPMS + 4 * i),
        });
        Ok(Self { placement, slots })
    }

    /// The slots that hold a vehicle.
    pub fn vehicles(&self) -> impl Iterator<Item = &PlacedVehicle> {
        self.slots.iter().filter(|v| v.id != 0)
    }
}

/// One vehicle's pose as any pose struct carries it: what RflySim3D applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VehiclePose {
    pub placement: Placement,
    pub copter_id: i32,
    pub vehicle_type: i32,
    /// m, NED.
    pub pos_ned: [f64; 3],
    /// roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    /// Size multipliers; 1 where the struct has none.
    pub scale: [f32; 3],
    /// RPM.
    pub motor_rpm: [f32; 8],
    /// m/s, NED; 0 where the struct has none.
    pub vel_ned: [f32; 3],
    /// s; `None` where the struct has none or the sender left it unset.
    pub runned_time: Option<f64>,
}

impl From<&VehicleUpdate> for VehiclePose {
    fn from(u: &VehicleUpdate) -> Self {
        Self {
            placement: u.placement,
            copter_id: u.copter_id,
            vehicle_type: u.vehicle_type,
            pos_ned: u.pos_ned,
            euler: u.euler,
            scale: [1.0; 3],
            motor_rpm: u.pwms,
            vel_ned: u.vel_ned,
            runned_time: u.runned_time(),
        }
    }
}

impl From<&SimpleVehicleUpdate> for VehiclePose {
    fn from(u: &SimpleVehicleUpdate) -> Self {
        Self {
            placement: u.placement,
            copter_id: u.copter_id,
            vehicle_type: u.vehicle_type,
            pos_ned: u.pos_ned.map(f64::from),
            euler: u.euler,
            scale: u.scale.unwrap_or([1.0; 3]),
            motor_rpm: [u.motor_rpm_mean; 8],
            vel_ned: [0.0; 3],
            runned_time: None,
        }
    }
}

impl VehiclePose {
    fn from_slot(placement: Placement, v: &PlacedVehicle) -> Self {
        Self {
            placement,
            copter_id: i32::from(v.id),
            vehicle_type: i32::from(v.vehicle_type),
            pos_ned: v.pos_ned.map(f64::from),
            euler: v.euler,
            scale: v.scale,
            motor_rpm: [v.motor_rpm_mean; 8],
            vel_ned: [0.0; 3],
            runned_time: None,
        }
    }
}

/// A pose struct on RflySim3D's request port, told apart by its length.
#[derive(Debug, Clone, PartialEq)]
pub enum PoseDatagram {
    Single(VehicleUpdate),
    Simple(SimpleVehicleUpdate),
    Multi(Box<MultiVehicleUpdate>),
}

impl PoseDatagram {
    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        match p.len() {
            VehicleUpdate::LEN | VehicleUpdate::PACKED_LEN | VehicleUpdate::GPS_LEN => {
                VehicleUpdate::decode(p).map(PoseDatagram::Single)
            }
            SimpleVehicleUpdate::LEN | SimpleVehicleUpdate::SCALED_LEN => {
                SimpleVehicleUpdate::decode(p).map(PoseDatagram::Simple)
            }
            MultiVehicleUpdate::LEN => MultiVehicleUpdate::decode(p).map(|m| PoseDatagram::Multi(Box::new(m))),
            n => Err(DecodeError::length("vehicle pose", n, "40, 52, 100, 104, 112 or 3804")),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        match self {
            PoseDatagram::Single(u) => u.encode(),
            PoseDatagram::Simple(u) => u.encode(),
            PoseDatagram::Multi(m) => m.encode(),
        }
    }

    /// The pose of every vehicle the datagram places (empty slots skipped).
    pub fn poses(&self) -> impl Iterator<Item = VehiclePose> + '_ {
        let (single, slots) = match self {
            PoseDatagram::Single(u) => (Some(VehiclePose::from(u)), &[][..]),
            PoseDatagram::Simple(u) => (Some(VehiclePose::from(u)), &[][..]),
            PoseDatagram::Multi(m) => (None, &m.slots[..]),
        };
        let placement = match self {
            PoseDatagram::Multi(m) => m.placement,
            _ => Placement::AsSent,
        };
        single.into_iter().chain(
            slots
                .iter()
                .filter(|v| v.id != 0)
                .map(move |v| VehiclePose::from_slot(placement, v)),
        )
    }
}

/// The checksum of `CameraData`, `CoptReqData` and `ObjReqData`.
pub const REPLY_CHECKSUM: i32 = CAMERA_DATA_CHECKSUM;

/// How far `reqVeCrashData`'s scan lines reach. Neither the SDK nor the
/// document says what a line that hits nothing reads: the emulator's reach
/// this far and read this; read anything at or beyond it as nothing hit.
pub const RAY_RANGE: f32 = 100.0;

/// What a vehicle of `reqVeCrashData` hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashType {
    /// 0.
    None,
    /// −2.
    Ground,
    /// −1: a static object of the scene (a building, a tree…).
    SceneObject,
    /// 1 and above: the other vehicle's id.
    Vehicle(i32),
    /// Below −2: no meaning documented.
    Unknown(i32),
}

impl CrashType {
    pub fn from_code(code: i32) -> CrashType {
        match code {
            0 => CrashType::None,
            -2 => CrashType::Ground,
            -1 => CrashType::SceneObject,
            id if id > 0 => CrashType::Vehicle(id),
            other => CrashType::Unknown(other),
        }
    }

    pub fn code(self) -> i32 {
        match self {
            CrashType::None => 0,
            CrashType::Ground => -2,
            CrashType::SceneObject => -1,
            CrashType::Vehicle(id) | CrashType::Unknown(id) => id,
        }
    }
}

/// `reqVeCrashData` (`4i1d29f20s`, 160 bytes): RflySim3D's data of one
/// vehicle, sent for every vehicle while `RflyReqVehicleData 1` holds, when
/// it changes and at least once a second.
#[derive(Debug, Clone, PartialEq)]
pub struct VehicleCrashData {
    pub copter_id: i32,
    pub vehicle_type: i32,
    pub crash: CrashType,
    /// s.
    pub runned_time: f64,
    /// m/s, NED.
    pub vel_ned: [f32; 3],
    /// m, NED.
    pub pos_ned: [f32; 3],
    /// Where it hit, m, NED.
    pub crash_pos: [f32; 3],
    /// The centre of what it hit, m, NED.
    pub target_pos: [f32; 3],
    /// roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    /// RPM.
    pub motor_rpm: [f32; 8],
    /// Distances along its front, back, left, right, up and down scan
    /// lines, m ([`RAY_RANGE`] when nothing is within reach).
    pub rays: [f32; 6],
    /// The name of what it hit (up to 20 bytes; longer is cut).
    pub crashed_name: String,
}

impl VehicleCrashData {
    pub const CHECKSUM: i32 = 1_234_567_897;
    pub const LEN: usize = 160;
    pub const NAME_LEN: usize = 20;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(Self::CHECKSUM)
            .i32(self.copter_id)
            .i32(self.vehicle_type)
            .i32(self.crash.code());
        w.f64(self.runned_time);
        w.f32s(&self.vel_ned)
            .f32s(&self.pos_ned)
            .f32s(&self.crash_pos)
            .f32s(&self.target_pos)
            .f32s(&self.euler);
        w.f32s(&self.motor_rpm).f32s(&self.rays);
        w.text(&self.crashed_name, Self::NAME_LEN);
        w.finish()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "reqVeCrashData";
        let f = exact(WHAT, p, Self::LEN)?;
        checksum(WHAT, f, Self::CHECKSUM)?;
        Ok(Self {
            copter_id: f.i32(4),
            vehicle_type: f.i32(8),
            crash: CrashType::from_code(f.i32(12)),
            runned_time: f.f64(16),
            vel_ned: f.f32s(24),
            pos_ned: f.f32s(36),
            crash_pos: f.f32s(48),
            target_pos: f.f32s(60),
            euler: f.f32s(72),
            motor_rpm: f.f32s(84),
            rays: f.f32s(116),
            crashed_name: f.text(140, Self::NAME_LEN),
        })
    }

    /// The first field holding a value that is not finite (NaN or ±∞), if any.
    pub fn not_finite(&self) -> Option<&'static str> {
        not_finite(
            &[
                ("vel_ned", &self.vel_ned),
                ("pos_ned", &self.pos_ned),
                ("crash_pos", &self.crash_pos),
                ("target_pos", &self.target_pos),
                ("euler", &self.euler),
                ("motor_rpm", &self.motor_rpm),
                ("rays", &self.rays),
            ],
            &[("runned_time", &[self.runned_time])],
        )
    }
}

/// Where a vehicle or an object is and the box around it: the body
/// `CoptReqData` and `ObjReqData` share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseAndBox {
    /// The model's origin (set when it was modelled: not always the box's
    /// centre), m, NED.
    pub pos: [f32; 3],
    /// roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    /// w, x, y, z; only in the newer, longer forms.
    pub quat: Option<[f32; 4]>,
    /// The box's centre, m, NED.
    pub box_origin: [f32; 3],
    /// Half the box's size, m, along the object's X forward, Y right, Z up.
    pub box_extent: [f32; 3],
    /// s.
    pub time_stamp: f64,
}

impl PoseAndBox {
    fn write(&self, w: &mut Writer) {
        w.f32s(&self.pos).f32s(&self.euler);
        if let Some(q) = self.quat {
            w.f32s(&q);
        }
        w.f32s(&self.box_origin).f32s(&self.box_extent).f64(self.time_stamp);
    }

    /// The first field holding a value that is not finite (NaN or ±∞), if any.
    pub fn not_finite(&self) -> Option<&'static str> {
        let quat = self.quat.unwrap_or_default();
        not_finite(
            &[
                ("pos", &self.pos),
                ("euler", &self.euler),
                ("quat", &quat),
                ("box_origin", &self.box_origin),
                ("box_extent", &self.box_extent),
            ],
            &[("time_stamp", &[self.time_stamp])],
        )
    }

    /// Reads the body at `at`; `with_quat` in the newer forms.
    fn read(f: Fields<'_>, at: usize, with_quat: bool) -> Self {
        let boxes = if with_quat { at + 40 } else { at + 24 };
        Self {
            pos: f.f32s(at),
            euler: f.f32s(at + 12),
            quat: with_quat.then(|| f.f32s(at + 24)),
            box_origin: f.f32s(boxes),
            box_extent: f.f32s(boxes + 12),
            time_stamp: f.f64(boxes + 24),
        }
    }
}

/// `CoptReqData` (`2i16f1d`, 80 bytes; `2i12f1d`, 64, without the
/// quaternion): a vehicle's pose and box, the answer to `RflyReqObjData 1 <id>`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopterData {
    pub copter_id: i32,
    pub pose: PoseAndBox,
}

impl CopterData {
    pub const LEN: usize = 80;
    pub const LEGACY_LEN: usize = 64;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(REPLY_CHECKSUM).i32(self.copter_id);
        self.pose.write(&mut w);
        w.finish()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "CoptReqData";
        if p.len() != Self::LEN && p.len() != Self::LEGACY_LEN {
            return Err(DecodeError::length(WHAT, p.len(), "80 or 64"));
        }
        let f = Fields(p);
        checksum(WHAT, f, REPLY_CHECKSUM)?;
        Ok(Self {
            copter_id: f.i32(4),
            pose: PoseAndBox::read(f, 8, p.len() == Self::LEN),
        })
    }
}

/// `ObjReqData` (`2i16f1d32s`, 112 bytes; `2i12f1d32s`, 96, without the
/// quaternion): a static object's pose and box, the answer to
/// `RflyReqObjData 2 <name>`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectData {
    /// Always 0, says the document (an object has no id).
    pub seq_id: i32,
    pub pose: PoseAndBox,
    /// Up to 32 bytes; longer is cut.
    pub name: String,
}

impl ObjectData {
    pub const LEN: usize = 112;
    pub const LEGACY_LEN: usize = 96;
    pub const NAME_LEN: usize = 32;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(REPLY_CHECKSUM).i32(self.seq_id);
        self.pose.write(&mut w);
        w.text(&self.name, Self::NAME_LEN);
        w.finish()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "ObjReqData";
        if p.len() != Self::LEN && p.len() != Self::LEGACY_LEN {
            return Err(DecodeError::length(WHAT, p.len(), "112 or 96"));
        }
        let f = Fields(p);
        checksum(WHAT, f, REPLY_CHECKSUM)?;
        Ok(Self {
            seq_id: f.i32(4),
            pose: PoseAndBox::read(f, 8, p.len() == Self::LEN),
            name: f.text(p.len() - Self::NAME_LEN, Self::NAME_LEN),
        })
    }
}

/// `CopterSimCrash` (`3i`, 12 bytes): vehicle `copter_id` ran into `target_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopterSimCrash {
    pub copter_id: i32,
    pub target_id: i32,
}

impl CopterSimCrash {
    pub const LEN: usize = 12;
    /// What the SDK checks (and what is sent).
    pub const CHECKSUM: i32 = 1_234_567_890;
    /// What the document gives; accepted too.
    pub const DOCUMENTED_CHECKSUM: i32 = 1_234_567_891;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(Self::CHECKSUM).i32(self.copter_id).i32(self.target_id);
        w.finish()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "CopterSimCrash";
        let f = exact(WHAT, p, Self::LEN)?;
        if f.i32(0) != Self::DOCUMENTED_CHECKSUM {
            checksum(WHAT, f, Self::CHECKSUM)?;
        }
        Ok(Self {
            copter_id: f.i32(4),
            target_id: f.i32(8),
        })
    }
}

/// `PX4SILIntFloat` (`10i20f`, 120 bytes): 8 integers and 20 floats for a
/// vehicle's PX4 software-in-the-loop controller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SilIntFloat {
    pub copter_id: i32,
    pub ints: [i32; 8],
    pub floats: [f32; 20],
}

impl SilIntFloat {
    pub const LEN: usize = 120;
    pub const CHECKSUM: i32 = 1_234_567_897;

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(Self::CHECKSUM)
            .i32(self.copter_id)
            .i32s(&self.ints)
            .f32s(&self.floats);
        w.finish()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "PX4SILIntFloat";
        let f = exact(WHAT, p, Self::LEN)?;
        checksum(WHAT, f, Self::CHECKSUM)?;
        Ok(Self {
            copter_id: f.i32(4),
            ints: f.i32s(8),
            floats: f.f32s(40),
        })
    }
}

/// Everything RflySim3D sends to its status port 20006 (unicast, and
/// multicast to 224.0.0.10).
#[derive(Debug, Clone, PartialEq)]
pub enum StatusDatagram {
    VehicleCrashData(VehicleCrashData),
    CopterData(CopterData),
    ObjectData(ObjectData),
    CameraData(CameraData),
    CopterSimCrash(CopterSimCrash),
    SilIntFloat(SilIntFloat),
    GimbalEcho(GimbalEcho),
}

impl StatusDatagram {
    /// Reads a datagram as the SDK's receiver does: by its exact length,
    /// then its checksum (several structs share one).
    pub fn decode(d: &[u8]) -> Result<Self, DecodeError> {
        match d.len() {
            VehicleCrashData::LEN => VehicleCrashData::decode(d).map(StatusDatagram::VehicleCrashData),
            CopterData::LEN | CopterData::LEGACY_LEN => CopterData::decode(d).map(StatusDatagram::CopterData),
            ObjectData::LEN | ObjectData::LEGACY_LEN => ObjectData::decode(d).map(StatusDatagram::ObjectData),
            CameraData::LEN | CameraData::LEGACY_LEN => CameraData::decode(d).map(StatusDatagram::CameraData),
            CopterSimCrash::LEN => CopterSimCrash::decode(d).map(StatusDatagram::CopterSimCrash),
            SilIntFloat::LEN => SilIntFloat::decode(d).map(StatusDatagram::SilIntFloat),
            GimbalEcho::LEN => GimbalEcho::decode(d).map(StatusDatagram::GimbalEcho),
            n => Err(DecodeError::length(
                "status datagram",
                n,
                "12, 56, 64, 72, 80, 96, 112, 120, 148 or 160",
            )),
        }
    }

    /// The datagram as RflySim3D sends it (a gimbal echo with the
    /// protocol's checksum, 12346).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            StatusDatagram::VehicleCrashData(d) => d.encode(),
            StatusDatagram::CopterData(d) => d.encode(),
            StatusDatagram::ObjectData(d) => d.encode(),
            StatusDatagram::CameraData(d) => d.encode(),
            StatusDatagram::CopterSimCrash(d) => d.encode(),
            StatusDatagram::SilIntFloat(d) => d.encode(),
            StatusDatagram::GimbalEcho(d) => d.encode(crate::request::GIMBAL_ECHO_CHECKSUM),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn update() -> VehicleUpdate {
        VehicleUpdate {
            placement: Placement::AsSent,
            copter_id: 3,
            vehicle_type: 1003,
            pwms: [1500.0, 1500.0, 1500.0, 1500.0, 0.0, 0.0, 0.0, 0.0],
            vel_ned: [1.5, -2.0, 0.25],
            euler: [0.125, -0.25, 1.5],
            pos_ned: [10.5, -20.25, -5.0],
            runned_time: 12.5,
        }
    }

    /// `struct.pack('3i14f4d', 1234567890, 3, 1003, *[1500.0]*4, *[0.0]*4,
    /// 1.5, -2.0, 0.25, 0.125, -0.25, 1.5, 10.5, -20.25, -5.0, 12.5)`: native
    /// alignment, as the SDK sends it.
    const PYTHON_VEHICLE_UPDATE: &str = "d202964903000000eb0300000080bb440080bb440080bb440080bb4400000000000000000000\
        0000000000000000c03f000000c00000803e0000003e000080be0000c03f00000000000000000000254000000000004034c0000000\
        00000014c00000000000002940";

    #[test]
    fn a_vehicle_update_is_what_python_packs_with_native_alignment() {
        let want = hex(PYTHON_VEHICLE_UPDATE);
        assert_eq!(want.len(), 104);
        assert_eq!(update().encode(), want);
        assert_eq!(VehicleUpdate::decode(&want).unwrap(), update());
        // The packed form: the same fields without the 4 bytes at 68.
        let packed: Vec<u8> = want[..68].iter().chain(&want[72..]).copied().collect();
        assert_eq!(VehicleUpdate::decode(&packed).unwrap(), update());
        let ground = VehicleUpdate {
            placement: Placement::OnGround,
            runned_time: VehicleUpdate::UNSET_TIME,
            ..update()
        };
        let back = VehicleUpdate::decode(&ground.encode()).unwrap();
        assert_eq!((back, back.runned_time()), (ground, None));
        let mut wrong = want.clone();
        wrong[0] = 0;
        assert!(matches!(
            VehicleUpdate::decode(&wrong),
            Err(DecodeError::Checksum { .. })
        ));
        assert!(matches!(
            VehicleUpdate::decode(&want[..103]),
            Err(DecodeError::Length { .. })
        ));
    }

    #[test]
    fn the_newest_sdk_s_form_has_gps_ints_and_its_own_checksum() {
        // struct.pack('6i14f4d', 1234567891, 3, 1003, 0, 0, 0, <the fields above>)
        let mut p = Writer::with_capacity(112);
        p.i32(1_234_567_891).i32(3).i32(1003).i32s(&[0; 3]);
        let u = update();
        p.f32s(&u.pwms)
            .f32s(&u.vel_ned)
            .f32s(&u.euler)
            .f64s(&u.pos_ned)
            .f64(u.runned_time);
        let p = p.finish();
        assert_eq!(p.len(), VehicleUpdate::GPS_LEN);
        assert_eq!(VehicleUpdate::decode(&p).unwrap(), u);
        let mut wrong = p.clone();
        wrong[..4].copy_from_slice(&1_234_567_890i32.to_le_bytes());
        assert!(VehicleUpdate::decode(&wrong).is_err());
    }

    #[test]
    fn simple_updates_are_what_python_packs() {
        let simple = SimpleVehicleUpdate {
            placement: Placement::OnGround,
            copter_id: 2,
            vehicle_type: 3,
            motor_rpm_mean: 1000.0,
            pos_ned: [1.0, 2.0, -3.0],
            euler: [0.0, 0.5, -1.0],
            scale: None,
        };
        // struct.pack('3i7f', 1234567891, 2, 3, 1000.0, 1.0, 2.0, -3.0, 0.0, 0.5, -1.0)
        let want = hex("d3029649020000000300000000007a440000803f00000040000040c0000000000000003f000080bf");
        assert_eq!(simple.encode(), want);
        assert_eq!(SimpleVehicleUpdate::decode(&want).unwrap(), simple);
        let scaled = SimpleVehicleUpdate {
            placement: Placement::AsSent,
            vehicle_type: 30,
            scale: Some([2.0, 2.0, 0.5]),
            ..simple
        };
        // struct.pack('3i10f', 1234567890, 2, 30, 1000.0, 1.0, 2.0, -3.0, 0.0, 0.5, -1.0, 2.0, 2.0, 0.5)
        let want = hex(
            "d2029649020000001e00000000007a440000803f00000040000040c0000000000000003f000080bf00000040000000400000003f",
        );
        assert_eq!(scaled.encode(), want);
        assert_eq!(SimpleVehicleUpdate::decode(&want).unwrap(), scaled);
        let pose = PoseDatagram::decode(&want).unwrap().poses().next().unwrap();
        assert_eq!(
            (pose.pos_ned, pose.scale, pose.motor_rpm[7]),
            ([1.0, 2.0, -3.0], [2.0, 2.0, 0.5], 1000.0)
        );
    }

    fn three() -> [PlacedVehicle; 3] {
        let v = |id, vehicle_type, pos_ned, euler, scale, motor_rpm_mean| PlacedVehicle {
            id,
            vehicle_type,
            pos_ned,
            euler,
            scale,
            motor_rpm_mean,
        };
        [
            v(1, 3, [1.0, 2.0, -3.0], [0.0, 0.0, 0.5], [1.0; 3], 1000.0),
            v(2, 3, [4.0, 5.0, -6.0], [0.25, 0.0, 0.0], [2.0, 2.0, 0.5], 1000.0),
            v(3, 1003, [7.5, 8.0, -0.5], [0.0, -0.125, 0.0], [1.0; 3], 0.0),
        ]
    }

    #[test]
    fn three_vehicles_in_a_multi_update_are_what_python_packs() {
        // struct.pack('i200H600f300H100f', 1234567891, 1, 2, 3, 0…, 3, 3, 1003, 0…,
        // <positions>, <angles>, 100, 100, 100, 200, 200, 50, 100, 100, 100, 0…,
        // 1000, 1000, 0…): its non-zero bytes, by offset.
        let runs = [
            (0, "d30296490100020003"),
            (204, "03000300eb03"),
            (
                406,
                "803f00000040000040c0000080400000a0400000c0c00000f04000000041000000bf",
            ),
            (1615, "3f0000803e"),
            (1635, "be"),
            (2804, "640064006400c800c80032006400640064"),
            (3406, "7a4400007a44"),
        ];
        let mut want = vec![0u8; MultiVehicleUpdate::LEN];
        for (at, bytes) in runs {
            let b = hex(bytes);
            want[at..at + b.len()].copy_from_slice(&b);
        }
        let mut buf = [0xAAu8; MultiVehicleUpdate::LEN];
        assert_eq!(
            MultiVehicleUpdate::encode_into(Placement::OnGround, &three(), &mut buf),
            3
        );
        assert_eq!(&buf[..], &want[..]);
        let m = MultiVehicleUpdate::decode(&want).unwrap();
        assert_eq!(m.placement, Placement::OnGround);
        assert_eq!(m.vehicles().copied().collect::<Vec<_>>(), three());
        assert_eq!(m.encode(), want);
        let poses: Vec<_> = PoseDatagram::decode(&want).unwrap().poses().collect();
        assert_eq!(poses.len(), 3);
        assert_eq!(
            (poses[1].copter_id, poses[1].placement, poses[1].pos_ned),
            (2, Placement::OnGround, [4.0, 5.0, -6.0])
        );
    }

    #[test]
    fn scales_travel_as_rounded_clamped_hundredths() {
        assert_eq!(
            [1.0, 0.014, 0.016, -3.0, 655.35, 1e9, f32::NAN].map(scale_hundredths),
            [100, 1, 2, 0, 65535, 65535, 0]
        );
    }

    #[test]
    fn many_vehicles_take_one_datagram_per_hundred() {
        let vehicles: Vec<PlacedVehicle> = (1..=250u16)
            .map(|id| PlacedVehicle {
                id,
                scale: [1.0; 3],
                ..Default::default()
            })
            .collect();
        let mut out = vec![0xEE; 7];
        let n = MultiVehicleUpdate::encode_all_into(Placement::AsSent, &vehicles, &mut out);
        assert_eq!(
            (n, out.len(), MultiVehicleUpdate::datagram_count(250)),
            (3, 3 * MultiVehicleUpdate::LEN, 3)
        );
        let got: Vec<MultiVehicleUpdate> = out
            .chunks_exact(MultiVehicleUpdate::LEN)
            .map(|d| MultiVehicleUpdate::decode(d).unwrap())
            .collect();
        let ids: Vec<u16> = got.iter().flat_map(|m| m.vehicles().map(|v| v.id)).collect();
        assert_eq!(ids, (1..=250).collect::<Vec<_>>());
        assert_eq!(got[2].vehicles().count(), 50);
        assert_eq!(MultiVehicleUpdate::datagram_count(0), 0);
        assert_eq!(MultiVehicleUpdate::encode_all_into(Placement::AsSent, &[], &mut out), 0);
        assert!(out.is_empty());
    }

    fn crash() -> VehicleCrashData {
        VehicleCrashData {
            copter_id: 1,
            vehicle_type: 3,
            crash: CrashType::Ground,
            runned_time: 7.25,
            vel_ned: [0.5, 0.0, 0.0],
            pos_ned: [1.0, 2.0, 0.25],
            crash_pos: [1.0, 2.0, 0.0],
            target_pos: [0.0, 0.0, 0.5],
            euler: [0.0, 0.0, 0.125],
            motor_rpm: [1000.0, 1000.0, 1000.0, 1000.0, 0.0, 0.0, 0.0, 0.0],
            rays: [100.0, 100.0, 100.0, 100.0, 100.0, 0.25],
            crashed_name: "Landscape_1".into(),
        }
    }

    #[test]
    fn crash_data_is_what_python_packs() {
        // struct.pack('4i1d29f20s', 1234567897, 1, 3, -2, 7.25, <the fields above>, b'Landscape_1')
        let want = hex(
            "d90296490100000003000000feffffff0000000000001d400000003f00000000000000000000803f000000400000803e0000803f\
             000000400000000000000000000000000000003f00000000000000000000003e00007a4400007a4400007a4400007a440000000000\
             00000000000000000000000000c8420000c8420000c8420000c8420000c8420000803e4c616e6473636170655f3100000000000000\
             0000",
        );
        assert_eq!(crash().encode(), want);
        assert_eq!(
            StatusDatagram::decode(&want).unwrap(),
            StatusDatagram::VehicleCrashData(crash())
        );
        assert_eq!(
            [-2, -1, 0, 4, -7].map(CrashType::from_code),
            [
                CrashType::Ground,
                CrashType::SceneObject,
                CrashType::None,
                CrashType::Vehicle(4),
                CrashType::Unknown(-7)
            ]
        );
        assert!([-7, -2, -1, 0, 1, i32::MAX, i32::MIN]
            .iter()
            .all(|&c| CrashType::from_code(c).code() == c));
    }

    #[test]
    fn names_are_cut_to_their_field_and_read_up_to_the_first_nul() {
        let long = VehicleCrashData {
            crashed_name: "a_name_longer_than_twenty_bytes".into(),
            ..crash()
        };
        let b = long.encode();
        assert_eq!(b.len(), VehicleCrashData::LEN);
        assert_eq!(
            VehicleCrashData::decode(&b).unwrap().crashed_name,
            "a_name_longer_than_t"
        );
        let mut odd = crash().encode();
        odd[140..143].copy_from_slice(&[0xFF, b'x', 0]);
        assert_eq!(VehicleCrashData::decode(&odd).unwrap().crashed_name, "\u{FFFD}x");
    }

    fn copter() -> CopterData {
        CopterData {
            copter_id: 5,
            pose: PoseAndBox {
                pos: [1.0, 2.0, -3.0],
                euler: [0.0, 0.0, 1.5],
                quat: Some([1.0, 0.0, 0.0, 0.0]),
                box_origin: [1.0, 2.0, -3.0],
                box_extent: [0.275, 0.275, 0.15],
                time_stamp: 3.5,
            },
        }
    }

    fn building() -> ObjectData {
        ObjectData {
            seq_id: 0,
            pose: PoseAndBox {
                pos: [16.0, 0.0, 0.0],
                euler: [0.0; 3],
                quat: Some([1.0, 0.0, 0.0, 0.0]),
                box_origin: [16.0, 0.0, -3.0],
                box_extent: [1.5, 1.5, 3.0],
                time_stamp: 2.0,
            },
            name: "Building_1".into(),
        }
    }

    #[test]
    fn copter_and_object_data_are_what_python_packs_in_both_forms() {
        // struct.pack('2i16f1d', 1234567891, 5, 1, 2, -3, 0, 0, 1.5, 1, 0, 0, 0, 1, 2, -3, 0.275, 0.275, 0.15, 3.5)
        let want = hex(
            "d3029649050000000000803f00000040000040c000000000000000000000c03f0000803f0000000000000000000000000000803f\
             00000040000040c0cdcc8c3ecdcc8c3e9a99193e0000000000000c40",
        );
        assert_eq!(copter().encode(), want);
        assert_eq!(
            StatusDatagram::decode(&want).unwrap(),
            StatusDatagram::CopterData(copter())
        );
        // struct.pack('2i16f1d32s', 1234567891, 0, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 16, 0, -3, 1.5, 1.5, 3, 2.0, b'Building_1')
        let want = hex(
            "d3029649000000000000804100000000000000000000000000000000000000000000803f00000000000000000000000000008041\
             00000000000040c00000c03f0000c03f0000404000000000000000404275696c64696e675f3100000000000000000000000000000000\
             000000000000",
        );
        assert_eq!(building().encode(), want);
        assert_eq!(
            StatusDatagram::decode(&want).unwrap(),
            StatusDatagram::ObjectData(building())
        );
        // The older forms: no quaternion.
        let old = CopterData {
            pose: PoseAndBox {
                quat: None,
                ..copter().pose
            },
            ..copter()
        };
        assert_eq!(old.encode().len(), CopterData::LEGACY_LEN);
        assert_eq!(CopterData::decode(&old.encode()).unwrap(), old);
        let old = ObjectData {
            pose: PoseAndBox {
                quat: None,
                ..building().pose
            },
            ..building()
        };
        assert_eq!(old.encode().len(), ObjectData::LEGACY_LEN);
        assert_eq!(
            StatusDatagram::decode(&old.encode()).unwrap(),
            StatusDatagram::ObjectData(old)
        );
    }

    #[test]
    fn copter_sim_crash_takes_either_checksum_and_sil_data_reads_back() {
        // struct.pack('iii', 1234567890, 4, 2)
        let sdk = hex("d20296490400000002000000");
        let crash = CopterSimCrash {
            copter_id: 4,
            target_id: 2,
        };
        assert_eq!(crash.encode(), sdk);
        let mut documented = sdk.clone();
        documented[0] = 0xD3;
        for d in [&sdk, &documented] {
            assert_eq!(
                StatusDatagram::decode(d).unwrap(),
                StatusDatagram::CopterSimCrash(crash)
            );
        }
        documented[0] = 0xD4;
        assert!(matches!(
            StatusDatagram::decode(&documented),
            Err(DecodeError::Checksum { .. })
        ));
        let sil = SilIntFloat {
            copter_id: 2,
            ints: [1, 2, 3, 4, 5, 6, 7, 8],
            floats: std::array::from_fn(|i| i as f32 * 0.5),
        };
        // struct.pack('10i20f', 1234567897, 2, *range(1, 9), *[x * 0.5 for x in range(20)])
        let want = hex(
            "d9029649020000000100000002000000030000000400000005000000060000000700000008000000000000000000003f0000\
             803f0000c03f0000004000002040000040400000604000008040000090400000a0400000b0400000c0400000d0400000e040\
             0000f04000000041000008410000104100001841",
        );
        assert_eq!(sil.encode(), want);
        assert_eq!(StatusDatagram::decode(&want).unwrap(), StatusDatagram::SilIntFloat(sil));
    }

    #[test]
    fn the_status_port_is_read_by_length_then_checksum() {
        let camera = CameraData {
            seq_id: 2,
            type_id: 9,
            data_height: 720,
            data_width: 1280,
            camera_fov: 60.0,
            pos_ue: [1.0, 2.0, -3.0],
            ang_euler: [0.0; 3],
            ang_quat: Some([1.0, 0.0, 0.0, 0.0]),
            time_stamp: 1.0,
        };
        let echo = GimbalEcho::decode(
            &crate::request::VisionSensorReq::default().encode(crate::request::RequestForm::Gimbal148, 12346),
        )
        .unwrap();
        let all = [
            StatusDatagram::VehicleCrashData(crash()),
            StatusDatagram::CopterData(copter()),
            StatusDatagram::ObjectData(building()),
            StatusDatagram::CameraData(camera),
            StatusDatagram::CameraData(CameraData {
                ang_quat: None,
                ..camera
            }),
            StatusDatagram::CopterSimCrash(CopterSimCrash {
                copter_id: 1,
                target_id: 2,
            }),
            StatusDatagram::SilIntFloat(SilIntFloat {
                copter_id: 1,
                ints: [0; 8],
                floats: [0.0; 20],
            }),
            StatusDatagram::GimbalEcho(echo),
        ];
        for d in &all {
            assert_eq!(&StatusDatagram::decode(&d.encode()).unwrap(), d);
        }
        // 120 and 160 share a checksum, 64/80/96/112 another: the length tells.
        let mut as_crash = all[6].encode();
        as_crash.resize(160, 0);
        assert!(matches!(
            StatusDatagram::decode(&as_crash),
            Ok(StatusDatagram::VehicleCrashData(_))
        ));
        assert!(matches!(
            StatusDatagram::decode(&[0; 100]),
            Err(DecodeError::Length { got: 100, .. })
        ));
        let mut wrong = crash().encode();
        wrong[3] ^= 0x80;
        assert!(matches!(
            StatusDatagram::decode(&wrong),
            Err(DecodeError::Checksum { .. })
        ));
    }

    #[test]
    fn values_beyond_f32_or_not_finite_are_named_by_their_field() {
        assert_eq!(wire_f32(1.5), Some(1.5));
        assert_eq!(wire_f32(-3.0e38), Some(-3.0e38));
        for bad in [1e39, -1e39, f64::NAN, f64::INFINITY] {
            assert_eq!(wire_f32(bad), None, "{bad}");
        }
        assert_eq!(update().not_finite(), None);
        let u = VehicleUpdate {
            vel_ned: [0.0, 1e39_f64 as f32, 0.0],
            ..update()
        };
        assert_eq!(u.not_finite(), Some("vel_ned"));
        let u = VehicleUpdate {
            pos_ned: [f64::NAN, 0.0, 0.0],
            ..update()
        };
        assert_eq!(u.not_finite(), Some("pos_ned"));
        assert_eq!(three()[1].not_finite(), None);
        let v = PlacedVehicle {
            pos_ned: [f32::INFINITY, 0.0, 0.0],
            ..three()[1]
        };
        assert_eq!(v.not_finite(), Some("pos_ned"));
        assert_eq!(crash().not_finite(), None);
        for (field, bad) in [
            (
                "vel_ned",
                VehicleCrashData {
                    vel_ned: [f32::NAN; 3],
                    ..crash()
                },
            ),
            (
                "rays",
                VehicleCrashData {
                    rays: [1.0, f32::NAN, 1.0, 1.0, 1.0, 1.0],
                    ..crash()
                },
            ),
            (
                "crash_pos",
                VehicleCrashData {
                    crash_pos: [0.0, f32::NEG_INFINITY, 0.0],
                    ..crash()
                },
            ),
            (
                "target_pos",
                VehicleCrashData {
                    target_pos: [f32::NAN; 3],
                    ..crash()
                },
            ),
            (
                "runned_time",
                VehicleCrashData {
                    runned_time: f64::NAN,
                    ..crash()
                },
            ),
        ] {
            assert_eq!(bad.not_finite(), Some(field));
        }
        assert_eq!(copter().pose.not_finite(), None);
        let odd = PoseAndBox {
            box_extent: [1.0, f32::NAN, 1.0],
            ..copter().pose
        };
        assert_eq!(odd.not_finite(), Some("box_extent"));
        let odd = PoseAndBox {
            quat: Some([f32::NAN, 0.0, 0.0, 0.0]),
            ..copter().pose
        };
        assert_eq!(odd.not_finite(), Some("quat"));
    }

    #[test]
    fn pose_datagrams_are_told_apart_by_length() {
        let single = PoseDatagram::Single(update());
        assert_eq!(PoseDatagram::decode(&single.encode()).unwrap(), single);
        let pose = single.poses().next().unwrap();
        assert_eq!(
            (pose.copter_id, pose.pos_ned, pose.scale, pose.runned_time),
            (3, [10.5, -20.25, -5.0], [1.0; 3], Some(12.5))
        );
        let mut buf = [0u8; MultiVehicleUpdate::LEN];
        MultiVehicleUpdate::encode_into(Placement::AsSent, &[], &mut buf);
        assert_eq!(PoseDatagram::decode(&buf).unwrap().poses().count(), 0);
        assert!(matches!(
            PoseDatagram::decode(&[0; 56]),
            Err(DecodeError::Length { .. })
        ));
    }
}
