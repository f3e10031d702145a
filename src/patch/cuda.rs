//! Patching on the GPU (kernels/patching.cu), with the contract of [`super::cpu`] and its very
//! result: the face graph, the connected components, every Lloyd iteration's breadth-first
//! assignment, its re-centring and its added seeds run on the device, level-synchronously, with
//! the same tie-breaking (smallest patch, smallest face) as the CPU's parallel searches. The host
//! draws the initial seeds from the component labels ([`super::cpu::initial_seeds`]), reads the
//! patch sizes and new seeds between iterations (a few bytes per patch), and numbers the patches
//! at the end ([`super::cpu::finish`]). Patches still oversized after the last iteration, which
//! the limits make rare, are split on the host as the CPU does.

use super::cpu::{self, FaceGraph};
use super::{PatchError, PatchOptions, PatchReport, Patching};
use crate::gpu::kernels::{Source, BLOCKS, SORT};
use crate::gpu::scan::Scan;
use crate::gpu::{launch_1d, Context, Gpu, GpuError};
use cudarc::driver::{CudaSlice, PushKernelArg};
use std::time::Instant;

/// The patching kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("patching.cu");

/// Neighbours stored per face (RXPT_DEG).
const DEG: usize = 6;
const NONE: u32 = u32::MAX;
/// Search levels launched between two reads of the progress counter.
const LEVELS_PER_CHECK: u32 = 4;

/// Device bytes patching `faces` faces over `vertices` vertices needs.
pub fn required_bytes(faces: usize, vertices: usize) -> usize {
    // indices 3, vertex-face lists 3, graph DEG + 1, labels/patch/dist 3 words per face; counts,
    // offsets and cursors per vertex; scan sums
    4 * (faces * (3 + 3 + DEG + 1 + 3) + 3 * (vertices + 1) + Scan::sums_len(vertices + 1))
}

struct Kernels {
    scan: Scan,
    f: std::collections::HashMap<&'static str, cudarc::driver::CudaFunction>,
}

const NAMES: [&str; 11] = [
    "rxpt_vf_count",
    "rxpt_vf_fill",
    "rxpt_graph",
    "rxpt_hook",
    "rxpt_compress",
    "rxpt_flood_init",
    "rxpt_flood_seed",
    "rxpt_flood_level",
    "rxpt_sizes",
    "rxpt_last_init",
    "rxpt_last_level",
];

/// [`super::cpu::patch_indices`] on the GPU: the same patching, bit for bit (its report's time
/// aside).
pub fn patch_indices(
    gpu: &Gpu,
    indices: &[u32],
    opts: &PatchOptions,
) -> Result<Patching, crate::patch::PatchError> {
    if opts.max_faces == 0 || opts.max_faces > u16::MAX as u32 {
        return Err(PatchError::Limit(opts.max_faces));
    }
    let t0 = Instant::now();
    let limit = opts.max_faces as usize;
    let indices = &indices[..indices.len() / 3 * 3];
    let n = indices.len() / 3;
    let vertices = indices.iter().max().map_or(0, |&m| m as usize + 1);
    check_fits(gpu, n, vertices)?;
    let mut report = PatchReport {
        faces: n,
        limit: opts.max_faces,
        ..Default::default()
    };
    if n == 0 {
        report.ms = t0.elapsed().as_secs_f64() * 1e3;
        return Ok(cpu::finish(Vec::new(), report));
    }
    let mut d = Searches::new(gpu, indices, vertices)?;
    let parent = d.components(&mut report)?;
    let root = gpu.download(&parent, n)?;
    report.components = root
        .iter()
        .enumerate()
        .filter(|&(f, &r)| r == f as u32)
        .count();
    let seeds = cpu::initial_seeds(&root, limit, opts.seed);
    drop(root);
    let Assigned {
        mut patch_of,
        sizes,
        seeds,
    } = d.lloyd(parent, seeds, limit, opts, &mut report)?;
    if sizes.iter().any(|&s| s as usize > limit) {
        // rare (the iterations ran out): split on the host, as the CPU does
        let g = FaceGraph::build(indices);
        report.split = cpu::split_oversized(&g, &mut patch_of, seeds.len(), limit);
    }
    let mut p = cpu::finish(patch_of, report);
    p.report.ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok(p)
}

/// Refuses, before anything is allocated, a mesh whose corners pass the kernels' 32-bit
/// counts or whose patching needs more device memory than is free.
fn check_fits(gpu: &Gpu, n: usize, vertices: usize) -> Result<(), PatchError> {
    if 3 * n > u32::MAX as usize / 2 {
        return Err(GpuError::Limit(format!(
            "{n} faces: GPU patching takes fewer than {} faces",
            u32::MAX / 6
        ))
        .into());
    }
    let need = required_bytes(n, vertices);
    let (free, _) = gpu.ctx.mem_get_info().ctx("querying free GPU memory")?;
    if need > free {
        return Err(GpuError::OutOfMemory {
            what: format!("patching {n} faces: {need} bytes needed, {free} free"),
            bytes: need,
            total: gpu.memory_bytes,
        }
        .into());
    }
    Ok(())
}

/// What the Lloyd iterations leave: each face's patch, each patch's size, the seeds.
struct Assigned {
    patch_of: Vec<u32>,
    sizes: Vec<u32>,
    seeds: Vec<u32>,
}

/// The face graph on the device, with the kernels and the counters its searches share
/// (non-manifold edges, isolated faces, faces reached, a change flag).
struct Searches<'g> {
    gpu: &'g Gpu,
    k: Kernels,
    nbr: CudaSlice<u32>,
    deg: CudaSlice<u32>,
    counters: CudaSlice<u64>,
    n32: u32,
}

impl<'g> Searches<'g> {
    /// Builds the face graph of `indices` (over `vertices` vertices): the faces around every
    /// vertex (counted, scanned, filled), then each face's neighbours across its edges.
    fn new(gpu: &'g Gpu, indices: &[u32], vertices: usize) -> Result<Searches<'g>, GpuError> {
        let module = gpu.module("patching", &[BLOCKS, SORT, KERNELS], &[])?;
        let mut f = std::collections::HashMap::new();
        for k in NAMES {
            f.insert(k, gpu.function(&module, k)?);
        }
        let k = Kernels {
            scan: Scan::new(gpu, &module)?,
            f,
        };
        let s = &gpu.stream;
        let n = indices.len() / 3;
        let n32 = n as u32;
        let c32 = 3 * n32;
        let idx = gpu.upload(indices, "indices")?;
        let mut counters: CudaSlice<u64> = gpu.zeros(4, "patching counters")?;
        let mut count: CudaSlice<u32> = gpu.zeros(vertices + 1, "vertex face counts")?;
        let mut l = s.launch_builder(&k.f["rxpt_vf_count"]);
        l.arg(&idx).arg(&n32).arg(&mut count);
        // SAFETY: one thread per corner; every index is below `vertices`.
        unsafe { launch_1d(l, c32, "rxpt_vf_count") }?;
        let mut offsets: CudaSlice<u32> = gpu.zeros(vertices + 1, "vertex face offsets")?;
        let mut sums: CudaSlice<u32> = gpu.zeros(Scan::sums_len(vertices + 1), "scan sums")?;
        let mut total: CudaSlice<u32> = gpu.zeros(1, "scan total")?;
        // (the extra zero count makes offsets[vertices] the total)
        k.scan.run(
            gpu,
            &count,
            vertices + 1,
            0,
            &mut offsets,
            &mut sums,
            &mut total.slice_mut(0..1),
        )?;
        s.memset_zeros(&mut count).ctx("clearing the cursors")?;
        let mut vf: CudaSlice<u32> = gpu.zeros(3 * n, "vertex face lists")?;
        let mut l = s.launch_builder(&k.f["rxpt_vf_fill"]);
        l.arg(&idx)
            .arg(&n32)
            .arg(&offsets)
            .arg(&mut count)
            .arg(&mut vf);
        // SAFETY: one thread per corner; each vertex's cursor stays within its own count.
        unsafe { launch_1d(l, c32, "rxpt_vf_fill") }?;
        drop(sums);
        let mut nbr: CudaSlice<u32> = gpu.zeros(DEG * n, "face graph")?;
        let mut deg: CudaSlice<u32> = gpu.zeros(n, "face degrees")?;
        let mut l = s.launch_builder(&k.f["rxpt_graph"]);
        l.arg(&idx)
            .arg(&n32)
            .arg(&offsets)
            .arg(&vf)
            .arg(&mut nbr)
            .arg(&mut deg)
            .arg(&mut counters);
        // SAFETY: one thread per face writing its own at most DEG neighbours (two per distinct
        // edge); the lists are those filled above.
        unsafe { launch_1d(l, n32, "rxpt_graph") }?;
        Ok(Searches {
            gpu,
            k,
            nbr,
            deg,
            counters,
            n32,
        })
    }

    /// The connected components, each face labelled by its component's smallest face (hooking
    /// and compressing until nothing changes); the graph's counts go into `report`.
    fn components(&mut self, report: &mut PatchReport) -> Result<CudaSlice<u32>, GpuError> {
        let (gpu, n32) = (self.gpu, self.n32);
        let s = &gpu.stream;
        let ids: Vec<u32> = (0..n32).collect();
        let mut parent = gpu.upload(&ids, "component labels")?;
        drop(ids);
        loop {
            let mut flag = self.counters.slice_mut(3..4);
            s.memset_zeros(&mut flag).ctx("clearing")?;
            let mut l = s.launch_builder(&self.k.f["rxpt_hook"]);
            l.arg(&self.nbr)
                .arg(&self.deg)
                .arg(&n32)
                .arg(&mut parent)
                .arg(&mut self.counters);
            // SAFETY: one thread per face; labels and neighbours are faces below n.
            unsafe { launch_1d(l, n32, "rxpt_hook") }?;
            let mut l = s.launch_builder(&self.k.f["rxpt_compress"]);
            l.arg(&n32).arg(&mut parent);
            // SAFETY: as above; labels only ever point to smaller faces, so the walks end.
            unsafe { launch_1d(l, n32, "rxpt_compress") }?;
            if gpu.download(&self.counters, 4)?[3] == 0 {
                break;
            }
        }
        let c = gpu.download(&self.counters, 4)?;
        report.non_manifold_edges = c[0] as usize;
        report.isolated_faces = c[1] as usize;
        Ok(parent)
    }

    /// Lloyd iterations from `seeds`: each a breadth-first assignment of every face to its
    /// nearest seed, until no patch holds more than `limit` faces or the iterations run out;
    /// between two, every patch re-centred and, every fifth, one more seed per oversized
    /// patch. `patch` is a face buffer to search in. Returns each face's patch, the patch
    /// sizes and the seeds.
    fn lloyd(
        &mut self,
        mut patch: CudaSlice<u32>,
        mut seeds: Vec<u32>,
        limit: usize,
        opts: &PatchOptions,
        report: &mut PatchReport,
    ) -> Result<Assigned, GpuError> {
        let (gpu, n) = (self.gpu, self.n32 as usize);
        let mut dist: CudaSlice<u32> = gpu.zeros(n, "search distances")?;
        let mut iterations = 0;
        let size = loop {
            let seeds_d = gpu.upload(&seeds, "seeds")?;
            let size = self.flood(&seeds_d, &mut patch, &mut dist)?;
            iterations += 1;
            let largest = size.iter().copied().max().unwrap_or(0) as usize;
            if largest <= limit || iterations >= opts.max_iterations {
                break size;
            }
            let p32 = seeds.len() as u32;
            let centre = self.reached_last(&patch, &mut dist, 0, &seeds_d, None, p32)?;
            for (s, c) in seeds.iter_mut().zip(centre) {
                if c != NONE {
                    *s = c;
                }
            }
            if iterations % 5 == 0 {
                let pick: Vec<u32> = size.iter().map(|&s| (s as usize > limit) as u32).collect();
                let seeds_d = gpu.upload(&seeds, "seeds")?;
                let far = self.reached_last(&patch, &mut dist, 1, &seeds_d, Some(&pick), p32)?;
                let added: Vec<u32> = far.into_iter().filter(|&f| f != NONE).collect();
                report.seeds_added += added.len();
                seeds.extend(added);
            }
        };
        report.iterations = iterations;
        Ok(Assigned {
            patch_of: gpu.download(&patch, n)?,
            sizes: size,
            seeds,
        })
    }

    /// One breadth-first assignment of every face to its nearest seed (level by level, ties to
    /// the smaller patch); returns the patch sizes.
    fn flood(
        &mut self,
        seeds: &CudaSlice<u32>,
        patch: &mut CudaSlice<u32>,
        dist: &mut CudaSlice<u32>,
    ) -> Result<Vec<u32>, GpuError> {
        let (gpu, n32) = (self.gpu, self.n32);
        let s = &gpu.stream;
        let p32 = seeds.len() as u32;
        let mut reached = self.counters.slice_mut(2..3);
        s.memset_zeros(&mut reached).ctx("clearing")?;
        let mut l = s.launch_builder(&self.k.f["rxpt_flood_init"]);
        l.arg(&n32).arg(&mut *patch).arg(&mut *dist);
        // SAFETY: one thread per face.
        unsafe { launch_1d(l, n32, "rxpt_flood_init") }?;
        let mut l = s.launch_builder(&self.k.f["rxpt_flood_seed"]);
        l.arg(seeds)
            .arg(&p32)
            .arg(&mut *patch)
            .arg(&mut *dist)
            .arg(&mut self.counters);
        // SAFETY: one thread per seed; seeds are distinct faces below n.
        unsafe { launch_1d(l, p32, "rxpt_flood_seed") }?;
        let (flood, nbr, deg) = (&self.k.f["rxpt_flood_level"], &self.nbr, &self.deg);
        run_levels(
            gpu,
            n32 as usize,
            &mut self.counters,
            &mut |level, counters| {
                let mut l = s.launch_builder(flood);
                l.arg(nbr)
                    .arg(deg)
                    .arg(&n32)
                    .arg(&level)
                    .arg(&mut *patch)
                    .arg(&mut *dist)
                    .arg(counters);
                // SAFETY: one thread per face; neighbours and patches index below n and the
                // seed count.
                unsafe { launch_1d(l, n32, "rxpt_flood_level") }
            },
        )?;
        let mut sizes: CudaSlice<u32> = gpu.zeros(seeds.len(), "patch sizes")?;
        let mut l = s.launch_builder(&self.k.f["rxpt_sizes"]);
        l.arg(&*patch).arg(&n32).arg(&mut sizes);
        // SAFETY: one thread per face; every face holds a patch below the seed count (every
        // component has a seed, so the search reached every face).
        unsafe { launch_1d(l, n32, "rxpt_sizes") }?;
        gpu.download(&sizes, seeds.len())
    }

    /// [`super::cpu::reached_last`] on the device: mode 0 from the faces next to another patch,
    /// mode 1 from the seeds of the patches `pick` flags.
    fn reached_last(
        &mut self,
        patch: &CudaSlice<u32>,
        dist: &mut CudaSlice<u32>,
        mode: u32,
        seeds: &CudaSlice<u32>,
        pick: Option<&[u32]>,
        patches: u32,
    ) -> Result<Vec<u32>, GpuError> {
        let (gpu, k, nbr, deg) = (self.gpu, &self.k, &self.nbr, &self.deg);
        let counters = &mut self.counters;
        let s = &gpu.stream;
        let n32 = deg.len() as u32;
        let pick = gpu.upload(pick.unwrap_or(&[0]), "oversized patches")?;
        let mut best: CudaSlice<u64> = gpu.zeros(patches as usize, "last faces")?;
        let mut reached = counters.slice_mut(2..3);
        s.memset_zeros(&mut reached).ctx("clearing")?;
        let mut l = s.launch_builder(&k.f["rxpt_last_init"]);
        l.arg(nbr)
            .arg(deg)
            .arg(&n32)
            .arg(patch)
            .arg(&mode)
            .arg(seeds)
            .arg(&pick)
            .arg(&mut *dist)
            .arg(&mut best)
            .arg(&mut *counters);
        // SAFETY: one thread per face; patches index `best`, `seeds` and (mode 1) `pick`, which
        // hold one entry per patch.
        unsafe { launch_1d(l, n32, "rxpt_last_init") }?;
        let f = &k.f["rxpt_last_level"];
        run_levels(gpu, deg.len(), counters, &mut |level, counters| {
            let mut l = s.launch_builder(f);
            l.arg(nbr)
                .arg(deg)
                .arg(&n32)
                .arg(patch)
                .arg(&level)
                .arg(&mut *dist)
                .arg(&mut best)
                .arg(counters);
            // SAFETY: one thread per face; as above.
            unsafe { launch_1d(l, n32, "rxpt_last_level") }
        })?;
        Ok(gpu
            .download(&best, patches as usize)?
            .into_iter()
            .map(|b| if b == 0 { NONE } else { !(b as u32) })
            .collect())
    }
}

/// Launches one level of a search: the level, and the counters it adds the faces it reaches to.
type LevelLaunch<'a> = dyn FnMut(u32, &mut CudaSlice<u64>) -> Result<(), GpuError> + 'a;

/// Runs a search's levels from 1 until one reaches no face (or all `faces` are reached),
/// `LEVELS_PER_CHECK` launches between two reads of the progress counter (the levels past the
/// last reach nothing).
fn run_levels(
    gpu: &Gpu,
    faces: usize,
    counters: &mut CudaSlice<u64>,
    launch_level: &mut LevelLaunch,
) -> Result<(), GpuError> {
    let mut reached = gpu.download(counters, 4)?[2];
    let mut level = 1;
    loop {
        for _ in 0..LEVELS_PER_CHECK {
            launch_level(level, counters)?;
            level += 1;
        }
        let now = gpu.download(counters, 4)?[2];
        if now == reached || now >= faces as u64 {
            return Ok(());
        }
        reached = now;
    }
}
