//! What a run of the emulator does: its sensors and destinations, formats,
//! rates, faults and test outputs (`--help` spells each out).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use rflysim_proto::config::SensorConfig;
use rflysim_proto::gimbal::GimbalBitTable;
use rflysim_proto::header::HeaderKind;
use rflysim_proto::ports::CAMERA_STATUS_PORT;
use rflysim_proto::request::GIMBAL_ECHO_CHECKSUM;

use crate::faults::{FaultConfig, NeutralDrops, SceneFaultConfig};
use crate::world::Trajectory;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderChoice {
    Image24,
    Frame32,
    /// Alternates per frame, to exercise per-datagram header detection.
    Alternate,
}

impl HeaderChoice {
    /// The header of frame `frame_id`'s datagrams.
    pub fn kind_for(self, frame_id: u64) -> HeaderKind {
        match self {
            HeaderChoice::Image24 => HeaderKind::Image24,
            HeaderChoice::Frame32 => HeaderKind::Frame32,
            HeaderChoice::Alternate if frame_id % 2 == 0 => HeaderKind::Frame32,
            HeaderChoice::Alternate => HeaderKind::Image24,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LidarLayout {
    /// RflySim's vision protocol's float layout.
    Protocol,
    SdkInt16,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateMode {
    /// Each sensor at its `DataCheckFreq`.
    RealTime,
    /// Every sensor at this rate.
    Forced(f64),
    /// As fast as the machine allows.
    FlatOut,
}

impl RateMode {
    /// Time between the frames of a sensor configured at `configured_hz`;
    /// `None` flat out. Rates below 0.01 Hz are read as 0.01 Hz.
    pub fn period(self, configured_hz: f64) -> Option<Duration> {
        match self {
            RateMode::RealTime => Some(Duration::from_secs_f64(1.0 / configured_hz.max(0.01))),
            RateMode::Forced(hz) => Some(Duration::from_secs_f64(1.0 / hz.max(0.01))),
            RateMode::FlatOut => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub sensors: Vec<SensorConfig>,
    /// Sends to this address instead of each sensor's `SendProtocol` receiver.
    pub target_ip: Option<Ipv4Addr>,
    pub window_id: u16,
    /// Listen for `VisionSensorReq` on the window's request port.
    pub listen_requests: bool,
    /// Stream the sensors of the config from the start (otherwise only once requested).
    pub stream_config: bool,
    pub header: HeaderChoice,
    pub lidar_layout: LidarLayout,
    pub rate: RateMode,
    /// Render each sensor once and resend that frame with new stamps (benchmarks).
    pub reuse_frames: bool,
    /// Render each sensor's first K frames, each camera frame marked as its
    /// own (see [`crate::render::mark_variant`]), and send them in turn with
    /// new stamps: frame f is the (f mod K)-th. Distinct frames at any rate,
    /// so that a receiver can tell a frame stitched from two from both.
    pub cycle_frames: Option<usize>,
    pub faults: FaultConfig,
    /// Faults of the scene's datagrams on the status port.
    pub scene_faults: SceneFaultConfig,
    /// Simulator restart (frame ids and sim time back to zero) every this many seconds.
    pub restart_every: Option<f64>,
    pub duration: Option<f64>,
    /// Stop each sensor after this many frames.
    pub max_frames: Option<u64>,
    pub copters: Vec<u16>,
    /// Where CopterSim's true state and heartbeat go.
    pub coptersim_target: Ipv4Addr,
    pub heartbeat: bool,
    /// Gimbal status (echo and CameraData) destinations.
    pub gimbal_unicast: Option<SocketAddrV4>,
    pub gimbal_multicast: bool,
    pub camera_data_always: bool,
    pub gimbal_bits: GimbalBitTable,
    pub echo_checksum: u16,
    /// Gimbal neutral requests not applied (a lost stop).
    pub gimbal_neutral_drops: NeutralDrops,
    pub jpeg_quality: i32,
    pub stats_interval: Option<Duration>,
    pub trajectory: Trajectory,
    /// Simulation seconds at start (e.g. a run that has gone on for a while).
    pub start_time: f64,
    /// Sim seconds per wall second (a heavy scene runs slower, a batch run faster).
    pub pace: f64,
    /// Pauses and jumps of sim time, at wall seconds after the start.
    pub time_events: Vec<(f64, crate::clock::TimeEvent)>,
    /// While paused, send nothing (otherwise samples go on, their sim time standing).
    pub silent_while_paused: bool,
    /// Per vehicle, seconds its CopterSim's clock is ahead of the shared one
    /// (a swarm's CopterSims start one after another). Its IMU, true state,
    /// heartbeat and the sensors mounted on it all read that clock.
    pub clock_offsets: Vec<(u16, f64)>,
    /// Seconds the simulator PC's wall clock is ahead of the true one (a
    /// PC whose clock is off): what CopterSim's heartbeat anchors carry.
    pub wall_clock_offset: f64,
    /// CopterSim's heartbeat to the multicast group 224.0.0.10 instead,
    /// out of the interface towards `coptersim_target`.
    pub heartbeat_multicast: bool,
    /// Write what each sensor renders (before JPEG / PNG encoding), every
    /// IMU sample and the scene's vehicles as they move here, for tests to
    /// compare with what the bridge publishes.
    pub dump_dir: Option<std::path::PathBuf>,
    /// Write the map files of the emulator's maps here at start.
    pub map_dir: Option<std::path::PathBuf>,
    /// Drop exactly these datagrams: (frame id, packet id), every sensor.
    pub drop_packets: Vec<(u64, u32)>,
    /// Append `SeqID time_stamp wall_clock_seconds` per frame sent (when its
    /// last datagram left, or its shared-memory write ended), and
    /// `imu<copter id> time_stamp wall_clock_seconds` per IMU sample: for latency benchmarks.
    pub send_log: Option<std::path::PathBuf>,
}

impl Options {
    /// How many frames each stream renders and then sends again in turn (0: it renders every frame).
    pub fn cached_frames(&self) -> usize {
        match self.cycle_frames {
            Some(k) => k.max(1),
            None => usize::from(self.reuse_frames),
        }
    }

    /// How far vehicle `copter`'s clock is ahead of the shared one, seconds.
    pub fn clock_offset(&self, copter: u16) -> f64 {
        self.clock_offsets
            .iter()
            .find(|(id, _)| *id == copter)
            .map_or(0.0, |(_, s)| *s)
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            sensors: Vec::new(),
            target_ip: None,
            window_id: 0,
            listen_requests: true,
            stream_config: true,
            header: HeaderChoice::Frame32,
            lidar_layout: LidarLayout::Protocol,
            rate: RateMode::RealTime,
            reuse_frames: false,
            cycle_frames: None,
            faults: FaultConfig::default(),
            scene_faults: SceneFaultConfig::default(),
            restart_every: None,
            duration: None,
            max_frames: None,
            copters: vec![1],
            coptersim_target: Ipv4Addr::LOCALHOST,
            heartbeat: true,
            gimbal_unicast: Some(SocketAddrV4::new(Ipv4Addr::LOCALHOST, CAMERA_STATUS_PORT)),
            gimbal_multicast: false,
            camera_data_always: false,
            gimbal_bits: rflysim_proto::gimbal::PROTOCOL_BITS,
            echo_checksum: GIMBAL_ECHO_CHECKSUM,
            gimbal_neutral_drops: NeutralDrops::default(),
            jpeg_quality: 90,
            stats_interval: Some(Duration::from_secs(1)),
            trajectory: Trajectory::default(),
            start_time: 0.0,
            pace: 1.0,
            time_events: Vec::new(),
            silent_while_paused: false,
            clock_offsets: Vec::new(),
            wall_clock_offset: 0.0,
            heartbeat_multicast: false,
            dump_dir: None,
            map_dir: None,
            drop_packets: Vec::new(),
            send_log: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_headers_start_with_the_frame_header() {
        let kinds: Vec<_> = (0..4).map(|f| HeaderChoice::Alternate.kind_for(f)).collect();
        use HeaderKind::{Frame32, Image24};
        assert_eq!(kinds, [Frame32, Image24, Frame32, Image24]);
        assert!((0..4).all(|f| HeaderChoice::Image24.kind_for(f) == Image24));
        assert!((0..4).all(|f| HeaderChoice::Frame32.kind_for(f) == Frame32));
    }

    #[test]
    fn periods_follow_the_rate_mode() {
        assert_eq!(RateMode::RealTime.period(20.0), Some(Duration::from_millis(50)));
        assert_eq!(RateMode::Forced(100.0).period(20.0), Some(Duration::from_millis(10)));
        assert_eq!(RateMode::Forced(0.0).period(20.0), Some(Duration::from_secs(100)));
        assert_eq!(RateMode::FlatOut.period(20.0), None);
    }

    #[test]
    fn defaults_send_status_where_the_bridge_listens_by_default() {
        let o = Options::default();
        assert_eq!(o.gimbal_unicast, Some(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 20006)));
        assert_eq!((o.echo_checksum, o.copters.as_slice()), (12346, &[1][..]));
    }
}
