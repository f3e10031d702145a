//! `rxpipe::gpu` in a build without the `cuda` feature: the API keeps its shape (a stage takes an
//! optional GPU, a renderer may hold one), but no GPU can exist, so every such option is `None`
//! and every stage runs on the CPU.

/// A GPU: this build has none (it was built without the `cuda` feature), so no value of this
/// type can exist.
#[derive(Debug)]
pub enum Gpu {}

/// What can go wrong on a GPU: in this build nothing can, as there is none, so no value of this
/// type can exist either (results that carry it never hold it).
#[derive(Debug)]
pub enum GpuError {}

impl std::fmt::Display for GpuError {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {}
    }
}

impl std::error::Error for GpuError {}
