//! The raster stage's launch sequence on one stream: setup, the big-box binning, tile
//! rasterisation and the resolve of deferred tiles, with the events that time them and the
//! counters that say what each produced.

use super::{
    resolves_apart, CudaRaster, GpuDraw, Params, BIG_BLOCKS, BLOCK, CLIP_BLOCKS, COUNTERS,
    MAX_EXTRA, SETUP_BLOCKS,
};
use crate::gpu::{Context, Dependent, GpuError};
use crate::raster::RasterSettings;
use cudarc::driver::{CudaStream, DevicePtr};
use std::sync::Arc;

impl CudaRaster {
    /// rxp_setup_classify: a thread per triangle of the frame, the survivors listed.
    fn launch_classify(
        &mut self,
        p: &Params,
        tables: &super::material::Tables,
        ndraws: u32,
        ntris: u32,
        nt: u32,
        stream: &Arc<CudaStream>,
    ) -> Result<(), GpuError> {
        let dep = self.gpu.dependent_launch;
        let lists = self.lists_address();
        let cap = self.list.len() as u32;
        let mut l = Dependent::new(stream, &self.k.classify);
        l.val(&tables.draws)
            .val(&ndraws)
            .val(&ntris)
            .val(p)
            .buf(&self.first)
            .buf(&self.list)
            .val(&cap)
            .val(&lists)
            .buf(&self.counters)
            .buf(&self.tile_counts)
            .val(&nt);
        // SAFETY: arguments match rxp_setup_classify's signature; the draw table holds
        // `ndraws` draws whose triangles are the frame's 0..ntris, each draw's corners
        // covering the triangles it reads (check.rs; corners outside the queue are
        // rejected in the kernel); `first` holds every triangle of the frame, and the list
        // `cap` >= ntris entries, which the two lists (counted in `lists`, the word after the
        // counters) fill from either end; tile_counts holds `nt` entries.
        unsafe { l.launch(ntris.div_ceil(BLOCK), BLOCK, 0, dep, "rxp_setup_classify") }?;
        Ok(())
    }

    /// The device address of the setup lists' two counts (the word after the counters).
    pub(super) fn lists_address(&self) -> u64 {
        self.counters.device_ptr(&self.gpu.stream).0 + 8 * COUNTERS as u64
    }

    /// rxp_bin_big over setup's big-box list: counting the tiles each box's triangle may cover
    /// (into the tile counts), or with `fill` binning it there (through the cursors).
    pub(super) fn launch_bin_big(
        &mut self,
        p: &Params,
        fill: bool,
        stream: &Arc<CudaStream>,
    ) -> Result<(), GpuError> {
        let dep = self.gpu.dependent_launch;
        let mut l = Dependent::new(stream, &self.k.bin_big);
        let null = 0u64;
        l.buf(&self.records)
            .buf(&self.counters)
            .val(p)
            .buf(&self.big);
        if fill {
            l.buf(&self.cursors).buf(&self.bins);
        } else {
            l.buf(&self.tile_counts).val(&null);
        }
        // SAFETY: the warps stride over the list's entries (its count on the device, bounded by
        // the record capacity in the parameters), which are ids of records setup wrote; the
        // tile counts and cursors hold every tile; bins are written below their capacity.
        unsafe { l.launch(BIG_BLOCKS, BLOCK, 0, dep, "rxp_bin_big") }
    }

    /// Enqueues setup, binning and rasterisation, waits, and returns the counters (cleared
    /// before, with the setup lists' counts; in a `fused` frame the geometry stage listed the
    /// triangles setup takes and rasterised the small ones).
    pub(super) fn enqueue(
        &mut self,
        draws: &[GpuDraw],
        s: &RasterSettings,
        ntiles: usize,
        tables: &super::material::Tables,
        fused: bool,
    ) -> Result<[u64; COUNTERS], crate::raster::RasterError> {
        let mut p = self.params(s);
        let apart = resolves_apart(draws, s);
        // dense tiles are split over several blocks only where every tile leaves its keys to
        // rxp_resolve (the slices merge them there): lit frames with materials and no blending
        let split = apart
            && !s.over_target
            && draws
                .iter()
                .all(|d| super::material::alpha_class(d.material, s) != 2);
        p.split = split as u32;
        p.fused = fused as u32;
        let stream = self.gpu.stream.clone();
        self.events[1].record(&stream).ctx("recording an event")?;
        let ntris: u32 = draws.iter().map(|d| d.triangles as u32).sum();
        let nt = ntiles as u32;
        if ntris == 0 || fused {
            // (else rxp_setup_classify clears them; a fused frame's geometry stage classified
            // the triangles and listed the survivors for setup)
            stream
                .memset_zeros(&mut self.tile_counts)
                .ctx("clearing the tile counts")?;
        }
        if ntris > 0 {
            let ndraws = draws.len() as u32;
            if !fused {
                self.launch_classify(&p, tables, ndraws, ntris, nt, &stream)?;
            }
            self.launch_setup(&p, tables, ndraws, ntris, &stream)?;
        }
        self.events[2].record(&stream).ctx("recording an event")?;
        self.launch_binning(&p, split, nt, &stream)?;
        self.events[3].record(&stream).ctx("recording an event")?;
        self.launch_tiles(&p, tables, s, apart, split, nt, &stream)?;
        self.events[4].record(&stream).ctx("recording an event")?;
        self.finish_frame(&stream)
    }

    /// Setup of the listed triangles (by rxp_setup_classify or the fused geometry stage):
    /// those to clip on the side stream beside those kept whole (rxp_setup_clip, rxp_setup),
    /// each reserving records and adding to the tile counts.
    fn launch_setup(
        &mut self,
        p: &Params,
        tables: &super::material::Tables,
        ndraws: u32,
        ntris: u32,
        stream: &Arc<CudaStream>,
    ) -> Result<(), GpuError> {
        let dep = self.gpu.dependent_launch;
        let lists = self.lists_address();
        let cap = self.list.len() as u32;
        // the triangles to clip (few, a thread each through many pieces: a long tail on a
        // few SMs) on the side stream, beside those kept whole; both reserve their records
        // and add to the tile counts atomically
        self.fork.record(stream).ctx("recording an event")?;
        self.side.wait(&self.fork).ctx("ordering the side stream")?;
        for (on, f, name, blocks) in [
            (
                &self.side,
                &self.k.clip,
                "rxp_setup_clip",
                ntris.div_ceil(BLOCK).clamp(1, CLIP_BLOCKS),
            ),
            (
                stream,
                &self.k.setup,
                "rxp_setup",
                ntris.div_ceil(BLOCK).clamp(1, SETUP_BLOCKS),
            ),
        ] {
            let mut l = Dependent::new(on, f);
            l.val(&tables.draws).val(&ndraws).val(p).buf(&self.list);
            if name == "rxp_setup_clip" {
                l.val(&cap);
            }
            l.val(&lists)
                .buf(&self.records)
                .buf(&self.first)
                .buf(&self.tflags)
                .buf(&self.tile_counts)
                .buf(&self.counters)
                .buf(&self.big);
            // SAFETY: arguments match the kernel's signature; it reads the triangles
            // rxp_setup_classify listed, with the draw table's inputs checked as above (the
            // rate counts and indices cover the vertices and triangles read, the triangle
            // values the triangles); records, and the big-box list (record capacity
            // entries), are bounded in the kernel by the capacity in `p`. The grid strides
            // over the list. The two kernels write disjoint entries of `first` and `tflags`
            // (each its list's triangles) and everything else they share through atomics.
            unsafe { l.launch(blocks, BLOCK, 0, dep, name) }?;
        }
        self.join.record(&self.side).ctx("recording an event")?;
        stream.wait(&self.join).ctx("waiting for the side stream")?;
        Ok(())
    }

    /// Binning: the big boxes' tiles counted before the scan of the tile counts
    /// (rxp_bin_scan), then the big boxes binned on the side stream beside the other records
    /// (rxp_bin_fill); with `split`, dense tiles listed to be shared by several blocks.
    fn launch_binning(
        &mut self,
        p: &Params,
        split: bool,
        nt: u32,
        stream: &Arc<CudaStream>,
    ) -> Result<(), GpuError> {
        let dep = self.gpu.dependent_launch;
        // the big boxes' tiles counted (bins: none) before the scan
        self.launch_bin_big(p, false, stream)?;
        let mut l = Dependent::new(stream, &self.k.scan);
        l.buf(&self.tile_counts)
            .val(&nt)
            .buf(&self.offsets)
            .buf(&self.cursors)
            .buf(&self.order)
            .val(p);
        let null = 0u64;
        if split {
            l.buf(&self.splits);
        } else {
            l.val(&null);
        }
        // SAFETY: one block (of RXP_SCAN_THREADS); tile_counts and cursors hold ntiles entries,
        // offsets ntiles + 1, order ntiles + MAX_EXTRA, splits MAX_EXTRA + 1 (a tile splits into
        // two or more items: at most MAX_EXTRA tiles split).
        unsafe { l.launch(1, 1024, 0, dep, "rxp_bin_scan") }?;
        // the big boxes binned on the side stream beside the rest (both take their places in
        // the bins through the cursors' atomics; a bin's order does not matter)
        self.fork.record(stream).ctx("recording an event")?;
        self.side.wait(&self.fork).ctx("ordering the side stream")?;
        let side = self.side.clone();
        self.launch_bin_big(p, true, &side)?;
        self.join.record(&side).ctx("recording an event")?;
        let mut l = Dependent::new(stream, &self.k.fill);
        l.buf(&self.records)
            .buf(&self.counters)
            .val(p)
            .buf(&self.cursors)
            .buf(&self.bins);
        if split {
            l.buf(&self.splits).buf(&self.keys);
        } else {
            l.val(&null).val(&null);
        }
        // SAFETY: the grid strides over the records; the kernel reads only records below the
        // count and writes bins below the capacity in `p`; with `split`, the keys of the tiles
        // rxp_bin_scan listed in `splits` (each in the frame, whose pixels the keys hold).
        let blocks = (self.record_capacity as u32)
            .div_ceil(BLOCK)
            .clamp(1, SETUP_BLOCKS);
        unsafe { l.launch(blocks, BLOCK, 0, dep, "rxp_bin_fill") }?;
        stream.wait(&self.join).ctx("waiting for the side stream")?;
        Ok(())
    }

    /// The tiles rasterised and shaded, a block each (rxp_raster), and where tiles defer
    /// (`apart`), their pixels resolved (rxp_resolve).
    #[allow(clippy::too_many_arguments)]
    fn launch_tiles(
        &mut self,
        p: &Params,
        tables: &super::material::Tables,
        s: &RasterSettings,
        apart: bool,
        split: bool,
        nt: u32,
        stream: &Arc<CudaStream>,
    ) -> Result<(), GpuError> {
        let dep = self.gpu.dependent_launch;
        let null = 0u64;
        let (raster, resolve) = match self.variants.get(&self.variant) {
            Some((r, v)) => (r, v),
            None => (&self.k.raster, &self.k.resolve),
        };
        let mut l = Dependent::new(stream, raster);
        l.buf(&self.records)
            .buf(&self.first)
            .buf(&self.tflags)
            .buf(&self.offsets)
            .buf(&self.cursors)
            .buf(&self.bins)
            .buf(&self.order)
            .buf(&self.colors)
            .buf(&self.lut)
            .val(p)
            .val(tables)
            .buf(&self.color)
            .buf(&self.depth)
            .buf(&self.counters)
            .buf(&self.deferred);
        // (null: no tile defers)
        if apart {
            l.buf(&self.keys);
        } else {
            l.val(&null);
        }
        // (null: the tiles start with empty keys, not those of a fused geometry stage)
        if p.fused != 0 {
            l.buf(&self.keys);
        } else {
            l.val(&null);
        }
        // SAFETY: one block per tile; colour and depth hold width x height pixels, and so do
        // the keys when tiles may defer or the frame is fused (grown in `render`; else null,
        // twice); `deferred` holds
        // every tile; the tables hold a draw per draw of the frame, the materials they name,
        // and the textures those use, whose levels lie within the texel buffer
        // (DeviceMaterials::prepare). The blocks past the order's items (split tiles take up to
        // MAX_EXTRA more) return at once.
        let blocks = nt + if split { MAX_EXTRA as u32 } else { 0 };
        unsafe { l.launch(blocks, BLOCK, 0, dep, "rxp_raster") }?;
        if apart {
            let mut l = Dependent::new(stream, resolve);
            l.buf(&self.records)
                .buf(&self.first)
                .buf(&self.tflags)
                .buf(&self.deferred)
                .buf(&self.keys)
                .buf(&self.colors)
                .buf(&self.lut)
                .val(p)
                .val(tables)
                .buf(&self.color)
                .buf(&self.depth);
            // (four blocks per tile, RXP_RESOLVE_2D; by rows: pixels / BLOCK blocks)
            let blocks = (4 * nt).max((s.width * s.height).div_ceil(BLOCK));
            // SAFETY: a thread per pixel of the frame (the kernel checks the bounds: tiles and
            // pixels); it reads the keys of deferred tiles, which the tile kernel wrote for each
            // of their pixels, and the same tables as the tile kernel.
            unsafe { l.launch(blocks, BLOCK, 0, dep, "rxp_resolve") }?;
        }
        Ok(())
    }

    /// Releases the frame to the device, downloads the counters once it has run, and clears
    /// them for the next frame.
    fn finish_frame(
        &mut self,
        stream: &Arc<CudaStream>,
    ) -> Result<[u64; COUNTERS], crate::raster::RasterError> {
        self.enqueued_at = Some(std::time::Instant::now());
        // (the frame is enqueued: the device may run it; the download below waits for it)
        if let Some(g) = &mut self.gate {
            g.release();
        }
        let mut c = [0u64; COUNTERS];
        stream
            .memcpy_dtoh(&self.counters.slice(0..COUNTERS), &mut c[..])
            .ctx("downloading the raster counters")?;
        stream.synchronize().ctx("waiting for the GPU")?;
        // zeroed for the next frame now, between frames, instead of at its start
        stream
            .memset_zeros(&mut self.counters)
            .ctx("clearing the raster counters")?;
        self.counters_zeroed = true;
        Ok(c)
    }
}
