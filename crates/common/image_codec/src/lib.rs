//! Image codecs shared by every simulator's bridge and emulator: JPEG and
//! PNG into the `sensor_msgs/Image` layout, bounded so that a lying header
//! cannot make them allocate without limit, and recovering after corrupt
//! input (one bad frame costs one frame). No ROS dependency.

use std::fmt;

/// The first bytes of every JPEG: the SOI marker and the next marker's 0xFF.
pub const JPEG_START: [u8; 3] = [0xFF, 0xD8, 0xFF];
/// The last bytes of a complete JPEG: the EOI marker.
pub const JPEG_END: [u8; 2] = [0xFF, 0xD9];

use bytes::Bytes;

/// Pixel encodings, named as `sensor_msgs/Image` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    Bgr8,
    Mono8,
    Mono16,
    /// Depth, one little-endian u16 per pixel in millimetres, 0 where there
    /// is no return: `16UC1`, the integer depth image of REP 118 that
    /// depth_image_proc reads.
    DepthMm16,
}

impl Encoding {
    pub fn ros_name(self) -> &'static str {
        match self {
            Encoding::Bgr8 => "bgr8",
            Encoding::Mono8 => "mono8",
            Encoding::Mono16 => "mono16",
            Encoding::DepthMm16 => "16UC1",
        }
    }
    pub fn bytes_per_pixel(self) -> usize {
        match self {
            Encoding::Bgr8 => 3,
            Encoding::Mono8 => 1,
            Encoding::Mono16 | Encoding::DepthMm16 => 2,
        }
    }
}

/// An image in `sensor_msgs/Image` layout: rows of `step` bytes, little-endian.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub encoding: Encoding,
    pub step: u32,
    pub data: Bytes,
}

/// An image the JPEG or PNG codec refused, with libjpeg-turbo's or png's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError(pub String);

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CodecError {}

/// A JPEG decoder for one stream; keeps libjpeg-turbo's state between frames.
pub struct JpegDecoder {
    inner: turbojpeg::Decompressor,
    max_pixels: usize,
}

impl fmt::Debug for JpegDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JpegDecoder")
            .field("max_pixels", &self.max_pixels)
            .finish()
    }
}

impl JpegDecoder {
    /// `max_pixels` bounds what a lying header can make it allocate.
    pub fn new(max_pixels: usize) -> Result<Self, CodecError> {
        let inner = turbojpeg::Decompressor::new().map_err(|e| CodecError(e.to_string()))?;
        Ok(Self { inner, max_pixels })
    }

    /// Reads width and height without decoding.
    pub fn size(&mut self, jpeg: &[u8]) -> Result<(u32, u32), CodecError> {
        let h = self.read_header(jpeg)?;
        Ok((h.width as u32, h.height as u32))
    }

    /// libjpeg-turbo keeps a failed stream's state in its handle, and every
    /// later header read then fails with the same error: after any failure
    /// the handle is replaced, so one corrupt frame costs exactly one frame.
    fn recover<T>(&mut self, r: Result<T, turbojpeg::Error>, what: &str) -> Result<T, CodecError> {
        r.map_err(|e| {
            if let Ok(fresh) = turbojpeg::Decompressor::new() {
                self.inner = fresh;
            }
            CodecError(format!("{what}: {e}"))
        })
    }

    fn read_header(&mut self, jpeg: &[u8]) -> Result<turbojpeg::DecompressHeader, CodecError> {
        let r = self.inner.read_header(jpeg);
        self.recover(r, "JPEG header")
    }

    /// Decodes to bgr8 or mono8 (a 16-bit stream cannot be JPEG).
    pub fn decode(&mut self, jpeg: &[u8], encoding: Encoding) -> Result<Image, CodecError> {
        let mut pixels = Vec::new();
        let shape = self.decode_into(jpeg, encoding, &mut pixels, 0)?;
        Ok(Image {
            width: shape.width,
            height: shape.height,
            encoding,
            step: shape.step,
            data: pixels.into(),
        })
    }

    /// Decodes into `out` from byte `at` on: `out` ends with the pixels,
    /// its first `at` bytes kept. Decoding into the same `out` frame after
    /// frame writes into memory already mapped (a 4K frame in fresh memory
    /// cost a page fault per 4 KiB) and needs no copy into a message.
    pub fn decode_into(
        &mut self,
        jpeg: &[u8],
        encoding: Encoding,
        out: &mut Vec<u8>,
        at: usize,
    ) -> Result<ImageShape, CodecError> {
        let header = self.read_header(jpeg)?;
        let (w, h) = (header.width, header.height);
        if w == 0 || h == 0 || w.saturating_mul(h) > self.max_pixels {
            return Err(CodecError(format!("JPEG of {w}×{h} pixels refused")));
        }
        let format = match encoding {
            Encoding::Bgr8 => turbojpeg::PixelFormat::BGR,
            Encoding::Mono8 => turbojpeg::PixelFormat::GRAY,
            Encoding::Mono16 | Encoding::DepthMm16 => {
                return Err(CodecError(format!("a {} image cannot be JPEG", encoding.ros_name())))
            }
        };
        let pitch = w * format.size();
        // The same size as the last frame: nothing to write before decoding.
        out.resize(at + pitch * h, 0);
        let image = turbojpeg::Image {
            pixels: &mut out[at..],
            width: w,
            pitch,
            height: h,
            format,
        };
        let r = self.inner.decompress(jpeg, image);
        self.recover(r, "JPEG")?;
        Ok(ImageShape {
            width: w as u32,
            height: h as u32,
            step: pitch as u32,
        })
    }
}

/// The size of a decoded image: `height` rows of `step` bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImageShape {
    pub width: u32,
    pub height: u32,
    pub step: u32,
}

/// A PNG's width and height, from its header, without decoding it.
pub fn png_size(data: &[u8]) -> Result<(u32, u32), CodecError> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if data.len() < 24 || !data.starts_with(SIGNATURE) || &data[12..16] != b"IHDR" {
        return Err(CodecError("PNG: no PNG header".into()));
    }
    let be = |i: usize| u32::from_be_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    Ok((be(16), be(20)))
}

/// Decodes a PNG into the sensor's encoding: RGB(A) → bgr8, gray → mono8,
/// 16-bit gray → mono16 or 16UC1 depth (little-endian, as `sensor_msgs/Image`
/// with `is_bigendian = 0`). `max_bytes` bounds the decoder's allocations.
pub fn decode_png(data: &[u8], encoding: Encoding, max_bytes: usize) -> Result<Image, CodecError> {
    let bad = |e: png::DecodingError| CodecError(format!("PNG: {e}"));
    let mut decoder = png::Decoder::new_with_limits(data, png::Limits { bytes: max_bytes });
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(bad)?;
    let size = reader.output_buffer_size();
    if size > max_bytes {
        let i = reader.info();
        return Err(CodecError(format!("PNG of {}×{} pixels refused", i.width, i.height)));
    }
    let mut buf = vec![0u8; size];
    let info = reader.next_frame(&mut buf).map_err(bad)?;
    buf.truncate(info.buffer_size());
    let (w, h) = (info.width as usize, info.height as usize);
    let pixels = w * h;
    use png::{BitDepth, ColorType};
    let out: Vec<u8> = match (encoding, info.color_type, info.bit_depth) {
        (Encoding::Bgr8, ColorType::Rgb, BitDepth::Eight) => {
            let mut v = buf;
            v.chunks_exact_mut(3).for_each(|p| p.swap(0, 2));
            v
        }
        (Encoding::Bgr8, ColorType::Rgba, BitDepth::Eight) => {
            let mut v = Vec::with_capacity(pixels * 3);
            buf.chunks_exact(4)
                .for_each(|p| v.extend_from_slice(&[p[2], p[1], p[0]]));
            v
        }
        (Encoding::Bgr8, ColorType::Grayscale, BitDepth::Eight) => buf.iter().flat_map(|&g| [g, g, g]).collect(),
        (Encoding::Mono8, ColorType::Grayscale, BitDepth::Eight) => buf,
        (Encoding::Mono8, ColorType::Rgb, BitDepth::Eight) => {
            buf.chunks_exact(3).map(|p| luma(p[0], p[1], p[2])).collect()
        }
        (Encoding::Mono8, ColorType::Rgba, BitDepth::Eight) => {
            buf.chunks_exact(4).map(|p| luma(p[0], p[1], p[2])).collect()
        }
        (Encoding::Mono16 | Encoding::DepthMm16, ColorType::Grayscale, BitDepth::Sixteen) => {
            let mut v = buf;
            v.chunks_exact_mut(2).for_each(|p| p.swap(0, 1));
            v
        }
        (Encoding::Mono16 | Encoding::DepthMm16, ColorType::Grayscale, BitDepth::Eight) => {
            buf.iter().flat_map(|&g| u16::from(g).to_le_bytes()).collect()
        }
        (enc, ct, bd) => {
            return Err(CodecError(format!(
                "PNG {ct:?} {bd:?} cannot become {}",
                enc.ros_name()
            )))
        }
    };
    let step = w * encoding.bytes_per_pixel();
    if out.len() != step * h {
        return Err(CodecError(format!(
            "PNG decoded to {} bytes, expected {}",
            out.len(),
            step * h
        )));
    }
    Ok(Image {
        width: w as u32,
        height: h as u32,
        encoding,
        step: step as u32,
        data: out.into(),
    })
}

fn luma(r: u8, g: u8, b: u8) -> u8 {
    ((u32::from(r) * 77 + u32::from(g) * 150 + u32::from(b) * 29) >> 8) as u8
}

/// Encoders for the emulator and the tests.
pub mod encode {
    use crate::{CodecError, Encoding};

    /// JPEG-compresses a bgr8 or mono8 image.
    pub fn jpeg(
        pixels: &[u8],
        width: u32,
        height: u32,
        encoding: Encoding,
        quality: i32,
    ) -> Result<Vec<u8>, CodecError> {
        let format = match encoding {
            Encoding::Bgr8 => turbojpeg::PixelFormat::BGR,
            Encoding::Mono8 => turbojpeg::PixelFormat::GRAY,
            Encoding::Mono16 | Encoding::DepthMm16 => {
                return Err(CodecError(format!("a {} image cannot be JPEG", encoding.ros_name())))
            }
        };
        let mut c = turbojpeg::Compressor::new().map_err(|e| CodecError(e.to_string()))?;
        c.set_quality(quality).map_err(|e| CodecError(e.to_string()))?;
        if encoding == Encoding::Mono8 {
            c.set_subsamp(turbojpeg::Subsamp::Gray)
                .map_err(|e| CodecError(e.to_string()))?;
        }
        let image = turbojpeg::Image {
            pixels,
            width: width as usize,
            pitch: width as usize * format.size(),
            height: height as usize,
            format,
        };
        c.compress_to_vec(image).map_err(|e| CodecError(e.to_string()))
    }

    /// PNG-encodes an image given in its ROS encoding (bgr8 → RGB, mono16
    /// and 16UC1 little-endian → 16-bit big-endian PNG).
    pub fn png(pixels: &[u8], width: u32, height: u32, encoding: Encoding) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        {
            let mut e = png::Encoder::new(&mut out, width, height);
            let data: Vec<u8> = match encoding {
                Encoding::Bgr8 => {
                    e.set_color(png::ColorType::Rgb);
                    e.set_depth(png::BitDepth::Eight);
                    pixels.chunks_exact(3).flat_map(|p| [p[2], p[1], p[0]]).collect()
                }
                Encoding::Mono8 => {
                    e.set_color(png::ColorType::Grayscale);
                    e.set_depth(png::BitDepth::Eight);
                    pixels.to_vec()
                }
                Encoding::Mono16 | Encoding::DepthMm16 => {
                    e.set_color(png::ColorType::Grayscale);
                    e.set_depth(png::BitDepth::Sixteen);
                    pixels.chunks_exact(2).flat_map(|p| [p[1], p[0]]).collect()
                }
            };
            e.set_compression(png::Compression::Fast);
            let mut w = e.write_header().map_err(|e| CodecError(e.to_string()))?;
            w.write_image_data(&data).map_err(|e| CodecError(e.to_string()))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(w: u32, h: u32, ch: usize) -> Vec<u8> {
        (0..(w * h) as usize * ch).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn png_round_trips_in_every_encoding() {
        for (enc, ch) in [
            (Encoding::Bgr8, 3),
            (Encoding::Mono8, 1),
            (Encoding::Mono16, 2),
            (Encoding::DepthMm16, 2),
        ] {
            let px = gradient(7, 5, ch);
            let png = encode::png(&px, 7, 5, enc).unwrap();
            let img = decode_png(&png, enc, 1 << 20).unwrap();
            assert_eq!((img.width, img.height, img.step as usize), (7, 5, 7 * ch));
            assert_eq!(&img.data[..], &px[..], "{enc:?}");
        }
    }

    #[test]
    fn png_mono16_is_little_endian() {
        // 16-bit PNGs are big-endian: 0x1234 → bytes 12 34 in the file, 34 12 in ROS.
        let px = [0x34u8, 0x12];
        let png = encode::png(&px, 1, 1, Encoding::Mono16).unwrap();
        assert_eq!(
            &decode_png(&png, Encoding::Mono16, 1 << 20).unwrap().data[..],
            &[0x34, 0x12]
        );
    }

    #[test]
    fn png_refuses_huge_claims_and_garbage() {
        let px = gradient(64, 64, 3);
        let png = encode::png(&px, 64, 64, Encoding::Bgr8).unwrap();
        assert!(decode_png(&png, Encoding::Bgr8, 1000).is_err());
        assert!(decode_png(b"\x89PNG garbage", Encoding::Bgr8, 1 << 20).is_err());
    }

    /// One corrupt JPEG once left libjpeg-turbo's handle unusable: every
    /// later frame failed with the first one's error.
    #[test]
    fn a_corrupt_jpeg_never_stops_the_next_good_one() {
        let (w, h) = (32u32, 24u32);
        let px = gradient(w, h, 3);
        let good = encode::jpeg(&px, w, h, Encoding::Bgr8, 90).unwrap();
        let mut d = JpegDecoder::new(1 << 24).unwrap();
        let expected = d.decode(&good, Encoding::Bgr8).unwrap().data;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for round in 0..50 {
            let mut bad = vec![0xFF, 0xD8];
            bad.extend((0..200 + round * 13).map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            }));
            let _ = d.size(&bad);
            let _ = d.decode(&bad, Encoding::Bgr8);
            assert_eq!(d.size(&good).unwrap(), (w, h), "round {round}");
            assert_eq!(d.decode(&good, Encoding::Bgr8).unwrap().data, expected, "round {round}");
        }
    }

    #[test]
    fn decode_into_keeps_what_is_in_front_and_reuses_the_buffer() {
        let (w, h) = (32u32, 24u32);
        let jpeg = encode::jpeg(&gradient(w, h, 3), w, h, Encoding::Bgr8, 90).unwrap();
        let mut d = JpegDecoder::new(1 << 24).unwrap();
        let expected = d.decode(&jpeg, Encoding::Bgr8).unwrap().data;
        let mut out = b"fields".to_vec();
        let shape = d.decode_into(&jpeg, Encoding::Bgr8, &mut out, 6).unwrap();
        assert_eq!(
            shape,
            ImageShape {
                width: w,
                height: h,
                step: w * 3
            }
        );
        assert_eq!(&out[..6], b"fields");
        assert_eq!(&out[6..], &expected[..]);
        let buffer = out.as_ptr();
        d.decode_into(&jpeg, Encoding::Bgr8, &mut out, 6).unwrap();
        assert_eq!((out.as_ptr(), out.len()), (buffer, 6 + expected.len()));
        assert!(d.decode_into(&jpeg[..40], Encoding::Bgr8, &mut out, 6).is_err());
        d.decode_into(&jpeg, Encoding::Bgr8, &mut out, 6).unwrap();
        assert_eq!(&out[6..], &expected[..]);
    }

    #[test]
    fn jpeg_round_trip_is_close() {
        let (w, h) = (64u32, 48u32);
        let px: Vec<u8> = (0..w * h)
            .flat_map(|i| [(i % 64 * 4) as u8, 128, (i / 64 * 5) as u8])
            .collect();
        let jpeg = encode::jpeg(&px, w, h, Encoding::Bgr8, 95).unwrap();
        let mut d = JpegDecoder::new(1 << 24).unwrap();
        assert_eq!(d.size(&jpeg).unwrap(), (w, h));
        let img = d.decode(&jpeg, Encoding::Bgr8).unwrap();
        assert_eq!((img.width, img.height, img.step), (w, h, w * 3));
        let err: f64 = img
            .data
            .iter()
            .zip(&px)
            .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs())
            .sum::<f64>()
            / px.len() as f64;
        assert!(err < 4.0, "mean abs error {err}");
        let gray = d.decode(&jpeg, Encoding::Mono8).unwrap();
        assert_eq!(gray.data.len(), (w * h) as usize);
        assert!(JpegDecoder::new(100).unwrap().decode(&jpeg, Encoding::Bgr8).is_err());
        // A truncated JPEG may decode to a partial picture or fail; it must not panic.
        let _ = d.decode(&jpeg[..jpeg.len() / 3], Encoding::Bgr8);
    }
}
