//! A gimbal camera's state machine: what its 148-byte control requests do
//! (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq, RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.1), how its commanded rates move it, and the echo
//! RflySim3D sends of it (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2). Pure: no sockets, no clock.

use frames::{euler_to_quat, quat_normalize, Quat};
use rflysim_proto::config::SensorConfig;
use rflysim_proto::gimbal::{light_source_type_id, slot, GimbalBitTable, GimbalControl, GimbalEcho};
use rflysim_proto::request::VisionSensorReq;

use crate::render::focal_px;

/// Half the width of the 35 mm-equivalent sensor, mm: focal length ↔ FOV.
const HALF_SENSOR_MM: f64 = 18.0;

/// A gimbal's current state, as its control packets left it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GimbalState {
    /// Mount roll, pitch, yaw (rad) relative to the vehicle.
    pub euler: [f64; 3],
    pub default_euler: [f64; 3],
    pub fov_deg: f64,
    pub base_fov_deg: f64,
    pub zoom: f64,
    pub zoom_base: f64,
    pub focal_length: f64,
    /// pitch, yaw rates, rad/s.
    pub rates: [f64; 2],
    pub ranging: bool,
    pub light_source: u8,
    pub track_target: f64,
    pub ai_mode: f64,
    pub ai_pixel: [f64; 2],
    pub width: u16,
    pub height: u16,
    pub last_update: f64,
    pub requests: u64,
}

impl GimbalState {
    pub fn from_config(c: &SensorConfig) -> Self {
        let e = c.mount_euler_rad();
        Self {
            euler: e,
            default_euler: e,
            fov_deg: f64::from(c.camera_fov_deg),
            base_fov_deg: f64::from(c.camera_fov_deg),
            zoom: 1.0,
            zoom_base: 1.0,
            focal_length: HALF_SENSOR_MM / (f64::from(c.camera_fov_deg).to_radians() / 2.0).tan(),
            rates: [0.0; 2],
            ranging: false,
            light_source: 0,
            track_target: 0.0,
            ai_mode: 0.0,
            ai_pixel: [0.0; 2],
            width: c.data_width,
            height: c.data_height,
            last_update: 0.0,
            requests: 0,
        }
    }

    /// Integrates the commanded rates up to sim time `t`.
    pub fn advance(&mut self, t: f64) {
        let dt = (t - self.last_update).clamp(0.0, 1.0);
        self.euler[1] = (self.euler[1] + self.rates[0] * dt).clamp(-std::f64::consts::PI, std::f64::consts::PI);
        self.euler[2] += self.rates[1] * dt;
        self.last_update = t;
    }

    /// Applies a 148-byte control request.
    pub fn apply(&mut self, r: &VisionSensorReq, bits: &GimbalBitTable, t: f64) {
        self.advance(t);
        let o = r.other_params.map(f64::from);
        let has = |c| bits.bit(c).is_some_and(|b| r.bitmask & b != 0);
        // Angles and FOV travel in the request's own fields.
        self.euler = if r.eular_or_quat > 0.5 {
            frames::quat_to_euler(quat_normalize(r.sensor_ang_quat.map(f64::from)))
        } else {
            r.sensor_ang_eular.map(f64::from)
        };
        if r.camera_fov > 0.0 {
            self.fov_deg = f64::from(r.camera_fov);
            self.base_fov_deg = self.fov_deg * self.zoom;
        }
        if r.data_width > 0 && r.data_height > 0 {
            self.width = r.data_width;
            self.height = r.data_height;
        }
        if has(GimbalControl::FocalLength) && o[slot::FOCAL_LENGTH] > 0.0 {
            self.focal_length = o[slot::FOCAL_LENGTH];
            self.fov_deg = 2.0 * (HALF_SENSOR_MM / self.focal_length).atan().to_degrees();
        }
        if has(GimbalControl::Centre) && o[slot::CENTRE] >= 0.5 {
            self.euler = self.default_euler;
            self.rates = [0.0; 2];
        }
        if has(GimbalControl::Rates) {
            self.rates = [o[slot::PITCH_RATE], o[slot::YAW_RATE]];
        }
        if has(GimbalControl::ZoomBase) && o[slot::ZOOM_BASE] > 0.0 {
            self.zoom_base = o[slot::ZOOM_BASE];
        }
        if has(GimbalControl::OpticalZoom) {
            // Steps above the zoom base: step 0 is ×1.
            self.zoom = o[slot::OPTICAL_ZOOM].max(0.0) + 1.0;
            self.fov_deg = self.base_fov_deg / self.zoom;
        }
        if has(GimbalControl::TrackTarget) {
            self.track_target = o[slot::TRACK_TARGET];
        }
        if has(GimbalControl::Ranging) {
            self.ranging = o[slot::RANGING] >= 0.5;
        }
        if has(GimbalControl::LightSource) {
            self.light_source = o[slot::LIGHT_SOURCE].clamp(0.0, 2.0) as u8;
        }
        if has(GimbalControl::AiBoxSelect) {
            self.ai_mode = o[slot::AI_MODE];
            self.ai_pixel = [o[slot::AI_PIXEL_X], o[slot::AI_PIXEL_Y]];
        }
        self.requests += 1;
    }

    /// The mount's attitude now, as a quaternion.
    pub fn attitude(&self) -> Quat {
        let [r, p, y] = self.euler;
        euler_to_quat(r, p, y)
    }

    /// The image size now (at least 1 × 1).
    pub fn image_size(&self) -> (u32, u32) {
        (u32::from(self.width.max(1)), u32::from(self.height.max(1)))
    }

    /// The TypeID the camera renders as under its light source.
    pub fn render_type_id(&self) -> u16 {
        light_source_type_id(self.light_source)
    }

    /// RflySim3D's echo of this state for the gimbal `cfg` configures, with
    /// the laser range measured (0 when ranging is off).
    pub fn echo(&self, cfg: &SensorConfig, laser_range: f32) -> GimbalEcho {
        let fx = focal_px(u32::from(self.width), self.fov_deg) as f32;
        GimbalEcho {
            seq_id: cfg.seq_id,
            type_id: cfg.type_id,
            width: self.width,
            height: self.height,
            camera_fov_deg: self.fov_deg as f32,
            eular_or_quat: 0.0,
            euler: self.euler.map(|a| a as f32),
            quat: self.attitude().map(|c| c as f32),
            focal_length: self.focal_length as f32,
            rates: self.rates.map(|r| r as f32),
            focal_px: [fx, fx],
            pixel_size: [f32::from(self.width), f32::from(self.height)],
            laser_range,
            request: VisionSensorReq {
                other_params: [0.0; 16],
                ..VisionSensorReq::from(cfg)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::f64::consts::PI;

    use rflysim_proto::config::{parse_config, AngleUnit};
    use rflysim_proto::gimbal::{PROTOCOL_BITS, SDK_BITS};
    use rflysim_proto::request::{RequestForm, GIMBAL_ECHO_CHECKSUM};

    use super::*;

    fn camera() -> SensorConfig {
        let json = r#"{"VisionSensors":[{"SeqID":4,"TypeID":9,"DataWidth":640,"DataHeight":360,
            "CameraFOV":90,"SensorPosXYZ":[0.1,0,0],"SensorAngEular":[0,-0.5,0.25]}]}"#;
        parse_config(json, AngleUnit::Radians).unwrap().remove(0)
    }

    /// A control request that sets `controls` (the vision protocol's bits) with `values` in their slots,
    /// leaving the attitude as configured and the field of view to the controls.
    fn request(cfg: &SensorConfig, controls: &[GimbalControl], values: &[(usize, f32)]) -> VisionSensorReq {
        let mut r = VisionSensorReq::from(cfg);
        r.camera_fov = 0.0;
        r.bitmask = controls
            .iter()
            .map(|c| PROTOCOL_BITS.bit(*c).unwrap())
            .fold(0, |m, b| m | b);
        for &(slot, v) in values {
            r.other_params[slot] = v;
        }
        r
    }

    /// Applies a vision-protocol control request made by [`request`] at sim time `t`.
    fn command(g: &mut GimbalState, controls: &[GimbalControl], values: &[(usize, f32)], t: f64) {
        g.apply(&request(&camera(), controls, values), &PROTOCOL_BITS, t);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn starts_as_configured() {
        let g = GimbalState::from_config(&camera());
        assert_eq!((g.euler, g.default_euler), ([0.0, -0.5, 0.25], [0.0, -0.5, 0.25]));
        assert_eq!(
            (g.fov_deg, g.zoom, g.width, g.height, g.requests),
            (90.0, 1.0, 640, 360, 0)
        );
        // 90° across a 36 mm-wide sensor: 18 mm.
        assert!(close(g.focal_length, 18.0), "{}", g.focal_length);
        assert_eq!((g.image_size(), g.render_type_id()), ((640, 360), 9));
    }

    #[test]
    fn rates_turn_it_until_centred() {
        let cfg = camera();
        let mut g = GimbalState::from_config(&cfg);
        command(
            &mut g,
            &[GimbalControl::Rates],
            &[(slot::PITCH_RATE, 0.1), (slot::YAW_RATE, -0.2)],
            0.0,
        );
        assert_eq!(g.rates, [f64::from(0.1f32), f64::from(-0.2f32)]);
        g.advance(1.0);
        g.advance(2.0);
        assert!(
            close(g.euler[1], -0.5 + 0.2) && close(g.euler[2], 0.25 - 0.4),
            "{:?}",
            g.euler
        );
        // A long gap counts as one second: a stalled clock must not swing it round.
        g.advance(100.0);
        assert!(close(g.euler[1], -0.5 + 0.3), "{:?}", g.euler);
        // Time going back (a restart) moves nothing.
        let before = g.euler;
        g.advance(50.0);
        assert_eq!(g.euler, before);
        command(&mut g, &[GimbalControl::Centre], &[(slot::CENTRE, 1.0)], 50.0);
        assert_eq!((g.euler, g.rates), (g.default_euler, [0.0; 2]));
        assert_eq!(g.requests, 2);
    }

    #[test]
    fn pitch_stops_at_half_a_turn() {
        let cfg = camera();
        let mut g = GimbalState::from_config(&cfg);
        command(&mut g, &[GimbalControl::Rates], &[(slot::PITCH_RATE, 3.0)], 0.0);
        for t in 1..10 {
            g.advance(f64::from(t));
        }
        assert_eq!(g.euler[1], PI);
    }

    #[test]
    fn zoom_and_focal_length_change_the_field_of_view() {
        let cfg = camera();
        let mut g = GimbalState::from_config(&cfg);
        command(&mut g, &[GimbalControl::OpticalZoom], &[(slot::OPTICAL_ZOOM, 1.0)], 0.0);
        assert!(close(g.fov_deg, 45.0) && g.zoom == 2.0, "step 1 is ×2: {}", g.fov_deg);
        command(
            &mut g,
            &[GimbalControl::OpticalZoom],
            &[(slot::OPTICAL_ZOOM, -3.0)],
            0.0,
        );
        assert!(close(g.fov_deg, 90.0), "negative steps are step 0: {}", g.fov_deg);
        command(
            &mut g,
            &[GimbalControl::FocalLength],
            &[(slot::FOCAL_LENGTH, 36.0)],
            0.0,
        );
        assert!(close(g.fov_deg, 2.0 * 0.5f64.atan().to_degrees()), "{}", g.fov_deg);
        // A zero focal length is no command.
        let fov = g.fov_deg;
        command(&mut g, &[GimbalControl::FocalLength], &[(slot::FOCAL_LENGTH, 0.0)], 0.0);
        assert_eq!(g.fov_deg, fov);
    }

    #[test]
    fn a_requested_field_of_view_is_the_one_at_the_current_zoom() {
        let cfg = camera();
        let mut g = GimbalState::from_config(&cfg);
        command(&mut g, &[GimbalControl::OpticalZoom], &[(slot::OPTICAL_ZOOM, 1.0)], 0.0);
        let mut r = request(&cfg, &[], &[]);
        r.camera_fov = 30.0;
        g.apply(&r, &PROTOCOL_BITS, 0.0);
        assert_eq!((g.fov_deg, g.base_fov_deg), (30.0, 60.0));
    }

    #[test]
    fn values_without_their_bit_change_nothing() {
        let cfg = camera();
        let mut g = GimbalState::from_config(&cfg);
        let all_slots: Vec<(usize, f32)> = (0..11).map(|i| (i, 1.0)).collect();
        g.apply(&request(&cfg, &[], &all_slots), &PROTOCOL_BITS, 0.0);
        let fresh = GimbalState {
            requests: 1,
            ..GimbalState::from_config(&cfg)
        };
        assert_eq!(g, fresh);
    }

    #[test]
    fn the_bit_table_decides_which_bit_means_what() {
        let cfg = camera();
        let mut r = VisionSensorReq::from(&cfg);
        r.other_params[slot::PITCH_RATE] = 0.5;
        r.bitmask = SDK_BITS.bit(GimbalControl::Rates).unwrap();
        let mut seed = GimbalState::from_config(&cfg);
        seed.apply(&r, &PROTOCOL_BITS, 0.0);
        let mut sdk = GimbalState::from_config(&cfg);
        sdk.apply(&r, &SDK_BITS, 0.0);
        assert_eq!((seed.rates[0], sdk.rates[0]), (0.0, 0.5));
    }

    #[test]
    fn light_source_ranging_size_and_attitude() {
        let cfg = camera();
        let mut g = GimbalState::from_config(&cfg);
        let mut r = request(
            &cfg,
            &[
                GimbalControl::LightSource,
                GimbalControl::Ranging,
                GimbalControl::AiBoxSelect,
            ],
            &[
                (slot::LIGHT_SOURCE, 7.0),
                (slot::RANGING, 1.0),
                (slot::AI_MODE, 2.0),
                (slot::AI_PIXEL_X, 10.0),
            ],
        );
        r.data_width = 320;
        r.data_height = 0;
        r.eular_or_quat = 1.0;
        r.sensor_ang_quat = [0.0, 0.0, 0.0, 2.0]; // unnormalised: a half turn in yaw
        g.apply(&r, &PROTOCOL_BITS, 0.0);
        assert_eq!((g.light_source, g.render_type_id()), (2, 40), "clamped to IR gray");
        assert!(g.ranging && g.ai_mode == 2.0 && g.ai_pixel == [10.0, 0.0]);
        assert_eq!((g.width, g.height), (640, 360), "a zero dimension keeps the size");
        assert!(close(g.euler[2].abs(), PI) && close(g.euler[0], 0.0), "{:?}", g.euler);
    }

    #[test]
    fn the_echo_reads_back_as_the_state() {
        let cfg = camera();
        let mut g = GimbalState::from_config(&cfg);
        g.rates = [0.25, -0.5];
        let bytes = g.echo(&cfg, 42.5).encode(GIMBAL_ECHO_CHECKSUM);
        let (raw, form, checksum) = VisionSensorReq::decode(&bytes).unwrap();
        assert_eq!((form, checksum, raw.bitmask), (RequestForm::Gimbal148, 12346, 0));
        assert_eq!(raw.other_params[8..], [0.0; 8]);
        let e = GimbalEcho::decode(&bytes).unwrap();
        assert_eq!((e.seq_id, e.type_id, e.width, e.height), (4, 9, 640, 360));
        assert_eq!(
            (e.camera_fov_deg, e.euler, e.eular_or_quat),
            (90.0, [0.0, -0.5, 0.25], 0.0)
        );
        assert_eq!(
            (e.rates, e.pixel_size, e.laser_range),
            ([0.25, -0.5], [640.0, 360.0], 42.5)
        );
        assert!((f64::from(e.focal_px[0]) - 320.0).abs() < 1e-3, "{:?}", e.focal_px);
        assert_eq!(e.request.sensor_pos_xyz, [0.1, 0.0, 0.0]);
    }
}
