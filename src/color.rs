//! Colour encodings shared by every layer: the sRGB transfer function both ways (exact, and
//! the 4096-entry table the frame's colours are encoded with) and linear RGB packed as RGBA8.

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
