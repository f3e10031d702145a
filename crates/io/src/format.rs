//! Which format a file is in, by its content (gzip magic, `ply`, `glTF`, JSON, binary STL size),
//! with the extension only as a tie-breaker between text formats.

use crate::stl;

/// The format of a mesh file, as recognised from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Obj,
    Ply,
    Stl,
    Gltf,
}

/// Recognises the format of (decompressed) file content; `name` breaks ties.
pub fn sniff(data: &[u8], name: &str) -> Option<Format> {
    let lower = name.to_ascii_lowercase();
    let lower = lower.strip_suffix(".gz").unwrap_or(&lower);
    if data.starts_with(b"ply") {
        return Some(Format::Ply);
    }
    if data.starts_with(b"glTF") {
        return Some(Format::Gltf);
    }
    if stl::looks_binary(data) {
        return Some(Format::Stl);
    }
    let head = &data[..data.len().min(512)];
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start();
    if t.starts_with('{') {
        return Some(Format::Gltf);
    }
    if t.starts_with("solid") && (lower.ends_with(".stl") || text.contains("facet")) {
        return Some(Format::Stl);
    }
    for (ext, f) in [
        (".obj", Format::Obj),
        (".ply", Format::Ply),
        (".stl", Format::Stl),
        (".gltf", Format::Gltf),
        (".glb", Format::Gltf),
    ] {
        if lower.ends_with(ext) {
            return Some(f);
        }
    }
    // OBJ has no magic: recognise its statements
    if t.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("v ") || l.starts_with("f ") || l.starts_with("vn ") || l.starts_with('#')
    }) {
        return Some(Format::Obj);
    }
    None
}
