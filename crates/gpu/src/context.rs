//! The CUDA device as rxpipe uses it: one context and stream, kernels compiled with NVRTC for the
//! device's own architecture on first use and cached in memory and on disk, and small safe helpers
//! for buffers and event timing.

use super::cache;
use super::error::{Context, GpuError};
use super::kernels::{assemble, Source};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, DriverError,
    PinnedHostSlice, ValidAsZeroBits,
};
use std::collections::HashMap;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Bytes a download moves per chunk ([`Gpu::start_download`]): small enough that copying the
/// last chunk out adds little to the copy engine's time, large enough that a frame's colour
/// and depth (16 MB at 1920x1080) take a few events.
pub const DOWNLOAD_CHUNK: usize = 2 << 20;

/// A download enqueued into page-locked staging ([`Gpu::start_download`]), its chunks not yet
/// copied out. It borrows the staging until [`PendingDownload::finish`].
pub struct PendingDownload<'s, T> {
    base: *const T,
    chunks: Vec<(std::ops::Range<usize>, cudarc::driver::CudaEvent)>,
    what: String,
    _staging: std::marker::PhantomData<&'s mut PinnedHostSlice<T>>,
}

impl<T: Copy + Send + Sync> PendingDownload<'_, T> {
    /// Copies the download into `out` (its length is the download's): each chunk as soon as the
    /// copy engine has written it, spread over the thread pool.
    pub fn finish(self, out: &mut [T]) -> Result<(), GpuError> {
        use rayon::prelude::*;
        let n = self.chunks.last().map_or(0, |(r, _)| r.end);
        if out.len() != n {
            return Err(GpuError::Limit(format!(
                "{} downloaded {n} elements into a buffer of {}",
                self.what,
                out.len()
            )));
        }
        // (pieces of 64 KiB: a chunk spreads over up to 32 threads)
        let piece = ((64 << 10) / std::mem::size_of::<T>().max(1)).max(1);
        for (r, done) in &self.chunks {
            done.synchronize()
                .ctx(&format!("waiting for {}", self.what))?;
            // SAFETY: the chunk's copy has completed (its event), the staging holds at least
            // `n` elements and is borrowed for this download's life, and nothing writes it now.
            let src = unsafe { std::slice::from_raw_parts(self.base.add(r.start), r.len()) };
            out[r.clone()]
                .par_chunks_mut(piece)
                .zip(src.par_chunks(piece))
                .for_each(|(o, i)| o.copy_from_slice(i));
        }
        Ok(())
    }
}

impl<T> Drop for PendingDownload<'_, T> {
    /// A download dropped unfinished (an error on the way) waits for its copies, so that its
    /// staging is never freed or reused while the copy engine writes it.
    fn drop(&mut self) {
        for (_, done) in &self.chunks {
            let _ = done.synchronize();
        }
    }
}

/// Where a module came from, for tests and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleOrigin {
    Compiled,
    DiskCache,
    MemoryCache,
}

/// One CUDA device, its stream and its compiled modules.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    /// the device's ordinal among the host's CUDA devices
    pub ordinal: usize,
    pub name: String,
    pub memory_bytes: usize,
    pub compute_capability: (i32, i32),
    pub nvrtc_version: (i32, i32),
    /// whether kernels launched through [`super::dependent::Dependent`] overlap the end of the
    /// kernel before them ([`super::dependent::dependent_launches`])
    pub dependent_launch: bool,
    /// where compiled modules are kept between runs (`None`: memory only)
    pub cache_dir: Option<PathBuf>,
    modules: Mutex<HashMap<u64, Arc<CudaModule>>>,
    /// the origin of the last module returned, per key
    origins: Mutex<HashMap<u64, ModuleOrigin>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "Gpu({}, sm_{}{})",
            self.name, self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// The most freed device memory a process keeps for reuse: a frame stage's subsets of the
/// largest benchmark meshes are a few hundred MB.
const KEEP_FREED: u64 = 2 << 30;

/// Lets the device's default memory pool keep up to `keep` freed bytes instead of returning them
/// to the system at every synchronisation (the pool's default), so that buffers made afresh every
/// frame (a frame stage's subsets) reuse memory instead of mapping it again. Only so much: past
/// it, what a large frame or mesh freed goes back at the next synchronisation, for the other
/// programs on the GPU. Best effort: without memory pools nothing changes.
fn keep_freed_memory(ctx: &Arc<CudaContext>, mut keep: u64) {
    use cudarc::driver::sys;
    if let Some(pool) = default_pool(ctx) {
        // SAFETY: a driver call on a pool of the context's device with a valid pointer to the
        // value; a failure is ignored (the pool then keeps its default).
        unsafe {
            let _ = sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            );
        }
    }
}

/// The default memory pool of the context's device (none where the device has no pools or the
/// driver refuses).
fn default_pool(ctx: &Arc<CudaContext>) -> Option<cudarc::driver::sys::CUmemoryPool> {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: plain driver calls on the context's device with a valid out-pointer.
    let found = unsafe {
        ctx.bind_to_thread().is_ok()
            && sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device())
                == sys::CUresult::CUDA_SUCCESS
    };
    found.then_some(pool)
}

impl Gpu {
    /// The device memory free now, in bytes (every context on the device counts). The stream
    /// is synchronised and the memory pool's freed memory given back to the device first, so
    /// that what buffers dropped before the call held counts as free (the pool would otherwise
    /// keep it, up to the whole of a dropped mesh, for its next allocations).
    pub fn free_bytes(&self) -> Result<usize, GpuError> {
        self.stream.synchronize().ctx("waiting for the GPU")?;
        if let Some(pool) = default_pool(&self.ctx) {
            // SAFETY: a driver call on a pool of the context's device; a failure only leaves
            // the figure as the driver reports it.
            let _ = unsafe { cudarc::driver::sys::cuMemPoolTrimTo(pool, 0) };
        }
        Ok(self.ctx.mem_get_info().ctx("querying free GPU memory")?.0)
    }

    /// Opens device 0, after checking that the driver, a device and NVRTC are there (never
    /// panics; a missing piece is [`GpuError::Unavailable`]).
    pub fn new() -> Result<Arc<Gpu>, GpuError> {
        Gpu::open(cache::default_dir())
    }

    /// [`Gpu::new`] with the disk cache in `cache_dir` (`None`: no disk cache).
    pub fn open(cache_dir: Option<PathBuf>) -> Result<Arc<Gpu>, GpuError> {
        Gpu::open_device(0, cache_dir)
    }

    /// The number of CUDA devices this host has that rxpipe can use (0 without a driver, a
    /// device or NVRTC).
    pub fn count() -> usize {
        let info = crate::info::probe();
        if info.usable() {
            info.devices.len()
        } else {
            0
        }
    }

    /// Opens device `ordinal` (0 is the first) with the disk cache in `cache_dir`; a missing
    /// driver, NVRTC or device is [`GpuError::Unavailable`], naming how many devices there are.
    pub fn open_device(ordinal: usize, cache_dir: Option<PathBuf>) -> Result<Arc<Gpu>, GpuError> {
        let info = crate::info::probe();
        if !info.usable() {
            return Err(GpuError::Unavailable(
                info.problem.unwrap_or_else(|| "no usable device".into()),
            ));
        }
        let Some(dev) = info.devices.get(ordinal) else {
            return Err(GpuError::Unavailable(format!(
                "there is no CUDA device {ordinal}: this host has {} (0 to {})",
                info.devices.len(),
                info.devices.len() - 1
            )));
        };
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| GpuError::Unavailable("the CUDA driver could not be used".into()))?
            .map_err(|e| {
                use cudarc::driver::sys::CUresult;
                if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                    GpuError::Unavailable(format!(
                        "{} has no memory left to start on (other programs on it are using it all)",
                        dev.name
                    ))
                } else if e.0 == CUresult::CUDA_ERROR_UNKNOWN {
                    // (an H200 whose memory another process holds entirely answers this way, where
                    // an H100 says out of memory)
                    GpuError::Unavailable(format!(
                        "{} could not start a CUDA context ({e:?}): the driver says this when the \
                         device has no memory left (other programs on it using it all) or is in a \
                         bad state; `nvidia-smi` shows which",
                        dev.name
                    ))
                } else {
                    GpuError::Driver {
                        what: "creating the CUDA context".into(),
                        source: e,
                    }
                }
            })?;
        let stream = ctx.default_stream();
        // SAFETY: every buffer is made, used and freed on this one stream, in order, so the
        // per-buffer events cudarc would record around every launch (for several streams) order
        // nothing; they cost host time at every launch.
        unsafe { ctx.disable_event_tracking() };
        keep_freed_memory(&ctx, KEEP_FREED.min(dev.memory_bytes as u64 / 16));
        Ok(Arc::new(Gpu {
            ctx,
            stream,
            ordinal,
            name: dev.name.clone(),
            memory_bytes: dev.memory_bytes,
            compute_capability: dev.compute_capability,
            dependent_launch: super::dependent::dependent_launches(dev.compute_capability),
            nvrtc_version: info.nvrtc_version.unwrap_or((0, 0)),
            cache_dir,
            modules: Mutex::new(HashMap::new()),
            origins: Mutex::new(HashMap::new()),
        }))
    }

    /// The NVRTC options a program is compiled with.
    fn options(&self, defines: &[(&str, String)]) -> Vec<String> {
        let (ma, mi) = self.compute_capability;
        let mut o = vec![
            format!("--gpu-architecture=sm_{ma}{mi}"),
            "--std=c++17".into(),
            "-lineinfo".into(),
            // no contraction of a * b + c into one FMA: the kernels then round exactly as the CPU
            // reference does (explicit fmaf calls still fuse)
            "--fmad=false".into(),
        ];
        for (k, v) in defines {
            o.push(format!("-D{k}={v}"));
        }
        // for measurement: RXPIPE_KERNEL_DEFINES="NAME=VALUE ..." overrides the kernels' tuning
        // constants that are guarded by #ifndef (RXP_SMALL, RXP_MIN_BLOCKS, RXP_TILE_ORDER, ...), so
        // that a sweep needs no rebuild; part of the cache key like every option
        if let Ok(extra) = std::env::var("RXPIPE_KERNEL_DEFINES") {
            for d in extra.split_whitespace() {
                if d.contains('=')
                    && d.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '=' || c == '.')
                {
                    o.push(format!("-D{d}"));
                }
            }
        }
        o
    }

    /// The cache key of a program: source, options, architecture and NVRTC version.
    pub fn module_key(&self, parts: &[Source], defines: &[(&str, String)]) -> u64 {
        let src = assemble(parts);
        let opts = self.options(defines).join(" ");
        let ver = format!(
            "{:?} {:?} {}",
            self.nvrtc_version,
            self.compute_capability,
            env!("CARGO_PKG_VERSION")
        );
        cache::fnv64(&[src.as_bytes(), opts.as_bytes(), ver.as_bytes()])
    }

    /// The module built from `parts` (concatenated, each with its own `#line`) and `defines`:
    /// from memory, else from the disk cache, else compiled by NVRTC and stored in both.
    pub fn module(
        &self,
        program: &str,
        parts: &[Source],
        defines: &[(&str, String)],
    ) -> Result<Arc<CudaModule>, GpuError> {
        let key = self.module_key(parts, defines);
        if let Some(m) = self.modules.lock().unwrap().get(&key) {
            self.origins
                .lock()
                .unwrap()
                .insert(key, ModuleOrigin::MemoryCache);
            return Ok(m.clone());
        }
        let cached = self.cache_dir.as_ref().and_then(|d| cache::load(d, key));
        let (module, origin) = match cached.map(|c| self.load_cubin(c)) {
            Some(Ok(m)) => (m, ModuleOrigin::DiskCache),
            // a cache entry the driver refuses is rebuilt like a missing one
            _ => {
                let cubin = self.compile(program, parts, defines)?;
                if let Some(d) = &self.cache_dir {
                    if let Err(e) = cache::store(d, key, &cubin) {
                        eprintln!(
                            "notice: could not write the kernel cache in {}: {e}",
                            d.display()
                        );
                    }
                }
                (self.load_cubin(cubin)?, ModuleOrigin::Compiled)
            }
        };
        self.modules.lock().unwrap().insert(key, module.clone());
        self.origins.lock().unwrap().insert(key, origin);
        Ok(module)
    }

    /// Where the module for `parts` and `defines` last came from.
    pub fn module_origin(
        &self,
        parts: &[Source],
        defines: &[(&str, String)],
    ) -> Option<ModuleOrigin> {
        let key = self.module_key(parts, defines);
        self.origins.lock().unwrap().get(&key).copied()
    }

    /// Forgets the modules held in memory (the disk cache stays).
    pub fn clear_memory_cache(&self) {
        self.modules.lock().unwrap().clear();
    }

    fn load_cubin(&self, cubin: Vec<u8>) -> Result<Arc<CudaModule>, GpuError> {
        self.ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
            .ctx("loading a compiled kernel module")
    }

    /// Compiles with NVRTC to a CUBIN for this device.
    fn compile(
        &self,
        program: &str,
        parts: &[Source],
        defines: &[(&str, String)],
    ) -> Result<Vec<u8>, GpuError> {
        use cudarc::nvrtc::{result, sys};
        let src = CString::new(assemble(parts)).map_err(|_| GpuError::Compile {
            program: program.into(),
            log: "the source contains a NUL byte".into(),
        })?;
        let name = CString::new(format!("{program}.cu")).unwrap_or_default();
        let opts = self.options(defines);
        let fail = |log: String| GpuError::Compile {
            program: program.into(),
            log,
        };
        let prog = result::create_program(&src, Some(&name))
            .map_err(|e| fail(format!("nvrtcCreateProgram: {e:?}")))?;
        // SAFETY: `prog` is a live program until destroyed below; `src` and `name` outlive it.
        let compiled = unsafe { result::compile_program(prog, &opts) };
        let log = unsafe { result::get_program_log(prog) }
            .map(|l| {
                let bytes: Vec<u8> = l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .unwrap_or_default();
        let out = match compiled {
            Err(e) => Err(fail(if log.trim().is_empty() {
                format!("{e:?}")
            } else {
                log
            })),
            Ok(()) => {
                let mut size = 0usize;
                // SAFETY: the program compiled; the buffer is sized as NVRTC reports.
                unsafe {
                    sys::nvrtcGetCUBINSize(prog, &mut size)
                        .result()
                        .map_err(|e| fail(format!("nvrtcGetCUBINSize: {e:?}")))
                        .and_then(|_| {
                            let mut buf = vec![0u8; size];
                            sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _)
                                .result()
                                .map_err(|e| fail(format!("nvrtcGetCUBIN: {e:?}")))
                                .map(|_| buf)
                        })
                }
            }
        };
        // SAFETY: created above and not destroyed before.
        let _ = unsafe { result::destroy_program(prog) };
        out
    }

    /// A kernel of a module.
    pub fn function(&self, module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, GpuError> {
        module
            .load_function(name)
            .ctx(&format!("loading kernel {name}"))
    }

    /// A zeroed device buffer of `n` elements; running out of memory is a clear error.
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        n: usize,
        what: &str,
    ) -> Result<CudaSlice<T>, GpuError> {
        let bytes = n.max(1) * std::mem::size_of::<T>();
        self.stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(|e| self.alloc_error(e, what, bytes))
    }

    /// A device buffer of `n` elements left as the allocator gives it, for a kernel to fill
    /// whole; running out of memory is a clear error.
    ///
    /// # Safety
    /// Every element must be written before any is read.
    pub unsafe fn alloc_uninit<T: DeviceRepr>(
        &self,
        n: usize,
        what: &str,
    ) -> Result<CudaSlice<T>, GpuError> {
        let bytes = n.max(1) * std::mem::size_of::<T>();
        // SAFETY: the caller writes every element before reading one.
        unsafe { self.stream.alloc::<T>(n.max(1)) }.map_err(|e| self.alloc_error(e, what, bytes))
    }

    /// The device address of `buffer`, as a processing program's input table holds it: valid
    /// while the buffer lives.
    pub fn address<T>(&self, buffer: &CudaSlice<T>) -> u64 {
        use cudarc::driver::DevicePtr;
        buffer.device_ptr(&self.stream).0
    }

    /// A device copy of `data`.
    pub fn upload<T: DeviceRepr>(&self, data: &[T], what: &str) -> Result<CudaSlice<T>, GpuError> {
        let bytes = std::mem::size_of_val(data);
        if data.is_empty() {
            // a one-element buffer stands in for an empty one (CUDA has no zero-size allocation)
            // SAFETY: never read: every kernel is given the true length, zero.
            return unsafe { self.stream.alloc::<T>(1) }
                .map_err(|e| self.alloc_error(e, what, bytes));
        }
        self.stream
            .clone_htod(data)
            .map_err(|e| self.alloc_error(e, what, bytes))
    }

    /// Copies `data` into the front of `buf`, which is replaced by a larger one when too short
    /// (tables rewritten every frame keep their buffer).
    pub fn put<T: DeviceRepr>(
        &self,
        buf: &mut CudaSlice<T>,
        data: &[T],
        what: &str,
    ) -> Result<(), GpuError> {
        if data.is_empty() {
            return Ok(());
        }
        if buf.len() < data.len() {
            *buf = self.upload(data, what)?;
            return Ok(());
        }
        self.stream
            .memcpy_htod(data, &mut buf.slice_mut(0..data.len()))
            .ctx(&format!("uploading the {what}"))
    }

    /// Copies the first `out.len()` elements of `buf` into `out` through page-locked memory
    /// (`staging`, allocated on first use, replaced when too short, and kept by the caller):
    /// [`Gpu::start_download`], then [`PendingDownload::finish`].
    pub fn download_pinned<T: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync>(
        &self,
        buf: &CudaSlice<T>,
        out: &mut [T],
        staging: &mut Option<PinnedHostSlice<T>>,
        what: &str,
    ) -> Result<(), GpuError> {
        self.start_download(buf, out.len(), staging, what)?
            .finish(out)
    }

    /// Enqueues the download of the first `n` elements of `buf` into page-locked memory
    /// (`staging`, allocated on first use, replaced when too short, and kept by the caller): the
    /// copy engine writes it at the bus's speed, where a download into pageable memory is staged
    /// by the driver piece by piece. The staging is ordinary cached memory (not write-combined,
    /// which the host reads slowly). The copy is enqueued in chunks of [`DOWNLOAD_CHUNK`] bytes,
    /// each followed by an event, so that [`PendingDownload::finish`] copies a chunk out while
    /// the copy engine writes the next; several downloads started before the first is finished
    /// queue back to back.
    pub fn start_download<'s, T: DeviceRepr + ValidAsZeroBits + Copy>(
        &self,
        buf: &CudaSlice<T>,
        n: usize,
        staging: &'s mut Option<PinnedHostSlice<T>>,
        what: &str,
    ) -> Result<PendingDownload<'s, T>, GpuError> {
        if n > buf.len() {
            return Err(GpuError::Limit(format!(
                "downloading {n} elements of {what}, which holds {}",
                buf.len()
            )));
        }
        if staging.as_ref().is_none_or(|s| s.len() < n.max(1)) {
            *staging = None;
            let bytes = n.max(1) * std::mem::size_of::<T>();
            // SAFETY: the staging is read only where a chunk's copy has written it (finish).
            let s = unsafe { self.ctx.alloc_pinned_with_flags::<T>(n.max(1), 0) }
                .map_err(|e| self.alloc_error(e, what, bytes))?;
            *staging = Some(s);
        }
        let s = staging.as_mut().expect("allocated above");
        // (the context tracks no events, so the staging's own event is never recorded: the
        // chunks' events below say when each part is written)
        let base = s.as_mut_ptr().ctx(&format!("staging {what}"))?;
        let per = (DOWNLOAD_CHUNK / std::mem::size_of::<T>().max(1)).max(1);
        let mut chunks = Vec::with_capacity(n.div_ceil(per));
        for a in (0..n).step_by(per) {
            let b = (a + per).min(n);
            // SAFETY: [a, b) lies within the staging (at least n elements), and no other
            // reference to it exists until finish reads it after this chunk's event.
            let dst = unsafe { std::slice::from_raw_parts_mut(base.add(a), b - a) };
            self.stream
                .memcpy_dtoh(&buf.slice(a..b), dst)
                .ctx(&format!("downloading {what}"))?;
            let done = self
                .stream
                .record_event(None)
                .ctx(&format!("recording the download of {what}"))?;
            chunks.push((a..b, done));
        }
        Ok(PendingDownload {
            base,
            chunks,
            what: what.to_string(),
            _staging: std::marker::PhantomData,
        })
    }

    /// A host copy of a device buffer's first `n` elements.
    pub fn download<T: DeviceRepr + Default + Clone>(
        &self,
        buf: &CudaSlice<T>,
        n: usize,
    ) -> Result<Vec<T>, GpuError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut out = vec![T::default(); n];
        self.stream
            .memcpy_dtoh(&buf.slice(0..n), &mut out)
            .ctx("downloading a result")?;
        Ok(out)
    }

    fn alloc_error(&self, e: DriverError, what: &str, bytes: usize) -> GpuError {
        if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            GpuError::OutOfMemory {
                what: what.into(),
                bytes,
                total: self.memory_bytes,
            }
        } else {
            GpuError::Driver {
                what: format!("allocating {what}"),
                source: e,
            }
        }
    }

    /// Runs `f` (which enqueues work on the stream) `runs` times after `warmup` runs, timing each
    /// with CUDA events; returns the times in milliseconds.
    pub fn time<E: From<GpuError>, F: FnMut() -> Result<(), E>>(
        &self,
        warmup: usize,
        runs: usize,
        mut f: F,
    ) -> Result<Vec<f64>, E> {
        use cudarc::driver::sys::CUevent_flags;
        for _ in 0..warmup {
            f()?;
        }
        let start = self
            .ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .ctx("creating an event")?;
        let end = self
            .ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .ctx("creating an event")?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            start.record(&self.stream).ctx("recording an event")?;
            f()?;
            end.record(&self.stream).ctx("recording an event")?;
            end.synchronize().ctx("waiting for the GPU")?;
            times.push(start.elapsed_ms(&end).ctx("reading an event")? as f64);
        }
        Ok(times)
    }

    /// Waits for all work on the stream.
    pub fn sync(&self) -> Result<(), GpuError> {
        self.stream.synchronize().ctx("waiting for the GPU")
    }
}

/// Threads per block of [`launch_1d`].
pub const BLOCK_1D: u32 = 256;

/// Launches `l` with one thread per element of `n` in blocks of [`BLOCK_1D`] (nothing when
/// `n` is zero); a failed launch names `what`.
///
/// # Safety
/// As [`cudarc::driver::LaunchArgs::launch`]: the arguments must match the kernel's signature
/// and every buffer must hold what the kernel reads and writes for `n` threads.
pub unsafe fn launch_1d(l: cudarc::driver::LaunchArgs, n: u32, what: &str) -> Result<(), GpuError> {
    launch(l, n.div_ceil(BLOCK_1D), BLOCK_1D, 0, what)
}

/// Launches `l` on `blocks` blocks of `threads` threads with `shared` bytes of dynamic shared
/// memory (nothing when `blocks` is zero); a failed launch names `what`.
///
/// # Safety
/// As [`cudarc::driver::LaunchArgs::launch`].
pub unsafe fn launch(
    mut l: cudarc::driver::LaunchArgs,
    blocks: u32,
    threads: u32,
    shared: u32,
    what: &str,
) -> Result<(), GpuError> {
    if blocks == 0 {
        return Ok(());
    }
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: shared,
    };
    // SAFETY: the caller's (see above).
    unsafe { l.launch(cfg) }
        .map(|_| ())
        .map_err(|source| GpuError::Driver {
            what: format!("launching {what}"),
            source,
        })
}

/// The median of a list of times.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        0.5 * (s[m - 1] + s[m])
    }
}
