//! `rxpipe bench`: the paper's tables measured on this machine's GPU. Inputs stay on the device;
//! every time is the median of CUDA-event timings after a warm-up.

use crate::geometry::cuda::{CudaGeometry, CudaShader, DeviceMesh};
use crate::geometry::{Batches, Strategy, Uniforms, VertexIn, VertexOrder};
use crate::gpu::{median, Gpu};
use crate::{Error, Mesh};
use glam::{Mat4, Vec3};
use serde::Serialize;
use std::sync::Arc;

/// The meshes of the geometry benchmark, by name: the shared bunny and ogre, the icosphere of
/// level 9 (5.2 M triangles) and a grid of 104 bunnies (7.2 M triangles), all in Forsyth order.
pub const GEOMETRY_MESHES: [&str; 4] = ["bunny", "ogre", "icosphere:9", "bunny-grid:104"];

/// Loads a benchmark mesh by name (a shared mesh, a generator spec, or `bunny-grid:N`).
pub fn bench_mesh(name: &str) -> Result<Mesh, Error> {
    let shared = |f: &str| -> Result<Mesh, Error> {
        let dir = crate::io::shared_meshes_dir().ok_or_else(|| {
            Error::Backend(format!(
                "the benchmark needs {f} from ../shared/meshes (or set RXPIPE_MESHES)"
            ))
        })?;
        Ok(crate::io::load_mesh(dir.join(f))?)
    };
    Ok(match name {
        "bunny" => shared("stanford-bunny.obj")?,
        "ogre" => shared("ogre.obj")?,
        n if n.starts_with("bunny-grid:") => {
            let count: usize = n[11..]
                .parse()
                .map_err(|_| Error::Backend(format!("bad grid size in '{n}'")))?;
            bunny_grid(&shared("stanford-bunny.obj")?, count)
        }
        n => crate::mesh::from_spec(n)
            .ok_or_else(|| Error::Backend(format!("unknown benchmark mesh '{n}'")))?,
    })
}

/// `count` copies of `m` on a square-ish grid in the xz plane, in Forsyth order copy by copy.
pub fn bunny_grid(m: &Mesh, count: usize) -> Mesh {
    let mut base = m.clone();
    VertexOrder::Forsyth.arrange(&mut base);
    let (lo, hi) = base.bounds().unwrap_or((Vec3::ZERO, Vec3::ONE));
    let step = (hi - lo) * 1.1;
    let cols = (count as f64).sqrt().ceil() as usize;
    let mut out = Mesh {
        name: format!("{} grid of {count}", m.name),
        ..Default::default()
    };
    for k in 0..count {
        let mut c = base.clone();
        let (i, j) = ((k % cols) as f32, (k / cols) as f32);
        c.transform(Mat4::from_translation(Vec3::new(
            i * step.x,
            0.0,
            j * step.z,
        )));
        out.append(&c);
    }
    out
}

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
/// (the batches are checked to be identical).
#[derive(Debug, Clone, Serialize)]
pub struct PreprocessRow {
    pub mesh: String,
    pub batches: usize,
    pub cpu_ms: f64,
    pub gpu_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MeshRow {
    pub mesh: String,
    pub vertices: usize,
    pub triangles: usize,
}

/// Where and when a report was measured.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub device: String,
    pub driver: String,
    pub nvrtc: String,
    pub date: String,
}

impl Machine {
    fn of(gpu: &Gpu, info: &crate::gpu::CudaInfo) -> Machine {
        Machine {
            device: gpu.name.clone(),
            driver: info
                .driver_version
                .map_or("?".into(), |v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
            nvrtc: format!("{}.{}", gpu.nvrtc_version.0, gpu.nvrtc_version.1),
            date: today(),
        }
    }
}

impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} (driver {}, NVRTC {}), {}",
            self.device, self.driver, self.nvrtc, self.date
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct GeometryReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub meshes: Vec<MeshRow>,
    pub times: Vec<TimeRow>,
    pub asr: Vec<AsrRow>,
    pub roofline: Vec<RooflineRow>,
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

/// The strategies in the paper's Table 2 order.
pub fn table_strategies() -> Vec<Strategy> {
    ["naive", "warp", "hash", "phash", "sort", "multi"]
        .iter()
        .map(|n| Strategy::parse(n).unwrap())
        .collect()
}

/// Runs the geometry benchmark: per mesh, per shader load, per strategy, the median of `runs`
/// timed runs after `warmup`; plus the ASR of every strategy (a counting build) and the naive
/// kernel's roofline. `progress` is told what runs.
pub fn geometry(
    gpu: Arc<Gpu>,
    meshes: &[&str],
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<GeometryReport, Error> {
    let info = crate::gpu::probe();
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
        report.preprocess.push(PreprocessRow {
            mesh: name.into(),
            batches: b.len(),
            cpu_ms: median(&cpu_ms),
            gpu_ms: median(&gpu_ms),
        });
        report.meshes.push(MeshRow {
            mesh: name.into(),
            vertices: v.len(),
            triangles: m.triangle_count(),
        });
        let mut naive_transform = f64::NAN;
        for (shader, g) in &compiled {
            for s in table_strategies() {
                progress(&format!("{name}: {shader} {}", s.name()));
                let mut q = g.queue(&dm, s)?;
                let t = gpu.time(warmup, runs, || g.enqueue(s, &dm, &u, &mut q))?;
                let med = median(&t);
                if shader == "transform" && s == Strategy::Naive {
                    naive_transform = med;
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
        let unique = crate::geometry::cpu::unique_count(&m.indices, v.len()) as u64;
        let tris = m.triangle_count() as f64;
        for s in table_strategies() {
            let mut q = counting.queue(&dm, s)?;
            counting.enqueue(s, &dm, &u, &mut q)?;
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
        s += "## Vertex reuse against naive shading\n\nThe fastest streaming reuse strategy (warp, hash, phash or sort; multi is the non-streaming reference) per shader load, and naive's time over its time.\n\n| mesh | shader | naive ms | best | best ms | naive / best |\n|---|---|---:|---|---:|---:|\n";
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
                    s += &format!(
                        "| {} | {sh} | {:.3} | {} | {:.3} | {:.2} |\n",
                        m.mesh,
                        n.median_ms,
                        b.strategy,
                        b.median_ms,
                        n.median_ms / b.median_ms
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
        s += "\n## Dynamic batching preprocess (1023 indices, 256 vertices)\n\nOne CPU thread against the GPU (kernels/batching.cu); the two produce identical batches (checked on every run).\n\n| mesh | batches | CPU ms | GPU ms |\n|---|---:|---:|---:|\n";
        for r in &self.preprocess {
            s += &format!(
                "| {} | {} | {:.2} | {:.3} |\n",
                r.mesh, r.batches, r.cpu_ms, r.gpu_ms
            );
        }
        s
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    // civil-from-days (Howard Hinnant's algorithm)
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}")
}

/// The meshes of the frame benchmark (those of the geometry benchmark).
pub const FRAME_MESHES: [&str; 4] = GEOMETRY_MESHES;

/// One mesh and strategy of the frame benchmark: medians of CUDA-event stage times in ms.
#[derive(Debug, Clone, Serialize)]
pub struct FrameRow {
    pub mesh: String,
    pub strategy: String,
    pub triangles: u64,
    /// triangles left after setup (binned)
    pub rasterized: u64,
    pub asr: f64,
    pub geometry_ms: f64,
    pub setup_ms: f64,
    pub bin_ms: f64,
    pub raster_ms: f64,
    /// the device time of the whole frame (median of the per-frame sums)
    pub frame_ms: f64,
    /// host wall time of a frame including the download of colour and depth
    pub with_download_ms: f64,
    pub runs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct FrameReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub width: u32,
    pub height: u32,
    pub meshes: Vec<MeshRow>,
    pub rows: Vec<FrameRow>,
}

/// A camera looking at the bounds from the front and above, at the distance where the bounding
/// sphere's diameter spans `fraction` of the screen height.
pub fn camera_spanning(lo: Vec3, hi: Vec3, fraction: f32) -> crate::Camera {
    let mut c = crate::Camera::framing(lo, hi);
    let centre = (lo + hi) * 0.5;
    let r = ((hi - lo).length() * 0.5).max(1e-6);
    let dist = r / (fraction * (c.fov_y.to_radians() * 0.5).tan());
    c.eye = centre + (c.eye - centre).normalize() * dist;
    c.near = (dist - r).max(dist * 1e-3);
    c.far = dist + 2.0 * r;
    c
}

/// Runs the frame benchmark: whole frames (geometry, setup, binning, rasterisation and shading,
/// lit) of each mesh with each strategy at `size` on the GPU, the mesh framed so that its bounds
/// span 60% of the screen height.
pub fn frame(
    gpu: Arc<Gpu>,
    meshes: &[&str],
    strategies: &[Strategy],
    size: (u32, u32),
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<FrameReport, Error> {
    let info = crate::gpu::probe();
    let mut report = FrameReport {
        machine: Machine::of(&gpu, &info),
        width: size.0,
        height: size.1,
        meshes: vec![],
        rows: vec![],
    };
    let renderer = crate::Renderer::from_gpu(gpu);
    for &name in meshes {
        progress(&format!("{name}: loading"));
        let m = bench_mesh(name)?;
        report.meshes.push(MeshRow {
            mesh: name.into(),
            vertices: m.vertex_count(),
            triangles: m.triangle_count(),
        });
        // the grid is already in Forsyth order, copy by copy
        let order = if name.starts_with("bunny-grid") {
            VertexOrder::Input
        } else {
            VertexOrder::Forsyth
        };
        let mut scene = crate::Scene::from_meshes(name, vec![m]);
        let (lo, hi) = scene.bounds().unwrap_or((Vec3::splat(-1.0), Vec3::ONE));
        scene.camera = camera_spanning(lo, hi, 0.6);
        let mut prepared: Option<crate::Prepared> = None;
        for &s in strategies {
            progress(&format!("{name}: {}", s.name()));
            let p = crate::Pipeline::builder()
                .strategy(s)
                .order(order)
                .build(&renderer)?;
            if !prepared.as_ref().is_some_and(|pr| p.is_prepared_for(pr)) {
                prepared = Some(p.prepare(&scene)?);
            }
            let pr = prepared.as_ref().expect("prepared above");
            let mut f = crate::Frame::empty();
            for _ in 0..warmup {
                p.render_into(pr, &scene, &scene.camera, size, 0.0, &mut f)?;
            }
            let mut stages: [Vec<f64>; 6] = Default::default();
            for _ in 0..runs {
                p.render_into(pr, &scene, &scene.camera, size, 0.0, &mut f)?;
                let st = &f.stats;
                let r = &st.raster;
                let dev = st.geometry_ms + r.setup_ms + r.bin_ms + r.raster_ms;
                for (v, x) in stages.iter_mut().zip([
                    st.geometry_ms,
                    r.setup_ms,
                    r.bin_ms,
                    r.raster_ms,
                    dev,
                    st.total_ms,
                ]) {
                    v.push(x);
                }
            }
            report.rows.push(FrameRow {
                mesh: name.into(),
                strategy: s.name().into(),
                triangles: f.stats.geometry.triangles,
                rasterized: f.stats.raster.rasterized,
                asr: f.stats.geometry.asr(),
                geometry_ms: median(&stages[0]),
                setup_ms: median(&stages[1]),
                bin_ms: median(&stages[2]),
                raster_ms: median(&stages[3]),
                frame_ms: median(&stages[4]),
                with_download_ms: median(&stages[5]),
                runs,
            });
        }
    }
    Ok(report)
}

impl FrameReport {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Whole frames on the GPU\n\n{}. {}x{}, lit (Blinn-Phong), back-face culling, each mesh framed so that its bounding sphere spans 60% of the screen height. Medians of CUDA-event stage times in ms over the runs after warm-up; 'frame' is the median of the per-frame device totals; 'with download' is the host's wall time including the download of colour and depth.\n\n| mesh | triangles | strategy | ASR | rasterised | geometry | setup | binning | raster + shade | frame | with download |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            self.machine, self.width, self.height
        );
        for r in &self.rows {
            s += &format!(
                "| {} | {} | {} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {:.3} | **{:.3}** | {:.2} |\n",
                r.mesh,
                r.triangles,
                r.strategy,
                r.asr,
                r.rasterized,
                r.geometry_ms,
                r.setup_ms,
                r.bin_ms,
                r.raster_ms,
                r.frame_ms,
                r.with_download_ms
            );
        }
        s
    }
}

/// The grid sizes of the re-indexing benchmark (Wald's Table 1).
pub const REINDEX_SIZES: [u32; 5] = [8, 64, 1024, 4096, 8192];

/// One size of the re-indexing benchmark. Times in ms: CPU wall-clock medians, GPU CUDA-event
/// medians on device-resident input (transfers separate). `None`: not run.
#[derive(Debug, Clone, Serialize)]
pub struct ReindexRow {
    pub n: u32,
    pub vertices_in: usize,
    pub vertices_out: usize,
    pub indices: usize,
    pub serial_ms: Option<f64>,
    pub parallel_ms: Option<f64>,
    pub meshopt_ms: Option<f64>,
    pub gpu_sort_ms: Option<f64>,
    pub gpu_hash_ms: Option<f64>,
    /// radix passes run and skipped (a digit equal in every key) by the sort
    pub sort_passes: Option<(u32, u32)>,
    pub upload_ms: Option<f64>,
    pub download_ms: Option<f64>,
    /// bytes of reading the input and writing the output once (vertices and indices)
    pub roofline_bytes: usize,
    /// the time those bytes take at the GPU's peak DRAM bandwidth
    pub roofline_ms: Option<f64>,
    pub cpu_runs: usize,
    pub gpu_runs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReindexReport {
    /// the GPU, when there is one
    pub machine: Option<Machine>,
    pub cpu: String,
    pub cpu_threads: usize,
    pub peak_gb_s: Option<f64>,
    pub date: String,
    pub rows: Vec<ReindexRow>,
}

/// The CPU's model name (Linux), for reports.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Wall-clock milliseconds of `f`, and its result.
fn wall<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = std::time::Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64() * 1e3, r)
}

/// Runs the re-indexing benchmark on the paper's grid for each `n`: CPU serial (skipped where the
/// previous size predicts more than `serial_limit_s`), CPU parallel, meshopt's remap (the CPU
/// columns only with `cpu`), and with a GPU both CUDA methods, each checked to find (n + 1)²
/// vertices.
#[allow(clippy::too_many_arguments)]
pub fn reindex(
    gpu: Option<Arc<Gpu>>,
    sizes: &[u32],
    warmup: usize,
    runs: usize,
    cpu: bool,
    serial_limit_s: f64,
    progress: &dyn Fn(&str),
) -> Result<ReindexReport, Error> {
    use crate::reindex::{cpu, cuda, paper_grid};
    let info = crate::gpu::probe();
    let peak = gpu
        .as_ref()
        .and_then(|_| info.devices.first().and_then(|d| d.memory_bandwidth_gb_s));
    let mut report = ReindexReport {
        machine: gpu.as_ref().map(|g| Machine::of(g, &info)),
        cpu: cpu_name(),
        cpu_threads: rayon::current_num_threads(),
        peak_gb_s: peak,
        date: today(),
        rows: vec![],
    };
    let reindexer = gpu.as_ref().map(cuda::Reindexer::new).transpose()?;
    let mut serial_ns_per_vertex: Option<f64> = None;
    for &n in sizes {
        progress(&format!("generating the {n}x{n} grid"));
        let mesh = paper_grid(n);
        let expect = ((n as usize) + 1).pow(2);
        let nv = mesh.vertex_count();
        // large inputs get fewer CPU runs: a median of 3, or one run past 50 M vertices
        let cpu_runs = if nv > 50_000_000 {
            1
        } else if nv > 1_000_000 {
            3
        } else {
            runs
        };
        let check = |what: &str, got: usize| -> Result<(), Error> {
            if got == expect {
                Ok(())
            } else {
                Err(Error::Backend(format!(
                    "bench reindex {n}: {what} found {got} vertices, expected {expect}"
                )))
            }
        };
        let timed = |what: &str, f: &dyn Fn() -> Result<usize, Error>| -> Result<f64, Error> {
            progress(&format!("{n}x{n}: {what}"));
            let mut t = Vec::new();
            for _ in 0..cpu_runs {
                let (ms, got) = wall(f);
                check(what, got?)?;
                t.push(ms);
            }
            Ok(median(&t))
        };
        let serial_ms = match serial_ns_per_vertex {
            _ if !cpu => None,
            Some(ns) if ns * nv as f64 * 1e-9 > serial_limit_s => None,
            _ => {
                let ms = timed("CPU serial", &|| {
                    Ok(cpu::serial(&mesh, None)?.report.vertices_out)
                })?;
                serial_ns_per_vertex = Some(ms * 1e6 / nv as f64);
                Some(ms)
            }
        };
        let parallel_ms = cpu
            .then(|| {
                timed("CPU parallel", &|| {
                    Ok(cpu::parallel(&mesh, None)?.report.vertices_out)
                })
            })
            .transpose()?;
        let meshopt_ms = cpu
            .then(|| {
                timed("meshopt remap", &|| {
                    Ok(meshopt::generate_vertex_remap(&mesh.positions, Some(&mesh.indices)).0)
                })
            })
            .transpose()?;
        let roofline_bytes =
            (nv * 12 + mesh.indices.len() * 4) + (expect * 12 + mesh.indices.len() * 4);
        let mut row = ReindexRow {
            n,
            vertices_in: nv,
            vertices_out: expect,
            indices: mesh.indices.len(),
            serial_ms,
            parallel_ms,
            meshopt_ms,
            gpu_sort_ms: None,
            gpu_hash_ms: None,
            sort_passes: None,
            upload_ms: None,
            download_ms: None,
            roofline_bytes,
            roofline_ms: peak.map(|p| roofline_bytes as f64 / (p * 1e6)),
            cpu_runs,
            gpu_runs: runs,
        };
        if let (Some(g), Some(r)) = (&gpu, &reindexer) {
            progress(&format!("{n}x{n}: upload"));
            g.sync()?;
            let (up, input) = wall(|| cuda::DeviceInput::upload(g, &mesh, None));
            let input = input?;
            g.sync()?;
            row.upload_ms = Some(up);
            for method in [cuda::GpuMethod::Sort, cuda::GpuMethod::Hash] {
                progress(&format!("{n}x{n}: GPU {}", method.method().name()));
                let mut ws = r.workspace(&input, method)?;
                let t = g.time(warmup, runs, || r.run(&input, &mut ws))?;
                check(method.method().name(), ws.vertices_out)?;
                match method {
                    cuda::GpuMethod::Sort => {
                        row.gpu_sort_ms = Some(median(&t));
                        row.sort_passes = Some(ws.passes);
                    }
                    cuda::GpuMethod::Hash => {
                        row.gpu_hash_ms = Some(median(&t));
                        let (down, out) = wall(|| r.download(&input, &ws, &mesh));
                        let out = out?;
                        row.download_ms = Some(down);
                        if n <= 1024 {
                            crate::reindex::verify(&mesh, &out, None).map_err(Error::Backend)?;
                        }
                    }
                }
            }
        }
        report.rows.push(row);
    }
    Ok(report)
}

impl ReindexReport {
    pub fn markdown(&self) -> String {
        let gpu = self
            .machine
            .as_ref()
            .map_or("no GPU".to_string(), |m| m.to_string());
        let mut s = format!(
            "# Re-indexing (Wald's Table 1)\n\nGPU: {gpu}. CPU: {} ({} threads). The paper's generator: an N x N grid of quads, each with its own four corners and an unused centre (5 N² vertices in, (N + 1)² out), 3-float positions, two triangles per quad. CPU times are wall-clock medians (of fewer runs at large N, see JSON); GPU times are CUDA-event medians of {} runs after warm-up on device-resident input, transfers listed separately. Times in ms.\n\n| N | vertices in | vertices out | CPU serial | CPU parallel | meshopt remap | GPU sort | GPU hash | upload | download |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            self.cpu,
            self.cpu_threads,
            self.rows.first().map_or(0, |r| r.gpu_runs)
        );
        let o = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.2}"));
        for r in &self.rows {
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.n,
                r.vertices_in,
                r.vertices_out,
                o(r.serial_ms),
                o(r.parallel_ms),
                o(r.meshopt_ms),
                o(r.gpu_sort_ms),
                o(r.gpu_hash_ms),
                o(r.upload_ms),
                o(r.download_ms)
            );
        }
        if let Some(peak) = self.peak_gb_s {
            s += &format!("\n## Against the roofline\n\nBytes of reading the input (12-byte vertices, 4-byte indices) and writing the output once; roofline time at the GPU's peak of {peak:.0} GB/s; achieved GB/s = those bytes / time. Radix passes: 8-bit digits of the 96-bit keys that were run / skipped (a digit equal in every key is skipped: on this planar grid the four bytes of z = 0, and the low mantissa bytes of x and y, zero for multiples of 1/(2N)).\n\n| N | MB | roofline ms | sort ms | sort GB/s | sort passes | hash ms | hash GB/s | hash / roofline |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for r in &self.rows {
                let gbs = |t: Option<f64>| t.map(|t| r.roofline_bytes as f64 / (t * 1e6));
                s += &format!(
                    "| {} | {:.1} | {} | {} | {} | {} | {} | {} | {} |\n",
                    r.n,
                    r.roofline_bytes as f64 / 1e6,
                    r.roofline_ms.map_or("—".into(), |v| format!("{v:.3}")),
                    o(r.gpu_sort_ms),
                    gbs(r.gpu_sort_ms).map_or("—".into(), |v| format!("{v:.0}")),
                    r.sort_passes
                        .map_or("—".into(), |(a, b)| format!("{a} / {b}")),
                    o(r.gpu_hash_ms),
                    gbs(r.gpu_hash_ms).map_or("—".into(), |v| format!("{v:.0}")),
                    match (r.gpu_hash_ms, r.roofline_ms) {
                        (Some(h), Some(l)) => format!("{:.1}x", h / l),
                        _ => "—".into(),
                    }
                );
            }
        }
        s
    }
}
