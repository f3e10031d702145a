//! The dynamic batching preprocess (§3.4): split the index buffer front to back into batches of
//! whole triangles holding at most `max_indices` indices and `max_vertices` distinct vertices.
//!
//! The scan is greedy, with one refinement towards the paper's goal of "maximizing thread
//! occupancy at runtime": a batch that the index limit ends (not the vertex limit, not the end of
//! the buffer) is cut back to the longest prefix whose distinct vertices fit in whole warps (a
//! multiple of [`WARP`]), so that the threads shading it leave no warp partly idle. With the
//! defaults (1023 indices, 256 vertices) on Forsyth-ordered meshes the index limit ends most
//! batches at about 208 vertices, whose seventh warp would run half empty; cut back to at most
//! 192, a batch has a few more triangles' worth of boundary duplicates (the bunny's shading rate
//! goes from 0.612 to 0.614) but no idle lanes.

use super::{GeometryError, Strategy};
use std::borrow::Cow;

/// Batches the index limit ends are cut back to a multiple of this many distinct vertices: the
/// GPU's warp width.
pub const WARP: u32 = 32;

/// The fewest triangles a frame draws of a mesh (over all its instances) for the GPU to keep its
/// batches numbered once, in batch tables (`geometry::cuda::BatchTables`), unless
/// `RXPIPE_TABLES` says otherwise. A mesh drawn less is hashed frame by frame: its tables would
/// save little of a frame that small, and a strategy's measurements at the small sizes stay
/// those of the paper's per-frame hashing.
pub const TABLES_MIN_TRIANGLES: usize = 1 << 20;

/// The device bytes of batch tables over `index_count` indices in `batches` batches of at most
/// `max_vertices` vertices: a byte an index, and a list of ids, a count, 32 bytes of bounds and
/// an entry of the frame's list of batches to draw a batch.
pub fn table_bytes(index_count: usize, batches: usize, max_vertices: u32) -> u64 {
    index_count as u64 + batches as u64 * (4 * max_vertices as u64 + 4 + 32 + 8)
}

/// Batch boundaries, as triangle offsets: batch `b` is triangles `starts[b]..starts[b + 1]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Batches {
    pub starts: Vec<u32>,
    pub max_indices: u32,
    pub max_vertices: u32,
}

impl Batches {
    /// Scans the index buffer once (a load-time analysis; the batches stay valid as long as the
    /// index buffer does).
    pub fn build(
        indices: &[u32],
        vertex_count: usize,
        max_indices: u32,
        max_vertices: u32,
    ) -> Result<Batches, GeometryError> {
        if max_indices < 3 || max_vertices < 3 {
            return Err(GeometryError::BatchLimits {
                max_indices,
                max_vertices,
            });
        }
        let max_tris = (max_indices / 3) as usize;
        let n_tris = indices.len() / 3;
        let mut stamp = vec![u32::MAX; vertex_count];
        let mut starts = vec![0u32];
        let mut start = 0usize;
        let mut batch = 0u32;
        while start < n_tris {
            // the greedy scan from `start`, remembering where the vertex count last crossed a
            // multiple of the warp width
            let (mut unique, mut tris, mut cross) = (0u32, 0usize, 0usize);
            let mut index_limited = false;
            for (t, tri) in indices[3 * start..].chunks_exact(3).enumerate() {
                let t = start + t;
                let mut new = 0;
                for (k, &v) in tri.iter().enumerate() {
                    let s = *stamp
                        .get(v as usize)
                        .ok_or(GeometryError::IndexOutOfRange {
                            triangle: t,
                            index: v,
                            vertices: vertex_count,
                        })?;
                    // count each new vertex once even when it repeats inside the triangle
                    if s != batch && !tri[..k].contains(&v) {
                        new += 1;
                    }
                }
                if tris > 0 && (unique + new > max_vertices || tris + 1 > max_tris) {
                    index_limited = unique + new <= max_vertices;
                    break;
                }
                if unique.div_ceil(WARP) < (unique + new).div_ceil(WARP) {
                    cross = tris;
                }
                for &v in tri {
                    stamp[v as usize] = batch;
                }
                unique += new;
                tris += 1;
            }
            if index_limited && unique % WARP != 0 && cross > 0 {
                tris = cross;
            }
            start += tris;
            starts.push(start as u32);
            batch += 1;
        }
        if indices.is_empty() {
            starts = vec![0];
        }
        Ok(Batches {
            starts,
            max_indices,
            max_vertices,
        })
    }

    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The triangle range of batch `b`.
    pub fn range(&self, b: usize) -> std::ops::Range<usize> {
        self.starts[b] as usize..self.starts[b + 1] as usize
    }

    /// The batches `strategy` needs: `given` when it was built for the strategy's limits, else
    /// built now; `None` for the strategies without dynamic batching.
    pub fn for_strategy<'a>(
        strategy: Strategy,
        given: Option<&'a Batches>,
        indices: &[u32],
        vertex_count: usize,
    ) -> Result<Option<Cow<'a, Batches>>, GeometryError> {
        let Some((mi, mv)) = strategy.dynamic_limits() else {
            return Ok(None);
        };
        Ok(Some(match given {
            Some(b) if (b.max_indices, b.max_vertices) == (mi, mv) => Cow::Borrowed(b),
            _ => Cow::Owned(Batches::build(indices, vertex_count, mi, mv)?),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_both_limits_and_cover_everything() {
        let m = rxpipe_core::mesh::icosphere(4);
        let b = Batches::build(&m.indices, m.vertex_count(), 1023, 256).unwrap();
        assert_eq!(*b.starts.last().unwrap() as usize, m.triangle_count());
        let mut cut = 0;
        for i in 0..b.len() {
            let r = b.range(i);
            assert!(!r.is_empty());
            assert!(r.len() * 3 <= 1023);
            let mut u: Vec<u32> = m.indices[r.start * 3..r.end * 3].to_vec();
            u.sort();
            u.dedup();
            assert!(u.len() <= 256, "batch {i} has {} vertices", u.len());
            // greedy: the next triangle would not have fitted, or the batch was cut back to
            // whole warps of vertices, which the next triangle would have exceeded
            if r.end < m.triangle_count() {
                let mut u2 = u.clone();
                u2.extend_from_slice(&m.indices[r.end * 3..r.end * 3 + 3]);
                u2.sort();
                u2.dedup();
                let whole = u.len().div_ceil(32) * 32;
                assert!(
                    u2.len() > 256 || r.len() + 1 > 341 || u2.len() > whole,
                    "batch {i}: {} vertices, {} with the next triangle",
                    u.len(),
                    u2.len()
                );
                if r.len() < 341 && u2.len() <= 256 {
                    cut += 1;
                }
            }
        }
        assert!(cut > 0, "no batch was cut back to whole warps");
    }

    /// Batches the index limit ends are cut back to whole warps of distinct vertices: the
    /// icosphere's batches (in generator order) end at a multiple of 32 vertices unless the vertex
    /// limit or the buffer ends them.
    #[test]
    fn index_limited_batches_hold_whole_warps() {
        let m = rxpipe_core::mesh::icosphere(5);
        let b = Batches::build(&m.indices, m.vertex_count(), 1023, 256).unwrap();
        let mut whole = 0;
        for i in 0..b.len() - 1 {
            let r = b.range(i);
            let mut u: Vec<u32> = m.indices[r.start * 3..r.end * 3].to_vec();
            u.sort();
            u.dedup();
            if u.len() % 32 == 0 {
                whole += 1;
            }
        }
        // (a batch cut back can hold a few vertices fewer than the multiple of 32 when the
        // triangle that crossed it brought two or three new vertices)
        assert!(whole * 2 > b.len(), "{whole} of {} batches", b.len());
    }

    #[test]
    fn degenerate_triangles_count_their_vertex_once() {
        let idx = [0, 0, 0, 1, 1, 2];
        let b = Batches::build(&idx, 3, 1023, 3).unwrap();
        assert_eq!(b.len(), 1);
        assert!(Batches::build(&idx, 3, 2, 256).is_err());
        assert!(Batches::build(&[0, 1, 7], 3, 1023, 256).is_err());
    }
}
