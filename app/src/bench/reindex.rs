//! The re-indexing benchmark (Wald's Table 1).

use super::{today, Machine};
use rxpipe::gpu::{median, Gpu};
use rxpipe::Error;
use serde::Serialize;
use std::sync::Arc;

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
pub fn run(
    gpu: Option<Arc<Gpu>>,
    sizes: &[u32],
    warmup: usize,
    runs: usize,
    cpu: bool,
    serial_limit_s: f64,
    progress: &dyn Fn(&str),
) -> Result<ReindexReport, Error> {
    use rxpipe::reindex::{cpu, cuda, paper_grid};
    let info = rxpipe::gpu::probe();
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
                            rxpipe::reindex::verify(&mesh, &out, None).map_err(Error::Backend)?;
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
