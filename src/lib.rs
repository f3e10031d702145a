//! # rxpipe
//!
//! A streaming compute-mode rendering and mesh-processing pipeline. Meshes are loaded (glTF, OBJ,
//! PLY, STL, procedural), passed through mesh-processing [`passes`], shaded by a geometry stage
//! that implements the batch vertex-reuse strategies of Kenzel et al. 2018 ([`geometry`]), and
//! rasterised in software ([`raster`]) into a [`Frame`].
//!
//! The CPU implementation of every stage is the reference that defines its result.
//!
//! ```
//! use rxpipe::{Backend, Pipeline, Renderer, Scene, Strategy};
//! let scene = Scene::from_meshes("sphere", vec![rxpipe::mesh::icosphere(4)]);
//! let renderer = Renderer::new(Backend::Cpu)?;
//! let mut pipeline = Pipeline::builder()
//!     .strategy(Strategy::DynamicHash { max_indices: 1023, max_vertices: 256 })
//!     .build(&renderer)?;
//! let frame = pipeline.render(&scene, &scene.camera, (320, 240))?;
//! assert!(frame.stats.geometry.asr() < 1.0);
//! # Ok::<(), rxpipe::Error>(())
//! ```

pub mod backend;
pub mod bench;
pub mod geometry;
pub mod gpu;
pub mod image;
pub mod io;
pub mod limits;
pub mod material;
pub mod mesh;
pub mod passes;
pub mod patch;
pub mod pipeline;
pub mod raster;
pub mod reindex;
pub mod viewer;

pub use backend::{Backend, BackendKind, Renderer};
pub use geometry::{Strategy, VertexOrder, VertexShader};
pub use io::scene::{Camera, Light, Scene};
pub use mesh::Mesh;
pub use pipeline::{Frame, FrameStats, Pipeline, PipelineBuilder, Prepared};
pub use raster::{CullMode, ShadingMode};

/// Any error rxpipe returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Io(#[from] io::IoError),
    #[error(transparent)]
    Mesh(#[from] mesh::MeshError),
    #[error(transparent)]
    Geometry(#[from] geometry::GeometryError),
    #[error(transparent)]
    Raster(#[from] raster::RasterError),
    #[error(transparent)]
    Pass(#[from] passes::PassError),
    #[error(transparent)]
    Gpu(#[from] gpu::GpuError),
    #[error(transparent)]
    Reindex(#[from] reindex::ReindexError),
    #[error(transparent)]
    Patch(#[from] patch::PatchError),
    #[error("{0}")]
    Backend(String),
    #[error("image: {0}")]
    Image(String),
}
