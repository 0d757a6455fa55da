//! Gimbal control and status (RflySim vision protocol, section 2): `CameraCtrl` / `CameraAICtrl`
//! commands → the 148-byte gimbal `VisionSensorReq`; RflySim3D's 148-byte
//! echo on port 20006 → `CameraStatus` with its `CameraParams`.
//!
//! Units on the ROS side: FOV and attitude in degrees × 100 (roll, pitch,
//! yaw of the camera relative to the vehicle, FRD, as RflySim's mount
//! angles), rates in degrees/s × 100. On the wire: degrees for FOV, radians
//! for angles and rad/s for rates. A rate is sent when its direction
//! (`others[1]`, `others[3]`) is not 0; direction ±1 with rate 0 stops.

use rflysim_proto::config::SensorConfig;
use rflysim_proto::gimbal::{slot, GimbalBitTable, GimbalControl, GimbalEcho};
use rflysim_proto::request::VisionSensorReq;

/// `ctrl_type` bits of `CameraCtrl` (the RflySim vision protocol, section 2.3.1), and this bridge's
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
}

fn centi_deg_to_rad(v: i32) -> f32 {
    (f64::from(v) / 100.0).to_radians() as f32
}

fn set(req: &mut VisionSensorReq, bits: &GimbalBitTable, control: GimbalControl) {
    if let Some(b) = bits.bit(control) {
        req.bitmask |= b;
    }
}

/// Validates a `CameraCtrl` and turns it into the request to send (and the
/// state after it). An invalid command is an error naming the field: nothing is sent.
pub fn ctrl_request(
    state: &GimbalCommandState,
    c: &Ctrl,
    bits: &GimbalBitTable,
) -> Result<(VisionSensorReq, GimbalCommandState), String> {
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
    let mut next = state.clone();
    let mut req = state.base;
    req.bitmask = 0;
    req.other_params = [0.0; 16];
    if wants(ctrl_type::RESOLUTION) {
        resolution(c, &mut req)?;
    }
    if wants(ctrl_type::FOV) {
        fov(c, &mut req, bits)?;
    }
    if wants(ctrl_type::ATTITUDE) {
        attitude(c, &mut req, bits)?;
    }
    if wants(ctrl_type::OPTICAL_ZOOM) {
        next.zoom = optical_zoom(c, state.zoom, &mut req, bits)?;
    }
    centring(other(0), &mut req, bits)?;
    let rates_given = rates([other(1), other(2), other(3), other(4)], &mut req, bits)?;
    if wants(ctrl_type::TRACK_TARGET) {
        track_target(other(5), &mut req, bits)?;
    }
    if wants(ctrl_type::RANGING) {
        special(
            ("others[6] (ranging)", other(6), 1),
            GimbalControl::Ranging,
            slot::RANGING,
            &mut req,
            bits,
        )?;
    }
    if wants(ctrl_type::LIGHT_SOURCE) {
        let light = ("others[7] (light source)", other(7), 2);
        special(light, GimbalControl::LightSource, slot::LIGHT_SOURCE, &mut req, bits)?;
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
    // The new state: angles, FOV and size as now commanded.
    next.base.data_width = req.data_width;
    next.base.data_height = req.data_height;
    next.base.camera_fov = req.camera_fov;
    next.base.sensor_ang_eular = req.sensor_ang_eular;
    next.base.eular_or_quat = req.eular_or_quat;
    Ok((req, next))
}

fn resolution(c: &Ctrl, req: &mut VisionSensorReq) -> Result<(), String> {
    if !(1..=u32::from(u16::MAX)).contains(&c.width) || !(1..=u32::from(u16::MAX)).contains(&c.height) {
        return Err(format!("resolution {}×{} outside 1..=65535", c.width, c.height));
    }
    req.data_width = c.width as u16;
    req.data_height = c.height as u16;
    Ok(())
}

fn fov(c: &Ctrl, req: &mut VisionSensorReq, bits: &GimbalBitTable) -> Result<(), String> {
    if !(1..18_000).contains(&c.fov) {
        return Err(format!("fov {} (deg × 100) outside 0.01..180°", c.fov));
    }
    req.camera_fov = c.fov as f32 / 100.0;
    set(req, bits, GimbalControl::Fov);
    Ok(())
}

fn attitude(c: &Ctrl, req: &mut VisionSensorReq, bits: &GimbalBitTable) -> Result<(), String> {
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
    req.eular_or_quat = 0.0;
    req.sensor_ang_eular = [
        centi_deg_to_rad(c.roll),
        centi_deg_to_rad(c.pitch),
        centi_deg_to_rad(c.yaw),
    ];
    set(req, bits, GimbalControl::Angle);
    Ok(())
}

/// The zoom now commanded, from the zoom in force.
fn optical_zoom(c: &Ctrl, zoom: f64, req: &mut VisionSensorReq, bits: &GimbalBitTable) -> Result<f64, String> {
    let next = match c.optics_multiply {
        i32::MAX => (zoom * 2.0).min(1000.0),
        i32::MIN => (zoom / 2.0).max(1.0),
        v if (0..1000).contains(&v) => f64::from(v) + 1.0,
        v => {
            return Err(format!(
                "optics_multiply {v}: a zoom step 0..999, or INT32_MAX / INT32_MIN"
            ))
        }
    };
    set(req, bits, GimbalControl::OpticalZoom);
    req.other_params[slot::OPTICAL_ZOOM] = (next - 1.0) as f32;
    if c.base_optics != 0 {
        if !(4..=1000).contains(&c.base_optics) {
            return Err(format!("base_optics {} outside 4..=1000", c.base_optics));
        }
        set(req, bits, GimbalControl::ZoomBase);
        req.other_params[slot::ZOOM_BASE] = c.base_optics as f32;
    }
    Ok(next)
}

fn centring(centre: i32, req: &mut VisionSensorReq, bits: &GimbalBitTable) -> Result<(), String> {
    match centre {
        0 => Ok(()),
        1 => {
            set(req, bits, GimbalControl::Centre);
            req.other_params[slot::CENTRE] = 1.0;
            Ok(())
        }
        v => Err(format!("others[0] (centring) {v}: 0 or 1")),
    }
}

/// `others[1..=4]`: yaw direction and rate, pitch direction and rate;
/// whether a motion was commanded.
fn rates(
    [yaw_dir, yaw_rate, pitch_dir, pitch_rate]: [i32; 4],
    req: &mut VisionSensorReq,
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
    // Direction 0 is "no action" (RflySim vision protocol); a direction with rate 0 stops the motion.
    let given = yaw_dir != 0 || pitch_dir != 0;
    if given {
        set(req, bits, GimbalControl::Rates);
        req.other_params[slot::PITCH_RATE] = pitch_dir as f32 * centi_deg_to_rad(pitch_rate);
        req.other_params[slot::YAW_RATE] = yaw_dir as f32 * centi_deg_to_rad(yaw_rate);
    }
    Ok(given)
}

fn track_target(vehicle: i32, req: &mut VisionSensorReq, bits: &GimbalBitTable) -> Result<(), String> {
    if vehicle < 0 {
        return Err(format!("others[5] (target vehicle) {vehicle}"));
    }
    set(req, bits, GimbalControl::TrackTarget);
    req.other_params[slot::TRACK_TARGET] = vehicle as f32;
    Ok(())
}

/// A control whose value (`name`, `value`) is one of 0..=`max`, in `slot`.
fn special(
    (name, value, max): (&str, i32, i32),
    control: GimbalControl,
    slot: usize,
    req: &mut VisionSensorReq,
    bits: &GimbalBitTable,
) -> Result<(), String> {
    if !(0..=max).contains(&value) {
        let below: Vec<String> = (0..max).map(|v| v.to_string()).collect();
        return Err(format!("{name} {value}: {} or {max}", below.join(", ")));
    }
    set(req, bits, control);
    req.other_params[slot] = value as f32;
    Ok(())
}

/// `CameraAICtrl`: 0 box-selects every target, 1 the target at `pixel_pos` (x, y).
pub fn ai_request(
    state: &GimbalCommandState,
    ctrl_id: u8,
    pixel_pos: &[u32],
    bits: &GimbalBitTable,
) -> Result<VisionSensorReq, String> {
    let mut req = state.base;
    req.bitmask = bits
        .bit(GimbalControl::AiBoxSelect)
        .ok_or_else(|| format!("AI box-select has no bit in the {} numbering", bits.name))?;
    req.other_params = [0.0; 16];
    match (ctrl_id, pixel_pos.len()) {
        (0, 0) => req.other_params[slot::AI_MODE] = 1.0,
        (0, n) => return Err(format!("ctrl_id 0 (all targets) takes no pixel_pos, got {n} values")),
        (1, 2) => {
            let (w, h) = (u32::from(state.base.data_width), u32::from(state.base.data_height));
            if pixel_pos[0] >= w || pixel_pos[1] >= h {
                return Err(format!(
                    "pixel_pos ({}, {}) outside the {w}×{h} image",
                    pixel_pos[0], pixel_pos[1]
                ));
            }
            req.other_params[slot::AI_MODE] = 2.0;
            req.other_params[slot::AI_PIXEL_X] = pixel_pos[0] as f32;
            req.other_params[slot::AI_PIXEL_Y] = pixel_pos[1] as f32;
        }
        (1, n) => return Err(format!("ctrl_id 1 needs pixel_pos = [x, y], got {n} values")),
        (id, _) => return Err(format!("ctrl_id {id}: 0 (all targets) or 1 (target at pixel_pos)")),
    }
    Ok(req)
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
