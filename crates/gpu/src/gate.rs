//! A gate on the stream: the device holds the work enqueued after [`StreamGate::hold`] until the
//! host calls [`StreamGate::release`], so that a frame whose kernels the host issues one at a
//! time (each launch costs the host microseconds, a small kernel's run about as much) runs on the
//! device back to back once it is all enqueued, as a recorded command buffer would. The device
//! waits on a word of page-locked host memory (a stream memory operation), which the host writes.
//!
//! Between `hold` and `release` the host must not wait for the stream (a synchronisation, or a
//! copy that blocks until the stream is done): it would wait for itself. Dropping the gate, or
//! holding it again, releases it. For the same reason there is no gate under a CUDA tool that
//! runs each launch to completion as it is issued (ncu, compute-sanitizer: seen by the variables
//! their injection sets).
//!
//! Nor, unless the program says otherwise, in a library's process: the stream is the context's
//! default stream, which every thread of the process shares, and another thread's synchronous
//! operation on it (a copy from pageable memory, a free) waits for the held frame while it may
//! hold the driver's lock that the holding thread's next launch needs: a deadlock (seen once in
//! a test binary whose tests render on several threads at once). A program that uses the GPU
//! from one thread calls [`enable`] (the rxpipe program does: its viewer, `render` and the
//! benchmarks). `RXPIPE_STREAM_GATE=1` or `0` overrides either way.

use super::context::Gpu;
use super::error::{Context, GpuError};
use cudarc::driver::sys;
use cudarc::driver::PinnedHostSlice;

static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets the CUDA frames of this process hold their stream while they are enqueued: for programs
/// that use the GPU from one thread at a time (see the module's documentation).
pub fn enable() {
    ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether frames hold their stream: [`enable`]d, or `RXPIPE_STREAM_GATE` says so (`1` or `0`),
/// and no CUDA tool is attached.
pub fn enabled() -> bool {
    if tool_attached() {
        return false;
    }
    match std::env::var("RXPIPE_STREAM_GATE").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => ENABLED.load(std::sync::atomic::Ordering::Relaxed),
    }
}

/// See the module's documentation. `None` from [`StreamGate::new`] where the device cannot wait
/// on memory; then nothing is held.
pub struct StreamGate {
    /// the word the device waits on (keeps the allocation alive)
    _flag: PinnedHostSlice<u32>,
    /// the word's address on the host and on the device
    host: usize,
    device: sys::CUdeviceptr,
    /// the value the last hold waits for
    count: u32,
    held: bool,
    /// false once the driver refused the wait (then nothing is held)
    usable: bool,
}

impl StreamGate {
    /// A gate for `gpu`'s stream, or `None` where there is to be none ([`enabled`]) or the
    /// device cannot map host memory (the work then runs as it is enqueued).
    pub fn new(gpu: &Gpu) -> Result<Option<StreamGate>, GpuError> {
        if !enabled() {
            return Ok(None);
        }
        // SAFETY: the word is written below before the device reads it.
        let mut flag = unsafe {
            gpu.ctx
                .alloc_pinned_with_flags::<u32>(1, sys::CU_MEMHOSTALLOC_DEVICEMAP)
        }
        .ctx("allocating the stream gate")?;
        let host = flag.as_mut_ptr().ctx("mapping the stream gate")?;
        // SAFETY: `host` points at the one u32 just allocated; nothing on the device reads it yet.
        unsafe { std::ptr::write_volatile(host, 0) };
        let mut device: sys::CUdeviceptr = 0;
        gpu.ctx.bind_to_thread().ctx("binding the context")?;
        // SAFETY: `host` was allocated with CU_MEMHOSTALLOC_DEVICEMAP in the current context.
        let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host.cast(), 0) };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Ok(None);
        }
        Ok(Some(StreamGate {
            _flag: flag,
            host: host as usize,
            device,
            count: 0,
            held: false,
            usable: true,
        }))
    }

    /// Enqueues the wait: the stream's later work waits for [`StreamGate::release`].
    pub fn hold(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        self.release();
        if !self.usable {
            return Ok(());
        }
        // (the wait's comparison is cyclic: the count may wrap)
        self.count = self.count.wrapping_add(1);
        // SAFETY: the stream is `gpu`'s, the address the device's view of the gate's word
        // (kept alive by `self._flag` for as long as the gate).
        let r = unsafe {
            sys::cuStreamWaitValue32_v2(
                gpu.stream.cu_stream(),
                self.device,
                self.count,
                sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32,
            )
        };
        if r == sys::CUresult::CUDA_ERROR_NOT_SUPPORTED {
            self.usable = false;
            return Ok(());
        }
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(GpuError::Driver {
                what: "holding the stream".into(),
                source: cudarc::driver::DriverError(r),
            });
        }
        self.held = true;
        Ok(())
    }

    /// Lets the device run what was enqueued after the last hold (nothing when not held).
    pub fn release(&mut self) {
        if self.held {
            // SAFETY: the gate's word, allocated in `new` and alive with `self._flag`; the device
            // only reads it.
            unsafe { std::ptr::write_volatile(self.host as *mut u32, self.count) };
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            self.held = false;
        }
    }
}

/// Whether an NVIDIA tool injected itself into this process (Nsight Compute and Systems,
/// compute-sanitizer, or a tool through the driver's injection path).
fn tool_attached() -> bool {
    std::env::vars_os().any(|(k, _)| {
        let k = k.to_string_lossy();
        k == "CUDA_INJECTION64_PATH"
            || k.starts_with("NV_NSIGHT_INJECTION")
            || k.starts_with("NV_SANITIZER_INJECTION")
    })
}

impl Drop for StreamGate {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_library_process_holds_no_stream_unless_it_asks() {
        // (nothing in the library's tests calls enable(): their tests render on many threads)
        if std::env::var_os("RXPIPE_STREAM_GATE").is_some() {
            eprintln!("notice: RXPIPE_STREAM_GATE is set; skipping");
            return;
        }
        assert!(!super::enabled(), "the stream gate is on without enable()");
    }
}
