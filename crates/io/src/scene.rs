//! Scenes ([`rxpipe_core::scene`]) read from a small TOML format, a glTF file or a single mesh.
//!
//! ```toml
//! [camera]
//! eye = [0.0, 1.0, 4.0]
//! target = [0.0, 0.0, 0.0]
//! fov_y = 45.0            # degrees
//!
//! [light]
//! direction = [-0.4, -1.0, -0.6]   # the direction light travels
//! ambient = 0.15
//!
//! [[object]]
//! generator = "icosphere"  # or mesh = "path/relative/to/scene.obj"
//! level = 4
//! translate = [0.0, 0.0, 0.0]
//! rotate = [0.0, 30.0, 0.0]   # degrees about x, y, z
//! scale = 1.0                  # or [x, y, z]
//! color = [0.8, 0.3, 0.2]
//! ```

use crate::error::IoError;
use glam::{EulerRot, Mat4, Vec3};
use rxpipe_core::mesh;
use rxpipe_core::scene::{Camera, Light, Object, Scene};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCamera {
    eye: [f32; 3],
    target: [f32; 3],
    #[serde(default = "up")]
    up: [f32; 3],
    #[serde(default = "fov")]
    fov_y: f32,
    #[serde(default)]
    near: Option<f32>,
    #[serde(default)]
    far: Option<f32>,
}
fn up() -> [f32; 3] {
    [0.0, 1.0, 0.0]
}
fn fov() -> f32 {
    45.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLight {
    direction: [f32; 3],
    #[serde(default = "one3")]
    color: [f32; 3],
    #[serde(default = "amb")]
    ambient: f32,
}
fn one3() -> [f32; 3] {
    [1.0; 3]
}
fn amb() -> f32 {
    0.15
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Scale {
    Uniform(f32),
    Axes([f32; 3]),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileObject {
    mesh: Option<String>,
    generator: Option<String>,
    level: Option<u32>,
    triangles: Option<u32>,
    segments: Option<u32>,
    sides: Option<u32>,
    major: Option<f32>,
    minor: Option<f32>,
    #[serde(default)]
    translate: [f32; 3],
    #[serde(default)]
    rotate: [f32; 3],
    scale: Option<Scale>,
    color: Option<[f32; 3]>,
    /// the object drawn once per entry, each moved by its offset before the object's placement
    /// (instances: the mesh held once)
    instances: Option<Vec<[f32; 3]>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileScene {
    camera: Option<FileCamera>,
    light: Option<FileLight>,
    background: Option<[f32; 3]>,
    #[serde(default)]
    object: Vec<FileObject>,
    #[serde(default)]
    passes: Vec<String>,
}

/// The default scene's TOML (scenes/default.toml), built into the binary so that `rxpipe view`
/// works from any folder.
pub const DEFAULT_SCENE: &str = include_str!("../../../scenes/default.toml");

/// The built-in default scene ([`DEFAULT_SCENE`]): procedural meshes only, so it reads no
/// file.
pub fn builtin_scene() -> Scene {
    parse_scene(DEFAULT_SCENE, "default scene (built in)", Path::new("."))
        .expect("the built-in scene parses (tests/loaders.rs)")
}

/// Loads a `.toml` scene, or any mesh file (glTF scenes included) or generator spec as a
/// scene with a framing camera.
pub fn load_scene(path: impl AsRef<Path>) -> Result<Scene, IoError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if !is_toml {
        // a generator spec (`icosphere:5`) where no such file exists, as every command takes
        if let Some(s) = path.to_str() {
            if !path.exists() && rxpipe_core::mesh::looks_like_spec(s) {
                return Ok(Scene::from_meshes(
                    &name,
                    vec![rxpipe_core::mesh::from_spec(s)?],
                ));
            }
        }
        // a glTF file brings its lights and its camera too
        let (g, sources) = load_file(path)?;
        let mut scene = Scene::from_meshes(&name, g.meshes);
        // (animated and instanced meshes lie in their nodes' spaces, placed as at time 0)
        let placed = g.rig.is_some() || g.instances.iter().any(Option::is_some);
        for (o, (t, i)) in scene
            .objects
            .iter_mut()
            .zip(g.transforms.iter().zip(g.instances))
        {
            o.transform = *t;
            o.instances = i;
        }
        if placed {
            scene.frame_all();
        }
        if let Some(rig) = g.rig {
            for (k, node) in g.nodes.iter().enumerate() {
                if let Some(node) = *node {
                    scene
                        .animation
                        .bindings
                        .push(rxpipe_core::animation::Binding {
                            object: k,
                            rig: 0,
                            node,
                            placement: Mat4::IDENTITY,
                        });
                }
            }
            scene.animation.rigs.push(std::sync::Arc::new(rig));
            scene.animation.deformed = g.deformed;
        }
        scene.lights = g.lights;
        scene.notes = g.notes;
        if let Some(c) = g.cameras.first() {
            scene.camera = *c;
        }
        scene.cameras = g.cameras;
        scene.sources = sources;
        check_drawable(&scene)?;
        return Ok(scene);
    }
    let text = String::from_utf8(crate::files::read_file(path)?).map_err(|e| IoError::Parse {
        file: name.clone(),
        location: format!("byte {}", e.utf8_error().valid_up_to()),
        message: "not valid UTF-8 text".into(),
    })?;
    let mut scene = parse_scene(&text, &name, path.parent().unwrap_or(Path::new(".")))?;
    scene.sources.insert(0, path.to_path_buf());
    check_drawable(&scene)?;
    Ok(scene)
}

/// Refuses a scene that cannot draw anything: no triangles at all, or a camera that sees
/// nothing (what would otherwise be a blank image without a word).
pub fn check_drawable(scene: &Scene) -> Result<(), IoError> {
    match scene.undrawable() {
        Some(message) => Err(IoError::Unsupported {
            file: scene.name.clone(),
            message,
        }),
        None => Ok(()),
    }
}

/// Parses scene TOML; mesh paths are relative to `dir`.
pub fn parse_scene(text: &str, name: &str, dir: &Path) -> Result<Scene, IoError> {
    let f: FileScene = toml::from_str(text).map_err(|e| IoError::Parse {
        file: name.into(),
        location: e
            .span()
            .map(|s| {
                let line = text[..s.start.min(text.len())].lines().count().max(1);
                format!("line {line}")
            })
            .unwrap_or_else(|| "document".into()),
        message: e.message().to_string(),
    })?;
    let mut objects = Vec::new();
    let mut sources = Vec::new();
    let mut notes = Vec::new();
    let mut animation = rxpipe_core::animation::SceneAnimation::default();
    let mut noted = std::collections::HashSet::new();
    for (i, o) in f.object.iter().enumerate() {
        // (the animated meshes of this object's file: object, rig, node)
        let mut moved: Vec<(usize, usize, usize)> = Vec::new();
        let perr = |message: String| IoError::Parse {
            file: name.into(),
            location: format!("object {}", i + 1),
            message,
        };
        // a mesh file's parts (a glTF's primitives) stay separate objects, each with its
        // own material; the object's transform applies to all of them
        let meshes = match (&o.mesh, &o.generator) {
            (Some(p), None) => {
                let file = dir.join(p);
                // (its notes kept, once for a file named twice; a glTF's lights and camera
                // are the scene file's business)
                let (g, read) = load_file(&file)?;
                sources.extend(read);
                for n in g.notes {
                    if noted.insert(n.clone()) {
                        notes.push(n);
                    }
                }
                if g.meshes.iter().all(|m| m.triangle_count() == 0) {
                    return Err(perr(format!("{} holds no triangles", file.display())));
                }
                // (an animated mesh moves with its node, under the object's transform)
                if let Some(rig) = g.rig {
                    let r = animation.rigs.len();
                    animation.rigs.push(std::sync::Arc::new(rig));
                    for (k, node) in g.nodes.iter().enumerate() {
                        if let Some(node) = *node {
                            moved.push((objects.len() + k, r, node));
                        }
                    }
                    // (its deformed objects, posed again in the file's space, under the
                    // object's transform)
                    for mut d in g.deformed {
                        d.object += objects.len();
                        d.rig = r;
                        animation.deformed.push(d);
                    }
                }
                g.meshes
                    .into_iter()
                    .zip(g.transforms.into_iter().zip(g.instances))
                    .collect()
            }
            (None, Some(g)) => {
                let generator = generator_of(o, g).map_err(perr)?;
                vec![(
                    generator.generate(g).map_err(|e| perr(e.to_string()))?,
                    (Mat4::IDENTITY, None),
                )]
            }
            _ => return Err(perr("give exactly one of 'mesh' or 'generator'".into())),
        };
        let transform = transform_of(o);
        for (object, rig, node) in moved {
            animation.bindings.push(rxpipe_core::animation::Binding {
                object,
                rig,
                node,
                placement: transform,
            });
        }
        for (mesh, (own, instances)) in meshes {
            let mut mesh = rxpipe_core::scene::colored(mesh);
            let color = color_of(o, &mut mesh);
            let mut object = Object::new(mesh, transform * own, color);
            object.instances = instances;
            if let Some(offsets) = &o.instances {
                // the file's instances: offsets in the mesh's own space, before the object's
                // scale, rotation and translation (a glTF's instances drawn at every offset)
                if offsets.iter().flatten().any(|v| !v.is_finite()) {
                    return Err(perr("an instance offset is not a finite number".into()));
                }
                let within = object
                    .instances
                    .take()
                    .unwrap_or_else(|| vec![Mat4::IDENTITY]);
                object.instances = Some(
                    offsets
                        .iter()
                        .flat_map(|&t| {
                            let at = Mat4::from_translation(Vec3::from_array(t));
                            within.iter().map(move |&i| at * i)
                        })
                        .collect(),
                );
            }
            objects.push(object);
        }
    }
    let mut scene = Scene {
        name: name.into(),
        camera: Camera::framing(Vec3::splat(-1.0), Vec3::splat(1.0)),
        light: Light::default(),
        objects,
        background: f.background.unwrap_or([0.06, 0.07, 0.09]),
        passes: f.passes,
        sources,
        lights: Vec::new(),
        notes,
        animation,
        cameras: Vec::new(),
    };
    view_of(&mut scene, f.camera, f.light);
    Ok(scene)
}

/// The generator an object of a scene file names, with its parameters or their defaults.
fn generator_of(o: &FileObject, g: &str) -> Result<mesh::Generator, String> {
    Ok(match g {
        "icosphere" => mesh::Generator::Icosphere {
            level: o.level.unwrap_or(3),
        },
        "torus" => mesh::Generator::Torus {
            major: o.major.unwrap_or(1.0),
            minor: o.minor.unwrap_or(0.3),
            segments: o.segments.unwrap_or(64),
            sides: o.sides.unwrap_or(24),
        },
        "grid" => mesh::Generator::Grid {
            nx: o.segments.unwrap_or(16),
            nz: o.sides.unwrap_or(16),
        },
        "rings" => mesh::Generator::Rings {
            triangles: o.triangles.unwrap_or(20_000),
        },
        other => {
            return Err(format!(
                "unknown generator '{other}' (icosphere, torus, grid, rings)"
            ))
        }
    })
}

/// An object's placement from a scene file: scale, then rotation (degrees about x, y and z in
/// that order), then translation.
fn transform_of(o: &FileObject) -> Mat4 {
    let scale = match o.scale {
        None => Vec3::ONE,
        Some(Scale::Uniform(s)) => Vec3::splat(s),
        Some(Scale::Axes(a)) => Vec3::from_array(a),
    };
    let r = o.rotate.map(f32::to_radians);
    Mat4::from_scale_rotation_translation(
        scale,
        glam::Quat::from_euler(EulerRot::XYZ, r[0], r[1], r[2]),
        Vec3::from_array(o.translate),
    )
}

/// An object's colour: the scene file's `color` where given, which also replaces the mesh's
/// material's base colour and its texture; else the mesh's own.
fn color_of(o: &FileObject, mesh: &mut mesh::Mesh) -> [f32; 4] {
    // `color` overrides the file's colours only when given (a material's base
    // colour and its texture too)
    match o.color {
        Some(c) => {
            if let Some(m) = &mut mesh.material {
                let m = std::sync::Arc::make_mut(m);
                m.base_color = glam::Vec4::new(c[0], c[1], c[2], 1.0);
                m.base_color_texture = None;
            }
            [c[0], c[1], c[2], 1.0]
        }
        None => mesh.base_color.unwrap_or([0.8, 0.8, 0.8, 1.0]),
    }
}

/// The scene file's camera (its near and far planes from the distance to the target where not
/// given), or one framing every object; and its light where given.
fn view_of(scene: &mut Scene, camera: Option<FileCamera>, light: Option<FileLight>) {
    match camera {
        Some(c) => {
            let (eye, target) = (Vec3::from_array(c.eye), Vec3::from_array(c.target));
            let d = (eye - target).length().max(1e-3);
            scene.camera = Camera {
                eye,
                target,
                up: Vec3::from_array(c.up),
                fov_y: c.fov_y,
                near: c.near.unwrap_or(d * 0.02),
                far: c.far.unwrap_or(d * 20.0),
            };
        }
        None => scene.frame_all(),
    }
    if let Some(l) = light {
        scene.light = Light {
            direction: Vec3::from_array(l.direction).normalize_or(Vec3::NEG_Y),
            color: Vec3::from_array(l.color),
            ambient: l.ambient,
        };
    }
}
/// A mesh file as a scene takes it, and the files it was read from (itself and what it refers
/// to): a glTF (.gltf, .glb, gzipped or not) with its materials, lights, camera and notes; an OBJ
/// split by material (see [`super::mtl`]) with its notes; any other file as loaded.
fn load_file(path: &Path) -> Result<(super::gltf::GltfScene, Vec<PathBuf>), IoError> {
    let mut sources = vec![path.to_path_buf()];
    sources.extend(crate::meshes::referenced_files(path));
    let g = if crate::files::named(path, &["gltf", "glb"]) {
        crate::meshes::load_gltf_scene(path)?
    } else if crate::files::named(path, &["obj"]) {
        let o = crate::meshes::load_obj_scene(path)?;
        super::gltf::GltfScene::of_meshes(o.meshes, o.notes)
    } else {
        super::gltf::GltfScene::of_meshes(crate::meshes::load_meshes(path)?.0, Vec::new())
    };
    Ok((g, sources))
}
