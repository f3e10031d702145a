//! glTF 2.0 (.gltf with external or embedded buffers, .glb): every triangle primitive of the
//! default scene, node transforms applied, with its material and textures
//! (`gltf_materials.rs`), vertex colours, morph targets and skins posed at time 0
//! (`gltf_skin.rs`), and the scene's punctual lights and camera.

use super::gltf_accessor::{percent_decode, percent_decodes_to_utf8};
use super::gltf_document::open;
pub use super::gltf_document::EXTENSIONS_DRAWN;
pub use super::gltf_scene::GltfScene;
use super::gltf_walk::Walk;
use crate::error::IoError;
use rxpipe_core::mesh::Mesh;
use std::path::Path;

/// Loads the primitives of the default (or first) scene as separate meshes, in world space (an
/// instanced primitive copied once per instance, refused first where the copies would not fit
/// the host's memory).
pub fn parse(data: &[u8], file: &str, base: Option<&Path>) -> Result<Vec<Mesh>, IoError> {
    let scene = parse_scene(data, file, base)?;
    for (k, (m, i)) in scene.meshes.iter().zip(&scene.instances).enumerate() {
        if let Some(list) = i {
            rxpipe_core::limits::check_host(list.len() as u64 * m.bytes() as u64, || {
                format!(
                    "{} instances of mesh {k} ('{}') as copies",
                    list.len(),
                    m.name
                )
            })
            .map_err(|e| IoError::Unsupported {
                file: file.to_string(),
                message: e.to_string(),
            })?;
        }
    }
    Ok(scene.world_meshes())
}

/// Loads the default (or first) scene: its primitives with their model matrices, animations,
/// lights, cameras and notes (see [`GltfScene`]).
pub fn parse_scene(data: &[u8], file: &str, base: Option<&Path>) -> Result<GltfScene, IoError> {
    let (document, buffers) = open(data, file, base)?;
    let scene = document
        .default_scene()
        .or_else(|| document.scenes().next())
        .ok_or_else(|| IoError::Parse {
            file: file.to_string(),
            location: "scenes".into(),
            message: "the file has no scene".into(),
        })?;
    let mut walk = Walk::new(&document, &buffers, base, file);
    walk.scene(scene)?;
    Ok(walk.finish())
}

/// The files a glTF file refers to: its external buffers and images, resolved against its folder
/// (data URIs and GLB chunks are inside it). Reads only the JSON (a GLB's first chunk), through
/// gzip where the file is gzipped; none for a file that is not glTF or cannot be read (loading it
/// says why).
pub fn referenced_files(path: &Path) -> Vec<std::path::PathBuf> {
    use std::io::{BufRead, BufReader, Read};
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut file = BufReader::new(file);
    let gzipped = file.fill_buf().is_ok_and(|b| b.starts_with(&[0x1f, 0x8b]));
    let mut f: Box<dyn Read> = if gzipped {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut head = [0u8; 20];
    let mut n = 0;
    // (a decoder may return fewer bytes than asked before the stream's end)
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return Vec::new(),
        }
    }
    let json: Vec<u8> = if n == 20 && head.starts_with(b"glTF") {
        // GLB: 12-byte header, then the JSON chunk's length and type
        let len = u32::from_le_bytes([head[12], head[13], head[14], head[15]]) as u64;
        let mut j = Vec::new();
        if f.take(len.min(256 << 20)).read_to_end(&mut j).is_err() {
            return Vec::new();
        }
        j
    } else if head[..n].trim_ascii_start().starts_with(b"{") {
        let mut j = head[..n].to_vec();
        if f.take(256 << 20).read_to_end(&mut j).is_err() {
            return Vec::new();
        }
        j
    } else {
        return Vec::new();
    };
    let Ok(root) = gltf::json::deserialize::from_slice::<gltf::json::Root>(&json) else {
        return Vec::new();
    };
    let base = path.parent().unwrap_or(Path::new("."));
    let uris = root
        .buffers
        .iter()
        .filter_map(|b| b.uri.as_deref())
        .chain(root.images.iter().filter_map(|i| i.uri.as_deref()));
    uris.filter(|u| !u.contains(':') && percent_decodes_to_utf8(u))
        .map(|u| base.join(percent_decode(u)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::percent_decodes_to_utf8 as ok;

    #[test]
    fn uris_decode_as_the_gltf_crate_reads_them() {
        assert!(ok("buffer.bin"));
        assert!(ok("my%20model.bin"));
        // a '%' without two hex digits stands for itself
        assert!(ok("100%.bin") && ok("%4"));
        // escapes that decode to UTF-8, and to bytes that are not
        assert!(ok("caf%C3%A9.bin"));
        assert!(!ok("bad%AA.bin") && !ok("%C3"));
    }
}
