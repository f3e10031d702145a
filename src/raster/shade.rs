//! Fragment shading modes and the linear-to-sRGB conversion.

use super::RasterSettings;
use crate::geometry::VertexOut;
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

fn srgb_lut() -> &'static [u8; 4096] {
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
    let lut = srgb_lut();
    let q = |x: f32| lut[(x.clamp(0.0, 1.0) * 4095.0 + 0.5) as usize] as u32;
    q(c.x) | q(c.y) << 8 | q(c.z) << 16 | 0xff00_0000
}

/// Colour of one visible fragment with interpolated varyings `v`, view depth `view_z`.
#[inline]
pub fn shade(v: &VertexOut, front: bool, base: [f32; 4], view_z: f32, s: &RasterSettings) -> u32 {
    let mut n = v.normal.normalize_or_zero();
    if !front {
        n = -n;
    }
    let l = -s.light.direction;
    match s.shading {
        ShadingMode::Lit => {
            let base = Vec3::new(base[0], base[1], base[2]);
            let diffuse = n.dot(l).max(0.0);
            let view = (s.eye - v.world).normalize_or_zero();
            let h = (l + view).normalize_or_zero();
            let mut spec = n.dot(h).max(0.0);
            for _ in 0..5 {
                spec *= spec; // ^32
            }
            let c = base * (s.light.ambient + diffuse * s.light.color)
                + s.light.color * (0.25 * spec * (diffuse > 0.0) as u32 as f32);
            pack_srgb(c)
        }
        ShadingMode::Normals => {
            let c = n * 0.5 + 0.5;
            let q = |x: f32| (x.clamp(0.0, 1.0) * 255.0 + 0.5) as u32;
            q(c.x) | q(c.y) << 8 | q(c.z) << 16 | 0xff00_0000
        }
        ShadingMode::Depth => {
            let (near, far) = s.depth_range;
            let t = 1.0 - ((view_z - near) / (far - near)).clamp(0.0, 1.0);
            let q = (t * 255.0 + 0.5) as u32;
            q | q << 8 | q << 16 | 0xff00_0000
        }
        ShadingMode::ShadingRate => {
            let light = 0.45 + 0.55 * n.dot(l).abs();
            pack_srgb(rate_color(v.extra) * light)
        }
    }
}
