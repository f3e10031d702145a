//! Vertex-face adjacency, derived from a mesh's indices (the passes build it on first use and
//! cache it in their context; patching reads it too).

/// Vertex-face adjacency in compressed rows: for vertex `v`, the corners `3 * t + k` (triangle
/// `t`, corner `k`) that refer to it are `corners[offsets[v]..offsets[v + 1]]`, in increasing
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexFaces {
    /// `corners[offsets[v]..offsets[v + 1]]` are vertex v's (one more entry than vertices)
    pub offsets: Vec<u32>,
    /// corner ids `3 * t + k`, grouped by vertex
    pub corners: Vec<u32>,
}

impl VertexFaces {
    /// Builds the adjacency of whole triangles of `indices` over `vertex_count` vertices
    /// (indices must be in range: the mesh has been validated).
    pub fn build(indices: &[u32], vertex_count: usize) -> VertexFaces {
        let whole = &indices[..indices.len() / 3 * 3];
        let mut offsets = vec![0u32; vertex_count + 1];
        for &i in whole {
            offsets[i as usize + 1] += 1;
        }
        for v in 0..vertex_count {
            offsets[v + 1] += offsets[v];
        }
        let mut cursor = offsets.clone();
        let mut corners = vec![0u32; whole.len()];
        for (c, &i) in whole.iter().enumerate() {
            let at = &mut cursor[i as usize];
            corners[*at as usize] = c as u32;
            *at += 1;
        }
        VertexFaces { offsets, corners }
    }

    /// The corners that refer to vertex `v`.
    pub fn corners_of(&self, v: usize) -> &[u32] {
        &self.corners[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_corner_once_in_its_vertex_row() {
        let m = crate::mesh::icosphere(2);
        let a = VertexFaces::build(&m.indices, m.vertex_count());
        let mut seen = vec![false; m.indices.len()];
        for v in 0..m.vertex_count() {
            let row = a.corners_of(v);
            assert!(row.windows(2).all(|w| w[0] < w[1]));
            for &c in row {
                assert_eq!(m.indices[c as usize] as usize, v);
                assert!(!std::mem::replace(&mut seen[c as usize], true));
            }
        }
        assert!(seen.iter().all(|&s| s));
    }
}
