//! The patch strategy's preprocess: RXMesh patches as batches whose vertices are known in advance
//! (what mesh shaders call meshlets). Each patch lists the distinct vertices of the faces it owns,
//! once, and every triangle names its three corners by 16-bit local indices into its patch's list.
//! At run time a patch shades its list and its triangles are assembled through the local indices,
//! with no deduplication: the shader invocation count is the sum of the lists' lengths, fixed by
//! the patching.
//!
//! The patches may lie anywhere in the index buffer; with the patch order
//! ([`super::VertexOrder::Patch`]) every patch is a contiguous run of triangles, which is what the
//! per-patch culling stage and the GPU's subsets rely on to work patch by patch.

use super::GeometryError;
use rayon::prelude::*;
use std::ops::Range;

/// The patches of an index buffer, prepared for the geometry stage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchBatches {
    /// the patch of every triangle
    pub patch_of_face: Vec<u32>,
    /// patch p lists `vertices[vertex_start[p]..vertex_start[p + 1]]` (one more than patches)
    pub vertex_start: Vec<u32>,
    /// the global ids of each patch's distinct vertices, ascending within a patch
    pub vertices: Vec<u32>,
    /// three local indices per triangle (in index-buffer order) into its patch's list
    pub local: Vec<u16>,
    /// patch p owns triangles `face_start[p]..face_start[p + 1]`, when every patch is a
    /// contiguous run in patch order (the patch order); `None` otherwise
    pub face_start: Option<Vec<u32>>,
}

impl PatchBatches {
    /// Builds the lists of the patches `patch_of_face` assigns (patches numbered from 0; every
    /// number below the largest has at least one face) over `indices`.
    pub fn build(
        indices: &[u32],
        vertex_count: usize,
        patch_of_face: &[u32],
    ) -> Result<PatchBatches, GeometryError> {
        let indices = super::whole_triangles(indices, vertex_count)?;
        let faces = indices.len() / 3;
        if patch_of_face.len() != faces {
            return Err(GeometryError::Patches(format!(
                "{} patch numbers for {faces} triangles",
                patch_of_face.len()
            )));
        }
        let patches = patch_of_face
            .iter()
            .map(|&p| p as usize + 1)
            .max()
            .unwrap_or(0);
        if patches > faces {
            return Err(GeometryError::Patches(format!(
                "patch number {} for {faces} triangles",
                patches - 1
            )));
        }
        // the faces of every patch (a counting sort by patch)
        let mut start = vec![0u32; patches + 1];
        for &p in patch_of_face {
            start[p as usize + 1] += 1;
        }
        for p in 0..patches {
            start[p + 1] += start[p];
            if start[p + 1] == start[p] {
                return Err(GeometryError::Patches(format!(
                    "patch {p} has no triangles"
                )));
            }
        }
        let mut faces_of = vec![0u32; faces];
        let mut at = start.clone();
        for (f, &p) in patch_of_face.iter().enumerate() {
            faces_of[at[p as usize] as usize] = f as u32;
            at[p as usize] += 1;
        }
        let contiguous = faces_of.iter().enumerate().all(|(i, &f)| i as u32 == f);
        // each patch's distinct vertices, ascending, and its faces' local corners
        type List = (Vec<u32>, Vec<(u32, [u16; 3])>);
        let lists: Vec<List> = (0..patches)
            .into_par_iter()
            .map(|p| {
                let fs = &faces_of[start[p] as usize..start[p + 1] as usize];
                let mut vs: Vec<u32> = fs
                    .iter()
                    .flat_map(|&f| indices[3 * f as usize..3 * f as usize + 3].iter().copied())
                    .collect();
                vs.sort_unstable();
                vs.dedup();
                if vs.len() > u16::MAX as usize + 1 {
                    return Err(GeometryError::Patches(format!(
                        "patch {p} has {} distinct vertices, more than 16-bit local indices address",
                        vs.len()
                    )));
                }
                let local = fs
                    .iter()
                    .map(|&f| {
                        let c = &indices[3 * f as usize..3 * f as usize + 3];
                        let l = [0, 1, 2].map(|k| {
                            vs.binary_search(&c[k]).expect("the patch lists its corners") as u16
                        });
                        (f, l)
                    })
                    .collect();
                Ok((vs, local))
            })
            .collect::<Result<_, _>>()?;
        let mut vertex_start = Vec::with_capacity(patches + 1);
        vertex_start.push(0u32);
        let total: usize = lists.iter().map(|(v, _)| v.len()).sum();
        if total > u32::MAX as usize {
            return Err(GeometryError::Patches(format!(
                "the patches list {total} vertices, more than 32-bit queue positions address"
            )));
        }
        let mut vertices = Vec::with_capacity(total);
        let mut local = vec![0u16; 3 * faces];
        for (vs, ls) in &lists {
            vertices.extend_from_slice(vs);
            vertex_start.push(vertices.len() as u32);
            for &(f, l) in ls {
                local[3 * f as usize..3 * f as usize + 3].copy_from_slice(&l);
            }
        }
        Ok(PatchBatches {
            patch_of_face: patch_of_face.to_vec(),
            vertex_start,
            vertices,
            local,
            face_start: contiguous.then_some(start),
        })
    }

    /// Patches `indices` where they lie (patches of the default size; see
    /// [`crate::patch::cpu::patch_indices`]) and builds their lists: what the geometry stage's
    /// one-off runs use when given no patches.
    pub fn of_indices(indices: &[u32], vertex_count: usize) -> Result<PatchBatches, GeometryError> {
        let idx = super::whole_triangles(indices, vertex_count)?;
        let p = crate::patch::cpu::patch_indices(idx, &Default::default())
            .map_err(|e| GeometryError::Patches(e.to_string()))?;
        PatchBatches::build(idx, vertex_count, &p.patch_of_face)
    }

    /// How many patches there are.
    pub fn len(&self) -> usize {
        self.vertex_start.len().saturating_sub(1)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Shader invocations of the patch strategy: every patch shades its list once.
    pub fn invocations(&self) -> usize {
        self.vertices.len()
    }

    /// The list of patch `p`, as a range of [`PatchBatches::vertices`].
    pub fn list(&self, p: usize) -> Range<usize> {
        self.vertex_start[p] as usize..self.vertex_start[p + 1] as usize
    }

    /// Corner `k` of triangle `t` as a position among the patches' shaded vertices (all patches
    /// shaded, each at its list's place).
    #[inline]
    pub fn corner(&self, t: usize, k: usize) -> u32 {
        self.vertex_start[self.patch_of_face[t] as usize] + self.local[3 * t + k] as u32
    }

    /// The patches that own a triangle of `keep` (ranges of triangles), ascending and distinct.
    pub fn patches_of(&self, keep: &[Range<u32>]) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        let mut push = |p: u32| {
            if out.last() != Some(&p) {
                out.push(p)
            }
        };
        match &self.face_start {
            // contiguous patches: every range covers a run of patch numbers
            Some(start) => {
                for r in keep.iter().filter(|r| r.start < r.end) {
                    let first = start.partition_point(|&s| s <= r.start) - 1;
                    let last = start.partition_point(|&s| s < r.end) - 1;
                    (first as u32..=last as u32).for_each(&mut push);
                }
            }
            None => {
                for r in keep {
                    for t in r.clone() {
                        push(self.patch_of_face[t as usize]);
                    }
                }
                out.sort_unstable();
                out.dedup();
            }
        }
        out
    }

    /// The list entries shaded for the triangles `keep` (sorted, disjoint ranges): those of every
    /// patch owning a kept triangle, as runs of three numbers (first entry, length, entries in
    /// earlier runs), merged where consecutive, and how many entries they hold. In the patch
    /// order a range covers a run of whole patches whose lists lie end to end, found by two
    /// binary searches, so the cost grows with the ranges, not the patches (a frame stage makes
    /// these every frame, on the host).
    pub fn shading_runs(&self, keep: &[Range<u32>]) -> (Vec<u32>, usize) {
        let mut runs: Vec<u32> = Vec::new();
        let mut shaded = 0u32;
        let mut push = |entries: Range<usize>| {
            let (start, len) = (entries.start as u32, entries.len() as u32);
            let n = runs.len();
            if n >= 3 && runs[n - 3] + runs[n - 2] == start {
                runs[n - 2] += len;
            } else {
                runs.extend([start, len, shaded]);
            }
            shaded += len;
        };
        match &self.face_start {
            Some(start) => {
                // the patch after the last one pushed: a patch two ranges share is shaded once,
                // and the searches gallop forward from it (the ranges are sorted)
                let mut next = 0usize;
                for r in keep.iter().filter(|r| r.start < r.end) {
                    if next >= self.len() {
                        break;
                    }
                    // the patch owning the range's first triangle, or `next` if that one was
                    // pushed already
                    let first = gallop(start, next, |s| s <= r.start)
                        .unwrap_or(next)
                        .max(next);
                    // the patch owning its last (none new: the range lies in a pushed patch)
                    let Some(last) = gallop(start, first, |s| s < r.end) else {
                        continue;
                    };
                    if first <= last {
                        push(
                            self.vertex_start[first] as usize..self.vertex_start[last + 1] as usize,
                        );
                        next = last + 1;
                    }
                }
            }
            None => {
                for p in self.patches_of(keep) {
                    push(self.list(p as usize));
                }
            }
        }
        (runs, shaded as usize)
    }

    /// The patches of the triangles `keep` of the index buffer (sorted, disjoint ranges), as the
    /// patches of the index buffer those ranges make: the patches owning a kept triangle,
    /// renumbered in order, each with its whole list (a patch a frame stage kept in part still
    /// shades all its vertices).
    pub fn subset(&self, keep: &[Range<u32>]) -> PatchBatches {
        let kept = self.patches_of(keep);
        let mut renumber = vec![u32::MAX; self.len()];
        let mut vertex_start = Vec::with_capacity(kept.len() + 1);
        vertex_start.push(0u32);
        let mut vertices = Vec::new();
        for (i, &p) in kept.iter().enumerate() {
            renumber[p as usize] = i as u32;
            vertices.extend_from_slice(&self.vertices[self.list(p as usize)]);
            vertex_start.push(vertices.len() as u32);
        }
        let n: usize = keep.iter().map(|r| r.len()).sum();
        let mut patch_of_face = Vec::with_capacity(n);
        let mut local = Vec::with_capacity(3 * n);
        for r in keep {
            let (a, b) = (r.start as usize, r.end as usize);
            patch_of_face.extend(
                self.patch_of_face[a..b]
                    .iter()
                    .map(|&p| renumber[p as usize]),
            );
            local.extend_from_slice(&self.local[3 * a..3 * b]);
        }
        let face_start = self.face_start.as_ref().map(|_| {
            // still contiguous: count the kept triangles of each kept patch
            let mut s = vec![0u32; kept.len() + 1];
            for &p in &patch_of_face {
                s[p as usize + 1] += 1;
            }
            for i in 0..kept.len() {
                s[i + 1] += s[i];
            }
            s
        });
        PatchBatches {
            patch_of_face,
            vertex_start,
            vertices,
            local,
            face_start,
        }
    }
}

/// The last index `i >= from` with `below(s[i])`, `below` being true on a prefix of `s`: an
/// exponential search forward from `from`, then a binary one; `None` when `below(s[from])` is
/// false.
fn gallop(s: &[u32], from: usize, below: impl Fn(u32) -> bool) -> Option<usize> {
    if !s.get(from).is_some_and(|&v| below(v)) {
        return None;
    }
    let mut step = 1usize;
    let mut lo = from;
    while lo + step < s.len() && below(s[lo + step]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(s.len());
    Some(lo + s[lo..hi].partition_point(|&v| below(v)) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_local_corners_rebuild_the_index_buffer() {
        let m = rxpipe_core::mesh::icosphere(3);
        let p = crate::patch::cpu::patch(
            &m,
            &crate::patch::PatchOptions {
                max_faces: 64,
                ..Default::default()
            },
        )
        .unwrap();
        let b = PatchBatches::build(&m.indices, m.vertex_count(), &p.patch_of_face).unwrap();
        assert_eq!(b.len(), p.len());
        assert!(b.face_start.is_none(), "generator order is not patch order");
        for t in 0..m.triangle_count() {
            for k in 0..3 {
                assert_eq!(b.vertices[b.corner(t, k) as usize], m.indices[3 * t + k]);
            }
        }
        for q in 0..b.len() {
            let list = &b.vertices[b.list(q)];
            assert!(list.windows(2).all(|w| w[0] < w[1]), "patch {q} list");
        }
        // every patch lists exactly the vertices of its faces
        let mut want = vec![Vec::new(); b.len()];
        for (t, &q) in p.patch_of_face.iter().enumerate() {
            want[q as usize].extend_from_slice(&m.indices[3 * t..3 * t + 3]);
        }
        for (q, w) in want.iter_mut().enumerate() {
            w.sort_unstable();
            w.dedup();
            assert_eq!(&b.vertices[b.list(q)], &w[..]);
        }
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn subsets_keep_the_patches_of_the_kept_triangles() {
        // two patches of two triangles each, contiguous
        let idx = [0, 1, 2, 2, 1, 3, 4, 5, 6, 6, 5, 7];
        let b = PatchBatches::build(&idx, 8, &[0, 0, 1, 1]).unwrap();
        assert_eq!(b.face_start, Some(vec![0, 2, 4]));
        assert_eq!(b.patches_of(&[1..3]), vec![0, 1]);
        assert_eq!(b.patches_of(&[2..4]), vec![1]);
        let s = b.subset(&[3..4]);
        assert_eq!(s.len(), 1);
        assert_eq!(s.vertices, vec![4, 5, 6, 7]);
        assert_eq!(s.face_start, Some(vec![0, 1]));
        assert_eq!(
            [0, 1, 2].map(|k| s.vertices[s.corner(0, k) as usize]),
            [6, 5, 7]
        );
        // not contiguous: still correct
        let b = PatchBatches::build(&idx, 8, &[1, 0, 1, 0]).unwrap();
        assert!(b.face_start.is_none());
        assert_eq!(b.patches_of(&[0..1, 2..3]), vec![1]);
    }

    #[test]
    fn shading_runs_in_the_patch_order_are_those_of_the_kept_patches() {
        // the icosphere's triangles in patch order: every patch a contiguous run
        let m = rxpipe_core::mesh::icosphere(3);
        let p = crate::patch::cpu::patch(
            &m,
            &crate::patch::PatchOptions {
                max_faces: 40,
                ..Default::default()
            },
        )
        .unwrap();
        let mut order: Vec<usize> = (0..m.triangle_count()).collect();
        order.sort_by_key(|&t| p.patch_of_face[t]);
        let idx: Vec<u32> = order
            .iter()
            .flat_map(|&t| m.indices[3 * t..3 * t + 3].to_vec())
            .collect();
        let pof: Vec<u32> = order.iter().map(|&t| p.patch_of_face[t]).collect();
        let b = PatchBatches::build(&idx, m.vertex_count(), &pof).unwrap();
        assert!(b.face_start.is_some());
        let mut slow = b.clone();
        slow.face_start = None;
        let n = m.triangle_count() as u32;
        let keeps: Vec<Vec<Range<u32>>> = vec![
            vec![0..n],
            vec![],
            vec![5..6],
            vec![0..3, 3..50, 51..52, 52..400, 700..n],
            // ranges within a patch already shaded, and at the very end
            vec![0..3, 5..7, 7..8, 100..101, 101..102, n - 1..n],
            (0..n).step_by(7).map(|a| a..(a + 3).min(n)).collect(),
        ];
        for keep in &keeps {
            let fast = b.shading_runs(keep);
            // the same entries as listing every kept patch
            assert_eq!(fast, slow.shading_runs(keep), "{keep:?}");
            let listed: usize = b
                .patches_of(keep)
                .iter()
                .map(|&q| b.list(q as usize).len())
                .sum();
            assert_eq!(fast.1, listed);
        }
    }

    #[test]
    fn bad_assignments_are_errors() {
        let idx = [0, 1, 2, 2, 1, 3];
        assert!(PatchBatches::build(&idx, 4, &[0]).is_err());
        assert!(PatchBatches::build(&idx, 4, &[0, 2]).is_err());
        assert!(PatchBatches::build(&idx, 4, &[1, 1]).is_err());
        assert!(PatchBatches::build(&[0, 1, 9], 4, &[0]).is_err());
        assert!(PatchBatches::build(&[], 0, &[]).unwrap().is_empty());
    }
}
