//! The pure core of a sensor: one reassembled frame → the messages it
//! becomes, decided and converted without a node or a socket (as `gimbal`
//! is for commands). `SensorPipeline` stamps the frame, asks this module for
//! its messages and publishes them.

use bytes::Bytes;
use r2r::builtin_interfaces::msg::Time;
use r2r::std_msgs::msg::{Float32, Header};

use image_codec::{decode_png, Encoding, Image};
use rflysim_proto::config::SensorConfig;
use rflysim_proto::error::DecodeError;
use rflysim_proto::image::{depth_to_millimetres, raw_image, raw_image_step};
use rflysim_proto::lidar::{
    decode_depth_cloud, decode_depth_cloud_region, decode_lidar, decode_lidar_region, protocol_float_frame,
    zero_depth_padding, FLOAT_HEADER_LEN,
};
use rflysim_proto::sensor::{ImageFormat, SensorClass, SensorKind, Transport};
use rflysim_proto::telemetry::LaserDistance;
use ros_common::cdr::{self, ImageLayout};
use ros_common::msgs::Covariances;

use super::cloud::{cloud_frame, cloud_messages, point_cloud_without_data, CloudMessages, Points};
use crate::names;

/// What one frame becomes, before anything is published.
#[derive(Debug)]
pub enum Messages {
    /// A raw or PNG camera frame, decoded.
    Image {
        image: Image,
        fov_deg: f64,
        header: Header,
    },
    /// A raw camera frame, serialized as its `Image` in the buffer it was
    /// reassembled into (see [`FrameMapper::headroom`]).
    SerializedImage {
        message: Vec<u8>,
        width: u32,
        height: u32,
        fov_deg: f64,
        header: Header,
    },
    /// A JPEG camera frame as received: the camera publisher decodes it only
    /// while somebody subscribes to the raw topic.
    Jpeg {
        jpeg: Vec<u8>,
        encoding: Encoding,
        fov_deg: f64,
        header: Header,
    },
    Cloud(Box<CloudMessages>),
    Distance(Float32),
}

/// What a sensor's frames hold, for a kind that is bridged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    Camera(Encoding),
    Cloud { depth: bool },
    Distance,
}

/// How the frames of one sensor become messages.
#[derive(Debug, Clone)]
pub struct FrameMapper {
    cfg: SensorConfig,
    kind: &'static SensorKind,
    frame_kind: FrameKind,
    transport: Transport,
    /// The `max_message_bytes` parameter.
    max_frame_bytes: usize,
    covariances: Covariances,
    /// odom → base_link from the LiDAR pose.
    tf_from_lidar: bool,
    /// See [`FrameMapper::headroom`].
    headroom: usize,
}

impl FrameMapper {
    /// The mapper of `cfg`, or why the sensor is not bridged (an unknown
    /// TypeID or transport, or detection boxes, which have no standard ROS 2
    /// message).
    pub fn new(
        cfg: SensorConfig,
        max_frame_bytes: usize,
        covariances: Covariances,
        tf_from_lidar: bool,
    ) -> Result<Self, String> {
        let kind = cfg
            .kind()
            .ok_or_else(|| format!("sensor {}: unknown TypeID {}", cfg.seq_id, cfg.type_id))?;
        let transport = cfg
            .transport()
            .ok_or_else(|| format!("sensor {}: unknown transport", cfg.seq_id))?;
        let frame_kind = match kind.class {
            SensorClass::Camera(encoding) => FrameKind::Camera(encoding),
            SensorClass::Lidar => FrameKind::Cloud { depth: false },
            SensorClass::DepthCloud => FrameKind::Cloud { depth: true },
            SensorClass::LaserDistance => FrameKind::Distance,
            SensorClass::Detections => {
                return Err(format!(
                    "sensor {}: detection boxes (TypeID {}) have no standard ROS 2 message here; not bridged",
                    cfg.seq_id, cfg.type_id
                ))
            }
        };
        let headroom = match frame_kind {
            FrameKind::Camera(encoding) if ImageFormat::for_transport(transport) == ImageFormat::Raw => {
                let header = ros_common::msgs::header(Time::default(), &names::optical_frame(&cfg));
                let layout = ImageLayout {
                    height: 0,
                    width: 0,
                    encoding: encoding.ros_name(),
                    step: 0,
                };
                let mut before = Vec::new();
                cdr::image_before_data(&mut before, &header, layout, 0, 0).map_or(0, |()| before.len())
            }
            FrameKind::Cloud { .. } if transport != Transport::SharedMemory => {
                let cloud = point_cloud_without_data(0, ros_common::msgs::header(Time::default(), &cloud_frame(&cfg)));
                let mut before = Vec::new();
                // The protocol layout's header in front of the points is room already.
                cdr::point_cloud2_before_data(&mut before, &cloud, 0, 0)
                    .map_or(0, |()| before.len().saturating_sub(FLOAT_HEADER_LEN))
            }
            _ => 0,
        };
        Ok(Self {
            cfg,
            kind,
            frame_kind,
            transport,
            max_frame_bytes,
            covariances,
            tf_from_lidar,
            headroom,
        })
    }

    /// Room for a transport to keep in front of each frame's payload: a raw
    /// camera's frame becomes its serialized `Image` there, and a UDP cloud
    /// of the protocol's float layout its `PointCloud2`, without a copy of the
    /// pixels or points (6 MB per 1080p frame, 1.6 MB per 100k points). 0
    /// for other sensors.
    pub fn headroom(&self) -> usize {
        self.headroom
    }

    /// Room for a transport to keep after each frame's payload: a cloud
    /// serialized in place ends with `is_dense`, one byte.
    pub fn tailroom(&self) -> usize {
        match self.frame_kind {
            FrameKind::Cloud { .. } if self.headroom > 0 => 1,
            _ => 0,
        }
    }

    pub fn cfg(&self) -> &SensorConfig {
        &self.cfg
    }

    pub fn kind(&self) -> &'static SensorKind {
        self.kind
    }

    pub fn frame_kind(&self) -> FrameKind {
        self.frame_kind
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }

    pub fn topic(&self) -> String {
        names::sensor_topic(self.cfg.seq_id, self.kind.topic_suffix)
    }

    /// The image format of a camera's frames.
    pub fn image_format(&self) -> ImageFormat {
        ImageFormat::for_transport(self.transport)
    }

    /// The largest frame accepted: the sensor's own bound (from its
    /// configured size), never more than the `max_message_bytes` parameter.
    pub fn max_frame_bytes(&self) -> usize {
        self.cfg
            .max_frame_len()
            .map_or(self.max_frame_bytes, |b| b.min(self.max_frame_bytes))
    }

    /// The most pixels a JPEG of this camera decodes into.
    pub fn max_jpeg_pixels(&self, encoding: Encoding) -> usize {
        self.cfg
            .max_image_pixels()
            .unwrap_or(usize::MAX)
            .min(self.max_frame_bytes / encoding.bytes_per_pixel())
    }

    /// Whether a frame takes milliseconds to convert (a JPEG or PNG camera).
    pub fn is_heavy(&self) -> bool {
        matches!(self.frame_kind, FrameKind::Camera(_)) && self.image_format() != ImageFormat::Raw
    }

    /// The messages of one frame, stamped `stamp`: `payload`'s first
    /// `headroom` bytes are free (0, or [`FrameMapper::headroom`]).
    pub fn messages(&self, stamp: Time, mut payload: Vec<u8>, headroom: usize) -> Result<Messages, DecodeError> {
        let (w, h) = self.cfg.size();
        if headroom > 0 && headroom != self.headroom {
            payload.drain(..headroom.min(payload.len()));
            return self.messages(stamp, payload, 0);
        }
        match self.frame_kind {
            FrameKind::Camera(encoding) => {
                let header = ros_common::msgs::header(stamp, &names::optical_frame(&self.cfg));
                let fov_deg = f64::from(self.cfg.camera_fov_deg);
                // RflySim3D's depth units and "no return" → 16UC1's millimetres and 0.
                let depth_unit_m = (encoding == Encoding::DepthMm16).then(|| self.cfg.depth_unit_m());
                let image = match self.image_format() {
                    ImageFormat::Raw if headroom > 0 => {
                        if let Some(unit) = depth_unit_m {
                            let pixels_at = headroom.min(payload.len());
                            depth_to_millimetres(&mut payload[pixels_at..], unit);
                        }
                        return self.serialized_image(payload, encoding, fov_deg, header);
                    }
                    ImageFormat::Raw => {
                        if let Some(unit) = depth_unit_m {
                            depth_to_millimetres(&mut payload, unit);
                        }
                        raw_image(Bytes::from(payload), u32::from(w), u32::from(h), encoding)?
                    }
                    ImageFormat::Png => {
                        let max_pixels = self.cfg.max_image_pixels().unwrap_or(usize::MAX);
                        let max_bytes = max_pixels.saturating_mul(encoding.bytes_per_pixel());
                        let mut image = decode_png(&payload, encoding, max_bytes.min(self.max_frame_bytes))?;
                        if let Some(unit) = depth_unit_m {
                            let mut pixels = Vec::from(image.data);
                            depth_to_millimetres(&mut pixels, unit);
                            image.data = pixels.into();
                        }
                        image
                    }
                    ImageFormat::Jpeg => {
                        return Ok(Messages::Jpeg {
                            jpeg: payload,
                            encoding,
                            fov_deg,
                            header,
                        })
                    }
                };
                Ok(Messages::Image { image, fov_deg, header })
            }
            FrameKind::Cloud { depth } => {
                let range = self.cfg.lidar_max_range();
                // A region is sized for the most points; a datagram stream's frame is exact.
                let in_region = self.transport == Transport::SharedMemory;
                let headroom = headroom.min(payload.len());
                let protocol_frame = (headroom > 0)
                    .then(|| protocol_float_frame(&payload[headroom..]))
                    .flatten();
                let points = match (protocol_frame, depth, in_region) {
                    (Some((pose, _)), _, _) => {
                        if depth {
                            zero_depth_padding(&mut payload[headroom + FLOAT_HEADER_LEN..]);
                        }
                        Points::FloatFrame {
                            frame: payload,
                            headroom,
                            pose,
                        }
                    }
                    (None, true, true) => Points::Decoded(decode_depth_cloud_region(&payload, range)?),
                    (None, false, true) => Points::Decoded(decode_lidar_region(&payload, range)?),
                    (None, true, false) => {
                        Points::Decoded(decode_depth_cloud(Bytes::from(payload).slice(headroom..), range)?)
                    }
                    (None, false, false) => {
                        Points::Decoded(decode_lidar(Bytes::from(payload).slice(headroom..), range)?)
                    }
                };
                Ok(Messages::Cloud(Box::new(cloud_messages(
                    &self.cfg,
                    points,
                    stamp,
                    &self.covariances,
                    self.tf_from_lidar,
                ))))
            }
            FrameKind::Distance => Ok(Messages::Distance(Float32 {
                data: LaserDistance::decode(&payload)?.distance,
            })),
        }
    }
}

impl FrameMapper {
    /// A raw frame after `self.headroom` free bytes → its serialized `Image`, in place.
    fn serialized_image(
        &self,
        mut message: Vec<u8>,
        encoding: Encoding,
        fov_deg: f64,
        header: Header,
    ) -> Result<Messages, DecodeError> {
        let (width, height) = self.cfg.size();
        let (width, height) = (u32::from(width), u32::from(height));
        let step = raw_image_step(message.len().saturating_sub(self.headroom), width, height, encoding)?;
        let layout = ImageLayout {
            height,
            width,
            encoding: encoding.ros_name(),
            step,
        };
        match cdr::image_in_place(&mut message, self.headroom, &header, layout) {
            Ok(true) => Ok(Messages::SerializedImage {
                message,
                width,
                height,
                fov_deg,
                header,
            }),
            // Both cannot happen: the headroom was sized for this sensor's
            // frame id and encoding, and a frame is far below 4 GiB.
            Ok(false) => Err(DecodeError::Invalid {
                what: "raw image",
                detail: "headroom of another size".into(),
            }),
            Err(len) => Err(DecodeError::Invalid {
                what: "raw image",
                detail: format!("{len} bytes"),
            }),
        }
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
