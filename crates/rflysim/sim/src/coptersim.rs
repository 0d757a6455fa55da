//! One thread per simulated CopterSim: answers IMU requests with an IMU
//! stream at the rate asked for, and sends true state and heartbeats, all on
//! the vehicle's own clock.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rflysim_proto::ports::{true_state_port, HEARTBEAT_PORT, MULTICAST_GROUP};
use rflysim_proto::request::ImuRequest;
use rflysim_proto::telemetry::{Heartbeat, ImuSample, TrueState};

use crate::dump::append_line;
use crate::log::line as log;
use crate::options::Options;
use crate::send_log::SendLog;
use crate::shared::Running;
use crate::transport::{multicast_out_towards, send_all, udp_sender};

/// How late the IMU may fall behind and still send every sample it owes.
const IMU_CATCH_UP: Duration = Duration::from_secs(1);

/// One CopterSim: answers IMU requests with a 200 Hz (or requested) IMU
/// stream, and sends true state and heartbeats.
pub(crate) fn coptersim_loop(id: u16, sock: UdpSocket, o: Options, run: Running) {
    let (clock, shared) = (&run.clock, &run.shared);
    let out = match udp_sender(None) {
        Ok(s) => s,
        Err(e) => return log(&format!("CopterSim {id}: {e}")),
    };
    let state_dest = SocketAddrV4::new(o.coptersim_target, true_state_port(id));
    let heartbeat_dest = SocketAddrV4::new(o.coptersim_target, HEARTBEAT_PORT);
    let mut send_log = match SendLog::open(o.send_log.as_deref()) {
        Ok(l) => l,
        Err(e) => return log(&format!("CopterSim {id}: --send-log: {e}")),
    };
    let mut imu: Option<(SocketAddrV4, Duration)> = None;
    let mut seq = 0i32;
    let mut beats = 0i64;
    let (mut next_imu, mut next_state, mut next_beat) = (Instant::now(), Instant::now(), Instant::now());
    // This PC's wall clock is off by what the options say.
    let wall_clock_offset_us = (o.wall_clock_offset * 1e6).round() as i64;
    let multicast_beat = SocketAddrV4::new(MULTICAST_GROUP, HEARTBEAT_PORT);
    if o.heartbeat_multicast {
        multicast_out_towards(&out, o.coptersim_target);
    }
    let mut buf = [0u8; 512];
    while !run.stopping() {
        if let Ok((n, from)) = sock.recv_from(&mut buf) {
            match ImuRequest::decode(&buf[..n]) {
                Ok(req) => {
                    let ip = if req.receiver.is_unspecified() {
                        match from {
                            std::net::SocketAddr::V4(a) => *a.ip(),
                            _ => Ipv4Addr::LOCALHOST,
                        }
                    } else {
                        req.receiver
                    };
                    let hz = f64::from(req.freq_hz.clamp(1, 1000));
                    if imu.is_none() {
                        next_imu = Instant::now();
                    }
                    imu = Some((SocketAddrV4::new(ip, req.port), Duration::from_secs_f64(1.0 / hz)));
                    shared.imu_requests.fetch_add(1, Ordering::Relaxed);
                    log(&format!("CopterSim {id}: IMU at {hz} Hz to {ip}:{}", req.port));
                }
                Err(e) => log(&format!("CopterSim {id}: ignored a datagram: {e}")),
            }
        }
        let now = Instant::now();
        let t = clock.at(now) + o.clock_offset(id);
        // Paused and silent: nothing but heartbeats until the resume.
        let silent = o.silent_while_paused && clock.paused();
        if let Some((dest, period)) = imu.filter(|_| !silent) {
            while next_imu <= now {
                // A sample sent late (this thread woke late) keeps the sim
                // time it was due at, as CopterSim's samples do.
                let t = clock.at(next_imu) + o.clock_offset(id);
                let s = o.trajectory.state(t);
                let sample = ImuSample {
                    seq,
                    time_stamp: t,
                    acc: s.specific_force.map(|v| v as f32),
                    gyro: s.body_rates.map(|v| v as f32),
                };
                seq = seq.wrapping_add(1);
                if let Some(dir) = &o.dump_dir {
                    let line = format!(
                        "{} {:.9} {} {} {} {} {} {}",
                        sample.seq,
                        t,
                        sample.acc[0],
                        sample.acc[1],
                        sample.acc[2],
                        sample.gyro[0],
                        sample.gyro[1],
                        sample.gyro[2]
                    );
                    let _ = append_line(&dir.join(format!("imu{id}.txt")), &line);
                }
                let _ = send_all(&out, dest, &sample.encode());
                if let Some(l) = send_log.as_mut() {
                    l.sent(format_args!("imu{id}"), t);
                }
                next_imu += period;
                // A stall (a CPU quota's period alone is 100 ms) owes every
                // sample; one longer than IMU_CATCH_UP gives up what it missed.
                if next_imu + IMU_CATCH_UP < now {
                    next_imu = now;
                }
            }
        }
        if silent {
            (next_imu, next_state) = (now, now);
        } else if next_state <= now {
            let s = o.trajectory.state(t);
            let ts = TrueState {
                copter_id: i32::from(id),
                vehicle_type: 3,
                runned_time_ms: (t * 1000.0) as i32,
                vel_ned: s.velocity.map(|v| v as f32),
                ang_euler: s.euler.map(|v| v as f32),
                quaternion: s.attitude.map(|v| v as f32),
                motor_rpm: [0.0; 8],
                acc_body: s.specific_force.map(|v| v as f32),
                rate_body: s.body_rates.map(|v| v as f32),
                runned_time: t,
                pos_ned: s.position,
                gps: [40.0, 116.0, -s.position[2]],
            };
            let _ = send_all(&out, state_dest, &ts.encode());
            next_state = now + Duration::from_millis(10);
        }
        if o.heartbeat && next_beat <= now {
            // Sim time and wall time read together: `t` is from the top of
            // this round, and the sends since then may have taken milliseconds
            // on a loaded machine, which would move the epoch beat to beat.
            // The wall clock is the sim clock's own (read at its start), not
            // one read when this thread began: that may be milliseconds later.
            // The anchor is the run's (a pause or another pace leaves it).
            beats += 1;
            let beat = Heartbeat {
                copter_id: i32::from(id),
                start_time_ms: (clock.anchor_us(o.clock_offset(id)) + wall_clock_offset_us).div_euclid(1000),
                current_time_ms: (clock.wall_clock_us() + wall_clock_offset_us).div_euclid(1000),
                count: beats,
            };
            let dest = if o.heartbeat_multicast {
                multicast_beat
            } else {
                heartbeat_dest
            };
            let _ = send_all(&out, dest, &beat.encode());
            if let Some(dir) = &o.dump_dir {
                let _ = append_line(&dir.join(format!("heartbeat{id}.txt")), &beat.start_time_ms.to_string());
            }
            next_beat = now + Duration::from_secs(1);
        }
        // Sleep until the next thing is due (requests are polled at least every 5 ms).
        let mut due = next_state.min(next_beat);
        if imu.is_some() {
            due = due.min(next_imu);
        }
        let wait = due
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(5));
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }
}
