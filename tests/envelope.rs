//! The envelope stage: outputs checked exactly (no envelope triangle meets the input or a
//! non-adjacent envelope triangle, by exact predicates over the BVH), every vertex moved at most
//! D and to the side asked for, every strategy's result equal to the reference's bit for bit on
//! the CPU, and the GPU's equal to the CPU's.

mod common;

use glam::{DVec3, Vec3};
use rxpipe::backend::BackendKind;
use rxpipe::distance::bvh::Bvh;
use rxpipe::distance::intersect::triangles_meet;
use rxpipe::geometry::Strategy;
use rxpipe::mesh::Mesh;
use rxpipe::passes::envelope::{build, Side};
use rxpipe::passes::{self, PassContext, Stage, WorkingMesh};

fn corners(m: &Mesh, t: u32) -> [Vec3; 3] {
    [0, 1, 2].map(|k| m.positions[m.indices[3 * t as usize + k] as usize])
}

fn tri_box(c: &[Vec3; 3]) -> [[f32; 3]; 2] {
    [
        c[0].min(c[1]).min(c[2]).to_array(),
        c[0].max(c[1]).max(c[2]).to_array(),
    ]
}

/// Every meeting of `env` (the input's topology) with the input (but at a shared vertex that
/// stayed) and with itself (but between triangles that share a vertex), found by exact tests over
/// each mesh's BVH.
fn crossings(input: &Mesh, env: &Mesh) -> Vec<(u32, u32, bool)> {
    let (ti, te) = (Bvh::build(input).unwrap(), Bvh::build(env).unwrap());
    let idx = |m: &Mesh, t: u32| [0, 1, 2].map(|k| m.indices[3 * t as usize + k]);
    let stays = |v: u32| env.positions[v as usize] == input.positions[v as usize];
    let mut found = Vec::new();
    for e in 0..env.triangle_count() as u32 {
        let ce = corners(env, e);
        let ve = idx(env, e);
        ti.visit(&tri_box(&ce), |u| {
            let vu = idx(input, u);
            if !ve.iter().any(|&v| stays(v) && vu.contains(&v))
                && triangles_meet(&ce, &corners(input, u))
            {
                found.push((e, u, false));
            }
        });
        te.visit(&tri_box(&ce), |f| {
            let vf = idx(env, f);
            if f > e && !ve.iter().any(|v| vf.contains(v)) && triangles_meet(&ce, &corners(env, f))
            {
                found.push((e, f, true));
            }
        });
    }
    found
}

/// The area-weighted normal of every vertex (zero where its triangles' sum is).
fn normals(m: &Mesh) -> Vec<DVec3> {
    let mut n = vec![DVec3::ZERO; m.vertex_count()];
    for t in 0..m.triangle_count() as u32 {
        let c = corners(m, t).map(|p| p.as_dvec3());
        let f = (c[1] - c[0]).cross(c[2] - c[0]);
        for k in 0..3 {
            n[m.indices[3 * t as usize + k] as usize] += f;
        }
    }
    n
}

/// Checks one envelope of `input`: the same topology, no crossings, every vertex moved at most
/// `distance` (and its float rounding) along its normal to `side`.
fn check(input: &Mesh, env: &Mesh, side: Side, distance: f64, what: &str) {
    assert_eq!(env.indices, input.indices, "{what}");
    let bad = crossings(input, env);
    assert!(
        bad.is_empty(),
        "{what}: {} crossings, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    let n = normals(input);
    for (v, (p, q)) in input.positions.iter().zip(&env.positions).enumerate() {
        let d = (*q - *p).as_dvec3();
        let ulp =
            4.0 * f32::EPSILON as f64 * p.abs().max_element().max(q.abs().max_element()) as f64;
        assert!(
            d.length() <= distance + ulp,
            "{what}: vertex {v} moved {} > {distance}",
            d.length()
        );
        assert!(
            d.dot(n[v]) * side.sign() >= 0.0,
            "{what}: vertex {v} moved to the wrong side"
        );
    }
}

/// Two squares facing each other across a gap of 0.1, each of 2 x 2 triangles pairs, normals
/// pointing at each other: their outer envelopes must stop short of meeting in the gap.
fn facing_sheets() -> Mesh {
    let mut m = rxpipe::mesh::grid(4, 4);
    let n = m.positions.len() as u32;
    let mut upper = m.clone();
    for p in &mut upper.positions {
        p.y += 0.1;
    }
    m.positions.extend(upper.positions);
    let flipped: Vec<u32> = upper
        .indices
        .chunks(3)
        .flat_map(|t| [t[0] + n, t[2] + n, t[1] + n])
        .collect();
    m.indices.extend(flipped);
    m.normals = None;
    m.uvs = None;
    m.name = "facing sheets".into();
    m
}

/// Three triangles on one edge (a non-manifold fin) and a lone triangle through nothing.
fn fin() -> Mesh {
    Mesh {
        name: "fin".into(),
        positions: vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.5, 1.0, 0.0),
            Vec3::new(0.5, -1.0, 0.1),
            Vec3::new(0.5, 0.0, 1.0),
        ],
        indices: vec![0, 1, 2, 1, 0, 3, 0, 1, 4],
        ..Default::default()
    }
}

fn meshes() -> Vec<Mesh> {
    let mut v = vec![
        rxpipe::mesh::icosphere(3),
        rxpipe::mesh::torus(1.0, 0.3, 32, 12),
        rxpipe::mesh::grid(8, 8),
        facing_sheets(),
        fin(),
    ];
    if let Some(dir) = common::meshes() {
        v.push(rxpipe::io::load_mesh(dir.join("stanford-bunny.obj")).unwrap());
    }
    v
}

#[test]
fn envelopes_are_free_of_crossings_and_within_the_distance() {
    for m in meshes() {
        for side in [Side::Outer, Side::Inner] {
            for fraction in [0.02, 0.1] {
                let (env, report) = build(&m, side, fraction, None, None).unwrap();
                let what = format!("{} {} {fraction}", m.name, side.name());
                check(&m, &env, side, report.distance, &what);
                assert!(report.offsets.max <= report.distance, "{what}");
                assert!(report.offsets.min <= report.offsets.median, "{what}");
                eprintln!("{what}: {}", report.summary());
            }
        }
    }
}

#[test]
fn a_sphere_moves_the_whole_distance_and_facing_sheets_stop_short() {
    let s = rxpipe::mesh::icosphere(3);
    let (_, r) = build(&s, Side::Outer, 0.02, None, None).unwrap();
    assert_eq!(r.full, s.vertex_count() as u64);
    assert_eq!(r.repaired.vertices, 0);
    // the sheets are 0.1 apart on a diagonal of about 2.83: 10% (0.28) is beyond the gap
    let m = facing_sheets();
    let (env, r) = build(&m, Side::Outer, 0.1, None, None).unwrap();
    assert!(r.offsets.max < 0.05, "{}", r.summary());
    // the middle of the gap is still free: the sheets' inner vertices moved towards it by less
    // than half the gap each
    let lower_max = env.positions[..m.vertex_count() / 2]
        .iter()
        .map(|p| p.y)
        .fold(f32::MIN, f32::max);
    let upper_min = env.positions[m.vertex_count() / 2..]
        .iter()
        .map(|p| p.y)
        .fold(f32::MAX, f32::min);
    assert!(lower_max < upper_min, "{lower_max} {upper_min}");
}

#[test]
fn the_check_finds_an_envelope_pushed_through_the_input() {
    // the test's own check is not vacuous: push one vertex of a sphere's envelope through the
    // far side
    let s = rxpipe::mesh::icosphere(2);
    let (mut env, _) = build(&s, Side::Inner, 0.02, None, None).unwrap();
    env.positions[0] = -env.positions[0] * 1.5;
    assert!(!crossings(&s, &env).is_empty());
}

#[test]
fn every_strategy_gives_the_reference_bit_for_bit() {
    for m in meshes() {
        let (reference, r0) = build(&m, Side::Outer, 0.05, None, None).unwrap();
        for s in Strategy::all() {
            let (env, r) = build(&m, Side::Outer, 0.05, Some(s), None).unwrap();
            let what = format!("{} {s}", m.name);
            assert_eq!(
                bytemuck::cast_slice::<_, u32>(&env.positions),
                bytemuck::cast_slice::<_, u32>(&reference.positions),
                "{what}"
            );
            assert_eq!(r.offsets, r0.offsets, "{what}");
            assert!(r.runs >= r.vertices, "{what}");
            if s == Strategy::Naive {
                assert_eq!(r.runs, 3 * r.triangles, "{what}");
            }
        }
    }
}

#[test]
fn the_gpu_gives_the_cpus_envelope() {
    let Some(gpu) = common::gpu() else { return };
    for m in meshes() {
        for side in [Side::Outer, Side::Inner] {
            let (c, rc) = build(&m, side, 0.05, None, None).unwrap();
            for s in Strategy::all() {
                let (g, rg) = build(&m, side, 0.05, Some(s), Some(&gpu)).unwrap();
                let what = format!("{} {} {s}", m.name, side.name());
                assert_eq!(
                    bytemuck::cast_slice::<_, u32>(&g.positions),
                    bytemuck::cast_slice::<_, u32>(&c.positions),
                    "{what}"
                );
                assert_eq!(rg.offsets, rc.offsets, "{what}");
                let (_, rcs) = build(&m, side, 0.05, Some(s), None).unwrap();
                assert_eq!(rg.runs, rcs.runs, "{what}: runs");
            }
        }
    }
}

#[test]
fn bad_input_gets_a_clear_error() {
    let empty = Mesh {
        name: "nothing".into(),
        ..Default::default()
    };
    let e = build(&empty, Side::Outer, 0.02, None, None).unwrap_err();
    assert!(e.to_string().contains("'nothing' has no triangles"), "{e}");
    let mut nan = rxpipe::mesh::icosphere(1);
    nan.positions[3].y = f32::NAN;
    assert!(build(&nan, Side::Outer, 0.02, None, None).is_err());
    let s = rxpipe::mesh::icosphere(1);
    for bad in [-0.1, 1.5, f64::NAN] {
        let e = build(&s, Side::Outer, bad, None, None).unwrap_err();
        assert!(e.to_string().contains("fraction"), "{e}");
    }
    // two triangles through each other, sharing no vertex: the input crosses itself
    let crossing = Mesh {
        name: "crossing".into(),
        positions: vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.2, 0.2, -1.0),
            Vec3::new(0.3, 0.2, 1.0),
            Vec3::new(0.2, 0.3, 1.0),
        ],
        indices: vec![0, 1, 2, 3, 4, 5],
        ..Default::default()
    };
    let e = build(&crossing, Side::Outer, 0.02, None, None).unwrap_err();
    assert!(e.to_string().contains("triangles 0 and 1"), "{e}");
}

#[test]
fn the_pass_parses_and_runs() {
    let Stage::Mesh(p) = passes::parse("envelope:side=inner:distance=0.01:strategy=hash").unwrap()
    else {
        panic!("a mesh pass")
    };
    let mut w = WorkingMesh::new(rxpipe::mesh::icosphere(2));
    let said = p
        .run(&mut w, &mut PassContext::new(BackendKind::Cpu, None, 0))
        .unwrap();
    assert!(said.starts_with("inner envelope at"), "{said}");
    let m = w.into_host().unwrap();
    assert!(m.positions.iter().all(|p| p.length() < 1.0));
    for bad in [
        "envelope:side=up",
        "envelope:distance=2",
        "envelope:strategy=fast",
    ] {
        assert!(passes::parse(bad).is_err(), "{bad}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Random triangles over a few vertices (fins, repeats, degenerate and crossing triangles
    /// all occur): an envelope comes back free of crossings, or the input is said to cross
    /// itself; nothing else, and no panic.
    #[test]
    fn random_meshes_give_an_envelope_or_say_where_they_cross(
        nv in 3usize..16,
        tris in proptest::collection::vec((0u32..16, 0u32..16, 0u32..16), 1..24),
        coords in proptest::collection::vec(-10.0f32..10.0, 48),
        inner in proptest::bool::ANY,
        fraction in 0.0f64..0.3,
    ) {
        let m = common::random_mesh(nv, &tris, &coords);
        let side = if inner { Side::Inner } else { Side::Outer };
        match build(&m, side, fraction, None, None) {
            Ok((env, r)) => check(&m, &env, side, r.distance, "random"),
            Err(e) => proptest::prop_assert!(e.to_string().contains("crosses itself"), "{e}"),
        }
    }

    /// A height field (a grid whose heights are random) never crosses itself: its envelopes
    /// always come back, free of crossings, on a strategy as on none.
    #[test]
    fn height_fields_always_get_an_envelope(
        heights in proptest::collection::vec(-0.5f32..0.5, 49),
        fraction in 0.0f64..0.2,
        inner in proptest::bool::ANY,
    ) {
        let mut m = rxpipe::mesh::grid(6, 6);
        for (p, h) in m.positions.iter_mut().zip(&heights) {
            p.y = *h;
        }
        m.normals = None;
        let side = if inner { Side::Inner } else { Side::Outer };
        let (env, r) = build(&m, side, fraction, None, None).unwrap();
        check(&m, &env, side, r.distance, "height field");
        let (hashed, _) = build(&m, side, fraction, Strategy::parse("hash"), None).unwrap();
        proptest::prop_assert_eq!(hashed.positions, env.positions);
    }
}
