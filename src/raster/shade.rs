//! Fragment shading modes and the packing of lanes of colours.

use super::RasterSettings;
use glam::Vec3;
use rxpipe_core::color::{pack_with, patch_value_color, srgb_lut};
use rxpipe_core::material::lanes::{LANES, V3};

/// How fragments are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShadingMode {
    /// glTF materials (metallic-roughness, textures) under the scene's lights; Blinn-Phong
    /// with the object's colour for meshes without a material
    #[default]
    Lit,
    /// world-space normal as colour
    Normals,
    /// view depth from near (white) to far (black)
    Depth,
    /// each vertex coloured by how many times it was shaded: green once, red six or more times
    ShadingRate,
    /// each RXMesh patch its own colour, faces in another patch's ribbon paler (the paper's
    /// Figure 5c; the patches of the patch order, or made for the mode)
    Patches,
}

impl rxpipe_core::named::Named for ShadingMode {
    const NAMES: &'static [&'static [&'static str]] = &[
        &["lit", "lambert", "phong"],
        &["normals", "normal"],
        &["depth"],
        &["rate", "shading-rate", "shadingrate"],
        &["patches", "patch"],
    ];
    fn from_name(name: &str) -> Option<ShadingMode> {
        ShadingMode::parse(name)
    }
}

impl ShadingMode {
    pub const NAMES: [&'static str; 5] = ["lit", "normals", "depth", "rate", "patches"];
    pub fn parse(s: &str) -> Option<ShadingMode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "lit" | "lambert" | "phong" => ShadingMode::Lit,
            "normals" | "normal" => ShadingMode::Normals,
            "depth" => ShadingMode::Depth,
            "rate" | "shading-rate" | "shadingrate" => ShadingMode::ShadingRate,
            "patches" | "patch" => ShadingMode::Patches,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            ShadingMode::Lit => "lit",
            ShadingMode::Normals => "normals",
            ShadingMode::Depth => "depth",
            ShadingMode::ShadingRate => "rate",
            ShadingMode::Patches => "patches",
        }
    }
    pub fn next(self) -> ShadingMode {
        match self {
            ShadingMode::Lit => ShadingMode::Normals,
            ShadingMode::Normals => ShadingMode::Depth,
            ShadingMode::Depth => ShadingMode::ShadingRate,
            ShadingMode::ShadingRate => ShadingMode::Patches,
            ShadingMode::Patches => ShadingMode::Lit,
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

/// Re-shades a depth-mode image over the depth range it shows: the nearest visible point white,
/// the farthest black (the mode's shading during rasterisation spans the camera's near to far
/// planes, where a scene often fills a sliver). `depth` is the frame's NDC depth (1 where nothing
/// was drawn, those pixels keep their colour); `near` and `far` are the camera's.
pub fn normalize_depth(color: &mut [u8], depth: &[f32], near: f32, far: f32) {
    // NDC depth z of a perspective with z in [0, 1] is at view distance near*far / (far - z (far - near))
    let view = |z: f32| near * far / (far - z * (far - near));
    let (lo, hi) =
        depth
            .iter()
            .filter(|&&z| z < 1.0)
            .fold((f32::INFINITY, 0f32), |(lo, hi), &z| {
                let d = view(z);
                (lo.min(d), hi.max(d))
            });
    if lo > hi {
        return;
    }
    let span = (hi - lo).max(hi * 1e-6);
    for (px, &z) in color.chunks_exact_mut(4).zip(depth) {
        if z < 1.0 {
            let t = 1.0 - ((view(z) - lo) / span).clamp(0.0, 1.0);
            let q = (t * 255.0 + 0.5) as u8;
            px.copy_from_slice(&[q, q, q, 255]);
        }
    }
}

/// [`rxpipe_core::color::pack_with`] of each lane: the table's places worked out in lanes, the same operations as
/// one by one (a NaN takes place 0, as the saturating cast gives it).
#[inline(always)]
pub(super) fn pack_lanes(lut: &[u8; 4096], c: &V3) -> [u32; LANES] {
    // (lane loops over arrays, which stay inline in the fragment stage's wide build, where
    // `array::from_fn` was left out of line in the baseline instructions)
    let place = |v: &[f32; LANES]| {
        let mut k = [0u32; LANES];
        for (k, &v) in k.iter_mut().zip(v) {
            // `clamp`, with NaN to 0 (where the saturating cast takes it): the place then
            // lies in [0.5, 4095.5], and the cast needs no saturation (which kept the
            // compiler from vectorising it)
            let c = if v > 0.0 { v } else { 0.0 };
            let c = if c < 1.0 { c } else { 1.0 };
            // SAFETY: c * 4095 + 0.5 is finite and within i32 (above)
            *k = unsafe { (c * 4095.0 + 0.5).to_int_unchecked::<i32>() } as u32;
        }
        k
    };
    let (x, y, z) = (place(&c.x), place(&c.y), place(&c.z));
    // (every place lies in 0..4096: the masks keep the loads unchecked)
    let q = |k: u32| lut[k as usize & 4095] as u32;
    let mut out = [0u32; LANES];
    for i in 0..LANES {
        out[i] = q(x[i]) | q(y[i]) << 8 | q(z[i]) << 16 | 0xff00_0000;
    }
    out
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

/// [`rsqrt`] of four lanes: the same hardware estimate (`rsqrtps` and `rsqrtss` share it) and
/// the same Newton step, so every lane equals the scalar result bit for bit.
#[inline]
fn rsqrt4(x: [f32; 4]) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_rsqrt_ps, _mm_storeu_ps};
        let mut r = [0f32; 4];
        // SAFETY: SSE is part of the x86-64 baseline; the loads and stores are of 4-float arrays.
        unsafe { _mm_storeu_ps(r.as_mut_ptr(), _mm_rsqrt_ps(_mm_loadu_ps(x.as_ptr()))) };
        std::array::from_fn(|i| r[i] * (1.5 - 0.5 * x[i] * r[i] * r[i]))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        x.map(rsqrt)
    }
}

/// The sRGB table's index of four linear values, as [`pack_with`] computes it (clamped to [0, 1],
/// a NaN to 0, times 4095, rounded half up).
#[inline]
fn lut_index4(x: [f32; 4]) -> [usize; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut k = [0i32; 4];
        // SAFETY: SSE2 is part of the x86-64 baseline; the loads and stores are of 4-lane arrays.
        // maxps returns its second operand (0) for a NaN lane, as the scalar cast maps NaN to 0;
        // the clamped value is in [0.5, 4095.5], so truncation is exact and in range.
        unsafe {
            let v = _mm_min_ps(
                _mm_max_ps(_mm_loadu_ps(x.as_ptr()), _mm_setzero_ps()),
                _mm_set1_ps(1.0),
            );
            let v = _mm_add_ps(_mm_mul_ps(v, _mm_set1_ps(4095.0)), _mm_set1_ps(0.5));
            _mm_storeu_si128(k.as_mut_ptr().cast(), _mm_cvttps_epi32(v));
        }
        k.map(|k| k as usize)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        x.map(|x| (x.clamp(0.0, 1.0) * 4095.0 + 0.5) as usize)
    }
}

/// Four 3-vectors, one per lane, component-major: `v[c][lane]`.
pub type Vec3x4 = [[f32; 4]; 3];

/// [`unit`] of four lanes.
#[inline]
fn unit4(v: Vec3x4) -> Vec3x4 {
    let r = rsqrt4(std::array::from_fn(|i| {
        (v[0][i] * v[0][i] + v[1][i] * v[1][i] + v[2][i] * v[2][i]).max(1e-30)
    }));
    v.map(|c| std::array::from_fn(|i| c[i] * r[i]))
}

#[inline]
fn dot4(a: &Vec3x4, b: [f32; 3]) -> [f32; 4] {
    std::array::from_fn(|i| a[0][i] * b[0] + a[1][i] * b[1] + a[2][i] * b[2])
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
    /// the triangle's own value (the patch mode's [`rxpipe_core::color::patch_value`])
    pub face: f32,
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
            ShadingMode::Patches => {
                let light = 0.45 + 0.55 * n.dot(l).abs();
                pack_with(self.lut, patch_value_color(v.face) * light)
            }
        }
    }

    /// Whether [`FragmentShader::shade_lit4`] shades this frame (else [`FragmentShader::shade`]).
    #[inline]
    pub fn lit(&self) -> bool {
        self.s.shading == ShadingMode::Lit
    }

    /// The lit mode of [`FragmentShader::shade`] for four fragments at once, lane for lane the
    /// same operations in the same order, so the colours are identical: world positions, normals
    /// already facing the viewer (negated for back faces), and linear base colours.
    #[inline]
    pub fn shade_lit4(&self, world: &Vec3x4, normal: &Vec3x4, base: &Vec3x4) -> [u32; 4] {
        let s = self.s;
        let (l, eye, lc, amb) = (
            self.to_light.to_array(),
            s.eye.to_array(),
            s.light.color.to_array(),
            self.ambient.to_array(),
        );
        let n = unit4(*normal);
        let diffuse = dot4(&n, l).map(|d| d.max(0.0));
        let view = unit4(std::array::from_fn(|c| world[c].map(|w| eye[c] - w)));
        let h = unit4(std::array::from_fn(|c| view[c].map(|v| l[c] + v)));
        let mut spec: [f32; 4] = std::array::from_fn(|i| {
            (n[0][i] * h[0][i] + n[1][i] * h[1][i] + n[2][i] * h[2][i]).max(0.0)
        });
        for _ in 0..5 {
            spec = spec.map(|x| x * x); // ^32
        }
        let spec: [f32; 4] = std::array::from_fn(|i| {
            if diffuse[i] > 0.0 {
                0.25 * spec[i]
            } else {
                0.0
            }
        });
        let c: Vec3x4 = std::array::from_fn(|k| {
            std::array::from_fn(|i| base[k][i] * (amb[k] + lc[k] * diffuse[i]) + lc[k] * spec[i])
        });
        let [r, g, b] = c.map(lut_index4);
        std::array::from_fn(|i| {
            let q = |k: usize| self.lut[k] as u32;
            q(r[i]) | q(g[i]) << 8 | q(b[i]) << 16 | 0xff00_0000
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Colours packed in lanes are those packed one by one, including the values outside
    /// [0, 1], the infinities, -0 and NaN.
    #[test]
    fn lanes_pack_as_each_pixel_alone() {
        let lut = srgb_lut();
        let special = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            1e-30,
            -1e-30,
            0.5,
            1.0,
            1.000_000_1,
            0.999_999_9,
            3e9,
            -3e9,
        ];
        let mut r = super::super::test_rng(0x9e37_79b9);
        let mut values: Vec<f32> = special.to_vec();
        values.extend((0..4000).map(|_| r() * 1.4 - 0.2));
        for k in 0..values.len() {
            let at = |i: usize| values[(k + 3 * i) % values.len()];
            let mut c = V3::default();
            for i in 0..LANES {
                (c.x[i], c.y[i], c.z[i]) = (at(i), at(i + 1), at(i + 2));
            }
            let got = pack_lanes(lut, &c);
            for (i, got) in got.into_iter().enumerate() {
                let want = pack_with(lut, Vec3::new(at(i), at(i + 1), at(i + 2)));
                assert_eq!(got, want, "{:?}", (at(i), at(i + 1), at(i + 2)));
            }
        }
    }

    /// The depth image spans the depth the frame shows: nearest white, farthest black, empty
    /// pixels untouched.
    #[test]
    fn depth_is_normalised_to_the_visible_range() {
        let (near, far) = (0.1f32, 100.0f32);
        // NDC depth of view distance d
        let ndc = |d: f32| far * (d - near) / ((far - near) * d);
        let depth = [ndc(4.0), ndc(5.0), 1.0, ndc(4.5)];
        let mut color = vec![7u8; 16];
        normalize_depth(&mut color, &depth, near, far);
        assert_eq!(&color[0..4], &[255, 255, 255, 255]);
        assert_eq!(&color[4..8], &[0, 0, 0, 255]);
        assert_eq!(&color[8..12], &[7, 7, 7, 7]);
        assert!((126..=129).contains(&color[12]), "{}", color[12]);
    }

    /// The four-wide lit shading equals the scalar one bit for bit, lane by lane, including
    /// zero normals, back-lit and grazing fragments (a small deterministic generator).
    #[test]
    fn lit4_matches_scalar_lit() {
        let mut s = RasterSettings::new(64, 64);
        s.eye = Vec3::new(0.3, 1.5, 4.0);
        let fs = FragmentShader::new(&s);
        assert!(fs.lit());
        let mut unit = super::super::test_rng(0x1234_5678);
        let mut r = move || unit() * 4.0 - 2.0;
        let mut differ = 0;
        for round in 0..2000 {
            let world: Vec3x4 = std::array::from_fn(|_| std::array::from_fn(|_| r()));
            let mut normal: Vec3x4 = std::array::from_fn(|_| std::array::from_fn(|_| r()));
            if round % 7 == 0 {
                for c in &mut normal {
                    c[round % 4] = 0.0;
                }
            }
            let base: Vec3x4 = std::array::from_fn(|_| std::array::from_fn(|_| r().abs() / 2.0));
            let got = fs.shade_lit4(&world, &normal, &base);
            for i in 0..4 {
                let f = Fragment {
                    world: Vec3::new(world[0][i], world[1][i], world[2][i]),
                    normal: Vec3::new(normal[0][i], normal[1][i], normal[2][i]),
                    extra: 0.0,
                    face: 0.0,
                    view_z: 1.0,
                };
                let want = fs.shade(&f, true, [base[0][i], base[1][i], base[2][i], 1.0]);
                differ += (got[i] != want) as u32;
            }
        }
        assert_eq!(differ, 0, "lanes that differ from the scalar shading");
    }
}
