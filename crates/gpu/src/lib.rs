//! GPU plumbing; this module knows nothing about stages (each stage's `cuda.rs` declares its own
//! kernels with [`crate::kernel_source!`]). Discovery of the CUDA driver, a device
//! and NVRTC without ever panicking (the libraries are loaded dynamically and their presence is
//! checked before any call into them), the embedded kernel sources, NVRTC compilation with
//! in-memory and on-disk caches, buffers and event timing.

pub mod cache;
pub mod context;
pub mod dependent;
pub mod error;
pub mod gate;
pub mod info;
pub mod kernels;
pub mod mesh;
pub mod scan;

pub use context::{launch, launch_1d, median, Gpu, ModuleOrigin, BLOCK_1D};
pub use dependent::Dependent;
pub use error::{Context, GpuError};
pub use info::{probe, CudaInfo, DeviceInfo};
pub use mesh::DeviceAttributes;
