//! Little-endian field access for fixed-layout structs. Every RflySim struct
//! is little-endian and unpadded (Python `struct` format `<...`), but for the
//! padding the SDK's native packing puts into `SOut2SimulatorSimpleTime`
//! ([`crate::scene::VehicleUpdate`]).

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::error::DecodeError;

/// `p`'s fields when it is exactly `len` bytes long.
pub(crate) fn exact<'a>(what: &'static str, p: &'a [u8], len: usize) -> Result<Fields<'a>, DecodeError> {
    if p.len() == len {
        Ok(Fields(p))
    } else {
        Err(DecodeError::length(what, p.len(), len.to_string()))
    }
}

/// Checks the `i32` checksum at offset 0.
pub(crate) fn checksum(what: &'static str, f: Fields<'_>, want: i32) -> Result<(), DecodeError> {
    let got = f.i32(0);
    if got == want {
        Ok(())
    } else {
        Err(DecodeError::Checksum {
            what,
            got: i64::from(got),
        })
    }
}

/// Reads fixed-offset fields from a byte slice whose length was checked by the caller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields<'a>(pub &'a [u8]);

impl Fields<'_> {
    pub fn u16(&self, at: usize) -> u16 {
        LE::read_u16(&self.0[at..])
    }
    pub fn u32(&self, at: usize) -> u32 {
        LE::read_u32(&self.0[at..])
    }
    pub fn i32(&self, at: usize) -> i32 {
        LE::read_i32(&self.0[at..])
    }
    pub fn i64(&self, at: usize) -> i64 {
        LE::read_i64(&self.0[at..])
    }
    pub fn f32(&self, at: usize) -> f32 {
        LE::read_f32(&self.0[at..])
    }
    pub fn f64(&self, at: usize) -> f64 {
        LE::read_f64(&self.0[at..])
    }
    pub fn f32s<const N: usize>(&self, at: usize) -> [f32; N] {
        std::array::from_fn(|i| self.f32(at + 4 * i))
    }
    pub fn f64s<const N: usize>(&self, at: usize) -> [f64; N] {
        std::array::from_fn(|i| self.f64(at + 8 * i))
    }
    pub fn u16s<const N: usize>(&self, at: usize) -> [u16; N] {
        std::array::from_fn(|i| self.u16(at + 2 * i))
    }
    pub fn i32s<const N: usize>(&self, at: usize) -> [i32; N] {
        std::array::from_fn(|i| self.i32(at + 4 * i))
    }
    /// A NUL-padded text field of `len` bytes, up to its first NUL; bytes
    /// that are not UTF-8 read as U+FFFD.
    pub fn text(&self, at: usize, len: usize) -> String {
        let field = &self.0[at..at + len];
        let end = field.iter().position(|&b| b == 0).unwrap_or(len);
        String::from_utf8_lossy(&field[..end]).into_owned()
    }
}

/// Writes fixed-offset fields into a buffer whose length was checked by the caller.
#[derive(Debug)]
pub(crate) struct FieldsMut<'a>(pub &'a mut [u8]);

impl FieldsMut<'_> {
    pub fn u16(&mut self, at: usize, v: u16) {
        LE::write_u16(&mut self.0[at..], v);
    }
    pub fn i32(&mut self, at: usize, v: i32) {
        LE::write_i32(&mut self.0[at..], v);
    }
    pub fn f32(&mut self, at: usize, v: f32) {
        LE::write_f32(&mut self.0[at..], v);
    }
    pub fn f32s(&mut self, at: usize, vs: &[f32]) {
        for (i, &v) in vs.iter().enumerate() {
            self.f32(at + 4 * i, v);
        }
    }
    pub fn u16s(&mut self, at: usize, vs: &[u16]) {
        for (i, &v) in vs.iter().enumerate() {
            self.u16(at + 2 * i, v);
        }
    }
}

/// Appends little-endian fields to a buffer.
#[derive(Debug, Default)]
pub(crate) struct Writer(pub Vec<u8>);

impl Writer {
    pub fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i16(&mut self, v: i16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f32s(&mut self, vs: &[f32]) -> &mut Self {
        vs.iter().for_each(|&v| {
            self.f32(v);
        });
        self
    }
    pub fn f64s(&mut self, vs: &[f64]) -> &mut Self {
        vs.iter().for_each(|&v| {
            self.f64(v);
        });
        self
    }
    pub fn u16s(&mut self, vs: &[u16]) -> &mut Self {
        vs.iter().for_each(|&v| {
            self.u16(v);
        });
        self
    }
    pub fn i32s(&mut self, vs: &[i32]) -> &mut Self {
        vs.iter().for_each(|&v| {
            self.i32(v);
        });
        self
    }
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    /// `text` in a NUL-padded field of `len` bytes, cut at `len` as Python's
    /// `struct.pack("<len>s")` cuts it.
    pub fn text(&mut self, text: &str, len: usize) -> &mut Self {
        let b = &text.as_bytes()[..text.len().min(len)];
        self.0.extend_from_slice(b);
        self.0.resize(self.0.len() + len - b.len(), 0);
        self
    }
    pub fn finish(self) -> Vec<u8> {
        self.0
    }
}
