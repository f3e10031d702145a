//! The device-wide prefix sum of kernels/sort.cu (three launches: per-tile sums, one block
//! scanning them, every tile scanned with its offset), for the stages whose modules include it.

use crate::context::{launch, Gpu};
use crate::error::GpuError;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaViewMut, PushKernelArg};
use std::sync::Arc;

/// Values per tile of the scan (RXS_TILE in kernels/sort.cu).
pub const TILE: usize = 256 * 16;

/// The scan's kernels, from a module that includes kernels/sort.cu.
pub struct Scan {
    reduce: CudaFunction,
    sums: CudaFunction,
    tiles: CudaFunction,
}

impl Scan {
    pub fn new(gpu: &Gpu, module: &Arc<CudaModule>) -> Result<Scan, GpuError> {
        Ok(Scan {
            reduce: gpu.function(module, "rxs_reduce")?,
            sums: gpu.function(module, "rxs_scan_sums")?,
            tiles: gpu.function(module, "rxs_scan_tiles")?,
        })
    }

    /// The scratch entries a scan of `n` values needs (its tile sums).
    pub fn sums_len(n: usize) -> usize {
        n.div_ceil(TILE).max(1) + 1
    }

    /// `out` = the prefix sum of `x[..n]` (mode 0: exclusive, 1: inclusive minus one), with the
    /// total written to `total[0]` (read it after synchronising). `sums` holds at least
    /// [`Scan::sums_len`] entries; `n` is below 2^32.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        gpu: &Gpu,
        x: &CudaSlice<u32>,
        n: usize,
        mode: u32,
        out: &mut CudaSlice<u32>,
        sums: &mut CudaSlice<u32>,
        total: &mut CudaViewMut<u32>,
    ) -> Result<(), GpuError> {
        let s = &gpu.stream;
        let tiles = n.div_ceil(TILE).max(1);
        if sums.len() < tiles || x.len() < n || out.len() < n {
            return Err(GpuError::Limit(format!(
                "a scan of {n} values with {} sums, {} inputs and {} outputs",
                sums.len(),
                x.len(),
                out.len()
            )));
        }
        let (n32, t32) = (n as u32, tiles as u32);
        let mut l = s.launch_builder(&self.reduce);
        l.arg(x).arg(&n32).arg(&mut *sums);
        // SAFETY: one block per tile; `sums` holds at least `tiles` entries (checked above).
        unsafe { launch(l, tiles as u32, 256, 0, "rxs_reduce") }?;
        let mut l = s.launch_builder(&self.sums);
        l.arg(&mut *sums).arg(&t32).arg(total);
        // SAFETY: one block scanning `tiles` sums in place and writing one total.
        unsafe { launch(l, 1, 1024, 0, "rxs_scan_sums") }?;
        let mut l = s.launch_builder(&self.tiles);
        l.arg(x).arg(&n32).arg(&*sums).arg(&mode).arg(out);
        // SAFETY: one block per tile, writing only its own `n`-bounded range of `out`.
        unsafe { launch(l, tiles as u32, 256, 0, "rxs_scan_tiles") }?;
        Ok(())
    }
}
