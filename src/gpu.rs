//! The GPU as the stages see it: with the `cuda` feature, rxpipe-gpu (the device, NVRTC, buffers,
//! launches); without it, a GPU type and an error type that have no values, so that the API keeps
//! its shape (a stage takes an optional GPU, a renderer may hold one) while every such option is
//! `None` and every stage runs on the CPU.

#[cfg(feature = "cuda")]
pub use rxpipe_gpu::*;

/// A GPU: this build has none (it was built without the `cuda` feature), so no value of this
/// type can exist.
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub enum Gpu {}

/// What can go wrong on a GPU: in this build nothing can, as there is none, so no value of this
/// type can exist either (results that carry it never hold it).
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub enum GpuError {}

#[cfg(not(feature = "cuda"))]
impl std::fmt::Display for GpuError {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {}
    }
}

#[cfg(not(feature = "cuda"))]
impl std::error::Error for GpuError {}

/// Why this build has no GPU, for the messages of what would have used one.
#[cfg(not(feature = "cuda"))]
pub const UNAVAILABLE: &str = "rxpipe was built without its `cuda` feature";
