//! The TypeID and transport tables of RflySim's `Config.json` (spec §1, §3, §8):
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
    /// Topic suffix under `/rflysim/sensor<SeqID>/` (RflySim SDK spelling, spec §8).
    pub topic_suffix: &'static str,
    pub description: &'static str,
}

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
pub const SENSOR_KINDS: &[SensorKind] = &[
    camera(1, Encoding::Bgr8, "img_rgb", "RGB camera"),
    camera(2, Encoding::Mono16, "img_depth", "depth camera"),
    camera(3, Encoding::Mono8, "img_gray", "gray camera"),
    camera(4, Encoding::Bgr8, "img_Segmentation", "segmentation camera"),
    other(5, SensorClass::LaserDistance, "distance", "laser range finder"),
    other(7, SensorClass::DepthCloud, "Depth_Cloud", "depth-to-cloud"),
    camera(8, Encoding::Bgr8, "fisheye", "fisheye camera"),
    camera(9, Encoding::Bgr8, "img_cine", "gimbal camera"),
    other(20, SensorClass::Lidar, "vehicle_lidar", "vehicle-frame LiDAR"),
    other(21, SensorClass::Lidar, "global_lidar", "world-frame LiDAR"),
    other(22, SensorClass::Lidar, "livox_lidar", "Livox LiDAR"),
    other(23, SensorClass::Lidar, "mid360_lidar", "Mid360 LiDAR"),
    other(30, SensorClass::Detections, "detections", "detection boxes"),
    other(
        31,
        SensorClass::Detections,
        "detections",
        "detection boxes (short form)",
    ),
    camera(40, Encoding::Mono8, "img_Infrared_Gray", "infrared gray camera"),
    camera(41, Encoding::Bgr8, "img_Infrared", "infrared color camera"),
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

    /// The Mid360 always scans 64 × 272 whatever the config says (spec §1).
    pub fn fixed_size(&self) -> Option<(u16, u16)> {
        (self.type_id == 23).then_some((64, 272))
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
        assert_eq!(enc(2), Encoding::Mono16);
        assert_eq!(enc(3), Encoding::Mono8);
        assert_eq!(enc(40), Encoding::Mono8);
        assert!(SensorKind::from_type_id(6).is_none());
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
