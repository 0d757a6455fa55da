//! The structs that place vehicles in RflySim3D's scene, sent to window
//! i's request port 20010 + i, and the poses they carry.

use super::not_finite;
use crate::error::DecodeError;
use crate::wire::{checksum, exact, Fields, FieldsMut, Writer};

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

#[cfg(test)]
#[path = "placement_tests.rs"]
pub(super) mod tests;
