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

pub mod animation;
pub mod backend;
#[cfg(feature = "app")]
pub mod bench;
pub mod color;
pub mod distance;
pub mod execution;
pub mod footprint;
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
pub mod scene;
#[cfg(feature = "app")]
pub mod viewer;

/// The vector and matrix crate of rxpipe's API ([`geometry::VertexIn`], [`Camera`], ...).
pub use glam;

pub use backend::{Backend, BackendKind, Renderer};
pub use geometry::{Strategy, VertexOrder, VertexShader};
pub use mesh::Mesh;
pub use pipeline::{Frame, FrameStats, Pipeline, PipelineBuilder, Prepared};
pub use raster::{CullMode, ShadingMode};
pub use scene::{Camera, Light, Scene};

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
    #[error(transparent)]
    Distance(#[from] distance::DistanceError),
    #[error(transparent)]
    Memory(#[from] limits::OutOfMemory),
    #[error("{0}")]
    Backend(String),
    #[error("image: {0}")]
    Image(String),
}

/// How many notes a command prints before it counts the rest ([`noted`]).
pub const NOTES_SHOWN: usize = 20;

/// The lines `note: ...` a command prints for `notes`: the first [`NOTES_SHOWN`], then how many
/// more there are and where to find them (`more`), so that a scene with thousands of missing
/// textures does not bury the output.
pub fn noted<'a>(notes: impl IntoIterator<Item = &'a String>, more: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rest = 0usize;
    for n in notes {
        if lines.len() < NOTES_SHOWN {
            lines.push(format!("note: {n}"));
        } else {
            rest += 1;
        }
    }
    if rest > 0 {
        lines.push(format!("note: ... and {rest} more notes{more}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    #[test]
    fn notes_beyond_the_shown_are_counted() {
        let few: Vec<String> = (0..3).map(|i| format!("n{i}")).collect();
        assert_eq!(super::noted(&few, ""), ["note: n0", "note: n1", "note: n2"]);
        let many: Vec<String> = (0..super::NOTES_SHOWN + 5)
            .map(|i| format!("n{i}"))
            .collect();
        let lines = super::noted(&many, " (--json lists them all)");
        assert_eq!(lines.len(), super::NOTES_SHOWN + 1);
        assert_eq!(
            lines[super::NOTES_SHOWN - 1],
            format!("note: n{}", super::NOTES_SHOWN - 1)
        );
        assert_eq!(
            lines[super::NOTES_SHOWN],
            "note: ... and 5 more notes (--json lists them all)"
        );
    }
}

/// The command line (clap, with the application) and the library's own parsers (`parse`, used
/// by pass and scene arguments) take the same names.
#[cfg(all(test, feature = "app"))]
mod names {
    use clap::ValueEnum;

    fn agree<T: ValueEnum + PartialEq + std::fmt::Debug>(parse: fn(&str) -> Option<T>) {
        for v in T::value_variants() {
            let p = v.to_possible_value().expect("every value has a name");
            for name in p.get_name_and_aliases() {
                assert_eq!(parse(name).as_ref(), Some(v), "{name}");
                assert_eq!(parse(&name.to_uppercase()).as_ref(), Some(v), "{name}");
            }
        }
        assert!(parse("no-such-name").is_none());
    }

    #[test]
    fn the_command_line_and_the_library_parse_alike() {
        agree(crate::Backend::parse);
        agree(crate::ShadingMode::parse);
        agree(crate::geometry::Strategy::parse);
        agree(crate::geometry::VertexOrder::parse);
    }
}
