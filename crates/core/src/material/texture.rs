//! Textures: RGBA8 images with a mip chain built at load time, and their sampling with a glTF
//! sampler (the CPU reference of the fragment stage; the GPU repeats these operations).

use super::lanes::{Rgba, F, LANES, V2, V4};
use crate::color::srgb_to_linear_lut;
use glam::{Vec2, Vec4};

/// How texture coordinates outside [0, 1] are read (glTF `wrapS` / `wrapT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wrap {
    #[default]
    Repeat,
    ClampToEdge,
    MirroredRepeat,
}

/// A texel filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    Nearest,
    #[default]
    Linear,
}

/// A glTF sampler. Where the file leaves a filter undefined, rxpipe filters linearly and
/// trilinearly between mip levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampler {
    pub wrap_s: Wrap,
    pub wrap_t: Wrap,
    /// when a texel covers more than a pixel
    pub mag: Filter,
    /// within a level when a pixel covers more than a texel
    pub min: Filter,
    /// between mip levels; `None`: level 0 only
    pub mipmap: Option<Filter>,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            wrap_s: Wrap::Repeat,
            wrap_t: Wrap::Repeat,
            mag: Filter::Linear,
            min: Filter::Linear,
            mipmap: Some(Filter::Linear),
        }
    }
}

/// One level of a texture: `width` x `height` RGBA8 texels, row by row.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub width: u32,
    pub height: u32,
    pub texels: Vec<[u8; 4]>,
}

/// Why a texture could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TextureError {
    #[error("{name}: a {width}x{height} image is not supported (1 to 16384 texels a side)")]
    Size {
        name: String,
        width: u32,
        height: u32,
    },
    #[error("{name}: {len} bytes do not make {width}x{height} RGBA8 texels")]
    Bytes {
        name: String,
        width: u32,
        height: u32,
        len: usize,
    },
}

/// A texture: its levels (level 0 the image, each next one half the size, down to 1x1), whether
/// its RGB is sRGB-encoded, and its sampler.
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    /// what errors and reports call it (the image's file or its index in the glTF)
    pub name: String,
    pub levels: Vec<Level>,
    pub srgb: bool,
    pub sampler: Sampler,
}

/// Linear value in [0, 1] to an sRGB-encoded byte (for building the levels of sRGB textures):
/// the raster stage's 4096-entry table (what the frame's colours are encoded with), instead of a
/// power per channel.
#[inline]
fn linear_to_srgb_byte(c: f32) -> u8 {
    crate::color::srgb_byte(c)
}

impl Texture {
    /// A texture from RGBA8 texels (sRGB-encoded RGB where `srgb`), with its mip chain: each
    /// level's texel the average of the 2x2 texels below it (edge texels repeated where a size
    /// is odd), averaged in linear space.
    pub fn new(
        name: impl Into<String>,
        width: u32,
        height: u32,
        rgba: &[u8],
        srgb: bool,
        sampler: Sampler,
    ) -> Result<Texture, TextureError> {
        let name = name.into();
        if width == 0 || height == 0 || width > 16384 || height > 16384 {
            return Err(TextureError::Size {
                name,
                width,
                height,
            });
        }
        if rgba.len() != 4 * width as usize * height as usize {
            return Err(TextureError::Bytes {
                name,
                width,
                height,
                len: rgba.len(),
            });
        }
        let texels: Vec<[u8; 4]> = rgba
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        let mut levels = vec![Level {
            width,
            height,
            texels,
        }];
        let lut = srgb_to_linear_lut();
        let decode = |t: [u8; 4], c: usize| {
            if srgb && c < 3 {
                lut[t[c] as usize]
            } else {
                t[c] as f32 / 255.0
            }
        };
        while let Some(l) = levels.last().filter(|l| l.width > 1 || l.height > 1) {
            let (w, h) = ((l.width / 2).max(1), (l.height / 2).max(1));
            let mut next = Vec::with_capacity(w as usize * h as usize);
            for y in 0..h {
                for x in 0..w {
                    let at = |dx: u32, dy: u32| {
                        let sx = (2 * x + dx).min(l.width - 1);
                        let sy = (2 * y + dy).min(l.height - 1);
                        l.texels[(sy * l.width + sx) as usize]
                    };
                    let four = [at(0, 0), at(1, 0), at(0, 1), at(1, 1)];
                    next.push(std::array::from_fn(|c| {
                        let v = four.iter().map(|&t| decode(t, c)).sum::<f32>() * 0.25;
                        if srgb && c < 3 {
                            linear_to_srgb_byte(v)
                        } else {
                            (v * 255.0 + 0.5) as u8
                        }
                    }));
                }
            }
            levels.push(Level {
                width: w,
                height: h,
                texels: next,
            });
        }
        Ok(Texture {
            name,
            levels,
            srgb,
            sampler,
        })
    }

    /// Bytes the texture's levels take.
    pub fn bytes(&self) -> usize {
        self.levels.iter().map(|l| 4 * l.texels.len()).sum()
    }

    /// The filtered value (linear RGBA) at `uv` for a pixel whose texture coordinates change by
    /// `dx` and `dy` to its right and lower neighbours: the level of detail is log2 of the longer
    /// of the two steps in texels of level 0 (magnification at or below 0).
    #[inline(always)]
    pub fn sample(&self, uv: Vec2, dx: Vec2, dy: Vec2) -> Vec4 {
        self.sample_rgba(uv, dx, dy).into()
    }

    /// [`Texture::sample`] as [`Rgba`].
    #[inline(always)]
    pub fn sample_rgba(&self, uv: Vec2, dx: Vec2, dy: Vec2) -> Rgba {
        let mut v = [Rgba::ONE];
        Texture::sample_alike(&[self], uv, dx, dy, &mut v);
        v[0]
    }

    /// Whether `self` and `other` sample alike: the same level sizes (level 0's size and the
    /// level count: the levels halve the same way) and sampler, so that the same coordinates
    /// and derivatives choose the same levels and texel positions in both.
    pub fn alike(&self, other: &Texture) -> bool {
        self.sampler == other.sampler
            && self.levels.len() == other.levels.len()
            && self.levels[0].width == other.levels[0].width
            && self.levels[0].height == other.levels[0].height
    }

    /// [`Texture::sample`] of each of `textures` (all [`Texture::alike`] the first) at the same
    /// coordinates into `out`, one for one: the level choice and each level's texel positions
    /// and weights are worked out once for all of them (the same arithmetic, so the same values
    /// as one by one); the loads, decoding and filtering are each texture's own.
    #[inline(always)]
    pub fn sample_alike(textures: &[&Texture], uv: Vec2, dx: Vec2, dy: Vec2, out: &mut [Rgba]) {
        let t = textures[0];
        debug_assert!(textures.iter().all(|o| t.alike(o)) && out.len() == textures.len());
        let (filter, l0, l1, f) = t.choose(dx, dy);
        let at = t.place(l0, uv, filter);
        for (o, t) in out.iter_mut().zip(textures) {
            *o = t.fetch(l0, &at);
        }
        if f == 0.0 {
            return;
        }
        let at = t.place(l1, uv, filter);
        for (o, t) in out.iter_mut().zip(textures) {
            let (a, b) = (*o, t.fetch(l1, &at));
            *o = a + (b - a).scale(f);
        }
    }

    /// The levels [`Texture::sample`] reads for derivatives `dx`, `dy` and the filter within them:
    /// (filter, first level, second level, weight of the second; 0 for one level).
    #[inline(always)]
    fn choose(&self, dx: Vec2, dy: Vec2) -> (Filter, usize, usize, f32) {
        let rho = self.footprint(dx, dy);
        let s = &self.sampler;
        // (log2 rho <= 0 exactly when rho <= 1; NaN derivatives or no footprint magnify too)
        if rho.is_nan() || rho <= 1.0 {
            return (s.mag, 0, 0, 0.0);
        }
        let lod = level_log2(rho);
        let last = (self.levels.len() - 1) as f32;
        match s.mipmap {
            None => (s.min, 0, 0, 0.0),
            Some(Filter::Nearest) => {
                let l = floor_positive(lod + 0.5).min(last) as usize;
                (s.min, l, l, 0.0)
            }
            Some(Filter::Linear) => {
                let (l0, l1, f) = trilinear_levels(lod.min(last), last);
                (s.min, l0 as usize, l1 as usize, f)
            }
        }
    }

    /// The longer screen step in level 0's texels for derivatives `dx`, `dy` (its log2 is the
    /// level of detail).
    #[inline(always)]
    fn footprint(&self, dx: Vec2, dy: Vec2) -> f32 {
        let base = &self.levels[0];
        let size = Vec2::new(base.width as f32, base.height as f32);
        (dx * size).length().max((dy * size).length())
    }

    /// Where a sample of `level` at `uv` with `filter` reads (in this texture or one alike).
    #[inline(always)]
    fn place(&self, level: usize, uv: Vec2, filter: Filter) -> Place {
        let l = &self.levels[level];
        let s = &self.sampler;
        match filter {
            Filter::Nearest => {
                let uv = finite(uv);
                let x = uv.x * l.width as f32;
                let y = uv.y * l.height as f32;
                let xi = wrap(floor(x), l.width, s.wrap_s);
                let yi = wrap(floor(y), l.height, s.wrap_t);
                Place::Nearest(yi * l.width + xi)
            }
            Filter::Linear => {
                let (at, fx, fy) = bilinear_place(l.width, l.height, s, uv);
                Place::Linear(at, fx, fy)
            }
        }
    }

    /// `level` filtered at the place `p` ([`Texture::place`] of this level).
    #[inline(always)]
    fn fetch(&self, level: usize, p: &Place) -> Rgba {
        let l = &self.levels[level];
        match *p {
            Place::Nearest(k) => self.texel_at(l, k),
            Place::Linear(at, fx, fy) => bilinear(at.map(|k| self.texel_at(l, k)), fx, fy),
        }
    }

    /// Texel `k` (in range) of `level` as linear RGBA.
    #[inline(always)]
    fn texel_at(&self, level: &Level, k: u32) -> Rgba {
        decode(level.texels[k as usize], self.srgb)
    }

    /// Whether level 0's sizes (and so every level's) are powers of two.
    fn power_of_two(&self) -> bool {
        self.levels[0].width.is_power_of_two() && self.levels[0].height.is_power_of_two()
    }

    /// Whether the sampler filters linearly within and between levels (glTF's default, and what
    /// [`Texture::sample_lanes`] computes in lanes).
    fn trilinear(&self) -> bool {
        let s = &self.sampler;
        s.mag == Filter::Linear && s.min == Filter::Linear && s.mipmap == Some(Filter::Linear)
    }

    /// [`Texture::sample`] of eight pixels: every lane's value is the one `sample` gives for it,
    /// its alpha only where `alpha` asks for it (else 1: the material path's lanes shade opaque
    /// colour, and decoding the alpha took a division a texel). With the trilinear sampler the
    /// arithmetic runs in lanes (the level choice, the texel places and the filter) and only
    /// the texel loads lane by lane; any other sampler samples lane by lane. `WIDE`: the CPU has
    /// AVX2 (the fragment stage's x86-64-v3 build says so), and the loads and decoding of the
    /// usual case run in its gathers instead (the same values).
    #[inline(always)]
    pub fn sample_lanes<const WIDE: bool>(&self, uv: &V2, dx: &V2, dy: &V2, alpha: bool) -> V4 {
        let mut out = [V4::default()];
        Texture::sample_lanes_alike::<WIDE>(&[self], uv, dx, dy, alpha, &mut out);
        out[0]
    }

    /// [`Texture::sample_lanes`] of each of `textures` (all [`Texture::alike`] the first) into
    /// `out`, one for one: the level choice and each level's texel places and weights are worked
    /// out once for all of them, as [`Texture::sample_alike`] does for one pixel (the same
    /// arithmetic, so the same values as one by one); the loads, decoding and filtering are each
    /// texture's own. `WIDE` as for [`Texture::sample_lanes`].
    // (lane loops index each array by the lane: the form the compiler turns into vectors)
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    pub fn sample_lanes_alike<const WIDE: bool>(
        textures: &[&Texture],
        uv: &V2,
        dx: &V2,
        dy: &V2,
        alpha: bool,
        out: &mut [V4],
    ) {
        let t = textures[0];
        debug_assert!(textures.iter().all(|o| t.alike(o)) && out.len() == textures.len());
        if !t.trilinear() {
            for (o, t) in out.iter_mut().zip(textures) {
                *o = t.sample_each(uv, dx, dy);
                if !alpha {
                    o.w = [1.0; LANES];
                }
            }
            return;
        }
        // the level choice of `choose` for this sampler, in lanes: the same values
        let (mut first, mut second, mut f) = ([0u8; LANES], [0u8; LANES], [0f32; LANES]);
        let last = (t.levels.len() - 1) as f32;
        for i in 0..LANES {
            // both sides worked out, then chosen (no branch in the loop)
            let rho = t.footprint(dx.get(i), dy.get(i));
            let (l0, l1, w) = trilinear_levels(level_log2(rho).min(last), last);
            let minified = rho > 1.0;
            first[i] = if minified { l0 as u8 } else { 0 };
            second[i] = if minified { l1 as u8 } else { 0 };
            f[i] = if minified { w } else { 0.0 };
        }
        let at = t.place_lanes(&first, uv);
        for (o, t) in out.iter_mut().zip(textures) {
            *o = t.fetch_lanes::<WIDE>(&first, &at, alpha);
        }
        if f == [0.0; LANES] {
            // no lane blends in a second level (all magnified, or at the last level)
            return;
        }
        let at = t.place_lanes(&second, uv);
        for (o, t) in out.iter_mut().zip(textures) {
            let b = t.fetch_lanes::<WIDE>(&second, &at, alpha);
            // `a + (b - a).scale(f)` in lanes, where f is not 0 (elsewhere `a` as it is)
            let blend = |a: &F, b: &F| -> F {
                let mut r = [0.0; LANES];
                for i in 0..LANES {
                    let v = a[i] + (b[i] - a[i]) * f[i];
                    r[i] = if f[i] != 0.0 { v } else { a[i] };
                }
                r
            };
            *o = V4 {
                x: blend(&o.x, &b.x),
                y: blend(&o.y, &b.y),
                z: blend(&o.z, &b.z),
                w: blend(&o.w, &b.w),
            };
        }
    }

    /// [`Texture::sample`] of each lane: kept out of line, so that the code the lanes run
    /// stays small (the fragment stage's build is inlined whole).
    #[inline(never)]
    fn sample_each(&self, uv: &V2, dx: &V2, dy: &V2) -> V4 {
        let mut out = V4::default();
        for i in 0..LANES {
            out.set(i, self.sample_rgba(uv.get(i), dx.get(i), dy.get(i)));
        }
        out
    }

    /// Where a bilinear sample of level `levels[i]` at `uv` reads in each lane `i`.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    fn place_lanes(&self, levels: &[u8; LANES], uv: &V2) -> PlaceLanes {
        let l0 = &self.levels[levels[0] as usize];
        let (mut w, mut h) = ([l0.width; LANES], [l0.height; LANES]);
        // (one level for all lanes in most groups: its sizes taken once)
        if levels.iter().any(|&l| l != levels[0]) {
            for i in 0..LANES {
                let l = &self.levels[levels[i] as usize];
                (w[i], h[i]) = (l.width, l.height);
            }
        }
        let mut p = PlaceLanes::default();
        let s = &self.sampler;
        let mut far = [false; LANES];
        if s.wrap_s == Wrap::Repeat && s.wrap_t == Wrap::Repeat && self.power_of_two() {
            // in lanes: the texel places of bilinear_place for this case, in 32-bit integers
            for i in 0..LANES {
                let (k, x, y, ok) = repeat_place(w[i], h[i], uv.get(i));
                for c in 0..4 {
                    p.at[c][i] = k[c];
                }
                (p.fx[i], p.fy[i], far[i]) = (x, y, !ok);
            }
        } else {
            far = [true; LANES];
        }
        if far.contains(&true) {
            place_each(&far, &w, &h, s, uv, &mut p.at, &mut p.fx, &mut p.fy);
        }
        p
    }

    /// Level `levels[i]` filtered bilinearly in each lane `i` at the places `p` (which
    /// [`Texture::place_lanes`] gave for these levels of this texture or one alike); the alpha
    /// where `alpha`, else 1. `WIDE` as for [`Texture::sample_lanes`].
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    fn fetch_lanes<const WIDE: bool>(
        &self,
        levels: &[u8; LANES],
        p: &PlaceLanes,
        alpha: bool,
    ) -> V4 {
        let l0 = &self.levels[levels[0] as usize];
        // one level for all lanes (most groups): one bounds check for the 32 places, of a bound
        // of them, instead of one each
        let top = p.bound();
        let one_level = levels.iter().all(|&l| l == levels[0]) && (top as usize) < l0.texels.len();
        #[cfg(target_arch = "x86_64")]
        if WIDE && one_level {
            // SAFETY: `WIDE` says the CPU has AVX2; every place is at most `top`, which lies
            // within the level
            let c = unsafe { gather_decode(&l0.texels, p, self.srgb, alpha) };
            return bilinear_lanes(&c, p);
        }
        // the loads lane by lane, the decoding (texel_at's) in lanes where it is arithmetic
        let mut raw = [[0u32; LANES]; 4];
        if one_level {
            for i in 0..LANES {
                for k in 0..4 {
                    // SAFETY: every place is at most `top`, which lies within the level
                    let t = unsafe { *l0.texels.get_unchecked(p.at[k][i] as usize) };
                    raw[k][i] = u32::from_le_bytes(t);
                }
            }
        } else {
            for i in 0..LANES {
                let l = &self.levels[levels[i] as usize];
                for k in 0..4 {
                    raw[k][i] = u32::from_le_bytes(l.texels[p.at[k][i] as usize]);
                }
            }
        }
        let byte = |t: u32, c: u32| t >> (8 * c) & 0xff;
        let mut c = [V4::default(); 4];
        for (c, raw) in c.iter_mut().zip(&raw) {
            for i in 0..LANES {
                c.w[i] = if alpha {
                    byte(raw[i], 3) as f32 / 255.0
                } else {
                    1.0
                };
            }
            if self.srgb {
                let lut = srgb_to_linear_lut();
                for i in 0..LANES {
                    c.x[i] = lut[byte(raw[i], 0) as usize];
                    c.y[i] = lut[byte(raw[i], 1) as usize];
                    c.z[i] = lut[byte(raw[i], 2) as usize];
                }
            } else {
                for i in 0..LANES {
                    c.x[i] = byte(raw[i], 0) as f32 / 255.0;
                    c.y[i] = byte(raw[i], 1) as f32 / 255.0;
                    c.z[i] = byte(raw[i], 2) as f32 / 255.0;
                }
            }
        }
        bilinear_lanes(&c, p)
    }
}

/// [`bilinear`] in lanes, component by component: the four texels `c` of each lane (as
/// [`bilinear_place`] orders them) weighed by `p`'s weights.
#[inline(always)]
fn bilinear_lanes(c: &[V4; 4], p: &PlaceLanes) -> V4 {
    let top = c[0].lerp(&c[1], &p.fx);
    let bottom = c[2].lerp(&c[3], &p.fx);
    top.lerp(&bottom, &p.fy)
}

/// The four texels of each lane at the places `p` in `texels`, decoded as
/// [`Texture::fetch_lanes`] decodes them (RGB through the sRGB table where `srgb`, else divided
/// by 255; the alpha divided by 255 where `alpha`, else 1), with AVX2 gathers: one gather a
/// corner for the texels and one a channel for the table, the values kept in registers (the
/// loops' loads go lane by lane through memory, eight scalar stores then read back as one
/// vector). The same values.
///
/// # Safety
/// The CPU must have AVX2; every place must lie within `texels`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn gather_decode(texels: &[[u8; 4]], p: &PlaceLanes, srgb: bool, alpha: bool) -> [V4; 4] {
    use std::arch::x86_64::*;
    let lut = srgb_to_linear_lut();
    let base = texels.as_ptr() as *const i32;
    let (ff, k255) = (_mm256_set1_epi32(0xff), _mm256_set1_ps(255.0));
    let lanes = |v: __m256| {
        let mut r = [0f32; LANES];
        _mm256_storeu_ps(r.as_mut_ptr(), v);
        r
    };
    // `byte as f32 / 255.0`, as the loops divide (not a multiplication by the reciprocal)
    let unorm = |b: __m256i| _mm256_div_ps(_mm256_cvtepi32_ps(b), k255);
    std::array::from_fn(|k| {
        let at = _mm256_loadu_si256(p.at[k].as_ptr() as *const __m256i);
        // SAFETY: every place lies within `texels` (the caller's word), a texel 4 bytes
        let raw = unsafe { _mm256_i32gather_epi32::<4>(base, at) };
        let byte = |c: i32| match c {
            0 => _mm256_and_si256(raw, ff),
            1 => _mm256_and_si256(_mm256_srli_epi32::<8>(raw), ff),
            _ => _mm256_and_si256(_mm256_srli_epi32::<16>(raw), ff),
        };
        let channel = |c: i32| match srgb {
            // SAFETY: a byte indexes the 256 entries of the table
            true => unsafe { _mm256_i32gather_ps::<4>(lut.as_ptr(), byte(c)) },
            false => unorm(byte(c)),
        };
        V4 {
            x: lanes(channel(0)),
            y: lanes(channel(1)),
            z: lanes(channel(2)),
            w: match alpha {
                true => lanes(unorm(_mm256_srli_epi32::<24>(raw))),
                false => [1.0; LANES],
            },
        }
    })
}

/// Where one bilinear sample reads in each lane: the four texels (as [`bilinear_place`] orders
/// them) as indices into the lane's level, and the weights of the right column and the bottom
/// row.
#[derive(Default)]
struct PlaceLanes {
    at: [[u32; LANES]; 4],
    fx: [f32; LANES],
    fy: [f32; LANES],
}

impl PlaceLanes {
    /// A bound of the places: their bitwise or, which is at least the largest of them and
    /// below the next power of two above it (so below a level's texel count where that is a
    /// power of two and every place is below it; otherwise it may not be).
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    fn bound(&self) -> u32 {
        // (lane by lane first, in vector instructions: a running maximum of the 32 stayed
        // scalar, and x86-64's baseline has no vector maximum of unsigned integers)
        let mut m = self.at[0];
        for k in 1..4 {
            for i in 0..LANES {
                m[i] |= self.at[k][i];
            }
        }
        m.iter().fold(0, |a, &b| a | b)
    }
}

/// Where one sample reads: a texel (as an index into its level), or four (as
/// [`bilinear_place`] orders them) with the weights of the right column and the bottom row.
enum Place {
    Nearest(u32),
    Linear([u32; 4], f32, f32),
}

/// RGBA8 texel `t` as linear RGBA (its RGB sRGB-decoded where `srgb`).
#[inline(always)]
fn decode(t: [u8; 4], srgb: bool) -> Rgba {
    if srgb {
        let lut = srgb_to_linear_lut();
        Rgba::new(
            lut[t[0] as usize],
            lut[t[1] as usize],
            lut[t[2] as usize],
            t[3] as f32 / 255.0,
        )
    } else {
        let c = |v: u8| v as f32 / 255.0;
        Rgba::new(c(t[0]), c(t[1]), c(t[2]), c(t[3]))
    }
}

/// The two levels a trilinear sample blends at level of detail `lod` (in [0, `last`]) and the
/// second's weight.
#[inline(always)]
fn trilinear_levels(lod: f32, last: f32) -> (u32, u32, f32) {
    // (lod is small and not negative, or above -1e-7 where a footprint just above 1 rounds
    // below: the cast is its floor, 0 for those; cast from lod kept in [0, last], NaN to 0,
    // so that it needs no saturation and lanes convert in one instruction: the lanes work out
    // every lane, also those that do not minify, whose values are not used)
    let c = if lod > 0.0 { lod } else { 0.0 };
    let c = if c < last { c } else { last };
    // SAFETY: c lies in [0, last], and last, a level count less one, is small
    let l0 = unsafe { c.to_int_unchecked::<i32>() };
    (l0 as u32, (l0 + 1).min(last as i32) as u32, lod - l0 as f32)
}

/// The base-two logarithm of the longer screen step in texels, `x` (above 1, or +infinity;
/// any other value gives a number without meaning), within 1e-7 of log2: the exponent plus an
/// odd series of the mantissa in [sqrt(1/2), sqrt(2)). Our own, rather than the C library's
/// `log2f`, so that eight lanes compute it in vector instructions and give the same bits as
/// one pixel alone.
#[inline(always)]
pub fn level_log2(x: f32) -> f32 {
    const SQRT_HALF: u32 = 0x3f35_04f3;
    // 2 / (k ln 2) for k = 1, 3, 5, 7: log2(m) = sum of c_k t^k, t = (m - 1) / (m + 1)
    const C: [f32; 4] = [2.885_39, 0.961_796_7, 0.577_078, 0.412_198_6];
    let bits = x.to_bits();
    let e = (bits.wrapping_sub(SQRT_HALF) as i32) >> 23;
    let m = f32::from_bits(bits.wrapping_sub((e as u32) << 23));
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    e as f32 + t * (C[0] + t2 * (C[1] + t2 * (C[2] + t2 * C[3])))
}

/// `uv`, or the origin where it is no number (such a coordinate reads the first texel).
#[inline(always)]
fn finite(uv: Vec2) -> Vec2 {
    if uv.is_finite() {
        uv
    } else {
        Vec2::ZERO
    }
}

/// Where a bilinear sample at `uv` of a `width` x `height` level with sampler `s` reads: the
/// four texels (row by row: top left, top right, bottom left, bottom right) as indices into
/// the level, and the weights of the right column and the bottom row.
#[inline(always)]
fn bilinear_place(width: u32, height: u32, s: &Sampler, uv: Vec2) -> ([u32; 4], f32, f32) {
    let uv = finite(uv);
    let x = uv.x * width as f32 - 0.5;
    let y = uv.y * height as f32 - 0.5;
    let (x0, y0) = (floor(x), floor(y));
    let (fx, fy) = (x - x0 as f32, y - y0 as f32);
    let (xa, xb) = (wrap(x0, width, s.wrap_s), wrap(x0 + 1, width, s.wrap_s));
    let (ya, yb) = (wrap(y0, height, s.wrap_t), wrap(y0 + 1, height, s.wrap_t));
    let (ra, rb) = (ya * width, yb * width);
    ([ra + xa, ra + xb, rb + xa, rb + xb], fx, fy)
}

/// [`bilinear_place`] for a level whose sizes are powers of two and a sampler that repeats both
/// ways, with the floors in 32 bits (which lanes compute eight at a time): the same places and
/// weights where the last value is true, that is where the texel coordinates lie within 2^30
/// (beyond, the caller falls back to `bilinear_place`).
#[inline(always)]
fn repeat_place(width: u32, height: u32, uv: Vec2) -> ([u32; 4], f32, f32, bool) {
    let uv = finite(uv);
    let x = uv.x * width as f32 - 0.5;
    let y = uv.y * height as f32 - 0.5;
    const NEAR: f32 = (1u32 << 30) as f32;
    let ok = x.abs() < NEAR && y.abs() < NEAR;
    // (clamped to 2^30 either way, NaN to -2^30, so that the cast needs no saturation, which
    // kept the compiler from vectorising it: beyond 2^30 the values are not used, `ok` being
    // false; wrapping, so as not to panic in a build with overflow checks)
    let floor32 = |v: f32| {
        let c = if v > -NEAR { v } else { -NEAR };
        let c = if c < NEAR { c } else { NEAR };
        // SAFETY: c is finite and within 2^30 of 0 (above)
        let t = unsafe { c.to_int_unchecked::<i32>() };
        t.wrapping_sub(((t as f32) > c) as i32)
    };
    let (x0, y0) = (floor32(x), floor32(y));
    let (fx, fy) = (x - x0 as f32, y - y0 as f32);
    // i mod n for a power of two n: the low bits, as `modulo` takes them
    let (xa, xb) = (
        x0 as u32 & (width - 1),
        x0.wrapping_add(1) as u32 & (width - 1),
    );
    let (ya, yb) = (
        y0 as u32 & (height - 1),
        y0.wrapping_add(1) as u32 & (height - 1),
    );
    let (ra, rb) = (ya * width, yb * width);
    ([ra + xa, ra + xb, rb + xa, rb + xb], fx, fy, ok)
}

/// [`bilinear_place`] in each lane `i` where `far[i]`, into the lanes' places and weights (out of
/// line, as [`Texture::sample_each`]).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn place_each(
    far: &[bool; LANES],
    w: &[u32; LANES],
    h: &[u32; LANES],
    s: &Sampler,
    uv: &V2,
    at: &mut [[u32; LANES]; 4],
    fx: &mut [f32; LANES],
    fy: &mut [f32; LANES],
) {
    for i in 0..LANES {
        if far[i] {
            let (k, x, y) = bilinear_place(w[i], h[i], s, uv.get(i));
            for c in 0..4 {
                at[c][i] = k[c];
            }
            (fx[i], fy[i]) = (x, y);
        }
    }
}

/// The bilinear blend of four texels (top left, top right, bottom left, bottom right) with the
/// weights of the right column and the bottom row.
#[inline(always)]
fn bilinear(c: [Rgba; 4], fx: f32, fy: f32) -> Rgba {
    let top = c[0].lerp(c[1], fx);
    let bottom = c[2].lerp(c[3], fx);
    top.lerp(bottom, fy)
}

/// `x` (positive, or +infinity) rounded down, as `f32::floor` gives it, without the C library's
/// `floorf` (x86-64 without SSE4.1 has no rounding instruction): values past 2^23 are integers
/// already, and the cast saturates infinity.
#[inline(always)]
fn floor_positive(x: f32) -> f32 {
    if x >= 8_388_608.0 {
        x
    } else {
        x as u32 as f32
    }
}

/// `x` rounded down to an integer (saturating), without a call to the C library's `floorf` (x86-64
/// without SSE4.1 has no rounding instruction).
#[inline(always)]
fn floor(x: f32) -> i64 {
    let t = x as i64;
    t - ((t as f32) > x) as i64
}

/// `i` modulo `n` in `0..n` (Euclidean): a mask for a power of two, a 32-bit division where `i`
/// fits (a 64-bit division costs several times more on some processors), as the GPU's `rxm_mod`.
#[inline(always)]
fn modulo(i: i64, n: u32) -> u32 {
    if n.is_power_of_two() {
        return i as u32 & (n - 1);
    }
    if (-0x4000_0000..0x4000_0000).contains(&i) {
        return (i as i32).rem_euclid(n as i32) as u32;
    }
    i.rem_euclid(n as i64) as u32
}

/// Texel index `i` (any integer; a NaN or huge coordinate saturates on the cast) wrapped into
/// `0..n`.
#[inline(always)]
fn wrap(i: i64, n: u32, mode: Wrap) -> u32 {
    match mode {
        Wrap::Repeat => modulo(i, n),
        Wrap::ClampToEdge => i.clamp(0, n as i64 - 1) as u32,
        Wrap::MirroredRepeat => {
            let k = modulo(i, 2 * n);
            if k >= n {
                2 * n - 1 - k
            } else {
                k
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker(srgb: bool, sampler: Sampler) -> Texture {
        // 4x2: black and white texels alternating
        let mut px = Vec::new();
        for y in 0..2 {
            for x in 0..4 {
                let v = if (x + y) % 2 == 0 { 255 } else { 0 };
                px.extend([v, v, v, 255]);
            }
        }
        Texture::new("checker", 4, 2, &px, srgb, sampler).unwrap()
    }

    #[test]
    fn levels_halve_down_to_one_texel_and_average_in_linear_space() {
        let t = checker(true, Sampler::default());
        let sizes: Vec<(u32, u32)> = t.levels.iter().map(|l| (l.width, l.height)).collect();
        assert_eq!(sizes, vec![(4, 2), (2, 1), (1, 1)]);
        // half black, half white in linear light is 0.5, sRGB-encoded 188
        assert_eq!(t.levels[1].texels[0], [188, 188, 188, 255]);
        let lin = checker(false, Sampler::default());
        assert_eq!(lin.levels[2].texels[0], [128, 128, 128, 255]);
    }

    #[test]
    fn alike_textures_sampled_together_equal_each_sampled_alone() {
        // 8x4 textures of different texels (one sRGB), every sampler shape, coordinates and
        // derivatives from magnification to past the last level
        let texels = |seed: u32| -> Vec<u8> {
            (0..8 * 4 * 4)
                .map(|i: u32| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 11) as u8)
                .collect()
        };
        let filters = [Filter::Nearest, Filter::Linear];
        let wraps = [Wrap::Repeat, Wrap::ClampToEdge, Wrap::MirroredRepeat];
        let mut rng = 12345u32;
        let mut next = || {
            rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (rng >> 8) as f32 / (1 << 24) as f32
        };
        for (k, mipmap) in [None, Some(Filter::Nearest), Some(Filter::Linear)]
            .into_iter()
            .enumerate()
        {
            let sampler = Sampler {
                wrap_s: wraps[k],
                wrap_t: wraps[(k + 1) % 3],
                mag: filters[k % 2],
                min: filters[(k + 1) % 2],
                mipmap,
            };
            let a = Texture::new("a", 8, 4, &texels(1), true, sampler).unwrap();
            let b = Texture::new("b", 8, 4, &texels(2), false, sampler).unwrap();
            let c = Texture::new("c", 8, 4, &texels(3), false, sampler).unwrap();
            assert!(a.alike(&b) && b.alike(&c));
            let mut differ = 0;
            for _ in 0..2000 {
                let uv = Vec2::new(next() * 6.0 - 3.0, next() * 6.0 - 3.0);
                let scale = (next() * 10.0 - 6.0).exp2();
                let dx = Vec2::new(next() - 0.5, next() - 0.5) * scale;
                let dy = Vec2::new(next() - 0.5, next() - 0.5) * scale;
                let mut together = [Rgba::ONE; 3];
                Texture::sample_alike(&[&a, &b, &c], uv, dx, dy, &mut together);
                let alone = [&a, &b, &c].map(|t| t.sample(uv, dx, dy));
                assert_eq!(
                    together.map(Vec4::from),
                    alone,
                    "{uv} {dx} {dy} {sampler:?}"
                );
                differ += (together[0] != together[1]) as usize;
            }
            // each read its own texels (the textures differ, so their values nearly always do)
            assert!(differ > 1900, "{differ} of 2000 differ");
        }
        let other = Texture::new("d", 4, 4, &texels(4)[..64], false, Sampler::default()).unwrap();
        assert!(
            !other.alike(&Texture::new("e", 8, 4, &texels(5), false, Sampler::default()).unwrap())
        );
    }

    #[test]
    fn level_log2_is_within_a_tenth_of_a_millionth_of_log2() {
        let mut x = 1.0f32;
        let mut checked = 0;
        while x < 1e30 {
            for k in 0..64 {
                let v = f32::from_bits(x.to_bits() + k * 977);
                let (got, want) = (level_log2(v) as f64, (v as f64).log2());
                // the series within 1e-7, plus the result's own rounding
                let tol = 1e-7 + want.abs() * f32::EPSILON as f64;
                assert!((got - want).abs() <= tol, "{v}: {got} against {want}");
                checked += 1;
            }
            x *= 1.37;
        }
        assert!(checked > 10_000);
        assert_eq!(level_log2(f32::INFINITY), 128.0);
    }

    /// Whether this CPU has the AVX2 gathers of [`gather_decode`].
    fn gathers() -> bool {
        #[cfg(target_arch = "x86_64")]
        return std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// `t` in lanes with the alpha; `u` and `t` sampled together with it and without it.
    fn sampled<const WIDE: bool>(
        t: &Texture,
        u: &Texture,
        uv: &V2,
        dx: &V2,
        dy: &V2,
    ) -> (V4, [V4; 2], [V4; 2]) {
        let lanes = t.sample_lanes::<WIDE>(uv, dx, dy, true);
        let mut together = [V4::default(); 2];
        Texture::sample_lanes_alike::<WIDE>(&[u, t], uv, dx, dy, true, &mut together);
        let mut rgb = [V4::default(); 2];
        Texture::sample_lanes_alike::<WIDE>(&[u, t], uv, dx, dy, false, &mut rgb);
        (lanes, together, rgb)
    }

    #[test]
    fn lanes_sample_as_each_pixel_alone() {
        // every sampler shape, sizes that are powers of two and others, sRGB and linear;
        // coordinates near and far (past 2^30 texels, where the lanes' 32-bit places give way)
        // and not numbers, footprints from magnification to past the last level
        let texels = |n: u32, seed: u32| -> Vec<u8> {
            (0..4 * n)
                .map(|i: u32| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 11) as u8)
                .collect()
        };
        let mut rng = 777u32;
        let mut next = || {
            rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (rng >> 8) as f32 / (1 << 24) as f32
        };
        let linear = Sampler::default();
        let samplers = [
            linear,
            Sampler {
                wrap_t: Wrap::ClampToEdge,
                ..linear
            },
            Sampler {
                wrap_s: Wrap::MirroredRepeat,
                ..linear
            },
            Sampler {
                mag: Filter::Nearest,
                ..linear
            },
            Sampler {
                mipmap: Some(Filter::Nearest),
                ..linear
            },
        ];
        let mut checked = 0;
        for (k, sampler) in samplers.into_iter().enumerate() {
            for (w, h) in [(8, 4), (16, 16), (6, 3), (1, 1)] {
                let t =
                    Texture::new("t", w, h, &texels(w * h, k as u32), k % 2 == 0, sampler).unwrap();
                // alike, other texels, the other encoding: sampled together with t
                let u = Texture::new(
                    "u",
                    w,
                    h,
                    &texels(w * h, 99 + k as u32),
                    k % 2 == 1,
                    sampler,
                )
                .unwrap();
                for round in 0..300 {
                    let (mut uv, mut dx, mut dy) = (V2::default(), V2::default(), V2::default());
                    // every third group has one footprint scale in all its lanes (whole groups
                    // magnified, or all in one level pair, as on screen)
                    let group = (next() * 10.0 - 6.0).exp2();
                    for i in 0..LANES {
                        let far = match (next() * 16.0) as u32 {
                            0 => 3e9,
                            1 => f32::NAN,
                            _ => 3.0,
                        };
                        let own = (next() * 10.0 - 6.0).exp2();
                        let scale = if round % 3 == 0 { group } else { own };
                        uv.set(i, Vec2::new(next() * 2.0 - 1.0, next() * 2.0 - 1.0) * far);
                        dx.set(i, Vec2::new(next() - 0.5, next() - 0.5) * scale);
                        dy.set(i, Vec2::new(next() - 0.5, next() - 0.5) * scale);
                    }
                    // the lane loops, and the AVX2 gathers where the CPU has them
                    for wide in std::iter::once(false).chain(gathers().then_some(true)) {
                        let (lanes, together, rgb) = match wide {
                            false => sampled::<false>(&t, &u, &uv, &dx, &dy),
                            true => sampled::<true>(&t, &u, &uv, &dx, &dy),
                        };
                        for (a, b) in rgb.iter().zip(&together) {
                            assert_eq!((a.x, a.y, a.z, a.w), (b.x, b.y, b.z, [1.0; LANES]));
                        }
                        for i in 0..LANES {
                            let alone = t.sample(uv.get(i), dx.get(i), dy.get(i));
                            let place = format!(
                                "lane {i}: {} {} {} {sampler:?} {w}x{h}, gathers: {wide}",
                                uv.get(i),
                                dx.get(i),
                                dy.get(i)
                            );
                            assert_eq!(Vec4::from(lanes.get(i)), alone, "{place}");
                            assert_eq!(Vec4::from(together[1].get(i)), alone, "{place}");
                            let alone = u.sample(uv.get(i), dx.get(i), dy.get(i));
                            assert_eq!(Vec4::from(together[0].get(i)), alone, "{place}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        let builds = 1 + gathers() as usize;
        assert_eq!(checked, 5 * 4 * 300 * LANES * builds);
    }

    #[test]
    fn places_bound_is_their_or_at_least_each_and_below_the_next_power_of_two() {
        let mut rng = 99u32;
        for round in 0..2000 {
            let mut p = PlaceLanes::default();
            // places below 2^b, for b from 0 (all 0) to 31; in every other round only one
            // place not 0 (so that each place is seen to count)
            let bits = round % 32;
            let one = (round / 32 % 32) as usize;
            for k in 0..4 {
                for i in 0..LANES {
                    rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let v = (rng >> 1) >> (31 - bits);
                    p.at[k][i] = if round % 2 == 0 || k * LANES + i == one {
                        v
                    } else {
                        0
                    };
                }
            }
            let top = p.at.iter().flatten().copied().max().unwrap();
            let b = p.bound();
            assert_eq!(b, p.at.iter().flatten().fold(0, |a, &v| a | v));
            assert!(b >= top, "{b} below {top}");
            assert!(
                (b as u64) < (top as u64 + 1).next_power_of_two(),
                "{b} for {top}"
            );
        }
    }

    #[test]
    fn wrap_modes_map_every_integer_into_range() {
        assert_eq!(wrap(-1, 4, Wrap::Repeat), 3);
        assert_eq!(wrap(9, 4, Wrap::Repeat), 1);
        assert_eq!(wrap(-1, 4, Wrap::ClampToEdge), 0);
        assert_eq!(wrap(9, 4, Wrap::ClampToEdge), 3);
        assert_eq!(wrap(4, 4, Wrap::MirroredRepeat), 3);
        assert_eq!(wrap(-1, 4, Wrap::MirroredRepeat), 0);
        assert_eq!(wrap(i64::MIN, 4, Wrap::MirroredRepeat), 0);
        // the fast paths (mask, 32-bit division) equal the 64-bit Euclidean remainder
        let big = [i64::MIN, i64::MIN + 1, -(1 << 40) - 3, 1 << 40, i64::MAX];
        for n in [1u32, 2, 3, 5, 7, 64, 100, 1000, 1024, 16383, 16384, 32768] {
            for i in (-70_000i64..70_000).step_by(7).chain(big) {
                assert_eq!(modulo(i, n) as i64, i.rem_euclid(n as i64), "{i} mod {n}");
            }
        }
    }

    #[test]
    fn sampling_picks_texels_filters_and_levels() {
        let near = Sampler {
            mag: Filter::Nearest,
            min: Filter::Nearest,
            mipmap: None,
            ..Default::default()
        };
        let t = checker(false, near);
        let z = Vec2::ZERO;
        // texel centres, magnified
        assert_eq!(t.sample(Vec2::new(0.125, 0.25), z, z), Vec4::ONE);
        assert_eq!(t.sample(Vec2::new(0.375, 0.25), z, z).x, 0.0);
        // bilinear halfway between a white and a black texel
        let lin = checker(false, Sampler::default());
        let v = lin.sample(Vec2::new(0.25, 0.25), z, z);
        assert!((v.x - 0.5).abs() < 1e-6, "{v}");
        // a footprint of four texels reads level 2 (one grey texel)
        let d = Vec2::new(1.0, 0.0);
        let v = lin.sample(Vec2::new(0.3, 0.6), d, d);
        assert!((v.x - 128.0 / 255.0).abs() < 1e-6, "{v}");
        // NaN coordinates read some texel, never panic
        let v = lin.sample(Vec2::NAN, Vec2::NAN, Vec2::NAN);
        assert!(v.w.is_finite());
        assert!(Texture::new("x", 0, 1, &[], false, near).is_err());
        assert!(Texture::new("x", 2, 1, &[0; 4], false, near).is_err());
    }
}
