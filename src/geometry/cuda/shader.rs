//! A vertex shader for the GPU: CUDA C spliced into every geometry kernel, and the built-in ones.

use crate::gpu::kernels::Source;
use std::path::Path;

/// The built-in vertex shaders.
pub const SHADER_TRANSFORM: Source<'static> = rxpipe_gpu::kernel_source!("shaders/transform.cu");
pub const SHADER_FMA: Source<'static> = rxpipe_gpu::kernel_source!("shaders/fma.cu");

/// A vertex shader for the GPU: CUDA C source that defines
/// `__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u)` (the types are in
/// kernels/common.cuh; `rxp_transform(v, u)` is the standard transform). It is compiled into every
/// geometry kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaShader {
    /// the file name NVRTC's messages use
    pub name: String,
    pub source: String,
    /// preprocessor definitions (name, value)
    pub defines: Vec<(String, String)>,
}

impl CudaShader {
    /// The standard transform (the CPU's [`crate::geometry::shaders::Transform`]).
    pub fn transform() -> CudaShader {
        CudaShader::builtin(SHADER_TRANSFORM, vec![])
    }

    /// The standard transform plus `n` dependent FMAs (the CPU's [`crate::geometry::shaders::FmaLoad`]).
    pub fn fma(n: u32) -> CudaShader {
        CudaShader::builtin(SHADER_FMA, vec![("FMA_N".into(), n.to_string())])
    }

    /// A processing program instead of a vertex shader (kernels/geometry.cu, RXP_PROGRAM): CUDA C
    /// that defines `__device__ VertexOut rxp_program(const void* table, unsigned id)`, the
    /// record of vertex `id` given the launch's input table ([`super::CudaGeometry::process`]).
    pub fn program(s: Source) -> CudaShader {
        CudaShader::builtin(s, vec![("RXP_PROGRAM".into(), "1".into())])
    }

    /// [`CudaShader::program`] from several pieces, built in order (shared helpers first),
    /// called `name` in messages.
    pub fn program_of(name: &str, parts: &[Source]) -> CudaShader {
        CudaShader {
            name: name.into(),
            source: crate::gpu::kernels::assemble(parts),
            defines: vec![("RXP_PROGRAM".into(), "1".into())],
        }
    }

    fn builtin(s: Source, defines: Vec<(String, String)>) -> CudaShader {
        CudaShader {
            name: s.name.into(),
            source: s.text.into(),
            defines,
        }
    }

    /// Whether this is one of the built-in shaders (which leave positions to the standard
    /// transform, so object bounds hold for them).
    pub fn is_builtin(&self) -> bool {
        self.source == SHADER_TRANSFORM.text || self.source == SHADER_FMA.text
    }

    /// A shader from CUDA C source text; `name` is what error messages call it.
    pub fn from_source(name: impl Into<String>, source: impl Into<String>) -> CudaShader {
        CudaShader {
            name: name.into(),
            source: source.into(),
            defines: vec![],
        }
    }

    /// A shader read from a .cu file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<CudaShader, rxpipe_io::IoError> {
        let path = path.as_ref();
        let bytes = rxpipe_io::read_file(path)?;
        let source = String::from_utf8(bytes).map_err(|e| rxpipe_io::IoError::Parse {
            file: path.display().to_string(),
            location: format!("byte {}", e.utf8_error().valid_up_to()),
            message: "not valid UTF-8 text".into(),
        })?;
        Ok(CudaShader::from_source(path.display().to_string(), source))
    }
}
