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

/// A visible fragment: the setup triangle and two of its screen-space barycentrics.
#[derive(Clone, Copy)]
struct Vis {
    tri: u32,
    l1: f32,
    l2: f32,
}

/// Rasterises every tile in parallel; each tile writes its own pixels of the frame once.
pub(super) fn raster_tiles(
    setup: &Setup,
    bins: &Bins,
    draws: &[Draw],
    s: &RasterSettings,
    stats: &mut RasterStats,
) -> RasterOutput {
    let (w, h) = (s.width as usize, s.height as usize);
    let mut color = vec![0u32; w * h];
    let mut depth = vec![1f32; w * h];
    let mut coverage = s.count_coverage.then(|| vec![0u32; w * h]);
    let cp = SyncPtr(color.as_mut_ptr());
    let dp = SyncPtr(depth.as_mut_ptr());
    let vp = SyncPtr(
        coverage
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
            let mut zbuf = [1f32; (TILE * TILE) as usize];
            let mut vis = [Vis {
                tri: u32::MAX,
                l1: 0.0,
                l2: 0.0,
            }; (TILE * TILE) as usize];
            let mut cov = [0u32; (TILE * TILE) as usize];
            let ids = &bins.ids[bins.offsets[k] as usize..bins.offsets[k + 1] as usize];
            let mut frags = 0u64;
            for &id in ids {
                let t = &setup.tris[id as usize];
                let c = if s.count_coverage {
                    Some(&mut cov)
                } else {
                    None
                };
                frags += raster_tri(t, id, tx, ty, tw, th, &mut zbuf, &mut vis, c);
            }
            for j in 0..th {
                for i in 0..tw {
                    let l = j * TILE as usize + i;
                    let p = (ty as usize + j) * w + tx as usize + i;
                    let c = match vis[l].tri {
                        u32::MAX => bg,
                        id => shade_pixel(setup, id, vis[l], draws, s),
                    };
                    // SAFETY: tiles are disjoint rectangles of the frame; `p` is inside it.
                    unsafe {
                        *cp.0.add(p) = c;
                        *dp.0.add(p) = zbuf[l];
                        if !vp.0.is_null() {
                            *vp.0.add(p) = cov[l];
                        }
                    }
                }
            }
            frags
        })
        .sum();
    stats.fragments = fragments;
    RasterOutput {
        width: s.width,
        height: s.height,
        color: bytemuck::cast_slice(&color).to_vec(),
        depth,
        coverage,
        stats: *stats,
    }
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
    vis: &mut [Vis],
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
                    vis[l] = Vis { tri: id, l1, l2 };
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
fn shade_pixel(setup: &Setup, id: u32, v: Vis, draws: &[Draw], s: &RasterSettings) -> u32 {
    let t = &setup.tris[id as usize];
    let l = [1.0 - v.l1 - v.l2, v.l1, v.l2];
    let p = [l[0] * t.inv_w[0], l[1] * t.inv_w[1], l[2] * t.inv_w[2]];
    let sum = p[0] + p[1] + p[2];
    let view_z = 1.0 / sum;
    // weights over the setup corners, then over the source triangle's vertices
    let b = [p[0] * view_z, p[1] * view_z, p[2] * view_z];
    let mut wsrc = [0f32; 3];
    match t.clip {
        None => {
            for k in 0..3 {
                wsrc[t.corner[k] as usize] += b[k];
            }
        }
        Some(c) => {
            let cw = &setup.clip_weights[c as usize];
            for k in 0..3 {
                let src = cw[t.corner[k] as usize];
                for (m, ws) in wsrc.iter_mut().enumerate() {
                    *ws += b[k] * src[m];
                }
            }
        }
    }
    let d = &draws[t.draw as usize];
    let g = d.geometry;
    let vs = g.triangles[t.tri as usize].map(|i| &g.vertices[i as usize]);
    let mix3 = |f: &dyn Fn(&VertexOut) -> Vec3| {
        f(vs[0]) * wsrc[0] + f(vs[1]) * wsrc[1] + f(vs[2]) * wsrc[2]
    };
    let out = VertexOut {
        clip: Vec4::ZERO,
        world: mix3(&|v| v.world),
        normal: mix3(&|v| v.normal),
        uv: vs[0].uv * wsrc[0] + vs[1].uv * wsrc[1] + vs[2].uv * wsrc[2],
        extra: vs[0].extra * wsrc[0] + vs[1].extra * wsrc[1] + vs[2].extra * wsrc[2],
    };
    shade(&out, t.front, d.color, view_z, s)
}
