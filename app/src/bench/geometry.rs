//! The geometry benchmark: the paper's Table 2 (ms per strategy and shader load), Table 1
//! (shading rates), the naive kernel's roofline and the batching preprocess.

use super::{bench_mesh, Machine, MeshRow};
use glam::{Mat4, Vec3};
use rxpipe::geometry::cuda::{CudaGeometry, CudaShader, DeviceMesh, DevicePatches};
use rxpipe::geometry::{Batches, PatchBatches, Strategy, Uniforms, VertexIn, VertexOrder};
use rxpipe::gpu::{median, Gpu};
use rxpipe::Error;
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize)]
pub struct TimeRow {
    pub mesh: String,
    pub shader: String,
    pub strategy: String,
    pub median_ms: f64,
    pub min_ms: f64,
    pub runs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct AsrRow {
    pub mesh: String,
    pub strategy: String,
    pub invocations: u64,
    pub asr: f64,
    pub ideal: f64,
}

/// The naive kernel against the DRAM roofline: the bytes it must move (indices read, each
/// referenced vertex read once, the 64-byte vertices of the queue written) over its median time.
#[derive(Debug, Clone, Serialize)]
pub struct RooflineRow {
    pub mesh: String,
    pub bytes: u64,
    pub naive_ms: f64,
    pub achieved_gb_s: f64,
    pub peak_gb_s: f64,
    pub fraction: f64,
}

/// The dynamic batching preprocess (1023 indices, 256 vertices) on one CPU thread and on the GPU
/// (the batches are checked to be identical), and the patch strategy's: the patch order (Lloyd
/// patching of 512-face patches, on every CPU core) and the lists.
#[derive(Debug, Clone, Serialize)]
pub struct PreprocessRow {
    pub mesh: String,
    pub batches: usize,
    pub cpu_ms: f64,
    pub gpu_ms: f64,
    pub patches: usize,
    pub patch_order_ms: f64,
    pub patch_lists_ms: f64,
}

/// The patch kernel against the DRAM roofline: per list entry a 4-byte vertex id and the 32-byte
/// vertex read, a 64-byte shaded vertex written (standard transform).
#[derive(Debug, Clone, Serialize)]
pub struct PatchRooflineRow {
    pub mesh: String,
    pub list_entries: u64,
    pub bytes: u64,
    pub patch_ms: f64,
    pub achieved_gb_s: f64,
    pub fraction: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct GeometryReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub meshes: Vec<MeshRow>,
    pub times: Vec<TimeRow>,
    pub asr: Vec<AsrRow>,
    pub roofline: Vec<RooflineRow>,
    pub patch_roofline: Vec<PatchRooflineRow>,
    pub preprocess: Vec<PreprocessRow>,
}

/// The shader loads of the paper's Table 2.
pub fn shader_loads() -> Vec<(String, CudaShader)> {
    let mut v = vec![("transform".to_string(), CudaShader::transform())];
    for n in [256, 512, 1024] {
        v.push((format!("fma{n}"), CudaShader::fma(n)));
    }
    v
}

/// The strategies in the paper's Table 2 order, and the patches.
pub fn table_strategies() -> Vec<Strategy> {
    ["naive", "warp", "hash", "phash", "sort", "multi", "patch"]
        .iter()
        .map(|n| Strategy::parse(n).unwrap())
        .collect()
}

/// Runs the geometry benchmark: per mesh, per shader load, per strategy, the median of `runs`
/// timed runs after `warmup`; plus the ASR of every strategy (a counting build) and the naive
/// kernel's roofline. `progress` is told what runs.
pub fn run(
    gpu: Arc<Gpu>,
    meshes: &[&str],
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<GeometryReport, Error> {
    let info = rxpipe::gpu::probe();
    let peak = info
        .devices
        .first()
        .and_then(|d| d.memory_bandwidth_gb_s)
        .unwrap_or(f64::NAN);
    let mut report = GeometryReport {
        machine: Machine::of(&gpu, &info),
        meshes: vec![],
        times: vec![],
        asr: vec![],
        roofline: vec![],
        patch_roofline: vec![],
        preprocess: vec![],
    };
    let loads = shader_loads();
    progress("compiling kernels");
    let compiled: Vec<(String, CudaGeometry)> = loads
        .into_iter()
        .map(|(n, s)| Ok((n, CudaGeometry::new(gpu.clone(), s, false)?)))
        .collect::<Result<_, Error>>()?;
    let counting = CudaGeometry::new(gpu.clone(), CudaShader::transform(), true)?;
    let eye = Vec3::new(0.0, 0.0, 3.0);
    let u = Uniforms::new(
        Mat4::IDENTITY,
        Mat4::perspective_rh(0.8, 16.0 / 9.0, 0.1, 100.0)
            * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        0.0,
    );
    for &name in meshes {
        progress(&format!("{name}: loading and ordering"));
        let mut m = bench_mesh(name)?;
        if !name.starts_with("bunny-grid") {
            VertexOrder::Forsyth.arrange(&mut m);
        }
        let v = VertexIn::from_mesh(&m);
        progress(&format!("{name}: dynamic batches"));
        let mut cpu_ms = Vec::new();
        let mut b = Batches::default();
        for _ in 0..3 {
            let t = std::time::Instant::now();
            b = Batches::build(&m.indices, v.len(), 1023, 256)?;
            cpu_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut dm = DeviceMesh::upload(&gpu, &v, &m.indices, None)?;
        let gpu_ms = gpu.time(1, runs.min(10), || dm.build_batches(&gpu, 1023, 256))?;
        if dm.download_batches(&gpu)?.as_ref() != Some(&b) {
            return Err(Error::Backend(format!(
                "{name}: the GPU's dynamic batches differ from the CPU's"
            )));
        }
        // the patch strategy's input: the same mesh in patch order, with its lists
        progress(&format!("{name}: patch order"));
        let mut pm = m.clone();
        let t = std::time::Instant::now();
        let patching = VertexOrder::Patch(rxpipe::geometry::order::PATCH_FACES)
            .arrange(&mut pm)
            .ok_or_else(|| Error::Backend(format!("{name}: the patch order failed")))?;
        let patch_order_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = std::time::Instant::now();
        let lists = PatchBatches::build(&pm.indices, pm.vertex_count(), &patching.patch_of_face)?;
        let patch_lists_ms = t.elapsed().as_secs_f64() * 1e3;
        let list_entries = lists.invocations() as u64;
        let patches = lists.len();
        let pv = VertexIn::from_mesh(&pm);
        let mut dmp = DeviceMesh::upload(&gpu, &pv, &pm.indices, None)?;
        dmp.patches = Some(DevicePatches::upload(&gpu, lists)?);
        drop((pm, pv));
        let mesh_for = |s: Strategy| if s == Strategy::Patch { &dmp } else { &dm };
        report.preprocess.push(PreprocessRow {
            mesh: name.into(),
            batches: b.len(),
            cpu_ms: median(&cpu_ms),
            gpu_ms: median(&gpu_ms),
            patches,
            patch_order_ms,
            patch_lists_ms,
        });
        report.meshes.push(MeshRow {
            mesh: name.into(),
            vertices: v.len(),
            triangles: m.triangle_count(),
        });
        let mut naive_transform = f64::NAN;
        let mut patch_transform = f64::NAN;
        for (shader, g) in &compiled {
            for s in table_strategies() {
                progress(&format!("{name}: {shader} {}", s.name()));
                let dm = mesh_for(s);
                let mut q = g.queue(dm, s, false)?;
                let t = gpu.time(warmup, runs, || g.enqueue(s, dm, &u, &mut q))?;
                let med = median(&t);
                if shader == "transform" && s == Strategy::Naive {
                    naive_transform = med;
                }
                if shader == "transform" && s == Strategy::Patch {
                    patch_transform = med;
                }
                report.times.push(TimeRow {
                    mesh: name.into(),
                    shader: shader.clone(),
                    strategy: s.name().into(),
                    median_ms: med,
                    min_ms: t.iter().cloned().fold(f64::INFINITY, f64::min),
                    runs: t.len(),
                });
            }
        }
        progress(&format!("{name}: shading rates"));
        // referenced vertices (multi also shades the unreferenced ones, so its counts cannot say)
        let unique = rxpipe::geometry::cpu::unique_count(&m.indices, v.len()) as u64;
        let tris = m.triangle_count() as f64;
        for s in table_strategies() {
            let dm = mesh_for(s);
            let mut q = counting.queue(dm, s, false)?;
            counting.enqueue(s, dm, &u, &mut q)?;
            let counts = gpu.download(&q.counts, v.len())?;
            let inv: u64 = counts.iter().map(|&c| c as u64).sum();
            report.asr.push(AsrRow {
                mesh: name.into(),
                strategy: s.name().into(),
                invocations: inv,
                asr: inv as f64 / tris,
                ideal: unique as f64 / tris,
            });
        }
        let bytes = m.indices.len() as u64 * (4 + 64) + unique * 32;
        let gbs = bytes as f64 / (naive_transform * 1e-3) / 1e9;
        report.roofline.push(RooflineRow {
            mesh: name.into(),
            bytes,
            naive_ms: naive_transform,
            achieved_gb_s: gbs,
            peak_gb_s: peak,
            fraction: gbs / peak,
        });
        let bytes = list_entries * (4 + 32 + 64);
        let gbs = bytes as f64 / (patch_transform * 1e-3) / 1e9;
        report.patch_roofline.push(PatchRooflineRow {
            mesh: name.into(),
            list_entries,
            bytes,
            patch_ms: patch_transform,
            achieved_gb_s: gbs,
            fraction: gbs / peak,
        });
    }
    Ok(report)
}

impl GeometryReport {
    /// The report as markdown: Table 2 per mesh, Table 1, the roofline.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Geometry stage on the GPU\n\n{}. Medians of CUDA-event timings in ms, inputs resident on the device, dynamic batches of 1023 indices / 256 vertices, warp voting 96 indices per warp, hashing 128 threads per batch. Every strategy writes the indexed triangle queue (each batch's shaded vertices once, 64 bytes each, and three 4-byte corners per triangle; naive writes three vertices per triangle, multi the shaded vertex buffer, its corners being the indices, copied once when the queue is made).\n\n",
            self.machine
        );
        let strategies = table_strategies();
        for m in &self.meshes {
            s += &format!(
                "## {} ({} vertices, {} triangles)\n\n| shader | {} |\n|---|{}\n",
                m.mesh,
                m.vertices,
                m.triangles,
                strategies
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(" | "),
                "---:|".repeat(strategies.len())
            );
            let mut shaders: Vec<&str> = vec![];
            for t in self.times.iter().filter(|t| t.mesh == m.mesh) {
                if !shaders.contains(&t.shader.as_str()) {
                    shaders.push(&t.shader);
                }
            }
            for sh in shaders {
                let cells: Vec<String> = strategies
                    .iter()
                    .map(|st| {
                        self.times
                            .iter()
                            .find(|t| t.mesh == m.mesh && t.shader == sh && t.strategy == st.name())
                            .map_or("-".into(), |t| format!("{:.3}", t.median_ms))
                    })
                    .collect();
                s += &format!("| {sh} | {} |\n", cells.join(" | "));
            }
            s += "\n";
        }
        s +=
            &format!(
            "## Shading rate (invocations per triangle)\n\n| mesh | {} | ideal |\n|---|{}---:|\n",
            strategies.iter().map(|s| s.name()).collect::<Vec<_>>().join(" | "),
            "---:|".repeat(strategies.len())
        );
        for m in &self.meshes {
            let rows: Vec<&AsrRow> = self.asr.iter().filter(|r| r.mesh == m.mesh).collect();
            let cells: Vec<String> = strategies
                .iter()
                .map(|st| {
                    rows.iter()
                        .find(|r| r.strategy == st.name())
                        .map_or("-".into(), |r| format!("{:.3}", r.asr))
                })
                .collect();
            let ideal = rows.first().map_or(f64::NAN, |r| r.ideal);
            s += &format!("| {} | {} | {ideal:.3} |\n", m.mesh, cells.join(" | "));
        }
        s += "## Vertex reuse against naive shading\n\nThe fastest streaming reuse strategy (warp, hash, phash or sort; multi is the non-streaming reference) per shader load, and naive's time over its time; then the patch strategy (its mesh in patch order) and naive's time over its time.\n\n| mesh | shader | naive ms | best | best ms | naive / best | patch ms | naive / patch |\n|---|---|---:|---|---:|---:|---:|---:|\n";
        for m in &self.meshes {
            let mut shaders: Vec<&str> = vec![];
            for t in self.times.iter().filter(|t| t.mesh == m.mesh) {
                if !shaders.contains(&t.shader.as_str()) {
                    shaders.push(&t.shader);
                }
            }
            for sh in shaders {
                let of = |name: &str| {
                    self.times
                        .iter()
                        .find(|t| t.mesh == m.mesh && t.shader == sh && t.strategy == name)
                };
                let best = ["warp", "hash", "phash", "sort"]
                    .iter()
                    .filter_map(|n| of(n))
                    .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
                if let (Some(n), Some(b)) = (of("naive"), best) {
                    let patch = of("patch").map_or(f64::NAN, |p| p.median_ms);
                    s += &format!(
                        "| {} | {sh} | {:.3} | {} | {:.3} | {:.2} | {:.3} | {:.2} |\n",
                        m.mesh,
                        n.median_ms,
                        b.strategy,
                        b.median_ms,
                        n.median_ms / b.median_ms,
                        patch,
                        n.median_ms / patch
                    );
                }
            }
        }
        s += "\n## Naive kernel against the DRAM roofline (standard transform)\n\nBytes it must move: 4-byte indices read, each referenced 32-byte vertex read once, a 64-byte vertex written per index.\n\n| mesh | MB | ms | GB/s | peak GB/s | fraction |\n|---|---:|---:|---:|---:|---:|\n";
        for r in &self.roofline {
            s += &format!(
                "| {} | {:.1} | {:.3} | {:.0} | {:.0} | {:.0}% |\n",
                r.mesh,
                r.bytes as f64 / 1e6,
                r.naive_ms,
                r.achieved_gb_s,
                r.peak_gb_s,
                100.0 * r.fraction
            );
        }
        s += "\n## Patch kernel against the DRAM roofline (standard transform)\n\nBytes it must move: per list entry a 4-byte vertex id and the 32-byte vertex read, a 64-byte shaded vertex written.\n\n| mesh | list entries | MB | ms | GB/s | fraction |\n|---|---:|---:|---:|---:|---:|\n";
        for r in &self.patch_roofline {
            s += &format!(
                "| {} | {} | {:.1} | {:.3} | {:.0} | {:.0}% |\n",
                r.mesh,
                r.list_entries,
                r.bytes as f64 / 1e6,
                r.patch_ms,
                r.achieved_gb_s,
                100.0 * r.fraction
            );
        }
        s += "\n## Preprocess\n\nDynamic batching (1023 indices, 256 vertices): one CPU thread against the GPU (kernels/batching.cu); the two produce identical batches (checked on every run). The patch strategy: the patch order (Lloyd patching into patches of at most 512 faces and the regrouped index buffer, on every CPU core) and the patches' vertex lists.\n\n| mesh | batches | CPU ms | GPU ms | patches | patch order ms | lists ms |\n|---|---:|---:|---:|---:|---:|---:|\n";
        for r in &self.preprocess {
            s += &format!(
                "| {} | {} | {:.2} | {:.3} | {} | {:.0} | {:.0} |\n",
                r.mesh,
                r.batches,
                r.cpu_ms,
                r.gpu_ms,
                r.patches,
                r.patch_order_ms,
                r.patch_lists_ms
            );
        }
        s
    }
}
