//! The fused geometry stage (kernels/geometry_fused.cu) against the frame drawn through the
//! triangle queue and against the CPU: with the hashing strategies the geometry stage classifies
//! the frame's triangles and rasterises the small ones itself. Its colour and depth must equal
//! the unfused GPU frame's byte for byte (the same keys win, and the resolve sets a fused triangle
//! up exactly as setup would have), and agree with the CPU's as every GPU frame does. The same
//! holds for both paths with the meshes' batch tables (their batches numbered once, when
//! prepared, instead of hashed each frame): the same batches shade the same vertices. One test in
//! a binary of its own: it sets RXPIPE_FUSED and RXPIPE_TABLES (`always`: these meshes and frames
//! are smaller than those that take them by default), which a pipeline reads when it is built.
//! The GPU frames compared are each pipeline's third, so that the fused frame with tables and
//! occlusion culling (RXPIPE_OCCLUSION=1) culls batches hidden behind what it drew first (the
//! frames before it tell it what was seen).
//! Skips without a GPU unless RXPIPE_REQUIRE_GPU=1.

mod common;

use rxpipe::{Backend, CullMode, Frame, Pipeline, Renderer, Scene, ShadingMode, Strategy};

/// The GPU frames compared with the queued one: (name, RXPIPE_FUSED, RXPIPE_TABLES,
/// RXPIPE_OCCLUSION).
const PATHS: [(&str, &str, &str, &str); 4] = [
    ("fused", "always", "0", "0"),
    ("queued with tables", "0", "always", "0"),
    ("fused with tables", "always", "always", "0"),
    (
        "fused with tables and occlusion culling",
        "always",
        "always",
        "1",
    ),
];

/// The frame of `scene` (its camera) on the CPU, on the GPU through the queue, and on the GPU by
/// each of [`PATHS`] (on the GPU each pipeline's `nth` frame).
fn frames(
    scene: &Scene,
    size: (u32, u32),
    strategy: Strategy,
    (shading, cull): (ShadingMode, CullMode),
    nth: usize,
) -> (Frame, Frame, Vec<Frame>) {
    let cpu = Renderer::new(Backend::Cpu).unwrap();
    let gpu = Renderer::new(Backend::Cuda).unwrap();
    let frame = |r: &Renderer, (fused, tables, occlusion): (&str, &str, &str), frames: usize| {
        std::env::set_var("RXPIPE_FUSED", fused);
        std::env::set_var("RXPIPE_TABLES", tables);
        std::env::set_var("RXPIPE_OCCLUSION", occlusion);
        let p = Pipeline::builder()
            .strategy(strategy)
            .shading(shading)
            .cull(cull)
            .build(r)
            .unwrap();
        let prepared = p.prepare(scene).unwrap();
        let mut f = None;
        for _ in 0..frames {
            f = Some(
                p.render_prepared(&prepared, scene, &scene.camera, size, 0.0)
                    .unwrap(),
            );
        }
        f.unwrap()
    };
    (
        frame(&cpu, ("0", "0", "0"), 1),
        frame(&gpu, ("0", "0", "0"), nth),
        PATHS
            .iter()
            .map(|(_, f, t, o)| frame(&gpu, (f, t, o), nth))
            .collect(),
    )
}

/// Checks the frames (with whole batches culled, the same work: common::assert_same_work).
fn check(
    scene: &Scene,
    size: (u32, u32),
    strategy: Strategy,
    shading: ShadingMode,
    cull: CullMode,
) -> Checked {
    let what = format!(
        "{} {} {:?} {:?} {}x{}",
        scene.name,
        strategy.name(),
        shading,
        cull,
        size.0,
        size.1
    );
    // (the third frame: the first two tell occlusion culling what was seen)
    let (cpu, queued, others) = frames(scene, size, strategy, (shading, cull), 3);
    let q = queued.stats.raster;
    assert_eq!(q.fused, 0, "{what}: the queued frame fused");
    for ((path, fused, _, _), other) in PATHS.iter().zip(&others) {
        let what = format!("{what} {path}");
        common::assert_frames_agree(&cpu, other, &what);
        assert!(
            queued.color == other.color,
            "{what}: the colours differ from the queued frame's at {} pixels",
            common::compare(&queued.color, &other.color).0
        );
        let same_depth = queued
            .depth
            .iter()
            .zip(&other.depth)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same_depth, "{what}: the depth differs");
        let f = other.stats.raster;
        common::assert_same_work(&queued, other, &what);
        if *fused == "0" {
            assert_eq!(f.fused, 0, "{what}: fused");
            assert_eq!(f.batches_culled, 0, "{what}: batches culled");
        } else if f.batches_occluded == 0 {
            assert_eq!(
                f.fused, others[0].stats.raster.fused,
                "{what}: fused others"
            );
        } else {
            // (hidden batches' small triangles are not rasterised)
            assert!(f.fused < others[0].stats.raster.fused, "{what}: fused");
        }
    }
    let counts = |f: &Frame| {
        (
            f.stats.raster.batches_culled,
            f.stats.raster.batches_occluded,
        )
    };
    Checked {
        fused: others[0].stats.raster.fused,
        tables: counts(&others[2]),
        occlusion: counts(&others[3]),
    }
}

/// What [`check`] saw: the triangles the fused frame rasterised in its geometry stage, and the
/// batches the fused frames with tables culled whole and of them by occlusion, without and with
/// occlusion culling.
#[derive(Debug)]
struct Checked {
    fused: u64,
    tables: (u64, u64),
    occlusion: (u64, u64),
}

#[test]
fn fused_frames_equal_queued_frames_and_the_cpu() {
    if common::gpu().is_none() {
        return;
    }
    let hashing = [
        Strategy::parse("hash").unwrap(),
        Strategy::parse("phash").unwrap(),
    ];
    // a dense sphere (327,680 triangles) at a size where most are smaller than a pixel, and a
    // coarse one beside it, in every shading mode, culled and not (the far side then competes
    // for every pixel: the depth test and its tie rule across the two paths)
    let dense = rxpipe::mesh::icosphere(7);
    let coarse = rxpipe::mesh::icosphere(2);
    let scene = Scene::from_meshes("spheres", vec![dense, coarse]);
    for strategy in hashing {
        for shading in [
            ShadingMode::Lit,
            ShadingMode::Normals,
            ShadingMode::Depth,
            ShadingMode::ShadingRate,
        ] {
            for cull in [CullMode::Back, CullMode::None] {
                let c = check(&scene, (320, 240), strategy, shading, cull);
                let what = format!("spheres {shading:?} {cull:?}");
                assert!(c.fused > 10_000, "{what}: only {} fused", c.fused);
                // the far half of the dense sphere's batches face away, or unculled lie behind
                // the near half; the camera sees both spheres whole; the shading-rate frame
                // draws every batch
                let ((culled, none), (all, occluded)) = (c.tables, c.occlusion);
                assert_eq!(none, 0, "{what}: {c:?}");
                match (shading, cull) {
                    (ShadingMode::ShadingRate, _) => assert_eq!(all, 0, "{what}: {c:?}"),
                    (_, CullMode::Back) => assert!(culled > 0 && all >= culled, "{what}: {c:?}"),
                    _ => assert!(
                        culled == 0 && all == occluded && occluded > 0,
                        "{what}: {c:?}"
                    ),
                }
            }
        }
        // from close to the dense sphere, much of it outside the view: culled whole without
        // culling faces
        let mut close = scene.clone();
        let c = &mut close.camera;
        c.eye = c.target + (c.eye - c.target) * 0.25;
        let k = check(
            &close,
            (320, 240),
            strategy,
            ShadingMode::Lit,
            CullMode::None,
        );
        assert!(
            k.tables.0 > 0,
            "close spheres: none culled outside the view ({k:?})"
        );
    }
    // 1,000 copies of a 20-triangle sphere in one place, at 32x32 pixels: every copy's front
    // faces are listed for setup (boxes of about 8x8 pixels, over the fused limit), more than the
    // first frame's records (four a pixel and 1024), so the frame grows them and runs its geometry
    // stage again; equal depths in every copy, so the earliest copy must win through both paths.
    // The copies share their vertices once re-indexed; copies each a little larger than the last
    // (the largest in front) do not, and their survivors' vertices outgrow a fused frame's
    // first buffer (as many as records) too.
    let one = rxpipe::mesh::icosphere(0);
    let copies = 1000;
    let nv = one.positions.len() as u32;
    let indices: Vec<u32> = (0..copies)
        .flat_map(|c| one.indices.iter().map(move |&i| i + c * nv))
        .collect();
    for grown in [0.0f32, 1e-4] {
        let positions: Vec<_> = (0..copies)
            .flat_map(|c| {
                one.positions
                    .iter()
                    .map(move |&p| p * (1.0 + grown * c as f32))
            })
            .collect();
        let stacked = rxpipe::mesh::Mesh::new("stacked", positions, indices.clone());
        let scene = Scene::from_meshes("stacked", vec![stacked]);
        for shading in [ShadingMode::Lit, ShadingMode::Depth] {
            let what = format!("stacked {shading:?} growing {grown}");
            let (cpu, queued, others) =
                frames(&scene, (32, 32), hashing[0], (shading, CullMode::Back), 1);
            let paths = std::iter::once(("queued", "0")).chain(PATHS.iter().map(|p| (p.0, p.1)));
            for ((path, fused), f) in paths.zip(std::iter::once(&queued).chain(&others)) {
                let grew = |what: &str| f.notes.iter().any(|n| n.starts_with(what));
                assert!(
                    grew("setup records grew"),
                    "{what} {path}: the records did not grow ({:?})",
                    f.notes
                );
                assert_eq!(
                    grew("survivor vertices grew"),
                    fused != "0" && grown > 0.0,
                    "{what} {path}: survivor vertices ({:?})",
                    f.notes
                );
                common::assert_frames_agree(&cpu, f, &what);
                assert!(
                    queued.color == f.color && queued.depth == f.depth,
                    "{what} {path}"
                );
            }
        }
    }
    // one mesh drawn as nine instances (each its own queue, the mesh shared), one mirrored
    let mut instanced = Scene::from_meshes("instances", vec![rxpipe::mesh::icosphere(5)]);
    instanced.objects[0].instances = Some(
        (0..9)
            .map(|k| {
                let s = if k == 4 { -0.8 } else { 0.6 + 0.05 * k as f32 };
                rxpipe::glam::Mat4::from_scale_rotation_translation(
                    rxpipe::glam::Vec3::new(s, s.abs(), s.abs()),
                    rxpipe::glam::Quat::from_rotation_y(0.4 * k as f32),
                    rxpipe::glam::Vec3::new(2.2 * (k % 3) as f32, 2.2 * (k / 3) as f32, 0.0),
                )
            })
            .collect(),
    );
    instanced.frame_all();
    for cull in [CullMode::Back, CullMode::None] {
        let c = check(&instanced, (320, 240), hashing[0], ShadingMode::Lit, cull);
        assert!(c.fused > 1000, "instances {cull:?}: only {} fused", c.fused);
    }
    // the repository's scene (several objects and colours)
    let scene = rxpipe::io::load_scene(common::repo("scenes/default.toml")).unwrap();
    for strategy in hashing {
        check(
            &scene,
            (320, 180),
            strategy,
            ShadingMode::Lit,
            CullMode::Back,
        );
    }
    if let Some(dir) = common::meshes() {
        for f in common::SHARED {
            let m = rxpipe::io::load_mesh(dir.join(f)).unwrap();
            let scene = Scene::from_meshes(f, vec![m]);
            check(
                &scene,
                (320, 180),
                hashing[0],
                ShadingMode::Lit,
                CullMode::Back,
            );
        }
    }
    // materials, textures, alpha-tested and blended surfaces (which never fuse), double-sided
    // ones: the shared glTF scenes from their own cameras
    if let Some(dir) = common::scenes() {
        for f in common::SCENE_FILES {
            let scene = rxpipe::io::load_scene(dir.join(f)).unwrap();
            check(
                &scene,
                (480, 270),
                hashing[0],
                ShadingMode::Lit,
                CullMode::Back,
            );
        }
    }
}
