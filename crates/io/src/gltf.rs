//! glTF 2.0 (.gltf with external or embedded buffers, .glb): every triangle primitive of the
//! default scene, node transforms applied, with its material and textures
//! (`gltf_materials.rs`), vertex colours, morph targets and skins posed at time 0
//! (`gltf_skin.rs`), and the scene's punctual lights and camera.

use super::gltf_accessor::{percent_decode, percent_decodes_to_utf8};
use super::gltf_document::open;
pub use super::gltf_document::EXTENSIONS_DRAWN;
use super::gltf_walk::Walk;
use crate::error::IoError;
use glam::{Mat4, Vec3, Vec4};
use rxpipe_core::material::{LightKind, PunctualLight};
use rxpipe_core::mesh::Mesh;
use rxpipe_core::scene::Camera;
use std::path::Path;

/// What a glTF file holds for rendering.
#[derive(Debug, Clone, Default)]
pub struct GltfScene {
    /// every triangle primitive with its material (none where the primitive names none: it
    /// draws in the lit mode), in world space, or in its node's space where an animation moves
    /// the node (or one above it) and the primitive is not skinned
    pub meshes: Vec<Mesh>,
    /// each mesh's model matrix: identity for one in world space, its node's world matrix at
    /// time 0 for an animated one
    pub transforms: Vec<Mat4>,
    /// each animated mesh's node in [`GltfScene::rig`] (`None`: in world space)
    pub nodes: Vec<Option<usize>>,
    /// the node tree and the animations, when the file has any
    pub rig: Option<rxpipe_core::animation::Rig>,
    /// the meshes whose shapes the animations change (their `rig` is 0: this file's)
    pub deformed: Vec<rxpipe_core::animation::Deformed>,
    /// KHR_lights_punctual lights placed by their nodes
    pub lights: Vec<PunctualLight>,
    /// the perspective cameras of the scene's nodes, in the order the loader meets them (the
    /// first is the starting view)
    pub cameras: Vec<Camera>,
    /// what the user should know about how the file was read (textures left out)
    pub notes: Vec<String>,
}

/// Loads the primitives of the default (or first) scene as separate meshes, in world space.
pub fn parse(data: &[u8], file: &str, base: Option<&Path>) -> Result<Vec<Mesh>, IoError> {
    Ok(parse_scene(data, file, base)?.world_meshes())
}

impl GltfScene {
    /// A scene of meshes in world space, with notes (what another format's loader gives).
    pub fn of_meshes(meshes: Vec<Mesh>, notes: Vec<String>) -> GltfScene {
        GltfScene {
            transforms: vec![Mat4::IDENTITY; meshes.len()],
            nodes: vec![None; meshes.len()],
            meshes,
            notes,
            ..Default::default()
        }
    }

    /// Its meshes, every one in world space (animated ones as posed at time 0).
    pub fn world_meshes(self) -> Vec<Mesh> {
        self.meshes
            .into_iter()
            .zip(self.transforms)
            .map(|(mut m, t)| {
                if t != Mat4::IDENTITY {
                    m.transform(t);
                }
                m
            })
            .collect()
    }
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

/// A punctual light placed by its node's world transform (lights shine along the node's -z).
pub(super) fn punctual(light: &gltf::khr_lights_punctual::Light, world: Mat4) -> PunctualLight {
    use gltf::khr_lights_punctual::Kind;
    PunctualLight {
        kind: match light.kind() {
            Kind::Directional => LightKind::Directional,
            Kind::Point => LightKind::Point,
            Kind::Spot {
                inner_cone_angle,
                outer_cone_angle,
            } => LightKind::Spot {
                inner: inner_cone_angle,
                outer: outer_cone_angle,
            },
        },
        color: Vec3::from(light.color()),
        intensity: light.intensity(),
        position: world.transform_point3(Vec3::ZERO),
        direction: world
            .transform_vector3(Vec3::NEG_Z)
            .normalize_or(Vec3::NEG_Z),
        range: light.range(),
    }
}

/// A perspective camera placed by its node (looking along the node's -z, up its +y); none for
/// an orthographic one or one that sees nothing.
pub(super) fn camera(cam: &gltf::Camera, world: Mat4) -> Option<Camera> {
    let gltf::camera::Projection::Perspective(p) = cam.projection() else {
        return None;
    };
    let eye = world.transform_point3(Vec3::ZERO);
    let forward = world.transform_vector3(Vec3::NEG_Z).normalize_or_zero();
    let up = world.transform_vector3(Vec3::Y).normalize_or(Vec3::Y);
    let near = p.znear();
    let far = p.zfar().unwrap_or(near * 1e4);
    let c = Camera {
        eye,
        // the orbit centre: a point ahead (the viewer turns about it)
        target: eye + forward * (near * 100.0).max(1.0),
        up,
        fov_y: p.yfov().to_degrees(),
        near,
        far,
    };
    c.check().ok().map(|_| c)
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

/// A TANGENT element as the mesh keeps it: w, the bitangent's sign, exactly 1 or -1 as the
/// specification says it is (a NaN stays, for re-indexing to name).
pub(super) fn tangent(t: [f32; 4]) -> Vec4 {
    let w = if t[3] < 0.0 {
        -1.0
    } else if t[3] >= 0.0 {
        1.0
    } else {
        t[3]
    };
    Vec4::new(t[0], t[1], t[2], w)
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
