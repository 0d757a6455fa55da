//! A camera's topics: `sensor_msgs/Image`, its `CameraInfo` and, for a
//! camera whose frames arrive as JPEG, the JPEG as received on a
//! `CompressedImage` topic. A JPEG is decoded only while somebody subscribes
//! to the raw topic (or when asked to always decode): rviz2 showing the
//! compressed topic, or nobody watching, costs no decode.

use std::fmt;

use image_codec::{CodecError, Encoding, Image as DecodedImage, ImageShape, JpegDecoder};
use r2r::sensor_msgs::msg::CameraInfo;
use r2r::std_msgs::msg::Header;
use r2r::{Node, Publisher, PublisherUntyped, QosProfile};

use crate::cdr::{self, compressed_image, ImageLayout, COMPRESSED_IMAGE_TYPE, IMAGE_TYPE};
use crate::demand::{subscribed, subscribed_untyped};
use crate::msgs::{camera_info, JpegFormatName};

/// The camera info topic of the image topic `image_topic`: beside the
/// image, `<ns>/<name>` → `<ns>/camera_info`, where image_transport's
/// `getCameraInfoTopic` (ros-perception/image_common, camera_common.cpp)
/// puts it, and so where its camera subscriber, image_proc,
/// depth_image_proc and rviz2's Camera display look for it. A relative
/// image topic gives a relative info topic (the node's namespace moves both).
pub fn camera_info_topic(image_topic: &str) -> String {
    match image_topic.rfind('/') {
        Some(slash) => format!("{}/camera_info", &image_topic[..slash]),
        None => "camera_info".to_owned(),
    }
}

/// The `CompressedImage` topic of the image topic `image_topic`:
/// image_transport's `compressed` transport, `<image>/compressed`.
pub fn compressed_topic(image_topic: &str) -> String {
    format!("{image_topic}/compressed")
}

/// Where a camera publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CameraTopics {
    pub image: String,
    pub info: String,
    /// `None` for a camera that never sends JPEG.
    pub compressed: Option<String>,
    /// A second topic carrying the same camera info, for subscribers of an
    /// earlier layout; `None`: the info goes to `info` only.
    pub info_also: Option<String>,
}

impl CameraTopics {
    /// image_transport's layout for the image topic `image`: the camera info
    /// beside it ([`camera_info_topic`]) and, for a camera whose frames
    /// arrive as JPEG or PNG, the frames as received on `<image>/compressed`.
    pub fn beside(image: &str, compressed: bool) -> Self {
        Self {
            image: image.to_owned(),
            info: camera_info_topic(image),
            compressed: compressed.then(|| compressed_topic(image)),
            info_also: None,
        }
    }

    /// The camera info also on `topic`.
    pub fn with_info_also(mut self, topic: String) -> Self {
        self.info_also = Some(topic);
        self
    }
}

/// Why a frame of a camera was not published.
#[derive(Debug)]
pub enum CameraError {
    Decode(CodecError),
    Publish(r2r::Error),
    /// More bytes than a ROS message field can hold (2³² − 1).
    TooLarge(usize),
}

impl CameraError {
    /// A short, stable name for counters and diagnostics.
    pub fn reason(&self) -> &'static str {
        match self {
            CameraError::Decode(_) => "bad_image",
            CameraError::Publish(_) => "publish_failed",
            CameraError::TooLarge(_) => "too_large",
        }
    }
}

impl fmt::Display for CameraError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CameraError::Decode(e) => write!(f, "image: {e}"),
            CameraError::Publish(e) => write!(f, "publish: {e}"),
            CameraError::TooLarge(n) => write!(f, "{n} bytes do not fit a ROS message"),
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
    /// Takes the serialized message (see [`crate::cdr`]).
    compressed: PublisherUntyped,
    /// The last frame's serialized message, reused for the next.
    serialized: Vec<u8>,
    decoder: JpegDecoder,
    always_decode: bool,
    format_name: JpegFormatName,
}

/// A camera's info publishers: the one beside the image and, when asked
/// for, a second one with the same messages.
struct InfoOutput {
    beside: Publisher<CameraInfo>,
    also: Option<Publisher<CameraInfo>>,
}

impl InfoOutput {
    /// The pinhole info of a `width` × `height` frame, to each publisher
    /// somebody subscribes to (built once).
    fn publish(&self, width: u32, height: u32, fov_deg: f64, header: Header) -> r2r::Result<()> {
        let beside = subscribed(&self.beside);
        let also = self.also.as_ref().filter(|p| subscribed(p));
        if !beside && also.is_none() {
            return Ok(());
        }
        let info = camera_info(width, height, fov_deg, header);
        if beside {
            self.beside.publish(&info)?;
        }
        also.map_or(Ok(()), |p| p.publish(&info))
    }
}

pub struct CameraPublisher {
    /// Takes the serialized `Image` (see [`crate::cdr`]).
    image: PublisherUntyped,
    /// The last image's serialized message, reused for the next.
    image_serialized: Vec<u8>,
    info: InfoOutput,
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
                    .create_publisher_untyped(t, COMPRESSED_IMAGE_TYPE, qos.clone())
                    .map_err(|e| publisher_error(t, e))?,
                serialized: Vec::new(),
                decoder: JpegDecoder::new(max_pixels).map_err(|e| format!("JPEG decoder: {e}"))?,
                always_decode,
                format_name: JpegFormatName::default(),
            }),
            None => None,
        };
        Ok(Self {
            image: node
                .create_publisher_untyped(&topics.image, IMAGE_TYPE, qos.clone())
                .map_err(|e| publisher_error(&topics.image, e))?,
            image_serialized: Vec::new(),
            info: InfoOutput {
                beside: node
                    .create_publisher(&topics.info, qos.clone())
                    .map_err(|e| publisher_error(&topics.info, e))?,
                also: match &topics.info_also {
                    Some(t) => Some(
                        node.create_publisher(t, qos.clone())
                            .map_err(|e| publisher_error(t, e))?,
                    ),
                    None => None,
                },
            },
            jpeg,
        })
    }

    /// How the `format` of this camera's `CompressedImage`s names the JPEG
    /// (image_transport's form unless set).
    pub fn with_jpeg_format_name(mut self, name: JpegFormatName) -> Self {
        if let Some(out) = self.jpeg.as_mut() {
            out.format_name = name;
        }
        self
    }

    /// A decoded frame: its camera info, then the image (each only while
    /// somebody subscribes to it).
    pub fn publish_decoded(&mut self, img: DecodedImage, fov_deg: f64, header: Header) -> Result<(), CameraError> {
        self.info.publish(img.width, img.height, fov_deg, header.clone())?;
        if subscribed_untyped(&self.image) {
            let layout = ImageLayout {
                height: img.height,
                width: img.width,
                encoding: img.encoding.ros_name(),
                step: img.step,
            };
            cdr::image(&mut self.image_serialized, &header, layout, &img.data).map_err(CameraError::TooLarge)?;
            self.image.publish_raw(&self.image_serialized)?;
        }
        Ok(())
    }

    /// A frame already serialized as its `Image` (see
    /// [`cdr::image_in_place`]): its camera info, then the image (each only
    /// while somebody subscribes to it).
    pub fn publish_serialized_image(
        &mut self,
        message: &[u8],
        width: u32,
        height: u32,
        fov_deg: f64,
        header: Header,
    ) -> Result<(), CameraError> {
        self.info.publish(width, height, fov_deg, header)?;
        if subscribed_untyped(&self.image) {
            self.image.publish_raw(message)?;
        }
        Ok(())
    }

    /// A PNG frame: as received on the compressed topic (format `png`),
    /// its camera info, and decoded to the raw topic, each while somebody
    /// subscribes to it; `max_bytes` bounds the decode. Panics on a camera
    /// made without a compressed topic.
    pub fn publish_png(
        &mut self,
        png: &[u8],
        encoding: Encoding,
        fov_deg: f64,
        header: Header,
        max_bytes: usize,
    ) -> Result<(), CameraError> {
        let out = self
            .jpeg
            .as_mut()
            .expect("publish_png on a camera without a compressed topic");
        let decoded = if out.always_decode || subscribed_untyped(&self.image) {
            Some(image_codec::decode_png(png, encoding, max_bytes)?)
        } else {
            None
        };
        let (width, height) = match &decoded {
            Some(d) => (d.width, d.height),
            None => image_codec::png_size(png)?,
        };
        if subscribed_untyped(&out.compressed) {
            let format = out.format_name.png_format(encoding);
            compressed_image(&mut out.serialized, &header.stamp, &header.frame_id, &format, png)
                .map_err(CameraError::TooLarge)?;
            out.compressed.publish_raw(&out.serialized)?;
        }
        match decoded {
            Some(d) => self.publish_decoded(d, fov_deg, header),
            None => {
                self.info.publish(width, height, fov_deg, header)?;
                Ok(())
            }
        }
    }

    /// Whether a JPEG frame published now would be decoded (somebody
    /// subscribes to the raw topic, or the camera always decodes).
    pub fn decodes(&self) -> bool {
        self.jpeg
            .as_ref()
            .is_some_and(|out| out.always_decode || subscribed_untyped(&self.image))
    }

    /// A JPEG frame: nothing of it is published unless it reads as a JPEG;
    /// then the JPEG as received, the camera info, and the decoded image,
    /// each while somebody subscribes to it. Panics on a camera made
    /// without a compressed topic (a programming error, not an input one).
    pub fn publish_jpeg(
        &mut self,
        jpeg: &[u8],
        encoding: Encoding,
        fov_deg: f64,
        header: Header,
    ) -> Result<(), CameraError> {
        self.publish_jpeg_from(Jpeg::Borrowed(jpeg), encoding, fov_deg, header)
    }

    /// [`Self::publish_jpeg`] of the JPEG `buf[at..]`: the `CompressedImage`
    /// is serialized around it, its fields in the room in front (when they
    /// fit: else as `publish_jpeg` does), with no copy of the JPEG. The
    /// buffer comes back with the outcome, for the next frame.
    pub fn publish_jpeg_with_room(
        &mut self,
        mut buf: Vec<u8>,
        at: usize,
        encoding: Encoding,
        fov_deg: f64,
        header: Header,
    ) -> Published {
        let result = self.publish_jpeg_from(Jpeg::InBuffer { buf: &mut buf, at }, encoding, fov_deg, header);
        Published { result, buffer: buf }
    }

    fn publish_jpeg_from(
        &mut self,
        mut jpeg: Jpeg<'_>,
        encoding: Encoding,
        fov_deg: f64,
        header: Header,
    ) -> Result<(), CameraError> {
        let out = self
            .jpeg
            .as_mut()
            .expect("publish_jpeg on a camera without a compressed topic");
        let raw_wanted = subscribed_untyped(&self.image);
        // Decoded straight into the `Image` message reused from the last
        // frame, behind room for its fields: no copy of the pixels.
        let layout_for = |shape: ImageShape| ImageLayout {
            height: shape.height,
            width: shape.width,
            encoding: encoding.ros_name(),
            step: shape.step,
        };
        let mut fields = Vec::new();
        cdr::image_before_data(&mut fields, &header, layout_for(ImageShape::default()), 0, 0)
            .map_err(CameraError::TooLarge)?;
        let decoded = if out.always_decode || raw_wanted {
            Some(
                out.decoder
                    .decode_into(jpeg.bytes(), encoding, &mut self.image_serialized, fields.len())?,
            )
        } else {
            None
        };
        let (width, height) = match decoded {
            Some(d) => (d.width, d.height),
            None => out.decoder.size(jpeg.bytes())?,
        };
        if subscribed_untyped(&out.compressed) {
            let format = out.format_name.format(encoding);
            let (stamp, frame_id) = (&header.stamp, &header.frame_id);
            let in_front = match &mut jpeg {
                Jpeg::InBuffer { buf, at } => {
                    cdr::compressed_image_in_front(buf, *at, &mut out.serialized, stamp, frame_id, &format)
                        .map_err(CameraError::TooLarge)?
                }
                Jpeg::Borrowed(_) => None,
            };
            match (in_front, &jpeg) {
                (Some(start), Jpeg::InBuffer { buf, .. }) => out.compressed.publish_raw(&buf[start..])?,
                _ => {
                    compressed_image(&mut out.serialized, stamp, frame_id, &format, jpeg.bytes())
                        .map_err(CameraError::TooLarge)?;
                    out.compressed.publish_raw(&out.serialized)?;
                }
            }
        }
        self.info.publish(width, height, fov_deg, header.clone())?;
        if let (Some(shape), true) = (decoded, raw_wanted) {
            let in_place = cdr::image_in_place(&mut self.image_serialized, fields.len(), &header, layout_for(shape))
                .map_err(CameraError::TooLarge)?;
            // The fields' length depends on the frame id and encoding only, both fixed above.
            debug_assert!(in_place, "the image's fields took another length than measured");
            if in_place {
                self.image.publish_raw(&self.image_serialized)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camera_info_is_beside_the_image_as_image_transport_puts_it() {
        assert_eq!(
            camera_info_topic("/rflysim/sensor1/img_rgb"),
            "/rflysim/sensor1/camera_info"
        );
        assert_eq!(camera_info_topic("auv0/front/image_raw"), "auv0/front/camera_info");
        assert_eq!(camera_info_topic("camera/image_raw"), "camera/camera_info");
        assert_eq!(camera_info_topic("/image"), "/camera_info");
        // Relative, as the image topic: the node's namespace resolves both alike.
        assert_eq!(camera_info_topic("image"), "camera_info");
    }

    #[test]
    fn compressed_is_the_image_topic_and_the_transport_name() {
        assert_eq!(compressed_topic("camera/image_raw"), "camera/image_raw/compressed");
        let topics = CameraTopics::beside("/rflysim/sensor3/img_gray", true);
        assert_eq!(topics.info, "/rflysim/sensor3/camera_info");
        assert_eq!(
            topics.compressed.as_deref(),
            Some("/rflysim/sensor3/img_gray/compressed")
        );
        assert_eq!(topics.info_also, None);
        assert_eq!(CameraTopics::beside("a/b", false).compressed, None);
    }
}
/// A JPEG to publish: borrowed, or at `at` in a buffer whose first `at`
/// bytes are free for the fields of its `CompressedImage`.
enum Jpeg<'a> {
    Borrowed(&'a [u8]),
    InBuffer { buf: &'a mut Vec<u8>, at: usize },
}

impl Jpeg<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Jpeg::Borrowed(b) => b,
            Jpeg::InBuffer { buf, at } => &buf[*at..],
        }
    }
}

/// What [`CameraPublisher::publish_jpeg_with_room`] did, and its buffer back.
#[derive(Debug)]
pub struct Published {
    pub result: Result<(), CameraError>,
    pub buffer: Vec<u8>,
}
