//! The walk of a glTF scene's node tree: each node's lights, cameras and triangle primitives,
//! the primitives posed at time 0 (morph weights, then skin) and placed in world space, or left
//! in their node's space where an animation moves the node; what the file has that is not drawn
//! is counted on the way and said in notes at the end.

use super::gltf_accessor::{check_accessors, read_floats};
use super::gltf_document::EXTENSIONS_DRAWN;
use super::gltf_materials::Materials;
use super::gltf_scene::GltfScene;
use super::{gltf_animation, gltf_instancing, gltf_skin};
use crate::error::IoError;
use glam::{Mat4, Vec2, Vec3, Vec4};
use gltf::mesh::Mode;
use rxpipe_core::animation::skin::{self, JointSets, MorphTarget};
use rxpipe_core::animation::{Deformed, Property, Rig};
use rxpipe_core::material::{LightKind, Material, PunctualLight};
use rxpipe_core::mesh::Mesh;
use rxpipe_core::scene::Camera;
use std::rc::Rc;
use std::sync::Arc;

/// A skin's joints (node indices), their inverse bind matrices and their joint matrices at
/// time 0.
struct SkinData {
    joints: Vec<usize>,
    inverse_bind: Vec<Mat4>,
    matrices: Vec<Mat4>,
}

/// A primitive's skin as applied: the skin, each vertex's joints and weights, and whether an
/// animation moves a joint.
struct AppliedSkin {
    data: Rc<SkinData>,
    sets: JointSets,
    moves: bool,
}

/// Where a node's primitives go: its index, its world matrix at time 0 and whether an
/// animation moves it or a node above it.
struct Placement {
    node: usize,
    world: Mat4,
    moves: bool,
}

/// A primitive's vertex attributes as read.
struct Vertices {
    positions: Vec<Vec3>,
    normals: Option<Vec<Vec3>>,
    tangents: Option<Vec<Vec4>>,
    uvs: Option<Vec<Vec2>>,
    uvs1: Option<Vec<Vec2>>,
    colors: Option<Vec<Vec4>>,
}

/// The state of one walk over a document's default scene.
pub(super) struct Walk<'a> {
    doc: &'a gltf::Document,
    buffers: &'a [gltf::buffer::Data],
    file: &'a str,
    /// whether the file uses KHR_mesh_quantization (its attribute types are read in read_floats)
    quantized: bool,
    materials: Materials<'a>,
    rig: Option<Rig>,
    animation_notes: Vec<String>,
    /// whether an animation moves each node itself (a channel of morph weights changes a
    /// mesh's shape, not its node's place)
    moved: Vec<bool>,
    /// every node's world matrix at time 0 when the file is animated
    posed: Option<Vec<Mat4>>,
    /// every node's world matrix at time 0 for the skins' joints (made once, when the file has
    /// a skin)
    skin_pose: Vec<Mat4>,
    /// each skin's joint data, made when a primitive first needs it
    skins: Vec<Option<Rc<SkinData>>>,
    /// the skins applied
    skins_used: Vec<bool>,
    /// primitives of points or lines
    not_triangles: usize,
    /// primitives of skinned nodes without joints and weights
    unjointed: usize,
    /// skinned nodes with instances (drawn once)
    skinned_instances: usize,
    /// primitives whose shape an animation changes but which are posed once only (nothing kept
    /// to pose them again)
    frozen: usize,
    out: GltfScene,
}

impl<'a> Walk<'a> {
    pub(super) fn new(
        doc: &'a gltf::Document,
        buffers: &'a [gltf::buffer::Data],
        base: Option<&'a std::path::Path>,
        file: &'a str,
    ) -> Walk<'a> {
        let (rig, animation_notes) = gltf_animation::read(doc, data_of(buffers), file);
        let mut moved = vec![false; doc.nodes().len()];
        for c in rig.iter().flat_map(|r| &r.clips).flat_map(|c| &c.channels) {
            if !matches!(c.property, Property::Weights(_)) {
                moved[c.node] = true;
            }
        }
        let posed = rig.as_ref().map(|r| r.pose(0.0));
        let skin_pose: Vec<Mat4> = match (&posed, doc.skins().len()) {
            (_, 0) => Vec::new(),
            (Some(p), _) => p.clone(),
            (None, _) => Rig {
                nodes: gltf_animation::tree(doc),
                clips: Vec::new(),
            }
            .pose(0.0),
        };
        Walk {
            doc,
            buffers,
            file,
            quantized: doc
                .extensions_used()
                .any(|e| e == super::gltf_document::QUANTIZATION),
            materials: Materials::new(doc, buffers, base, file),
            rig,
            animation_notes,
            moved,
            posed,
            skin_pose,
            skins: vec![None; doc.skins().len()],
            skins_used: vec![false; doc.skins().len()],
            not_triangles: 0,
            unjointed: 0,
            skinned_instances: 0,
            frozen: 0,
            out: GltfScene::default(),
        }
    }

    fn err(&self, location: &str, message: String) -> IoError {
        IoError::Parse {
            file: self.file.to_string(),
            location: location.to_string(),
            message,
        }
    }

    /// Walks `scene`'s node trees, depth first.
    pub(super) fn scene(&mut self, scene: gltf::Scene<'a>) -> Result<(), IoError> {
        // (each node with its parent's world matrix and whether a node above it moves)
        let mut stack: Vec<(gltf::Node, Mat4, bool)> =
            scene.nodes().map(|n| (n, Mat4::IDENTITY, false)).collect();
        // glTF nodes form strict trees: a node reached twice is a cycle (or a shared child),
        // which would otherwise loop for ever or multiply the geometry
        let mut reached = vec![false; self.doc.nodes().len()];
        while let Some((node, parent, moved_above)) = stack.pop() {
            match reached.get_mut(node.index()) {
                Some(r) if !*r => *r = true,
                _ => {
                    return Err(self.err(
                        &format!("node {}", node.index()),
                        "reached twice: the node hierarchy has a cycle or a shared child".into(),
                    ))
                }
            }
            let at = Placement {
                node: node.index(),
                world: parent * Mat4::from_cols_array_2d(&node.transform().matrix()),
                moves: moved_above || self.moved[node.index()],
            };
            for child in node.children() {
                stack.push((child, at.world, at.moves));
            }
            self.node(&node, &at)?;
        }
        Ok(())
    }

    /// A node's light, camera and mesh.
    fn node(&mut self, node: &gltf::Node<'a>, at: &Placement) -> Result<(), IoError> {
        if let Some(light) = node.light() {
            self.out.lights.push(punctual(&light, at.world));
        }
        if let Some(cam) = node.camera() {
            self.out.cameras.extend(camera(&cam, at.world));
            if let gltf::camera::Projection::Orthographic(_) = cam.projection() {
                self.out.notes.push(format!(
                    "{}: camera {} is orthographic, which rxpipe does not draw: only perspective cameras are offered",
                    self.file,
                    cam.index()
                ));
            }
        }
        let Some(mesh) = node.mesh() else {
            return Ok(());
        };
        // EXT_mesh_gpu_instancing: the node's mesh drawn once per instance, each copy in the
        // node's space placed by its instance's matrix (a skinned mesh is posed in world space
        // and drawn once)
        let instances = match gltf_instancing::matrices(self.doc, node, data_of(self.buffers)) {
            Ok(Some(_)) if node.skin().is_some() => {
                self.skinned_instances += 1;
                None
            }
            Ok(i) => i,
            Err(m) => return Err(self.err(&format!("node {}", node.index()), m)),
        };
        for prim in mesh.primitives() {
            self.primitive(node, &mesh, &prim, at, instances.as_deref())?;
        }
        Ok(())
    }

    /// One primitive of a node's mesh: read, posed at time 0 and placed (once per instance).
    fn primitive(
        &mut self,
        node: &gltf::Node<'a>,
        mesh: &gltf::Mesh<'a>,
        prim: &gltf::Primitive<'a>,
        at: &Placement,
        instances: Option<&[Mat4]>,
    ) -> Result<(), IoError> {
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
            self.not_triangles += 1;
            return Ok(());
        }
        check_accessors(prim, self.quantized).map_err(|m| self.err(&loc, m))?;
        let (positions, indices, soup) = self.triangles(prim, &loc)?;
        let (mut v, material) = self.surface(prim, &loc, positions)?;
        let (keep, skinned) =
            self.deform(node, mesh, prim, &loc, !soup && instances.is_none(), &mut v)?;
        // (a deformed mesh without a skin stays in its node's space, its node's matrix its
        // model matrix, as posing it again starts from that space)
        let in_node_space = keep.is_some() && !skinned;
        let mut m = Mesh {
            name: format!("{}: {}", self.file, mesh.name().unwrap_or("mesh")),
            positions: v.positions,
            normals: v.normals,
            uvs: v.uvs,
            uvs1: v.uvs1,
            colors: v.colors,
            tangents: v.tangents,
            indices,
            base_color: Some(prim.material().pbr_metallic_roughness().base_color_factor()),
            material,
        };
        if soup {
            // a non-indexed primitive is a triangle soup: weld it (re-indexing stage)
            m = crate::vertex::weld_soup(m)?;
        }
        // an instanced primitive stays in its node's space, once, with its instances' matrices
        // (drawn once per instance without copies)
        self.place(
            m,
            at,
            skinned,
            in_node_space,
            instances.map(<[Mat4]>::to_vec),
        );
        self.out.deformed.extend(keep);
        Ok(())
    }

    /// A primitive's positions, its triangles as a list (strips and fans unrolled, indices
    /// checked against the positions) and whether it is a triangle soup (has no indices).
    fn triangles(
        &self,
        prim: &gltf::Primitive<'a>,
        loc: &str,
    ) -> Result<(Vec<Vec3>, Vec<u32>, bool), IoError> {
        let data = data_of(self.buffers);
        let positions: Vec<Vec3> = prim
            .get(&gltf::Semantic::Positions)
            .and_then(|a| read_floats::<3>(a, data, false))
            .ok_or_else(|| {
                self.err(
                    loc,
                    "no POSITION attribute (or its buffer is missing)".into(),
                )
            })?
            .into_iter()
            .map(Vec3::from_array)
            .collect();
        let n = positions.len() as u32;
        let reader = prim.reader(data);
        let soup = reader.read_indices().is_none();
        let raw: Vec<u32> = match reader.read_indices() {
            Some(i) => i.into_u32().collect(),
            None => (0..n).collect(),
        };
        if let Some(bad) = raw.iter().find(|&&i| i >= n) {
            return Err(self.err(loc, format!("index {bad} out of range ({n} vertices)")));
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
        Ok((positions, indices, soup))
    }

    /// A primitive's surface: its normals, texture coordinates, colours and tangents (each
    /// only where it has one per position) and its material.
    fn surface(
        &mut self,
        prim: &gltf::Primitive<'a>,
        loc: &str,
        positions: Vec<Vec3>,
    ) -> Result<(Vertices, Option<Arc<Material>>), IoError> {
        let (data, quantized, file) = (data_of(self.buffers), self.quantized, self.file);
        let count = positions.len();
        let normals = prim
            .get(&gltf::Semantic::Normals)
            .and_then(|a| read_floats::<3>(a, data, false))
            .map(|v| v.into_iter().map(Vec3::from_array).collect::<Vec<_>>())
            .filter(|v| v.len() == count);
        // (the uv sets the material's textures read: the base colour's, and a second one
        // where another texture reads another)
        let (set, second) = self.materials.uv_sets(&prim.material());
        let read_uvs = |set: u32| {
            prim.get(&gltf::Semantic::TexCoords(set))
                // (the core specification's integer uvs are normalized, whatever the file says)
                .and_then(|a| read_floats::<2>(a, data, !quantized))
                .map(|v| v.into_iter().map(Vec2::from_array).collect::<Vec<_>>())
                .filter(|v| v.len() == count)
        };
        let mut uvs = read_uvs(set);
        let uvs1 = second.and_then(read_uvs);
        if let (Some(second), None) = (second, &uvs1) {
            self.out.notes.push(format!(
                "{file}: {loc} has textures that read TEXCOORD_{second} but no such coordinates: each is read at (0, 0) only"
            ));
        }
        let colors = prim
            .reader(data)
            .read_colors(0)
            .map(|it| it.into_rgba_f32().map(Vec4::from_array).collect::<Vec<_>>())
            .filter(|v| v.len() == count);
        // a primitive that names no material draws in the lit mode with glTF's default base
        // colour; one that names a material (or has vertex colours) is shaded with it
        let material = if prim.material().index().is_some() || colors.is_some() {
            Some(self.materials.material(prim.material())?)
        } else {
            None
        };
        // textures without coordinates read one texel everywhere: said, once a primitive
        if uvs.is_none()
            && material
                .as_ref()
                .is_some_and(|m| m.textures().next().is_some())
        {
            self.out.notes.push(format!(
                "{file}: {loc} has textures but no TEXCOORD_{set}: each is read at (0, 0) only"
            ));
        }
        // (a second set goes beside a first: a mesh without the first reads it as zeros)
        if uvs1.is_some() && uvs.is_none() {
            uvs = Some(vec![Vec2::ZERO; count]);
        }
        // tangents matter only to a normal map: read for a material with one
        let tangents = material
            .as_ref()
            .filter(|m| m.normal_texture.is_some())
            .and_then(|_| prim.get(&gltf::Semantic::Tangents))
            .and_then(|a| read_floats::<4>(a, data, false))
            .map(|v| v.into_iter().map(tangent).collect::<Vec<_>>())
            .filter(|v| v.len() == count);
        let v = Vertices {
            positions,
            normals,
            tangents,
            uvs,
            uvs1,
            colors,
        };
        Ok((v, material))
    }

    /// Poses a primitive at time 0: the shape of its morph weights (animated, or the node's or
    /// mesh's), then its skin's pose (in world space). Where an animation changes either and
    /// `keepable` (not a triangle soup, which welding renumbers, nor instances), the vertices
    /// before both are returned, to pose again; and whether the primitive is skinned.
    fn deform(
        &mut self,
        node: &gltf::Node<'a>,
        mesh: &gltf::Mesh<'a>,
        prim: &gltf::Primitive<'a>,
        loc: &str,
        keepable: bool,
        v: &mut Vertices,
    ) -> Result<(Option<Deformed>, bool), IoError> {
        let n = v.positions.len();
        let animated_weights = self.rig.as_ref().and_then(|r| r.weights(0.0, node.index()));
        let has_targets = prim.morph_targets().next().is_some();
        let morph_moves = has_targets && animated_weights.is_some();
        let weights: Vec<f32> = node
            .weights()
            .or(mesh.weights())
            .map(<[f32]>::to_vec)
            .unwrap_or_default();
        let targets: Vec<MorphTarget> = match has_targets {
            false => Vec::new(),
            true => gltf_skin::morph_targets(prim, n, self.quantized, data_of(self.buffers), |t| {
                morph_moves || weights.get(t).is_some_and(|&w| w != 0.0)
            })
            .map_err(|m| self.err(loc, m))?,
        };
        let applied = match node.skin() {
            Some(s) => self.skin(&s, prim, n, loc)?,
            None => None,
        };
        let skin_moves = applied.as_ref().is_some_and(|a| a.moves);
        let kept = (morph_moves || skin_moves) && keepable;
        self.frozen += usize::from((morph_moves || skin_moves) && !kept);
        let base = kept.then(|| (v.positions.clone(), v.normals.clone(), v.tangents.clone()));
        let mut attributes = skin::Attributes {
            positions: &mut v.positions,
            normals: v.normals.as_deref_mut(),
            tangents: v.tangents.as_deref_mut(),
        };
        skin::morph(
            &targets,
            animated_weights.as_deref().unwrap_or(&weights),
            &mut attributes,
        );
        if let Some(a) = &applied {
            skin::pose(
                &a.sets,
                &a.data.matrices,
                self.skin_pose[node.index()],
                &mut attributes,
            );
        }
        let skinned = applied.is_some();
        let keep = base.map(|(positions, normals, tangents)| Deformed {
            object: self.out.meshes.len(),
            rig: 0,
            node: node.index(),
            positions,
            normals,
            tangents,
            morph: has_targets.then_some((targets, weights)),
            skin: applied.map(|a| (a.data.joints.clone(), a.data.inverse_bind.clone(), a.sets)),
        });
        Ok((keep, skinned))
    }

    /// A skinned node's primitive's skin: its joints' data (made once per skin) and the
    /// vertices' joints and weights; none for a primitive without JOINTS_0 and WEIGHTS_0.
    fn skin(
        &mut self,
        skin: &gltf::Skin<'a>,
        prim: &gltf::Primitive<'a>,
        n: usize,
        loc: &str,
    ) -> Result<Option<AppliedSkin>, IoError> {
        let s = skin.index();
        let data = match &self.skins[s] {
            Some(d) => d.clone(),
            None => {
                let place = format!("skin {s}");
                let (joints, inverse_bind) = gltf_skin::joints(skin, data_of(self.buffers))
                    .map_err(|m| self.err(&place, m))?;
                let matrices = skin::joint_matrices(&joints, &inverse_bind, &self.skin_pose)
                    .ok_or_else(|| self.err(&place, "a joint is not a node".into()))?;
                let d = Rc::new(SkinData {
                    joints,
                    inverse_bind,
                    matrices,
                });
                self.skins[s] = Some(d.clone());
                d
            }
        };
        let sets = gltf_skin::joint_sets(prim, n, data.joints.len(), data_of(self.buffers))
            .map_err(|m| self.err(loc, m))?;
        self.skins_used[s] |= !sets.is_empty();
        self.unjointed += usize::from(sets.is_empty());
        if sets.is_empty() {
            return Ok(None);
        }
        let moves = data.joints.iter().any(|&j| self.world_moves(j));
        Ok(Some(AppliedSkin { data, sets, moves }))
    }

    /// Whether an animation moves node `k`'s world matrix: it or a node above it is animated.
    fn world_moves(&self, k: usize) -> bool {
        let mut at = Some(k);
        // (a parent chain is at most as long as the tree)
        for _ in 0..self.moved.len() {
            let Some(n) = at else { break };
            if self.moved[n] {
                return true;
            }
            at = self
                .rig
                .as_ref()
                .and_then(|r| r.nodes.get(n))
                .and_then(|n| n.parent);
        }
        false
    }

    /// Adds a mesh with its model matrix: in world space, or in its node's space (bound to the
    /// node where an animation moves it).
    fn place(
        &mut self,
        mut m: Mesh,
        at: &Placement,
        skinned: bool,
        in_node_space: bool,
        instances: Option<Vec<Mat4>>,
    ) {
        let out = &mut self.out;
        // (instances are placed in the node's space: the mesh is not moved into world space)
        let in_node_space = in_node_space || instances.is_some();
        out.instances.push(instances);
        match (at.moves, &self.posed) {
            // (a skinned primitive is in world space already, whatever moves its node)
            _ if skinned => {
                out.transforms.push(Mat4::IDENTITY);
                out.nodes.push(None);
            }
            (true, Some(p)) => {
                out.transforms.push(p[at.node]);
                out.nodes.push(Some(at.node));
            }
            _ if in_node_space => {
                out.transforms.push(at.world);
                out.nodes.push(None);
            }
            _ => {
                m.transform(at.world);
                out.transforms.push(Mat4::IDENTITY);
                out.nodes.push(None);
            }
        }
        out.meshes.push(m);
    }

    /// The scene, with the notes on what was not drawn.
    pub(super) fn finish(self) -> GltfScene {
        let file = self.file;
        let mut out = self.out;
        // (the materials' notes first, as they were found first)
        out.notes.splice(0..0, self.materials.notes);
        if self.not_triangles > 0 {
            out.notes.push(format!(
                "{file}: {} primitive(s) of points or lines are not drawn: rxpipe draws triangles",
                self.not_triangles
            ));
        }
        if self.skinned_instances > 0 {
            out.notes.push(format!(
                "{file}: {} skinned node(s) have {} instances: each is drawn once, as its skin poses it",
                self.skinned_instances,
                gltf_instancing::NAME
            ));
        }
        if self.unjointed > 0 {
            out.notes.push(format!(
                "{file}: {} primitive(s) of skinned nodes have no JOINTS_0 and WEIGHTS_0: they are placed by their nodes' transforms",
                self.unjointed
            ));
        }
        if self.frozen > 0 {
            out.notes.push(format!(
                "{file}: {} primitive(s) whose shape an animation changes (skin or morph weights) are posed once, at time 0, as they are non-indexed or instanced: they do not follow the animation",
                self.frozen
            ));
        }
        out.notes.extend(self.animation_notes);
        if let Some(r) = &self.rig {
            let idle = idle_nodes(self.doc, r, &self.moved, &self.skins_used, &out.nodes);
            if idle > 0 {
                out.notes.push(format!(
                    "{file}: animations move {idle} node(s) with no mesh drawn below them (cameras, lights or a skin's joints): nothing follows them"
                ));
            }
        }
        out.rig = self
            .rig
            .filter(|_| out.nodes.iter().any(Option::is_some) || !out.deformed.is_empty());
        // extensions the file uses (not requires: those the gltf crate refuses) that are not
        // drawn
        for ext in self.doc.extensions_used() {
            if !EXTENSIONS_DRAWN.contains(&ext) {
                out.notes.push(format!(
                    "{file}: uses the extension {ext}, which rxpipe does not implement: the scene is drawn without what it adds"
                ));
            }
        }
        out
    }
}

/// The nodes an animation moves with no drawn mesh at or below them (cameras, lights, a skin's
/// joints: the joints of the skins applied count as followed, by the skinned mesh).
fn idle_nodes(
    doc: &gltf::Document,
    rig: &Rig,
    moved: &[bool],
    skins_used: &[bool],
    bound: &[Option<usize>],
) -> usize {
    let mut posed_joints = vec![false; doc.nodes().len()];
    for skin in doc.skins().filter(|s| skins_used[s.index()]) {
        for j in skin.joints() {
            posed_joints[j.index()] = true;
        }
    }
    let mut carries = vec![false; rig.nodes.len()];
    for &n in bound.iter().flatten() {
        let mut at = Some(n);
        // (a parent chain is at most as long as the tree: the walk found no cycle)
        for _ in 0..rig.nodes.len() {
            let Some(k) = at.filter(|&k| !carries[k]) else {
                break;
            };
            carries[k] = true;
            at = rig.nodes[k].parent;
        }
    }
    (0..rig.nodes.len())
        .filter(|&k| moved[k] && !carries[k] && !posed_joints[k])
        .count()
}

/// The bytes of a document's buffers, as the gltf crate's readers take them.
fn data_of<'a, 's>(
    buffers: &'s [gltf::buffer::Data],
) -> impl Copy + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]> {
    move |b: gltf::Buffer| buffers.get(b.index()).map(|d| &d.0[..])
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
