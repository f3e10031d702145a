//! The distance benchmark: the least distance between the shared mesh pairs (../shared/meshes/
//! distance/), on the CPU (the reference's best-first search, host wall time) and on the GPU
//! (gDist's front expansion, CUDA events around the whole query, its read-backs included); the
//! BVHs are built before timing on the host, as gDist's are. Also what the distance frame stage
//! adds per frame for an object that moves: B placed under a new transform (positions
//! transformed, tree refit), on the host and on the device.

use super::Machine;
use crate::distance::bvh::Bvh;
use crate::distance::placed::Placed;
use crate::distance::{cpu, cuda};
use crate::gpu::{median, Gpu};
use crate::{Error, Mesh};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The shared pairs (../shared/meshes/distance/), `bench distance`'s default.
pub const PAIRS: [&str; 7] = [
    "sphere_1000",
    "sphere_10000",
    "sphere_100000",
    "tools_1000",
    "tools_10000",
    "tools_100000",
    "tools_200000",
];

/// A CPU search longer than this (ms) is timed once.
const SLOW_MS: f64 = 1000.0;

/// One pair: sizes, result, and medians in ms.
#[derive(Debug, Clone, Serialize)]
pub struct DistanceRow {
    pub pair: String,
    pub triangles: [usize; 2],
    pub distance: f64,
    /// both BVHs, built in parallel on the host
    pub bvh_ms: f64,
    pub cpu_ms: f64,
    /// CPU runs timed (one where a run takes more than a second)
    pub cpu_runs: usize,
    pub cpu_pairs_tested: u64,
    pub gpu_ms: Option<f64>,
    pub gpu_pairs_tested: Option<u64>,
    pub gpu_expansions: Option<u32>,
    pub gpu_largest_front: Option<u64>,
    /// the GPU found the CPU's distance (bit for bit) and pair
    pub gpu_equals_cpu: Option<bool>,
    /// the search capped at half the distance (an object beyond the distance stage's reach),
    /// on the host and on the device
    pub capped_cpu_ms: f64,
    pub capped_gpu_ms: Option<f64>,
    /// B moved: its positions transformed and its tree refit, on the host (all threads)
    pub refit_cpu_ms: f64,
    /// the same on the device (CUDA events)
    pub refit_gpu_ms: Option<f64>,
    pub runs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct DistanceReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub host: String,
    pub rows: Vec<DistanceRow>,
}

/// Measures each pair: `NAME` for ../shared/meshes/distance/NAME_{A,B}.obj.gz, or two mesh
/// files or generator specs joined by `+`.
pub fn run(
    gpu: Option<Arc<Gpu>>,
    pairs: &[&str],
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<DistanceReport, Error> {
    let mut rows = Vec::new();
    let mut query = gpu.as_ref().map(cuda::Distance::new).transpose()?;
    for &name in pairs {
        progress(&format!("loading {name}"));
        let (a, b) = load_pair(name)?;
        crate::distance::check(&a)?;
        crate::distance::check(&b)?;
        progress(&format!("{name}: BVHs"));
        let mut bvh_ms = Vec::new();
        let mut trees = None;
        for _ in 0..runs.clamp(1, 5) {
            let t = Instant::now();
            trees = Some(rayon::join(|| Bvh::of_checked(&a), || Bvh::of_checked(&b)));
            bvh_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let (ta, tb) = trees.expect("built at least once");
        progress(&format!("{name}: CPU"));
        // (a search of seconds is timed once: the nested spheres' cost grows as n^1.5)
        let mut cpu_ms = Vec::new();
        let mut found = None;
        for i in 0..warmup + runs {
            let t = Instant::now();
            let r = cpu::min_distance(&a, &ta, &b, &tb);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            found = Some(r);
            if i >= warmup || ms > SLOW_MS {
                cpu_ms.push(ms);
            }
            if ms > SLOW_MS {
                break;
            }
        }
        let c = found.expect("ran at least once");
        let cap = c.distance * 0.5;
        let mut capped_ms = Vec::new();
        for i in 0..warmup + runs {
            let t = Instant::now();
            let r = cpu::min_distance_within(&a, &ta, &b, &tb, cap).map(|r| r.distance);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if let Some(d) = r.filter(|&d| d <= cap) {
                return Err(Error::Backend(format!(
                    "{name}: a search capped at {cap} found {d}, below the whole search's {}",
                    c.distance
                )));
            }
            if i >= warmup || ms > SLOW_MS {
                capped_ms.push(ms);
            }
            if ms > SLOW_MS {
                break;
            }
        }
        progress(&format!("{name}: refit"));
        // B turned back and forth between two poses, so that every placing moves it
        let poses = [
            glam::Mat4::from_rotation_y(0.25),
            glam::Mat4::from_rotation_translation(
                glam::Quat::from_rotation_x(0.5),
                glam::Vec3::new(0.1, 0.0, 0.0),
            ),
        ];
        let shared_b = Arc::new(b.clone());
        let mut placed = Placed::new(shared_b)?;
        let mut refit_ms = Vec::new();
        for i in 0..warmup + runs {
            let t = Instant::now();
            placed.place(poses[i % 2])?;
            if i >= warmup {
                refit_ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let mut row = DistanceRow {
            pair: name.to_string(),
            triangles: [a.triangle_count(), b.triangle_count()],
            distance: c.distance,
            bvh_ms: median(&bvh_ms),
            cpu_ms: median(&cpu_ms),
            cpu_runs: cpu_ms.len(),
            cpu_pairs_tested: c.pairs_tested,
            gpu_ms: None,
            gpu_pairs_tested: None,
            gpu_expansions: None,
            gpu_largest_front: None,
            gpu_equals_cpu: None,
            capped_cpu_ms: median(&capped_ms),
            capped_gpu_ms: None,
            refit_cpu_ms: median(&refit_ms),
            refit_gpu_ms: None,
            runs,
        };
        if let (Some(gpu), Some(q)) = (&gpu, query.as_mut()) {
            progress(&format!("{name}: GPU"));
            let da = cuda::DeviceMesh::new(gpu, &a, &ta)?;
            let db = cuda::DeviceMesh::new(gpu, &b, &tb)?;
            let mut last = None;
            let times = gpu.time(warmup, runs, || {
                last = Some(q.query(&da, &db)?);
                Ok::<_, Error>(())
            })?;
            let g = last.expect("ran at least once");
            row.gpu_ms = Some(median(&times));
            row.gpu_pairs_tested = Some(g.pairs_tested);
            row.gpu_expansions = Some(g.expansions);
            row.gpu_largest_front = Some(g.largest_front);
            row.gpu_equals_cpu =
                Some(g.d2.sqrt().to_bits() == c.distance.to_bits() && g.triangles == c.triangles);
            let times = gpu.time(warmup, runs, || q.query_within(&da, &db, cap).map(|_| ()))?;
            row.capped_gpu_ms = Some(median(&times));
            let mut moving = cuda::DeviceMesh::placed(gpu, &b, &tb)?;
            let mut i = 0;
            let times = gpu.time(warmup, runs, || {
                i += 1;
                q.place(&mut moving, &poses[i % 2])
            })?;
            row.refit_gpu_ms = Some(median(&times));
        }
        rows.push(row);
    }
    Ok(DistanceReport {
        machine: match &gpu {
            Some(g) => Machine::of(g, &crate::gpu::probe()),
            None => Machine::host(),
        },
        host: format!(
            "{}, {} threads",
            super::reindex::cpu_name(),
            rayon::current_num_threads()
        ),
        rows,
    })
}

fn load_pair(name: &str) -> Result<(Mesh, Mesh), Error> {
    if let Some((a, b)) = name.split_once('+') {
        return Ok((
            crate::io::load_mesh_or_spec(a)?,
            crate::io::load_mesh_or_spec(b)?,
        ));
    }
    let dir = crate::io::shared_meshes_dir().ok_or_else(|| {
        Error::Backend(format!(
            "the pair '{name}' is one of ../shared/meshes/distance/, which was not found (set \
             RXPIPE_MESHES, or give two meshes as A+B)"
        ))
    })?;
    let file = |s: &str| dir.join("distance").join(format!("{name}_{s}.obj.gz"));
    let load = |p: &Path| crate::io::load_mesh(p);
    Ok((load(&file("A"))?, load(&file("B"))?))
}

impl DistanceReport {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Least distance between two meshes (gDist)\n\n{} (host: {})\n\n",
            self.machine, self.host
        );
        s += "BVHs built on the host before timing; CPU: the reference's search on every host thread \
              (host wall time; a search of more than a second timed once); GPU: gDist's front \
              expansion, CUDA events around the whole query. Capped: the search capped at half the \
              distance (what the distance stage pays for an object beyond its reach). Refit: B \
              moved (positions transformed, its tree refit), as the distance frame stage does for an object that moved, on the host \
              (wall time) and on the device (CUDA events). Medians in ms.\n\n";
        s += "| pair | triangles | distance | BVHs | CPU | CPU pairs | GPU | GPU pairs | expansions | largest front | GPU = CPU | capped CPU | capped GPU | refit CPU | refit GPU |\n";
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n";
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        for r in &self.rows {
            s += &format!(
                "| {} | {} + {} | {:.6} | {:.2} | {:.3} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {:.3} | {} |\n",
                r.pair,
                r.triangles[0],
                r.triangles[1],
                r.distance,
                r.bvh_ms,
                r.cpu_ms,
                r.cpu_pairs_tested,
                opt(r.gpu_ms.map(|v| format!("{v:.3}"))),
                opt(r.gpu_pairs_tested.map(|v| v.to_string())),
                opt(r.gpu_expansions.map(|v| v.to_string())),
                opt(r.gpu_largest_front.map(|v| v.to_string())),
                opt(r
                    .gpu_equals_cpu
                    .map(|v| if v { "yes" } else { "NO" }.to_string())),
                r.capped_cpu_ms,
                opt(r.capped_gpu_ms.map(|v| format!("{v:.3}"))),
                r.refit_cpu_ms,
                opt(r.refit_gpu_ms.map(|v| format!("{v:.3}"))),
            );
        }
        s
    }
}
