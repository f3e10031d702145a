//! Patches in the frame: the patch strategy of the geometry stage and the per-patch culling stage,
//! on the CPU and (when there is one) the GPU. Both must leave the image exactly as it is without
//! them; the patch strategy shades each patch's vertex list once.

mod common;

use glam::{Mat4, Vec3};
use rxpipe::geometry::PatchBatches;
use rxpipe::scene::Camera;
use rxpipe::{Backend, CullMode, Pipeline, Renderer, Scene, Strategy, VertexOrder};

/// The renderers to check: the CPU, and CUDA when a GPU is there.
fn renderers() -> Vec<Renderer> {
    let mut v = vec![Renderer::new(Backend::Cpu).unwrap()];
    if common::gpu().is_some() {
        v.push(Renderer::new(Backend::Cuda).unwrap());
    }
    v
}

/// A sphere, a torus turned and moved aside, and the bunny when the shared meshes are there.
fn scene() -> Scene {
    let mut meshes = vec![rxpipe::mesh::icosphere(5)];
    let mut t = rxpipe::mesh::torus(1.0, 0.3, 96, 48);
    t.transform(Mat4::from_translation(Vec3::new(2.2, 0.0, -1.0)) * Mat4::from_rotation_x(1.0));
    meshes.push(t);
    if let Some(dir) = common::meshes() {
        let mut b = rxpipe::io::load_mesh(dir.join("stanford-bunny.obj")).unwrap();
        b.transform(
            Mat4::from_translation(Vec3::new(-2.2, -1.0, 0.0))
                * Mat4::from_scale(Vec3::splat(12.0)),
        );
        meshes.push(b);
    }
    let mut s = Scene::from_meshes("patches", meshes);
    s.camera = Camera {
        eye: Vec3::new(0.5, 1.5, 6.0),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 50.0,
        near: 0.1,
        far: 100.0,
    };
    s
}

fn render(r: &Renderer, b: rxpipe::PipelineBuilder, scene: &Scene, cam: &Camera) -> rxpipe::Frame {
    let p = b.build(r).unwrap();
    let prepared = p.prepare(scene).unwrap();
    p.render_prepared(&prepared, scene, cam, (320, 200), 0.0)
        .unwrap()
}

#[test]
fn patch_strategy_draws_what_hashing_draws_and_shades_each_list_once() {
    let scene = scene();
    // the lists the patch order makes, mesh by mesh
    let mut lists = 0u64;
    for o in &scene.objects {
        let mut m = o.mesh.clone();
        let p = VertexOrder::Patch(512).arrange(&mut m).unwrap();
        let b = PatchBatches::build(&m.indices, m.vertex_count(), &p.patch_of_face).unwrap();
        assert!(
            b.face_start.is_some(),
            "the patch order makes contiguous patches"
        );
        lists += b.invocations() as u64;
    }
    for r in renderers() {
        // (re-indexing off: the patches are those of the meshes as given)
        let base = || Pipeline::builder().default_stages(false).reindex(None);
        let patch = render(&r, base().strategy(Strategy::Patch), &scene, &scene.camera);
        let hash = render(
            &r,
            base()
                .strategy(Strategy::parse("hash").unwrap())
                .order(VertexOrder::Patch(512)),
            &scene,
            &scene.camera,
        );
        let what = r.kind();
        assert_eq!(patch.color, hash.color, "{what}: the images differ");
        assert_eq!(patch.depth, hash.depth, "{what}");
        assert_eq!(patch.stats.strategy, "patch");
        assert_eq!(patch.stats.geometry.invocations, lists, "{what}");
        assert_eq!(
            patch.stats.geometry.triangles,
            hash.stats.geometry.triangles
        );
        assert!(
            patch.stats.geometry.asr() < hash.stats.geometry.asr(),
            "{what}"
        );
    }
}

#[test]
fn the_patch_strategy_takes_the_patch_order_and_refuses_others() {
    let r = Renderer::new(Backend::Cpu).unwrap();
    let p = Pipeline::builder()
        .strategy(Strategy::Patch)
        .build(&r)
        .unwrap();
    assert_eq!(p.order, VertexOrder::Patch(512));
    let e = Pipeline::builder()
        .strategy(Strategy::Patch)
        .order(VertexOrder::Forsyth)
        .build(&r)
        .err()
        .expect("forsyth order with the patch strategy");
    assert!(e.to_string().contains("patch order"), "{e}");
    // a scene prepared for hashing cannot be drawn with patches
    let scene = scene();
    let hash = Pipeline::builder()
        .order(VertexOrder::Patch(512))
        .build(&r)
        .unwrap();
    let prepared = hash.prepare(&scene).unwrap();
    let patch = Pipeline::builder()
        .strategy(Strategy::Patch)
        .build(&r)
        .unwrap();
    let e = patch
        .render_prepared(&prepared, &scene, &scene.camera, (32, 32), 0.0)
        .unwrap_err();
    assert!(e.to_string().contains("prepare it again"), "{e}");
}

/// Per-patch culling on and off, for a camera, a cull mode and a strategy: the images must be
/// identical; returns the triangles the stage culled.
fn culling_keeps_the_image(
    r: &Renderer,
    scene: &Scene,
    cam: &Camera,
    cull: CullMode,
    s: Strategy,
) -> u64 {
    let base = || {
        Pipeline::builder()
            .strategy(s)
            .order(VertexOrder::Patch(512))
            .cull(cull)
    };
    let on = render(r, base(), scene, cam);
    let off = render(r, base().default_stages(false), scene, cam);
    let what = format!("{} {cull:?} {s} eye {}", r.kind(), cam.eye);
    let st = on
        .stats
        .stages
        .iter()
        .find(|s| s.stage == "patch-cull")
        .unwrap_or_else(|| panic!("{what}: no patch-cull stage in {:?}", on.stats.stages));
    let (differ, _) = common::compare(&on.color, &off.color);
    assert_eq!(differ, 0, "{what}: {differ} pixels differ");
    assert_eq!(on.depth, off.depth, "{what}");
    let culled = st.culled_triangles;
    assert_eq!(
        on.stats.geometry.triangles + culled + frustum_culled(&on),
        off.stats.geometry.triangles,
        "{what}"
    );
    culled
}

fn frustum_culled(f: &rxpipe::Frame) -> u64 {
    f.stats
        .stages
        .iter()
        .filter(|s| s.stage == "frustum")
        .map(|s| s.culled_triangles)
        .sum()
}

#[test]
fn patch_culling_keeps_the_image_and_counts_what_it_culled() {
    let mut scene = scene();
    // one object mirrored: its front faces wind the other way on screen
    scene.objects[1].transform = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let total: u64 = scene
        .objects
        .iter()
        .map(|o| o.mesh.triangle_count() as u64)
        .sum();
    let close = Camera {
        eye: Vec3::new(0.3, 0.4, 1.25),
        ..scene.camera
    };
    let side = Camera {
        eye: Vec3::new(6.0, 0.5, 0.5),
        ..scene.camera
    };
    for r in renderers() {
        for s in [Strategy::Patch, Strategy::parse("phash").unwrap()] {
            // back faces: half of every closed object faces away, and the cones of 512-face
            // patches, each spanning tens of degrees of normals, find a good part of that half
            let back = culling_keeps_the_image(&r, &scene, &scene.camera, CullMode::Back, s);
            assert!(
                back > total / 8,
                "{} {s}: only {back} of {total} triangles culled",
                r.kind()
            );
            let front = culling_keeps_the_image(&r, &scene, &scene.camera, CullMode::Front, s);
            assert!(front > total / 8, "{} {s}: front faces {front}", r.kind());
            // no face culling: only patches outside the view go, and from afar there are none
            let none = culling_keeps_the_image(&r, &scene, &scene.camera, CullMode::None, s);
            assert_eq!(none, 0);
            // close up, much of the scene is outside the view
            let near = culling_keeps_the_image(&r, &scene, &close, CullMode::None, s);
            assert!(near > 0, "{} {s}: nothing outside the close view", r.kind());
            culling_keeps_the_image(&r, &scene, &close, CullMode::Back, s);
            culling_keeps_the_image(&r, &scene, &side, CullMode::Back, s);
        }
    }
}

/// The distinct colours of a frame's pixels other than the background.
fn colours(f: &rxpipe::Frame) -> std::collections::HashSet<[u8; 4]> {
    let bg = [f.color[0], f.color[1], f.color[2], f.color[3]];
    f.color
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .filter(|c| *c != bg)
        .collect()
}

#[test]
fn patch_shading_gives_each_patch_its_colour_and_shows_the_ribbons() {
    use rxpipe::ShadingMode;
    // a flat grid seen head-on, lit evenly, in 8 patches of at most 32 faces: every pixel's
    // colour is its patch's (or the paler ribbon's), with no other shading in between
    let grid = rxpipe::mesh::grid(8, 16);
    let faces = grid.triangle_count();
    let mut scene = Scene::from_meshes("grid", vec![grid.clone()]);
    scene.camera = Camera {
        eye: Vec3::new(0.0, 2.2, 0.0),
        target: Vec3::ZERO,
        up: Vec3::Z,
        fov_y: 60.0,
        near: 0.1,
        far: 10.0,
    };
    scene.light.direction = Vec3::new(0.0, -1.0, 0.0);
    let mut m = grid.clone();
    let patching = VertexOrder::Patch(32).arrange(&mut m).unwrap();
    let n = patching.len();
    assert!(n >= faces / 32, "{n} patches");
    let ribbon = patching.in_ribbons(&m.indices);
    let mut want = std::collections::HashSet::new();
    for (f, &p) in patching.patch_of_face.iter().enumerate() {
        let c = rxpipe::color::patch_value_color(rxpipe::color::patch_value(p, ribbon[f]));
        want.insert(rxpipe::color::pack_srgb(c).to_le_bytes());
    }
    assert!(ribbon.iter().any(|&r| r) && !ribbon.iter().all(|&r| r));
    let mut frames = Vec::new();
    for r in renderers() {
        let p = Pipeline::builder()
            .order(VertexOrder::Patch(32))
            .shading(ShadingMode::Patches)
            .cull(CullMode::None)
            .reindex(None)
            .build(&r)
            .unwrap();
        let prepared = p.prepare(&scene).unwrap();
        let f = p
            .render_prepared(&prepared, &scene, &scene.camera, (256, 256), 0.0)
            .unwrap();
        let what = r.kind();
        // each pixel's colour is a patch's, up to one step of rounding (the light is 1 only
        // to float precision)
        let near = |a: &[u8; 4], b: &[u8; 4]| a.iter().zip(b).all(|(x, y)| x.abs_diff(*y) <= 1);
        let mut seen = std::collections::HashSet::new();
        for c in colours(&f) {
            let w = want.iter().find(|w| near(w, &c));
            let w = w.unwrap_or_else(|| panic!("{what}: colour {c:?} is no patch's"));
            seen.insert(*w);
        }
        // every patch and ribbon colour is on screen (each patch has both kinds of face)
        assert_eq!(seen.len(), want.len(), "{what}");
        frames.push(f);
    }
    if let [cpu, gpu] = &frames[..] {
        assert_eq!(
            cpu.color, gpu.color,
            "the GPU's patch colours differ from the CPU's"
        );
    }
}

#[test]
fn patch_shading_works_in_any_order_and_keeps_the_culled_image() {
    use rxpipe::ShadingMode;
    let scene = scene();
    for r in renderers() {
        // any order: the patches are made for the mode
        let p = Pipeline::builder()
            .shading(ShadingMode::Patches)
            .build(&r)
            .unwrap();
        let f = render(
            &r,
            Pipeline::builder().shading(ShadingMode::Patches),
            &scene,
            &scene.camera,
        );
        assert!(p.layout().patch_colors);
        assert!(
            colours(&f).len() > 50,
            "{}: {} colours",
            r.kind(),
            colours(&f).len()
        );
        // per-patch culling draws subsets, which keep their triangles' colours
        let base = || {
            Pipeline::builder()
                .shading(ShadingMode::Patches)
                .order(VertexOrder::Patch(512))
        };
        let on = render(&r, base(), &scene, &scene.camera);
        let off = render(&r, base().default_stages(false), &scene, &scene.camera);
        assert!(on
            .stats
            .stages
            .iter()
            .any(|s| s.stage == "patch-cull" && s.culled_triangles > 0));
        assert_eq!(on.color, off.color, "{}", r.kind());
        // a scene prepared without the colours must be prepared again
        let lit = Pipeline::builder().build(&r).unwrap();
        let prepared = lit.prepare(&scene).unwrap();
        assert!(!p.is_prepared_for(&prepared));
    }
}

#[test]
fn the_patch_cull_stage_follows_the_order_set_at_run_time() {
    let r = Renderer::new(Backend::Cpu).unwrap();
    let mut p = Pipeline::builder().build(&r).unwrap();
    assert_eq!(p.frame_stage_names(), ["frustum"]);
    p.order = VertexOrder::Patch(512);
    assert_eq!(p.frame_stage_names(), ["frustum", "patch-cull"]);
    let scene = scene();
    let prepared = p.prepare(&scene).unwrap();
    let f = p
        .render_prepared(&prepared, &scene, &scene.camera, (160, 100), 0.0)
        .unwrap();
    assert!(f.stats.stages.iter().any(|s| s.stage == "patch-cull"));
    p.order = VertexOrder::Input;
    assert_eq!(p.frame_stage_names(), ["frustum"]);
    // off with the default stages
    let mut q = Pipeline::builder().default_stages(false).build(&r).unwrap();
    q.order = VertexOrder::Patch(512);
    assert!(q.frame_stage_names().is_empty());
}

#[test]
fn the_patch_order_patches_on_the_gpu_with_the_cuda_backend() {
    if common::gpu().is_none() {
        return;
    }
    let scene = scene();
    let mut colors = Vec::new();
    for r in renderers() {
        let p = Pipeline::builder()
            .order(VertexOrder::Patch(512))
            .shading(rxpipe::ShadingMode::Patches)
            .build(&r)
            .unwrap();
        let prepared = p.prepare(&scene).unwrap();
        let order: Vec<&rxpipe::passes::StageReport> = prepared
            .stages
            .iter()
            .filter(|s| s.stage == "order")
            .collect();
        assert_eq!(order.len(), scene.objects.len());
        for s in &order {
            assert_eq!(s.backend, r.kind(), "{s:?}");
            assert_eq!(
                s.changed.contains("patched on the GPU"),
                r.kind() == rxpipe::BackendKind::Cuda,
                "{s:?}"
            );
        }
        let f = p
            .render_prepared(&prepared, &scene, &scene.camera, (320, 200), 0.0)
            .unwrap();
        colors.push(f.color);
    }
    // the same patches on both: the same colours (up to the raster stages' rounding)
    let differ = colors[0]
        .chunks_exact(4)
        .zip(colors[1].chunks_exact(4))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 2))
        .count();
    assert!(differ * 1000 <= 320 * 200, "{differ} pixels differ");
}
