//! What RflySim3D sends back on its status port 20006, read by
//! [`StatusDatagram::decode`] by exact length, then checksum.

use super::not_finite;
use crate::error::DecodeError;
use crate::gimbal::GimbalEcho;
use crate::telemetry::{CameraData, CAMERA_DATA_CHECKSUM};
use crate::wire::{checksum, exact, Fields, Writer};

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
#[path = "status_tests.rs"]
pub(super) mod tests;
