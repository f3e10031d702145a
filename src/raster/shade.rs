//! Fragment shading modes and the linear-to-sRGB conversion.

use super::RasterSettings;
use glam::Vec3;
use std::sync::OnceLock;

/// How fragments are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShadingMode {
    /// Blinn-Phong with the scene light and the object's base colour
    #[default]
    Lit,
    /// world-space normal as colour
    Normals,
    /// view depth from near (white) to far (black)
    Depth,
    /// each vertex coloured by how many times it was shaded: green once, red six or more times
    ShadingRate,
}

impl ShadingMode {
    pub const NAMES: [&'static str; 4] = ["lit", "normals", "depth", "rate"];
    pub fn parse(s: &str) -> Option<ShadingMode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "lit" | "lambert" | "phong" => ShadingMode::Lit,
            "normals" | "normal" => ShadingMode::Normals,
            "depth" => ShadingMode::Depth,
            "rate" | "shading-rate" | "shadingrate" => ShadingMode::ShadingRate,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            ShadingMode::Lit => "lit",
            ShadingMode::Normals => "normals",
            ShadingMode::Depth => "depth",
            ShadingMode::ShadingRate => "rate",
        }
    }
    pub fn next(self) -> ShadingMode {
        match self {
            ShadingMode::Lit => ShadingMode::Normals,
            ShadingMode::Normals => ShadingMode::Depth,
            ShadingMode::Depth => ShadingMode::ShadingRate,
            ShadingMode::ShadingRate => ShadingMode::Lit,
        }
    }
}

/// The colour ramp of the shading-rate mode: 1 invocation green, through yellow, to red at 6+.
pub fn rate_color(invocations: f32) -> Vec3 {
    let t = ((invocations - 1.0) / 5.0).clamp(0.0, 1.0);
    if t < 0.5 {
        Vec3::new(2.0 * t, 1.0, 0.0)
    } else {
        Vec3::new(1.0, 2.0 - 2.0 * t, 0.0)
    }
}

pub(super) fn srgb_lut() -> &'static [u8; 4096] {
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

/// Linear RGB in [0, 1] to packed sRGB RGBA8 (alpha 255), little-endian u32.
#[inline]
pub fn pack_srgb(c: Vec3) -> u32 {
    pack_with(srgb_lut(), c)
}

#[inline]
pub(super) fn pack_with(lut: &[u8; 4096], c: Vec3) -> u32 {
    let q = |x: f32| lut[(x.clamp(0.0, 1.0) * 4095.0 + 0.5) as usize] as u32;
    q(c.x) | q(c.y) << 8 | q(c.z) << 16 | 0xff00_0000
}

/// 1 / sqrt(x) for x > 0: the hardware estimate refined by one Newton step (relative error
/// about 1e-7, far below what an 8-bit colour shows), instead of a square root and a division.
#[inline]
fn rsqrt(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvtss_f32, _mm_rsqrt_ss, _mm_set_ss};
        // SAFETY: SSE is part of the x86-64 baseline, so these instructions always exist.
        let r = unsafe { _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x))) };
        r * (1.5 - 0.5 * x * r * r)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1.0 / x.sqrt()
    }
}

/// `v` scaled to unit length; zero stays (nearly) zero. Branch-free.
#[inline]
fn unit(v: Vec3) -> Vec3 {
    v * rsqrt(v.length_squared().max(1e-30))
}

/// The interpolated varyings of one fragment.
#[derive(Debug, Clone, Copy)]
pub struct Fragment {
    pub world: Vec3,
    pub normal: Vec3,
    pub extra: f32,
    /// view depth (clip w)
    pub view_z: f32,
}

/// The fragment stage of one frame: the shading mode and everything it needs that does not change
/// from fragment to fragment.
pub struct FragmentShader<'a> {
    s: &'a RasterSettings,
    lut: &'static [u8; 4096],
    /// unit vector towards the light
    to_light: Vec3,
    ambient: Vec3,
}

impl<'a> FragmentShader<'a> {
    pub fn new(s: &'a RasterSettings) -> Self {
        FragmentShader {
            s,
            lut: srgb_lut(),
            to_light: (-s.light.direction).normalize_or_zero(),
            ambient: Vec3::splat(s.light.ambient),
        }
    }

    /// Colour of one visible fragment of a triangle with base colour `base` (linear RGBA).
    #[inline]
    pub fn shade(&self, v: &Fragment, front: bool, base: [f32; 4]) -> u32 {
        let s = self.s;
        let n = unit(if front { v.normal } else { -v.normal });
        let l = self.to_light;
        match s.shading {
            ShadingMode::Lit => {
                let base = Vec3::new(base[0], base[1], base[2]);
                let diffuse = n.dot(l).max(0.0);
                let view = unit(s.eye - v.world);
                let h = unit(l + view);
                let mut spec = n.dot(h).max(0.0);
                for _ in 0..5 {
                    spec *= spec; // ^32
                }
                let spec = if diffuse > 0.0 { 0.25 * spec } else { 0.0 };
                let c = base * (self.ambient + diffuse * s.light.color) + s.light.color * spec;
                pack_with(self.lut, c)
            }
            ShadingMode::Normals => {
                let c = n * 0.5 + 0.5;
                let q = |x: f32| (x.clamp(0.0, 1.0) * 255.0 + 0.5) as u32;
                q(c.x) | q(c.y) << 8 | q(c.z) << 16 | 0xff00_0000
            }
            ShadingMode::Depth => {
                let (near, far) = s.depth_range;
                let t = 1.0 - ((v.view_z - near) / (far - near)).clamp(0.0, 1.0);
                let q = (t * 255.0 + 0.5) as u32;
                q | q << 8 | q << 16 | 0xff00_0000
            }
            ShadingMode::ShadingRate => {
                let light = 0.45 + 0.55 * n.dot(l).abs();
                pack_with(self.lut, rate_color(v.extra) * light)
            }
        }
    }
}
