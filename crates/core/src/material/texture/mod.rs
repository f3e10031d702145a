//! Textures: RGBA8 images with a mip chain built at load time, and their sampling with a glTF
//! sampler (the CPU reference of the fragment stage; the GPU repeats these operations).

mod place;

use super::lanes::{Rgba, F, LANES, V2, V4};
use crate::color::srgb_to_linear_lut;
use glam::{Vec2, Vec4};
pub use place::level_log2;
use place::{
    bilinear, bilinear_lanes, bilinear_place, decode, finite, floor, floor_positive, gather_decode,
    place_each, repeat_place, trilinear_levels, wrap, Place, PlaceLanes,
};

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

#[cfg(test)]
mod tests;
