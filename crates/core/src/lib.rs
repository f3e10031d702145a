//! rxpipe's bottom layer: the plain types every other layer names, with no I/O and no GPU.
//!
//! Meshes ([`mesh`]) and their vertex keys, scenes as data ([`scene`]: camera, lights, placed
//! objects) and their node animation ([`animation`]), materials and decoded textures as the
//! fragment stage samples them ([`material`]), colour encodings ([`color`]), where work runs
//! ([`execution`]) and memory checked before it is spent ([`limits`]).
//!
//! Most users reach these through the `rxpipe` crate, which re-exports each module under the
//! same name (`rxpipe::mesh`, `rxpipe::scene`, ...).

pub mod animation;
pub mod color;
pub mod execution;
pub mod limits;
pub mod material;
pub mod mesh;
pub mod named;
pub mod scene;

/// The vector and matrix crate of the types here.
pub use glam;
