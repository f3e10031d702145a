//! Compositing on the GPU (kernels/composite.cu), the CUDA side of [`super::composite`]: the
//! parts of a frame held on one device ([`DeviceComposite`]), or one part on each GPU of a host,
//! reduced through NCCL ([`NcclComposite`]).
//!
//! Each pixel's key is its depth's order-preserving bits above the part's index, so the least
//! key over the parts names the nearest part, a tie going to the earlier one (the CPU's rule).
//! Over several GPUs the least keys are one NCCL all-reduce (minimum, unsigned 64-bit); each
//! GPU then keeps its colour where its part won and zero elsewhere, and a second all-reduce
//! (sum, unsigned 32-bit: one addend a pixel is not zero) gives every GPU the composite's
//! colour. The colour travels with the key's winner rather than being shaded again: 12 bytes a
//! pixel move, and no part has to hold another's triangles.

use crate::gpu::{kernels, launch, Context, Gpu, GpuError};
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use cudarc::nccl::safe::{Comm, ReduceOp};
use std::sync::Arc;

/// The compositing kernels.
pub const SOURCE: kernels::Source<'static> = rxpipe_gpu::kernel_source!("composite.cu");

/// Threads per block (RXC_BLOCK in kernels/composite.cu).
const BLOCK: u32 = 256;

/// One part of a frame on the device: its colour (RGBA8, the frame's bytes, as the rasteriser
/// leaves it: `raster::cuda::CudaRaster::frame_buffers`) and depth.
pub type DevicePart<'a> = (&'a CudaSlice<u8>, &'a CudaSlice<f32>);

/// The first part of `parts` that holds fewer than a frame of `pixels`, as the error.
fn check_parts(parts: &[DevicePart], pixels: usize) -> Result<(), GpuError> {
    match parts
        .iter()
        .position(|(c, d)| c.len() < 4 * pixels || d.len() < pixels)
    {
        Some(k) => Err(GpuError::Limit(format!(
            "part {k} of the frame holds fewer than its {pixels} pixels"
        ))),
        None => Ok(()),
    }
}

/// A frame composited on one device: its colour (RGBA8 words) and depth, with the per-pixel
/// keys that chose them.
pub struct DeviceComposite {
    gpu: Arc<Gpu>,
    keys_fn: CudaFunction,
    pick_fn: CudaFunction,
    keys: CudaSlice<u64>,
    color: CudaSlice<u32>,
    depth: CudaSlice<f32>,
    pixels: usize,
}

impl DeviceComposite {
    /// Compiles (or fetches from the cache) the kernels on `gpu`.
    pub fn new(gpu: &Arc<Gpu>) -> Result<DeviceComposite, GpuError> {
        let module = gpu.module("composite", &[SOURCE], &[])?;
        Ok(DeviceComposite {
            keys_fn: gpu.function(&module, "rxc_keys")?,
            pick_fn: gpu.function(&module, "rxc_pick")?,
            keys: gpu.zeros(1, "the composite's keys")?,
            color: gpu.zeros(1, "the composite's colour")?,
            depth: gpu.zeros(1, "the composite's depth")?,
            gpu: gpu.clone(),
            pixels: 0,
        })
    }

    /// The composite's pixels: those of the parts last composited.
    pub fn pixels(&self) -> usize {
        self.pixels
    }

    /// The composite's colour (RGBA8 words) and depth on the device.
    pub fn frame(&self) -> (&CudaSlice<u32>, &CudaSlice<f32>) {
        (&self.color, &self.depth)
    }

    /// Room for a frame of `pixels`.
    fn reserve(&mut self, pixels: usize) -> Result<(), GpuError> {
        if self.keys.len() < pixels {
            self.keys = self.gpu.zeros(pixels, "the composite's keys")?;
            self.color = self.gpu.zeros(pixels, "the composite's colour")?;
            self.depth = self.gpu.zeros(pixels, "the composite's depth")?;
        }
        self.pixels = pixels;
        Ok(())
    }

    /// Composites `parts`, the parts of one frame of `pixels` pixels in submission order, all on
    /// this device, into this composite (enqueued on the device's stream).
    pub fn parts(&mut self, parts: &[DevicePart], pixels: usize) -> Result<(), GpuError> {
        if parts.is_empty() {
            return Err(GpuError::Limit("no parts to composite".into()));
        }
        check_parts(parts, pixels)?;
        self.reserve(pixels)?;
        for (p, (_, depth)) in parts.iter().enumerate() {
            self.keys_of(depth, p as u32, p == 0)?;
        }
        for (p, (color, _)) in parts.iter().enumerate() {
            self.pick(p as u32, false, color)?;
        }
        Ok(())
    }

    /// The keys of part `part`'s `depth`: written (`first`), or taken where less.
    fn keys_of(&mut self, depth: &CudaSlice<f32>, part: u32, first: bool) -> Result<(), GpuError> {
        let (n, first, blocks) = (self.pixels as u64, first as i32, self.blocks());
        let mut l = self.gpu.stream.launch_builder(&self.keys_fn);
        l.arg(depth)
            .arg(&part)
            .arg(&first)
            .arg(&mut self.keys)
            .arg(&n);
        // SAFETY: one thread a pixel, reading its depth and writing its key; every buffer holds
        // the frame's pixels (checked by the callers, `reserve`).
        unsafe { launch(l, blocks, BLOCK, 0, "rxc_keys") }
    }

    /// The colour and depth of the pixels part `part` won, from its `color` (with `others`,
    /// zero colour and the key's depth at the others).
    fn pick(&mut self, part: u32, others: bool, color: &CudaSlice<u8>) -> Result<(), GpuError> {
        let (n, others, blocks) = (self.pixels as u64, others as i32, self.blocks());
        let mut l = self.gpu.stream.launch_builder(&self.pick_fn);
        l.arg(&self.keys)
            .arg(&part)
            .arg(&others)
            .arg(color)
            .arg(&mut self.color)
            .arg(&mut self.depth)
            .arg(&n);
        // SAFETY: as in `keys_of`: one thread a pixel, its own entries of each buffer.
        unsafe { launch(l, blocks, BLOCK, 0, "rxc_pick") }
    }

    fn blocks(&self) -> u32 {
        (self.pixels as u64).div_ceil(BLOCK as u64).max(1) as u32
    }

    /// Downloads the composite: its colour as the frame's bytes (RGBA8) and its depth.
    pub fn download(&self, color: &mut Vec<u8>, depth: &mut Vec<f32>) -> Result<(), GpuError> {
        let words = self.gpu.download(&self.color, self.pixels)?;
        color.clear();
        color.extend_from_slice(bytemuck::cast_slice(&words));
        *depth = self.gpu.download(&self.depth, self.pixels)?;
        Ok(())
    }
}

/// One frame composited over the GPUs of one host through NCCL: part `r` drawn on GPU `r`
/// (rank `r`), the composite then on every GPU.
pub struct NcclComposite {
    comms: Vec<Comm>,
    ranks: Vec<DeviceComposite>,
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a time; a composite is
// only used through `&mut self` (or `&self` for waiting on its streams), so never from two
// threads at once.
unsafe impl Send for NcclComposite {}

/// Whether the NCCL library (libnccl.so.2) loads.
pub fn nccl_present() -> bool {
    // SAFETY: only probes whether the library can be opened.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

impl NcclComposite {
    /// An NCCL communicator over `gpus`, one rank each in order (a rank's work on its GPU's
    /// stream), with NVLink multicast off unless `NCCL_NVLS_ENABLE` says otherwise.
    pub fn new(gpus: &[Arc<Gpu>]) -> Result<NcclComposite, GpuError> {
        if !nccl_present() {
            return Err(GpuError::Unavailable(
                "the NCCL library (libnccl.so.2) is not installed: compositing over several GPUs needs it".into(),
            ));
        }
        if gpus.is_empty() {
            return Err(GpuError::Limit("no GPUs to composite over".into()));
        }
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        let ranks = gpus
            .iter()
            .map(DeviceComposite::new)
            .collect::<Result<Vec<_>, _>>()?;
        let streams = gpus.iter().map(|g| g.stream.clone()).collect();
        let comms = Comm::from_devices(streams).map_err(|e| nccl("setting up", e))?;
        Ok(NcclComposite { comms, ranks })
    }

    /// The GPUs (ranks) composited over.
    pub fn ranks(&self) -> usize {
        self.ranks.len()
    }

    /// Composites `parts`, part `r` on rank `r`'s GPU, of a frame of `pixels` pixels: every rank
    /// then holds the composite ([`NcclComposite::rank`]).
    pub fn parts(&mut self, parts: &[DevicePart], pixels: usize) -> Result<(), GpuError> {
        if parts.len() != self.ranks.len() {
            return Err(GpuError::Limit(format!(
                "{} parts for {} GPUs: one part a GPU",
                parts.len(),
                self.ranks.len()
            )));
        }
        check_parts(parts, pixels)?;
        for (r, (rank, (_, depth))) in self.ranks.iter_mut().zip(parts).enumerate() {
            rank.reserve(pixels)?;
            rank.keys_of(depth, r as u32, true)?;
        }
        // (one thread drives every GPU: the collectives of a step go in one NCCL group)
        self.grouped("the least keys", |comm, rank| {
            comm.all_reduce_in_place(&mut rank.keys.slice_mut(0..pixels), &ReduceOp::Min)
        })?;
        for (r, (rank, (color, _))) in self.ranks.iter_mut().zip(parts).enumerate() {
            rank.pick(r as u32, true, color)?;
        }
        self.grouped("the winners' colours", |comm, rank| {
            comm.all_reduce_in_place(&mut rank.color.slice_mut(0..pixels), &ReduceOp::Sum)
        })
    }

    /// `op` on every rank in one NCCL group.
    fn grouped(
        &mut self,
        what: &str,
        mut op: impl FnMut(
            &Comm,
            &mut DeviceComposite,
        )
            -> Result<cudarc::nccl::result::NcclStatus, cudarc::nccl::result::NcclError>,
    ) -> Result<(), GpuError> {
        use cudarc::nccl::result::{group_end, group_start};
        group_start().map_err(|e| nccl(what, e))?;
        let mut result = Ok(());
        for (comm, rank) in self.comms.iter().zip(self.ranks.iter_mut()) {
            if let Err(e) = op(comm, rank) {
                result = Err(nccl(what, e));
                break;
            }
        }
        // (the group is closed whatever happened inside it)
        let end = group_end().map_err(|e| nccl(what, e));
        result.and(end.map(|_| ()))
    }

    /// Rank `r`'s composite (after [`NcclComposite::parts`], every rank's is the frame).
    pub fn rank(&self, r: usize) -> &DeviceComposite {
        &self.ranks[r]
    }

    /// Waits for every rank's work.
    pub fn sync(&self) -> Result<(), GpuError> {
        for r in &self.ranks {
            r.gpu.stream.synchronize().ctx("waiting for a GPU")?;
        }
        Ok(())
    }
}

/// An NCCL error while doing `what`.
fn nccl(what: &str, e: cudarc::nccl::result::NcclError) -> GpuError {
    GpuError::Limit(format!("NCCL failed compositing {what}: {e:?}"))
}
