//! Every fixed UDP port and the multicast group of RflySim, in one place for
//! the bridge and the emulator alike (a sensor's own data port comes from its
//! `Config.json` entry: [`crate::config::SensorConfig::udp_port`]).

use std::net::Ipv4Addr;

/// First RflySim3D window's request port; window `i` listens on 20010 + i (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq).
pub const REQUEST_BASE_PORT: u16 = 20010;

/// Where CopterSim's heartbeat goes (RflySim's SDK: PX4MavCtrlV4.py).
pub const HEARTBEAT_PORT: u16 = 20005;

/// Where RflySim3D sends gimbal echoes, `CameraData` and its other status
/// structs (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2).
pub const CAMERA_STATUS_PORT: u16 = 20006;

/// The group the heartbeat (RflySim's SDK: PX4MavCtrlV4.py) and the camera status (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2) are
/// also multicast to.
pub const MULTICAST_GROUP: Ipv4Addr = Ipv4Addr::new(224, 0, 0, 10);

/// CopterSim's request port for vehicle `copter_id` (1-based): 30100 + 2·(id − 1) (RflySim's SDK: VisionCaptureApi.py's IMU request).
pub fn imu_request_port(copter_id: u16) -> u16 {
    30100 + 2 * copter_id.saturating_sub(1)
}

/// The port CopterSim sends IMU data to for vehicle `copter_id`: 31000 + id − 1 (RflySim's SDK: VisionCaptureApi.py's IMU request).
pub fn imu_data_port(copter_id: u16) -> u16 {
    31000 + copter_id.saturating_sub(1)
}

/// Where CopterSim sends vehicle `copter_id`'s true state: 30101 + 2·(id − 1),
/// the port after its request port (RflySim's SDK: PX4MavCtrlV4.py).
pub fn true_state_port(copter_id: u16) -> u16 {
    imu_request_port(copter_id) + 1
}

/// The MAVLink port p of vehicle `copter_id` on CopterSim's host: 20100 +
/// 2·(id − 1); MAVROS listens on p + 1 (RflySim's SDK: RflyRosStart.py).
pub fn mavros_port(copter_id: u16) -> u16 {
    20100 + 2 * copter_id.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers as the spec writes them, not as the functions compute them.
    #[test]
    fn per_vehicle_ports_follow_the_spec() {
        assert_eq!((imu_request_port(1), imu_request_port(3)), (30100, 30104));
        assert_eq!((imu_data_port(1), imu_data_port(3)), (31000, 31002));
        assert_eq!((true_state_port(1), true_state_port(3)), (30101, 30105));
        assert_eq!((mavros_port(1), mavros_port(2)), (20100, 20102));
        // Vehicle 0 is read as vehicle 1 rather than wrapping below the base.
        assert_eq!((imu_request_port(0), mavros_port(0)), (30100, 20100));
    }

    /// The bridge and the emulator both take these from here: only this
    /// test would see one of them wrong.
    #[test]
    fn fixed_ports_and_group_follow_the_spec() {
        assert_eq!(
            (REQUEST_BASE_PORT, HEARTBEAT_PORT, CAMERA_STATUS_PORT),
            (20010, 20005, 20006)
        );
        assert_eq!(MULTICAST_GROUP.octets(), [224, 0, 0, 10]);
    }
}
