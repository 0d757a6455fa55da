//! The TypeID and transport tables of RflySim's `Config.json` (RflySim's Config.json, VisionCaptureApi.py's UDP receivers, RflyRosStart.py):
//! what each sensor kind is, what it sends, and where the bridge publishes it.

pub use image_codec::Encoding;

/// What a sensor of a given TypeID produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SensorClass {
    Camera(Encoding),
    Lidar,
    DepthCloud,
    LaserDistance,
    Detections,
}

/// One row of the TypeID table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SensorKind {
    pub type_id: u16,
    pub class: SensorClass,
    /// Topic suffix under `/rflysim/sensor<SeqID>/` (RflySim SDK spelling, RflySim's SDK: RflyRosStart.py).
    pub topic_suffix: &'static str,
    pub description: &'static str,
}

/// The TypeIDs of `Config.json` (RflySim's Config.json), for code that branches on one;
/// what each produces is in [`SENSOR_KINDS`].
pub mod type_id {
    pub const RGB: u16 = 1;
    pub const DEPTH: u16 = 2;
    pub const GRAY: u16 = 3;
    pub const SEGMENTATION: u16 = 4;
    pub const LASER_DISTANCE: u16 = 5;
    pub const DEPTH_CLOUD: u16 = 7;
    pub const FISHEYE: u16 = 8;
    /// A camera whose attitude, zoom, size and light source are controls (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq, RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2).
    pub const GIMBAL: u16 = 9;
    pub const VEHICLE_LIDAR: u16 = 20;
    /// The LiDAR whose points are in the world (NED) frame, `axis_type` 1 (RflySim's SDK: VisionCaptureApi.py's UDP receivers, PX4MavCtrlV4.py).
    pub const GLOBAL_LIDAR: u16 = 21;
    pub const LIVOX_LIDAR: u16 = 22;
    /// Always 64 × 272 whatever the config says (RflySim's Config.json).
    pub const MID360_LIDAR: u16 = 23;
    pub const DETECTIONS: u16 = 30;
    pub const DETECTIONS_SHORT: u16 = 31;
    pub const INFRARED_GRAY: u16 = 40;
    pub const INFRARED: u16 = 41;
}

/// The Mid360's scan pattern: width × height (RflySim's Config.json).
pub const MID360_SIZE: (u16, u16) = (64, 272);

const fn camera(type_id: u16, enc: Encoding, topic: &'static str, d: &'static str) -> SensorKind {
    SensorKind {
        type_id,
        class: SensorClass::Camera(enc),
        topic_suffix: topic,
        description: d,
    }
}

const fn other(type_id: u16, class: SensorClass, topic: &'static str, d: &'static str) -> SensorKind {
    SensorKind {
        type_id,
        class,
        topic_suffix: topic,
        description: d,
    }
}

/// Every TypeID the bridge knows. The older SDKs' LiDAR TypeIDs 4/5/6 clash
/// with today's 4 (segmentation) and 5 (laser distance); today's meaning wins.
#[rustfmt::skip]
pub const SENSOR_KINDS: &[SensorKind] = &[
    camera(type_id::RGB, Encoding::Bgr8, "img_rgb", "RGB camera"),
    camera(type_id::DEPTH, Encoding::DepthMm16, "img_depth", "depth camera"),
    camera(type_id::GRAY, Encoding::Mono8, "img_gray", "gray camera"),
    camera(type_id::SEGMENTATION, Encoding::Bgr8, "img_Segmentation", "segmentation camera"),
    other(type_id::LASER_DISTANCE, SensorClass::LaserDistance, "distance", "laser range finder"),
    other(type_id::DEPTH_CLOUD, SensorClass::DepthCloud, "Depth_Cloud", "depth-to-cloud"),
    camera(type_id::FISHEYE, Encoding::Bgr8, "fisheye", "fisheye camera"),
    camera(type_id::GIMBAL, Encoding::Bgr8, "img_cine", "gimbal camera"),
    other(type_id::VEHICLE_LIDAR, SensorClass::Lidar, "vehicle_lidar", "vehicle-frame LiDAR"),
    other(type_id::GLOBAL_LIDAR, SensorClass::Lidar, "global_lidar", "world-frame LiDAR"),
    other(type_id::LIVOX_LIDAR, SensorClass::Lidar, "livox_lidar", "Livox LiDAR"),
    other(type_id::MID360_LIDAR, SensorClass::Lidar, "mid360_lidar", "Mid360 LiDAR"),
    other(type_id::DETECTIONS, SensorClass::Detections, "detections", "detection boxes"),
    other(type_id::DETECTIONS_SHORT, SensorClass::Detections, "detections", "detection boxes (short form)"),
    camera(type_id::INFRARED_GRAY, Encoding::Mono8, "img_Infrared_Gray", "infrared gray camera"),
    camera(type_id::INFRARED, Encoding::Bgr8, "img_Infrared", "infrared color camera"),
];

impl SensorKind {
    pub fn from_type_id(type_id: u16) -> Option<&'static SensorKind> {
        SENSOR_KINDS.iter().find(|k| k.type_id == type_id)
    }

    pub fn is_camera(&self) -> bool {
        matches!(self.class, SensorClass::Camera(_))
    }

    pub fn encoding(&self) -> Option<Encoding> {
        match self.class {
            SensorClass::Camera(e) => Some(e),
            _ => None,
        }
    }

    /// The Mid360 always scans [`MID360_SIZE`] whatever the config says (RflySim's Config.json).
    pub fn fixed_size(&self) -> Option<(u16, u16)> {
        (self.type_id == type_id::MID360_LIDAR).then_some(MID360_SIZE)
    }

    /// A gimbal camera: its attitude, zoom, size and light source are
    /// controls (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq), its state is echoed on the status port (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2).
    pub fn is_gimbal(&self) -> bool {
        self.type_id == type_id::GIMBAL
    }

    /// A LiDAR whose points are in the world frame rather than the sensor's
    /// (`axis_type` 1, RflySim's SDK: VisionCaptureApi.py's UDP receivers).
    pub fn points_in_world_frame(&self) -> bool {
        self.type_id == type_id::GLOBAL_LIDAR
    }
}

/// `SendProtocol[0]`: how a sensor's data leaves RflySim3D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    SharedMemory,
    /// UDP: JPEG images, raw clouds and other non-image payloads.
    UdpCompressed,
    UdpRaw,
    UdpPng,
}

impl Transport {
    pub fn from_code(code: u16) -> Option<Transport> {
        match code {
            0 => Some(Transport::SharedMemory),
            1 => Some(Transport::UdpCompressed),
            2 => Some(Transport::UdpRaw),
            3 => Some(Transport::UdpPng),
            _ => None,
        }
    }
    pub fn code(self) -> u16 {
        match self {
            Transport::SharedMemory => 0,
            Transport::UdpCompressed => 1,
            Transport::UdpRaw => 2,
            Transport::UdpPng => 3,
        }
    }
    pub fn is_udp(self) -> bool {
        self != Transport::SharedMemory
    }
}

/// How a camera payload is encoded on a given transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Raw,
    Jpeg,
    Png,
}

impl ImageFormat {
    pub fn for_transport(t: Transport) -> ImageFormat {
        match t {
            Transport::SharedMemory | Transport::UdpRaw => ImageFormat::Raw,
            Transport::UdpCompressed => ImageFormat::Jpeg,
            Transport::UdpPng => ImageFormat::Png,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_ids_are_unique_and_cameras_have_encodings() {
        for (i, a) in SENSOR_KINDS.iter().enumerate() {
            assert!(SENSOR_KINDS[i + 1..].iter().all(|b| b.type_id != a.type_id));
            assert_eq!(a.is_camera(), a.encoding().is_some());
        }
    }

    #[test]
    fn encodings_follow_the_spec() {
        let enc = |id| SensorKind::from_type_id(id).unwrap().encoding().unwrap();
        for id in [1, 4, 8, 9, 41] {
            assert_eq!(enc(id), Encoding::Bgr8);
        }
        assert_eq!(enc(2), Encoding::DepthMm16);
        assert_eq!(enc(3), Encoding::Mono8);
        assert_eq!(enc(40), Encoding::Mono8);
        assert!(SensorKind::from_type_id(6).is_none());
    }

    #[test]
    fn predicates_pick_the_kinds_the_spec_names() {
        let gimbals: Vec<u16> = SENSOR_KINDS
            .iter()
            .filter(|k| k.is_gimbal())
            .map(|k| k.type_id)
            .collect();
        let world: Vec<u16> = SENSOR_KINDS
            .iter()
            .filter(|k| k.points_in_world_frame())
            .map(|k| k.type_id)
            .collect();
        let fixed: Vec<_> = SENSOR_KINDS
            .iter()
            .filter_map(|k| Some((k.type_id, k.fixed_size()?)))
            .collect();
        assert_eq!((gimbals, world, fixed), (vec![9], vec![21], vec![(23, (64, 272))]));
    }

    #[test]
    fn topics_follow_the_sdk_spelling() {
        let topic = |id| SensorKind::from_type_id(id).unwrap().topic_suffix;
        assert_eq!(topic(4), "img_Segmentation");
        assert_eq!(topic(21), "global_lidar");
        assert_eq!(topic(7), "Depth_Cloud");
        assert_eq!(topic(40), "img_Infrared_Gray");
    }
}
