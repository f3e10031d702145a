//! The subdivision stage: Loop's rules worked out by hand, the topology of every level, creases
//! and corners, attributes, bad input, and the GPU against the CPU.

mod common;

use glam::{Vec2, Vec3, Vec4};
use rxpipe::backend::BackendKind;
use rxpipe::passes::subdivide::Edges;
use rxpipe::passes::{self, MeshPass, PassContext, Subdivide, WorkingMesh};
use rxpipe::Mesh;
use std::collections::HashMap;

fn subdivide(m: &Mesh, s: Subdivide) -> Mesh {
    let mut w = WorkingMesh::new(m.clone());
    s.run(&mut w, &mut PassContext::new(BackendKind::Cpu, None, 0))
        .unwrap();
    w.into_host().unwrap()
}

fn levels(levels: u32) -> Subdivide {
    Subdivide {
        levels,
        ..Default::default()
    }
}

fn octahedron() -> Mesh {
    let p = [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z];
    let i = [
        0, 1, 2, 1, 3, 2, 3, 4, 2, 4, 0, 2, 1, 0, 5, 3, 1, 5, 4, 3, 5, 0, 4, 5,
    ];
    Mesh::new("octahedron", p.to_vec(), i.to_vec())
}

fn position(m: &Mesh, p: Vec3) -> bool {
    m.positions.iter().any(|q| (*q - p).length() < 1e-7)
}

#[test]
fn loop_rules_on_the_octahedron_by_hand() {
    let m = subdivide(&octahedron(), levels(1));
    // 6 vertices + 12 edges, 8 triangles in four
    assert_eq!((m.positions.len(), m.indices.len()), (18, 96));
    // a vertex of valence 4: beta = (5/8 - (3/8 + cos(pi/2)/4)^2) / 4 = 31/256; its neighbours
    // sum to zero, so it moves to (1 - 4 beta) = 132/256 of itself
    assert!((m.positions[0] - Vec3::X * (132.0 / 256.0)).length() < 1e-7);
    assert!((m.positions[5] + Vec3::Z * (132.0 / 256.0)).length() < 1e-7);
    // an edge vertex: 3/8 of its ends, 1/8 of the opposite corners (which cancel)
    assert!(position(&m, Vec3::new(0.375, 0.375, 0.0)));
    assert!(position(&m, Vec3::new(0.0, -0.375, -0.375)));
    assert!(m.normals.is_none(), "the normals stage recomputes them");
}

/// Every directed edge of the triangles appears once, and its reverse once: closed and
/// consistently oriented.
fn assert_closed_and_oriented(m: &Mesh, what: &str) {
    let mut seen: HashMap<(u32, u32), u32> = HashMap::new();
    for t in m.indices.chunks_exact(3) {
        for k in 0..3 {
            *seen.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
        }
    }
    for (&(a, b), &n) in &seen {
        assert_eq!(n, 1, "{what}: edge {a}-{b} used {n} times in one direction");
        assert_eq!(
            seen.get(&(b, a)),
            Some(&1),
            "{what}: edge {a}-{b} has no twin"
        );
    }
}

/// The largest angle between the normals of two triangles that share an edge.
fn max_dihedral(m: &Mesh) -> f32 {
    let normal = |t: &[u32]| {
        let p = |k: usize| m.positions[t[k] as usize];
        (p(1) - p(0)).cross(p(2) - p(0)).normalize()
    };
    let mut by_edge: HashMap<(u32, u32), Vec<Vec3>> = HashMap::new();
    for t in m.indices.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            by_edge
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push(normal(t));
        }
    }
    by_edge
        .values()
        .filter(|n| n.len() == 2)
        .map(|n| n[0].dot(n[1]).clamp(-1.0, 1.0).acos())
        .fold(0.0, f32::max)
}

#[test]
fn each_level_splits_every_triangle_in_four_in_place_and_smooths_the_surface() {
    let base = rxpipe::mesh::icosphere(0);
    let mut last = max_dihedral(&base);
    for l in 1..=4 {
        let m = subdivide(&base, levels(l));
        let f = 20 * 4usize.pow(l);
        assert_eq!(m.indices.len(), 3 * f, "level {l}");
        // a closed mesh: V - E + F = 2, E = 3F / 2
        assert_eq!(m.positions.len(), 2 + f / 2, "level {l}");
        assert_closed_and_oriented(&m, &format!("level {l}"));
        // new triangle 4t + k (k < 3) holds old triangle t's corner k, in its place k
        let prev = subdivide(&base, levels(l - 1));
        for (t, old) in prev.indices.chunks_exact(3).enumerate() {
            for (k, &corner) in old.iter().enumerate() {
                assert_eq!(m.indices[12 * t + 4 * k], corner, "level {l} triangle {t}");
            }
        }
        let d = max_dihedral(&m);
        assert!(d < last * 0.75, "level {l}: dihedral {d} against {last}");
        last = d;
    }
}

#[test]
fn boundaries_are_creases_and_sharp_corners_stay() {
    let tri = Mesh::new(
        "triangle",
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        vec![0, 1, 2],
    );
    let m = subdivide(&tri, levels(1));
    assert_eq!(
        &m.positions[..3],
        &tri.positions[..],
        "corners of 45-90 degrees stay"
    );
    for mid in [
        Vec3::new(0.5, 0.0, 0.0),
        Vec3::new(0.5, 0.5, 0.0),
        Vec3::new(0.0, 0.5, 0.0),
    ] {
        assert!(
            position(&m, mid),
            "boundary edges split at their midpoints: {mid}"
        );
    }
    // with no corners the boundary is a cubic B-spline: 3/4 of the vertex, 1/8 of each neighbour
    let m = subdivide(
        &tri,
        Subdivide {
            levels: 1,
            corner: 0.0,
            ..Default::default()
        },
    );
    assert!((m.positions[0] - Vec3::new(0.125, 0.125, 0.0)).length() < 1e-7);
    // a regular octagon fan: boundary angles of 135 degrees are smoothed (default corner 120)
    let mut p = vec![Vec3::ZERO];
    let mut i = Vec::new();
    for k in 0..8 {
        let a = k as f32 * std::f32::consts::TAU / 8.0;
        p.push(Vec3::new(a.cos(), a.sin(), 0.0));
        i.extend([0, 1 + k, 1 + (k + 1) % 8]);
    }
    let fan = Mesh::new("octagon", p.clone(), i);
    let m = subdivide(&fan, levels(1));
    let r = m.positions[1].length();
    let want = 0.75 + 0.25 * (std::f32::consts::TAU / 8.0).cos();
    assert!((r - want).abs() < 1e-6, "{r} against {want}");
    // the centre: valence 8 with no crease, Loop's rule (its neighbours sum to zero)
    assert!(m.positions[0].length() < 1e-6);
    // a cube whose faces are separate squares (as a normal per face splits it) keeps its shape
    let square = Mesh::new(
        "square",
        vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y],
        vec![0, 1, 2, 0, 2, 3],
    );
    let m = subdivide(&square, levels(3));
    let (lo, hi) = m
        .positions
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        });
    assert_eq!(
        (lo, hi),
        (Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)),
        "the square keeps its corners"
    );
    assert!(m.positions.iter().all(|p| p.z == 0.0));
}

#[test]
fn a_vertex_of_many_edges_takes_loops_weight() {
    let m = subdivide(&bicone(1500), levels(1));
    assert_closed_and_oriented(&m, "bicone");
    // the apex: its neighbours' sum lies on the axis at height 0, so it moves to
    // (1 - n beta) of its height
    let n = 1500.0f64;
    let c = 0.375 + 0.25 * (std::f64::consts::TAU / n).cos();
    let beta = (0.625 - c * c) / n;
    let want = (1.0 - n * beta) as f32;
    assert!(
        (m.positions[0].y - want).abs() < 1e-5,
        "{} against {want}",
        m.positions[0].y
    );
    assert!(m.positions[0].x.abs() < 1e-5 && m.positions[0].z.abs() < 1e-5);
}

#[test]
fn attributes_follow_the_new_vertices() {
    // a wavy, jittered grid whose texture coordinates are an affine function of x and z
    let mut m = rxpipe::mesh::grid(6, 5);
    for (i, p) in m.positions.iter_mut().enumerate() {
        p.y = 0.3 * (3.0 * p.x).sin() * (2.0 * p.z).cos();
        p.x += 0.05 * (7.0 * i as f32).sin();
        p.z += 0.05 * (5.0 * i as f32).cos();
    }
    let affine = |p: Vec3| Vec2::new(0.5 * p.x + 0.25 * p.z + 0.5, 2.0 * p.z - p.x);
    let affine1 = |p: Vec3| Vec2::new(p.z - 0.5 * p.x, 3.0 * p.x + 1.0);
    m.uvs = Some(m.positions.iter().map(|&p| affine(p)).collect());
    m.uvs1 = Some(m.positions.iter().map(|&p| affine1(p)).collect());
    let n = m.positions.len();
    m.colors = Some((0..n).map(|i| Vec4::splat(i as f32 / n as f32)).collect());
    m.tangents = Some(vec![Vec4::new(1.0, 0.0, 0.0, -1.0); n]);
    let s = subdivide(&m, levels(2));
    let (v, uv, c, t) = (
        s.positions.len(),
        s.uvs.as_ref().unwrap(),
        s.colors.as_ref().unwrap(),
        s.tangents.as_ref().unwrap(),
    );
    assert_eq!((uv.len(), c.len(), t.len()), (v, v, v));
    // the uvs take the positions' rules, so they stay the same affine function of the moved
    // vertices' x and z (the texture does not swim over the surface)
    for (p, q) in s.positions.iter().zip(uv) {
        assert!(
            (affine(*p) - *q).length() < 1e-5,
            "{p}: {q} against {}",
            affine(*p)
        );
    }
    // and so does the second set, by its own function
    let uv1 = s.uvs1.as_ref().unwrap();
    assert_eq!(uv1.len(), v);
    for (p, q) in s.positions.iter().zip(uv1) {
        assert!((affine1(*p) - *q).length() < 1e-5, "{p}: {q}");
    }
    // vertex colours: level 1's edge vertex of old vertices a and b carries their mean
    let one = subdivide(&m, levels(1));
    let colors = m.colors.as_ref().unwrap();
    for (x, &[a, b]) in Edges::build(&m.indices).ev.iter().enumerate() {
        let want = (colors[a as usize] + colors[b as usize]) * 0.5;
        assert_eq!(one.colors.as_ref().unwrap()[n + x], want);
    }
    assert!(t.iter().all(|t| *t == Vec4::new(1.0, 0.0, 0.0, -1.0)));
}

/// Degenerate and repeated triangles and a fin of three triangles on one edge.
fn awkward() -> Mesh {
    let p = vec![
        Vec3::ZERO,
        Vec3::X,
        Vec3::Y,
        Vec3::Z,
        -Vec3::Y,
        Vec3::new(1.0, 1.0, 1.0),
    ];
    let i = vec![
        0, 1, 2, 0, 1, 2, 0, 0, 1, 1, 0, 3, 0, 1, 4, 2, 2, 2, 5, 5, 3,
    ];
    Mesh::new("awkward", p, i)
}

/// A closed double fan: `n` triangles around each of two apexes, which have `n` edges each.
fn bicone(n: u32) -> Mesh {
    let mut p = vec![Vec3::Y, -Vec3::Y];
    let mut i = Vec::new();
    for k in 0..n {
        let a = k as f32 * std::f32::consts::TAU / n as f32;
        p.push(Vec3::new(a.cos(), 0.0, a.sin()));
        let (x, y) = (2 + k, 2 + (k + 1) % n);
        i.extend([0, y, x, 1, x, y]);
    }
    Mesh::new("bicone", p, i)
}

#[test]
fn awkward_input_subdivides_or_says_why() {
    // no triangles
    let empty = Mesh::new("empty", vec![Vec3::ZERO], vec![]);
    assert_eq!(subdivide(&empty, levels(3)).positions.len(), 1);
    // degenerate and repeated triangles and a fin of three triangles on one edge
    let m = awkward();
    let s = subdivide(&m, levels(2));
    assert_eq!(s.indices.len(), 16 * m.indices.len());
    assert!(s.positions.iter().all(|p| p.is_finite()));
    assert!(s.indices.iter().all(|&i| (i as usize) < s.positions.len()));
    // too many levels: a clear error, nothing allocated past the check
    let mut w = WorkingMesh::new(rxpipe::mesh::icosphere(5));
    let e = Subdivide {
        levels: 10,
        ..Default::default()
    }
    .run(&mut w, &mut PassContext::new(BackendKind::Cpu, None, 0))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("subdivide") && (e.contains("memory") || e.contains("2^32")),
        "{e}"
    );
}

#[test]
fn the_stage_parses_and_runs_in_a_pipeline() {
    assert!(passes::parse("subdivide").is_ok());
    assert!(passes::parse("subdivide:2").is_ok());
    assert!(passes::parse("subdivide:levels=3:corner=90").is_ok());
    for bad in [
        "subdivide:levels=11",
        "subdivide:corner=200",
        "subdivide:levels=-1",
    ] {
        assert!(passes::parse(bad).is_err(), "{bad}");
    }
    let renderer = rxpipe::Renderer::new(rxpipe::Backend::Cpu).unwrap();
    let scene = rxpipe::Scene::from_meshes("sphere", vec![rxpipe::mesh::icosphere(1)]);
    let p = rxpipe::Pipeline::builder()
        .stages(&["subdivide:levels=2"])
        .unwrap()
        .build(&renderer)
        .unwrap();
    let prepared = p.prepare(&scene).unwrap();
    assert_eq!(prepared.objects[0].triangles, 80 * 16);
    assert!(prepared.stages.iter().any(|s| s.stage == "subdivide"));
}

#[test]
fn gpu_subdivision_equals_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let mut meshes = vec![
        rxpipe::mesh::icosphere(3),
        rxpipe::mesh::torus(1.0, 0.3, 48, 16),
        rxpipe::mesh::grid(40, 30),
        awkward(),
        // apexes of 1500 edges: past the GPU's table of Loop's weights
        bicone(1500),
    ];
    let mut g = rxpipe::mesh::grid(10, 10);
    let n = g.positions.len();
    g.uvs = Some(
        (0..n)
            .map(|i| Vec2::new(i as f32 * 0.1, 1.0 / (1 + i) as f32))
            .collect(),
    );
    g.colors = Some((0..n).map(|i| Vec4::splat(i as f32 / n as f32)).collect());
    meshes.push(g.clone());
    // a second uv set rides beside the first on the device
    g.name = "grid with two uv sets".into();
    g.uvs1 = Some(
        (0..n)
            .map(|i| Vec2::new(1.0 - i as f32 * 0.03, 0.5))
            .collect(),
    );
    meshes.push(g);
    if let Some(dir) = common::meshes() {
        for f in ["stanford-bunny.obj", "fandisk.obj", "cow.obj"] {
            meshes.push(rxpipe::io::load_mesh(dir.join(f)).unwrap());
        }
    }
    for m in meshes {
        for s in [
            levels(1),
            levels(2),
            Subdivide {
                levels: 2,
                corner: 0.0,
                ..Default::default()
            },
        ] {
            let c = subdivide(&m, s);
            let mut w = WorkingMesh::new(m.clone());
            s.run(
                &mut w,
                &mut PassContext::new(BackendKind::Cuda, Some(&gpu), 0),
            )
            .unwrap();
            assert!(w.on_device(), "the mesh stays on the device");
            let g = w.into_host().unwrap();
            let what = format!("{} levels {} corner {}", m.name, s.levels, s.corner);
            assert_eq!(g.indices, c.indices, "{what}");
            assert_eq!(g.positions.len(), c.positions.len(), "{what}");
            for (k, (a, b)) in g.positions.iter().zip(&c.positions).enumerate() {
                let tol = 1e-6 * b.length().max(1.0);
                assert!(
                    (*a - *b).length() <= tol,
                    "{what}: vertex {k}: {a} against {b}"
                );
            }
            assert_eq!(g.uvs, c.uvs, "{what}");
            assert_eq!(g.uvs1, c.uvs1, "{what}");
            assert_eq!(g.colors, c.colors, "{what}");
        }
    }
}

/// Loop subdivision on the geometry stage's strategies (every new vertex one run of the rules
/// through the strategy) equals the stage's own result bit for bit, for every strategy, on
/// closed, open, degenerate and non-manifold meshes, with both uv sets; the strategies that reuse
/// run fewer times than naive's three a triangle, multi once a vertex.
#[test]
fn subdivision_on_every_strategy_equals_the_reference() {
    let mut g = rxpipe::mesh::grid(12, 9);
    let n = g.positions.len();
    g.uvs1 = Some((0..n).map(|i| Vec2::new(0.5, i as f32 * 0.01)).collect());
    g.colors = Some((0..n).map(|i| Vec4::splat(i as f32 / n as f32)).collect());
    let mut meshes = vec![
        rxpipe::mesh::icosphere(3),
        rxpipe::mesh::torus(1.0, 0.3, 24, 12),
        g,
        awkward(),
        bicone(1500),
    ];
    if let Some(dir) = common::meshes() {
        meshes.push(rxpipe::io::load_mesh(dir.join("fandisk.obj")).unwrap());
    }
    for m in &meshes {
        for levels in [1, 2] {
            let reference = subdivide(
                m,
                Subdivide {
                    levels,
                    ..Default::default()
                },
            );
            for s in rxpipe::geometry::Strategy::all() {
                let mut w = WorkingMesh::new(m.clone());
                let report = Subdivide {
                    levels,
                    strategy: Some(s),
                    ..Default::default()
                }
                .run(&mut w, &mut PassContext::new(BackendKind::Cpu, None, 0))
                .unwrap();
                let got = w.into_host().unwrap();
                let what = format!("{} levels {levels} {s}", m.name);
                assert_eq!(got.indices, reference.indices, "{what}");
                for (k, (a, b)) in got.positions.iter().zip(&reference.positions).enumerate() {
                    assert!(a == b, "{what}: vertex {k}: {a} against {b}");
                }
                assert!(got == reference, "{what}: differs from the reference");
                // the runs: three a triangle for naive, one a vertex for multi, between for the
                // others
                let runs: u64 = report
                    .split("; ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .and_then(|r| r.parse().ok())
                    .unwrap_or_else(|| panic!("{what}: no runs in '{report}'"));
                let tris: u64 = (1..=levels)
                    .map(|l| (m.indices.len() / 3 * 4usize.pow(l)) as u64)
                    .sum();
                match s.name() {
                    "naive" => assert_eq!(runs, 3 * tris, "{what}"),
                    _ => assert!(runs < 3 * tris, "{what}: {runs} runs for {tris} triangles"),
                }
            }
        }
    }
}

/// The runs of Loop's rules a subdivision report counts ("...; N runs of Loop's rules ...").
fn runs_in(report: &str) -> u64 {
    report
        .split("; ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no runs in '{report}'"))
}

/// On the GPU the strategies' kernels run Loop's rules (kernels/programs/loop.cu in the geometry
/// stage's processing mode): the mesh is the CPU's (the same indices, positions and both uv sets
/// within float rounding of the diagonal, bit for bit on ordinary meshes) and every strategy runs
/// exactly as many times as on the CPU.
#[test]
fn gpu_subdivision_on_every_strategy_equals_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let mut g = rxpipe::mesh::grid(12, 9);
    let n = g.positions.len();
    g.uvs1 = Some((0..n).map(|i| Vec2::new(0.5, i as f32 * 0.01)).collect());
    // (bicone 200: rings past the insertion sort's 32 entries, within Loop's weight table;
    // bicone 1500: past the table, where the device's cosine stands in for the host's)
    let mut meshes = vec![
        rxpipe::mesh::icosphere(3),
        g,
        awkward(),
        bicone(200),
        bicone(1500),
    ];
    if let Some(dir) = common::meshes() {
        meshes.push(rxpipe::io::load_mesh(dir.join("fandisk.obj")).unwrap());
    }
    for m in &meshes {
        for s in rxpipe::geometry::Strategy::all() {
            let run = |backend: BackendKind, gpu: Option<&std::sync::Arc<rxpipe::gpu::Gpu>>| {
                let mut w = WorkingMesh::new(m.clone());
                let report = Subdivide {
                    levels: 2,
                    strategy: Some(s),
                    ..Default::default()
                }
                .run(&mut w, &mut PassContext::new(backend, gpu, 0))
                .unwrap();
                (w.into_host().unwrap(), runs_in(&report))
            };
            let (c, c_runs) = run(BackendKind::Cpu, None);
            let (g, g_runs) = run(BackendKind::Cuda, Some(&gpu));
            let what = format!("{} {s}", m.name);
            assert_eq!(g_runs, c_runs, "{what}: runs");
            assert_eq!(g.indices, c.indices, "{what}");
            let close = |a: &[f32], b: &[f32], what: &str| {
                assert_eq!(a.len(), b.len(), "{what}");
                for (k, (x, y)) in a.iter().zip(b).enumerate() {
                    assert!(
                        (x - y).abs() <= 1e-6 * y.abs().max(1.0),
                        "{what}: {k}: {x} {y}"
                    );
                }
            };
            close(
                bytemuck::cast_slice(&g.positions),
                bytemuck::cast_slice(&c.positions),
                &what,
            );
            // the same rules in the same order: the same bits wherever the weights are the
            // host's
            if m.triangle_count() != 3000 {
                assert_eq!(g.positions, c.positions, "{what}: bit for bit");
                assert_eq!(g.uvs, c.uvs, "{what}: bit for bit");
            }
            for (a, b) in [(&g.uvs, &c.uvs), (&g.uvs1, &c.uvs1)] {
                assert_eq!(a.is_some(), b.is_some(), "{what}");
                if let (Some(a), Some(b)) = (a, b) {
                    close(bytemuck::cast_slice(a), bytemuck::cast_slice(b), &what);
                }
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Random index buffers over a few vertices (fans, fins, repeats and degenerate triangles
    /// all occur) and random positions: two levels always give V + E vertices and four times
    /// the triangles per level, every index in range, every new position inside the input's
    /// bounding box (Loop's rules are convex combinations), and the same mesh on the strategies.
    #[test]
    fn random_meshes_subdivide_within_their_bounds(
        nv in 3usize..24,
        tris in proptest::collection::vec((0u32..24, 0u32..24, 0u32..24), 1..60),
        coords in proptest::collection::vec(-100.0f32..100.0, 72),
        corner in 0.0f32..180.0,
    ) {
        let m = common::random_mesh(nv, &tris, &coords);
        let one = subdivide(&m, Subdivide { levels: 1, corner, ..Default::default() });
        let e = Edges::build(&m.indices).ev.len();
        proptest::prop_assert_eq!(one.positions.len(), nv + e);
        proptest::prop_assert_eq!(one.indices.len(), 4 * m.indices.len());
        let two = subdivide(&m, Subdivide { levels: 2, corner, ..Default::default() });
        proptest::prop_assert_eq!(two.indices.len(), 16 * m.indices.len());
        proptest::prop_assert!(two.indices.iter().all(|&i| (i as usize) < two.positions.len()));
        let (lo, hi) = m
            .positions
            .iter()
            .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
        let slack = Vec3::splat(1e-3);
        for p in &two.positions {
            proptest::prop_assert!(p.cmpge(lo - slack).all() && p.cmple(hi + slack).all(), "{p}");
        }
        // on the strategies (a reusing one of each kind), the same two levels bit for bit
        for s in ["warp", "hash", "patch"] {
            let streamed = subdivide(&m, Subdivide {
                levels: 2,
                corner,
                strategy: rxpipe::geometry::Strategy::parse(s),
            });
            proptest::prop_assert!(streamed == two, "{s}");
        }
    }
}
