//! The emulator proper: one thread per sensor stream (`stream`), one for
//! RflySim3D's request port (`requests`), one per simulated CopterSim
//! (`coptersim`), two for the status port (`status`: the gimbals', the
//! scene's), one printing
//! rates (`stats`) and one for the restart fault. Everything shares a simulation clock ([`crate::clock`])
//! that a "restart" sends back to zero.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rflysim_proto::ports::{imu_request_port, REQUEST_BASE_PORT};

use crate::clock::SimClock;
use crate::faults::{FaultCounts, SceneFaultCounts};
use crate::gimbal::GimbalState;
use crate::options::Options;
use crate::scene::{SceneState, Vehicle};
use crate::shared::Running;
use crate::stream::Streams;
use crate::transport::udp_listener;
use crate::world::Scene;

/// A running emulator; dropping it stops every thread.
#[derive(Debug)]
pub struct Emulator {
    run: Running,
    threads: Vec<JoinHandle<()>>,
    streams: Arc<Mutex<Streams>>,
}

impl Emulator {
    pub fn start(options: Options) -> io::Result<Emulator> {
        let run = Running::new(options.start_time, options.pace);
        if let Some(dir) = &options.map_dir {
            crate::world::write_map_files(dir)
                .map_err(|e| io::Error::new(e.kind(), format!("--write-maps {}: {e}", dir.display())))?;
            crate::log::line(&format!(
                "map files of {:?} written to {}",
                crate::world::MAPS,
                dir.display()
            ));
        }
        let copters: Vec<(i32, f64)> = options
            .copters
            .iter()
            .map(|&id| (i32::from(id), options.clock_offset(id)))
            .collect();
        *run.shared.scene.lock().unwrap() = SceneState::new(&Scene::default(), &copters, options.trajectory);
        let mut threads = Vec::new();
        let streams = Arc::new(Mutex::new(Streams::new(options.clone())));
        if options.stream_config {
            for s in &options.sensors {
                streams.lock().unwrap().start(s.clone(), &run)?;
            }
        }
        if options.listen_requests {
            let port = REQUEST_BASE_PORT + options.window_id;
            let sock = udp_listener(port)?;
            sock.set_read_timeout(Some(Duration::from_millis(100)))?;
            crate::log::line(&format!("listening for VisionSensorReq on UDP {port}"));
            let (sp, r) = (streams.clone(), run.clone());
            threads.push(std::thread::spawn(move || crate::requests::request_loop(sock, sp, r)));
        }
        for &id in &options.copters {
            let (o, r) = (options.clone(), run.clone());
            let sock = udp_listener(imu_request_port(id))?;
            sock.set_nonblocking(true)?;
            threads.push(std::thread::spawn(move || {
                crate::coptersim::coptersim_loop(id, sock, o, r)
            }));
        }
        {
            let (o, r) = (options.clone(), run.clone());
            threads.push(std::thread::spawn(move || crate::status::gimbal_status_loop(o, r)));
        }
        {
            let (o, r) = (options.clone(), run.clone());
            threads.push(std::thread::spawn(move || crate::status::scene_status_loop(o, r)));
        }
        if let Some(every) = options.restart_every {
            let r = run.clone();
            threads.push(std::thread::spawn(move || {
                crate::clock::restart_loop(every, &r.stop, &r.clock)
            }));
        }
        {
            let (events, r) = (options.time_events.clone(), run.clone());
            threads.push(std::thread::spawn(move || {
                crate::clock::time_events_loop(events, &r.stop, &r.clock)
            }));
        }
        if let Some(interval) = options.stats_interval {
            let r = run.clone();
            threads.push(std::thread::spawn(move || crate::stats::stats_loop(interval, r)));
        }
        Ok(Emulator { run, threads, streams })
    }

    pub fn clock(&self) -> &SimClock {
        &self.run.clock
    }

    pub fn gimbal(&self, seq_id: u16) -> Option<GimbalState> {
        self.run.shared.gimbals.lock().unwrap().get(&seq_id).copied()
    }

    pub fn fault_counts(&self) -> FaultCounts {
        *self.run.shared.faults.lock().unwrap()
    }

    pub fn scene_fault_counts(&self) -> SceneFaultCounts {
        *self.run.shared.scene_faults.lock().unwrap()
    }

    /// The scene's vehicles as they are now.
    pub fn scene_vehicles(&self) -> Vec<Vehicle> {
        self.run.shared.scene.lock().unwrap().vehicles().copied().collect()
    }

    pub fn imu_requests(&self) -> u64 {
        self.run.shared.imu_requests.load(Ordering::Relaxed)
    }

    /// (SeqID, frames sent) of every stream.
    pub fn frames_sent(&self) -> Vec<(u16, u64)> {
        self.run
            .shared
            .stats
            .lock()
            .unwrap()
            .iter()
            .map(|(s, st)| (*s, st.frames.load(Ordering::Relaxed)))
            .collect()
    }

    /// Blocks until the configured duration has passed or every stream ended.
    pub fn wait(&self) {
        let deadline = self
            .streams
            .lock()
            .unwrap()
            .options
            .duration
            .map(Duration::from_secs_f64);
        loop {
            if let Some(d) = deadline {
                if self.run.clock.wall_elapsed() >= d {
                    return;
                }
            }
            let all_done = {
                let sp = self.streams.lock().unwrap();
                !sp.threads.is_empty() && sp.threads.iter().all(|t| t.is_finished())
            };
            if all_done || self.run.stopping() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stop(mut self) {
        self.shutdown();
    }

    /// Asks every thread to end without waiting (for a shared handle).
    pub fn request_stop(&self) {
        self.run.stop.store(true, Ordering::Relaxed);
    }

    fn shutdown(&mut self) {
        self.run.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let stream_threads: Vec<_> = self.streams.lock().unwrap().threads.drain(..).collect();
        for t in stream_threads {
            let _ = t.join();
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.shutdown();
    }
}
