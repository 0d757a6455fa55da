//! Gimbal control and status (RflySim's vision protocol, rflysim.com/doc/en/4.DevRef/vis-comm.html, section 2): `CameraCtrl` / `CameraAICtrl`
//! commands → the 148-byte gimbal `VisionSensorReq`; RflySim3D's 148-byte
//! echo on port 20006 → `CameraStatus` with its `CameraParams`.
//!
//! Units on the ROS side: FOV and attitude in degrees × 100 (roll, pitch,
//! yaw of the camera relative to the vehicle, FRD, as RflySim's mount
//! angles), rates in degrees/s × 100. On the wire: degrees for FOV, radians
//! for angles and rad/s for rates. A rate is sent when its direction
//! (`others[1]`, `others[3]`) is not 0; direction ±1 with rate 0 stops.

use rflysim_proto::config::SensorConfig;
use rflysim_proto::gimbal::{fold, slot, GimbalBitTable, GimbalControl, GimbalEcho};
use rflysim_proto::request::VisionSensorReq;

/// `ctrl_type` bits of `CameraCtrl` (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.3.1), and this bridge's
/// additions for the protocol's other controls ("use bitwise OR").
pub mod ctrl_type {
    pub const RESOLUTION: u8 = 0x1;
    pub const FOV: u8 = 0x2;
    pub const ATTITUDE: u8 = 0x4;
    pub const OPTICAL_ZOOM: u8 = 0x8;
    /// `others[5]`: the vehicle id to track.
    pub const TRACK_TARGET: u8 = 0x10;
    /// `others[6]`: ranging 0 off / 1 on.
    pub const RANGING: u8 = 0x20;
    /// `others[7]`: light source 0 RGB, 1 thermal, 2 IR gray.
    pub const LIGHT_SOURCE: u8 = 0x40;
    pub const ALL: u8 = 0x7F;
}

/// A control command as the messages carry it (no ROS types here, so that
/// the mapping is testable without a node).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ctrl {
    pub ctrl_type: u8,
    pub height: u32,
    pub width: u32,
    pub fov: u32,
    pub roll: i32,
    pub pitch: i32,
    pub yaw: i32,
    pub optics_multiply: i32,
    pub base_optics: u32,
    pub others: Vec<i32>,
}

/// What the node remembers between commands: every request carries the
/// gimbal's whole state (angles and FOV travel in the request's own fields).
/// It is what the requests sent so far left: it changes only when a request
/// leaves ([`GimbalCommandState::request`], by the command path's transport).
#[derive(Debug, Clone, PartialEq)]
pub struct GimbalCommandState {
    pub base: VisionSensorReq,
    /// Optical zoom factor (1 = the zoom base).
    pub zoom: f64,
}

impl GimbalCommandState {
    pub fn new(cfg: &SensorConfig) -> Self {
        let mut base = VisionSensorReq::from(cfg);
        // Angles are sent as Euler radians from here on.
        base.eular_or_quat = 0.0;
        base.sensor_ang_eular = cfg.mount_euler_rad().map(|a| a as f32);
        Self { base, zoom: 1.0 }
    }

    /// The request that makes `change` from this state, and the state once it has left.
    pub fn request(&self, change: &GimbalChange) -> (VisionSensorReq, GimbalCommandState) {
        let mut req = self.base;
        req.bitmask = change.bitmask;
        req.other_params = change.other_params;
        if let Some((width, height)) = change.size {
            req.data_width = width;
            req.data_height = height;
        }
        if let Some(fov) = change.fov_deg {
            req.camera_fov = fov;
        }
        if let Some(euler) = change.euler_rad {
            req.eular_or_quat = 0.0;
            req.sensor_ang_eular = euler;
        }
        let mut next = self.clone();
        if let Some(zoom) = change.zoom {
            next.zoom = zoom.apply(self.zoom);
            req.other_params[slot::OPTICAL_ZOOM] = (next.zoom - 1.0) as f32;
        }
        // The new state: angles, FOV and size as now commanded.
        next.base.data_width = req.data_width;
        next.base.data_height = req.data_height;
        next.base.camera_fov = req.camera_fov;
        next.base.sensor_ang_eular = req.sensor_ang_eular;
        next.base.eular_or_quat = req.eular_or_quat;
        (req, next)
    }
}

/// The optical zoom's range: ×1 (the zoom base) to ×1000.
const ZOOM_RANGE: (f64, f64) = (1.0, 1000.0);
/// 2^10 > 1000: a zoom doubled (or halved) more often than this ends at the
/// range's bound whatever it was, so the count is kept within it.
const MAX_DOUBLINGS: i32 = 10;

/// A change of the optical zoom, `z ↦ clamp(z · 2^doublings, lo, hi)`: a
/// step sets it, INT32_MAX doubles and INT32_MIN halves it within its range.
/// Two changes compose into one of the same form, so that two doublings
/// waiting together still double twice when they leave as one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoomChange {
    doublings: i32,
    lo: f64,
    hi: f64,
}

impl ZoomChange {
    pub fn set(zoom: f64) -> Self {
        Self {
            doublings: 0,
            lo: zoom,
            hi: zoom,
        }
    }

    pub fn double() -> Self {
        Self {
            doublings: 1,
            lo: ZOOM_RANGE.0,
            hi: ZOOM_RANGE.1,
        }
    }

    pub fn halve() -> Self {
        Self {
            doublings: -1,
            ..Self::double()
        }
    }

    pub fn apply(self, zoom: f64) -> f64 {
        (zoom * 2f64.powi(self.doublings)).clamp(self.lo, self.hi)
    }

    /// This change, then `next`: clamp(clamp(x, a, b), c, d) is
    /// clamp(x, clamp(a, c, d), clamp(b, c, d)).
    pub fn then(self, next: ZoomChange) -> ZoomChange {
        ZoomChange {
            doublings: (self.doublings + next.doublings).clamp(-MAX_DOUBLINGS, MAX_DOUBLINGS),
            lo: next.apply(self.lo),
            hi: next.apply(self.hi),
        }
    }
}

/// What a command changes, validated: its controls as they go on the wire
/// (bits and `otherParams` slots) and the request fields it sets. The rest of
/// the request comes from the gimbal's state when it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GimbalChange {
    pub bitmask: u32,
    pub other_params: [f32; 16],
    pub size: Option<(u16, u16)>,
    pub fov_deg: Option<f32>,
    pub euler_rad: Option<[f32; 3]>,
    pub zoom: Option<ZoomChange>,
}

impl GimbalChange {
    /// Both rates 0 (the watchdog's neutral): the motion stops, the angles stay.
    pub fn stop_rates(bits: &GimbalBitTable) -> Self {
        let mut c = Self::default();
        c.set(bits, GimbalControl::Rates);
        c
    }

    /// It sets a rate other than 0: a motion in force until stopped.
    pub fn moves(&self, bits: &GimbalBitTable) -> bool {
        bits.bit(GimbalControl::Rates).is_some_and(|b| self.bitmask & b != 0)
            && (self.other_params[slot::PITCH_RATE] != 0.0 || self.other_params[slot::YAW_RATE] != 0.0)
    }

    /// This change, then `newer`, as one (two commands waiting together):
    /// `newer`'s controls and fields, and those of this one it does not set.
    pub fn then(self, newer: GimbalChange, bits: &GimbalBitTable) -> GimbalChange {
        let controls = |c: &GimbalChange| VisionSensorReq {
            bitmask: c.bitmask,
            other_params: c.other_params,
            ..Default::default()
        };
        let folded = fold(&controls(&self), controls(&newer), bits);
        GimbalChange {
            bitmask: folded.bitmask,
            other_params: folded.other_params,
            size: newer.size.or(self.size),
            fov_deg: newer.fov_deg.or(self.fov_deg),
            euler_rad: newer.euler_rad.or(self.euler_rad),
            zoom: match (self.zoom, newer.zoom) {
                (Some(older), Some(newer)) => Some(older.then(newer)),
                (older, newer) => newer.or(older),
            },
        }
    }

    fn set(&mut self, bits: &GimbalBitTable, control: GimbalControl) {
        if let Some(b) = bits.bit(control) {
            self.bitmask |= b;
        }
    }
}

fn centi_deg_to_rad(v: i32) -> f32 {
    (f64::from(v) / 100.0).to_radians() as f32
}

/// Validates a `CameraCtrl` and turns it into what it changes. An invalid
/// command is an error naming the field: nothing is sent, nothing changes.
pub fn ctrl_change(c: &Ctrl, bits: &GimbalBitTable) -> Result<GimbalChange, String> {
    if c.ctrl_type & !ctrl_type::ALL != 0 {
        return Err(format!(
            "ctrl_type 0x{:02x}: unknown bits 0x{:02x}",
            c.ctrl_type,
            c.ctrl_type & !ctrl_type::ALL
        ));
    }
    if c.others.len() > 8 {
        return Err(format!("others: {} values, at most 8", c.others.len()));
    }
    let other = |i: usize| c.others.get(i).copied().unwrap_or(0);
    let wants = |control: u8| c.ctrl_type & control != 0;
    let mut change = GimbalChange::default();
    if wants(ctrl_type::RESOLUTION) {
        change.size = Some(resolution(c)?);
    }
    if wants(ctrl_type::FOV) {
        change.fov_deg = Some(fov(c)?);
        change.set(bits, GimbalControl::Fov);
    }
    if wants(ctrl_type::ATTITUDE) {
        change.euler_rad = Some(attitude(c)?);
        change.set(bits, GimbalControl::Angle);
    }
    if wants(ctrl_type::OPTICAL_ZOOM) {
        change.zoom = Some(optical_zoom(c, &mut change, bits)?);
    }
    centring(other(0), &mut change, bits)?;
    let rates_given = rates([other(1), other(2), other(3), other(4)], &mut change, bits)?;
    if wants(ctrl_type::TRACK_TARGET) {
        track_target(other(5), &mut change, bits)?;
    }
    if wants(ctrl_type::RANGING) {
        special(
            ("others[6] (ranging)", other(6), 1),
            GimbalControl::Ranging,
            slot::RANGING,
            &mut change,
            bits,
        )?;
    }
    if wants(ctrl_type::LIGHT_SOURCE) {
        let light = ("others[7] (light source)", other(7), 2);
        special(light, GimbalControl::LightSource, slot::LIGHT_SOURCE, &mut change, bits)?;
    }
    // Centring and the special controls need a bit: a numbering without one
    // for a requested control cannot express the command.
    let needs_bit = [
        (other(0) == 1, GimbalControl::Centre),
        (rates_given, GimbalControl::Rates),
        (wants(ctrl_type::OPTICAL_ZOOM), GimbalControl::OpticalZoom),
        (wants(ctrl_type::TRACK_TARGET), GimbalControl::TrackTarget),
        (wants(ctrl_type::RANGING), GimbalControl::Ranging),
        (wants(ctrl_type::LIGHT_SOURCE), GimbalControl::LightSource),
    ];
    if let Some((_, control)) = needs_bit
        .iter()
        .find(|(wanted, control)| *wanted && bits.bit(*control).is_none())
    {
        return Err(format!("{control:?} has no bit in the {} numbering", bits.name));
    }
    Ok(change)
}

fn resolution(c: &Ctrl) -> Result<(u16, u16), String> {
    if !(1..=u32::from(u16::MAX)).contains(&c.width) || !(1..=u32::from(u16::MAX)).contains(&c.height) {
        return Err(format!("resolution {}×{} outside 1..=65535", c.width, c.height));
    }
    Ok((c.width as u16, c.height as u16))
}

/// Degrees.
fn fov(c: &Ctrl) -> Result<f32, String> {
    if !(1..18_000).contains(&c.fov) {
        return Err(format!("fov {} (deg × 100) outside 0.01..180°", c.fov));
    }
    Ok(c.fov as f32 / 100.0)
}

/// Euler radians.
fn attitude(c: &Ctrl) -> Result<[f32; 3], String> {
    for (name, v, limit) in [
        ("roll", c.roll, 18_000),
        ("pitch", c.pitch, 9_000),
        ("yaw", c.yaw, 18_000),
    ] {
        // Not `v.abs()`: |i32::MIN| does not fit an i32.
        if !(-limit..=limit).contains(&v) {
            return Err(format!("{name} {v} (deg × 100) outside ±{}°", limit / 100));
        }
    }
    Ok([
        centi_deg_to_rad(c.roll),
        centi_deg_to_rad(c.pitch),
        centi_deg_to_rad(c.yaw),
    ])
}

/// The zoom change commanded (its value in the request comes from the zoom in
/// force when it is sent), and the zoom base.
fn optical_zoom(c: &Ctrl, change: &mut GimbalChange, bits: &GimbalBitTable) -> Result<ZoomChange, String> {
    let zoom = match c.optics_multiply {
        i32::MAX => ZoomChange::double(),
        i32::MIN => ZoomChange::halve(),
        v if (0..1000).contains(&v) => ZoomChange::set(f64::from(v) + 1.0),
        v => {
            return Err(format!(
                "optics_multiply {v}: a zoom step 0..999, or INT32_MAX / INT32_MIN"
            ))
        }
    };
    change.set(bits, GimbalControl::OpticalZoom);
    if c.base_optics != 0 {
        if !(4..=1000).contains(&c.base_optics) {
            return Err(format!("base_optics {} outside 4..=1000", c.base_optics));
        }
        change.set(bits, GimbalControl::ZoomBase);
        change.other_params[slot::ZOOM_BASE] = c.base_optics as f32;
    }
    Ok(zoom)
}

fn centring(centre: i32, change: &mut GimbalChange, bits: &GimbalBitTable) -> Result<(), String> {
    match centre {
        0 => Ok(()),
        1 => {
            change.set(bits, GimbalControl::Centre);
            change.other_params[slot::CENTRE] = 1.0;
            Ok(())
        }
        v => Err(format!("others[0] (centring) {v}: 0 or 1")),
    }
}

/// `others[1..=4]`: yaw direction and rate, pitch direction and rate;
/// whether a motion was commanded.
fn rates(
    [yaw_dir, yaw_rate, pitch_dir, pitch_rate]: [i32; 4],
    change: &mut GimbalChange,
    bits: &GimbalBitTable,
) -> Result<bool, String> {
    for (name, d) in [
        ("others[1] (yaw direction)", yaw_dir),
        ("others[3] (pitch direction)", pitch_dir),
    ] {
        if !(-1..=1).contains(&d) {
            return Err(format!("{name} {d}: −1, 0 or 1"));
        }
    }
    for (name, r) in [
        ("others[2] (yaw rate)", yaw_rate),
        ("others[4] (pitch rate)", pitch_rate),
    ] {
        if !(0..=36_000).contains(&r) {
            return Err(format!("{name} {r} (deg/s × 100) outside 0..=360°/s"));
        }
    }
    // Direction 0 is "no action" (RflySim's vision protocol, rflysim.com/doc/en/4.DevRef/vis-comm.html); a direction with rate 0 stops the motion.
    let given = yaw_dir != 0 || pitch_dir != 0;
    if given {
        change.set(bits, GimbalControl::Rates);
        change.other_params[slot::PITCH_RATE] = pitch_dir as f32 * centi_deg_to_rad(pitch_rate);
        change.other_params[slot::YAW_RATE] = yaw_dir as f32 * centi_deg_to_rad(yaw_rate);
    }
    Ok(given)
}

fn track_target(vehicle: i32, change: &mut GimbalChange, bits: &GimbalBitTable) -> Result<(), String> {
    if vehicle < 0 {
        return Err(format!("others[5] (target vehicle) {vehicle}"));
    }
    change.set(bits, GimbalControl::TrackTarget);
    change.other_params[slot::TRACK_TARGET] = vehicle as f32;
    Ok(())
}

/// A control whose value (`name`, `value`) is one of 0..=`max`, in `slot`.
fn special(
    (name, value, max): (&str, i32, i32),
    control: GimbalControl,
    slot: usize,
    change: &mut GimbalChange,
    bits: &GimbalBitTable,
) -> Result<(), String> {
    if !(0..=max).contains(&value) {
        let below: Vec<String> = (0..max).map(|v| v.to_string()).collect();
        return Err(format!("{name} {value}: {} or {max}", below.join(", ")));
    }
    change.set(bits, control);
    change.other_params[slot] = value as f32;
    Ok(())
}

/// `CameraAICtrl`: 0 box-selects every target, 1 the target at `pixel_pos`
/// (x, y), inside the image of `state`.
pub fn ai_change(
    state: &GimbalCommandState,
    ctrl_id: u8,
    pixel_pos: &[u32],
    bits: &GimbalBitTable,
) -> Result<GimbalChange, String> {
    let mut change = GimbalChange {
        bitmask: bits
            .bit(GimbalControl::AiBoxSelect)
            .ok_or_else(|| format!("AI box-select has no bit in the {} numbering", bits.name))?,
        ..Default::default()
    };
    let params = &mut change.other_params;
    match (ctrl_id, pixel_pos.len()) {
        (0, 0) => params[slot::AI_MODE] = 1.0,
        (0, n) => return Err(format!("ctrl_id 0 (all targets) takes no pixel_pos, got {n} values")),
        (1, 2) => {
            let (w, h) = (u32::from(state.base.data_width), u32::from(state.base.data_height));
            if pixel_pos[0] >= w || pixel_pos[1] >= h {
                return Err(format!(
                    "pixel_pos ({}, {}) outside the {w}×{h} image",
                    pixel_pos[0], pixel_pos[1]
                ));
            }
            params[slot::AI_MODE] = 2.0;
            params[slot::AI_PIXEL_X] = pixel_pos[0] as f32;
            params[slot::AI_PIXEL_Y] = pixel_pos[1] as f32;
        }
        (1, n) => return Err(format!("ctrl_id 1 needs pixel_pos = [x, y], got {n} values")),
        (id, _) => return Err(format!("ctrl_id {id}: 0 (all targets) or 1 (target at pixel_pos)")),
    }
    Ok(change)
}

/// The status fields of an echo, in `CameraStatus` units.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub width: u32,
    pub height: u32,
    /// deg × 100.
    pub fov: u32,
    /// deg × 100: roll, pitch, yaw.
    pub attitude: [i32; 3],
    /// fx, fy, cx, cy (pixels).
    pub intrinsics: [f32; 4],
    /// Plane → camera, degrees.
    pub p2c_deg: [f32; 3],
    /// Camera offset from the vehicle centre, FRD metres.
    pub offset_frd: [f32; 3],
    /// [centre, yaw direction, yaw rate, pitch direction, pitch rate] as CameraCtrl's `others`.
    pub others: Vec<i32>,
    pub focal_length: f32,
    pub laser_range: f32,
}

pub fn status_from_echo(e: &GimbalEcho, cfg: &SensorConfig) -> Status {
    let deg100 = |rad: f32| (f64::from(rad).to_degrees() * 100.0).round() as i32;
    let rate = |r: f32| (f64::from(r.abs()).to_degrees() * 100.0).round() as i32;
    let dir = |r: f32| {
        if r > 0.0 {
            1
        } else if r < 0.0 {
            -1
        } else {
            0
        }
    };
    let (pitch_rate, yaw_rate) = (e.rates[0], e.rates[1]);
    Status {
        width: u32::from(e.width),
        height: u32::from(e.height),
        fov: (f64::from(e.camera_fov_deg) * 100.0).round().max(0.0) as u32,
        attitude: [deg100(e.euler[0]), deg100(e.euler[1]), deg100(e.euler[2])],
        intrinsics: [
            e.focal_px[0],
            e.focal_px[1],
            f32::from(e.width) / 2.0,
            f32::from(e.height) / 2.0,
        ],
        p2c_deg: e.euler.map(|a| f64::from(a).to_degrees() as f32),
        offset_frd: cfg.sensor_pos_xyz,
        others: vec![0, dir(yaw_rate), rate(yaw_rate), dir(pitch_rate), rate(pitch_rate)],
        focal_length: e.focal_length,
        laser_range: e.laser_range,
    }
}

#[cfg(test)]
#[path = "gimbal_tests.rs"]
mod tests;
