//! The simplification benchmark: what the envelope stage makes of real meshes at a few widths,
//! how long it takes, and the distance between input and result measured independently (dense
//! samples of each surface against the other, through a BVH), beside meshoptimizer's
//! simplifier asked for the same number of triangles (a quadric simplifier with no bound on the
//! distance).

use super::Machine;
use glam::DVec3;
use rayon::prelude::*;
use rxpipe::distance::bvh::Bvh;
use rxpipe::distance::triangle::Aabb;
use rxpipe::gpu::median;
use rxpipe::passes::simplify::{cpu, envelope::point_dist2};
use rxpipe::{Error, Mesh};
use serde::Serialize;
use std::time::Instant;

/// Samples per triangle edge of the distance measure: a barycentric grid of (N + 1)(N + 2) / 2
/// points a triangle, corners and edges included.
pub const SAMPLES_PER_EDGE: usize = 6;

/// One mesh at one width.
#[derive(Debug, Clone, Serialize)]
pub struct SimplifyRow {
    pub mesh: String,
    /// after re-indexing, as the pipeline gives the stage its mesh
    pub triangles_in: usize,
    /// ε as a fraction of the bounding-box diagonal, and in the mesh's units
    pub eps_rel: f64,
    pub eps: f64,
    pub triangles: usize,
    pub vertices: usize,
    /// median wall time of the stage over the runs
    pub ms: f64,
    /// the greatest sampled distance from the result to the input, and from the input to the
    /// result, as fractions of ε
    pub to_input: f64,
    pub from_input: f64,
    /// meshoptimizer asked for the same number of triangles (borders locked): what it gave, in
    /// how long, and its sampled distances as fractions of ε
    pub meshopt_triangles: usize,
    pub meshopt_ms: f64,
    pub meshopt_to_input: f64,
    pub meshopt_from_input: f64,
    pub runs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SimplifyReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub threads: usize,
    /// candidate collapses tested at once ([`cpu::run_with`])
    pub width: usize,
    pub samples_per_edge: usize,
    pub rows: Vec<SimplifyRow>,
}

/// The greatest distance from dense samples of `from`'s triangles to `to`'s surface.
pub fn sampled_distance(from: &Mesh, to: &Mesh) -> f64 {
    let tree = Bvh::of_checked(to);
    let tris: Vec<[DVec3; 3]> = (0..to.triangle_count() as u32)
        .map(|t| rxpipe::distance::corners(to, t))
        .collect();
    let first_leaf = (1usize << tree.depth) - 1;
    let gap2 = |p: DVec3, b: &Aabb| {
        let lo = DVec3::from_array(b[0].map(f64::from));
        let hi = DVec3::from_array(b[1].map(f64::from));
        (lo - p).max(p - hi).max(DVec3::ZERO).length_squared()
    };
    // the least squared distance from p to `to`, nearer boxes first
    let nearest2 = |p: DVec3| {
        let mut best = f64::INFINITY;
        let mut stack = vec![0usize];
        while let Some(node) = stack.pop() {
            if gap2(p, &tree.boxes[node]) >= best {
                continue;
            }
            if node >= first_leaf {
                for &t in tree.leaf(node) {
                    best = best.min(point_dist2(p, &tris[t as usize]));
                }
            } else {
                let (a, b) = (2 * node + 1, 2 * node + 2);
                let (da, db) = (gap2(p, &tree.boxes[a]), gap2(p, &tree.boxes[b]));
                // the nearer child is popped first
                if da <= db {
                    stack.extend([b, a]);
                } else {
                    stack.extend([a, b]);
                }
            }
        }
        best
    };
    const N: usize = SAMPLES_PER_EDGE;
    (0..from.triangle_count() as u32)
        .into_par_iter()
        .map(|t| {
            let c = rxpipe::distance::corners(from, t);
            let mut worst = 0.0f64;
            for i in 0..=N {
                for j in 0..=N - i {
                    let (a, b) = (i as f64 / N as f64, j as f64 / N as f64);
                    worst = worst.max(nearest2(c[0] * (1.0 - a - b) + c[1] * a + c[2] * b));
                }
            }
            worst
        })
        .reduce(|| 0.0, f64::max)
        .sqrt()
}

/// meshoptimizer's simplification of `m` to about `triangles` triangles, borders locked.
fn meshopt_simplify(m: &Mesh, triangles: usize) -> Mesh {
    let adapter =
        meshopt::VertexDataAdapter::new(bytemuck::cast_slice(&m.positions), 12, 0).expect("xyz");
    let indices = meshopt::simplify(
        &m.indices,
        &adapter,
        3 * triangles,
        1.0,
        meshopt::SimplifyOptions::LockBorder,
        None,
    );
    Mesh::new(m.name.clone(), m.positions.clone(), indices)
}

/// Simplifies each mesh at each width (a fraction of its diagonal), `runs` times, and measures
/// both results.
/// `width` candidate collapses are tested at once (`None`: the stage's default, twice the
/// threads).
pub fn run(
    names: &[&str],
    widths: &[f64],
    width: Option<usize>,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<SimplifyReport, Error> {
    let width = width.unwrap_or(2 * rayon::current_num_threads()).max(1);
    let mut report = SimplifyReport {
        machine: Machine::host(),
        threads: rayon::current_num_threads(),
        width,
        samples_per_edge: SAMPLES_PER_EDGE,
        rows: Vec::new(),
    };
    for &name in names {
        progress(&format!("{name}: loading"));
        let loaded = super::bench_mesh(name)?;
        let m = rxpipe::reindex::reindex(&loaded, &Default::default(), None)?.mesh;
        m.validate()?;
        let Some((lo, hi)) = m.bounds().filter(|_| m.triangle_count() > 0) else {
            return Err(Error::Backend(format!("{name}: no triangles to simplify")));
        };
        let diagonal = (hi - lo).as_dvec3().length();
        for &rel in widths {
            let eps = rel * diagonal;
            let mut times = Vec::new();
            let mut result = None;
            for k in 0..runs {
                progress(&format!("{name} at {rel}: run {} of {runs}", k + 1));
                let t = Instant::now();
                let (s, _) = cpu::run_with(&m, eps, 0, width);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                result = Some(s);
            }
            let s = result.expect("at least one run");
            progress(&format!("{name} at {rel}: meshoptimizer"));
            let mut mo_times = Vec::new();
            let mut mo = None;
            for _ in 0..runs {
                let t = Instant::now();
                mo = Some(meshopt_simplify(&m, s.triangle_count()));
                mo_times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let mo = mo.expect("at least one run");
            progress(&format!("{name} at {rel}: measuring"));
            report.rows.push(SimplifyRow {
                mesh: name.to_string(),
                triangles_in: m.triangle_count(),
                eps_rel: rel,
                eps,
                triangles: s.triangle_count(),
                vertices: s.vertex_count(),
                ms: median(&times),
                to_input: sampled_distance(&s, &m) / eps,
                from_input: sampled_distance(&m, &s) / eps,
                meshopt_triangles: mo.triangle_count(),
                meshopt_ms: median(&mo_times),
                meshopt_to_input: sampled_distance(&mo, &m) / eps,
                meshopt_from_input: sampled_distance(&m, &mo) / eps,
                runs,
            });
        }
    }
    Ok(report)
}

impl SimplifyReport {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Simplification within an envelope\n\n{}; {} candidate collapses tested at once. `simplify` against meshoptimizer's `simplify` asked for the same number of triangles (borders locked). Times are medians of {} run(s), wall time of the simplification alone. The distances are the greatest over dense samples ({} points a triangle) of one surface to the other, as fractions of ε: the stage promises at most 1 both ways.\n\n| mesh | triangles | ε (of the diagonal) | simplify: triangles | ms | result to input | input to result | meshopt: triangles | ms | result to input | input to result |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            self.machine,
            self.width,
            self.rows.first().map_or(0, |r| r.runs),
            (self.samples_per_edge + 1) * (self.samples_per_edge + 2) / 2
        );
        for r in &self.rows {
            s += &format!(
                "| {} | {} | {} | {} | {:.0} | {:.3} | {:.3} | {} | {:.1} | {:.3} | {:.3} |\n",
                r.mesh,
                r.triangles_in,
                r.eps_rel,
                r.triangles,
                r.ms,
                r.to_input,
                r.from_input,
                r.meshopt_triangles,
                r.meshopt_ms,
                r.meshopt_to_input,
                r.meshopt_from_input
            );
        }
        s
    }
}
