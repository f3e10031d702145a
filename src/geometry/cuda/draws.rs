//! The geometry stage over many meshes in one launch: a frame's objects, each with its inputs,
//! uniforms and queue, in a draw table (kernels/geometry.cu, "many meshes in one launch").
//! Launched one by one, Sponza's 114 visible objects kept the device waiting on the host's
//! launches (about 11 us each); the table makes a frame's geometry stage a few launches
//! whatever the number of objects: shade, sum the invocation counts, clear them.
//!
//! The per-vertex counts are zero at rest: a frame clears them after its last reader
//! ([`CudaGeometry::reset_counts`], between frames), so that the next frame's shading starts at
//! once; a launch one of whose queues holds counts (made by a launch of its own, or a frame that
//! was not reset) clears them first, as before.

use super::abi::{FusedDraw, FusedTarget, GeoDraw, GpuCullView};
use super::{no_corners, CudaGeometry, DeviceMesh, DeviceQueue, GpuUniforms};
use crate::geometry::{GeometryError, Strategy, Uniforms};
use crate::gpu::Context;
use crate::gpu::{Dependent, GpuError};
use crate::patch::bounds::CullView;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Counts cleared and summed per block of the count launches (RXG_COUNT_CHUNK).
const COUNT_CHUNK: u32 = 4096;
/// What counts_clear_draws clears (RXG_CLEAR_COUNTS, RXG_CLEAR_TOTALS).
const CLEAR_COUNTS: u32 = 1;
const CLEAR_TOTALS: u32 = 2;

/// The draw table on the device, and the sum of all its draws' invocation counts.
pub(super) struct DrawTable {
    pub draws: CudaSlice<GeoDraw>,
    pub total: CudaSlice<u64>,
    /// a fused launch's per-draw table, in the draw table's order
    pub fused: CudaSlice<FusedDraw>,
    /// the batches a fused launch that culls whole batches draws (fused_batch_list: draw << 32
    /// | batch), room for all its blocks, and those of its second pass
    /// (fused_batch_occlusion); zeroed when allocated, so that every entry a block reads was
    /// written
    pub batches: CudaSlice<u64>,
    pub batches2: CudaSlice<u64>,
    /// each block's batch's state in the frame (0 culled, 1 drawn in the first pass, 2 left to
    /// the second) and whether it was seen (not occluded) in the last frame
    pub state: CudaSlice<u8>,
    pub seen: CudaSlice<u8>,
    /// the farthest depth key of each 16x16-pixel tile after the first pass (rxp_hiz)
    pub hiz: CudaSlice<u32>,
}

/// The counters of the batches listed for the first and the second fused launch
/// (RXP_C_BATCH_LIST, RXP_C_BATCH_LIST2 in kernels/raster.cuh).
const C_BATCH_LIST: u32 = 12;
const C_BATCH_LIST2: u32 = 13;
/// The tiles of rxp_hiz: 16 pixels a side.
const HIZ_TILE: u32 = 16;

/// What the raster stage gives a fused launch (kernels/geometry_fused.cu): its buffers and
/// frame, and for each of its draws, by the address of the queue it reads, the draw's part.
#[derive(Debug, Clone, Default)]
pub struct Fused {
    pub target: FusedTarget,
    pub draws: Vec<(u64, FusedDraw)>,
}

/// A geometry stage whose draw table is on the device, ready to launch
/// ([`CudaGeometry::prepare_draws`], [`CudaGeometry::launch_draws`]).
#[derive(Debug, Clone)]
pub struct DrawLaunch {
    strategy: Strategy,
    ndraws: u32,
    chunks: u32,
    blocks: u32,
    shape: Option<super::Plan>,
    /// whether the counts are cleared before the shading (a queue's were not zero)
    clear_first: bool,
    /// the queues' [`DeviceQueue::counts_zero`], which [`CudaGeometry::reset_counts`] sets
    zeroed: Vec<Arc<AtomicBool>>,
    /// the kernels, fetched when prepared: a kernel's first fetch may load it, which is not for
    /// the time between a frame's hold on the stream and its release
    clear: CudaFunction,
    shade: Option<CudaFunction>,
    /// the fused kernel of a hashing strategy (none for the other strategies, or batch limits
    /// whose vertices do not fit beside the hash table)
    fused: Option<CudaFunction>,
    /// the list of batches a fused launch draws, where a draw has batch bounds
    /// (fused_batch_list: whole batches culled before the fused kernel), and with occlusion
    /// culling the second pass's kernels (rxp_hiz, fused_batch_occlusion)
    batch_list: Option<CudaFunction>,
    occlusion: Option<(CudaFunction, CudaFunction)>,
    sum: Option<CudaFunction>,
    /// each draw's queue (the address of its shaded vertices), in the table's order
    queues: Vec<u64>,
    /// whether a queue was made for fused frames only (then the launch must be fused)
    fused_only: bool,
}

impl DrawLaunch {
    /// Whether the launch can run fused with the raster stage ([`CudaGeometry::launch_draws`]).
    pub fn fusable(&self) -> bool {
        self.fused.is_some()
    }

    /// The address of each draw's queue (its shaded vertices), in the launch's order.
    pub fn queues(&self) -> &[u64] {
        &self.queues
    }
}

/// One mesh of a launch over many: what it shades with which uniforms, into which queue.
pub struct ShadeDraw<'a> {
    pub mesh: &'a DeviceMesh,
    pub uniforms: Uniforms,
    pub queue: &'a mut DeviceQueue,
}

impl CudaGeometry {
    /// Enqueues the geometry stage: `strategy` over every draw's mesh into its queue, its
    /// invocation counts cleared first (unless zero) and summed into its total after, in a few
    /// launches however many draws there are. Each draw is checked as [`CudaGeometry::enqueue`] checks
    /// its mesh, and shades exactly what a launch of its own would.
    pub fn enqueue_draws(
        &self,
        strategy: Strategy,
        draws: &mut [ShadeDraw<'_>],
    ) -> Result<(), GeometryError> {
        match self.prepare_draws(strategy, draws)? {
            Some(l) => Ok(self.launch_draws(&l, None, None)?),
            None => Ok(()),
        }
    }

    /// The host's part of [`CudaGeometry::enqueue_draws`]: checks the draws and uploads their
    /// table (none without draws). The launches follow with [`CudaGeometry::launch_draws`], so
    /// that a frame can finish all its host work before the device starts, and the device then
    /// runs the frame's kernels back to back. Until then the table must not be prepared again.
    pub fn prepare_draws(
        &self,
        strategy: Strategy,
        draws: &mut [ShadeDraw<'_>],
    ) -> Result<Option<DrawLaunch>, GeometryError> {
        if draws.is_empty() {
            return Ok(None);
        }
        let stream = &self.gpu.stream;
        let addr = |p: (cudarc::driver::sys::CUdeviceptr, _)| p.0;
        let mut table = Vec::with_capacity(draws.len());
        let mut queues = Vec::with_capacity(draws.len());
        let mut fused_only = false;
        let (mut blocks, mut chunks) = (0u64, 0u64);
        let mut shape = None;
        let (mut clear_first, mut zeroed) = (false, Vec::with_capacity(draws.len()));
        for d in draws.iter_mut() {
            // (a window draws a run of its whole mesh's batches: the whole mesh's plan, as many
            // blocks as the run has batches, its tables read from the run's first batch on)
            let (m, window) = d.mesh.drawn();
            let plan = self.plan(strategy, m, d.queue)?.map(|p| match &window {
                Some(w) => super::Plan {
                    blocks: w.len() as u32,
                    ..p
                },
                None => p,
            });
            let first = window.as_ref().map_or(0, |w| w.start as u64);
            let q = &mut *d.queue;
            let (aux, runs, nruns) = match strategy {
                Strategy::Patch => {
                    let p = m.patches.as_ref().ok_or(GeometryError::NoPatches)?;
                    (
                        addr(p.vertices.device_ptr(stream)),
                        addr(p.runs.device_ptr(stream)),
                        p.nruns,
                    )
                }
                _ => match &m.batches {
                    Some((starts, ..)) if strategy.dynamic_limits().is_some() => {
                        (addr(starts.device_ptr(stream)) + 4 * first, 0, 0)
                    }
                    _ => (0, 0, 0),
                },
            };
            let corners = match (&q.corners, strategy) {
                (None, Strategy::Naive | Strategy::Multi | Strategy::Patch) => 0,
                (Some(c), _) => addr(c.device_ptr(stream)),
                (None, _) => return Err(no_corners().into()),
            };
            // (the launch adds to the counts: not zero until reset)
            clear_first |= !q.counts_zero.swap(false, Ordering::Relaxed);
            zeroed.push(q.counts_zero.clone());
            let ncounts = if self.counting {
                m.vertex_count.min(q.counts.len()) as u32
            } else {
                0
            };
            // the mesh's batch tables, where they number the batches this strategy hashes, and
            // the batches' bounds where the vertex shader leaves positions to the standard
            // transform
            let tables = match (strategy, &m.tables) {
                (Strategy::DynamicHash { .. } | Strategy::ParallelHash { .. }, Some(t))
                    if strategy.dynamic_limits() == Some(t.limits) =>
                {
                    // (the numbers are by index position, the rest by batch)
                    let slots = t.limits.1 as u64;
                    let bound = std::mem::size_of::<super::GpuBound>() as u64;
                    [
                        addr(t.numbers.device_ptr(stream)),
                        addr(t.vertices.device_ptr(stream)) + 4 * slots * first,
                        addr(t.counts.device_ptr(stream)) + 4 * first,
                        match self.shader.is_builtin() {
                            true => addr(t.bounds.device_ptr(stream)) + bound * first,
                            false => 0,
                        },
                    ]
                }
                _ => [0; 4],
            };
            // (the facing is the fused draw's: the raster stage's cull mode of the draw)
            let u = &d.uniforms;
            let view = match tables[3] {
                0 => GpuCullView::default(),
                _ => GpuCullView::from(&CullView::new(u.view_proj, u.model, u.eye, 0.0)),
            };
            queues.push(addr(q.vertices.device_ptr(stream)));
            // (a draw without triangles writes nothing)
            fused_only |= q.fused_only && plan.is_some();
            table.push(GeoDraw {
                u: GpuUniforms::from(&d.uniforms),
                block_base: blocks as u32,
                vin: addr(m.vertices.device_ptr(stream)),
                idx: addr(m.indices.device_ptr(stream)),
                aux,
                runs,
                out: addr(q.vertices.device_ptr(stream)),
                corners,
                counts: addr(q.counts.device_ptr(stream)),
                total: addr(q.total.device_ptr(stream)),
                n: plan.map_or(0, |p| p.n),
                nruns,
                ncounts,
                count_base: chunks as u32,
                tab_numbers: tables[0],
                tab_vertices: tables[1],
                tab_counts: tables[2],
                bounds: tables[3],
                view,
            });
            if let Some(p) = plan {
                blocks += p.blocks as u64;
                shape = Some(p);
            }
            // at least one chunk each: its first thread clears the draw's total
            chunks += ncounts.div_ceil(COUNT_CHUNK).max(1) as u64;
            if blocks > i32::MAX as u64 || chunks > i32::MAX as u64 {
                return Err(GpuError::Limit(format!(
                    "{} draws need more blocks than one launch has",
                    draws.len()
                ))
                .into());
            }
        }
        let mut t = self.draw_table.lock().unwrap_or_else(|p| p.into_inner());
        self.gpu.put(&mut t.draws, &table, "geometry draw table")?;
        let culls = table.iter().any(|d| d.bounds != 0);
        let n = blocks as usize;
        if culls && t.batches.len() < n {
            t.batches = self.gpu.zeros(n, "the batches to draw")?;
        }
        if culls && self.occlusion && t.seen.len() < n {
            t.batches2 = self.gpu.zeros(n, "the batches to draw")?;
            t.state = self.gpu.zeros(n, "the batches' states")?;
            t.seen = self.gpu.zeros(n, "the batches seen")?;
        }
        Ok(Some(DrawLaunch {
            strategy,
            ndraws: table.len() as u32,
            chunks: chunks as u32,
            blocks: blocks as u32,
            clear_first,
            zeroed,
            clear: self.function("counts_clear_draws")?,
            shade: match shape {
                Some(_) => Some(self.kernel(strategy, "_draws")?),
                None => None,
            },
            // (the module holds no fused kernels where the batch's vertices do not fit)
            fused: match (shape, strategy) {
                (Some(_), Strategy::DynamicHash { .. } | Strategy::ParallelHash { .. }) => {
                    self.kernel(strategy, "_fused_draws").ok()
                }
                _ => None,
            },
            batch_list: match culls {
                true => Some(self.function("fused_batch_list")?),
                false => None,
            },
            occlusion: match culls && self.occlusion {
                true => Some((
                    self.function("rxp_hiz")?,
                    self.function("fused_batch_occlusion")?,
                )),
                false => None,
            },
            queues,
            fused_only,
            sum: match self.counting {
                true => Some(self.function("counts_sum_draws")?),
                false => None,
            },
            shape,
        }))
    }

    /// Launches a prepared geometry stage (its table as [`CudaGeometry::prepare_draws`] left
    /// it).
    ///
    /// With `aside` (a second stream), the counts' sum, which nothing of the frame waits for but
    /// the statistics, runs there after the shading, beside what the device's stream does next;
    /// the caller joins `aside` back before it reads the totals.
    ///
    /// With `fused` (a hashing launch that is [`DrawLaunch::fusable`]), the fused kernel runs
    /// instead: each batch sets up its own triangles and rasterises the small ones into the raster
    /// stage's buffers (kernels/geometry_fused.cu); every draw must have its part in `fused`.
    pub fn launch_draws(
        &self,
        d: &DrawLaunch,
        aside: Option<&Arc<CudaStream>>,
        fused: Option<&Fused>,
    ) -> Result<(), GpuError> {
        let (strategy, ndraws) = (d.strategy, d.ndraws);
        let stream = &self.gpu.stream;
        let dep = self.gpu.dependent_launch;
        let mut t = self.draw_table.lock().unwrap_or_else(|p| p.into_inner());
        if d.clear_first {
            self.clear_counts(d, &t, stream, CLEAR_COUNTS | CLEAR_TOTALS)?;
        }
        let target = match (fused, &d.fused) {
            (Some(f), Some(_)) => Some(self.fused_table(d, f, &mut t)?),
            (Some(_), None) => {
                return Err(GpuError::Limit(format!(
                    "the {} strategy has no fused geometry stage",
                    strategy.name()
                )))
            }
            (None, _) if d.fused_only => {
                return Err(GpuError::Limit(
                    "a queue made for fused frames (without vertices) was to be shaded unfused"
                        .into(),
                ))
            }
            (None, _) => None,
        };
        // (the tiles of the first pass's depth, for occlusion culling)
        if let (Some(target), Some(_)) = (&target, &d.occlusion) {
            let tiles = (target.width as u32).div_ceil(HIZ_TILE) as usize
                * (target.height as u32).div_ceil(HIZ_TILE) as usize;
            if t.hiz.len() < tiles {
                t.hiz = self.gpu.zeros(tiles, "the depth tiles")?;
            }
        }
        let kernel = match target {
            Some(_) => &d.fused,
            None => &d.shade,
        };
        if let (Some(p), Some(f)) = (d.shape, kernel) {
            let (batch, vcap, extra) = super::constants(strategy);
            // the strategy's kernel (fused: over `target`)
            let shade = |target: Option<&FusedTarget>| -> Result<(), GpuError> {
                let mut l = Dependent::new(stream, f);
                l.buf(&t.draws).val(&ndraws);
                match strategy {
                    Strategy::WarpVote { .. } => {
                        l.val(&batch).val(&vcap);
                    }
                    Strategy::Naive | Strategy::Multi | Strategy::Patch => {}
                    _ => {
                        l.val(&extra);
                    }
                }
                if let Some(target) = target {
                    l.val(target);
                }
                // SAFETY: every draw passed `plan` (its queue's size, the strategy's limits),
                // which gave the grid of a launch of its own; the launch is those grids end to
                // end (block_base), with the one block shape all draws of a strategy share. A
                // fused launch over listed batches has as many blocks, those past the list's
                // count idle.
                unsafe { l.launch(d.blocks, p.threads, p.smem, dep, strategy.name()) }
            };
            match (&target, &d.batch_list) {
                (Some(first), Some(list)) if first.batches != 0 => {
                    self.culled_passes(d, &t, first, list, &shade)?
                }
                _ => shade(target.as_ref())?,
            }
        }
        if let Some(f) = &d.sum {
            let on = match aside {
                None => stream,
                Some(side) => {
                    let shaded = stream
                        .record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
                        .ctx("recording an event")?;
                    side.wait(&shaded).ctx("ordering the side stream")?;
                    side
                }
            };
            if !d.clear_first {
                self.clear_counts(d, &t, on, CLEAR_TOTALS)?;
            }
            let mut l = Dependent::new(on, f);
            l.buf(&t.draws).val(&ndraws).buf(&t.total);
            // SAFETY: as in `clear_counts`.
            unsafe { l.launch(d.chunks, 256, 0, dep, "counts_sum_draws") }?;
        }
        Ok(())
    }

    /// A fused launch that culls whole batches: the batches listed (fused_batch_list) and
    /// drawn (`shade`), and with occlusion culling the first pass's depth tiled (rxp_hiz), the
    /// batches left tested against it (fused_batch_occlusion) and the visible ones drawn.
    fn culled_passes(
        &self,
        d: &DrawLaunch,
        t: &DrawTable,
        first: &FusedTarget,
        list: &CudaFunction,
        shade: &dyn Fn(Option<&FusedTarget>) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let stream = &self.gpu.stream;
        let dep = self.gpu.dependent_launch;
        let addr = |p: (cudarc::driver::sys::CUdeviceptr, _)| p.0;
        let grid = d.blocks.div_ceil(256);
        let (state, seen) = match &d.occlusion {
            Some(_) => (
                addr(t.state.device_ptr(stream)),
                addr(t.seen.device_ptr(stream)),
            ),
            None => (0, 0),
        };
        let mut c = Dependent::new(stream, list);
        c.buf(&t.draws).val(&d.ndraws).val(&d.blocks).val(first);
        c.val(&state).val(&seen);
        // SAFETY: a thread per block of the launch, each finding its draw and batch as the
        // fused kernel's block would; the list, the states and the seen marks hold an entry
        // per block (or, without occlusion culling, the last two are not read).
        unsafe { c.launch(grid, 256, 0, dep, "fused_batch_list") }?;
        shade(Some(first))?;
        let Some((hiz, occlusion)) = &d.occlusion else {
            return Ok(());
        };
        let tiles =
            (first.width as u32).div_ceil(HIZ_TILE) * (first.height as u32).div_ceil(HIZ_TILE);
        let mut h = Dependent::new(stream, hiz);
        h.val(first).buf(&t.hiz);
        // SAFETY: a block per tile of the frame's keys (`width` x `height`), which `hiz` holds.
        unsafe { h.launch(tiles, 256, 0, dep, "rxp_hiz") }?;
        let second = FusedTarget {
            batches: addr(t.batches2.device_ptr(stream)),
            listed: C_BATCH_LIST2,
            ..*first
        };
        let mut o = Dependent::new(stream, occlusion);
        o.buf(&t.draws).val(&d.ndraws).val(&d.blocks).val(&second);
        o.val(&state).val(&seen).buf(&t.hiz);
        // SAFETY: as fused_batch_list; the tiles are those rxp_hiz wrote.
        unsafe { o.launch(grid, 256, 0, dep, "fused_batch_occlusion") }?;
        shade(Some(&second))
    }

    /// Uploads a fused launch's per-draw table in the launch's order (each draw's part found by
    /// its queue) and returns the target with the table's address and, where the launch culls
    /// whole batches, its list's.
    fn fused_table(
        &self,
        d: &DrawLaunch,
        fused: &Fused,
        t: &mut DrawTable,
    ) -> Result<FusedTarget, GpuError> {
        // (by queue: a frame of many objects or instances has as many draws)
        let by_queue: std::collections::HashMap<u64, FusedDraw> =
            fused.draws.iter().copied().collect();
        let parts = d
            .queues
            .iter()
            .map(|q| {
                by_queue.get(q).copied().ok_or_else(|| {
                    GpuError::Limit(
                        "a fused geometry launch shades a queue the raster stage does not draw"
                            .into(),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.gpu.put(&mut t.fused, &parts, "fused draw table")?;
        let mut target = fused.target;
        target.draws = t.fused.device_ptr(&self.gpu.stream).0;
        // (the list, where a draw has batch bounds and whole batches may be culled)
        target.batches = match d.batch_list.is_some() && parts.iter().any(|p| p.cull_batches != 0) {
            true => t.batches.device_ptr(&self.gpu.stream).0,
            false => 0,
        };
        target.listed = C_BATCH_LIST;
        Ok(target)
    }

    /// Zeroes the per-vertex counts of a launched stage once everything that reads them is
    /// enqueued (the sum; in the shading-rate mode the raster stage), so that the next launch
    /// over the same queues need not clear them first; the totals stay for the statistics.
    pub fn reset_counts(&self, d: &DrawLaunch) -> Result<(), GpuError> {
        if self.counting {
            let t = self.draw_table.lock().unwrap_or_else(|p| p.into_inner());
            self.clear_counts(d, &t, &self.gpu.stream, CLEAR_COUNTS)?;
        }
        for z in &d.zeroed {
            z.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// counts_clear_draws over the table of `d` on `on`: `what` of CLEAR_COUNTS, CLEAR_TOTALS.
    fn clear_counts(
        &self,
        d: &DrawLaunch,
        t: &DrawTable,
        on: &CudaStream,
        what: u32,
    ) -> Result<(), GpuError> {
        let mut l = Dependent::new(on, &d.clear);
        l.buf(&t.draws).val(&d.ndraws).buf(&t.total).val(&what);
        // SAFETY: a block per chunk of a draw's counts (the table's count_base); every draw's
        // counts hold ncounts entries, its total one, and the frame's total one.
        unsafe {
            l.launch(
                d.chunks,
                256,
                0,
                self.gpu.dependent_launch,
                "counts_clear_draws",
            )
        }
    }

    /// The sum of the invocation counts of the last [`CudaGeometry::enqueue_draws`] (0 without
    /// counting).
    pub fn frame_invocations(&self) -> Result<u64, GpuError> {
        let t = self.draw_table.lock().unwrap_or_else(|p| p.into_inner());
        Ok(self.gpu.download(&t.total, 1)?[0])
    }
}
