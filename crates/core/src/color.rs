//! Colour encodings shared by every layer: the sRGB transfer function both ways (exact, and
//! the 4096-entry table the frame's colours are encoded with), linear RGB packed as RGBA8, and
//! the palette that tells patches apart.

use glam::Vec3;
use std::sync::OnceLock;

/// An sRGB-encoded value in [0, 1] to linear light (the sRGB transfer function).
pub fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.040_45 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// sRGB-encoded byte to linear value.
pub fn srgb_to_linear_lut() -> &'static [f32; 256] {
    static LUT: OnceLock<[f32; 256]> = OnceLock::new();
    LUT.get_or_init(|| std::array::from_fn(|i| srgb_to_linear(i as f32 / 255.0)))
}

/// The frame's encoding table: linear values at 4096 steps of [0, 1] to sRGB-encoded bytes.
pub fn srgb_lut() -> &'static [u8; 4096] {
    static LUT: OnceLock<[u8; 4096]> = OnceLock::new();
    LUT.get_or_init(|| {
        let mut l = [0u8; 4096];
        for (i, o) in l.iter_mut().enumerate() {
            let c = i as f32 / 4095.0;
            let s = if c <= 0.003_130_8 {
                12.92 * c
            } else {
                1.055 * c.powf(1.0 / 2.4) - 0.055
            };
            *o = (s * 255.0 + 0.5) as u8;
        }
        l
    })
}

/// A linear value in [0, 1] (clamped; NaN as 0) to its sRGB-encoded byte, through the frame's
/// table.
#[inline]
pub fn srgb_byte(c: f32) -> u8 {
    srgb_lut()[(c.clamp(0.0, 1.0) * 4095.0 + 0.5) as usize]
}

/// Linear RGB in [0, 1] to packed sRGB RGBA8 (alpha 255), little-endian u32.
#[inline]
pub fn pack_srgb(c: Vec3) -> u32 {
    pack_with(srgb_lut(), c)
}

/// [`pack_srgb`] through a table already at hand.
#[inline]
pub fn pack_with(lut: &[u8; 4096], c: Vec3) -> u32 {
    let q = |x: f32| lut[(x.clamp(0.0, 1.0) * 4095.0 + 0.5) as usize] as u32;
    q(c.x) | q(c.y) << 8 | q(c.z) << 16 | 0xff00_0000
}

/// The per-triangle value of the patch mode, which the raster stage carries to its fragments:
/// the patch's hue in [0, 1) (stepped by the golden ratio, so neighbouring patch numbers differ),
/// plus 2 when the triangle lies in another patch's ribbon. A small value, so that interpolating
/// it (it is the same at the three corners) and rounding nothing keeps it exact enough.
pub fn patch_value(patch: u32, ribbon: bool) -> f32 {
    let hue = (patch as f64 * 0.618_033_988_749_895).fract() as f32;
    hue + if ribbon { 2.0 } else { 0.0 }
}

/// The colour (linear RGB) of a [`patch_value`]: the hue at saturation 0.85 and value 0.9,
/// halfway to white for a ribbon triangle (as the paper's Figure 4 draws ribbons).
pub fn patch_value_color(v: f32) -> Vec3 {
    let ribbon = v >= 1.5;
    let h = (if ribbon { v - 2.0 } else { v }).clamp(0.0, 1.0) * 6.0;
    let (s, val) = (0.85, 0.9);
    let i = h.floor().min(5.0);
    let f = h - i;
    let (a, b, c) = (
        val * (1.0 - s),
        val * (1.0 - s * f),
        val * (1.0 - s * (1.0 - f)),
    );
    let rgb = match i as u32 {
        0 => Vec3::new(val, c, a),
        1 => Vec3::new(b, val, a),
        2 => Vec3::new(a, val, c),
        3 => Vec3::new(a, b, val),
        4 => Vec3::new(c, a, val),
        _ => Vec3::new(val, a, b),
    };
    if ribbon {
        (rgb + 1.0) * 0.5
    } else {
        rgb
    }
}
