//! Loaders and writers: glTF, OBJ, PLY, STL, any of them gzip-compressed; scene files; images.
//!
//! Formats are recognised by content (gzip magic, `ply`, `glTF`, JSON, binary STL size), with the
//! file extension only as a tie-breaker between text formats.

mod error;
mod files;
mod format;
pub mod gltf;
mod gltf_accessor;
mod gltf_animation;
mod gltf_document;
mod gltf_draco;
mod gltf_instancing;
mod gltf_materials;
mod gltf_meshopt;
mod gltf_scene;
pub(crate) mod gltf_skin;
mod gltf_specgloss;
mod gltf_walk;
pub mod image;
mod meshes;
pub mod mtl;
pub mod obj;
pub mod ply;
pub mod scene;
pub mod stl;
pub mod text;
mod vertex;

pub use error::{IoError, SourceCounts};
pub use files::{read_file, shared_meshes_dir, shared_scenes_dir, write_atomically};
pub use format::{sniff, Format};
pub use meshes::{
    load_gltf_scene, load_mesh, load_mesh_or_spec, load_meshes, load_obj_scene, parse_meshes,
    referenced_files, save_mesh, save_mesh_with_face_colors,
};
pub use scene::{builtin_scene, check_drawable, load_scene, parse_scene};
pub use vertex::{display_color, weld_soup};
