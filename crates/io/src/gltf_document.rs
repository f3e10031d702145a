//! A glTF file opened: its document checked for what the gltf crate would panic on or refuse
//! without a useful word, its buffers read (external files named where they cannot be), and its
//! compressed views and primitives decoded.

use super::gltf_accessor::{percent_decode, percent_decodes_to_utf8};
use super::{gltf_draco, gltf_instancing, gltf_meshopt};
use crate::error::IoError;
use std::path::Path;

/// Loads the default (or first) scene: its primitives, lights and camera.
/// Refuses, with the buffer named, a buffer URI the gltf crate would panic on (one that does not
/// percent-decode to UTF-8) and an external buffer file that cannot be read (the gltf crate's
/// error would say only "No such file or directory").
fn check_buffer_files(
    doc: &gltf::Document,
    file: &str,
    base: Option<&Path>,
) -> Result<(), IoError> {
    let err = |location: &str, message: String| IoError::Parse {
        file: file.to_string(),
        location: location.to_string(),
        message,
    };
    // the gltf crate percent-decodes a relative buffer URI and unwraps the result as UTF-8 (a
    // panic on a URI with bytes like %AA, found by fuzz/ gltf): such a URI is refused first
    for b in doc.buffers() {
        if let gltf::buffer::Source::Uri(uri) = b.source() {
            if !uri.contains(':') && !percent_decodes_to_utf8(uri) {
                let shown: String = uri.chars().take(60).collect();
                return Err(err(
                    &format!("buffer {}", b.index()),
                    format!("its uri '{shown}' does not decode to UTF-8 text"),
                ));
            }
        }
    }
    // an external buffer that cannot be read is named with its path (the gltf crate's error says
    // only "No such file or directory")
    for b in doc.buffers() {
        if let gltf::buffer::Source::Uri(uri) = b.source() {
            if uri.contains(':') || gltf_meshopt::is_fallback(&b) {
                continue;
            }
            let Some(dir) = base else {
                return Err(err(
                    &format!("buffer {}", b.index()),
                    format!("refers to the file '{uri}', but the data has no folder to find it in"),
                ));
            };
            let path = dir.join(percent_decode(uri));
            // (the gltf crate reads it whole: a regular file of a size the host can hold)
            let problem = match std::fs::metadata(&path) {
                Err(e) => Some(e.to_string()),
                Ok(m) if !m.is_file() => Some("not a regular file".into()),
                Ok(m) => rxpipe_core::limits::check_host(m.len(), || path.display().to_string())
                    .err()
                    .map(|e| e.to_string()),
            };
            if let Some(e) = problem {
                return Err(err(
                    &format!("buffer {}", b.index()),
                    format!("cannot read its file {}: {e}", path.display()),
                ));
            }
        }
    }
    Ok(())
}

/// The document of a glTF file checked for what the gltf crate would panic on or refuse without
/// a useful word, with its buffers read (external files named where they cannot be) and its
/// compressed views and primitives (EXT_meshopt_compression, KHR_draco_mesh_compression)
/// decoded.
pub(super) fn open(
    data: &[u8],
    file: &str,
    base: Option<&Path>,
) -> Result<(gltf::Document, Vec<gltf::buffer::Data>), IoError> {
    let err = |location: &str, message: String| IoError::Parse {
        file: file.to_string(),
        location: location.to_string(),
        message,
    };
    let mut gltf = gltf::Gltf::from_slice_without_validation(data)
        .map_err(|e| err("document", e.to_string()))?;
    // gltf-json 1.4.1's validation indexes the accessors with a primitive's POSITION before
    // checking it (a panic on a bad index, found by fuzz/ gltf): check those indices first
    let json = gltf.document.as_json();
    for (m, mesh) in json.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for (semantic, accessor) in &prim.attributes {
                if accessor.value() >= json.accessors.len() {
                    return Err(err(
                        &format!("mesh {m} primitive {p}"),
                        format!(
                            "attribute {semantic:?} refers to accessor {}, but the file has {}",
                            accessor.value(),
                            json.accessors.len()
                        ),
                    ));
                }
            }
        }
    }
    let mut json = gltf.document.into_json();
    // KHR_mesh_quantization is read by read_floats, EXT_meshopt_compression by gltf_meshopt and
    // KHR_draco_mesh_compression by gltf_draco, so a file that requires them is not refused for
    // it as the gltf crate would
    json.extensions_required
        .retain(|e| e != QUANTIZATION && e != gltf_meshopt::NAME && e != gltf_draco::NAME);
    // (Draco's accessors hold no data of their own, which the gltf crate's validation refuses)
    let placeholder = gltf_draco::placeholders(&mut json);
    // a file that requires an extension rxpipe does not implement (Basis textures, say) is
    // refused by name, before the gltf crate's list of validation errors
    if let Some(e) = json
        .extensions_required
        .iter()
        .find(|e| !EXTENSIONS_DRAWN.contains(&e.as_str()))
    {
        return Err(err(
            "extensionsRequired",
            format!(
                "the file requires {e}, which rxpipe does not implement (a tool such as gltf-transform can write the file without it)"
            ),
        ));
    }
    let document = gltf::Document::from_json(json).map_err(|e| err("document", e.to_string()))?;
    gltf.document = document;
    check_buffer_files(&gltf.document, file, base)?;
    // the buffers as the gltf crate imports them, but an EXT_meshopt_compression fallback
    // buffer zero-filled (it has no data, or data that decoding replaces), then the compressed
    // views decoded into their places
    let mut blob = gltf.blob.clone();
    let mut buffers = Vec::new();
    for b in gltf.document.buffers() {
        let place = format!("buffer {}", b.index());
        let data = if Some(b.index()) == placeholder {
            gltf::buffer::Data(vec![0])
        } else if gltf_meshopt::is_fallback(&b) {
            rxpipe_core::limits::check_host(b.length() as u64, || place.clone())
                .map_err(|e| err(&place, e.to_string()))?;
            gltf::buffer::Data(vec![0; b.length()])
        } else {
            gltf::buffer::Data::from_source_and_blob(b.source(), base, &mut blob)
                .map_err(|e| err(&place, e.to_string()))?
        };
        if data.len() < b.length() {
            return Err(err(
                &place,
                format!(
                    "holds {} bytes, fewer than its byteLength {}",
                    data.len(),
                    b.length()
                ),
            ));
        }
        buffers.push(data);
    }
    gltf_meshopt::decode_views(&gltf.document, &mut buffers).map_err(|(p, m)| err(&p, m))?;
    // KHR_draco_mesh_compression: each compressed primitive decoded into a new buffer, and the
    // document pointed at it
    if let Some(d) =
        gltf_draco::decode(&gltf.document, &mut buffers).map_err(|(p, m)| err(&p, m))?
    {
        gltf.document = d;
    }
    Ok((gltf.document, buffers))
}

/// The glTF extensions rxpipe draws.
pub const EXTENSIONS_DRAWN: [&str; 13] = [
    "KHR_lights_punctual",
    "KHR_materials_ior",
    "KHR_materials_specular",
    "KHR_materials_pbrSpecularGlossiness",
    QUANTIZATION,
    gltf_meshopt::NAME,
    "KHR_materials_emissive_strength",
    "KHR_materials_unlit",
    "KHR_texture_transform",
    "EXT_texture_webp",
    "KHR_materials_clearcoat",
    gltf_draco::NAME,
    gltf_instancing::NAME,
];

/// The KHR_mesh_quantization extension: positions, normals and texture coordinates stored as 8-
/// or 16-bit integers.
pub(super) const QUANTIZATION: &str = "KHR_mesh_quantization";
