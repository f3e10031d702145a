//! glTF 2.0 (.gltf with external or embedded buffers, .glb): every triangle primitive of the
//! default scene, node transforms applied, with its material and textures
//! (`gltf_materials.rs`), vertex colours, morph targets and skins posed at time 0
//! (`gltf_skin.rs`), and the scene's punctual lights and camera.

use super::gltf_accessor::{check_accessors, percent_decode, percent_decodes_to_utf8, read_floats};
pub use super::gltf_document::EXTENSIONS_DRAWN;
use super::gltf_document::{open, QUANTIZATION};
use super::{gltf_instancing, gltf_skin};
use crate::error::IoError;
use glam::{Mat4, Vec2, Vec3, Vec4};
use gltf::mesh::Mode;
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

pub fn parse_scene(data: &[u8], file: &str, base: Option<&Path>) -> Result<GltfScene, IoError> {
    let err = |location: &str, message: String| IoError::Parse {
        file: file.to_string(),
        location: location.to_string(),
        message,
    };
    let (document, buffers) = open(data, file, base)?;
    let doc = &document;
    // (KHR_mesh_quantization's attribute types are read in read_floats)
    let quantized = doc.extensions_used().any(|e| e == QUANTIZATION);
    let scene = doc
        .default_scene()
        .or_else(|| doc.scenes().next())
        .ok_or_else(|| err("scenes", "the file has no scene".into()))?;
    let mut materials = super::gltf_materials::Materials::new(doc, &buffers, base, file);
    let mut out = GltfScene::default();
    // the animations: a mesh under a node they move stays in its node's space and moves with
    // it; the others are put in world space once
    let (rig, animation_notes) = super::gltf_animation::read(
        doc,
        |b: gltf::Buffer| buffers.get(b.index()).map(|d| &d.0[..]),
        file,
    );
    let mut moved = vec![false; doc.nodes().len()];
    // (a channel of morph weights changes a mesh's shape, not its node's place)
    for c in rig.iter().flat_map(|r| &r.clips).flat_map(|c| &c.channels) {
        if !matches!(c.property, rxpipe_core::animation::Property::Weights(_)) {
            moved[c.node] = true;
        }
    }
    // whether an animation moves node `k`'s world matrix: it or a node above it is animated
    let world_moves = |k: usize| {
        let mut at = Some(k);
        // (a parent chain is at most as long as the tree)
        for _ in 0..moved.len() {
            let Some(n) = at else { break };
            if moved[n] {
                return true;
            }
            at = rig
                .as_ref()
                .and_then(|r| r.nodes.get(n))
                .and_then(|n| n.parent);
        }
        false
    };
    let posed = rig.as_ref().map(|r| r.pose(0.0));
    // every node's world matrix at time 0, for the skins' joints (made once, when the file has
    // a skin), and each skin's joint matrices, made when a primitive first needs them
    let skin_pose: Vec<Mat4> = match (&posed, doc.skins().len()) {
        (_, 0) => Vec::new(),
        (Some(p), _) => p.clone(),
        (None, _) => rxpipe_core::animation::Rig {
            nodes: super::gltf_animation::tree(doc),
            clips: Vec::new(),
        }
        .pose(0.0),
    };
    // (each skin's joints, inverse bind matrices and joint matrices at time 0)
    type SkinData = (Vec<usize>, Vec<Mat4>, Vec<Mat4>);
    let mut skin_data: Vec<Option<SkinData>> = vec![None; doc.skins().len()];
    // (each node with its parent's world matrix and whether a node above it moves)
    let mut stack: Vec<(gltf::Node, Mat4, bool)> =
        scene.nodes().map(|n| (n, Mat4::IDENTITY, false)).collect();
    // glTF nodes form strict trees: a node reached twice is a cycle (or a shared child), which
    // would otherwise loop for ever or multiply the geometry
    let mut reached = vec![false; doc.nodes().len()];
    // what the file has that rxpipe does not draw, said in notes after the walk
    let mut not_triangles = 0usize;
    // the skins applied, and the primitives of skinned nodes without joints and weights
    let (mut skins_used, mut unjointed) = (vec![false; doc.skins().len()], 0usize);
    let mut skinned_instances = 0usize;
    // primitives whose shape an animation changes but which are posed once only (nothing kept
    // to pose them again)
    let mut frozen = 0usize;
    while let Some((node, parent, moved_above)) = stack.pop() {
        match reached.get_mut(node.index()) {
            Some(r) if !*r => *r = true,
            _ => {
                return Err(err(
                    &format!("node {}", node.index()),
                    "reached twice: the node hierarchy has a cycle or a shared child".into(),
                ))
            }
        }
        let world = parent * Mat4::from_cols_array_2d(&node.transform().matrix());
        let moves = moved_above || moved[node.index()];
        for child in node.children() {
            stack.push((child, world, moves));
        }
        if let Some(light) = node.light() {
            out.lights.push(punctual(&light, world));
        }
        if let Some(cam) = node.camera() {
            out.cameras.extend(camera(&cam, world));
            if let gltf::camera::Projection::Orthographic(_) = cam.projection() {
                out.notes.push(format!(
                    "{file}: camera {} is orthographic, which rxpipe does not draw: only perspective cameras are offered",
                    cam.index()
                ));
            }
        }
        let Some(mesh) = node.mesh() else { continue };
        // EXT_mesh_gpu_instancing: the node's mesh drawn once per instance, each copy in the
        // node's space placed by its instance's matrix (a skinned mesh is posed in world space
        // and drawn once)
        let instances = match gltf_instancing::matrices(doc, &node, |b: gltf::Buffer| {
            buffers.get(b.index()).map(|d| &d.0[..])
        }) {
            Ok(Some(_)) if node.skin().is_some() => {
                skinned_instances += 1;
                None
            }
            Ok(i) => i,
            Err(m) => return Err(err(&format!("node {}", node.index()), m)),
        };
        for prim in mesh.primitives() {
            let loc = format!(
                "mesh {} ('{}') primitive {}",
                mesh.index(),
                mesh.name().unwrap_or(""),
                prim.index()
            );
            if !matches!(
                prim.mode(),
                Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
            ) {
                not_triangles += 1;
                continue;
            }
            check_accessors(&prim, quantized).map_err(|m| err(&loc, m))?;
            let data = |b: gltf::Buffer| buffers.get(b.index()).map(|d| &d.0[..]);
            let reader = prim.reader(data);
            let mut positions: Vec<Vec3> = prim
                .get(&gltf::Semantic::Positions)
                .and_then(|a| read_floats::<3>(a, data, false))
                .ok_or_else(|| {
                    err(
                        &loc,
                        "no POSITION attribute (or its buffer is missing)".into(),
                    )
                })?
                .into_iter()
                .map(Vec3::from_array)
                .collect();
            let n = positions.len() as u32;
            let soup = reader.read_indices().is_none();
            let raw: Vec<u32> = match reader.read_indices() {
                Some(i) => i.into_u32().collect(),
                None => (0..n).collect(),
            };
            if let Some(bad) = raw.iter().find(|&&i| i >= n) {
                return Err(err(
                    &loc,
                    format!("index {bad} out of range ({n} vertices)"),
                ));
            }
            let indices = match prim.mode() {
                Mode::TriangleStrip => (2..raw.len())
                    .flat_map(|k| {
                        if k % 2 == 0 {
                            [raw[k - 2], raw[k - 1], raw[k]]
                        } else {
                            [raw[k - 1], raw[k - 2], raw[k]]
                        }
                    })
                    .collect(),
                Mode::TriangleFan => (2..raw.len())
                    .flat_map(|k| [raw[0], raw[k - 1], raw[k]])
                    .collect(),
                _ => {
                    let mut r = raw;
                    r.truncate(r.len() / 3 * 3);
                    r
                }
            };
            let mut normals = prim
                .get(&gltf::Semantic::Normals)
                .and_then(|a| read_floats::<3>(a, data, false))
                .map(|v| v.into_iter().map(Vec3::from_array).collect::<Vec<_>>())
                .filter(|v| v.len() == positions.len());
            // (the uv sets the material's textures read: the base colour's, and a second one
            // where another texture reads another)
            let (set, second) = materials.uv_sets(&prim.material());
            let read_uvs = |set: u32| {
                prim.get(&gltf::Semantic::TexCoords(set))
                    // (the core specification's integer uvs are normalized, whatever the file
                    // says)
                    .and_then(|a| read_floats::<2>(a, data, !quantized))
                    .map(|v| v.into_iter().map(Vec2::from_array).collect::<Vec<_>>())
                    .filter(|v| v.len() == positions.len())
            };
            let mut uvs = read_uvs(set);
            let uvs1 = second.and_then(read_uvs);
            if let (Some(second), None) = (second, &uvs1) {
                out.notes.push(format!(
                    "{file}: {loc} has textures that read TEXCOORD_{second} but no such coordinates: each is read at (0, 0) only"
                ));
            }
            let colors = reader
                .read_colors(0)
                .map(|it| it.into_rgba_f32().map(Vec4::from_array).collect::<Vec<_>>())
                .filter(|v| v.len() == positions.len());
            let color = prim.material().pbr_metallic_roughness().base_color_factor();
            // a primitive that names no material draws in the lit mode with glTF's default
            // base colour; one that names a material (or has vertex colours) is shaded with it
            let material = if prim.material().index().is_some() || colors.is_some() {
                Some(materials.material(prim.material())?)
            } else {
                None
            };
            // textures without coordinates read one texel everywhere: said, once a primitive
            if uvs.is_none()
                && material
                    .as_ref()
                    .is_some_and(|m| m.textures().next().is_some())
            {
                out.notes.push(format!(
                    "{file}: {loc} has textures but no TEXCOORD_{set}: each is read at (0, 0) only"
                ));
            }
            // (a second set goes beside a first: a mesh without the first reads it as zeros)
            if uvs1.is_some() && uvs.is_none() {
                uvs = Some(vec![Vec2::ZERO; positions.len()]);
            }
            // tangents matter only to a normal map: read for a material with one
            let mut tangents = material
                .as_ref()
                .filter(|m| m.normal_texture.is_some())
                .and_then(|_| prim.get(&gltf::Semantic::Tangents))
                .and_then(|a| read_floats::<4>(a, data, false))
                .map(|v| v.into_iter().map(tangent).collect::<Vec<_>>())
                .filter(|v| v.len() == positions.len());
            // the shape of the morph weights at time 0 (animated, or the node's or mesh's), then
            // the skin's pose at time 0 (in world space); where an animation changes either, the
            // vertices before both are kept to pose again (not for a triangle soup, which
            // welding renumbers, nor for instances)
            let n = positions.len();
            let animated_weights = rig.as_ref().and_then(|r| r.weights(0.0, node.index()));
            let has_targets = prim.morph_targets().next().is_some();
            let morph_moves = has_targets && animated_weights.is_some();
            let weights: Vec<f32> = node
                .weights()
                .or(mesh.weights())
                .map(<[f32]>::to_vec)
                .unwrap_or_default();
            let targets = match has_targets {
                false => Vec::new(),
                true => gltf_skin::morph_targets(&prim, n, quantized, data, |t| {
                    morph_moves || weights.get(t).is_some_and(|&w| w != 0.0)
                })
                .map_err(|m| err(&loc, m))?,
            };
            let mut skin_parts = None;
            if let Some(skin) = node.skin() {
                let s = skin.index();
                let (joints, inverse_bind, matrices) = match &mut skin_data[s] {
                    Some(d) => &*d,
                    slot => {
                        let place = format!("skin {s}");
                        let (joints, ib) =
                            gltf_skin::joints(&skin, data).map_err(|m| err(&place, m))?;
                        let matrices =
                            rxpipe_core::animation::skin::joint_matrices(&joints, &ib, &skin_pose)
                                .ok_or_else(|| err(&place, "a joint is not a node".into()))?;
                        &*slot.insert((joints, ib, matrices))
                    }
                };
                let sets = gltf_skin::joint_sets(&prim, n, joints.len(), data)
                    .map_err(|m| err(&loc, m))?;
                let moves = joints.iter().any(|&j| world_moves(j));
                skins_used[s] |= !sets.is_empty();
                unjointed += usize::from(sets.is_empty());
                if !sets.is_empty() {
                    skin_parts = Some((joints, inverse_bind, matrices, sets, moves));
                }
            }
            let skinned = skin_parts.is_some();
            let skin_moves = skin_parts.as_ref().is_some_and(|p| p.4);
            let kept = (morph_moves || skin_moves) && !soup && instances.is_none();
            frozen += usize::from((morph_moves || skin_moves) && !kept);
            let base = kept.then(|| (positions.clone(), normals.clone(), tangents.clone()));
            let mut attributes = rxpipe_core::animation::skin::Attributes {
                positions: &mut positions,
                normals: normals.as_deref_mut(),
                tangents: tangents.as_deref_mut(),
            };
            rxpipe_core::animation::skin::morph(
                &targets,
                animated_weights.as_deref().unwrap_or(&weights),
                &mut attributes,
            );
            if let Some((_, _, matrices, sets, _)) = &skin_parts {
                rxpipe_core::animation::skin::pose(
                    sets,
                    matrices,
                    skin_pose[node.index()],
                    &mut attributes,
                );
            }
            let keep = base.map(|(p, nr, tg)| rxpipe_core::animation::Deformed {
                object: out.meshes.len(),
                rig: 0,
                node: node.index(),
                positions: p,
                normals: nr,
                tangents: tg,
                morph: has_targets.then_some((targets, weights)),
                skin: skin_parts.map(|(j, ib, _, sets, _)| (j.clone(), ib.clone(), sets)),
            });
            // (a deformed mesh without a skin stays in its node's space, its node's matrix its
            // model matrix, as posing it again starts from that space)
            let in_node_space = keep.is_some() && !skinned;
            let mut m = Mesh {
                name: format!("{file}: {}", mesh.name().unwrap_or("mesh")),
                positions,
                normals,
                uvs,
                uvs1,
                colors,
                tangents,
                indices,
                base_color: Some(color),
                material,
            };
            if soup {
                // a non-indexed primitive is a triangle soup: weld it (re-indexing stage)
                m = crate::vertex::weld_soup(m)?;
            }
            // each instance a copy of the primitive in its node's space (no instances: the
            // primitive once, as it is)
            let copies: Vec<Mesh> = match &instances {
                None => vec![m],
                Some(list) => {
                    rxpipe_core::limits::check_host(list.len() as u64 * m.bytes() as u64, || {
                        format!("{} instances of {loc}", list.len())
                    })
                    .map_err(|e| err(&loc, e.to_string()))?;
                    list.iter()
                        .map(|&inst| {
                            let mut c = m.clone();
                            c.transform(inst);
                            c
                        })
                        .collect()
                }
            };
            for mut m in copies {
                match (moves, &posed) {
                    // (a skinned primitive is in world space already, whatever moves its node)
                    _ if skinned => {
                        out.transforms.push(Mat4::IDENTITY);
                        out.nodes.push(None);
                    }
                    (true, Some(p)) => {
                        out.transforms.push(p[node.index()]);
                        out.nodes.push(Some(node.index()));
                    }
                    _ if in_node_space => {
                        out.transforms.push(world);
                        out.nodes.push(None);
                    }
                    _ => {
                        m.transform(world);
                        out.transforms.push(Mat4::IDENTITY);
                        out.nodes.push(None);
                    }
                }
                out.meshes.push(m);
            }
            out.deformed.extend(keep);
        }
    }
    // (the materials' notes first, as they were found first)
    out.notes.splice(0..0, materials.notes);
    if not_triangles > 0 {
        out.notes.push(format!(
            "{file}: {not_triangles} primitive(s) of points or lines are not drawn: rxpipe draws triangles"
        ));
    }
    if skinned_instances > 0 {
        out.notes.push(format!(
            "{file}: {skinned_instances} skinned node(s) have {} instances: each is drawn once, as its skin poses it",
            gltf_instancing::NAME
        ));
    }
    if unjointed > 0 {
        out.notes.push(format!(
            "{file}: {unjointed} primitive(s) of skinned nodes have no JOINTS_0 and WEIGHTS_0: they are placed by their nodes' transforms"
        ));
    }
    if frozen > 0 {
        out.notes.push(format!(
            "{file}: {frozen} primitive(s) whose shape an animation changes (skin or morph weights) are posed once, at time 0, as they are non-indexed or instanced: they do not follow the animation"
        ));
    }
    // (the joints of the skins applied: what follows them is the skinned mesh)
    let mut posed_joints = vec![false; doc.nodes().len()];
    for skin in doc.skins().filter(|s| skins_used[s.index()]) {
        for j in skin.joints() {
            posed_joints[j.index()] = true;
        }
    }
    out.notes.extend(animation_notes);
    // nodes an animation moves with no drawn mesh at or below them (cameras, lights, a skin's
    // joints): said, as nothing follows them
    if let Some(r) = &rig {
        let mut carries = vec![false; r.nodes.len()];
        for &n in out.nodes.iter().flatten() {
            let mut at = Some(n);
            // (a parent chain is at most as long as the tree: the walk found no cycle)
            for _ in 0..r.nodes.len() {
                let Some(k) = at.filter(|&k| !carries[k]) else {
                    break;
                };
                carries[k] = true;
                at = r.nodes[k].parent;
            }
        }
        let idle = (0..r.nodes.len())
            .filter(|&k| moved[k] && !carries[k] && !posed_joints[k])
            .count();
        if idle > 0 {
            out.notes.push(format!(
                "{file}: animations move {idle} node(s) with no mesh drawn below them (cameras, lights or a skin's joints): nothing follows them"
            ));
        }
    }
    out.rig = rig.filter(|_| out.nodes.iter().any(Option::is_some) || !out.deformed.is_empty());
    // extensions the file uses (not requires: those the gltf crate refuses) that are not drawn
    for ext in doc.extensions_used() {
        if !EXTENSIONS_DRAWN.contains(&ext) {
            out.notes.push(format!(
                "{file}: uses the extension {ext}, which rxpipe does not implement: the scene is drawn without what it adds"
            ));
        }
    }
    Ok(out)
}

/// A punctual light placed by its node's world transform (lights shine along the node's -z).
fn punctual(light: &gltf::khr_lights_punctual::Light, world: Mat4) -> PunctualLight {
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
fn camera(cam: &gltf::Camera, world: Mat4) -> Option<Camera> {
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
fn tangent(t: [f32; 4]) -> Vec4 {
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
