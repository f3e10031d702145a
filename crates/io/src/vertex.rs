//! Vertex data as files store it: colours in display (sRGB) values, and triangle soups welded
//! into indexed meshes.

use crate::error::IoError;
use rxpipe_core::mesh::Mesh;

/// A vertex colour as files store it (sRGB-encoded display values in [0, 1], alpha linear) in
/// linear RGBA, as materials use it; out-of-range values are clamped, NaN reads as 0.
pub fn display_color(c: [f32; 4]) -> glam::Vec4 {
    let lin = |v: f32| {
        rxpipe_core::color::srgb_to_linear(if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) })
    };
    let a = if c[3].is_nan() {
        1.0
    } else {
        c[3].clamp(0.0, 1.0)
    };
    glam::Vec4::new(lin(c[0]), lin(c[1]), lin(c[2]), a)
}

/// Welds a triangle soup (STL, a non-indexed glTF primitive) into an indexed mesh (exact
/// equality, [`rxpipe_core::mesh::weld`]): duplicate corners become one vertex. The serial method
/// keeps the file's order (vertices numbered by first reference), which loaders promise.
pub fn weld_soup(m: Mesh) -> Result<Mesh, IoError> {
    use rxpipe_core::mesh::weld::{weld, WeldError};
    if m.indices.is_empty() {
        return Ok(m);
    }
    match weld(&m, None) {
        Ok(w) => Ok(w.mesh),
        Err(WeldError::Mesh(e)) => Err(e.into()),
        Err(e) => Err(IoError::Unsupported {
            file: m.name.clone(),
            message: e.to_string(),
        }),
    }
}
