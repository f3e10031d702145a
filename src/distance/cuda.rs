//! The least and the greatest distance between two meshes on the GPU (kernels/distance.cu),
//! gDist's algorithm: the front of node pairs starts at the two roots and is expanded breadth
//! first, k levels of each tree an expansion (the most that keep the front within [`FRONT`]
//! pairs, at least one), each thread one child pair; a pair stays unless the best its boxes could
//! hold misses the global bound, which every pair's sure bound tightens (an atomic minimum of
//! keys, as in [`super::cpu::Goal`]). When both trees are at their leaves, each surviving leaf
//! pair's triangles are measured and the least pair at the best distance picked. The whole
//! search is one cooperative launch with barriers of the grid between its steps, and one
//! read-back of its result ([`Distance::query`]).

use super::bvh::Bvh;
use super::cpu::Goal;
use super::triangle::Aabb;
use super::{closest, farthest, Closest, DistanceError, Farthest, SLACK};
use crate::gpu::kernels::Source;
use crate::gpu::{Context, Gpu};
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DevicePtr, DevicePtrMut, PushKernelArg};
use rxpipe_core::mesh::Mesh;
use std::sync::Arc;

/// The stage's kernels.
pub const KERNELS: Source<'static> = rxpipe_gpu::kernel_source!("distance.cu");

/// The triangle functions the search and other kernels share, operation for operation as
/// [`super::triangle`] (kernels/triangle.cuh).
pub const TRIANGLE: Source<'static> = rxpipe_gpu::kernel_source!("triangle.cuh");

/// How many pairs an expansion aims to make at most (gDist's C, 1024 x 256): the front of n
/// pairs is expanded by the most levels k with n 4^k <= FRONT.
pub const FRONT: u64 = 1 << 18;

/// How many levels of boxes under the root one block a tree refits in one launch (2^9 nodes on
/// the widest): the levels below take a launch each, for all trees placed together. A launch
/// costs more than such a level's work.
const TOP_LEVELS: u32 = 10;
const TOP_THREADS: u32 = 512;

/// A mesh and its BVH on the device.
pub struct DeviceMesh {
    boxes: CudaSlice<f32>,
    positions: CudaSlice<f32>,
    indices: CudaSlice<u32>,
    order: CudaSlice<u32>,
    triangles: u32,
    depth: u32,
    /// with [`DeviceMesh::placed`]: the positions in object space, which `positions` holds
    /// under a transform ([`Distance::place`])
    object: Option<CudaSlice<f32>>,
}

impl DeviceMesh {
    /// Uploads `mesh` (checked) with its BVH.
    pub fn new(gpu: &Gpu, mesh: &Mesh, bvh: &Bvh) -> Result<DeviceMesh, DistanceError> {
        let boxes: Vec<f32> = bvh.boxes.iter().flatten().flatten().copied().collect();
        let positions: Vec<f32> = mesh.positions.iter().flat_map(|p| p.to_array()).collect();
        Ok(DeviceMesh {
            boxes: gpu.upload(&boxes, "the BVH's boxes")?,
            positions: gpu.upload(&positions, "positions")?,
            indices: gpu.upload(&mesh.indices, "indices")?,
            order: gpu.upload(&bvh.order, "the BVH's triangle order")?,
            triangles: bvh.triangles() as u32,
            depth: bvh.depth,
            object: None,
        })
    }

    /// Uploads `mesh` (checked) in object space with its tree built there, to be placed in the
    /// world by [`Distance::place`]; until then it stands at the identity.
    pub fn placed(gpu: &Gpu, mesh: &Mesh, bvh: &Bvh) -> Result<DeviceMesh, DistanceError> {
        let mut m = DeviceMesh::new(gpu, mesh, bvh)?;
        let positions: Vec<f32> = mesh.positions.iter().flat_map(|p| p.to_array()).collect();
        m.object = Some(gpu.upload(&positions, "object-space positions")?);
        Ok(m)
    }
}

impl DeviceMesh {
    /// The positions and boxes on the device (for tests: what [`Distance::place`] made).
    pub fn download(&self, gpu: &Gpu) -> Result<(Vec<glam::Vec3>, Vec<Aabb>), DistanceError> {
        let p = gpu.download(&self.positions, self.positions.len())?;
        let b = gpu.download(&self.boxes, self.boxes.len())?;
        Ok((
            p.chunks_exact(3).map(glam::Vec3::from_slice).collect(),
            b.chunks_exact(6)
                .map(|c| [[c[0], c[1], c[2]], [c[3], c[4], c[5]]])
                .collect(),
        ))
    }
}

/// What a query on the device found: the squared distance, the least pair at it, the triangle
/// pairs measured and the expansions launched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub d2: f64,
    pub triangles: [u32; 2],
    pub pairs_tested: u64,
    pub expansions: u32,
    /// the most pairs a front held
    pub largest_front: u64,
}

/// The kernels and the buffers a query reuses.
pub struct Distance {
    gpu: Arc<Gpu>,
    /// the search kernel for [`Goal::Least`] and for [`Goal::Greatest`], exact and then within a
    /// relative error, and the blocks each can have resident on the whole GPU at once (its
    /// cooperative launch's grid)
    search: [(CudaFunction, u32); 4],
    /// whether the GPU takes cooperative launches (every CUDA GPU since Pascal does)
    cooperative: bool,
    transform: CudaFunction,
    leaf_boxes: CudaFunction,
    parent_boxes: CudaFunction,
    top_boxes: CudaFunction,
    /// the tolerance search of many objects ([`Distance::within_many`]) and its cooperative
    /// launch's grid
    within_search: (CudaFunction, u32),
    /// the placing jobs' table and transforms (`place_many`)
    place_table: CudaSlice<u64>,
    /// the front being expanded and the next one, and the pairs each can hold
    fronts: [CudaSlice<u32>; 2],
    capacity: [usize; 2],
    /// the bound, the best distance (both keys: [`Goal::key`]), the least pair at it, pairs
    /// measured; then the search's state in 32-bit words, two to an element (kernels/distance.cu,
    /// before `rxdi_plan`): one buffer, so that a query sets it with one copy and reads it with
    /// one
    state: CudaSlice<u64>,
    /// the final front's distances and pairs (as long as the larger front buffer)
    d2: CudaSlice<f64>,
    pairs: CudaSlice<u64>,
    /// a search within a relative error: the node pairs measured during the expansions, a key
    /// and a pair each (kernels/distance.cu: rxdi_probe)
    probes: CudaSlice<u64>,
    /// the tolerance search's two fronts and its leaf pairs (four words an entry), the entries a
    /// front holds, and its state (kernels/distance.cu, before `rxdi_within_search`)
    within: [CudaSlice<u32>; 3],
    within_capacity: usize,
    within_state: CudaSlice<u32>,
    /// the tolerance search's table of objects (5 words each), kept from call to call
    within_table: CudaSlice<u64>,
}

/// The most probes a search within a relative error takes (a probe beyond them is skipped,
/// which costs culling, not the guarantee).
const PROBES: u32 = 1 << 16;

impl Distance {
    pub fn new(gpu: &Arc<Gpu>) -> Result<Distance, DistanceError> {
        Distance::with_within_front(gpu, WITHIN_FRONT)
    }

    /// A query whose tolerance search's fronts start at `entries` (at least 4) instead of
    /// [`WITHIN_FRONT`]. Smaller fronts make a search stop and resume sooner; the tests use them
    /// to take that path whatever the order in which the device finds objects.
    pub fn with_within_front(gpu: &Arc<Gpu>, entries: usize) -> Result<Distance, DistanceError> {
        let entries = entries.max(4);
        let module: Arc<CudaModule> = gpu.module("distance", &[TRIANGLE, KERNELS], &[])?;
        // (FRONT pairs fit from the first: most searches never grow the fronts)
        let capacity = FRONT as usize;
        let sms = gpu
            .ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .ctx("reading the number of multiprocessors")? as u32;
        // (the searches need cooperative launches; placing does not)
        let cooperative = gpu
            .ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
            )
            .ctx("asking whether the GPU takes cooperative launches")?
            != 0;
        // a search kernel with the blocks of BLOCK_1D threads all SMs hold at once
        let resident = |f: CudaFunction| -> Result<(CudaFunction, u32), DistanceError> {
            let per_sm = f
                .occupancy_max_active_blocks_per_multiprocessor(crate::gpu::BLOCK_1D, 0, None)
                .ctx("reading the search kernel's occupancy")?;
            Ok((f, per_sm.max(1) * sms.max(1)))
        };
        Ok(Distance {
            gpu: gpu.clone(),
            search: [
                resident(gpu.function(&module, "rxdi_search")?)?,
                resident(gpu.function(&module, "rxdi_search_max")?)?,
                resident(gpu.function(&module, "rxdi_search_rel")?)?,
                resident(gpu.function(&module, "rxdi_search_max_rel")?)?,
            ],
            cooperative,
            transform: gpu.function(&module, "rxdi_transform")?,
            leaf_boxes: gpu.function(&module, "rxdi_leaf_boxes")?,
            parent_boxes: gpu.function(&module, "rxdi_parent_boxes")?,
            top_boxes: gpu.function(&module, "rxdi_top_boxes")?,
            within_search: resident(gpu.function(&module, "rxdi_within_search")?)?,
            place_table: gpu.zeros(64, "the placing table")?,
            fronts: [
                gpu.zeros(2 * capacity, "the front")?,
                gpu.zeros(2 * capacity, "the front")?,
            ],
            capacity: [capacity; 2],
            state: gpu.zeros(64, "the search's state")?,
            d2: gpu.zeros(capacity, "leaf distances")?,
            pairs: gpu.zeros(capacity, "leaf pairs")?,
            probes: gpu.zeros(2 * PROBES as usize, "the search's probes")?,
            within: [
                gpu.zeros(4 * entries, "the tolerance search's front")?,
                gpu.zeros(4 * entries, "the tolerance search's front")?,
                gpu.zeros(entries, "the tolerance search's leaf pairs")?,
            ],
            within_capacity: entries,
            within_state: gpu.zeros(128, "the tolerance search's state")?,
            within_table: gpu.zeros(64, "the objects' table")?,
        })
    }

    /// Places `m` (uploaded with [`DeviceMesh::placed`]) under `model`, on the device:
    /// [`Distance::place_many`] of one.
    pub fn place(&mut self, m: &mut DeviceMesh, model: &glam::Mat4) -> Result<(), DistanceError> {
        self.place_many(&mut [(m, *model)])
    }

    /// Places each mesh (uploaded with [`DeviceMesh::placed`]) under its transform, on the
    /// device, all with one set of launches: the positions transformed (as
    /// [`super::placed::transform_point`] does), then the leaves' boxes, then each level's above
    /// them (a launch per level of 2^10 nodes or more in the deepest tree, then
    /// one block per tree for the levels under its root). The caller checks the transforms
    /// first ([`super::placed::check_model`]); nothing is read back.
    pub fn place_many(
        &mut self,
        jobs: &mut [(&mut DeviceMesh, glam::Mat4)],
    ) -> Result<(), DistanceError> {
        if jobs.is_empty() {
            return Ok(());
        }
        if jobs.len() > 65_535 {
            return Err(DistanceError::Gpu(crate::gpu::GpuError::Limit(format!(
                "{} meshes placed at once, more than a launch's 65,535",
                jobs.len()
            ))));
        }
        let s = &self.gpu.stream;
        let addr = |p: (cudarc::driver::sys::CUdeviceptr, _)| p.0;
        let (mut verts, mut depth) = (0u32, 0u32);
        let mut table = Vec::with_capacity(7 * jobs.len());
        let mut models = Vec::with_capacity(16 * jobs.len());
        for (m, model) in jobs.iter_mut() {
            let object = m.object.as_ref().ok_or_else(|| {
                DistanceError::Gpu(crate::gpu::GpuError::Limit(
                    "a mesh uploaded without its object-space positions cannot be placed".into(),
                ))
            })?;
            let v = (object.len() / 3) as u32;
            table.extend([
                addr(object.device_ptr(s)),
                addr(m.positions.device_ptr_mut(s)),
                addr(m.indices.device_ptr(s)),
                addr(m.order.device_ptr(s)),
                addr(m.boxes.device_ptr_mut(s)),
                v as u64 | (m.triangles as u64) << 32,
                m.depth as u64,
            ]);
            models.extend(model.to_cols_array());
            verts = verts.max(v);
            depth = depth.max(m.depth);
        }
        // the transforms' floats after the table, two to a word: one copy into a buffer kept
        // from call to call
        table.extend(
            models
                .chunks_exact(2)
                .map(|p| p[0].to_bits() as u64 | (p[1].to_bits() as u64) << 32),
        );
        if self.place_table.len() < table.len() {
            self.place_table = self
                .gpu
                .zeros(table.len().next_power_of_two(), "the placing table")?;
        }
        s.memcpy_htod(&table, &mut self.place_table.slice_mut(0..table.len()))
            .ctx("copying the placing table")?;
        let models = self.place_table.slice(7 * jobs.len()..table.len());
        let table = self.place_table.slice(0..7 * jobs.len());
        let n = jobs.len() as u32;
        let b = crate::gpu::BLOCK_1D;
        let grid = |threads: u32| (threads.div_ceil(b).max(1), n, 1);
        let go =
            |f: &CudaFunction, grid: (u32, u32, u32), threads: u32, level: Option<u32>, what| {
                let mut l = s.launch_builder(f);
                l.arg(&table);
                if let Some(level) = &level {
                    l.arg(level);
                }
                let cfg = cudarc::driver::LaunchConfig {
                    grid_dim: grid,
                    block_dim: (threads, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: each block's job lies in the table; a thread past its mesh's vertices,
                // leaves or level's nodes returns; every index lies within its mesh's arrays, and
                // the boxes hold 2^(depth + 1) - 1 nodes.
                unsafe { l.launch(cfg) }.map(|_| ()).ctx(what)
            };
        let mut l = s.launch_builder(&self.transform);
        l.arg(&table).arg(&models);
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: grid(verts),
            block_dim: (b, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: a thread per vertex of each job's mesh (the others return); both position
        // arrays hold three floats a vertex; the transforms 16 floats a job.
        unsafe { l.launch(cfg) }.ctx("rxdi_transform")?;
        go(
            &self.leaf_boxes,
            grid(1 << depth),
            b,
            None,
            "rxdi_leaf_boxes",
        )?;
        let levels: Vec<u32> = (TOP_LEVELS.min(depth)..depth).rev().collect();
        for level in &levels {
            go(
                &self.parent_boxes,
                grid(1 << level),
                b,
                Some(*level),
                "rxdi_parent_boxes",
            )?;
        }
        go(
            &self.top_boxes,
            (n, 1, 1),
            TOP_THREADS,
            Some(TOP_LEVELS),
            "rxdi_top_boxes",
        )?;
        Ok(())
    }

    /// For each of `objects`, whether some pair of its triangles and `a`'s lies within `cap`
    /// (squared distance at most `cap * cap`): [`super::cpu::within`] for all of them in one
    /// search, one cooperative launch (kernels/distance.cu: `rxdi_within_search`). The front
    /// holds (node of A, node of the object's tree, object) entries of every object; each level
    /// takes all of them one level down (both nodes split unless leaves), keeps the child pairs
    /// whose boxes come within reach, and sets the leaf pairs aside, whose triangles are then
    /// measured, a thread a pair of triangles; each warp also measures the first triangles of
    /// its nearest child pair, so that an object within reach is mostly found before the leaves.
    /// An object found within reach drops out of the search. One copy sets the search's state
    /// and one reads it back with the answers, and no buffer is allocated unless one must grow;
    /// where a level's pairs would not fit the fronts, they grow (and stay grown for the next
    /// query) and the search goes on from that level.
    pub fn within_many(
        &mut self,
        a: &DeviceMesh,
        objects: &[&DeviceMesh],
        cap: f64,
    ) -> Result<Vec<bool>, DistanceError> {
        if objects.is_empty() {
            return Ok(Vec::new());
        }
        self.cooperative()?;
        let gpu = self.gpu.clone();
        let s = &gpu.stream;
        let addr = |p: (cudarc::driver::sys::CUdeviceptr, _)| p.0;
        let table: Vec<u64> = objects
            .iter()
            .flat_map(|m| {
                [
                    addr(m.boxes.device_ptr(s)),
                    addr(m.positions.device_ptr(s)),
                    addr(m.indices.device_ptr(s)),
                    addr(m.order.device_ptr(s)),
                    m.triangles as u64 | (m.depth as u64) << 32,
                ]
            })
            .collect();
        gpu.put(&mut self.within_table, &table, "objects' table")?;
        // front 0, the roots' pair of every object, must fit with its children
        let n = objects.len();
        if 4 * n > self.within_capacity {
            self.grow_within(4 * n, None)?;
        }
        let start: Vec<u32> = (0..n as u32).flat_map(|k| [0, 0, k, 0]).collect();
        s.memcpy_htod(&start, &mut self.within[0].slice_mut(0..start.len()))
            .ctx("setting the front")?;
        // the state: a front's and a level's leaf pairs' counts for every level down to the
        // deepest tree's leaves, and one more (kernels/distance.cu, before rxdi_within_search),
        // then each object's answer: set with one copy, read back with one
        let depth = objects
            .iter()
            .map(|m| m.depth)
            .max()
            .unwrap_or(0)
            .max(a.depth) as usize;
        let words = STATE_WORDS + 2 * (depth + 2);
        let mut state = vec![0u32; words + n];
        state[STATE_WORDS] = n as u32;
        gpu.put(&mut self.within_state, &state, "tolerance search's state")?;
        let (cap2, reach2) = (cap * cap, cap * cap * (1.0 + SLACK));
        let (search, blocks) = self.within_search.clone();
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (crate::gpu::BLOCK_1D, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut from = 0u32;
        let got = loop {
            let capacity = self.within_capacity as u32;
            let found = self.within_state.slice(words..words + n);
            let mut l = s.launch_builder(&search);
            l.arg(&a.boxes)
                .arg(&a.positions)
                .arg(&a.indices)
                .arg(&a.order)
                .arg(&a.triangles)
                .arg(&a.depth)
                .arg(&self.within_table)
                .arg(&self.within[0])
                .arg(&self.within[1])
                .arg(&self.within[2])
                .arg(&capacity)
                .arg(&found)
                .arg(&reach2)
                .arg(&cap2)
                .arg(&self.within_state)
                .arg(&from);
            // SAFETY: the grid is what every SM holds at once (a cooperative launch refuses
            // more), so its barriers meet. Each level's pairs lie in its front (its count of
            // them) and their nodes in the trees; a level expands only when four children a
            // pair fit the fronts' capacity (entries of four words), and its leaf pairs (at most
            // one a pair) the leaves'; the counts' words end at the deepest tree's leaves plus
            // one, within the state; objects lie in the table, leaf ranges and triangle indices
            // within each mesh's arrays.
            unsafe { l.launch_cooperative(cfg) }.ctx("rxdi_within_search")?;
            let got = gpu.download(&self.within_state, words + n)?;
            if got[0] == 0 {
                break got;
            }
            // level j's children might not fit: the fronts grown, front j kept, on from it
            let j = got[1];
            let pairs = got[STATE_WORDS + 2 * j as usize] as usize;
            self.grow_within(4 * pairs, Some((j as usize % 2, pairs)))?;
            s.memcpy_htod(&[0u32], &mut self.within_state.slice_mut(0..1))
                .ctx("resuming the tolerance search")?;
            from = j;
        };
        Ok(got[words..].iter().map(|&f| f != 0).collect())
    }

    /// The entries the tolerance search's fronts hold now: [`WITHIN_FRONT`] (or what
    /// [`Distance::with_within_front`] asked) at first, more once a search has needed more.
    pub fn within_capacity(&self) -> usize {
        self.within_capacity
    }

    /// The tolerance search's fronts grown to hold `entries` (the next power of two) and its
    /// leaf pairs a quarter of that (a level expands only when four children a pair fit, and
    /// sets at most one leaf pair a pair aside), keeping the first `pairs` entries of front
    /// `keep` (`(front, pairs)`).
    fn grow_within(
        &mut self,
        entries: usize,
        keep: Option<(usize, usize)>,
    ) -> Result<(), DistanceError> {
        if entries > u32::MAX as usize / 4 {
            return Err(DistanceError::Front {
                pairs: entries as u64,
            });
        }
        let cap = entries.next_power_of_two();
        let gpu = self.gpu.clone();
        // SAFETY (all three): the search writes the entries it counts before any is read; the
        // kept front is copied in below.
        let mut grown: [CudaSlice<u32>; 3] = [
            unsafe { gpu.alloc_uninit(4 * cap, "the tolerance search's front") }?,
            unsafe { gpu.alloc_uninit(4 * cap, "the tolerance search's front") }?,
            unsafe { gpu.alloc_uninit(cap, "the tolerance search's leaf pairs") }?,
        ];
        if let Some((k, pairs)) = keep {
            gpu.stream
                .memcpy_dtod(
                    &self.within[k].slice(0..4 * pairs),
                    &mut grown[k].slice_mut(0..4 * pairs),
                )
                .ctx("keeping the tolerance search's front")?;
        }
        self.within = grown;
        self.within_capacity = cap;
        Ok(())
    }

    /// The least distance between two uploaded meshes.
    pub fn query(&mut self, a: &DeviceMesh, b: &DeviceMesh) -> Result<Found, DistanceError> {
        self.query_within(a, b, f64::INFINITY)?
            .ok_or(DistanceError::Lost)
    }

    /// [`Distance::query`] within the relative error `rel`, as [`super::cpu::min_distance_rel`]
    /// (the same guarantee, not always the same pair).
    pub fn query_rel(
        &mut self,
        a: &DeviceMesh,
        b: &DeviceMesh,
        rel: f64,
    ) -> Result<Found, DistanceError> {
        self.search_rel(Goal::Least, a, b, rel)
    }

    /// [`Distance::query`] where the distance is at most `cap`, else `None` (or, rarely, a
    /// distance above `cap`), as [`super::cpu::min_distance_within`]: the search starts with
    /// `cap` as its upper bound, and ends early when the front empties.
    pub fn query_within(
        &mut self,
        a: &DeviceMesh,
        b: &DeviceMesh,
        cap: f64,
    ) -> Result<Option<Found>, DistanceError> {
        self.search(Goal::Least, a, b, cap * cap, 1.0 + SLACK)
    }

    /// The greatest distance between a point of `a` and a point of `b`, both uploaded
    /// ([`super::cpu::max_distance`] on the device; `d2` the squared distance).
    pub fn query_max(&mut self, a: &DeviceMesh, b: &DeviceMesh) -> Result<Found, DistanceError> {
        self.query_max_rel(a, b, 0.0)
    }

    /// [`Distance::query_max`] within the relative error `rel`, as
    /// [`super::cpu::max_distance_rel`] (the same guarantee, not always the same pair).
    pub fn query_max_rel(
        &mut self,
        a: &DeviceMesh,
        b: &DeviceMesh,
        rel: f64,
    ) -> Result<Found, DistanceError> {
        self.search_rel(Goal::Greatest, a, b, rel)
    }

    /// The whole search for `goal` (from the worst distance) within the relative error `rel`.
    fn search_rel(
        &mut self,
        goal: Goal,
        a: &DeviceMesh,
        b: &DeviceMesh,
        rel: f64,
    ) -> Result<Found, DistanceError> {
        let keep_rel = super::rel_keep(rel)?;
        self.search(goal, a, b, goal.worst(), keep_rel)?
            .ok_or(DistanceError::Lost)
    }

    /// An error unless the GPU takes cooperative launches, which every search here is (the two
    /// goals' and the tolerance search of many objects).
    fn cooperative(&self) -> Result<(), DistanceError> {
        if self.cooperative {
            return Ok(());
        }
        Err(DistanceError::Gpu(crate::gpu::GpuError::Limit(format!(
            "{} does not take cooperative launches, which the distance search needs (measure on \
             the CPU: --backend cpu)",
            self.gpu.name
        ))))
    }

    /// The search for `goal` from the bound `start` (squared; a cap for the least distance),
    /// culling against the best distance measured with `keep_rel` ([`super::rel_keep`]; 1 +
    /// SLACK for the exact search).
    ///
    /// One cooperative launch (kernels/distance.cu: `rxdi_search`) runs the expansions, the leaf
    /// pairs and the pick, with barriers of the whole grid between them: the front's size and
    /// levels stay on the device ([`Distance::state`]). An expansion whose pairs would not fit
    /// its output buffer stops the search and says so; the host, reading the state (the one
    /// read-back of a search), grows that buffer and launches again from that expansion.
    fn search(
        &mut self,
        goal: Goal,
        a: &DeviceMesh,
        b: &DeviceMesh,
        start: f64,
        keep_rel: f64,
    ) -> Result<Option<Found>, DistanceError> {
        self.cooperative()?;
        let gpu = self.gpu.clone();
        let s = &gpu.stream;
        // each expansion takes at least one level of the deeper tree
        let entries = a.depth.max(b.depth) as usize + 1;
        let words = STATE_WORDS + 3 * entries;
        // the four counters (the bound, the best distance (keys: the worst distance's for a
        // start), the least pair at it, pairs measured), then the state's words two to a u64
        let worst = goal.worst();
        let mut state = vec![0u64; 4 + words.div_ceil(2)];
        state[..4].copy_from_slice(&[goal.key(start), goal.key(worst), u64::MAX, 0]);
        let mut word = |w: usize, v: u32| state[4 + w / 2] |= (v as u64) << (32 * (w % 2));
        // entry 0: the roots' pair, at level 0 of both trees; the leaves' front when both trees
        // are one leaf
        word(STATE_WORDS, 1);
        if a.depth == 0 && b.depth == 0 {
            word(4, 1);
        }
        if self.state.len() < state.len() {
            self.state = gpu.zeros(state.len().next_power_of_two(), "the search's state")?;
        }
        s.memcpy_htod(&state, &mut self.state.slice_mut(0..state.len()))
            .ctx("setting the search's state")?;
        s.memcpy_htod(&[0u32, 0], &mut self.fronts[0].slice_mut(0..2))
            .ctx("setting the front")?;
        let keep = 1.0 + SLACK;
        let approx = keep_rel < keep;
        let (search, blocks) =
            &self.search[(goal == Goal::Greatest) as usize + 2 * approx as usize];
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: (*blocks, 1, 1),
            block_dim: (crate::gpu::BLOCK_1D, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut from = 0u32;
        let got = loop {
            let counters = self.state.slice(0..4);
            let st = self.state.slice(4..);
            let capacity = self.capacity.map(|c| c as u64);
            let mut l = s.launch_builder(search);
            l.arg(&a.boxes)
                .arg(&b.boxes)
                .arg(&a.positions)
                .arg(&a.indices)
                .arg(&a.order)
                .arg(&a.triangles)
                .arg(&a.depth)
                .arg(&b.positions)
                .arg(&b.indices)
                .arg(&b.order)
                .arg(&b.triangles)
                .arg(&b.depth)
                .arg(&self.fronts[0])
                .arg(&self.fronts[1])
                .arg(&capacity[0])
                .arg(&capacity[1])
                .arg(&FRONT)
                .arg(&st)
                .arg(&from)
                .arg(&counters)
                .arg(&keep)
                .arg(&keep_rel)
                .arg(&self.d2)
                .arg(&self.pairs)
                .arg(&self.probes)
                .arg(&PROBES);
            // SAFETY: the grid is what every SM holds at once (a cooperative launch refuses
            // more), so its barriers meet. Each expansion's pairs lie in its input front (its
            // entry's count of them) and their descendants in the trees; it writes at most its
            // output's capacity, and the state's entries up to the deeper tree's depth, all
            // within the state buffer; the leaves' front is within the distances' and pairs'
            // length; leaf ranges and triangle indices lie within the uploaded arrays; the
            // probes taken are at most PROBES, the probe buffer's entries.
            unsafe { l.launch_cooperative(cfg) }.ctx("rxdi_search")?;
            let got = gpu.download(&self.state, state.len())?;
            let w = |k: usize| state_word(&got, k);
            if w(0) == 0 {
                break got;
            }
            // expansion j's pairs did not fit: its output grown, the search goes on from it
            let j = w(1);
            let need = w(2) as u64 | (w(3) as u64) << 32;
            if need > u32::MAX as u64 {
                return Err(DistanceError::Front { pairs: need });
            }
            let cap = (need as usize).next_power_of_two();
            let out = (j as usize + 1) % 2;
            // SAFETY: the search writes the pairs it counts before any is read.
            self.fronts[out] = unsafe { gpu.alloc_uninit(2 * cap, "the front") }?;
            self.capacity[out] = cap;
            let most = self.capacity[0].max(self.capacity[1]);
            if self.d2.len() < most {
                // SAFETY (both): the search writes an entry's distance and pair for every
                // entry of the leaves' front before it reads any.
                self.d2 = unsafe { gpu.alloc_uninit(most, "leaf distances") }?;
                self.pairs = unsafe { gpu.alloc_uninit(most, "leaf pairs") }?;
            }
            s.memcpy_htod(&[0u64], &mut self.state.slice_mut(4..5))
                .ctx("resuming the search")?;
            from = j;
        };
        let w = |k: usize| state_word(&got, k);
        if got[2] == u64::MAX {
            // every pair culled against the cap
            return Ok(None);
        }
        // (within a relative error the front may empty before the leaves, every pair culled
        // against a probe, which then holds the answer)
        let fronts = (0..entries)
            .take_while(|&e| w(STATE_WORDS + 3 * e) > 0)
            .count();
        let p = got[2];
        let largest = (0..fronts)
            .map(|e| w(STATE_WORDS + 3 * e) as u64)
            .max()
            .unwrap_or(1);
        Ok(Some(Found {
            d2: goal.value(got[1]),
            triangles: [(p >> 32) as u32, p as u32],
            pairs_tested: got[3],
            expansions: fronts.saturating_sub(1) as u32,
            largest_front: largest,
        }))
    }
}

/// The entries the tolerance search's fronts hold at first (16 bytes each); they grow on demand
/// and stay grown.
pub const WITHIN_FRONT: usize = 1 << 14;

/// The words of the search's state before its entries (kernels/distance.cu: RXDI_ENTRIES).
const STATE_WORDS: usize = 8;

/// Word `k` of the search's state, as read back with its four counters before it.
fn state_word(got: &[u64], k: usize) -> u32 {
    (got[4 + k / 2] >> (32 * (k % 2))) as u32
}

/// Both meshes checked, their BVHs built on the host and uploaded.
fn upload_pair(
    gpu: &Arc<Gpu>,
    a: &Mesh,
    b: &Mesh,
) -> Result<(DeviceMesh, DeviceMesh), DistanceError> {
    let (ta, tb) = Bvh::build_pair(a, b)?;
    Ok((DeviceMesh::new(gpu, a, &ta)?, DeviceMesh::new(gpu, b, &tb)?))
}

/// The least distance between `a` and `b` on the GPU: checked, BVHs built on the host, uploaded,
/// queried; the closest points of the pair found are worked out on the host.
pub fn run(gpu: &Arc<Gpu>, a: &Mesh, b: &Mesh) -> Result<Closest, DistanceError> {
    run_rel(gpu, a, b, 0.0)
}

/// [`run`] within the relative error `rel` ([`Distance::query_rel`]).
pub fn run_rel(gpu: &Arc<Gpu>, a: &Mesh, b: &Mesh, rel: f64) -> Result<Closest, DistanceError> {
    super::rel_keep(rel)?;
    let (da, db) = upload_pair(gpu, a, b)?;
    let found = Distance::new(gpu)?.query_rel(&da, &db, rel)?;
    Ok(closest(a, b, found.triangles, found.pairs_tested))
}

/// The greatest distance between `a` and `b` on the GPU: checked, BVHs built on the host,
/// uploaded, queried; the farthest corners of the pair found are worked out on the host.
pub fn run_max(gpu: &Arc<Gpu>, a: &Mesh, b: &Mesh) -> Result<Farthest, DistanceError> {
    run_max_rel(gpu, a, b, 0.0)
}

/// [`run_max`] within the relative error `rel` ([`Distance::query_max_rel`]).
pub fn run_max_rel(
    gpu: &Arc<Gpu>,
    a: &Mesh,
    b: &Mesh,
    rel: f64,
) -> Result<Farthest, DistanceError> {
    super::rel_keep(rel)?;
    let (da, db) = upload_pair(gpu, a, b)?;
    let found = Distance::new(gpu)?.query_max_rel(&da, &db, rel)?;
    Ok(farthest(a, b, found.triangles, found.pairs_tested))
}
