//! What the emulator's threads share: the running sensors and gimbals, the
//! cameras whose `CameraData` was asked for, the scene, and the counters its
//! caller and the stats printer read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rflysim_proto::config::SensorConfig;

use crate::clock::SimClock;
use crate::faults::{FaultCounts, SceneFaultCounts};
use crate::gimbal::GimbalState;
use crate::scene::SceneState;

/// Per-stream counters, shared with the stats printer and the caller.
#[derive(Debug, Default)]
pub struct StreamStats {
    pub frames: AtomicU64,
    pub bytes: AtomicU64,
    pub datagrams: AtomicU64,
    pub skipped_shm: AtomicU64,
}

#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub gimbals: Mutex<HashMap<u16, GimbalState>>,
    /// Sensors whose `CameraData` was asked for with `RflyReqObjData`.
    pub camera_data: Mutex<Vec<u16>>,
    pub sensors: Mutex<HashMap<u16, SensorConfig>>,
    pub stats: Mutex<Vec<(u16, Arc<StreamStats>)>>,
    pub faults: Mutex<FaultCounts>,
    pub scene: Mutex<SceneState>,
    pub scene_faults: Mutex<SceneFaultCounts>,
    pub imu_requests: AtomicU64,
}

/// What every thread of a running emulator holds: the stop flag, the
/// simulation clock and the shared state.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    pub stop: Arc<AtomicBool>,
    pub clock: Arc<SimClock>,
    pub shared: Arc<Shared>,
}

impl Running {
    pub fn new(start_time: f64, pace: f64) -> Self {
        Self {
            stop: Arc::new(AtomicBool::new(false)),
            clock: Arc::new(SimClock::with_pace(start_time, pace)),
            shared: Arc::new(Shared::default()),
        }
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
