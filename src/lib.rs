//! # rxpipe
//!
//! A streaming compute-mode rendering and mesh-processing pipeline. Meshes are loaded (glTF, OBJ,
//! PLY, STL, procedural), passed through mesh-processing [`passes`], shaded by a geometry stage
//! that implements the batch vertex-reuse strategies of Kenzel et al. 2018 ([`geometry`]), and
//! rasterised in software ([`raster`]) into a [`Frame`].
//!
//! The CPU implementation of every stage is the reference that defines its result.
//!
//! To use it from another crate (the CUDA backend is found at run time: no CUDA is needed to
//! build, and without a GPU everything runs on the CPU):
//!
//! ```toml
//! [dependencies]
//! rxpipe = { path = "../rxpipe" }  # this repository's folder, or its git address
//! ```
//!
//! rxpipe's vectors and matrices are [`glam`]'s, re-exported as `rxpipe::glam` so that a user
//! names the very version rxpipe was built with:
//!
//! ```
//! use rxpipe::glam::Vec3;
//! let v = rxpipe::geometry::VertexIn { position: Vec3::Y, ..Default::default() };
//! assert_eq!(v.position.y, 1.0);
//! ```
//!
//! A whole frame on the CPU:
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
pub mod distance;
pub mod error;
pub mod footprint;
pub mod geometry;
pub mod gpu;
pub mod passes;
pub mod patch;
pub mod pipeline;
pub mod raster;
pub mod reindex;
pub mod sortlast;

// the layers below, under the names the library has always given them
pub use rxpipe_core::{animation, color, execution, limits, material, mesh, named, scene};
pub use rxpipe_io as io;
pub use rxpipe_io::image;

/// The vector and matrix crate of rxpipe's API ([`geometry::VertexIn`], [`Camera`], ...).
pub use glam;

pub use backend::{Backend, BackendKind, Devices, Renderer};
pub use error::Error;
pub use geometry::{Strategy, VertexOrder, VertexShader};
pub use mesh::Mesh;
pub use pipeline::{Frame, FrameStats, Pipeline, PipelineBuilder, Prepared};
pub use raster::{CullMode, ShadingMode};
pub use scene::{Camera, Light, Scene};

#[cfg(test)]
mod names {
    use crate::named::check_names;

    #[test]
    fn every_named_value_parses_by_each_of_its_names() {
        check_names::<crate::Backend>().unwrap();
        check_names::<crate::CullMode>().unwrap();
        check_names::<crate::ShadingMode>().unwrap();
        check_names::<crate::Strategy>().unwrap();
        check_names::<crate::VertexOrder>().unwrap();
        check_names::<crate::reindex::Method>().unwrap();
        check_names::<crate::patch::query::Query>().unwrap();
    }
}
