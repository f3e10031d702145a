//! Materials and textures (CPU reference): unlit colours, vertex colours, texture samplers,
//! double-sided faces, alpha masks and blending, on small scenes built here whose pixels are known,
//! and every shared glTF scene rendered (skipped with a notice when ../shared/scenes is absent).
//! Where there is a GPU, every frame is drawn by the CUDA backend too and must agree with the
//! CPU's (common::assert_frames_agree); with RXPIPE_REQUIRE_GPU=1 a missing GPU fails.

mod common;

use glam::{Vec2, Vec3, Vec4};
use rxpipe::material::{AlphaMode, Filter, Material, Sampler, Texture, TextureRef};
use rxpipe::{Backend, Camera, Mesh, Pipeline, PipelineBuilder, Renderer, Scene};
use std::sync::Arc;

const W: u32 = 64;
const H: u32 = 64;

/// A square in the plane z = `z` covering [-1, 1]², facing +z, with uvs from (0, 0) at its
/// top-left corner to (1, 1).
fn quad(z: f32, material: Option<Material>) -> Mesh {
    let p = |x: f32, y: f32| Vec3::new(x, y, z);
    Mesh {
        name: "quad".into(),
        positions: vec![p(-1., -1.), p(1., -1.), p(1., 1.), p(-1., 1.)],
        normals: Some(vec![Vec3::Z; 4]),
        uvs: Some(vec![
            Vec2::new(0., 1.),
            Vec2::new(1., 1.),
            Vec2::new(1., 0.),
            Vec2::new(0., 0.),
        ]),
        indices: vec![0, 1, 2, 0, 2, 3],
        material: material.map(Arc::new),
        ..Default::default()
    }
}

/// A camera at `eye_z` on the z axis looking at the origin (the square fills the middle of the
/// frame).
fn on_axis(eye_z: f32) -> Camera {
    Camera {
        eye: Vec3::new(0.0, 0.0, eye_z),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 60.0,
        near: 0.1,
        far: 100.0,
    }
}

/// Renders meshes seen from `eye_z` on the z axis.
fn render(meshes: Vec<Mesh>, eye_z: f32) -> rxpipe::Frame {
    let mut scene = Scene::from_meshes("test", meshes);
    scene.camera = on_axis(eye_z);
    scene.background = [0.0; 3];
    on_both(
        || Pipeline::builder().reindex(None),
        &scene,
        (W, H),
        "a test scene",
    )
}

/// `scene` from its camera with the pipeline `builder` makes, on the CPU and, where there is a
/// GPU, on the CUDA backend, which must agree with the CPU; returns the CPU's frame.
fn on_both(
    builder: impl Fn() -> PipelineBuilder,
    scene: &Scene,
    size: (u32, u32),
    what: &str,
) -> rxpipe::Frame {
    let camera = scene.camera;
    let r = Renderer::new(Backend::Cpu).unwrap();
    let cpu = builder()
        .build(&r)
        .unwrap()
        .render(scene, &camera, size)
        .unwrap();
    if common::gpu().is_some() {
        let r = Renderer::new(Backend::Cuda).unwrap();
        let gpu = builder()
            .build(&r)
            .unwrap()
            .render(scene, &camera, size)
            .unwrap();
        common::assert_frames_agree(&cpu, &gpu, what);
    }
    cpu
}

/// A unit sphere of material `m` seen from 3 along z, on both backends.
fn sphere_of(m: Material) -> rxpipe::Frame {
    let mut mesh = rxpipe::mesh::icosphere(4);
    mesh.material = Some(Arc::new(m));
    render(vec![mesh], 3.0)
}

/// The largest sum of a pixel's red, green and blue in frame `f`.
fn brightest(f: &rxpipe::Frame) -> u32 {
    f.color
        .chunks(4)
        .map(|p| p[0] as u32 + p[1] as u32 + p[2] as u32)
        .max()
        .unwrap()
}

fn px(f: &rxpipe::Frame, x: u32, y: u32) -> [u8; 4] {
    let i = 4 * (y * f.width + x) as usize;
    f.color[i..i + 4].try_into().unwrap()
}

fn srgb(c: f32) -> u8 {
    let s = if c <= 0.003_130_8 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    };
    (s.clamp(0.0, 1.0) * 255.0).round() as u8
}

fn unlit(base: Vec4) -> Material {
    Material {
        base_color: base,
        unlit: true,
        ..Default::default()
    }
}

fn near(a: [u8; 4], b: [u8; 3], tol: u8) -> bool {
    (0..3).all(|c| a[c].abs_diff(b[c]) <= tol)
}

#[test]
fn unlit_materials_show_their_base_colour_times_the_vertex_colours() {
    let f = render(
        vec![quad(0.0, Some(unlit(Vec4::new(0.8, 0.4, 0.2, 1.0))))],
        2.0,
    );
    let c = px(&f, W / 2, H / 2);
    assert!(near(c, [srgb(0.8), srgb(0.4), srgb(0.2)], 1), "{c:?}");
    // vertex colours: left corners red, right corners blue; the middle is their mean
    let mut q = quad(0.0, Some(unlit(Vec4::ONE)));
    let (r, b) = (Vec4::new(1., 0., 0., 1.), Vec4::new(0., 0., 1., 1.));
    q.colors = Some(vec![r, b, b, r]);
    let f = render(vec![q], 2.0);
    let left = px(&f, W / 2 - 12, H / 2);
    let right = px(&f, W / 2 + 12, H / 2);
    assert!(left[0] > 200 && left[2] < 150, "{left:?}");
    assert!(right[2] > 200 && right[0] < 150, "{right:?}");
}

/// Flat normals give every triangle corner a vertex of its own; the vertex colours follow their
/// corners on both backends (the GPU's stage re-maps the host's colours through the corners).
#[test]
fn vertex_colours_survive_flat_normals() {
    let mut q = quad(0.0, Some(unlit(Vec4::ONE)));
    let (r, b) = (Vec4::new(1., 0., 0., 1.), Vec4::new(0., 0., 1., 1.));
    q.colors = Some(vec![r, b, b, r]);
    let mut scene = Scene::from_meshes("flat", vec![q]);
    scene.camera = Camera {
        eye: Vec3::new(0.0, 0.0, 2.0),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 60.0,
        near: 0.1,
        far: 100.0,
    };
    let f = on_both(
        || {
            Pipeline::builder()
                .reindex(None)
                .stages(&["normals:flat"])
                .unwrap()
        },
        &scene,
        (W, H),
        "vertex colours after flat normals",
    );
    let left = px(&f, W / 2 - 12, H / 2);
    let right = px(&f, W / 2 + 12, H / 2);
    assert!(left[0] > 200 && left[2] < 150, "{left:?}");
    assert!(right[2] > 200 && right[0] < 150, "{right:?}");
}

/// A 2x2 texture: red, green / blue, white, nearest filtering.
fn four_texels(sampler: Sampler) -> Arc<Texture> {
    let texels = [
        255, 0, 0, 255, 0, 255, 0, 255, //
        0, 0, 255, 255, 255, 255, 255, 255,
    ];
    Arc::new(Texture::new("2x2", 2, 2, &texels, true, sampler).unwrap())
}

#[test]
fn textures_are_sampled_with_their_sampler() {
    let nearest = Sampler {
        mag: Filter::Nearest,
        min: Filter::Nearest,
        mipmap: None,
        ..Default::default()
    };
    let m = Material {
        base_color_texture: Some(TextureRef::new(four_texels(nearest))),
        ..unlit(Vec4::ONE)
    };
    let f = render(vec![quad(0.0, Some(m.clone()))], 2.0);
    // uv (0, 0) is the square's top-left corner: texel (0, 0), red
    let (l, r, t, b) = (W / 2 - 8, W / 2 + 8, H / 2 - 8, H / 2 + 8);
    assert!(near(px(&f, l, t), [255, 0, 0], 0), "{:?}", px(&f, l, t));
    assert!(near(px(&f, r, t), [0, 255, 0], 0), "{:?}", px(&f, r, t));
    assert!(near(px(&f, l, b), [0, 0, 255], 0), "{:?}", px(&f, l, b));
    assert!(near(px(&f, r, b), [255, 255, 255], 0), "{:?}", px(&f, r, b));
    // a texture transform scaling uv by 2 repeats the four texels twice across
    let mut m2 = m.clone();
    m2.base_color_texture.as_mut().unwrap().transform = Some([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
    let f2 = render(vec![quad(0.0, Some(m2))], 2.0);
    // the quad spans about 37 pixels; a quarter of it in, the red texel comes back
    assert!(near(px(&f2, W / 2 + 2, H / 2 + 2), [255, 0, 0], 0));
    // seen from far away, a 64x64 red and blue checker covering a few pixels reads its mean
    // (purple) from the mip chain, not single red or blue texels
    let checker: Vec<u8> = (0..64 * 64)
        .flat_map(|i| {
            if (i % 64 + i / 64) % 2 == 0 {
                [255, 0, 0, 255]
            } else {
                [0, 0, 255, 255]
            }
        })
        .collect();
    let tex = Texture::new("checker", 64, 64, &checker, true, Sampler::default()).unwrap();
    let mipmapped = Material {
        base_color_texture: Some(TextureRef::new(Arc::new(tex))),
        ..m
    };
    let far = render(vec![quad(0.0, Some(mipmapped))], 30.0);
    let c = px(&far, W / 2, H / 2);
    let mean = srgb(0.5);
    assert!(
        c[0].abs_diff(mean) <= 12 && c[2].abs_diff(mean) <= 12 && c[1] == 0,
        "mip level: {c:?}"
    );
}

#[test]
fn normal_maps_take_their_texture_transform() {
    // a normal map whose left half tilts the normal one way and whose right half the other
    let texels: Vec<u8> = (0..16)
        .flat_map(|i| {
            if i % 4 < 2 {
                [40, 128, 200, 255]
            } else {
                [216, 128, 200, 255]
            }
        })
        .collect();
    let nearest = Sampler {
        mag: Filter::Nearest,
        min: Filter::Nearest,
        mipmap: None,
        ..Default::default()
    };
    let tilt = Arc::new(Texture::new("tilt", 4, 4, &texels, false, nearest).unwrap());
    let m = Material {
        roughness: 1.0,
        metallic: 0.0,
        normal_texture: Some(TextureRef::new(tilt)),
        ..Default::default()
    };
    let plain = render(vec![quad(0.0, Some(m.clone()))], 2.0);
    // moved by half the texture (repeat wrap): the halves swap
    let mut moved = m.clone();
    moved.normal_texture.as_mut().unwrap().transform = Some([1.0, 0.0, 0.0, 1.0, 0.5, 0.0]);
    let swapped = render(vec![quad(0.0, Some(moved))], 2.0);
    let (l, r, y) = (W / 2 - 8, W / 2 + 8, H / 2);
    // each side lit as the other side's normal says (the light lies off the axis, so the two
    // tilts differ); not exactly equal, the view direction differs across the quad
    assert_ne!(px(&plain, l, y), px(&plain, r, y));
    assert_ne!(px(&plain, l, y), px(&swapped, l, y));
    let d = |a: [u8; 4], b: [u8; 4]| (0..3).map(|c| a[c].abs_diff(b[c])).max().unwrap();
    assert!(
        d(px(&swapped, l, y), px(&plain, r, y)) < d(px(&swapped, l, y), px(&plain, l, y)),
        "{:?} {:?} {:?}",
        px(&swapped, l, y),
        px(&plain, r, y),
        px(&plain, l, y)
    );
}

/// glTF TANGENT: a mesh's tangents orient its normal map in place of the frame its uvs give.
#[test]
fn normal_maps_follow_the_mesh_tangents() {
    // one texel: a normal tilted along both the tangent and the bitangent
    let nearest = Sampler {
        mag: Filter::Nearest,
        min: Filter::Nearest,
        mipmap: None,
        ..Default::default()
    };
    let tilt = Texture::new("tilt", 1, 1, &[216, 60, 200, 255], false, nearest).unwrap();
    let m = Material {
        roughness: 0.5,
        metallic: 0.0,
        normal_texture: Some(TextureRef::new(Arc::new(tilt))),
        ..Default::default()
    };
    // the quad's uvs give it tangent +x and bitangent -y (v grows downwards)
    let reference = render(vec![quad(0.0, Some(m.clone()))], 2.0);
    // with its uvs turned a quarter (u grows upwards) the frame turns too, unless the mesh's
    // tangents say otherwise: +x with w = -1 is bitangent -(z x x) = -y, the reference's frame
    let turned = |tangents: Option<Vec<Vec4>>| {
        let mut q = quad(0.0, Some(m.clone()));
        q.uvs = Some(
            q.positions
                .iter()
                .map(|p| Vec2::new((p.y + 1.0) / 2.0, (p.x + 1.0) / 2.0))
                .collect(),
        );
        q.tangents = tangents;
        q
    };
    let own = render(vec![turned(None)], 2.0);
    let given = render(vec![turned(Some(vec![Vec4::new(1., 0., 0., -1.); 4]))], 2.0);
    let flipped = render(vec![turned(Some(vec![Vec4::new(1., 0., 0., 1.); 4]))], 2.0);
    let diff = |a: &rxpipe::Frame, b: &rxpipe::Frame| {
        a.color
            .iter()
            .zip(&b.color)
            .map(|(x, y)| x.abs_diff(*y))
            .max()
            .unwrap()
    };
    assert!(
        diff(&given, &reference) <= 1,
        "{}",
        diff(&given, &reference)
    );
    assert!(diff(&own, &reference) > 8, "{}", diff(&own, &reference));
    assert!(
        diff(&flipped, &reference) > 8,
        "{}",
        diff(&flipped, &reference)
    );
    // a zero tangent is none: the uvs' frame
    let zero = render(vec![turned(Some(vec![Vec4::ZERO; 4]))], 2.0);
    assert_eq!(diff(&zero, &own), 0);
}

#[test]
fn double_sided_materials_draw_their_back_faces() {
    // seen from behind (eye at -z): culled when single-sided
    let lit = Material {
        base_color: Vec4::new(0.9, 0.9, 0.9, 1.0),
        metallic: 0.0,
        ..Default::default()
    };
    let f = render(vec![quad(0.0, Some(lit.clone()))], -2.0);
    assert_eq!(px(&f, W / 2, H / 2), [0, 0, 0, 255]);
    assert!(
        f.notes.iter().any(|n| n.contains("faced away")),
        "{:?}",
        f.notes
    );
    let two = Material {
        double_sided: true,
        ..lit
    };
    let back = render(vec![quad(0.0, Some(two.clone()))], -2.0);
    let front = render(vec![quad(0.0, Some(two))], 2.0);
    // the back is shaded with the flipped normal: lit like the front by a light on its side
    assert_ne!(px(&back, W / 2, H / 2), [0, 0, 0, 255]);
    assert!(px(&front, W / 2, H / 2)[0] > 0);
}

/// `scene` from its camera on both backends, with the model matrix `model` on every object.
fn render_placed(mut scene: Scene, model: glam::Mat4, size: (u32, u32)) -> rxpipe::Frame {
    for o in &mut scene.objects {
        o.transform = model;
    }
    on_both(|| Pipeline::builder().reindex(None), &scene, size, "placed")
}

#[test]
fn mirrored_objects_show_their_front_faces() {
    // a scene file's negative scale mirrors the object: its front faces wind clockwise on
    // screen, and must still be the ones drawn (culling and two-sided shading follow them)
    let mirror = glam::Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let lit = Material {
        base_color: Vec4::new(0.9, 0.9, 0.9, 1.0),
        metallic: 0.0,
        ..Default::default()
    };
    let mut scene = Scene::from_meshes("quad", vec![quad(0.0, Some(lit.clone()))]);
    scene.background = [0.0; 3];
    for (eye_z, shows) in [(2.0, true), (-2.0, false)] {
        scene.camera = on_axis(eye_z);
        let f = render_placed(scene.clone(), mirror, (W, H));
        assert_eq!(
            px(&f, W / 2, H / 2) != [0, 0, 0, 255],
            shows,
            "eye at z = {eye_z}"
        );
    }
    // two-sided, seen from the front: shaded with its own normal, as without the mirror
    let two = Material {
        double_sided: true,
        ..lit
    };
    scene.objects[0].mesh.material = Some(Arc::new(two));
    scene.camera.eye = Vec3::new(0.0, 0.0, 2.0);
    let plain = render_placed(scene.clone(), glam::Mat4::IDENTITY, (W, H));
    let mirrored = render_placed(scene, mirror, (W, H));
    assert_eq!(px(&mirrored, W / 2, H / 2), px(&plain, W / 2, H / 2));

    // a closed, lopsided mesh and its mirror image, seen from a camera on the mirror plane
    // with the light along the view: the frames are each other's mirror images (but for the
    // pixels on edges, where the snapped corners round differently), not the mesh's inside
    let mut m = rxpipe::mesh::icosphere(4);
    for p in &mut m.positions {
        p.x += 0.5 * p.y + 0.3 * p.z * p.z;
    }
    m.normals = None;
    let mut scene = Scene::from_meshes("lopsided", vec![m]);
    scene.camera = Camera {
        eye: Vec3::new(0.0, 0.4, 3.5),
        target: Vec3::new(0.0, 0.4, 0.0),
        up: Vec3::Y,
        fov_y: 50.0,
        near: 0.1,
        far: 100.0,
    };
    scene.light.direction = Vec3::NEG_Z;
    let (w, h) = (96u32, 64u32);
    let plain = render_placed(scene.clone(), glam::Mat4::IDENTITY, (w, h));
    let mirrored = render_placed(scene, mirror, (w, h));
    let (mut covered, mut depth_differ, mut colour_differ) = (0, 0, 0);
    for y in 0..h {
        for x in 0..w {
            let (a, b) = ((y * w + x) as usize, (y * w + (w - 1 - x)) as usize);
            covered += (plain.depth[a] < 1.0) as usize;
            depth_differ += ((plain.depth[a] - mirrored.depth[b]).abs() > 1e-4) as usize;
            let (ca, cb) = (
                &plain.color[4 * a..4 * a + 4],
                &mirrored.color[4 * b..4 * b + 4],
            );
            colour_differ += ca.iter().zip(cb).any(|(p, q)| p.abs_diff(*q) > 2) as usize;
        }
    }
    assert!(covered > 1000, "{covered} pixels covered");
    assert!(
        depth_differ * 50 < covered && colour_differ * 50 < covered,
        "of {covered} pixels, {depth_differ} differ in depth, {colour_differ} in colour"
    );
    let (p, q) = (plain.stats.raster.culled, mirrored.stats.raster.culled);
    assert!(p.abs_diff(q) * 100 < p, "culled {p} against {q}");
}

#[test]
fn alpha_masks_cut_out_and_blending_composites() {
    // left texels transparent, right opaque: a mask shows the square behind on the left
    let texels = [255, 255, 255, 0, 255, 255, 255, 255];
    let nearest = Sampler {
        mag: Filter::Nearest,
        min: Filter::Nearest,
        mipmap: None,
        ..Default::default()
    };
    let tex = Arc::new(Texture::new("half", 2, 1, &texels, true, nearest).unwrap());
    let masked = Material {
        base_color_texture: Some(TextureRef::new(tex)),
        alpha: AlphaMode::Mask(0.5),
        ..unlit(Vec4::ONE)
    };
    let behind = quad(-1.0, Some(unlit(Vec4::new(0.0, 0.0, 1.0, 1.0))));
    let f = render(vec![quad(0.0, Some(masked)), behind.clone()], 3.0);
    let (l, r) = (px(&f, W / 2 - 6, H / 2), px(&f, W / 2 + 6, H / 2));
    assert!(near(l, [0, 0, 255], 0), "the square behind shows: {l:?}");
    assert!(near(r, [255, 255, 255], 0), "{r:?}");
    // a half-transparent red square over the blue one: their mean in linear light
    let glass = Material {
        alpha: AlphaMode::Blend,
        ..unlit(Vec4::new(1.0, 0.0, 0.0, 0.5))
    };
    // submitted first, drawn after the opaque square all the same
    let f = render(vec![quad(0.0, Some(glass)), behind], 3.0);
    let c = px(&f, W / 2, H / 2);
    assert!(near(c, [srgb(0.5), 0, srgb(0.5)], 1), "{c:?}");
}

#[test]
fn masked_and_opaque_surfaces_at_one_depth_show_the_one_submitted_first() {
    // (the alpha-tested triangles are rasterised after the others; a depth tie still goes to
    // the triangle submitted first, as in one pass in submission order)
    let red = Material {
        alpha: AlphaMode::Mask(0.5),
        ..unlit(Vec4::new(1.0, 0.0, 0.0, 1.0))
    };
    let blue = || quad(0.0, Some(unlit(Vec4::new(0.0, 0.0, 1.0, 1.0))));
    let f = render(vec![quad(0.0, Some(red.clone())), blue()], 3.0);
    let c = px(&f, W / 2, H / 2);
    assert!(
        near(c, [255, 0, 0], 0),
        "the masked square, submitted first: {c:?}"
    );
    let f = render(vec![blue(), quad(0.0, Some(red))], 3.0);
    let c = px(&f, W / 2, H / 2);
    assert!(
        near(c, [0, 0, 255], 0),
        "the opaque square, submitted first: {c:?}"
    );
}

/// Each folder of `dir` that holds a glTF file: the folder's name and the file.
fn shared_scene_files(dir: &std::path::Path) -> Vec<(String, std::path::PathBuf)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let d = entry.unwrap().path();
        if let Some(file) = std::fs::read_dir(&d).ok().and_then(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.extension().is_some_and(|e| e == "gltf" || e == "glb"))
        }) {
            files.push((d.file_name().unwrap().to_string_lossy().to_string(), file));
        }
    }
    files
}

#[test]
fn shared_scenes_render_with_their_materials() {
    let Some(dir) = common::scenes() else {
        return;
    };
    let mut seen = 0;
    for (name, file) in shared_scene_files(&dir) {
        let scene = rxpipe::io::load_scene(&file).unwrap();
        assert!(
            scene.objects.iter().any(|o| o.mesh.material.is_some()),
            "{}",
            file.display()
        );
        let f = on_both(
            Pipeline::builder,
            &scene,
            (160, 90),
            &file.display().to_string(),
        );
        assert!(
            f.stats.raster.fragments > 200,
            "{}: {}",
            file.display(),
            f.stats
        );
        // what each scene is for shows in its colours
        let count = |pred: &dyn Fn([u8; 4]) -> bool| {
            f.color
                .chunks_exact(4)
                .filter(|c| pred([c[0], c[1], c[2], c[3]]))
                .count()
        };
        match name.as_str() {
            "VertexColorTest" => {
                // red, green and blue check marks drawn from vertex colours
                assert!(
                    count(&|c| c[0] > 150 && c[1] < 80 && c[2] < 80) > 20,
                    "{name}: red"
                );
                assert!(
                    count(&|c| c[1] > 150 && c[0] < 80 && c[2] < 80) > 20,
                    "{name}: green"
                );
            }
            "BoxTextured" => {
                // the texture's blue and green, not a white box
                assert!(count(&|c| c[2] > c[0] + 60) > 50, "{name}: blue texels");
                assert!(
                    count(&|c| c[1] > c[0] + 20 && c[1] > c[2] + 40) > 50,
                    "{name}: green texels"
                );
            }
            _ => {}
        }
        seen += 1;
    }
    if seen == 0 {
        eprintln!(
            "notice: no glTF scene in {}; nothing rendered",
            dir.display()
        );
    }
}

/// The project's own textured scene (scenes/textured, made by its make.py) brings its lights and
/// camera, and every material feature shows: textures, a normal map, emissive, a mask and a
/// blended pane.
#[test]
fn the_textured_scene_renders_with_its_lights_and_camera() {
    let scene = rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap();
    assert_eq!(scene.lights.len(), 2);
    assert!((scene.camera.eye - Vec3::new(0.0, 2.6, 6.0)).length() < 1e-4);
    let ms: Vec<&Material> = scene
        .objects
        .iter()
        .filter_map(|o| o.mesh.material.as_deref())
        .collect();
    assert_eq!(ms.len(), 6);
    assert!(ms.iter().any(|m| m.normal_texture.is_some()));
    assert!(ms.iter().any(|m| m.alpha == AlphaMode::Blend));
    assert!(ms.iter().any(|m| matches!(m.alpha, AlphaMode::Mask(_))));
    assert!(ms.iter().any(|m| m.emissive != Vec3::ZERO));
    let f = on_both(Pipeline::builder, &scene, (320, 180), "the textured scene");
    // the masks and the blended pane in the other shading modes (drawn as opaque there)
    for shading in [rxpipe::ShadingMode::Normals, rxpipe::ShadingMode::Depth] {
        on_both(
            || Pipeline::builder().shading(shading),
            &scene,
            (320, 180),
            &format!("the textured scene, {shading:?}"),
        );
    }
    // most of the frame is floor and objects
    assert!(f.stats.raster.fragments > 320 * 180 / 2, "{}", f.stats);
    assert!(f.notes.iter().all(|n| !n.contains("nothing was drawn")));
}

/// The CPU's fragment stage has two builds, the baseline x86-64 one and, chosen at run time on a
/// CPU that has it, an x86-64-v3 one (AVX2, FMA): they must give the same bytes, on the project's
/// textured scene and on every shared scene (at Sponza's own camera, every material path:
/// textures, normal maps, masks and blending). On a CPU without x86-64-v3 both frames come from
/// the baseline build, and the test says so.
#[test]
fn the_fragment_stages_two_builds_give_the_same_bytes() {
    let mut files = vec![std::path::PathBuf::from("scenes/textured/textured.gltf")];
    if let Some(dir) = common::scenes() {
        files.extend(shared_scene_files(&dir).into_iter().map(|(_, f)| f));
    }
    if rxpipe::raster::fragment_isa() != "x86-64-v3" {
        eprintln!("notice: this CPU has no x86-64-v3; both frames come from the baseline build");
    }
    let r = Renderer::new(Backend::Cpu).unwrap();
    for file in &files {
        let scene = rxpipe::io::load_scene(file).unwrap();
        let camera = scene.camera;
        let mut p = Pipeline::builder().build(&r).unwrap();
        let wide = p.render(&scene, &camera, (320, 180)).unwrap();
        p.baseline_isa = true;
        let base = p.render(&scene, &camera, (320, 180)).unwrap();
        assert!(wide.stats.raster.fragments > 200, "{}", file.display());
        let (differ, _) = common::compare(&wide.color, &base.color);
        assert_eq!(differ, 0, "{}: pixels that differ", file.display());
        assert_eq!(wide.depth, base.depth, "{}", file.display());
    }
}

/// PLY (uchar red/green/blue) and OBJ (`v x y z r g b`) vertex colours are read as display
/// colours and draw through a plain material.
#[test]
fn ply_and_obj_vertex_colours_show() {
    let dir = common::tmp_dir("vertex-colours");
    let ply = dir.join("c.ply");
    std::fs::write(
        &ply,
        "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n\
         property uchar red\nproperty uchar green\nproperty uchar blue\nelement face 2\n\
         property list uchar int vertex_indices\nend_header\n\
         -1 -1 0 255 0 0\n1 -1 0 255 0 0\n1 1 0 255 0 0\n-1 1 0 255 0 0\n3 0 1 2\n3 0 2 3\n",
    )
    .unwrap();
    let obj = dir.join("c.obj");
    std::fs::write(
        &obj,
        "v -1 -1 0 0 0 1\nv 1 -1 0 0 0 1\nv 1 1 0 0 0 1\nv -1 1 0 0 0 1\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    for (file, want) in [(ply, 0), (obj, 2)] {
        let m = rxpipe::io::load_mesh(&file).unwrap();
        let c = m.colors.as_ref().expect("colours read");
        assert_eq!(c.len(), 4);
        assert!(
            (c[0][want] - 1.0).abs() < 1e-6,
            "{}: {:?}",
            file.display(),
            c[0]
        );
        let f = render(
            vec![
                rxpipe::io::load_scene(&file)
                    .unwrap()
                    .objects
                    .remove(0)
                    .mesh,
            ],
            2.0,
        );
        let p = px(&f, W / 2, H / 2);
        let other = (want + 1) % 3;
        assert!(p[want] > 100 && p[other] < 40, "{}: {p:?}", file.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A square like `quad` made of n x n cells of two triangles each.
fn dense_quad(z: f32, n: usize, material: Material) -> Mesh {
    let mut m = Mesh {
        name: "dense quad".into(),
        material: Some(Arc::new(material)),
        ..Default::default()
    };
    let (mut positions, mut uvs) = (Vec::new(), Vec::new());
    for j in 0..=n {
        for i in 0..=n {
            let (u, v) = (i as f32 / n as f32, j as f32 / n as f32);
            positions.push(Vec3::new(2.0 * u - 1.0, 1.0 - 2.0 * v, z));
            uvs.push(Vec2::new(u, v));
        }
    }
    let at = |i: usize, j: usize| (j * (n + 1) + i) as u32;
    for j in 0..n {
        for i in 0..n {
            let (a, b, c, d) = (at(i, j + 1), at(i + 1, j + 1), at(i + 1, j), at(i, j));
            m.indices.extend_from_slice(&[a, b, c, a, c, d]);
        }
    }
    m.normals = Some(vec![Vec3::Z; positions.len()]);
    m.positions = positions;
    m.uvs = Some(uvs);
    m
}

#[test]
fn tiles_dense_enough_to_split_draw_what_one_pass_would() {
    // thousands of triangles over the frame's four tiles: the GPU splits a tile with that many
    // records over several blocks (RXP_SPLIT_RECORDS), which merge their depth keys; the frame
    // must still be the CPU's to the depth bit. An alpha mask (a checker of holes) through which
    // a second dense layer shows exercises the alpha-tested pass of each slice.
    let nearest = Sampler {
        mag: Filter::Nearest,
        min: Filter::Nearest,
        mipmap: None,
        ..Default::default()
    };
    let checker: Vec<u8> = (0..16)
        .flat_map(|k| {
            let open = (k % 4 + k / 4) % 2 == 0;
            [255, 200, 40, if open { 0 } else { 255 }]
        })
        .collect();
    let tex = Arc::new(Texture::new("checker", 4, 4, &checker, true, nearest).unwrap());
    let masked = Material {
        base_color_texture: Some(TextureRef::new(tex)),
        alpha: AlphaMode::Mask(0.5),
        ..Default::default()
    };
    let behind = Material {
        base_color: Vec4::new(0.1, 0.3, 1.0, 1.0),
        ..Default::default()
    };
    let front = dense_quad(0.0, 48, masked);
    assert_eq!(front.indices.len() / 3, 48 * 48 * 2);
    let f = render(vec![front, dense_quad(-0.5, 48, behind)], 1.8);
    // a hole of the checker's top-left cell shows the blue layer behind; its neighbour is yellow
    let (hole, cell) = (px(&f, W / 8, H / 8), px(&f, W / 8 + W / 4, H / 8));
    assert!(
        hole[2] > hole[0],
        "the layer behind shows through a hole: {hole:?}"
    );
    assert!(cell[0] > cell[2], "the masked layer's texel: {cell:?}");
}

#[test]
fn obj_files_draw_with_their_mtl_materials() {
    // two squares side by side: the left one red by its Kd, the right one textured by map_Kd
    // with a 1x2 image, green above blue (the image's first row is its top; OBJ's v points up)
    let dir = common::tmp_dir("obj-mtl");
    rxpipe::image::save(
        &dir.join("tex.png"),
        1,
        2,
        &[0, 255, 0, 255, 0, 0, 255, 255],
    )
    .unwrap();
    std::fs::write(
        dir.join("lib.mtl"),
        "newmtl red\nKd 1 0 0\nNs 10\n\
         newmtl tex\nKd 1 1 1\nmap_Kd -s 1 1 1 tex.png\nmap_Bump bump.png\nPr 0.25\nPm 0\n\
         newmtl lost\nmap_Kd missing.png\n",
    )
    .unwrap();
    let obj = dir.join("two.obj");
    std::fs::write(
        &obj,
        "mtllib lib.mtl\n\
         v -2 -1 0\nv 0 -1 0\nv 0 1 0\nv -2 1 0\nv 2 -1 0\nv 2 1 0\n\
         vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\n\
         usemtl red\nf 1/1/1 2/2/1 3/3/1\nf 1/1/1 3/3/1 4/4/1\n\
         usemtl tex\nf 2/1/1 5/2/1 6/3/1\nf 2/1/1 6/3/1 3/4/1\n\
         usemtl lost\nusemtl nowhere\nf 4/1/1 3/2/1 6/3/1\n",
    )
    .unwrap();
    let scene = rxpipe::io::load_scene(&obj).unwrap();
    // one object per material; the triangle of the undefined material on its own
    let names: Vec<&str> = scene.objects.iter().map(|o| o.mesh.name.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names[0].ends_with(": red") && names[1].ends_with(": tex"),
        "{names:?}"
    );
    let said = |what: &str| scene.notes.iter().any(|n| n.contains(what));
    assert!(
        said("map_Bump is not drawn (used by 'tex')"),
        "{:?}",
        scene.notes
    );
    assert!(
        said("'nowhere' names a material no library defines"),
        "{:?}",
        scene.notes
    );
    assert!(
        !said("missing.png"),
        "an unused material is not made: {:?}",
        scene.notes
    );
    for f in ["lib.mtl", "tex.png", "bump.png", "missing.png"] {
        assert!(
            scene.sources.iter().any(|s| s.ends_with(f)),
            "{f} is an input: {:?}",
            scene.sources
        );
    }
    let material = |k: usize| scene.objects[k].mesh.material.clone().unwrap();
    // roughness from Ns (a Blinn-Phong exponent of 10), and from the PBR extension's Pr
    assert!((material(0).roughness - (2.0f32 / 12.0).powf(0.25)).abs() < 1e-6);
    assert_eq!((material(1).roughness, material(1).metallic), (0.25, 0.0));
    let meshes: Vec<Mesh> = scene.objects.into_iter().take(2).map(|o| o.mesh).collect();
    let f = render(meshes, 2.0);
    let left = px(&f, W / 4, H / 2);
    assert!(
        left[0] > 100 && left[1] < 40 && left[2] < 40,
        "red: {left:?}"
    );
    let (top, bottom) = (px(&f, 3 * W / 4, H / 4), px(&f, 3 * W / 4, 3 * H / 4));
    // (bilinear filtering blends the two texels a little)
    assert!(top[1] > 100 && top[1] > 2 * top[2], "green above: {top:?}");
    assert!(
        bottom[2] > 100 && bottom[2] > 2 * bottom[1],
        "blue below: {bottom:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gltf_specular_glossiness_materials_are_converted_to_metallic_roughness() {
    let mut g = common::textured_json();
    let named = common::gltf_material;
    let (bricks, metal) = (named(&g, "bricks"), named(&g, "metal"));
    // the bricks: their texture as the diffuse one, a dielectric's specular, glossiness 0.1
    // (the roughness they had); the metal: a gold specular over a black diffuse. Each keeps a
    // metallic-roughness block that says otherwise, which the extension overrides.
    g["materials"][bricks]["extensions"] = serde_json::json!({
        "KHR_materials_pbrSpecularGlossiness": {
            "diffuseTexture": {"index": 1},
            "specularFactor": [0.04, 0.04, 0.04],
            "glossinessFactor": 0.1
        }
    });
    g["materials"][bricks]["pbrMetallicRoughness"] = serde_json::json!({"metallicFactor": 1.0});
    g["materials"][metal]["extensions"] = serde_json::json!({
        "KHR_materials_pbrSpecularGlossiness": {
            "diffuseFactor": [0.0, 0.0, 0.0, 1.0],
            "specularFactor": [0.95, 0.8, 0.5],
            "glossinessFactor": 0.7
        }
    });
    g["extensionsUsed"] = serde_json::json!(["KHR_materials_pbrSpecularGlossiness"]);
    let p = common::tmp_dir("spec-gloss").join("spec-gloss.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let scene = rxpipe::io::load_scene(&p).unwrap();
    assert_eq!(scene.notes.len(), 1, "{:?}", scene.notes);
    assert!(
        scene.notes[0].contains("converted to metallic-roughness"),
        "{:?}",
        scene.notes
    );
    let material = common::scene_material;
    let m = material(&scene, "metal");
    assert!(m.metallic > 0.99, "{m:?}");
    assert!((m.roughness - 0.3).abs() < 1e-5);
    assert!(
        m.base_color
            .truncate()
            .abs_diff_eq(glam::Vec3::new(0.95, 0.8, 0.5), 1e-3),
        "{:?}",
        m.base_color
    );
    assert!(m.base_color_texture.is_none() && m.metallic_roughness_texture.is_none());
    // the bricks' converted textures: their own colours (a dielectric) at their own size,
    // roughness 0.9 and metallic 0 everywhere
    let b = material(&scene, "bricks");
    let original = material(
        &rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap(),
        "bricks",
    );
    let (was, now) = (
        &original.base_color_texture.as_ref().unwrap().texture.levels[0],
        &b.base_color_texture.as_ref().unwrap().texture.levels[0],
    );
    assert_eq!((now.width, now.height), (was.width, was.height));
    let off = was
        .texels
        .iter()
        .zip(&now.texels)
        .flat_map(|(a, b)| (0..4).map(move |c| a[c].abs_diff(b[c])))
        .max()
        .unwrap();
    assert!(off <= 1, "base colour texels differ by up to {off}");
    let mr = &b
        .metallic_roughness_texture
        .as_ref()
        .unwrap()
        .texture
        .levels[0];
    assert!(
        mr.texels.iter().all(|t| t[1] == 230 && t[2] == 0),
        "{:?}",
        &mr.texels[..4]
    );
    assert_eq!(
        (b.metallic, b.roughness, b.base_color),
        (1.0, 1.0, glam::Vec4::ONE)
    );
    assert!(b.normal_texture.is_some());
    // drawn (on both backends), the scene looks as it did: the gold metal and the bricks'
    // dielectric convert to what the file's metallic-roughness materials said
    let frame = |s: &Scene| on_both(Pipeline::builder, s, (160, 120), "specular-glossiness");
    let original = frame(&rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap());
    let converted = frame(&scene);
    let differing = original
        .color
        .chunks(4)
        .zip(converted.color.chunks(4))
        .filter(|(x, y)| x.iter().zip(y.iter()).any(|(p, q)| p.abs_diff(*q) > 2))
        .count();
    assert!(differing < 20, "{differing} pixels differ");
}

#[test]
fn dielectric_specular_follows_the_index_of_refraction_and_the_specular_extension() {
    // the loader: KHR_materials_ior and KHR_materials_specular's factors, on the textured
    // scene's floor; the bricks' specular texture is left out with a note
    let mut g = common::textured_json();
    let named = common::gltf_material;
    let (floor, bricks) = (named(&g, "floor"), named(&g, "bricks"));
    g["materials"][floor]["extensions"] = serde_json::json!({
        "KHR_materials_ior": {"ior": 3.0},
        "KHR_materials_specular": {"specularFactor": 0.5, "specularColorFactor": [1.0, 0.5, 8.0]}
    });
    g["materials"][bricks]["extensions"] = serde_json::json!({
        "KHR_materials_specular": {"specularTexture": {"index": 0}}
    });
    g["extensionsUsed"] = serde_json::json!(["KHR_materials_ior", "KHR_materials_specular"]);
    let p = common::tmp_dir("dielectric-specular").join("specular.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let scene = rxpipe::io::load_scene(&p).unwrap();
    let material = |n: &str| common::scene_material(&scene, n);
    // ((3 - 1) / (3 + 1))^2 = 0.25, times the colour, at most 1
    let f = material("floor");
    assert!(
        f.specular_f0.abs_diff_eq(Vec3::new(0.25, 0.125, 1.0), 1e-6),
        "{:?}",
        f.specular_f0
    );
    assert_eq!(f.specular_weight, 0.5);
    assert_eq!(material("bricks").specular_f0, Vec3::splat(0.04));
    assert_eq!(scene.notes.len(), 1, "{:?}", scene.notes);
    assert!(scene.notes[0].contains("'bricks'") && scene.notes[0].contains("specular textures"));
    // a negative index of refraction is an error naming the material
    g["materials"][floor]["extensions"]["KHR_materials_ior"]["ior"] = serde_json::json!(-2.0);
    std::fs::write(&p, g.to_string()).unwrap();
    let e = rxpipe::io::load_scene(&p)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("material {floor}")) && e.contains("ior"),
        "{e}"
    );

    // the shading, on both backends: a grey dielectric sphere's highlight grows with its
    // reflectance at normal incidence and goes with a specular weight of 0
    let sphere = |f0: f32, weight: f32| {
        sphere_of(Material {
            base_color: Vec4::new(0.3, 0.3, 0.3, 1.0),
            metallic: 0.0,
            roughness: 0.5,
            specular_f0: Vec3::splat(f0),
            specular_weight: weight,
            ..Default::default()
        })
    };
    let plain = brightest(&sphere(0.04, 1.0));
    let (glassy, matte) = (brightest(&sphere(0.25, 1.0)), brightest(&sphere(0.04, 0.0)));
    assert!(
        glassy > plain + 30 && plain > matte + 30,
        "{matte} {plain} {glassy}"
    );
}

#[test]
fn gltf_webp_textures_are_read_through_ext_texture_webp() {
    // the bricks' base colour image, re-encoded as a lossless WebP: the texture names it in
    // EXT_texture_webp, with no core source (the extension required), or with another image as
    // the fallback that viewers without WebP read
    let original = common::textured_json();
    let bricks = common::gltf_material(&original, "bricks");
    let texture = original["materials"][bricks]["pbrMetallicRoughness"]["baseColorTexture"]["index"]
        .as_u64()
        .unwrap() as usize;
    let image = original["textures"][texture]["source"].as_u64().unwrap() as usize;
    let uri = original["images"][image]["uri"].as_str().unwrap();
    let png = base64::decode(uri.split_once(";base64,").unwrap().1).unwrap();
    let rgba = image::load_from_memory(&png).unwrap().to_rgba8();
    let mut webp = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut webp)
        .encode(
            &rgba,
            rgba.width(),
            rgba.height(),
            image::ExtendedColorType::Rgba8,
        )
        .unwrap();
    let uri = format!("data:image/webp;base64,{}", base64::encode(&webp));
    let was = rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap();
    let texels = |s: &Scene| {
        common::scene_material(s, "bricks")
            .base_color_texture
            .as_ref()
            .unwrap()
            .texture
            .levels[0]
            .texels
            .clone()
    };
    for fallback in [None, Some(0)] {
        let mut g = original.clone();
        let webp_image = g["images"].as_array().unwrap().len();
        g["images"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"uri": uri, "mimeType": "image/webp"}));
        let t = &mut g["textures"][texture];
        t["extensions"] = serde_json::json!({"EXT_texture_webp": {"source": webp_image}});
        match fallback {
            Some(f) => t["source"] = serde_json::json!(f),
            None => {
                t.as_object_mut().unwrap().remove("source");
                g["extensionsRequired"] = serde_json::json!(["EXT_texture_webp"]);
            }
        }
        g["extensionsUsed"] = serde_json::json!(["EXT_texture_webp"]);
        let p = common::tmp_dir("webp").join("webp.gltf");
        std::fs::write(&p, g.to_string()).unwrap();
        let scene = rxpipe::io::load_scene(&p).unwrap();
        assert!(scene.notes.is_empty(), "{:?}", scene.notes);
        assert!(texels(&scene) == texels(&was), "fallback {fallback:?}");
        let frame = |s: &Scene| on_both(Pipeline::builder, s, (160, 120), "webp");
        assert_eq!(frame(&scene).color, frame(&was).color);
    }
    // a texture with neither source is an error naming it
    let mut g = original.clone();
    g["textures"][texture]
        .as_object_mut()
        .unwrap()
        .remove("source");
    let p = common::tmp_dir("webp").join("no-source.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let e = rxpipe::io::load_scene(&p).unwrap_err().to_string();
    assert!(
        e.contains(&format!("texture {texture}: has no source image")),
        "{e}"
    );
}

#[test]
fn clear_coats_add_a_sharp_highlight_on_both_backends() {
    // the loader: KHR_materials_clearcoat's factors on the textured scene's floor; its texture
    // is left out with a note, and a factor past 1 is an error naming the material
    let mut g = common::textured_json();
    let floor = common::gltf_material(&g, "floor");
    g["materials"][floor]["extensions"] = serde_json::json!({
        "KHR_materials_clearcoat": {"clearcoatFactor": 0.75, "clearcoatRoughnessFactor": 0.25,
                                    "clearcoatTexture": {"index": 0}}
    });
    g["extensionsUsed"] = serde_json::json!(["KHR_materials_clearcoat"]);
    let p = common::tmp_dir("clearcoat").join("clearcoat.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let scene = rxpipe::io::load_scene(&p).unwrap();
    let f = common::scene_material(&scene, "floor");
    assert_eq!((f.clearcoat, f.clearcoat_roughness), (0.75, 0.25));
    assert_eq!(common::scene_material(&scene, "bricks").clearcoat, 0.0);
    assert_eq!(scene.notes.len(), 1, "{:?}", scene.notes);
    assert!(scene.notes[0].contains("clearcoat textures are left out"));
    // drawn on both backends (on_both compares them)
    let frame = |s: &Scene| on_both(Pipeline::builder, s, (160, 120), "clear coat");
    let was = rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap();
    assert_ne!(frame(&scene).color, frame(&was).color);
    g["materials"][floor]["extensions"]["KHR_materials_clearcoat"]["clearcoatFactor"] =
        serde_json::json!(1.5);
    std::fs::write(&p, g.to_string()).unwrap();
    let e = rxpipe::io::load_scene(&p)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("material {floor}")) && e.contains("clearcoatFactor is 1.5"),
        "{e}"
    );

    // the shading: a rough dark sphere gains a sharp highlight under a smooth coat, a coat of
    // strength 0 changes no byte, and the coat dims the sphere's glow at its rim (its Fresnel
    // term grows towards grazing angles)
    let sphere = |coat: f32, emissive: f32| {
        sphere_of(Material {
            base_color: Vec4::new(0.05, 0.05, 0.05, 1.0),
            metallic: 0.0,
            roughness: 0.9,
            emissive: Vec3::splat(emissive),
            clearcoat: coat,
            clearcoat_roughness: 0.1,
            ..Default::default()
        })
    };
    let (bare, coated) = (sphere(0.0, 0.0), sphere(1.0, 0.0));
    assert!(
        brightest(&coated) > brightest(&bare) + 150,
        "{} {}",
        brightest(&bare),
        brightest(&coated)
    );
    let mut none = common::textured_json();
    none["materials"][floor]["extensions"] =
        serde_json::json!({"KHR_materials_clearcoat": {"clearcoatFactor": 0.0}});
    std::fs::write(&p, none.to_string()).unwrap();
    assert_eq!(
        frame(&rxpipe::io::load_scene(&p).unwrap()).color,
        frame(&was).color
    );
    // the glow at the rim: the outermost lit pixel of the middle row, against the centre's
    let (glow, glow_coated) = (sphere(0.0, 0.5), sphere(1.0, 0.5));
    let row = |f: &rxpipe::Frame| {
        let y = f.height / 2;
        let px = |x: u32| px(f, x, y);
        let rim = (0..f.width / 2).find(|&x| px(x)[0] > 0).unwrap();
        (px(rim)[0], px(f.width / 2)[0])
    };
    let ((rim, centre), (rim_c, centre_c)) = (row(&glow), row(&glow_coated));
    assert!(
        (rim as f32 / centre as f32) > (rim_c as f32 / centre_c as f32) + 0.05,
        "bare {rim}/{centre}, coated {rim_c}/{centre_c}"
    );
}
