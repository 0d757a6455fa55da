//! RflySim's terrain files: for each map, `<map>.png` (a grid of 16-bit
//! heights) and `<map>.txt` (its calibration), which RflySim3D's
//! `RflyScanTerrainH` writes and CopterSim reads from
//! `C:\PX4PSP\CopterSim\external\map`. Read here exactly as RflySim's Python
//! SDK reads them (`UE4CtrlAPI.py`, class `UEMapServe`: `LoadPngData` and
//! `getTerrainAltData`), and written back for the emulator.
//!
//! The calibration is the first line of the text: 9 comma-separated numbers
//! in centimetres, the map's upper-right corner x, y, z, its lower-left
//! corner x, y, z and a third point x, y, z (12 with a GPS origin after
//! them: latitude, longitude, altitude). x and y are RflySim's NED north and
//! east; z is up. Columns of the image run along x, rows along y, row 0 and
//! column 0 at the lower-left corner. A pixel's value less 32768 is a height
//! in steps of the map's own z scale, which the SDK derives from the corner
//! and third points' heights. The SDK's result (its `binmap`) is NED z in
//! metres: minus the height.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use image_codec::{decode_png, png_size};

use crate::sensor::Encoding;

/// The most pixels a height map may have (4096 × 4096: a 4 km square at
/// 1 m), 32 MiB of heights.
pub const MAX_PIXELS: usize = 4096 * 4096;
/// The most bytes read of a PNG file (a 16-bit PNG is never much larger
/// than its pixels).
pub const MAX_PNG_BYTES: u64 = 2 * MAX_PIXELS as u64 + (1 << 20);
/// The most bytes of a calibration file read: its first line is short.
pub const MAX_TXT_BYTES: u64 = 4096;
/// The PNG value of height 0 before calibration.
pub const RAW_ZERO: i32 = 32_768;
/// A third point's raw height must differ from a corner's by more than this
/// for the SDK to derive the z scale from it; otherwise the scale is 1.
const MIN_RAW_SPAN: f64 = 10.0;

/// Why a map's files cannot be read.
#[derive(Debug, Clone, PartialEq)]
pub enum TerrainError {
    /// A file is missing or unreadable.
    Io { path: PathBuf, detail: String },
    /// The calibration text is not what the SDK reads.
    Calibration(String),
    /// The PNG is not a 16-bit grayscale image of a size the bridge takes.
    Png(String),
    /// The map's name is not a file name (see [`check_map_name`]).
    MapName(String),
}

impl fmt::Display for TerrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TerrainError::Io { path, detail } => write!(f, "{}: {detail}", path.display()),
            TerrainError::Calibration(why) => write!(f, "calibration: {why}"),
            TerrainError::Png(why) => write!(f, "height PNG: {why}"),
            TerrainError::MapName(name) => write!(
                f,
                "map name {name:?} is not a file name (no `/`, `\\`, `..` or NUL): maps are read from their folder only"
            ),
        }
    }
}

impl std::error::Error for TerrainError {}

/// A map's calibration, in centimetres (x north, y east, z up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub upper_right: [f64; 3],
    pub lower_left: [f64; 3],
    pub third: [f64; 3],
    /// Latitude, longitude, altitude of the map's origin, when given.
    pub gps: Option<[f64; 3]>,
}

impl Calibration {
    /// The first line of a calibration file, as the SDK reads it: split at
    /// commas into 9 or 12 numbers. Any number that is not finite is refused.
    pub fn parse(text: &str) -> Result<Self, TerrainError> {
        let bad = |why: String| TerrainError::Calibration(why);
        let line = text.lines().next().unwrap_or("");
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != 9 && fields.len() != 12 {
            return Err(bad(format!(
                "{} comma-separated fields on the first line, expected 9 (or 12 with a GPS origin)",
                fields.len()
            )));
        }
        let mut v = [0.0f64; 12];
        for (i, f) in fields.iter().enumerate() {
            let x: f64 = f
                .trim()
                .parse()
                .map_err(|_| bad(format!("field {} ({f:?}) is not a number", i + 1)))?;
            if !x.is_finite() {
                return Err(bad(format!("field {} ({f:?}) is not finite", i + 1)));
            }
            v[i] = x;
        }
        let c = Calibration {
            upper_right: [v[0], v[1], v[2]],
            lower_left: [v[3], v[4], v[5]],
            third: [v[6], v[7], v[8]],
            gps: (fields.len() == 12).then_some([v[9], v[10], v[11]]),
        };
        if c.upper_right[0] <= c.lower_left[0] || c.upper_right[1] <= c.lower_left[1] {
            return Err(bad(format!(
                "the upper-right corner ({}, {}) is not above and right of the lower-left one ({}, {})",
                c.upper_right[0], c.upper_right[1], c.lower_left[0], c.lower_left[1]
            )));
        }
        Ok(c)
    }

    /// The line the parser reads.
    pub fn to_text(&self) -> String {
        let mut v: Vec<f64> = [self.upper_right, self.lower_left, self.third].concat();
        if let Some(g) = self.gps {
            v.extend(g);
        }
        v.iter().map(f64::to_string).collect::<Vec<_>>().join(",")
    }
}

/// A map's heights, calibrated: what the SDK's `UEMapServe` holds after `LoadPngData`.
#[derive(Debug, Clone, PartialEq)]
pub struct HeightMap {
    rows: usize,
    columns: usize,
    /// The PNG's values less [`RAW_ZERO`], row by row.
    raw: Vec<i32>,
    /// cm; the SDK's `PosOffsetX`, `PosScaleX` (per column), and likewise for y (per row).
    pub pos_offset_x: f64,
    pub pos_scale_x: f64,
    pub pos_offset_y: f64,
    pub pos_scale_y: f64,
    /// cm: the lower-left corner's height, and cm per raw step.
    pub pos_offset_z: f64,
    pub pos_scale_z: f64,
    /// The raw value of pixel (0, 0), the SDK's `intPosInitZ`.
    height_init: f64,
    pub calibration: Calibration,
}

impl HeightMap {
    /// The calibrated map of `raw` (PNG values, `rows` × `columns`, row by
    /// row), as `LoadPngData` computes it.
    pub fn new(raw: &[u16], rows: usize, columns: usize, calibration: Calibration) -> Result<Self, TerrainError> {
        let bad = |why: String| TerrainError::Png(why);
        if rows < 2 || columns < 2 {
            return Err(bad(format!("{columns}×{rows} pixels: a map needs at least 2 × 2")));
        }
        if rows.saturating_mul(columns) > MAX_PIXELS {
            return Err(bad(format!("{columns}×{rows} pixels: at most {MAX_PIXELS}")));
        }
        if raw.len() != rows * columns {
            return Err(bad(format!("{} values for {columns}×{rows} pixels", raw.len())));
        }
        let raw: Vec<i32> = raw.iter().map(|&v| i32::from(v) - RAW_ZERO).collect();
        let c = calibration;
        let pos_scale_x = (c.upper_right[0] - c.lower_left[0]) / (columns - 1) as f64;
        let pos_scale_y = (c.upper_right[1] - c.lower_left[1]) / (rows - 1) as f64;
        let (pos_offset_x, pos_offset_y) = (c.lower_left[0], c.lower_left[1]);
        // Python's int(): towards zero. Outside the grid the SDK would fail
        // (or wrap around): refused.
        let third_col = ((c.third[0] - pos_offset_x) / pos_scale_x).trunc();
        let third_row = ((c.third[1] - pos_offset_y) / pos_scale_y).trunc();
        if !(0.0..columns as f64).contains(&third_col) || !(0.0..rows as f64).contains(&third_row) {
            return Err(TerrainError::Calibration(format!(
                "the third point ({}, {}) lies outside the map",
                c.third[0], c.third[1]
            )));
        }
        let at = |row: usize, col: usize| f64::from(raw[row * columns + col]);
        let height_init = at(0, 0);
        let height_first = at(rows - 1, columns - 1);
        let height_third = at(third_row as usize, third_col as usize);
        let pos_scale_z = if (height_third - height_first).abs() <= (height_third - height_init).abs() {
            if (height_init - height_third).abs() > MIN_RAW_SPAN {
                (c.lower_left[2] - c.third[2]) / (height_init - height_third)
            } else {
                1.0
            }
        } else if (height_third - height_first).abs() > MIN_RAW_SPAN {
            (c.upper_right[2] - c.third[2]) / (height_first - height_third)
        } else {
            1.0
        };
        // Numbers each finite may still overflow together: every height must be finite.
        let largest = c.lower_left[2].abs() + 65_536.0 * pos_scale_z.abs();
        if !(pos_scale_x.is_finite() && pos_scale_y.is_finite() && largest.is_finite()) {
            return Err(TerrainError::Calibration(
                "its numbers overflow the scales or the heights".into(),
            ));
        }
        Ok(Self {
            rows,
            columns,
            raw,
            pos_offset_x,
            pos_scale_x,
            pos_offset_y,
            pos_scale_y,
            pos_offset_z: c.lower_left[2],
            pos_scale_z,
            height_init,
            calibration,
        })
    }

    /// A map from its two files' contents, the PNG bounded by [`MAX_PIXELS`].
    pub fn from_files(png: &[u8], calibration_text: &str) -> Result<Self, TerrainError> {
        let calibration = Calibration::parse(calibration_text)?;
        let (raw, rows, columns) = decode_heights(png)?;
        Self::new(&raw, rows, columns, calibration)
    }

    /// Reads `<dir>/<map>.png` and `<dir>/<map>.txt`, each read only up to its bound.
    pub fn load(dir: &Path, map: &str) -> Result<Self, TerrainError> {
        let map = check_map_name(map)?;
        let png = read_bounded(&dir.join(format!("{map}.png")), MAX_PNG_BYTES)?;
        let txt_path = dir.join(format!("{map}.txt"));
        let txt = read_bounded(&txt_path, MAX_TXT_BYTES)?;
        let txt = String::from_utf8(txt).map_err(|_| TerrainError::Calibration("not UTF-8 text".into()))?;
        Self::from_files(&png, &txt)
    }

    /// What a map's files say of it without decoding its heights: its
    /// calibration, and its columns and rows from the PNG's header.
    pub fn extent(dir: &Path, map: &str) -> Result<(Calibration, usize, usize), TerrainError> {
        let map = check_map_name(map)?;
        let txt = read_bounded(&dir.join(format!("{map}.txt")), MAX_TXT_BYTES)?;
        let calibration = Calibration::parse(&String::from_utf8_lossy(&txt))?;
        let png_path = dir.join(format!("{map}.png"));
        let mut header = Vec::new();
        std::fs::File::open(&png_path)
            .and_then(|f| f.take(33).read_to_end(&mut header))
            .map_err(|e| TerrainError::Io {
                path: png_path.clone(),
                detail: e.to_string(),
            })?;
        let (w, h) = png_size(&header).map_err(|e| TerrainError::Png(e.to_string()))?;
        Ok((calibration, w as usize, h as usize))
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The SDK's `binmap[row][col]`: NED z of the ground at that grid point, metres.
    pub fn ned_z(&self, row: usize, col: usize) -> f64 {
        let raw = f64::from(self.raw[row * self.columns + col]);
        -(self.pos_offset_z + (raw - self.height_init) * self.pos_scale_z) / 100.0
    }

    /// Where grid point (row, col) is: NED x (north), y (east), metres.
    pub fn grid_point(&self, row: usize, col: usize) -> (f64, f64) {
        (
            (self.pos_offset_x + col as f64 * self.pos_scale_x) / 100.0,
            (self.pos_offset_y + row as f64 * self.pos_scale_y) / 100.0,
        )
    }

    /// The SDK's `getTerrainAltData(x, y)`: NED z of the ground under NED
    /// (x, y) metres, bilinear between the four grid points around it; off
    /// the map, that of its nearest edge (the SDK's clamping).
    pub fn terrain_alt(&self, x: f64, y: f64) -> f64 {
        let int_col = (x * 100.0 - self.pos_offset_x) / self.pos_scale_x + 1.0;
        let int_row = (y * 100.0 - self.pos_offset_y) / self.pos_scale_y + 1.0;
        let (col, a) = clamp_index(int_col, self.columns);
        let (row, b) = clamp_index(int_row, self.rows);
        // 1-based, as the SDK's; the next index is the same one when clamped.
        let (col1, row1) = (
            if a == 0.0 { col } else { col + 1 },
            if b == 0.0 { row } else { row + 1 },
        );
        let z = |r: usize, c: usize| self.ned_z(r - 1, c - 1);
        z(row, col) * (1.0 - b) * (1.0 - a)
            + z(row1, col) * b * (1.0 - a)
            + z(row, col1) * (1.0 - b) * a
            + z(row1, col1) * b * a
    }

    /// The ground's height (ENU z, metres) under ENU (east, north).
    pub fn height_enu(&self, east: f64, north: f64) -> f64 {
        -self.terrain_alt(north, east)
    }

    /// Whether NED (x, y) metres lies on the map (its edges included).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        let c = &self.calibration;
        let (x, y) = (x * 100.0, y * 100.0);
        (c.lower_left[0]..=c.upper_right[0]).contains(&x) && (c.lower_left[1]..=c.upper_right[1]).contains(&y)
    }
}

/// The SDK's index and fraction for a 1-based position `at` on `n` grid
/// points: the integer part (towards zero, as Python's `int()`) and the
/// fraction; before the first point or at or past the last, the edge and 0.
fn clamp_index(at: f64, n: usize) -> (usize, f64) {
    let whole = at.trunc();
    if whole.is_nan() || whole < 1.0 {
        (1, 0.0)
    } else if whole >= n as f64 {
        (n, 0.0)
    } else {
        (whole as usize, at - whole)
    }
}

/// The values of a 16-bit grayscale PNG, row by row, and its rows and
/// columns; anything else (another depth or colour type, a size beyond
/// [`MAX_PIXELS`]) refused before decoding.
pub fn decode_heights(png: &[u8]) -> Result<(Vec<u16>, usize, usize), TerrainError> {
    let bad = |why: String| TerrainError::Png(why);
    let (w, h) = png_size(png).map_err(|e| bad(e.to_string()))?;
    let (w, h) = (w as usize, h as usize);
    if w < 2 || h < 2 || w.saturating_mul(h) > MAX_PIXELS {
        return Err(bad(format!(
            "{w}×{h} pixels: at least 2 × 2, at most {MAX_PIXELS} in all"
        )));
    }
    // IHDR: bit depth at 24, colour type at 25 (0: grayscale).
    let (Some(&depth), Some(&colour)) = (png.get(24), png.get(25)) else {
        return Err(bad("the header ends before its bit depth".into()));
    };
    if depth != 16 || colour != 0 {
        return Err(bad(format!(
            "bit depth {depth}, colour type {colour}: RflySim's height maps are 16-bit grayscale"
        )));
    }
    let image = decode_png(png, Encoding::Mono16, w * h * 2).map_err(|e| bad(e.to_string()))?;
    if (image.width as usize, image.height as usize) != (w, h) {
        return Err(bad("the decoded size differs from the header's".into()));
    }
    let raw = image
        .data
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect();
    Ok((raw, h, w))
}

/// `map` if it is a file name, so that `<dir>/<map>.png` and `.txt` stay in
/// `dir`: not empty, no `/` or `\` (a path on Linux or Windows), no `..`, no NUL.
pub fn check_map_name(map: &str) -> Result<&str, TerrainError> {
    let path_like = map.is_empty() || map.contains(['/', '\\', '\0']) || map.contains("..");
    if path_like {
        return Err(TerrainError::MapName(map.to_string()));
    }
    Ok(map)
}

fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, TerrainError> {
    let io = |detail: String| TerrainError::Io {
        path: path.to_path_buf(),
        detail,
    };
    let f = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
    let mut data = Vec::new();
    f.take(max + 1).read_to_end(&mut data).map_err(|e| io(e.to_string()))?;
    if data.len() as u64 > max {
        return Err(io(format!("larger than {max} bytes")));
    }
    Ok(data)
}

/// The two files of a map, for the emulator and the tests.
pub mod encode {
    use super::{Calibration, TerrainError};
    use image_codec::encode::png;

    use crate::sensor::Encoding;

    /// `raw` (`rows` × `columns`, row by row) as a 16-bit grayscale PNG.
    pub fn heights_png(raw: &[u16], rows: usize, columns: usize) -> Result<Vec<u8>, TerrainError> {
        if raw.len() != rows * columns {
            return Err(TerrainError::Png(format!("{} values for {columns}×{rows}", raw.len())));
        }
        let bytes: Vec<u8> = raw.iter().flat_map(|v| v.to_le_bytes()).collect();
        png(&bytes, columns as u32, rows as u32, Encoding::Mono16).map_err(|e| TerrainError::Png(e.to_string()))
    }

    /// The calibration file's text.
    pub fn calibration_txt(c: &Calibration) -> String {
        format!("{}\n", c.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3 columns (x 0, 100, 200 cm) × 2 rows (y 0, 50 cm): raw heights.
    fn small() -> HeightMap {
        let raw = [32768, 32868, 32968, 32778, 32878, 33068];
        let c = Calibration::parse("200,50,300,0,0,0,200,0,200").unwrap();
        HeightMap::new(&raw, 2, 3, c).unwrap()
    }

    #[test]
    fn the_calibration_is_the_first_line_s_nine_or_twelve_numbers() {
        let c = Calibration::parse(" 100000, 100000,500,-100000,-100000,0,0,0,2000\r\nignored").unwrap();
        assert_eq!(c.upper_right, [100000.0, 100000.0, 500.0]);
        assert_eq!(c.lower_left, [-100000.0, -100000.0, 0.0]);
        assert_eq!((c.third, c.gps), ([0.0, 0.0, 2000.0], None));
        let g = Calibration::parse("1,1,0,0,0,0,0,0,0,40.1,116.3,50").unwrap();
        assert_eq!(g.gps, Some([40.1, 116.3, 50.0]));
        assert_eq!(Calibration::parse(&g.to_text()).unwrap(), g);
        for bad in [
            "",
            "1,2,3",
            "1,1,0,0,0,0,0,0,0,",
            "1,1,0,0,0,0,0,0,x",
            "1,1,0,0,0,0,0,0,NaN",
            "1,1,0,0,0,0,0,0,inf",
            "0,1,0,0,0,0,0,0,0",
            "1,1,0,0,0,0,0,0,0,1",
        ] {
            assert!(
                matches!(Calibration::parse(bad), Err(TerrainError::Calibration(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn scales_offsets_and_the_binmap_follow_the_sdk() {
        let m = small();
        assert_eq!((m.pos_scale_x, m.pos_scale_y), (100.0, 50.0));
        assert_eq!((m.pos_offset_x, m.pos_offset_y), (0.0, 0.0));
        // The third point (200, 0) is pixel (0, 2): raw 200, nearer (1, 2)'s
        // 300 than (0, 0)'s 0 → the scale from the lower-left corner: (0 − 200) / (0 − 200) = 1.
        assert_eq!(m.pos_scale_z, 1.0);
        // binmap = −(offset_z + (raw − raw(0,0)) × scale_z) / 100: NED z.
        assert_eq!(m.ned_z(0, 0), -0.0);
        assert_eq!(m.ned_z(1, 2), -3.0);
        assert_eq!(m.grid_point(1, 2), (2.0, 0.5));
        // A z scale of 2 cm a step: the lower-left corner 10 cm up, the third 1010.
        let raw = [32768, 32768, 33268, 32768];
        let c = Calibration::parse("100,100,10,0,0,10,0,100,1010").unwrap();
        let m = HeightMap::new(&raw, 2, 2, c).unwrap();
        assert_eq!(m.pos_scale_z, 2.0);
        assert_eq!(m.ned_z(1, 0), -(10.0 + 500.0 * 2.0) / 100.0);
        assert_eq!(m.height_enu(0.0, 0.0), 0.1);
        // Raw heights within 10 steps: the scale is 1.
        let flat = HeightMap::new(&[32768, 32770, 32772, 32774], 2, 2, c).unwrap();
        assert_eq!(flat.pos_scale_z, 1.0);
    }

    #[test]
    fn heights_are_bilinear_inside_and_clamped_at_the_edges() {
        let m = small();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // On grid points.
        assert!(close(m.terrain_alt(1.0, 0.0), -1.0));
        assert!(close(m.terrain_alt(2.0, 0.5), -3.0));
        // Halfway between columns 0 and 1 of row 0: −0.5; and up the rows too.
        assert!(close(m.terrain_alt(0.5, 0.0), -0.5));
        // (0.5, 0.25): the four corners 0, 1, 0.1, 1.1 → 0.55.
        assert!(close(m.terrain_alt(0.5, 0.25), -0.55));
        // Off the map: the edge's heights, the fraction along the edge kept.
        assert!(close(m.terrain_alt(-5.0, 0.0), 0.0));
        assert!(close(m.terrain_alt(9.0, 9.0), -3.0));
        assert!(close(m.terrain_alt(1.5, -3.0), -1.5));
        assert!(close(m.terrain_alt(f64::INFINITY, 0.0), -2.0));
        assert!(m.terrain_alt(f64::NAN, f64::NAN).is_finite());
        assert!(m.contains(2.0, 0.5) && m.contains(0.0, 0.0) && !m.contains(2.01, 0.0) && !m.contains(0.0, -0.01));
        // ENU: east is NED y, north NED x; up is minus NED z.
        assert!(close(m.height_enu(0.25, 0.5), 0.55));
    }

    #[test]
    fn a_third_point_off_the_map_or_a_grid_too_small_is_refused() {
        let c = Calibration::parse("200,50,300,0,0,0,500,0,200").unwrap();
        assert!(matches!(
            HeightMap::new(&[32768; 6], 2, 3, c),
            Err(TerrainError::Calibration(_))
        ));
        let c = Calibration::parse("200,50,300,0,0,0,0,0,0").unwrap();
        assert!(HeightMap::new(&[32768; 3], 1, 3, c).is_err());
        let overflow = Calibration::parse("1e308,50,0,-1e308,0,0,0,0,0").unwrap();
        assert!(HeightMap::new(&[32768; 6], 2, 3, overflow).is_err());
        let overflow = Calibration::parse("200,50,0,0,0,1e308,0,0,-1e308").unwrap();
        assert!(HeightMap::new(&[32768, 32768, 32768, 40000, 40000, 40000], 2, 3, overflow).is_err());
        assert!(HeightMap::new(&[32768; 5], 2, 3, c).is_err());
    }

    #[test]
    fn the_files_round_trip_and_other_pngs_are_refused() {
        let raw: Vec<u16> = (0..12).map(|i| 32768 + i * 37).collect();
        let c = Calibration::parse("300,200,407,0,0,0,300,200,407").unwrap();
        let png = encode::heights_png(&raw, 3, 4).unwrap();
        let m = HeightMap::from_files(&png, &encode::calibration_txt(&c)).unwrap();
        assert_eq!((m.rows(), m.columns()), (3, 4));
        assert_eq!(m, HeightMap::new(&raw, 3, 4, c).unwrap());
        let eight_bit = image_codec::encode::png(&[0u8; 12], 4, 3, Encoding::Mono8).unwrap();
        assert!(matches!(decode_heights(&eight_bit), Err(TerrainError::Png(_))));
        let rgb = image_codec::encode::png(&[0u8; 36], 4, 3, Encoding::Bgr8).unwrap();
        assert!(decode_heights(&rgb).is_err());
        // A header claiming more pixels than the bound: refused before decoding.
        let mut huge = png.clone();
        huge[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        huge[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        assert!(decode_heights(&huge).unwrap_err().to_string().contains("at most"));
        assert!(decode_heights(&png[..40]).is_err());
        assert!(decode_heights(&png[..25]).is_err(), "cut inside the header");
    }

    #[test]
    fn files_are_read_from_a_folder_within_their_bounds() {
        let dir = std::env::temp_dir().join(format!("rflysim_terrain_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let raw = [32768u16, 32868, 32968, 33068];
        let c = Calibration::parse("100,100,300,0,0,0,100,100,300").unwrap();
        std::fs::write(dir.join("Hill.png"), encode::heights_png(&raw, 2, 2).unwrap()).unwrap();
        std::fs::write(dir.join("Hill.txt"), encode::calibration_txt(&c)).unwrap();
        let m = HeightMap::load(&dir, "Hill").unwrap();
        assert_eq!(m.height_enu(1.0, 1.0), 3.0);
        assert_eq!(HeightMap::extent(&dir, "Hill").unwrap(), (c, 2, 2));
        assert!(matches!(HeightMap::load(&dir, "Nowhere"), Err(TerrainError::Io { .. })));
        std::fs::write(dir.join("Long.png"), encode::heights_png(&raw, 2, 2).unwrap()).unwrap();
        std::fs::write(dir.join("Long.txt"), "1".repeat(MAX_TXT_BYTES as usize + 1)).unwrap();
        assert!(HeightMap::load(&dir, "Long")
            .unwrap_err()
            .to_string()
            .contains("larger than"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_map_name_that_is_a_path_is_refused_before_any_file_is_read() {
        let base = std::env::temp_dir().join(format!("rflysim_map_escape_{}", std::process::id()));
        let (maps, outside) = (base.join("maps"), base.join("outside"));
        std::fs::create_dir_all(&maps).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let c = Calibration::parse("100,100,300,0,0,0,100,100,300").unwrap();
        std::fs::write(
            outside.join("Secret.png"),
            encode::heights_png(&[32768; 4], 2, 2).unwrap(),
        )
        .unwrap();
        std::fs::write(outside.join("Secret.txt"), encode::calibration_txt(&c)).unwrap();
        for name in ["../outside/Secret", "..", "a/b", "a\\b", "x\0y", "", "Sec..ret"] {
            let refused = HeightMap::load(&maps, name).unwrap_err();
            assert_eq!(refused, TerrainError::MapName(name.into()), "{name:?}");
            assert!(refused.to_string().contains("not a file name"), "{refused}");
            assert_eq!(HeightMap::extent(&maps, name).unwrap_err(), refused);
        }
        assert_eq!(check_map_name("Grasslands_2.v1"), Ok("Grasslands_2.v1"));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
