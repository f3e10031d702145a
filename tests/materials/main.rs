//! Materials and textures (CPU reference): unlit colours, vertex colours, texture samplers,
//! double-sided faces, alpha masks and blending, on small scenes built here whose pixels are known,
//! and every shared glTF scene rendered (skipped with a notice when ../shared/scenes is absent).
//! Where there is a GPU, every frame is drawn by the CUDA backend too and must agree with the
//! CPU's (common::assert_frames_agree); with RXPIPE_REQUIRE_GPU=1 a missing GPU fails.

#[path = "../common/mod.rs"]
mod common;
mod extensions;

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
                // (in u16: a bright channel plus the margin passes 255)
                let w = |c: [u8; 4], k: usize| c[k] as u16;
                assert!(
                    count(&|c| w(c, 2) > w(c, 0) + 60) > 50,
                    "{name}: blue texels"
                );
                assert!(
                    count(&|c| w(c, 1) > w(c, 0) + 20 && w(c, 1) > w(c, 2) + 40) > 50,
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
