//! Geometry processing on the reuse strategies (Kenzel et al. 2018, section 5, Figure 9c and
//! Table 3): one level of Loop subdivision per strategy, every new vertex one run of Loop's rules
//! through the strategy's batches ([`rxpipe::passes::subdivide::streamed`], on the CPU and the
//! GPU), beside the subdivision stage's own path on the edges; and the outer envelope at 2% of
//! the diagonal per strategy, every vertex one run of its safe-offset program
//! ([`rxpipe::passes::envelope`]), beside each vertex run once. Each row has the runs a triangle
//! the strategy made and the median time.

use super::Machine;
use rxpipe::backend::BackendKind;
use rxpipe::geometry::Strategy;
use rxpipe::gpu::{median, Gpu};
use rxpipe::passes::{MeshPass, PassContext, Subdivide, WorkingMesh};
use rxpipe::{Error, Mesh};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One mesh on one path.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ProcessingRow {
    /// `subdivide` or `envelope`
    pub task: String,
    pub mesh: String,
    pub vertices: usize,
    pub triangles: usize,
    /// `cpu` or `cuda`
    pub backend: String,
    /// a strategy's name, or `stage` for the stage's own path on the edges
    pub path: String,
    /// runs of Loop's rules a triangle of the output (a strategy's ASR; `None` for the stage)
    pub runs_per_triangle: Option<f64>,
    /// median wall time of the level (the GPU's synchronised, its mesh already on the device);
    /// of an envelope, its program's runs (on the GPU the inputs' upload, the launch and the
    /// records' download), the exact check apart
    pub ms: f64,
    /// on the GPU, the strategy's kernels alone (CUDA events), median
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_ms: Option<f64>,
    /// an envelope's exact check and repair (CPU), once
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_ms: Option<f64>,
    pub runs: usize,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
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
    let m = rxpipe::reindex::reindex(&super::bench_mesh(base)?, &Default::default(), None)?.mesh;
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

/// The tasks [`run`] measures.
#[derive(Debug, Clone, Copy)]
pub struct Tasks {
    /// one level of Loop subdivision
    pub subdivide: bool,
    /// the outer envelope
    pub envelope: bool,
}

/// The `tasks` of each mesh: one level of subdivision on every strategy and on the stage's own
/// path, and the outer envelope on every strategy and each vertex once (CPU, and `gpu`'s),
/// `runs` timed runs after `warmup`.
pub fn run(
    names: &[&str],
    tasks: Tasks,
    runs: usize,
    warmup: usize,
    gpu: Option<&Arc<Gpu>>,
    progress: &dyn Fn(&str),
) -> Result<ProcessingReport, Error> {
    let mut report = ProcessingReport {
        machine: match gpu {
            Some(g) => Machine::of(g, &rxpipe::gpu::probe()),
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
        if !tasks.subdivide {
            paths.clear();
        } else if gpu.is_some() {
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
            let (mut times, mut kernels) = (Vec::new(), Vec::new());
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
                    kernels.extend(kernels_ms(&said));
                }
                asr = runs_per_triangle(&said);
            }
            report.rows.push(ProcessingRow {
                task: "subdivide".into(),
                mesh: name.to_string(),
                vertices: m.vertex_count(),
                triangles: m.triangle_count(),
                backend: backend.name().to_string(),
                path,
                runs_per_triangle: asr,
                ms: median(&times),
                kernel_ms: (!kernels.is_empty()).then(|| median(&kernels)),
                check_ms: None,
                runs,
            });
        }
        if tasks.envelope {
            envelope_rows(&m, name, runs, warmup, gpu, progress, &mut report.rows)?;
        }
    }
    Ok(report)
}

/// The outer envelope at [`ENVELOPE_DISTANCE`] of `m` on every strategy (CPU, and `gpu`'s) and
/// each vertex once (CPU).
fn envelope_rows(
    m: &Mesh,
    name: &str,
    runs: usize,
    warmup: usize,
    gpu: Option<&Arc<Gpu>>,
    progress: &dyn Fn(&str),
    rows: &mut Vec<ProcessingRow>,
) -> Result<(), Error> {
    use rxpipe::passes::envelope::{build_checked, Side};
    let mut paths: Vec<(BackendKind, Option<Strategy>)> = vec![(BackendKind::Cpu, None)];
    paths.extend(Strategy::all().map(|s| (BackendKind::Cpu, Some(s))));
    if gpu.is_some() {
        paths.extend(Strategy::all().map(|s| (BackendKind::Cuda, Some(s))));
    }
    for (backend, strategy) in paths {
        let path = strategy.map_or("each vertex".to_string(), |s| s.name().to_string());
        let (mut times, mut checks, mut asr) = (Vec::new(), Vec::new(), None);
        let mut kernels = Vec::new();
        for k in 0..warmup + runs {
            progress(&format!(
                "{name}: envelope {path} on the {backend}, run {}",
                k + 1
            ));
            let g = gpu.filter(|_| backend == BackendKind::Cuda);
            // (the exact check runs once a path: it is the same whatever ran the program)
            let (_, r) = build_checked(m, Side::Outer, ENVELOPE_DISTANCE, strategy, g, k == 0)
                .map_err(|e| Error::Backend(e.to_string()))?;
            if k == 0 {
                checks.push(r.check_ms);
            }
            if k >= warmup {
                times.push(r.program_ms);
                kernels.extend(r.kernel_ms);
            }
            asr = Some(r.runs as f64 / r.triangles.max(1) as f64);
        }
        rows.push(ProcessingRow {
            task: "envelope".into(),
            mesh: name.to_string(),
            vertices: m.vertex_count(),
            triangles: m.triangle_count(),
            backend: backend.name().to_string(),
            path,
            runs_per_triangle: asr,
            ms: median(&times),
            kernel_ms: (!kernels.is_empty()).then(|| median(&kernels)),
            check_ms: Some(median(&checks)),
            runs,
        });
    }
    Ok(())
}

/// The envelopes' distance: 2% of the diagonal, the paper's Figure 1c.
pub const ENVELOPE_DISTANCE: f64 = 0.02;

/// The kernels' milliseconds in a subdivision report ("; its kernels 0.123 ms").
fn kernels_ms(report: &str) -> Option<f64> {
    let (_, after) = report.split_once("its kernels ")?;
    after.split(' ').next()?.parse().ok()
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
            "# Geometry processing on the reuse strategies\n\n{}. Medians of {} runs of wall time after a warm-up.\n",
            self.machine,
            self.rows.first().map_or(0, |r| r.runs),
        );
        if self.rows.iter().any(|r| r.task == "subdivide") {
            s += "\n## One level of Loop subdivision\n\nEach strategy runs Loop's rules once for every new vertex its batches hold (src/passes/subdivide/streamed.rs on the CPU; on the GPU the geometry stage's kernels in the processing mode, the level made on the device: src/passes/subdivide/cuda.rs); `stage` is the subdivision stage's own path on the edges; `kernels ms` is the strategy's kernels alone on the GPU (CUDA events: what the paper times), `ms` the whole level (on the GPU the edges' triangles, the split, the rings, the batches, the runs, the records scattered and unpacked). The patch strategy's time includes patching the new triangles (RXMesh, on the host), which each level does anew. Runs a triangle: of the level's new triangles. The copy of the input is excluded (on the GPU its mesh is on the device and the time ends synchronised). Every path makes the same mesh, bit for bit (on the GPU within float rounding past 1,024 edges at a vertex; tests/subdivide.rs). The paper (GTX 1080 Ti, CUDA): the bunny in 0.57 ms, its 1.1 M-triangle buddha in 8.15 ms, every reuse strategy faster than naive.\n\n";
            s += &self.table("subdivide");
        }
        if self.rows.iter().any(|r| r.task == "envelope") {
            s += "\n## The outer envelope at 2% of the diagonal\n\nEvery vertex of the index stream is one run of the safe-offset program (a cast along its normal and a clearance test over the input's BVH: src/passes/envelope/cpu.rs, kernels/programs/envelope.cu) through the strategy; `each vertex` runs every vertex once on the CPU, with no batches. `ms` is the program's runs (on the GPU with the inputs' upload, the launch and the records' download); `check ms` is the exact check and repair that follows on the CPU (measured once a path: it is the same whatever ran the program). Every path gives the same envelope bit for bit (tests/envelope.rs). The paper (Table 3, GTX 1080 Ti): bunny naive 71.73, warp 29.41, hash 22.21, p.hash 21.74, sort 21.85 ms; sphere 15.08, 5.55, 4.02, 4.03, 4.03 ms; buddha 5021.8, 2112.45, 1595.31, 1516.15, 1509.76 ms.\n\n";
            s += &self.table("envelope");
        }
        s
    }

    fn table(&self, task: &str) -> String {
        let mut s = String::from(
            "| mesh | vertices | triangles | backend | path | runs a triangle | ms | kernels ms | check ms |\n|---|---:|---:|---|---|---:|---:|---:|---:|\n",
        );
        for r in self.rows.iter().filter(|r| r.task == task) {
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {:.2} | {} | {} |\n",
                r.mesh,
                r.vertices,
                r.triangles,
                r.backend,
                r.path,
                r.runs_per_triangle.map_or("".into(), |a| format!("{a:.3}")),
                r.ms,
                r.kernel_ms.map_or("".into(), |c| format!("{c:.3}")),
                r.check_ms.map_or("".into(), |c| format!("{c:.1}")),
            );
        }
        s
    }
}
