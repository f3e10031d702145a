//! Your own per-vertex program on the geometry stage's reuse strategies (the processing mode):
//! one step of umbrella smoothing, each vertex moved halfway to the mean of its neighbours, run
//! over the mesh's triangles by every strategy. A vertex that a batch shares runs once, so a
//! strategy that reuses more runs the (costly) ring walk fewer times; every strategy gives every
//! vertex the same result.
//!
//! ```text
//! cargo run --release --example processing [MESH]    # default: icosphere:5
//! ```

use rxpipe::geometry::cpu::{process, Program};
use rxpipe::geometry::Strategy;
use rxpipe::glam::Vec3;

/// The program: reads the mesh's positions and each vertex's neighbours (its auxiliary input),
/// returns the vertex's new position.
struct Umbrella<'a> {
    positions: &'a [Vec3],
    offsets: &'a [usize],
    neighbours: &'a [u32],
}

impl Program for Umbrella<'_> {
    type Out = Vec3;

    fn run(&self, id: u32) -> Vec3 {
        let i = id as usize;
        let ring = &self.neighbours[self.offsets[i]..self.offsets[i + 1]];
        if ring.is_empty() {
            return self.positions[i];
        }
        let sum: Vec3 = ring.iter().map(|&j| self.positions[j as usize]).sum();
        self.positions[i].lerp(sum / ring.len() as f32, 0.5)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = std::env::args().nth(1).unwrap_or("icosphere:5".into());
    let mesh = rxpipe::io::load_mesh_or_spec(std::path::Path::new(&spec))?;
    let mesh = rxpipe::reindex::reindex(&mesh, &Default::default(), None)?.mesh;
    // the auxiliary input: every vertex's neighbours along the triangles' edges (both ways)
    let n = mesh.vertex_count();
    let mut ring: Vec<Vec<u32>> = vec![Vec::new(); n];
    for t in mesh.indices.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if a != b && !ring[a as usize].contains(&b) {
                ring[a as usize].push(b);
                ring[b as usize].push(a);
            }
        }
    }
    let mut offsets = vec![0];
    offsets.extend(ring.iter().scan(0, |s, r| {
        *s += r.len();
        Some(*s)
    }));
    let neighbours: Vec<u32> = ring.concat();
    let program = Umbrella {
        positions: &mesh.positions,
        offsets: &offsets,
        neighbours: &neighbours,
    };
    println!(
        "{spec}: {} vertices, {} triangles",
        n,
        mesh.triangle_count()
    );
    let mut first: Option<Vec<Vec3>> = None;
    for strategy in Strategy::all() {
        let t = std::time::Instant::now();
        let out = process(strategy, n, &mesh.indices, None, &program)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        // each vertex's result, whichever of its runs it comes from
        let mut moved = mesh.positions.clone();
        out.scatter(&mut moved);
        let same = first.get_or_insert_with(|| moved.clone()) == &moved;
        println!(
            "{:>6}: {:>8} runs ({:.3} a triangle, the least {:.3}) in {ms:.1} ms; {}",
            strategy.name(),
            out.stats.invocations,
            out.stats.asr(),
            out.stats.ideal_asr(),
            if same {
                "the same result"
            } else {
                "A DIFFERENT RESULT"
            }
        );
        if !same {
            return Err(format!("{strategy} gave another result").into());
        }
    }
    Ok(())
}
