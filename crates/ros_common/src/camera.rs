//! A camera's topics: `sensor_msgs/Image`, its `CameraInfo` and, for a
//! camera whose frames arrive as JPEG, the JPEG as received on a
//! `CompressedImage` topic. A JPEG is decoded only while somebody subscribes
//! to the raw topic (or when asked to always decode): rviz2 showing the
//! compressed topic, or nobody watching, costs no decode.

use std::fmt;

use image_codec::{CodecError, Encoding, Image as DecodedImage, JpegDecoder};
use r2r::sensor_msgs::msg::{CameraInfo, CompressedImage, Image};
use r2r::std_msgs::msg::Header;
use r2r::{Node, Publisher, QosProfile};

use crate::msgs::{camera_info, compressed_image, image};

/// Where a camera publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CameraTopics {
    pub image: String,
    pub info: String,
    /// `None` for a camera that never sends JPEG.
    pub compressed: Option<String>,
}

/// Why a frame of a camera was not published.
#[derive(Debug)]
pub enum CameraError {
    Decode(CodecError),
    Publish(r2r::Error),
}

impl CameraError {
    /// A short, stable name for counters and diagnostics.
    pub fn reason(&self) -> &'static str {
        match self {
            CameraError::Decode(_) => "bad_image",
            CameraError::Publish(_) => "publish_failed",
        }
    }
}

impl fmt::Display for CameraError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CameraError::Decode(e) => write!(f, "image: {e}"),
            CameraError::Publish(e) => write!(f, "publish: {e}"),
        }
    }
}

impl std::error::Error for CameraError {}

impl From<CodecError> for CameraError {
    fn from(e: CodecError) -> Self {
        CameraError::Decode(e)
    }
}

impl From<r2r::Error> for CameraError {
    fn from(e: r2r::Error) -> Self {
        CameraError::Publish(e)
    }
}

struct JpegOutput {
    compressed: Publisher<CompressedImage>,
    decoder: JpegDecoder,
    always_decode: bool,
}

pub struct CameraPublisher {
    image: Publisher<Image>,
    info: Publisher<CameraInfo>,
    jpeg: Option<JpegOutput>,
}

impl fmt::Debug for CameraPublisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CameraPublisher")
            .field("jpeg", &self.jpeg.is_some())
            .finish()
    }
}

impl CameraPublisher {
    /// The publishers of `topics`. With a compressed topic the camera takes
    /// JPEG frames, decoded into at most `max_pixels` pixels.
    pub fn new(
        node: &mut Node,
        topics: &CameraTopics,
        qos: &QosProfile,
        max_pixels: usize,
        always_decode: bool,
    ) -> Result<Self, String> {
        let publisher_error = |topic: &str, e: r2r::Error| format!("{topic}: {e}");
        let jpeg = match &topics.compressed {
            Some(t) => Some(JpegOutput {
                compressed: node
                    .create_publisher(t, qos.clone())
                    .map_err(|e| publisher_error(t, e))?,
                decoder: JpegDecoder::new(max_pixels).map_err(|e| format!("JPEG decoder: {e}"))?,
                always_decode,
            }),
            None => None,
        };
        Ok(Self {
            image: node
                .create_publisher(&topics.image, qos.clone())
                .map_err(|e| publisher_error(&topics.image, e))?,
            info: node
                .create_publisher(&topics.info, qos.clone())
                .map_err(|e| publisher_error(&topics.info, e))?,
            jpeg,
        })
    }

    /// A decoded frame: its camera info, then the image.
    pub fn publish_decoded(&self, img: DecodedImage, fov_deg: f64, header: Header) -> Result<(), CameraError> {
        self.info
            .publish(&camera_info(img.width, img.height, fov_deg, header.clone()))?;
        self.image.publish(&image(img, header))?;
        Ok(())
    }

    /// A JPEG frame: nothing of it is published unless it reads as a JPEG;
    /// then the JPEG as received, the camera info, and the decoded image while
    /// somebody subscribes to it. Panics on a camera made without a
    /// compressed topic (a programming error, not an input one).
    pub fn publish_jpeg(
        &mut self,
        jpeg: Vec<u8>,
        encoding: Encoding,
        fov_deg: f64,
        header: Header,
    ) -> Result<(), CameraError> {
        let out = self
            .jpeg
            .as_mut()
            .expect("publish_jpeg on a camera without a compressed topic");
        let wanted = out.always_decode || self.image.get_inter_process_subscription_count().unwrap_or(1) > 0;
        let decoded = if wanted {
            Some(out.decoder.decode(&jpeg, encoding)?)
        } else {
            None
        };
        let (width, height) = match &decoded {
            Some(d) => (d.width, d.height),
            None => out.decoder.size(&jpeg)?,
        };
        out.compressed
            .publish(&compressed_image(jpeg, encoding, header.clone()))?;
        match decoded {
            Some(d) => self.publish_decoded(d, fov_deg, header),
            None => {
                self.info.publish(&camera_info(width, height, fov_deg, header))?;
                Ok(())
            }
        }
    }
}
