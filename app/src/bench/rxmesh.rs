//! The RXMesh benchmark (the paper's Table 2 and section 8.4): the eight queries through the
//! patches against Parallel Directed Edges on the default, sorted and shuffled element orders;
//! vertex normals through the FV and VF queries against the hardwired kernel; patching time and
//! memory per face. GPU times are medians of CUDA-event timings after a warm-up; both query
//! implementations write the same lists into the same preallocated layout (the paper's set-up),
//! and the report says whether their lists agree as sets.

use super::{bench_mesh, Machine, MeshRow};
use rxpipe::gpu::{median, Context, Gpu};
use rxpipe::passes::normals::cuda as ncuda;
use rxpipe::passes::{NormalsMode, NormalsVia};
use rxpipe::patch::query::cuda::{CudaQueries, DevicePatchData, Rows};
use rxpipe::patch::query::pde::{CudaPde, DirectedEdges};
use rxpipe::patch::{PatchData, PatchOptions, Query, QueryResult};
use rxpipe::{Error, Mesh};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// The meshes of the benchmark: the bunny, the 5.2 M-face icosphere, the 7.2 M-face bunny grid.
pub const RXMESH_MESHES: [&str; 3] = ["bunny", "icosphere:9", "bunny-grid:104"];

/// The element orders of the paper's Table 2.
pub const ORDERS: [&str; 3] = ["default", "sorted", "shuffled"];

/// One query on one mesh and order: medians in ms.
#[derive(Debug, Clone, Serialize)]
pub struct QueryRow {
    pub mesh: String,
    pub order: String,
    pub query: Query,
    /// list entries written
    pub entries: usize,
    /// RXMesh writing its lists in patch order (the paper's 'thread order'): the time compared
    pub rxmesh_ms: f64,
    /// RXMesh writing its lists in element order, as PDE does
    pub rxmesh_element_rows_ms: f64,
    /// `None` where directed edges cannot hold the mesh
    pub pde_ms: Option<f64>,
    /// a device-to-device copy of as many bytes as the lists hold (each byte read once and
    /// written once): about the least traffic a query that writes these lists moves, the
    /// roofline both implementations share
    pub copy_ms: f64,
    /// PDE's time over RXMesh's
    pub speedup: Option<f64>,
    /// whether the two gave the same lists as sets
    pub agree: Option<bool>,
}

/// Vertex normals (Max's weights) on one mesh and order: medians in ms.
#[derive(Debug, Clone, Serialize)]
pub struct NormalsRow {
    pub mesh: String,
    pub order: String,
    pub hardwired_ms: f64,
    pub fv_ms: f64,
    pub vf_ms: f64,
    /// the largest difference of a normal component from the hardwired kernel's
    pub max_difference: f64,
}

/// Patching one mesh on the host (wall time) and the memory of the result.
#[derive(Debug, Clone, Serialize)]
pub struct PatchingRow {
    pub mesh: String,
    pub faces: usize,
    pub patches: usize,
    pub threads: usize,
    pub patching_ms: f64,
    /// the same patching on the GPU (wall time, median, upload and download included)
    pub gpu_patching_ms: f64,
    /// how many Lloyd iterations it took
    pub iterations: u32,
    pub patch_data_ms: f64,
    pub bytes_per_face: f64,
    pub first_order_bytes_per_face: f64,
    pub ribbon_overhead: f64,
    /// directed edges' bytes per face (`None` where they cannot hold the mesh)
    pub pde_bytes_per_face: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RxmeshReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub patch_faces: u32,
    pub runs: usize,
    pub meshes: Vec<MeshRow>,
    pub patching: Vec<PatchingRow>,
    pub queries: Vec<QueryRow>,
    pub normals: Vec<NormalsRow>,
}

/// `m` with its faces grouped patch by patch (a patching of `m`) and its vertices numbered in
/// first-use order: the paper's "sorted" input.
pub fn sorted(m: &Mesh, patching: &rxpipe::patch::Patching) -> Mesh {
    let faces: Vec<u32> = patching.faces_of_patches().concat();
    let mut indices: Vec<u32> = faces
        .iter()
        .flat_map(|&f| {
            m.indices[3 * f as usize..3 * f as usize + 3]
                .iter()
                .copied()
        })
        .collect();
    renumber_by_first_use(m, &mut indices)
}

/// `m` with its faces and its vertices in a pseudo-random order (`seed`).
pub fn shuffled(m: &Mesh, seed: u64) -> Mesh {
    let mut state = seed | 1;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut shuffle = |n: usize| {
        let mut p: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            p.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        p
    };
    let faces = shuffle(m.triangle_count());
    let vertices = shuffle(m.vertex_count());
    let mut out = Mesh::new(
        &m.name,
        vec![glam::Vec3::ZERO; m.vertex_count()],
        faces
            .iter()
            .flat_map(|&f| {
                m.indices[3 * f as usize..3 * f as usize + 3]
                    .iter()
                    .map(|&v| vertices[v as usize])
            })
            .collect(),
    );
    for (v, &to) in vertices.iter().enumerate() {
        out.positions[to as usize] = m.positions[v];
    }
    out.normals = None;
    out
}

/// `indices` (of `m`'s vertices) renumbered in first-use order, unused vertices last.
fn renumber_by_first_use(m: &Mesh, indices: &mut [u32]) -> Mesh {
    const UNSET: u32 = u32::MAX;
    let mut new_of = vec![UNSET; m.vertex_count()];
    let mut order = Vec::with_capacity(m.vertex_count());
    for i in indices.iter_mut() {
        if new_of[*i as usize] == UNSET {
            new_of[*i as usize] = order.len() as u32;
            order.push(*i);
        }
        *i = new_of[*i as usize];
    }
    order.extend((0..m.vertex_count() as u32).filter(|&v| new_of[v as usize] == UNSET));
    let mut out = Mesh::new(
        &m.name,
        order.iter().map(|&v| m.positions[v as usize]).collect(),
        indices.to_vec(),
    );
    out.normals = None;
    out
}

/// `r` with every list sorted.
fn as_sets(mut r: QueryResult) -> QueryResult {
    for k in 0..r.len() {
        let (a, b) = (r.offsets[k] as usize, r.offsets[k + 1] as usize);
        r.items[a..b].sort_unstable();
    }
    r
}

/// Runs the benchmark on `meshes` (names as [`bench_mesh`] takes them) with patches of at most
/// `patch_faces` faces; `progress` is told what runs.
pub fn run(
    gpu: Arc<Gpu>,
    meshes: &[&str],
    patch_faces: u32,
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<RxmeshReport, Error> {
    let info = rxpipe::gpu::probe();
    let mut report = RxmeshReport {
        machine: Machine::of(&gpu, &info),
        patch_faces,
        runs,
        meshes: vec![],
        patching: vec![],
        queries: vec![],
        normals: vec![],
    };
    progress("compiling kernels");
    let b = Bench {
        cq: CudaQueries::new(gpu.clone())?,
        nmod: ncuda::module(&gpu)?,
        gpu,
        opts: PatchOptions {
            max_faces: patch_faces,
            ..Default::default()
        },
        warmup,
        runs,
    };
    for &name in meshes {
        progress(&format!("{name}: loading"));
        let mut base = bench_mesh(name)?;
        base.normals = None;
        report.meshes.push(MeshRow {
            mesh: name.into(),
            vertices: base.vertex_count(),
            triangles: base.triangle_count(),
        });
        let mut default_patching = None;
        for order in ORDERS {
            progress(&format!("{name} ({order}): patching"));
            let m = match order {
                "default" => base.clone(),
                "sorted" => sorted(&base, default_patching.as_ref().expect("default first")),
                _ => shuffled(&base, 0x5eed),
            };
            let t = Instant::now();
            let patching = rxpipe::patch::cpu::patch(&m, &b.opts)?;
            let patching_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let data = PatchData::build(&m, &patching)?;
            let patch_data_ms = t.elapsed().as_secs_f64() * 1e3;
            let pde = DirectedEdges::build(&m.indices, m.vertex_count());
            if order == "default" {
                progress(&format!("{name}: patching on the GPU"));
                let gpu_patching_ms = b.gpu_patching(name, &m, &patching)?;
                let mem = data.memory();
                report.patching.push(PatchingRow {
                    mesh: name.into(),
                    faces: m.triangle_count(),
                    patches: patching.len(),
                    threads: rayon::current_num_threads(),
                    patching_ms,
                    gpu_patching_ms,
                    iterations: patching.report.iterations,
                    patch_data_ms,
                    bytes_per_face: mem.bytes_per_face,
                    first_order_bytes_per_face: mem.first_order_bytes_per_face,
                    ribbon_overhead: mem.ribbon_overhead,
                    pde_bytes_per_face: pde
                        .as_ref()
                        .ok()
                        .map(|d| d.bytes() as f64 / m.triangle_count().max(1) as f64),
                });
                default_patching = Some(patching.clone());
            }
            if let Err(e) = &pde {
                progress(&format!("{name} ({order}): no directed edges: {e}"));
            }
            let dd = DevicePatchData::upload(&b.gpu, &data)?;
            let cpde = match &pde {
                Ok(d) => Some(CudaPde::upload(b.gpu.clone(), d)?),
                Err(_) => None,
            };
            for q in Query::ALL {
                progress(&format!("{name} ({order}): {q}"));
                let row = b.query(q, &dd, cpde.as_ref(), &format!("{name} ({order})"))?;
                report.queries.push(QueryRow {
                    mesh: name.into(),
                    order: order.into(),
                    ..row
                });
            }
            progress(&format!("{name} ({order}): normals"));
            report.normals.push(NormalsRow {
                mesh: name.into(),
                order: order.into(),
                ..b.normals(&m, &dd)?
            });
        }
    }
    Ok(report)
}

/// What every measurement of the benchmark uses.
struct Bench {
    gpu: Arc<Gpu>,
    cq: CudaQueries,
    nmod: ncuda::Module,
    opts: PatchOptions,
    warmup: usize,
    runs: usize,
}

impl Bench {
    /// The median of CUDA-event timings of `f`.
    fn time(&self, f: &mut dyn FnMut() -> Result<(), Error>) -> Result<f64, Error> {
        Ok(median(&self.gpu.time(self.warmup, self.runs, f)?))
    }

    /// The GPU patching's median host time, each run checked equal to the CPU's `patching`.
    fn gpu_patching(
        &self,
        name: &str,
        m: &Mesh,
        patching: &rxpipe::patch::Patching,
    ) -> Result<f64, Error> {
        let mut gpu_times = Vec::new();
        for _ in 0..self.warmup + self.runs {
            let t = Instant::now();
            let g = rxpipe::patch::cuda::patch_indices(&self.gpu, &m.indices, &self.opts)?;
            gpu_times.push(t.elapsed().as_secs_f64() * 1e3);
            if g.patch_of_face != patching.patch_of_face {
                return Err(Error::Backend(format!(
                    "{name}: the GPU patching differs from the CPU's"
                )));
            }
        }
        Ok(median(&gpu_times[self.warmup..]))
    }

    /// Query `q` by RXMesh in patch rows and in element rows (their lists checked equal), a
    /// copy of the lists' bytes, and by PDE where the mesh has directed edges (its sets
    /// compared); the row's mesh and order are left for the caller.
    fn query(
        &self,
        q: Query,
        dd: &DevicePatchData,
        cpde: Option<&CudaPde>,
        what: &str,
    ) -> Result<QueryRow, Error> {
        let (gpu, cq) = (&self.gpu, &self.cq);
        let mut by_patch = cq.layout(dd, q, None, Rows::Patch)?;
        let rxmesh_ms = self.time(&mut || Ok(cq.fill(dd, &mut by_patch)?))?;
        let mut by_element = cq.layout(dd, q, None, Rows::Element)?;
        let rxmesh_element_rows_ms = self.time(&mut || Ok(cq.fill(dd, &mut by_element)?))?;
        let total = by_element.total();
        let rx = by_element.download(gpu, dd)?;
        if by_patch.download(gpu, dd)? != rx {
            return Err(Error::Backend(format!(
                "{what}: {q}'s lists differ between patch and element rows"
            )));
        }
        let copy_ms = {
            let from = gpu.zeros::<u32>(total, "lists to copy")?;
            let mut to = gpu.zeros::<u32>(total, "copied lists")?;
            self.time(&mut || {
                Ok(gpu
                    .stream
                    .memcpy_dtod(&from, &mut to)
                    .ctx("copying lists")?)
            })?
        };
        let (mut pde_ms, mut agree) = (None, None);
        if let Some(p) = cpde {
            let mut items = gpu.zeros::<u32>(total.max(1), "PDE lists")?;
            pde_ms = Some(self.time(&mut || Ok(p.fill(q, by_element.offsets(), &mut items)?))?);
            let pd = as_sets(QueryResult {
                query: Some(q),
                offsets: rx.offsets.clone(),
                items: gpu.download(&items, total)?,
            });
            agree = Some(as_sets(rx) == pd);
        }
        Ok(QueryRow {
            mesh: String::new(),
            order: String::new(),
            query: q,
            entries: total,
            rxmesh_ms,
            rxmesh_element_rows_ms,
            pde_ms,
            copy_ms,
            speedup: pde_ms.map(|p| p / rxmesh_ms),
            agree,
        })
    }

    /// Vertex normals by the hardwired kernel and through the FV and VF queries, with the
    /// largest difference between them; the row's mesh and order are left for the caller.
    fn normals(&self, m: &Mesh, dd: &DevicePatchData) -> Result<NormalsRow, Error> {
        let (gpu, nmod) = (&self.gpu, &self.nmod);
        let pos: Vec<f32> = m.positions.iter().flat_map(|p| p.to_array()).collect();
        let pos = gpu.upload(&pos, "positions")?;
        let idx = gpu.upload(&m.indices, "indices")?;
        let (n, t) = (m.vertex_count(), m.triangle_count() as u32);
        let mode = NormalsMode::Max;
        let hardwired_ms = self.time(&mut || {
            ncuda::index_normals(gpu, nmod, &pos, &idx, n, t, mode)?;
            Ok(())
        })?;
        let mut via_ms = [0.0; 2];
        let want = gpu.download(
            &ncuda::index_normals(gpu, nmod, &pos, &idx, n, t, mode)?,
            3 * n,
        )?;
        let mut max_difference = 0.0f64;
        for (k, via) in [NormalsVia::Fv, NormalsVia::Vf].into_iter().enumerate() {
            via_ms[k] = self.time(&mut || {
                ncuda::patch_normals(gpu, nmod, dd, &pos, mode, via)?;
                Ok(())
            })?;
            let got = gpu.download(
                &ncuda::patch_normals(gpu, nmod, dd, &pos, mode, via)?,
                3 * n,
            )?;
            for (a, b) in got.iter().zip(&want) {
                max_difference = max_difference.max((a - b).abs() as f64);
            }
        }
        Ok(NormalsRow {
            mesh: String::new(),
            order: String::new(),
            hardwired_ms,
            fv_ms: via_ms[0],
            vf_ms: via_ms[1],
            max_difference,
        })
    }
}

impl RxmeshReport {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# RXMesh: queries, normals and patching\n\n{}. Patches of at most {} faces. GPU times are medians of CUDA-event timings over {} runs after warm-up, in ms. Both query implementations write every element's list into preallocated compressed rows (laid out beforehand, not timed), each in its threads' order as the paper's section 7.1 has it: PDE a row per element in global id order (a thread per element), RXMesh patch by patch, each patch's owned elements in local order ('RXMesh'; 'element rows': RXMesh writing PDE's rows instead). RXMesh's lists come out in the documented order (sorted in the kernel; both of its layouts give the same lists, checked), PDE's in walk order; 'agree' says whether they hold the same sets; 'copy' is a device-to-device copy of the lists' bytes (read once, written once), about the least a query writing them can take. Speedup is PDE's time over RXMesh's in patch rows (above 1: RXMesh is faster).\n\n",
            self.machine, self.patch_faces, self.runs
        );
        s += "| mesh | vertices | triangles |\n|---|---:|---:|\n";
        for m in &self.meshes {
            s += &format!("| {} | {} | {} |\n", m.mesh, m.vertices, m.triangles);
        }
        s += "\n## Queries (Table 2)\n\n| mesh | order | query | entries | RXMesh | element rows | PDE | copy | speedup | agree |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|\n";
        for r in &self.queries {
            s += &format!(
                "| {} | {} | {} | {} | {:.3} | {:.3} | {} | {:.3} | {} | {} |\n",
                r.mesh,
                r.order,
                r.query,
                r.entries,
                r.rxmesh_ms,
                r.rxmesh_element_rows_ms,
                r.pde_ms.map_or("-".into(), |v| format!("{v:.3}")),
                r.copy_ms,
                r.speedup.map_or("-".into(), |v| format!("**{v:.2}**")),
                r.agree.map_or("-", |a| if a { "yes" } else { "NO" }),
            );
        }
        s += "\n## Speedup over PDE by order (mean over the meshes PDE holds)\n\n| order | VV | VE | VF | EV | EF | FV | FE | FF |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for order in ORDERS {
            s += &format!("| {order} |");
            for q in Query::ALL {
                let v: Vec<f64> = self
                    .queries
                    .iter()
                    .filter(|r| r.order == order && r.query == q)
                    .filter_map(|r| r.speedup)
                    .collect();
                s += &if v.is_empty() {
                    " - |".to_string()
                } else {
                    format!(" {:.2} |", v.iter().sum::<f64>() / v.len() as f64)
                };
            }
            s += "\n";
        }
        s += "\n## Vertex normals (Max's weights, section 8.4)\n\nHardwired: one thread per triangle of the index buffer, double atomics, then a normalising pass. FV: the same sums over each patch's owned faces, corners read from EV and FE in shared memory (RXMesh's Listing 1). VF: each owned vertex summed over its patch's faces in shared memory and written once. Each includes allocating and clearing its buffers.\n\n| mesh | order | hardwired | FV | VF | FV / hardwired | VF / hardwired | largest difference |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
        for r in &self.normals {
            s += &format!(
                "| {} | {} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} | {:.1e} |\n",
                r.mesh,
                r.order,
                r.hardwired_ms,
                r.fv_ms,
                r.vf_ms,
                r.fv_ms / r.hardwired_ms,
                r.vf_ms / r.hardwired_ms,
                r.max_difference
            );
        }
        s += "\n## Patching and memory\n\nWall time of the CPU patching (Lloyd, the host's threads) and of the same patching on the GPU (median; upload, host steps and download included; the result checked equal to the CPU's), and of building the patch data on the host; bytes per face of the patch data (the paper: 45.4, 34 for first-order queries only) and of directed edges (the paper: 42).\n\n| mesh | faces | patches | iterations | threads | CPU patching ms | GPU patching ms | patch data ms | bytes/face | first-order bytes/face | ribbon overhead | PDE bytes/face |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for r in &self.patching {
            s += &format!(
                "| {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {} |\n",
                r.mesh,
                r.faces,
                r.patches,
                r.iterations,
                r.threads,
                r.patching_ms,
                r.gpu_patching_ms,
                r.patch_data_ms,
                r.bytes_per_face,
                r.first_order_bytes_per_face,
                r.ribbon_overhead,
                r.pde_bytes_per_face
                    .map_or("-".into(), |v| format!("{v:.1}"))
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The triangles of `m` as position triples, rotated to start at the smallest, sorted.
    fn triangles(m: &Mesh) -> Vec<[[u32; 3]; 3]> {
        let mut v: Vec<[[u32; 3]; 3]> = m
            .indices
            .chunks_exact(3)
            .map(|t| {
                let p = [0, 1, 2].map(|k| m.positions[t[k] as usize].to_array().map(f32::to_bits));
                let r = (0..3).min_by_key(|&k| p[k]).unwrap();
                [p[r], p[(r + 1) % 3], p[(r + 2) % 3]]
            })
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn sorted_and_shuffled_orders_keep_the_triangles() {
        let m = rxpipe::mesh::torus(1.0, 0.3, 40, 12);
        let p = rxpipe::patch::cpu::patch(&m, &PatchOptions::default()).unwrap();
        let s = sorted(&m, &p);
        let h = shuffled(&m, 7);
        assert_eq!(triangles(&s), triangles(&m));
        assert_eq!(triangles(&h), triangles(&m));
        assert_ne!(h.indices, m.indices);
        // sorted: the faces of a patch are consecutive, vertices in first-use order
        let mut seen = 0;
        for &i in &s.indices {
            assert!(i <= seen);
            seen = seen.max(i + 1);
        }
    }
}
