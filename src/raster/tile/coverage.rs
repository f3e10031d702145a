//! Coverage: which pixels of a tile a triangle covers and which triangle is in front at each
//! (depth, visibility and barycentric buffers), pixel by pixel or in lanes of four (SSE2) or
//! eight (AVX2), each vector scan leaving exactly what the scalar scan leaves; and the depth
//! bound that skips triangles hidden behind a filled tile.

use super::{TileBary, TILE};
use crate::raster::setup::{edge_is_top_left, pixel_centre, SetupTri, SUBPIXEL_BITS};

/// How far below its corners' least depth a triangle's interpolated depth may round, relative to
/// its largest depth (at least 1): interpolation takes a few roundings of terms of that size.
pub(super) const Z_SLACK: f32 = 1e-6;

/// Whether every fragment of `t` lies behind `zmax`, an upper bound of the depths it would be
/// tested against: then no fragment passes (`z < depth`, or for the alpha-tested pass, which wins
/// ties, `z <= depth`).
#[inline]
pub(super) fn behind(t: &SetupTri, zmax: f32, ties: bool) -> bool {
    // (interpolation's rounding grows with the depths: a triangle beyond the far plane may
    // reach far past 1)
    let big = t.z.iter().fold(1f32, |m, z| m.max(z.abs()));
    let lo = t.z[0].min(t.z[1]).min(t.z[2]) - Z_SLACK * big;
    lo > zmax || (lo == zmax && !ties)
}

/// How often a tile's depth bound is taken again once its fragments could cover it: after this
/// many fragments or this many triangles since the last time: often enough that hidden
/// triangles are skipped soon after the tile fills, rarely enough that the bound's scan of the
/// tile stays cheap.
pub(super) const ZMAX_FRAGS: u64 = 64;
pub(super) const ZMAX_TRIANGLES: u32 = 16;

/// The largest depth among the tile's `tw` x `th` pixels (eight running maxima, so that the
/// loop runs in vector instructions; depths are never NaN).
pub(super) fn tile_max_depth(z: &[f32; (TILE * TILE) as usize], tw: usize, th: usize) -> f32 {
    let max = |a: f32, b: f32| if b > a { b } else { a };
    let mut m = [0f32; 8];
    for row in z.chunks_exact(TILE as usize).take(th) {
        let mut eights = row[..tw].chunks_exact(8);
        for c in &mut eights {
            for k in 0..8 {
                m[k] = max(m[k], c[k]);
            }
        }
        for &v in eights.remainder() {
            m[0] = max(m[0], v);
        }
    }
    m.into_iter().fold(0.0, max)
}

/// The part of the frame a tile covers.
pub(super) struct TileView {
    pub(super) tx: u32,
    pub(super) ty: u32,
    pub(super) tw: usize,
    pub(super) th: usize,
}

impl TileView {
    /// The frame pixel at place `l` of the tile's buffers (row by row, TILE to a row).
    #[inline(always)]
    pub(super) fn pixel(&self, l: usize) -> (u32, u32) {
        (self.tx + (l as u32 % TILE), self.ty + l as u32 / TILE)
    }
}

/// No triangle covers the pixel.
pub(super) const NONE: u32 = u32::MAX;

/// A tile's depth and visibility buffers (and coverage counts when requested).
pub(super) struct Visibility<'a> {
    pub(super) z: &'a mut [f32; (TILE * TILE) as usize],
    pub(super) win: &'a mut [u32; (TILE * TILE) as usize],
    pub(super) bary: &'a mut TileBary,
    pub(super) cov: Option<&'a mut [u32; (TILE * TILE) as usize]>,
}

/// Scans one triangle (number `j` of the tile's list) over its bounding box within the tile,
/// recording it and its barycentrics at each pixel where it passes the depth test. Returns the
/// fragments that passed.
#[inline]
pub(super) fn raster_tri(
    t: &SetupTri,
    j: u32,
    tile: &TileView,
    vis: &mut Visibility,
    lanes: Lanes,
) -> u64 {
    raster_tri_with(t, j, tile, vis, lanes, false, |_, _| true)
}

/// Which vector paths a scan may take; each leaves exactly what the scalar scan leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Lanes {
    /// pixel by pixel
    No,
    /// small triangles four pixels at a time (SSE2: every x86-64 CPU has it)
    Four,
    /// also, the others eight pixels at a time (AVX2: only where [`wide_isa`] holds)
    Eight,
}

/// [`raster_tri`], with the vector paths `lanes` allows (the tests compare them with the scalar
/// scan), and `keep(px, py)` asked of every fragment that passes the depth test before it is
/// recorded (an alpha test; unless `lanes` is [`Lanes::No`] it must keep every fragment). With
/// `ties`, a fragment at the depth of the pixel's winner also passes when its triangle comes
/// before the winner's (`j` lower: it is rasterised after triangles submitted after it).
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn raster_tri_with(
    t: &SetupTri,
    j: u32,
    tile: &TileView,
    vis: &mut Visibility,
    lanes: Lanes,
    ties: bool,
    mut keep: impl FnMut(u32, u32) -> bool,
) -> u64 {
    let TileView { tx, ty, tw, th } = *tile;
    let x0 = (t.bbox[0] as u32).max(tx);
    let y0 = (t.bbox[1] as u32).max(ty);
    let x1 = (t.bbox[2] as u32).min(tx + tw as u32 - 1);
    let y1 = (t.bbox[3] as u32).min(ty + th as u32 - 1);
    if x0 > x1 || y0 > y1 {
        return 0;
    }
    let (x, y) = (t.x.map(|v| v as i64), t.y.map(|v| v as i64));
    let one = 1i64 << SUBPIXEL_BITS;
    // edge k is opposite corner k: from corner k+1 to corner k+2
    let mut e_row = [0i64; 3];
    let mut dx = [0i64; 3];
    let mut dy = [0i64; 3];
    let (px, py) = (pixel_centre(x0 as i64), pixel_centre(y0 as i64));
    for k in 0..3 {
        let (a, b) = ((k + 1) % 3, (k + 2) % 3);
        let bias = if edge_is_top_left(t.x[a], t.y[a], t.x[b], t.y[b]) {
            0
        } else {
            -1
        };
        e_row[k] = (x[b] - x[a]) * (py - y[a]) - (y[b] - y[a]) * (px - x[a]) + bias;
        dx[k] = -(y[b] - y[a]) * one;
        dy[k] = (x[b] - x[a]) * one;
    }
    let inv_area = 1.0 / t.area as f32;
    #[cfg(not(target_arch = "x86_64"))]
    let _ = lanes;
    #[cfg(target_arch = "x86_64")]
    if lanes != Lanes::No {
        let lt = LaneTri {
            j,
            x0: x0 - tx,
            y0: y0 - ty,
            x1: x1 - tx,
            y1: y1 - ty,
            e_row,
            dx,
            dy,
            inv_area,
            z: t.z,
        };
        // a small triangle's edge functions over its bounding box fit in 32 bits: four pixels at
        // a time
        let span = |v: [i32; 3]| v.iter().max().unwrap() - v.iter().min().unwrap();
        if x1 - x0 < 4 && span(t.x) <= SMALL_SPAN && span(t.y) <= SMALL_SPAN {
            // SAFETY: SSE2 is part of the x86-64 baseline; the bounds lie within the tile.
            return unsafe { raster_small(&lt, vis) };
        }
        if lanes == Lanes::Eight {
            // SAFETY: `Lanes::Eight` is chosen only where wide_isa() found AVX2; the bounds lie
            // within the tile.
            return unsafe { raster_eight(&lt, vis) };
        }
    }
    let mut frags = 0;
    for j_row in y0..=y1 {
        let mut e = e_row;
        let row = ((j_row - ty) * TILE) as usize;
        for i in x0..=x1 {
            if (e[0] | e[1] | e[2]) >= 0 {
                // barycentrics (bias removed is below float precision for any visible triangle)
                let l1 = e[1] as f32 * inv_area;
                let l2 = e[2] as f32 * inv_area;
                let z = t.z[0] + (t.z[1] - t.z[0]) * l1 + (t.z[2] - t.z[0]) * l2;
                let l = row + (i - tx) as usize;
                if let Some(c) = vis.cov.as_deref_mut() {
                    c[l] += 1;
                }
                let front =
                    z < vis.z[l] || (ties && z == vis.z[l] && vis.win[l] != NONE && j < vis.win[l]);
                if front && keep(i, j_row) {
                    vis.z[l] = z;
                    vis.win[l] = j;
                    vis.bary[l] = [l1, l2];
                    frags += 1;
                }
            }
            for k in 0..3 {
                e[k] += dx[k];
            }
        }
        for k in 0..3 {
            e_row[k] += dy[k];
        }
    }
    frags
}

/// Triangles whose corners lie within this many subpixels of each other in x and in y (64
/// pixels) take the 32-bit path: every edge function over the bounding box (and the few pixels
/// left of it that a group of four starts at) is a difference of two products of factors below
/// 2^15, so it fits in an i32.
#[cfg(target_arch = "x86_64")]
pub(super) const SMALL_SPAN: i32 = 64 << SUBPIXEL_BITS;

/// A triangle clipped to one tile, for the vector scans: its box in tile-local pixels, its edge
/// functions at the first pixel centre of the box and their steps, and what its depth and
/// barycentrics are worked out from.
#[cfg(target_arch = "x86_64")]
pub(super) struct LaneTri {
    pub(super) j: u32,
    pub(super) x0: u32,
    pub(super) y0: u32,
    pub(super) x1: u32,
    pub(super) y1: u32,
    pub(super) e_row: [i64; 3],
    pub(super) dx: [i64; 3],
    pub(super) dy: [i64; 3],
    pub(super) inv_area: f32,
    pub(super) z: [f32; 3],
}

/// [`raster_tri`] for a small triangle whose box within the tile is at most four pixels wide:
/// each row of the box is one group of four lanes (starting at the box's left column, or at
/// column 28 near the tile's right edge), evaluated without branches (SSE2), with the same
/// per-pixel operations in the same order as the scalar path, so depths, winners and barycentrics
/// are identical; lanes outside the box are masked.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) unsafe fn raster_small(s: &LaneTri, vis: &mut Visibility) -> u64 {
    use std::arch::x86_64::*;
    let g = s.x0.min(TILE - 4);
    let lanes = _mm_setr_epi32(0, 1, 2, 3);
    // edge values at the four lanes of the first row (in 32 bits: see SMALL_SPAN)
    let mut e: [__m128i; 3] = std::array::from_fn(|k| {
        let d = s.dx[k] as i32;
        let e = s.e_row[k] as i32 - (s.x0 - g) as i32 * d;
        _mm_add_epi32(_mm_set1_epi32(e), _mm_setr_epi32(0, d, 2 * d, 3 * d))
    });
    let dy = s.dy.map(|d| _mm_set1_epi32(d as i32));
    let x = _mm_add_epi32(_mm_set1_epi32(g as i32), lanes);
    let in_box = _mm_and_si128(
        _mm_cmpgt_epi32(x, _mm_set1_epi32(s.x0 as i32 - 1)),
        _mm_cmplt_epi32(x, _mm_set1_epi32(s.x1 as i32 + 1)),
    );
    let inv_area = _mm_set1_ps(s.inv_area);
    let z0 = _mm_set1_ps(s.z[0]);
    let dz1 = _mm_set1_ps(s.z[1] - s.z[0]);
    let dz2 = _mm_set1_ps(s.z[2] - s.z[0]);
    let jv = _mm_set1_epi32(s.j as i32);
    let mut frags = 0u32;
    for y in s.y0..=s.y1 {
        let l = (y * TILE + g) as usize;
        let any = _mm_or_si128(_mm_or_si128(e[0], e[1]), e[2]);
        let m = _mm_and_si128(in_box, _mm_cmpgt_epi32(any, _mm_set1_epi32(-1)));
        let l1 = _mm_mul_ps(_mm_cvtepi32_ps(e[1]), inv_area);
        let l2 = _mm_mul_ps(_mm_cvtepi32_ps(e[2]), inv_area);
        let z = _mm_add_ps(_mm_add_ps(z0, _mm_mul_ps(dz1, l1)), _mm_mul_ps(dz2, l2));
        if let Some(c) = vis.cov.as_deref_mut() {
            let p = c.as_mut_ptr().add(l).cast::<__m128i>();
            _mm_storeu_si128(p, _mm_sub_epi32(_mm_loadu_si128(p), m));
        }
        let zp = vis.z.as_mut_ptr().add(l);
        let zold = _mm_loadu_ps(zp);
        let pf = _mm_and_ps(_mm_castsi128_ps(m), _mm_cmplt_ps(z, zold));
        let pass = _mm_castps_si128(pf);
        frags += (_mm_movemask_ps(pf) as u32).count_ones();
        _mm_storeu_ps(zp, _mm_or_ps(_mm_and_ps(pf, z), _mm_andnot_ps(pf, zold)));
        let wp = vis.win.as_mut_ptr().add(l).cast::<__m128i>();
        let wold = _mm_loadu_si128(wp);
        _mm_storeu_si128(
            wp,
            _mm_or_si128(_mm_and_si128(pass, jv), _mm_andnot_si128(pass, wold)),
        );
        // barycentrics are (l1, l2) pairs: lanes 0-1, then 2-3
        let bp = vis.bary.as_mut_ptr().add(l).cast::<f32>();
        let halves = [
            (_mm_unpacklo_ps(l1, l2), _mm_unpacklo_ps(pf, pf)),
            (_mm_unpackhi_ps(l1, l2), _mm_unpackhi_ps(pf, pf)),
        ];
        for (h, (b, pm)) in halves.into_iter().enumerate() {
            let q = bp.add(4 * h);
            let old = _mm_loadu_ps(q);
            _mm_storeu_ps(q, _mm_or_ps(_mm_and_ps(pm, b), _mm_andnot_ps(pm, old)));
        }
        for k in 0..3 {
            e[k] = _mm_add_epi32(e[k], dy[k]);
        }
    }
    frags as u64
}

/// [`raster_tri`] in eight lanes (AVX2) for a triangle whose box within the tile is wider than
/// four pixels or which is not small: each row of the box in groups of eight pixels at columns
/// that are multiples of eight, lanes outside the box masked. The edge functions are kept as
/// f64, which holds them exactly (within the guard band they are integers below 2^50, and so are
/// their sums), so each lane's coverage and its barycentrics' conversions to f32 are those of
/// the scalar scan's 64-bit integers, and the depth is the same operations in the same order:
/// the depths, winners, barycentrics and coverage counts are identical. A group that covers no
/// pixel, or whose pixels all fail the depth test, writes nothing.
///
/// # Safety
/// The CPU must have AVX2; the box must lie within the tile.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn raster_eight(s: &LaneTri, vis: &mut Visibility) -> u64 {
    use std::arch::x86_64::*;
    let g0 = s.x0 & !7;
    // each edge's values at the eight lanes of the first group of the first row, as two
    // registers of four f64 (lanes 0-3, 4-7)
    let mut row: [[__m256d; 2]; 3] = std::array::from_fn(|k| {
        let (e, d) = (s.e_row[k] - (s.x0 - g0) as i64 * s.dx[k], s.dx[k]);
        let at = |i: i64| (e + i * d) as f64;
        [
            _mm256_setr_pd(at(0), at(1), at(2), at(3)),
            _mm256_setr_pd(at(4), at(5), at(6), at(7)),
        ]
    });
    let step_x = s.dx.map(|d| _mm256_set1_pd((8 * d) as f64));
    let step_y = s.dy.map(|d| _mm256_set1_pd(d as f64));
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let (lo, hi) = (
        _mm256_set1_epi32(s.x0 as i32 - 1),
        _mm256_set1_epi32(s.x1 as i32 + 1),
    );
    let inv_area = _mm256_set1_ps(s.inv_area);
    let z0 = _mm256_set1_ps(s.z[0]);
    let dz1 = _mm256_set1_ps(s.z[1] - s.z[0]);
    let dz2 = _mm256_set1_ps(s.z[2] - s.z[0]);
    let jv = _mm256_set1_epi32(s.j as i32);
    // eight f64 lanes (two registers) as eight f32 in lane order (the conversion rounds to
    // nearest, as `i64 as f32` does)
    let to_f32 = |v: [__m256d; 2]| {
        _mm256_insertf128_ps::<1>(
            _mm256_castps128_ps256(_mm256_cvtpd_ps(v[0])),
            _mm256_cvtpd_ps(v[1]),
        )
    };
    let mut frags = 0u32;
    for y in s.y0..=s.y1 {
        let mut e = row;
        let mut g = g0;
        while g <= s.x1 {
            let x = _mm256_add_epi32(_mm256_set1_epi32(g as i32), lanes);
            let in_box = _mm256_and_si256(_mm256_cmpgt_epi32(x, lo), _mm256_cmpgt_epi32(hi, x));
            // a lane is covered where none of its three edge values is negative: the sign bits of
            // their OR, which sit in the high 32 bits of each f64 (no value is -0: the sums of
            // integers never give it)
            let or = |h: usize| _mm256_or_pd(_mm256_or_pd(e[0][h], e[1][h]), e[2][h]);
            let high = _mm256_shuffle_ps::<0b11_01_11_01>(
                _mm256_castpd_ps(or(0)),
                _mm256_castpd_ps(or(1)),
            );
            // (the shuffle works within 128-bit halves: lanes 0 1 4 5 2 3 6 7, put in order)
            let high = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_castps_si256(high));
            let m = _mm256_andnot_si256(_mm256_srai_epi32::<31>(high), in_box);
            if _mm256_testz_si256(m, m) == 0 {
                let l = (y * TILE + g) as usize;
                let l1 = _mm256_mul_ps(to_f32(e[1]), inv_area);
                let l2 = _mm256_mul_ps(to_f32(e[2]), inv_area);
                let z = _mm256_add_ps(
                    _mm256_add_ps(z0, _mm256_mul_ps(dz1, l1)),
                    _mm256_mul_ps(dz2, l2),
                );
                if let Some(c) = vis.cov.as_deref_mut() {
                    let p = c.as_mut_ptr().add(l).cast::<__m256i>();
                    _mm256_storeu_si256(p, _mm256_sub_epi32(_mm256_loadu_si256(p), m));
                }
                let zp = vis.z.as_mut_ptr().add(l);
                let zold = _mm256_loadu_ps(zp);
                let pf =
                    _mm256_and_ps(_mm256_castsi256_ps(m), _mm256_cmp_ps::<_CMP_LT_OQ>(z, zold));
                let passed = _mm256_movemask_ps(pf) as u32;
                if passed != 0 {
                    frags += passed.count_ones();
                    _mm256_storeu_ps(zp, _mm256_blendv_ps(zold, z, pf));
                    let wp = vis.win.as_mut_ptr().add(l).cast::<__m256>();
                    let wold = _mm256_loadu_ps(wp.cast());
                    _mm256_storeu_ps(
                        wp.cast(),
                        _mm256_blendv_ps(wold, _mm256_castsi256_ps(jv), pf),
                    );
                    // barycentrics are (l1, l2) pairs: interleaved within 128-bit halves, then
                    // put in order (lanes 0-3, then 4-7)
                    let (a, b) = (_mm256_unpacklo_ps(l1, l2), _mm256_unpackhi_ps(l1, l2));
                    let (ma, mb) = (_mm256_unpacklo_ps(pf, pf), _mm256_unpackhi_ps(pf, pf));
                    let bp = vis.bary.as_mut_ptr().add(l).cast::<f32>();
                    let halves = [
                        (
                            _mm256_permute2f128_ps::<0x20>(a, b),
                            _mm256_permute2f128_ps::<0x20>(ma, mb),
                        ),
                        (
                            _mm256_permute2f128_ps::<0x31>(a, b),
                            _mm256_permute2f128_ps::<0x31>(ma, mb),
                        ),
                    ];
                    for (h, (v, pm)) in halves.into_iter().enumerate() {
                        let q = bp.add(8 * h);
                        _mm256_storeu_ps(q, _mm256_blendv_ps(_mm256_loadu_ps(q), v, pm));
                    }
                }
            }
            for (e, step) in e.iter_mut().zip(&step_x) {
                *e = e.map(|v| _mm256_add_pd(v, *step));
            }
            g += 8;
        }
        for (r, step) in row.iter_mut().zip(&step_y) {
            *r = r.map(|v| _mm256_add_pd(v, *step));
        }
    }
    frags as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raster::setup::{Setup, PART_SHIFT};
    use crate::raster::tile::wide_isa;
    use crate::raster::{Draw, RasterSettings, RasterStats};

    /// The vector scans (four lanes for small triangles; eight for the others, where the CPU has
    /// AVX2) leave exactly the depths, winners, barycentrics, coverage counts and fragment counts
    /// of the scalar scan: a soup of small, large and huge random triangles (set up by the real setup, so snapped, culled and bounded as in a frame) drawn
    /// into every tile of a small frame, including the partial tiles at its right and bottom.
    #[test]
    fn vector_scans_equal_the_scalar_scan() {
        use crate::geometry::{ShadedGeometry, VertexOut};
        let (w, h) = (70u32, 45u32);
        let mut r = crate::raster::test_rng(0x2545_f491);
        let mut g = ShadedGeometry::default();
        for i in 0..3000 {
            // small ones mostly, every tenth spans up to half the frame, every hundredth reaches
            // far beyond it (into the guard band, where the edge functions are largest)
            let size = match i {
                _ if i % 100 == 0 => 400.0,
                _ if i % 10 == 0 => 0.5,
                _ => 0.06,
            };
            let (cx, cy) = (r() * 2.2 - 1.1, r() * 2.2 - 1.1);
            for _ in 0..3 {
                let clip = glam::Vec4::new(
                    cx + (r() - 0.5) * size,
                    cy + (r() - 0.5) * size,
                    r() * 0.9,
                    1.0,
                );
                g.vertices.push(VertexOut {
                    clip,
                    ..Default::default()
                });
            }
            g.triangles.push([3 * i, 3 * i + 1, 3 * i + 2]);
            if i % 7 == 6 {
                // the one before again: its depths tie with the first's, which must keep them
                g.triangles.push([3 * i - 3, 3 * i - 2, 3 * i - 1]);
            }
        }
        let draws = [Draw::new(&g, [1.0; 4])];
        let mut s = RasterSettings::new(w, h);
        s.cull = crate::raster::CullMode::None;
        let mut stats = RasterStats::default();
        let mut setup = Setup::default();
        crate::raster::setup::setup_all(&draws, &s, &mut stats, &mut setup);
        let ids: Vec<u32> = (0..setup.parts.len() as u32)
            .flat_map(|p| {
                (0..setup.parts[p as usize].len() as u32).map(move |i| p << PART_SHIFT | i)
            })
            .collect();
        assert!(ids.len() > 1000, "{} triangles set up", ids.len());
        let mut small = 0;
        for ty in (0..h).step_by(TILE as usize) {
            for tx in (0..w).step_by(TILE as usize) {
                let tile = TileView {
                    tx,
                    ty,
                    tw: TILE.min(w - tx) as usize,
                    th: TILE.min(h - ty) as usize,
                };
                let run = |lanes: Lanes| {
                    let n = (TILE * TILE) as usize;
                    let (mut z, mut win) = (vec![1f32; n], vec![NONE; n]);
                    let (mut bary, mut cov) = (vec![[0f32; 2]; n], vec![0u32; n]);
                    let mut frags = 0;
                    for (j, &id) in ids.iter().enumerate() {
                        let mut vis = Visibility {
                            z: (&mut z[..]).try_into().unwrap(),
                            win: (&mut win[..]).try_into().unwrap(),
                            bary: (&mut bary[..]).try_into().unwrap(),
                            cov: Some((&mut cov[..]).try_into().unwrap()),
                        };
                        frags += raster_tri_with(
                            setup.get(id),
                            j as u32,
                            &tile,
                            &mut vis,
                            lanes,
                            false,
                            |_, _| true,
                        );
                    }
                    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    let b: Vec<f32> = bary.iter().flatten().copied().collect();
                    (bits(&z), win, bits(&b), cov, frags)
                };
                let scalar = run(Lanes::No);
                assert!(scalar.4 > 0, "tile ({tx}, {ty}) drew nothing");
                assert_eq!(run(Lanes::Four), scalar, "four lanes, tile ({tx}, {ty})");
                if wide_isa() {
                    assert_eq!(run(Lanes::Eight), scalar, "eight lanes, tile ({tx}, {ty})");
                }
            }
        }
        for &id in &ids {
            let t = setup.get(id);
            small += (t.bbox[2] - t.bbox[0] < 4) as u32;
        }
        assert!(
            small as usize * 2 > ids.len(),
            "{small} small of {}",
            ids.len()
        );
    }
}
