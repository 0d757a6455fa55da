//! Little-endian field access for fixed-layout structs. Every RflySim struct
//! is little-endian and unpadded (Python `struct` format `<...`).

use byteorder::{ByteOrder, LittleEndian as LE};

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
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    pub fn finish(self) -> Vec<u8> {
        self.0
    }
}
