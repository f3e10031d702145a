//! Geometry processing on the reuse strategies (Kenzel et al. 2018, section 5.1 and Figure 9c):
//! one level of Loop subdivision per strategy, every new vertex one run of Loop's rules through
//! the strategy's batches ([`crate::passes::subdivide::streamed`], on the CPU and the GPU),
//! beside the subdivision stage's own path on the edges. Each row has
//! the runs a triangle the strategy made and the median time.

use super::Machine;
use crate::backend::BackendKind;
use crate::geometry::Strategy;
use crate::gpu::{median, Gpu};
use crate::passes::{MeshPass, PassContext, Subdivide, WorkingMesh};
use crate::{Error, Mesh};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One mesh on one path.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessingRow {
    pub mesh: String,
    pub vertices: usize,
    pub triangles: usize,
    /// `cpu` or `cuda`
    pub backend: String,
    /// a strategy's name, or `stage` for the stage's own path on the edges
    pub path: String,
    /// runs of Loop's rules a triangle of the output (a strategy's ASR; `None` for the stage)
    pub runs_per_triangle: Option<f64>,
    /// median wall time of the level (the GPU's synchronised, its mesh already on the device)
    pub ms: f64,
    pub runs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProcessingReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub threads: usize,
    pub rows: Vec<ProcessingRow>,
}

/// A benchmark mesh: a name [`super::bench_mesh`] knows, optionally `@N` for it subdivided `N`
/// times first (`bunny@2`: the bunny at 1.1 M triangles), re-indexed.
pub fn processing_mesh(name: &str) -> Result<Mesh, Error> {
    let (base, levels) = match name.split_once('@') {
        Some((b, n)) => (
            b,
            n.parse::<u32>()
                .ok()
                .filter(|&n| n <= 4)
                .ok_or_else(|| Error::Backend(format!("{name}: expected NAME@LEVELS, 0 to 4")))?,
        ),
        None => (name, 0),
    };
    let m = crate::reindex::reindex(&super::bench_mesh(base)?, &Default::default(), None)?.mesh;
    m.validate()?;
    if levels == 0 {
        return Ok(m);
    }
    let mut w = WorkingMesh::new(m);
    let s = Subdivide {
        levels,
        ..Default::default()
    };
    s.run(&mut w, &mut PassContext::new(BackendKind::Cpu, None, 0))
        .map_err(|e| Error::Backend(e.to_string()))?;
    let mut m = w.into_host()?;
    m.name = name.to_string();
    Ok(m)
}

/// One level of subdivision of each mesh on every strategy (CPU) and on the stage's own path
/// (CPU, and `gpu`'s), `runs` timed runs after `warmup`.
pub fn run(
    names: &[&str],
    runs: usize,
    warmup: usize,
    gpu: Option<&Arc<Gpu>>,
    progress: &dyn Fn(&str),
) -> Result<ProcessingReport, Error> {
    let mut report = ProcessingReport {
        machine: match gpu {
            Some(g) => Machine::of(g, &crate::gpu::probe()),
            None => Machine::host(),
        },
        threads: rayon::current_num_threads(),
        rows: Vec::new(),
    };
    for &name in names {
        progress(&format!("{name}: loading"));
        let m = processing_mesh(name)?;
        let mut paths: Vec<(BackendKind, Option<Strategy>)> = vec![(BackendKind::Cpu, None)];
        paths.extend(Strategy::all().map(|s| (BackendKind::Cpu, Some(s))));
        if gpu.is_some() {
            paths.push((BackendKind::Cuda, None));
            paths.extend(Strategy::all().map(|s| (BackendKind::Cuda, Some(s))));
        }
        for (backend, strategy) in paths {
            let path = strategy.map_or("stage".to_string(), |s| s.name().to_string());
            let pass = Subdivide {
                levels: 1,
                strategy,
                ..Default::default()
            };
            let mut times = Vec::new();
            let mut asr = None;
            for k in 0..warmup + runs {
                progress(&format!("{name}: {path} on the {backend}, run {}", k + 1));
                let mut w = WorkingMesh::new(m.clone());
                let g = gpu.filter(|_| backend == BackendKind::Cuda);
                if let Some(g) = g {
                    w.device(g)?;
                    g.stream
                        .synchronize()
                        .map_err(|e| Error::Backend(e.to_string()))?;
                }
                let t = Instant::now();
                let said = pass
                    .run(&mut w, &mut PassContext::new(backend, g, 0))
                    .map_err(|e| Error::Backend(e.to_string()))?;
                if k >= warmup {
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
                asr = runs_per_triangle(&said);
            }
            report.rows.push(ProcessingRow {
                mesh: name.to_string(),
                vertices: m.vertex_count(),
                triangles: m.triangle_count(),
                backend: backend.name().to_string(),
                path,
                runs_per_triangle: asr,
                ms: median(&times),
                runs,
            });
        }
    }
    Ok(report)
}

/// The runs a triangle in a subdivision report ("(0.675 a triangle, ...").
fn runs_per_triangle(report: &str) -> Option<f64> {
    let (_, after) = report.split_once("through ")?;
    let (_, after) = after.split_once('(')?;
    after.split(' ').next()?.parse().ok()
}

impl ProcessingReport {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Geometry processing on the reuse strategies: one level of Loop subdivision\n\n{}. Each strategy runs Loop's rules once for every new vertex its batches hold (src/passes/subdivide/streamed.rs; on the GPU the geometry stage's kernels in the processing mode, each level prepared on the host and its time counted); `stage` is the subdivision stage's own path on the edges. The patch strategy's time includes patching the new triangles (RXMesh), which each level does anew. Runs a triangle: of the level's new triangles. Medians of {} runs of wall time, the copy of the input excluded (on the GPU its mesh is on the device and the time ends synchronised). Every path makes the same mesh, bit for bit on the CPU and within float rounding on the GPU (tests/subdivide.rs). The paper (GTX 1080 Ti, CUDA): the bunny in 0.57 ms, its 1.1 M-triangle buddha in 8.15 ms, every reuse strategy faster than naive.\n\n| mesh | vertices | triangles | backend | path | runs a triangle | ms |\n|---|---:|---:|---|---|---:|---:|\n",
            self.machine,
            self.rows.first().map_or(0, |r| r.runs),
        );
        for r in &self.rows {
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {:.2} |\n",
                r.mesh,
                r.vertices,
                r.triangles,
                r.backend,
                r.path,
                r.runs_per_triangle.map_or("".into(), |a| format!("{a:.3}")),
                r.ms
            );
        }
        s
    }
}
