//! What can go wrong on the device, and the wrapping of a driver error with what was being done.

use cudarc::driver::DriverError;

/// Errors of the GPU backend.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("CUDA is not available: {0}")]
    Unavailable(String),
    /// NVRTC rejected a program; `log` is its message, with file names and lines of the sources
    #[error("CUDA compilation of {program} failed:\n{log}")]
    Compile { program: String, log: String },
    #[error("out of GPU memory allocating {what} ({bytes} bytes; the device has {total} bytes)")]
    OutOfMemory {
        what: String,
        bytes: usize,
        total: usize,
    },
    #[error("CUDA error in {what}: {source}")]
    Driver {
        what: String,
        #[source]
        source: DriverError,
    },
    #[error("{0}")]
    Limit(String),
}

/// Wraps a driver error with what was being done.
pub trait Context<T> {
    fn ctx(self, what: &str) -> Result<T, GpuError>;
}

impl<T> Context<T> for Result<T, DriverError> {
    fn ctx(self, what: &str) -> Result<T, GpuError> {
        self.map_err(|source| GpuError::Driver {
            what: what.into(),
            source,
        })
    }
}
