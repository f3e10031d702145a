//! The order in which triangles are fed to the geometry stage.

use std::fmt;

/// Triangle order fed to the geometry stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VertexOrder {
    /// as in the file
    #[default]
    Input,
    /// Forsyth's vertex cache optimisation (meshoptimizer), as the paper preprocesses every mesh
    Forsyth,
    /// triangles shuffled with a fixed seed (no locality at all)
    Random(u64),
}

impl VertexOrder {
    pub fn parse(s: &str) -> Option<VertexOrder> {
        Some(match s.to_ascii_lowercase().as_str() {
            "input" | "file" => VertexOrder::Input,
            "forsyth" | "tomf" => VertexOrder::Forsyth,
            "random" => VertexOrder::Random(0x5eed),
            _ => return None,
        })
    }

    pub fn next(self) -> VertexOrder {
        match self {
            VertexOrder::Input => VertexOrder::Forsyth,
            VertexOrder::Forsyth => VertexOrder::Random(0x5eed),
            VertexOrder::Random(_) => VertexOrder::Input,
        }
    }

    /// Reorders the triangles of an index buffer (never the corners within a triangle).
    pub fn apply(self, indices: &[u32], vertex_count: usize) -> Vec<u32> {
        match self {
            VertexOrder::Input => indices.to_vec(),
            VertexOrder::Forsyth => meshopt::optimize_vertex_cache(indices, vertex_count),
            VertexOrder::Random(seed) => {
                let n = indices.len() / 3;
                let mut perm: Vec<u32> = (0..n as u32).collect();
                let mut s = seed | 1;
                for i in (1..n).rev() {
                    // xorshift64*
                    s ^= s >> 12;
                    s ^= s << 25;
                    s ^= s >> 27;
                    let r = s.wrapping_mul(0x2545_f491_4f6c_dd1d);
                    perm.swap(i, (r % (i as u64 + 1)) as usize);
                }
                perm.iter()
                    .flat_map(|&t| {
                        let t = t as usize * 3;
                        [indices[t], indices[t + 1], indices[t + 2]]
                    })
                    .collect()
            }
        }
    }
}

impl fmt::Display for VertexOrder {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            VertexOrder::Input => "input",
            VertexOrder::Forsyth => "forsyth",
            VertexOrder::Random(_) => "random",
        })
    }
}
