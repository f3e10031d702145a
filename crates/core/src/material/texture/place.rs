//! Where a sample reads: the texel places of nearest and bilinear filtering under the wrap modes,
//! their weights, the mip levels of a trilinear sample, and texels decoded to linear RGBA (one
//! sample, or eight in lanes).

use super::{Sampler, Wrap};
use crate::color::srgb_to_linear_lut;
use crate::material::lanes::{Rgba, LANES, V2, V4};
use glam::Vec2;

/// [`bilinear`] in lanes, component by component: the four texels `c` of each lane (as
/// [`bilinear_place`] orders them) weighed by `p`'s weights.
#[inline(always)]
pub(super) fn bilinear_lanes(c: &[V4; 4], p: &PlaceLanes) -> V4 {
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
pub(super) unsafe fn gather_decode(
    texels: &[[u8; 4]],
    p: &PlaceLanes,
    srgb: bool,
    alpha: bool,
) -> [V4; 4] {
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
pub(super) struct PlaceLanes {
    pub(super) at: [[u32; LANES]; 4],
    pub(super) fx: [f32; LANES],
    pub(super) fy: [f32; LANES],
}

impl PlaceLanes {
    /// A bound of the places: their bitwise or, which is at least the largest of them and
    /// below the next power of two above it (so below a level's texel count where that is a
    /// power of two and every place is below it; otherwise it may not be).
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    pub(super) fn bound(&self) -> u32 {
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
pub(super) enum Place {
    Nearest(u32),
    Linear([u32; 4], f32, f32),
}

/// RGBA8 texel `t` as linear RGBA (its RGB sRGB-decoded where `srgb`).
#[inline(always)]
pub(super) fn decode(t: [u8; 4], srgb: bool) -> Rgba {
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
pub(super) fn trilinear_levels(lod: f32, last: f32) -> (u32, u32, f32) {
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
pub(super) fn finite(uv: Vec2) -> Vec2 {
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
pub(super) fn bilinear_place(
    width: u32,
    height: u32,
    s: &Sampler,
    uv: Vec2,
) -> ([u32; 4], f32, f32) {
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
pub(super) fn repeat_place(width: u32, height: u32, uv: Vec2) -> ([u32; 4], f32, f32, bool) {
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
pub(super) fn place_each(
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
pub(super) fn bilinear(c: [Rgba; 4], fx: f32, fy: f32) -> Rgba {
    let top = c[0].lerp(c[1], fx);
    let bottom = c[2].lerp(c[3], fx);
    top.lerp(bottom, fy)
}

/// `x` (positive, or +infinity) rounded down, as `f32::floor` gives it, without the C library's
/// `floorf` (x86-64 without SSE4.1 has no rounding instruction): values past 2^23 are integers
/// already, and the cast saturates infinity.
#[inline(always)]
pub(super) fn floor_positive(x: f32) -> f32 {
    if x >= 8_388_608.0 {
        x
    } else {
        x as u32 as f32
    }
}

/// `x` rounded down to an integer (saturating), without a call to the C library's `floorf` (x86-64
/// without SSE4.1 has no rounding instruction).
#[inline(always)]
pub(super) fn floor(x: f32) -> i64 {
    let t = x as i64;
    t - ((t as f32) > x) as i64
}

/// `i` modulo `n` in `0..n` (Euclidean): a mask for a power of two, a 32-bit division where `i`
/// fits (a 64-bit division costs several times more on some processors), as the GPU's `rxm_mod`.
#[inline(always)]
pub(super) fn modulo(i: i64, n: u32) -> u32 {
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
pub(super) fn wrap(i: i64, n: u32, mode: Wrap) -> u32 {
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
