//! The rasteriser against an independent brute-force per-pixel rasteriser, crack-freedom on
//! closed meshes, clipping, and a golden image of the default scene.

mod common;

use glam::{Mat4, Vec3, Vec4};
use rxpipe::geometry::{cpu, ShadedGeometry, Transform, Uniforms, VertexIn};
use rxpipe::raster::{self, CullMode, Draw, RasterSettings, SUBPIXEL_BITS};
use rxpipe::{Backend, Camera, Pipeline, Renderer, Strategy};

fn shade(m: &rxpipe::Mesh, model: Mat4, cam: &Camera, aspect: f32) -> ShadedGeometry {
    let v: Vec<VertexIn> = m
        .positions
        .iter()
        .map(|&p| VertexIn {
            position: p,
            normal: p.normalize_or_zero(),
            ..Default::default()
        })
        .collect();
    let u = Uniforms::new(model, cam.view_projection(aspect), cam.eye, 0.0);
    cpu::run(Strategy::Naive, &v, &m.indices, None, &Transform, &u).unwrap()
}

/// Brute force: for every pixel centre and every triangle, evaluate the three edge functions of
/// the snapped vertices directly (i128, no incremental stepping, no tiles) with the top-left rule.
/// Only for triangles entirely in front of the near plane.
fn brute_coverage(g: &ShadedGeometry, w: u32, h: u32, cull: CullMode) -> Vec<u32> {
    let one = (1i64 << SUBPIXEL_BITS) as f32;
    let mut cov = vec![0u32; (w * h) as usize];
    for t in 0..g.triangles.len() {
        let c = g.triangle(t).map(|v| v.clip);
        if c.iter().any(|p: &Vec4| p.w <= 0.0 || p.z < 0.0) {
            continue;
        }
        let snap = |p: Vec4| -> (i128, i128) {
            // the snapping rule is part of the specification; everything after it is independent
            let x = raster::snap((p.x * (1.0 / p.w) * 0.5 + 0.5) * w as f32 * one) as i128;
            let y = raster::snap((0.5 - p.y * (1.0 / p.w) * 0.5) * h as f32 * one) as i128;
            (x, y)
        };
        let mut v = c.map(snap);
        let area = (v[1].0 - v[0].0) * (v[2].1 - v[0].1) - (v[2].0 - v[0].0) * (v[1].1 - v[0].1);
        let front = area < 0;
        let keep = area != 0
            && match cull {
                CullMode::None => true,
                CullMode::Back => front,
                CullMode::Front => !front,
            };
        if !keep {
            continue;
        }
        if area < 0 {
            v.swap(1, 2);
        }
        // pixels whose centres can be inside: the snapped bounding box, clamped to the screen
        let lo_x = (v.iter().map(|p| p.0).min().unwrap() / 256 - 1).max(0);
        let hi_x = (v.iter().map(|p| p.0).max().unwrap() / 256 + 1).min(w as i128 - 1);
        let lo_y = (v.iter().map(|p| p.1).min().unwrap() / 256 - 1).max(0);
        let hi_y = (v.iter().map(|p| p.1).max().unwrap() / 256 + 1).min(h as i128 - 1);
        for py in lo_y..=hi_y {
            for px in lo_x..=hi_x {
                let (cx, cy) = (px * 256 + 128, py * 256 + 128);
                let inside = (0..3).all(|k| {
                    let (a, b) = (v[(k + 1) % 3], v[(k + 2) % 3]);
                    let e = (b.0 - a.0) * (cy - a.1) - (b.1 - a.1) * (cx - a.0);
                    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                    let top_left = dy < 0 || (dy == 0 && dx > 0);
                    e > 0 || (e == 0 && top_left)
                });
                if inside {
                    cov[(py * w as i128 + px) as usize] += 1;
                }
            }
        }
    }
    cov
}

fn coverage(g: &ShadedGeometry, w: u32, h: u32, cull: CullMode) -> Vec<u32> {
    let mut s = RasterSettings::new(w, h);
    s.cull = cull;
    s.count_coverage = true;
    let out = raster::rasterize(&[Draw::new(g, [1.0; 4])], &s).unwrap();
    out.coverage.unwrap()
}

/// A camera looking at the origin slightly from above and the side.
fn oblique_camera() -> Camera {
    Camera {
        eye: Vec3::new(0.3, 0.4, 3.0),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 45.0,
        near: 0.1,
        far: 10.0,
    }
}

#[test]
fn tile_rasteriser_equals_brute_force_coverage() {
    let cam = oblique_camera();
    let (w, h) = (97, 61); // not multiples of the tile size
    for (m, model) in [
        (rxpipe::mesh::icosphere(2), Mat4::IDENTITY),
        (rxpipe::mesh::rings(600), Mat4::from_rotation_x(0.7)),
        (
            rxpipe::mesh::grid(7, 5),
            Mat4::from_rotation_x(1.2) * Mat4::from_scale(Vec3::splat(3.0)),
        ),
    ] {
        let g = shade(&m, model, &cam, w as f32 / h as f32);
        for cull in [CullMode::Back, CullMode::None, CullMode::Front] {
            assert_eq!(
                coverage(&g, w, h, cull),
                brute_coverage(&g, w, h, cull),
                "{} {cull:?}",
                m.name
            );
        }
    }
}

/// The frame's depth and colour land where the triangles are, at sizes that are not multiples of
/// the tile (partial tiles, frame rows not aligned to cache lines): a pixel is drawn exactly where
/// the brute-force rasteriser covers it, the rest is background at far depth, and rendering into a
/// frame that held another image first gives the same bytes.
#[test]
fn frame_pixels_are_where_the_coverage_is() {
    let cam = oblique_camera();
    for (w, h) in [(97, 61), (1, 1), (33, 70), (250, 3)] {
        let g = shade(
            &rxpipe::mesh::icosphere(3),
            Mat4::IDENTITY,
            &cam,
            w as f32 / h as f32,
        );
        let draws = [Draw {
            geometry: &g,
            color: [0.8, 0.5, 0.2, 1.0],
            faces: None,
            material: None,
            colors: None,
            tangents: None,
            uvs1: None,
            mirrored: false,
        }];
        let mut s = RasterSettings::new(w, h);
        // (no lit pixel of this object has a green of zero)
        s.background = [1.0, 0.0, 1.0];
        let fresh = raster::rasterize(&draws, &s).unwrap();
        let cov = brute_coverage(&g, w, h, CullMode::Back);
        let bg = rxpipe::color::pack_srgb(Vec3::from_array(s.background)).to_le_bytes();
        for (i, &c) in cov.iter().enumerate() {
            let rgba = &fresh.color[4 * i..4 * i + 4];
            if c == 0 {
                assert_eq!(fresh.depth[i], 1.0, "{w}x{h} pixel {i}");
                assert_eq!(rgba, bg, "{w}x{h} pixel {i}");
            } else {
                assert!(fresh.depth[i] < 1.0, "{w}x{h} pixel {i}");
                assert_ne!(rgba, bg, "{w}x{h} pixel {i}");
            }
        }
        // a target that held a larger, different frame
        let mut reused = raster::rasterize(&draws, &RasterSettings::new(w + 40, h + 9)).unwrap();
        raster::rasterize_into(&draws, &s, &mut reused).unwrap();
        assert_eq!(reused.color, fresh.color, "{w}x{h}");
        assert_eq!(reused.depth, fresh.depth, "{w}x{h}");
    }
}

/// A mesh drawn as many draws of a few triangles each (and some of thousands, across setup's
/// chunks) gives the same frame as one draw of it: setup packs small draws together, and the
/// packing keeps submission order and each triangle's draw.
#[test]
fn many_small_draws_render_as_one_draw() {
    let cam = oblique_camera();
    let (w, h) = (160, 120);
    let g = shade(
        &rxpipe::mesh::icosphere(4),
        Mat4::from_rotation_y(0.4),
        &cam,
        w as f32 / h as f32,
    );
    let draw = |geometry| Draw::new(geometry, [0.8, 0.5, 0.2, 1.0]);
    // spans of 1 to 2,500 triangles: single triangles, spans across a 2,048-triangle chunk
    let sizes = [1, 3, 700, 5, 2500, 2, 64, 1, 1];
    let mut parts = Vec::new();
    let (mut start, mut k) = (0, 0);
    while start < g.triangles.len() {
        let end = (start + sizes[k % sizes.len()]).min(g.triangles.len());
        parts.push(ShadedGeometry {
            vertices: g.vertices.clone(),
            sources: g.sources.clone(),
            triangles: g.triangles[start..end].to_vec(),
            stats: g.stats,
        });
        (start, k) = (end, k + 1);
    }
    assert!(parts.len() > 10);
    let mut s = RasterSettings::new(w, h);
    s.count_coverage = true;
    let one = raster::rasterize(&[draw(&g)], &s).unwrap();
    let many: Vec<Draw> = parts.iter().map(draw).collect();
    let many = raster::rasterize(&many, &s).unwrap();
    assert!(one.stats.rasterized > 1000, "{}", one.stats.rasterized);
    assert_eq!(many.stats.rasterized, one.stats.rasterized);
    assert_eq!(many.coverage, one.coverage);
    assert_eq!(many.depth, one.depth);
    assert_eq!(many.color, one.color);
}

/// Draws drawn over a target (`RasterSettings::over_target`) give the frame of the target's
/// draws and theirs drawn together, in every shading mode: two spheres crossing each other, and
/// the first again in the same place (every fragment a depth tie, which the target keeps).
/// Nothing drawn over a target leaves it as it was; a target of another size is an error.
#[test]
fn drawn_over_a_target_equals_drawn_together() {
    let cam = oblique_camera();
    let (w, h) = (160, 120);
    let aspect = w as f32 / h as f32;
    let ball = rxpipe::mesh::icosphere(3);
    let a = shade(&ball, Mat4::from_rotation_y(0.4), &cam, aspect);
    let b = shade(
        &ball,
        Mat4::from_translation(Vec3::new(0.5, 0.2, 0.3)),
        &cam,
        aspect,
    );
    let draw = Draw::new;
    let (red, blue) = ([0.9, 0.2, 0.1, 1.0], [0.1, 0.3, 0.9, 1.0]);
    for shading in [
        raster::ShadingMode::Lit,
        raster::ShadingMode::Normals,
        raster::ShadingMode::Depth,
    ] {
        for (second, what) in [(&b, "crossing"), (&a, "the same sphere again")] {
            let mut s = RasterSettings::new(w, h);
            s.shading = shading;
            s.background = [0.2, 0.25, 0.3];
            let together = raster::rasterize(&[draw(&a, red), draw(second, blue)], &s).unwrap();
            let mut over = raster::rasterize(&[draw(&a, red)], &s).unwrap();
            let first = over.color.clone();
            s.over_target = true;
            raster::rasterize_into(&[draw(second, blue)], &s, &mut over).unwrap();
            let at = format!("{shading:?}, {what}");
            assert!(over.depth == together.depth, "{at}: depth differs");
            assert!(over.color == together.color, "{at}: colour differs");
            if what == "crossing" {
                assert!(over.color != first, "{at}: the second sphere shows");
            } else {
                assert!(over.color == first, "{at}: ties keep the target");
            }
            let kept = over.clone();
            raster::rasterize_into(&[], &s, &mut over).unwrap();
            assert!(over.color == kept.color && over.depth == kept.depth, "{at}");
        }
    }
    let mut s = RasterSettings::new(w, h);
    s.over_target = true;
    let mut small = raster::rasterize(&[], &RasterSettings::new(w / 2, h)).unwrap();
    let e = raster::rasterize_into(&[], &s, &mut small).unwrap_err();
    assert!(e.to_string().contains("160x120"), "{e}");
}

#[test]
fn closed_convex_mesh_covers_its_silhouette_exactly_once() {
    let cam = Camera {
        eye: Vec3::new(0.0, 0.0, 2.6),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 50.0,
        near: 0.1,
        far: 10.0,
    };
    let (w, h) = (320, 240);
    let m = rxpipe::mesh::icosphere(4);
    let g = shade(&m, Mat4::from_rotation_y(0.37), &cam, w as f32 / h as f32);
    let cov = coverage(&g, w, h, CullMode::Back);
    assert!(cov.iter().all(|&c| c <= 1), "some pixel covered twice");
    let covered = cov.iter().filter(|&&c| c == 1).count();
    assert!(covered > 10_000);
    // no cracks: no uncovered pixel with covered neighbours on both sides
    for y in 1..h as usize - 1 {
        for x in 1..w as usize - 1 {
            let at = |x: usize, y: usize| cov[y * w as usize + x];
            if at(x, y) == 0 {
                let horiz = at(x - 1, y) == 1 && at(x + 1, y) == 1;
                let vert = at(x, y - 1) == 1 && at(x, y + 1) == 1;
                assert!(!(horiz && vert), "crack at ({x}, {y})");
            }
        }
    }
    // without culling, front and back faces each cover the silhouette once
    let both = coverage(&g, w, h, CullMode::None);
    for (a, b) in cov.iter().zip(&both) {
        assert_eq!(*b, 2 * a);
    }
}

#[test]
fn shared_mesh_has_no_double_coverage_on_shared_edges() {
    let Some(dir) = common::meshes() else { return };
    let m = rxpipe::io::load_mesh(dir.join("stanford-bunny.obj")).unwrap();
    let (lo, hi) = m.bounds().unwrap();
    let cam = Camera::framing(lo, hi);
    let g = shade(&m, Mat4::IDENTITY, &cam, 1280.0 / 720.0);
    let cov = coverage(&g, 1280, 720, CullMode::None);
    let brute = brute_coverage(&g, 1280, 720, CullMode::None);
    assert_eq!(cov, brute);
}

#[test]
fn near_plane_and_guard_band_clipping() {
    // a huge floor that passes under and behind the camera
    let m = rxpipe::mesh::grid(8, 8);
    let model =
        Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0)) * Mat4::from_scale(Vec3::splat(1000.0));
    let cam = Camera {
        eye: Vec3::new(0.0, 0.0, 0.0),
        target: Vec3::new(0.0, -0.2, -1.0),
        up: Vec3::Y,
        fov_y: 60.0,
        near: 0.05,
        far: 5000.0,
    };
    let g = shade(&m, model, &cam, 4.0 / 3.0);
    let mut s = RasterSettings::new(160, 120);
    s.count_coverage = true;
    let out = raster::rasterize(
        &[Draw {
            geometry: &g,
            color: [1.0; 4],
            faces: None,
            material: None,
            colors: None,
            tangents: None,
            uvs1: None,
            mirrored: false,
        }],
        &s,
    )
    .unwrap();
    assert!(out.stats.clipped > 0);
    let cov = out.coverage.unwrap();
    // the floor fills the lower part of the screen without holes or overlaps
    for y in 70..120 {
        for x in 0..160 {
            assert_eq!(cov[y * 160 + x], 1, "pixel ({x}, {y})");
        }
    }
    // the upper rows see the sky
    assert!(cov[..160 * 35].iter().all(|&c| c == 0));
    // the depth of the floor grows towards the horizon
    assert!(out.depth[119 * 160 + 80] < out.depth[75 * 160 + 80]);
}

/// Triangles behind what a tile already holds are not scanned (the tile keeps a bound of its
/// depths); the frame is the one drawn with every triangle scanned (as with coverage counts,
/// which count hidden fragments too): a coincident copy of the occluder still loses its ties, an
/// alpha-tested copy submitted before it still wins them, and triangles that reach in front
/// from behind, or cross the far plane, still win their pixels.
#[test]
fn hidden_triangles_skipped_give_the_same_frame() {
    use rxpipe::geometry::VertexOut;
    use rxpipe::material::{AlphaMode, Material};
    let at = |x: f32, y: f32, z: f32| VertexOut {
        clip: Vec4::new(x, y, z, 1.0),
        normal: Vec3::Z,
        ..Default::default()
    };
    let quad = |z: f32| ShadedGeometry {
        vertices: vec![
            at(-3.0, -3.0, z),
            at(3.0, -3.0, z),
            at(3.0, 3.0, z),
            at(-3.0, 3.0, z),
        ],
        sources: vec![0, 1, 2, 3],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
        ..Default::default()
    };
    let occluder = quad(0.3);
    // behind: a fan of small triangles, a triangle reaching in front, one crossing the far plane
    let mut behind = ShadedGeometry::default();
    for k in 0..40 {
        let (x, y) = (-0.9 + 0.045 * k as f32, 0.8 - 0.04 * k as f32);
        let b = behind.vertices.len() as u32;
        behind
            .vertices
            .extend([at(x, y, 0.6), at(x + 0.1, y, 0.6), at(x, y + 0.1, 0.6)]);
        behind.triangles.push([b, b + 1, b + 2]);
    }
    let b = behind.vertices.len() as u32;
    behind.vertices.extend([
        at(-0.8, -0.8, 0.9),
        at(0.8, -0.7, 0.9),
        at(0.0, 0.8, 0.2),
        at(-0.5, 0.5, 50.0),
        at(0.5, 0.6, 50.0),
        at(0.0, -0.6, 0.29),
    ]);
    behind
        .triangles
        .extend([[b, b + 1, b + 2], [b + 3, b + 5, b + 4]]);
    behind.sources = (0..behind.vertices.len() as u32).collect();
    let masked = Material {
        base_color: Vec4::new(1.0, 0.0, 0.0, 1.0),
        alpha: AlphaMode::Mask(0.5),
        ..Default::default()
    };
    let draw = |geometry, color, material| Draw {
        geometry,
        color,
        faces: None,
        material,
        colors: None,
        tangents: None,
        uvs1: None,
        mirrored: false,
    };
    // (the alpha-tested pass wins ties against triangles submitted after it)
    let draws = [
        draw(&occluder, [1.0; 4], Some(&masked)),
        draw(&occluder, [0.2, 0.4, 0.9, 1.0], None),
        draw(&behind, [0.9, 0.9, 0.1, 1.0], None),
        draw(&occluder, [0.1, 0.9, 0.1, 1.0], None),
    ];
    for (w, h) in [(160, 120), (97, 61)] {
        let mut s = RasterSettings::new(w, h);
        s.cull = CullMode::None;
        let skipping = raster::rasterize(&draws, &s).unwrap();
        s.count_coverage = true;
        let scanning = raster::rasterize(&draws, &s).unwrap();
        assert_eq!(skipping.depth, scanning.depth, "{w}x{h}");
        assert_eq!(skipping.color, scanning.color, "{w}x{h}");
        // the masked copy won the occluder's pixels; the triangles reaching in front show
        let px = |x: u32, y: u32| &skipping.color[4 * (y * w + x) as usize..][..3];
        let red = px(2, 2);
        assert!(red[0] > red[1] + 15 && red[0] > red[2] + 15, "{red:?}");
        let drawn: std::collections::HashSet<&[u8]> =
            skipping.color.chunks_exact(4).map(|c| &c[..3]).collect();
        assert!(drawn.len() >= 2, "{w}x{h}: {} colours", drawn.len());
    }
}

/// A corner at the clip-space origin (w = 0) passes every clip plane but has no projection: its
/// triangle is rejected, the other triangles are drawn as without it.
#[test]
fn corners_at_the_clip_space_origin_are_rejected() {
    use rxpipe::geometry::VertexOut;
    let at = |x: f32, y: f32, z: f32, w: f32| VertexOut {
        clip: Vec4::new(x, y, z, w),
        normal: Vec3::Z,
        ..Default::default()
    };
    let g = ShadedGeometry {
        vertices: vec![
            at(-0.5, -0.5, 0.5, 1.0),
            at(0.5, -0.5, 0.5, 1.0),
            at(0.0, 0.5, 0.5, 1.0),
            at(0.0, 0.0, 0.0, 0.0),
        ],
        sources: vec![0, 1, 2, 3],
        triangles: vec![[0, 1, 2], [0, 1, 3], [3, 1, 2]],
        ..Default::default()
    };
    let mut s = RasterSettings::new(64, 48);
    s.cull = CullMode::None;
    s.count_coverage = true;
    let draw = |g: &ShadedGeometry| {
        raster::rasterize(
            &[Draw {
                geometry: g,
                color: [1.0; 4],
                faces: None,
                material: None,
                colors: None,
                tangents: None,
                uvs1: None,
                mirrored: false,
            }],
            &s,
        )
        .unwrap()
    };
    let out = draw(&g);
    assert_eq!(out.stats.rasterized, 1);
    assert_eq!(out.stats.rejected, 2);
    let alone = ShadedGeometry {
        triangles: vec![[0, 1, 2]],
        ..g.clone()
    };
    assert_eq!(out.coverage, draw(&alone).coverage);
    assert_eq!(out.color, draw(&alone).color);
}

#[test]
fn bad_frame_sizes_are_errors() {
    let g = ShadedGeometry::default();
    for (w, h) in [(0, 10), (10, 0), (20_000, 10)] {
        assert!(raster::rasterize(
            &[Draw {
                geometry: &g,
                color: [1.0; 4],
                faces: None,
                material: None,
                colors: None,
                tangents: None,
                uvs1: None,
                mirrored: false,
            }],
            &RasterSettings::new(w, h)
        )
        .is_err());
    }
}

#[test]
fn strategies_render_identical_images() {
    let scene = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let mut images = Vec::new();
    for s in Strategy::all() {
        let mut p = Pipeline::builder().strategy(s).build(&renderer).unwrap();
        images.push(p.render(&scene, &scene.camera, (200, 120)).unwrap().color);
    }
    assert!(images.windows(2).all(|w| w[0] == w[1]));
}

/// The golden image: tests/golden/default.png, rendered by rxpipe and checked by eye when it was
/// made. Regenerate with RXPIPE_UPDATE_GOLDEN=1 after an intended change.
#[test]
fn default_scene_matches_the_golden_image() {
    let scene = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let mut p = Pipeline::builder().build(&renderer).unwrap();
    let frame = p.render(&scene, &scene.camera, (320, 180)).unwrap();
    let path = std::path::Path::new("tests/golden/default.png");
    if std::env::var("RXPIPE_UPDATE_GOLDEN").is_ok() {
        frame.save_png(path).unwrap();
    }
    let (w, h, gold) = rxpipe::image::load_png(path).unwrap();
    assert_eq!((w, h), (320, 180));
    let mut differ = 0;
    for (a, b) in frame.color.chunks_exact(4).zip(gold.chunks_exact(4)) {
        let d = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
        if d > 2 {
            differ += 1;
        }
    }
    assert!(differ * 1000 <= (w * h) as usize, "{differ} pixels differ");
}
