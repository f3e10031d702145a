//! What goes wrong reading or writing a file, and what a file held before it became meshes.

use std::path::Path;

use rxpipe_core::mesh::MeshError;

/// Errors from loading or writing files.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {location}: {message}")]
    Parse {
        file: String,
        location: String,
        message: String,
    },
    #[error("{file}: {message}")]
    Unsupported { file: String, message: String },
    /// An image that cannot be written or read (its format, its encoder's error).
    #[error("image: {0}")]
    Image(String),
    #[error(transparent)]
    Mesh(#[from] MeshError),
}

impl IoError {
    /// Makes an error of the file system name `path`: `.map_err(IoError::at(path))`.
    pub fn at(path: &Path) -> impl Fn(std::io::Error) -> IoError + '_ {
        move |source| IoError::Io {
            file: path.display().to_string(),
            source,
        }
    }
}

/// Counts as the file states them, before triangulation or corner splitting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceCounts {
    /// vertices (positions) in the file
    pub vertices: usize,
    /// faces in the file: polygons for OBJ and PLY faces, triangles for strips and STL
    pub faces: usize,
}
