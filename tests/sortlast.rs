//! Sort-last rendering on one device: a frame drawn as N parts of its triangles and composited
//! by depth equals the frame drawn whole, colour and depth byte for byte, on the repository's
//! scene, generated meshes and every shared mesh and scene, with and without the frustum stage
//! and back-face culling, blended objects drawn over the composite; on the CPU, and on the GPU
//! where there is one.

mod common;

use rxpipe::{Backend, CullMode, Pipeline, Renderer, Scene, ShadingMode};

/// Renders `scene` whole and in 2, 3 and 7 parts with `renderer`, through the default stages
/// and with the frustum stage, back-face culled and unculled, and compares.
fn check(renderer: &Renderer, scene: &Scene, size: (u32, u32), what: &str) {
    check_shaded(renderer, scene, size, what, ShadingMode::Lit);
}

/// [`check`] in a shading mode.
fn check_shaded(
    renderer: &Renderer,
    scene: &Scene,
    size: (u32, u32),
    what: &str,
    shading: ShadingMode,
) {
    let blended = scene.objects.iter().any(|o| {
        o.mesh
            .material
            .as_ref()
            .is_some_and(|m| m.alpha == rxpipe::material::AlphaMode::Blend)
    });
    for frustum in [false, true] {
        for cull in [CullMode::Back, CullMode::None] {
            let b = Pipeline::builder().cull(cull).shading(shading);
            let b = if frustum {
                b.stages(&["frustum"]).unwrap()
            } else {
                b
            };
            let p = b.build(renderer).unwrap();
            let prepared = p.prepare(scene).unwrap();
            let whole = p
                .render_prepared(&prepared, scene, &scene.camera, size, 0.0)
                .unwrap();
            for parts in [2, 3, 7] {
                let f = p
                    .render_parts(&prepared, scene, &scene.camera, size, 0.0, parts)
                    .unwrap();
                let at = format!("{what}, {parts} parts, frustum {frustum}, {cull:?}");
                assert_eq!(f.geometry_triangles(), whole.geometry_triangles(), "{at}");
                assert!(f.depth == whole.depth, "{at}: depth differs");
                assert!(f.color == whole.color, "{at}: colour differs");
                let said = |what: &str| f.notes.iter().any(|n| n.contains(what));
                assert!(said("parts"), "{at}: {:?}", f.notes);
                assert_eq!(said("blended objects drawn over"), blended, "{at}");
            }
        }
    }
}

trait Triangles {
    fn geometry_triangles(&self) -> u64;
}

impl Triangles for rxpipe::Frame {
    fn geometry_triangles(&self) -> u64 {
        self.stats.geometry.triangles
    }
}

fn each_backend(mut f: impl FnMut(&Renderer, &str)) {
    f(&Renderer::new(Backend::Cpu).unwrap(), "cpu");
    if let Some(gpu) = common::gpu() {
        f(&Renderer::from_gpu(gpu), "cuda");
    }
}

#[test]
fn parts_composited_equal_the_whole_frame_on_generated_scenes() {
    let default = rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap();
    let mut ball = rxpipe::mesh::icosphere(5);
    ball.normals = None;
    let balls = Scene::from_meshes("balls", vec![ball.clone(), ball]);
    each_backend(|r, b| {
        check(r, &default, (320, 180), &format!("{b}: default scene"));
        check(
            r,
            &balls,
            (160, 120),
            &format!("{b}: two balls in one place"),
        );
    });
    // on the GPU, frames big enough to be fused (and the mesh's batch tables), each part
    // drawing triangle ranges of the one object
    if let Some(gpu) = common::gpu() {
        let rings = rxpipe::mesh::rings(2 * rxpipe::raster::FUSE_MIN_TRIANGLES as u32);
        let scene = Scene::from_meshes("rings", vec![rings]);
        check(
            &Renderer::from_gpu(gpu),
            &scene,
            (320, 180),
            "cuda: fused rings",
        );
    }
}

/// Blended objects are drawn after the composited parts, over their colour and depth: the
/// repository's textured scene (a blended pane before textured, masked and opaque objects) in
/// the lit mode, where they blend, and in the normals mode, where they are drawn as opaque.
#[test]
fn blended_objects_drawn_over_the_parts_equal_the_whole_frame() {
    let scene = rxpipe::io::load_scene(common::repo("scenes/textured/textured.gltf")).unwrap();
    each_backend(|r, b| {
        for shading in [ShadingMode::Lit, ShadingMode::Normals] {
            let what = format!("{b}: textured scene, {shading:?}");
            check_shaded(r, &scene, (240, 160), &what, shading);
        }
    });
}

#[test]
fn parts_composited_equal_the_whole_frame_on_shared_meshes_and_scenes() {
    if let Some(dir) = common::meshes() {
        for name in ["stanford-bunny.obj", "igea.ply", "teapot.obj"] {
            let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
            let scene = Scene::from_meshes(name, vec![m]);
            each_backend(|r, b| check(r, &scene, (200, 150), &format!("{b}: {name}")));
        }
    }
    if let Some(dir) = common::scenes() {
        for f in common::SCENE_FILES {
            let scene = rxpipe::io::load_scene(dir.join(f)).unwrap();
            each_backend(|r, b| check(r, &scene, (240, 135), &format!("{b}: {f}")));
        }
    }
}

#[test]
fn one_part_is_the_frame_and_partitions_stay_in_order() {
    let scene = rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap();
    let r = Renderer::new(Backend::Cpu).unwrap();
    let p = Pipeline::builder().build(&r).unwrap();
    let prepared = p.prepare(&scene).unwrap();
    let whole = p
        .render_prepared(&prepared, &scene, &scene.camera, (160, 90), 0.0)
        .unwrap();
    let one = p
        .render_parts(&prepared, &scene, &scene.camera, (160, 90), 0.0, 1)
        .unwrap();
    assert_eq!(one.color, whole.color);
    // more parts than triangles: the extra parts draw nothing, the frame is the same
    let tri = rxpipe::Mesh::new(
        "one triangle",
        vec![
            glam::Vec3::new(-1.0, -1.0, 0.0),
            glam::Vec3::new(1.0, -1.0, 0.0),
            glam::Vec3::new(0.0, 1.0, 0.0),
        ],
        vec![0, 1, 2],
    );
    let one_tri = Scene::from_meshes("one triangle", vec![tri]);
    let prepared = p.prepare(&one_tri).unwrap();
    let whole = p
        .render_prepared(&prepared, &one_tri, &one_tri.camera, (64, 48), 0.0)
        .unwrap();
    let many = p
        .render_parts(&prepared, &one_tri, &one_tri.camera, (64, 48), 0.0, 5)
        .unwrap();
    assert!(
        whole.color.chunks(4).any(|c| c != &whole.color[..4]),
        "drawn"
    );
    assert_eq!((many.color, many.depth), (whole.color, whole.depth));
}
