//! Binning of setup triangles to screen tiles, and the per-tile rasteriser.

use super::setup::{edge_is_top_left, pixel_centre, Setup, SetupTri, SUBPIXEL_BITS};
use super::shade::{pack_srgb, shade};
use super::{Draw, RasterOutput, RasterSettings, RasterStats};
use crate::geometry::VertexOut;
use glam::{Vec3, Vec4};
use rayon::prelude::*;

/// Tile edge in pixels.
pub const TILE: u32 = 32;
const TILE_SHIFT: u32 = 5;

/// Triangle ids per tile, in submission order: tile `k` holds `ids[offsets[k]..offsets[k + 1]]`.
pub(super) struct Bins {
    pub tiles_x: u32,
    pub tiles_y: u32,
    pub offsets: Vec<u32>,
    pub ids: Vec<u32>,
}

/// Counting-sort binning: per chunk of triangles count per tile, scan in (tile, chunk) order, then
/// each chunk scatters its ids into its own ranges, so order within a tile is submission order.
pub(super) fn bin(setup: &Setup, s: &RasterSettings) -> Bins {
    let tiles_x = s.width.div_ceil(TILE);
    let tiles_y = s.height.div_ceil(TILE);
    let ntiles = (tiles_x * tiles_y) as usize;
    const CHUNK: usize = 8192;
    let tris = &setup.tris;
    let span = |t: &SetupTri| {
        (
            t.bbox[0] as u32 >> TILE_SHIFT,
            t.bbox[1] as u32 >> TILE_SHIFT,
            t.bbox[2] as u32 >> TILE_SHIFT,
            t.bbox[3] as u32 >> TILE_SHIFT,
        )
    };
    let counts: Vec<Vec<u32>> = tris
        .par_chunks(CHUNK)
        .map(|c| {
            let mut n = vec![0u32; ntiles];
            for t in c {
                let (x0, y0, x1, y1) = span(t);
                for ty in y0..=y1 {
                    for tx in x0..=x1 {
                        n[(ty * tiles_x + tx) as usize] += 1;
                    }
                }
            }
            n
        })
        .collect();
    let nchunks = counts.len();
    // starts[chunk][tile]
    let mut starts = vec![vec![0u32; ntiles]; nchunks];
    let mut offsets = vec![0u32; ntiles + 1];
    let mut acc = 0u32;
    for tile in 0..ntiles {
        offsets[tile] = acc;
        for c in 0..nchunks {
            starts[c][tile] = acc;
            acc += counts[c][tile];
        }
    }
    offsets[ntiles] = acc;
    let mut ids = vec![0u32; acc as usize];
    let out = SyncPtr(ids.as_mut_ptr());
    tris.par_chunks(CHUNK)
        .zip(starts.into_par_iter())
        .enumerate()
        .for_each(|(c, (chunk, mut next))| {
            let out = &out;
            for (i, t) in chunk.iter().enumerate() {
                let (x0, y0, x1, y1) = span(t);
                for ty in y0..=y1 {
                    for tx in x0..=x1 {
                        let k = (ty * tiles_x + tx) as usize;
                        // SAFETY: ranges [starts[c][k], starts[c][k] + counts[c][k]) are disjoint
                        // across chunks and tiles and lie within `ids`.
                        unsafe { *out.0.add(next[k] as usize) = (c * CHUNK + i) as u32 };
                        next[k] += 1;
                    }
                }
            }
        });
    Bins {
        tiles_x,
        tiles_y,
        offsets,
        ids,
    }
}

struct SyncPtr<T>(*mut T);
unsafe impl<T> Sync for SyncPtr<T> {}
unsafe impl<T> Send for SyncPtr<T> {}

/// Rasterises every tile in parallel; each tile writes its own pixels of the frame once.
pub(super) fn raster_tiles(
    setup: &Setup,
    bins: &Bins,
    draws: &[Draw],
    s: &RasterSettings,
    stats: &mut RasterStats,
    out: &mut RasterOutput,
) {
    let (w, h) = (s.width as usize, s.height as usize);
    // reuse the target's buffers: every pixel is written below, so no clear is needed
    out.width = s.width;
    out.height = s.height;
    out.color.resize(w * h * 4, 0);
    out.depth.resize(w * h, 1.0);
    match (&mut out.coverage, s.count_coverage) {
        (Some(c), true) => c.resize(w * h, 0),
        (c, true) => *c = Some(vec![0u32; w * h]),
        (c, false) => *c = None,
    }
    let cp = SyncPtr(out.color.as_mut_ptr());
    let dp = SyncPtr(out.depth.as_mut_ptr());
    let vp = SyncPtr(
        out.coverage
            .as_mut()
            .map_or(std::ptr::null_mut(), |c| c.as_mut_ptr()),
    );
    let bg = pack_srgb(Vec3::from_array(s.background));
    let ntiles = (bins.tiles_x * bins.tiles_y) as usize;
    let fragments: u64 = (0..ntiles)
        .into_par_iter()
        .map(|k| {
            let (cp, dp, vp) = (&cp, &dp, &vp);
            let tx = (k as u32 % bins.tiles_x) * TILE;
            let ty = (k as u32 / bins.tiles_x) * TILE;
            let tw = TILE.min(s.width - tx) as usize;
            let th = TILE.min(s.height - ty) as usize;
            let ids = &bins.ids[bins.offsets[k] as usize..bins.offsets[k + 1] as usize];
            if ids.is_empty() && !s.count_coverage {
                // nothing binned here: background and far depth, no per-tile buffers
                for j in 0..th {
                    let p = (ty as usize + j) * w + tx as usize;
                    // SAFETY: tiles are disjoint rectangles of the frame; this row segment lies
                    // inside the frame and belongs to this tile only.
                    let (crow, drow) = unsafe {
                        (
                            std::slice::from_raw_parts_mut(cp.0.add(4 * p), 4 * tw),
                            std::slice::from_raw_parts_mut(dp.0.add(p), tw),
                        )
                    };
                    drow.fill(1.0);
                    for c in crow.chunks_exact_mut(4) {
                        c.copy_from_slice(&bg.to_le_bytes());
                    }
                }
                return 0;
            }
            let mut zbuf = [1f32; (TILE * TILE) as usize];
            let mut vis = [u32::MAX; (TILE * TILE) as usize];
            let mut bary = [[0f32; 2]; (TILE * TILE) as usize];
            let mut cov = s
                .count_coverage
                .then(|| Box::new([0u32; (TILE * TILE) as usize]));
            let mut frags = 0u64;
            for &id in ids {
                let t = &setup.tris[id as usize];
                frags += raster_tri(
                    t,
                    id,
                    tx,
                    ty,
                    tw,
                    th,
                    &mut zbuf,
                    &mut vis,
                    &mut bary,
                    cov.as_deref_mut(),
                );
            }
            for j in 0..th {
                let p = (ty as usize + j) * w + tx as usize;
                // SAFETY: tiles are disjoint rectangles of the frame; this row segment lies inside
                // the frame and belongs to this tile only.
                let (crow, drow) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(cp.0.add(4 * p), 4 * tw),
                        std::slice::from_raw_parts_mut(dp.0.add(p), tw),
                    )
                };
                let l = j * TILE as usize;
                drow.copy_from_slice(&zbuf[l..l + tw]);
                for (i, c) in crow.chunks_exact_mut(4).enumerate() {
                    let rgba = match vis[l + i] {
                        u32::MAX => bg,
                        id => shade_pixel(setup, id, bary[l + i], draws, s),
                    };
                    c.copy_from_slice(&rgba.to_le_bytes());
                }
                if let Some(cov) = &cov {
                    // SAFETY: as above, for the coverage buffer, which exists when requested.
                    let vrow = unsafe { std::slice::from_raw_parts_mut(vp.0.add(p), tw) };
                    vrow.copy_from_slice(&cov[l..l + tw]);
                }
            }
            frags
        })
        .sum();
    stats.fragments = fragments;
}

/// Scans one triangle over its bounding box within the tile. Returns the fragments that passed
/// the depth test.
#[allow(clippy::too_many_arguments)]
#[inline]
fn raster_tri(
    t: &SetupTri,
    id: u32,
    tx: u32,
    ty: u32,
    tw: usize,
    th: usize,
    zbuf: &mut [f32],
    vis: &mut [u32],
    bary: &mut [[f32; 2]],
    mut cov: Option<&mut [u32; (TILE * TILE) as usize]>,
) -> u64 {
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
    let mut frags = 0;
    for j in y0..=y1 {
        let mut e = e_row;
        let row = ((j - ty) * TILE) as usize;
        for i in x0..=x1 {
            if (e[0] | e[1] | e[2]) >= 0 {
                // barycentrics (bias removed is below float precision for any visible triangle)
                let l1 = e[1] as f32 * inv_area;
                let l2 = e[2] as f32 * inv_area;
                let z = t.z[0] + (t.z[1] - t.z[0]) * l1 + (t.z[2] - t.z[0]) * l2;
                let l = row + (i - tx) as usize;
                if let Some(c) = cov.as_deref_mut() {
                    c[l] += 1;
                }
                if z < zbuf[l] {
                    zbuf[l] = z;
                    vis[l] = id;
                    bary[l] = [l1, l2];
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

/// Perspective-correct interpolation of the visible triangle's varyings, then shading.
#[inline]
fn shade_pixel(setup: &Setup, id: u32, l12: [f32; 2], draws: &[Draw], s: &RasterSettings) -> u32 {
    let t = &setup.tris[id as usize];
    let p = [
        (1.0 - l12[0] - l12[1]) * t.inv_w[0],
        l12[0] * t.inv_w[1],
        l12[1] * t.inv_w[2],
    ];
    let view_z = 1.0 / (p[0] + p[1] + p[2]);
    // weights over the setup corners, then over the source triangle's vertices
    let b = [p[0] * view_z, p[1] * view_z, p[2] * view_z];
    let mut ws = [0f32; 3];
    match t.clip {
        None => {
            for k in 0..3 {
                ws[t.corner[k] as usize] = b[k];
            }
        }
        Some(c) => {
            let cw = &setup.clip_weights[c as usize];
            for k in 0..3 {
                let src = cw[t.corner[k] as usize];
                for m in 0..3 {
                    ws[m] += b[k] * src[m];
                }
            }
        }
    }
    let d = &draws[t.draw as usize];
    let g = d.geometry;
    let [a, b, c] = g.triangles[t.tri as usize].map(|i| &g.vertices[i as usize]);
    let out = VertexOut {
        clip: Vec4::ZERO,
        world: a.world * ws[0] + b.world * ws[1] + c.world * ws[2],
        normal: a.normal * ws[0] + b.normal * ws[1] + c.normal * ws[2],
        uv: a.uv * ws[0] + b.uv * ws[1] + c.uv * ws[2],
        extra: a.extra * ws[0] + b.extra * ws[1] + c.extra * ws[2],
    };
    shade(&out, t.front, d.color, view_z, s)
}
