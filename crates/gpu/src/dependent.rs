//! Kernel launches as programmatic dependents (compute capability 9.0 and later): a kernel
//! launched through [`Dependent`] may be scheduled while the kernel before it on the stream is
//! still finishing, instead of after it, and waits for it where it must, in its first statement
//! (`rxp_after_prior()`, kernels/common.cuh: `griddepcontrol.wait`, which returns once the kernel
//! before has completed and its memory is visible). What that hides is the device's time from one
//! kernel's end to the next one's start, about a microsecond a launch: much of a frame of small
//! kernels.
//!
//! Every kernel launched this way must call `rxp_after_prior()` before it touches memory, since
//! it cannot know what the kernel before it writes or reads. None of them lets its dependents
//! start early (`griddepcontrol.launch_dependents`): their blocks would wait on SMs the kernel's
//! own blocks could use. On an older device, or with `RXPIPE_PDL=0`, the launch is an ordinary
//! one (and `rxp_after_prior()` does nothing).
//!
//! cudarc's launch builder keeps its arguments to itself, so this one collects its own: values
//! by reference ([`Dependent::val`]) and buffers by device address ([`Dependent::buf`]).

use super::error::GpuError;
use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr};
use std::ffi::c_void;
use std::marker::PhantomData;

/// Whether kernels launched through [`Dependent`] are programmatic dependents on this device:
/// compute capability 9.0 or later, and not turned off by `RXPIPE_PDL=0`.
pub fn dependent_launches(compute_capability: (i32, i32)) -> bool {
    compute_capability.0 >= 9 && std::env::var("RXPIPE_PDL").as_deref() != Ok("0")
}

/// One argument: a pointer to a value borrowed for the launch's lifetime, or a device address.
enum Arg {
    Val(*const c_void),
    Addr(u64),
}

/// A kernel launch whose arguments are collected here (see the module's documentation).
pub struct Dependent<'a> {
    stream: &'a CudaStream,
    func: &'a CudaFunction,
    args: Vec<Arg>,
    /// the values `args` points at are borrowed for 'a
    _borrows: PhantomData<&'a ()>,
}

impl<'a> Dependent<'a> {
    pub fn new(stream: &'a CudaStream, func: &'a CudaFunction) -> Self {
        Dependent {
            stream,
            func,
            args: Vec::new(),
            _borrows: PhantomData,
        }
    }

    /// An argument the kernel takes by value (a scalar, or a `#[repr(C)]` struct).
    pub fn val<T: DeviceRepr>(&mut self, v: &'a T) -> &mut Self {
        self.args.push(Arg::Val(v as *const T as *const c_void));
        self
    }

    /// A buffer the kernel reads or writes: its device address.
    pub fn buf<T>(&mut self, b: &'a CudaSlice<T>) -> &mut Self {
        let (addr, _) = b.device_ptr(self.stream);
        self.addr(addr)
    }

    /// A device address (0 for a null pointer).
    pub fn addr(&mut self, addr: u64) -> &mut Self {
        self.args.push(Arg::Addr(addr));
        self
    }

    /// Launches the kernel on `blocks` blocks of `threads` threads with `shared` bytes of dynamic
    /// shared memory (nothing when `blocks` is zero), as a programmatic dependent where
    /// `dependent` (see [`dependent_launches`]); a failed launch names `what`.
    ///
    /// # Safety
    /// As [`cudarc::driver::LaunchArgs::launch`]: the arguments must match the kernel's
    /// signature, and every buffer must hold what the kernel reads and writes. With `dependent`,
    /// the kernel must call `rxp_after_prior()` before it touches memory.
    pub unsafe fn launch(
        &mut self,
        blocks: u32,
        threads: u32,
        shared: u32,
        dependent: bool,
        what: &str,
    ) -> Result<(), GpuError> {
        if blocks == 0 {
            return Ok(());
        }
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: blocks,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shared,
            hStream: self.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: dependent as u32,
        };
        let fail = |source| GpuError::Driver {
            what: format!("launching {what}"),
            source,
        };
        self.stream.context().bind_to_thread().map_err(fail)?;
        // a pointer per kernel parameter to its value: borrowed for 'a, or in `args` (which
        // stays as it is through the call)
        let mut params: Vec<*mut c_void> = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Val(p) => p.cast_mut(),
                Arg::Addr(addr) => (addr as *const u64).cast_mut().cast(),
            })
            .collect();
        // SAFETY: the configuration, the attribute and every value `params` points at outlive
        // the call (the caller vouches that they match the kernel's signature).
        unsafe {
            sys::cuLaunchKernelEx(
                &config,
                self.func.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .map_err(fail)
    }
}
