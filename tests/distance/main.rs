//! The least and the greatest distance between two meshes: the BVH search against every pair of
//! triangles (and the greatest against every pair of vertices), bad input, and the GPU against
//! the CPU (the same distance, bit for bit, and the same pair).

#[path = "../common/mod.rs"]
mod common;
mod stage;

use glam::Vec3;
use proptest::prelude::*;
use rxpipe::distance::{self, cpu, Closest, DistanceError, Farthest};
use rxpipe::Mesh;

/// A deterministic generator of floats in [0, 1).
fn rng(seed: u64) -> impl FnMut() -> f32 {
    let mut s = seed.max(1);
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// `n` random triangles of about `size` in a cube of side `spread` around `centre`, some of
/// them degenerate (a point, a segment).
fn soup(name: &str, n: usize, centre: Vec3, spread: f32, size: f32, seed: u64) -> Mesh {
    let mut r = rng(seed);
    let mut positions = Vec::new();
    for t in 0..n {
        let c = centre + (Vec3::new(r(), r(), r()) - 0.5) * spread;
        for k in 0..3 {
            let p = c + (Vec3::new(r(), r(), r()) - 0.5) * size;
            positions.push(match (t % 17, k) {
                (0, _) => c,
                (1, 2) => positions[positions.len() - 1],
                _ => p,
            });
        }
    }
    let indices = (0..3 * n as u32).collect();
    Mesh::new(name, positions, indices)
}

fn moved(mut m: Mesh, by: Vec3, scale: f32) -> Mesh {
    for p in &mut m.positions {
        *p = *p * scale + by;
    }
    m
}

/// A distance, the pair where it is reached and the points there.
type Answer = (f64, [u32; 2], [glam::DVec3; 2]);

/// Two answers alike: the distance bit for bit, the pair, the points.
fn alike(a: Answer, b: Answer, what: &str) {
    assert_eq!(
        a.0.to_bits(),
        b.0.to_bits(),
        "{what}: {} against {}",
        a.0,
        b.0
    );
    assert_eq!((a.1, a.2), (b.1, b.2), "{what}");
}

/// Two least distances alike ([`alike`]); where the meshes cross (distance 0) the search ends at
/// the first crossing pair it finds, so only that both pairs cross, each at one point.
fn same(a: &Closest, b: &Closest, what: &str) {
    if a.distance == 0.0 && b.distance == 0.0 {
        for c in [a, b] {
            assert_eq!(c.points[0], c.points[1], "{what}: {:?}", c.triangles);
        }
        return;
    }
    alike(
        (a.distance, a.triangles, a.points),
        (b.distance, b.triangles, b.points),
        what,
    );
}

fn same_far(a: &Farthest, b: &Farthest, what: &str) {
    alike(
        (a.distance, a.triangles, a.points),
        (b.distance, b.triangles, b.points),
        what,
    );
}

/// The greatest distance between the meshes' used vertices, pair by pair in double precision: a
/// reference that shares no code with the search.
fn farthest_vertices(a: &Mesh, b: &Mesh) -> f64 {
    let used = |m: &Mesh| -> Vec<glam::DVec3> {
        let mut v: Vec<u32> = m.indices.clone();
        v.sort_unstable();
        v.dedup();
        v.iter()
            .map(|&i| m.positions[i as usize].as_dvec3())
            .collect()
    };
    let (pa, pb) = (used(a), used(b));
    pa.iter()
        .flat_map(|p| pb.iter().map(move |q| p.distance(*q)))
        .fold(0.0, f64::max)
}

/// Pairs of meshes to compare: apart, nested, touching, crossing, degenerate-laden.
fn cases() -> Vec<(Mesh, Mesh)> {
    let ico = rxpipe::mesh::icosphere(3);
    vec![
        (
            soup("a", 300, Vec3::ZERO, 2.0, 0.3, 1),
            soup("b", 250, Vec3::new(3.0, 0.5, 0.0), 2.0, 0.3, 2),
        ),
        // overlapping clouds: many crossing triangles, distance zero
        (
            soup("a", 400, Vec3::ZERO, 2.0, 0.4, 3),
            soup("b", 400, Vec3::new(0.2, 0.0, 0.0), 2.0, 0.4, 4),
        ),
        // a sphere inside a larger one: every part about as close as every other
        (ico.clone(), moved(ico.clone(), Vec3::ZERO, 1.7)),
        // a sphere beside another, off centre
        (
            ico.clone(),
            moved(ico.clone(), Vec3::new(2.3, 0.4, -0.2), 0.9),
        ),
        // one triangle against a mesh
        (soup("one", 1, Vec3::new(0.0, 2.0, 0.0), 0.1, 0.5, 5), ico),
    ]
}

#[test]
fn bvh_search_equals_every_pair() {
    for (k, (a, b)) in cases().iter().enumerate() {
        let want = cpu::brute_force(a, b).unwrap();
        let got = cpu::run(a, b).unwrap();
        same(&got, &want, &format!("case {k}"));
        assert!(
            got.pairs_tested < want.pairs_tested,
            "case {k}: the search measured {} of {} pairs",
            got.pairs_tested,
            want.pairs_tested
        );
        // and the other way round: the same distance, the pair swapped
        let back = cpu::run(b, a).unwrap();
        assert_eq!(back.distance, got.distance, "case {k} swapped");
    }
    // the overlapping clouds touch
    let (a, b) = &cases()[1];
    assert_eq!(cpu::run(a, b).unwrap().distance, 0.0);
}

/// Two clouds of `n` triangles each that cross everywhere (about every leaf's box overlaps many
/// of the other's), and the same clouds apart.
fn crossing_and_apart(n: usize) -> [(Mesh, Mesh); 2] {
    let a = soup("a", n, Vec3::ZERO, 2.0, 0.4, 11);
    let b = soup("b", n, Vec3::new(0.1, 0.0, 0.0), 2.0, 0.4, 12);
    let apart = moved(b.clone(), Vec3::new(4.0, 0.0, 0.0), 1.0);
    [(a.clone(), b), (a, apart)]
}

#[test]
fn crossing_meshes_end_the_search_at_the_first_crossing_pair() {
    let [(a, b), (_, apart)] = crossing_and_apart(6000);
    let crossing = cpu::run(&a, &b).unwrap();
    assert_eq!(crossing.distance, 0.0);
    // the pair it answers with crosses, at the point it names
    let (d2, x, y) = distance::triangle::tri_tri(
        &distance::corners(&a, crossing.triangles[0]),
        &distance::corners(&b, crossing.triangles[1]),
    );
    assert_eq!((d2, x, y), (0.0, crossing.points[0], crossing.points[1]));
    // a few pairs, not the 36 M there are, and no more than the same clouds apart take
    let separated = cpu::run(&a, &apart).unwrap();
    assert!(separated.distance > 1.0, "{}", separated.distance);
    assert!(
        crossing.pairs_tested <= separated.pairs_tested.max(10_000),
        "crossing: {} pairs measured; apart: {}",
        crossing.pairs_tested,
        separated.pairs_tested
    );
    // the same within a relative error, and counted for a watcher as it goes
    let watch = std::sync::atomic::AtomicU64::new(0);
    let near = cpu::run_watched(&a, &b, 0.5, Some(&watch)).unwrap();
    assert_eq!(near.distance, 0.0);
    assert_eq!(watch.into_inner(), near.pairs_tested);
}

#[test]
fn max_search_equals_every_pair_and_every_vertex_pair() {
    for (k, (a, b)) in cases().iter().enumerate() {
        let want = cpu::brute_force_max(a, b).unwrap();
        let got = cpu::run_max(a, b).unwrap();
        same_far(&got, &want, &format!("case {k}"));
        assert!(
            got.pairs_tested < want.pairs_tested / 4,
            "case {k}: the search measured {} of {} pairs",
            got.pairs_tested,
            want.pairs_tested
        );
        let v = farthest_vertices(a, b);
        assert!(
            (got.distance - v).abs() <= 1e-12 * v,
            "case {k}: {} against the vertices' {v}",
            got.distance
        );
        // the points are corners of the pair's triangles, as far apart as said
        let span = got.points[0].distance(got.points[1]);
        assert!((span - got.distance).abs() <= 1e-12 * span, "case {k}");
        let back = cpu::run_max(b, a).unwrap();
        assert_eq!(back.distance, got.distance, "case {k} swapped");
    }
    // the greatest distance is never below the least, and a mesh's span against itself is its
    // own diameter
    let (a, b) = &cases()[0];
    assert!(cpu::run_max(a, b).unwrap().distance > cpu::run(a, b).unwrap().distance);
    let ico = rxpipe::mesh::icosphere(3);
    let d = cpu::run_max(&ico, &ico).unwrap().distance;
    assert!(
        (d - farthest_vertices(&ico, &ico)).abs() < 1e-12 && d > 1.99,
        "{d}"
    );
}

#[test]
fn shared_pairs_against_every_pair() {
    let Some(dir) = common::distance_meshes() else {
        return;
    };
    for name in ["sphere_1000", "tools_1000"] {
        let load = |s: &str| rxpipe::io::load_mesh(dir.join(format!("{name}_{s}.obj.gz"))).unwrap();
        let (a, b) = (load("A"), load("B"));
        let want = cpu::brute_force(&a, &b).unwrap();
        let got = cpu::run(&a, &b).unwrap();
        same(&got, &want, name);
        assert!(got.distance > 0.0, "{name}: the pair does not touch");
        let want = cpu::brute_force_max(&a, &b).unwrap();
        let got = cpu::run_max(&a, &b).unwrap();
        same_far(&got, &want, &format!("{name}, the greatest distance"));
    }
}

#[test]
fn bad_input_is_named() {
    let empty = Mesh::new("nothing", vec![Vec3::ZERO], vec![]);
    let ico = rxpipe::mesh::icosphere(1);
    let e = cpu::run(&empty, &ico).unwrap_err();
    assert!(matches!(e, DistanceError::Empty(_)), "{e}");
    assert!(e.to_string().contains("'nothing' has no triangles"), "{e}");
    let e = cpu::run_max(&ico, &empty).unwrap_err();
    assert!(e.to_string().contains("'nothing' has no triangles"), "{e}");
    // the tree alone refuses it too
    let e = distance::bvh::Bvh::build(&empty).unwrap_err();
    assert!(matches!(e, DistanceError::Empty(_)), "{e}");
    let bad = Mesh::new("bad", vec![Vec3::ZERO; 3], vec![0, 1, 7]);
    let e = cpu::run(&ico, &bad).unwrap_err();
    assert!(
        e.to_string().contains("'bad'") && e.to_string().contains("index 7"),
        "{e}"
    );
    let mut nan = ico.clone();
    nan.name = "nan".into();
    nan.positions[5].y = f32::NAN;
    let e = cpu::run(&ico, &nan).unwrap_err();
    assert!(e.to_string().contains("vertex 5"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Random soups at random offsets and scales: the search finds what every pair finds.
    #[test]
    fn random_soups_equal_every_pair(
        na in 1usize..60, nb in 1usize..60, seed in 1u64..1_000_000,
        dx in -3.0f32..3.0, size in 0.01f32..1.5,
    ) {
        let a = soup("a", na, Vec3::ZERO, 2.0, size, seed);
        let b = soup("b", nb, Vec3::new(dx, 0.3, 0.0), 1.0, size, seed + 7);
        let want = cpu::brute_force(&a, &b).unwrap();
        let got = cpu::run(&a, &b).unwrap();
        prop_assert_eq!(got.distance.to_bits(), want.distance.to_bits());
        if want.distance > 0.0 {
            prop_assert_eq!(got.triangles, want.triangles);
        } else {
            // (crossing: the first crossing pair found, which meets at a point)
            prop_assert_eq!(got.points[0], got.points[1]);
        }
        let want = cpu::brute_force_max(&a, &b).unwrap();
        let got = cpu::run_max(&a, &b).unwrap();
        prop_assert_eq!(got.distance.to_bits(), want.distance.to_bits());
        prop_assert_eq!(got.triangles, want.triangles);
    }
}

/// The caps a capped search is tried with against a distance `d`: below, at and above it.
fn caps(d: f64) -> [f64; 5] {
    [0.0, d * 0.5, d, d * 1.01 + 1e-3, f64::INFINITY]
}

/// A capped search's result against the whole search's `full`: the same where the distance is
/// within the cap, else none or one beyond it.
fn capped_agrees(got: Option<f64>, full: f64, cap: f64, what: &str) {
    if full <= cap {
        assert_eq!(
            got.map(f64::to_bits),
            Some(full.to_bits()),
            "{what} cap {cap}"
        );
    } else {
        assert!(got.is_none_or(|d| d > cap), "{what} cap {cap}: {got:?}");
    }
}

#[test]
fn capped_search_equals_the_whole_one_within_its_cap() {
    for (k, (a, b)) in cases().iter().enumerate() {
        let (ta, tb) = (
            distance::bvh::Bvh::build(a).unwrap(),
            distance::bvh::Bvh::build(b).unwrap(),
        );
        let full = cpu::min_distance(a, &ta, b, &tb);
        for cap in caps(full.distance) {
            let got = cpu::min_distance_within(a, &ta, b, &tb, cap);
            if let Some(g) = &got {
                if full.distance <= cap {
                    same(g, &full, &format!("case {k} cap {cap}"));
                }
            }
            capped_agrees(
                got.map(|c| c.distance),
                full.distance,
                cap,
                &format!("case {k}"),
            );
        }
    }
}

/// The GPU's distance, pair and points against the CPU's, bit for bit; and capped searches.
fn gpu_against_cpu(gpu: &std::sync::Arc<rxpipe::gpu::Gpu>, all: &[(Mesh, Mesh)]) {
    let mut q = distance::cuda::Distance::new(gpu).unwrap();
    for (k, (a, b)) in all.iter().enumerate() {
        let what = format!("case {k} ({} against {})", a.name, b.name);
        let want = cpu::run(a, b).unwrap();
        let got = distance::cuda::run(gpu, a, b).unwrap();
        same(&got, &want, &what);
        let (ta, tb) = (
            distance::bvh::Bvh::build(a).unwrap(),
            distance::bvh::Bvh::build(b).unwrap(),
        );
        let (da, db) = (
            distance::cuda::DeviceMesh::new(gpu, a, &ta).unwrap(),
            distance::cuda::DeviceMesh::new(gpu, b, &tb).unwrap(),
        );
        for cap in caps(want.distance) {
            let f = q.query_within(&da, &db, cap).unwrap();
            capped_agrees(f.map(|f| f.d2.sqrt()), want.distance, cap, &what);
        }
        // the greatest distance: the same bits, pair and corners
        let want = cpu::run_max(a, b).unwrap();
        same_far(
            &distance::cuda::run_max(gpu, a, b).unwrap(),
            &want,
            &format!("{what}, the greatest distance"),
        );
        let f = q.query_max(&da, &db).unwrap();
        assert_eq!(f.d2.sqrt().to_bits(), want.distance.to_bits(), "{what}");
    }
}

#[test]
fn gpu_equals_cpu_on_generated_meshes() {
    let Some(gpu) = common::gpu() else { return };
    let mut all = cases();
    // the proptest's kind, a few dozen
    for seed in 1..40u64 {
        let n = 1 + (seed as usize * 37) % 90;
        all.push((
            soup("a", n, Vec3::ZERO, 2.0, 0.05 + seed as f32 * 0.03, seed),
            soup(
                "b",
                91 - n,
                Vec3::new(seed as f32 * 0.1 - 2.0, 0.3, 0.0),
                1.0,
                0.3,
                seed + 7,
            ),
        ));
    }
    // deep trees against one leaf, and a front that outgrows the first buffers
    all.push((
        rxpipe::mesh::icosphere(6),
        soup("one", 1, Vec3::new(0.0, 1.5, 0.0), 0.1, 0.2, 9),
    ));
    let ico = rxpipe::mesh::icosphere(5);
    all.push((ico.clone(), moved(ico.clone(), Vec3::ZERO, 1.3)));
    // clouds crossing everywhere (the search ends at a crossing pair) and the same apart
    all.extend(crossing_and_apart(6000));
    gpu_against_cpu(&gpu, &all);
    // the nested spheres' front outgrows the buffers a query starts with (FRONT pairs), so the
    // search above stopped, grew them and went on from where it stopped
    let (a, b) = (ico.clone(), moved(ico, Vec3::ZERO, 1.3));
    let (ta, tb) = (
        distance::bvh::Bvh::build(&a).unwrap(),
        distance::bvh::Bvh::build(&b).unwrap(),
    );
    let (da, db) = (
        distance::cuda::DeviceMesh::new(&gpu, &a, &ta).unwrap(),
        distance::cuda::DeviceMesh::new(&gpu, &b, &tb).unwrap(),
    );
    let f = distance::cuda::Distance::new(&gpu)
        .unwrap()
        .query(&da, &db)
        .unwrap();
    assert!(
        f.largest_front > distance::cuda::FRONT,
        "largest front {}",
        f.largest_front
    );
    assert_eq!(
        f.d2.sqrt().to_bits(),
        cpu::run(&a, &b).unwrap().distance.to_bits()
    );
}

#[test]
fn gpu_equals_cpu_on_the_shared_pairs() {
    let Some(gpu) = common::gpu() else { return };
    let Some(dir) = common::distance_meshes() else {
        return;
    };
    // every pair of the folder: NAME_A.obj.gz with NAME_B.obj.gz
    let mut firsts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_A.obj.gz"))
        .collect();
    firsts.sort();
    assert!(!firsts.is_empty(), "no pairs in {}", dir.display());
    let all: Vec<_> = firsts
        .iter()
        .map(|a| {
            let b = a.to_string_lossy().replace("_A.obj.gz", "_B.obj.gz");
            (
                rxpipe::io::load_mesh(a).unwrap(),
                rxpipe::io::load_mesh(b).unwrap(),
            )
        })
        .collect();
    gpu_against_cpu(&gpu, &all);
}

/// The relative errors the searches within an error are tried at.
const RELS: [f64; 4] = [0.001, 0.01, 0.1, 0.5];

/// Whether an answer within the relative error `rel` keeps its guarantee against the exact
/// distance (`greatest` for the greatest distance): a distance a pair of triangles reaches, so
/// never better than the exact one, and within a factor 1 + rel of it (and the culling's slack).
fn within_rel(got: f64, exact: f64, rel: f64, greatest: bool, what: &str) {
    let k = (1.0 + rel) * (1.0 + 1e-6);
    if greatest {
        assert!(
            got <= exact && got * k >= exact,
            "{what}: {got} against {exact}"
        );
    } else {
        assert!(
            got >= exact && got <= exact * k,
            "{what}: {got} against {exact}"
        );
    }
}

/// Both answers within `rel` (`c` for the least distance, `f` for the greatest) against the
/// exact ones; whether either differs from them.
fn both_within_rel(
    (c, least): (&Closest, &Closest),
    (f, most): (&Farthest, &Farthest),
    rel: f64,
    what: &str,
) -> u32 {
    within_rel(c.distance, least.distance, rel, false, what);
    within_rel(
        f.distance,
        most.distance,
        rel,
        true,
        &format!("{what} (greatest)"),
    );
    (c.distance != least.distance) as u32 + (f.distance != most.distance) as u32
}

/// The pairs the searches within an error are checked on: [`cases`], a deeper pair of nested
/// spheres, and the shared pairs of up to 10,000 triangles where they are.
fn rel_cases() -> Vec<(Mesh, Mesh)> {
    let mut all = cases();
    let ico = rxpipe::mesh::icosphere(5);
    all.push((ico.clone(), moved(ico, Vec3::new(0.01, 0.0, 0.0), 2.0)));
    if let Some(dir) = common::distance_meshes() {
        for name in ["tools_10000", "sphere_1000"] {
            let load =
                |s: &str| rxpipe::io::load_mesh(dir.join(format!("{name}_{s}.obj.gz"))).unwrap();
            all.push((load("A"), load("B")));
        }
    }
    all
}

#[test]
fn searches_within_a_relative_error_keep_their_bound() {
    let all = rel_cases();
    // how many answers were not the exact one: the bound must have been put to the test
    let mut inexact = 0;
    for (k, (a, b)) in all.iter().enumerate() {
        let (least, most) = (cpu::run(a, b).unwrap(), cpu::run_max(a, b).unwrap());
        for rel in RELS {
            let c = cpu::run_rel(a, b, rel).unwrap();
            let f = cpu::run_max_rel(a, b, rel).unwrap();
            let what = format!("case {k} within {rel}");
            inexact += both_within_rel((&c, &least), (&f, &most), rel, &what);
        }
        // with no error allowed, the exact search itself
        same(
            &cpu::run_rel(a, b, 0.0).unwrap(),
            &least,
            &format!("case {k}"),
        );
        same_far(
            &cpu::run_max_rel(a, b, 0.0).unwrap(),
            &most,
            &format!("case {k}"),
        );
    }
    assert!(
        inexact >= 4,
        "only {inexact} answers differ from the exact ones"
    );
    // where many pairs lie near the answer (nested spheres), an error of a tenth measures far
    // fewer pairs
    let (a, b) = &all[cases().len()];
    let (exact, near) = (cpu::run(a, b).unwrap(), cpu::run_rel(a, b, 0.1).unwrap());
    assert!(
        near.pairs_tested * 5 < exact.pairs_tested,
        "{} pairs within a tenth against {} exactly",
        near.pairs_tested,
        exact.pairs_tested
    );
    let (exact, near) = (
        cpu::run_max(a, b).unwrap(),
        cpu::run_max_rel(a, b, 0.1).unwrap(),
    );
    assert!(
        near.pairs_tested * 5 < exact.pairs_tested,
        "greatest: {} pairs within a tenth against {} exactly",
        near.pairs_tested,
        exact.pairs_tested
    );
}

#[test]
fn gpu_searches_within_a_relative_error_keep_their_bound() {
    let Some(gpu) = common::gpu() else { return };
    for (k, (a, b)) in rel_cases().iter().enumerate() {
        let (least, most) = (cpu::run(a, b).unwrap(), cpu::run_max(a, b).unwrap());
        for rel in RELS {
            let what = format!("GPU, case {k} within {rel}");
            let c = distance::cuda::run_rel(&gpu, a, b, rel).unwrap();
            assert!(c.pairs_tested <= least.pairs_tested.max(1) * 4, "{what}");
            let f = distance::cuda::run_max_rel(&gpu, a, b, rel).unwrap();
            both_within_rel((&c, &least), (&f, &most), rel, &what);
        }
        // with no error allowed, the exact search, as the CPU's
        let c = distance::cuda::run_rel(&gpu, a, b, 0.0).unwrap();
        same(&c, &least, &format!("GPU, case {k}"));
        let f = distance::cuda::run_max_rel(&gpu, a, b, 0.0).unwrap();
        same_far(&f, &most, &format!("GPU, case {k}"));
    }
}

#[test]
fn a_relative_error_out_of_range_is_named() {
    let (a, b) = (rxpipe::mesh::icosphere(1), rxpipe::mesh::icosphere(2));
    for rel in [-0.1, f64::NAN, f64::INFINITY, 1001.0] {
        for e in [
            cpu::run_rel(&a, &b, rel).unwrap_err(),
            cpu::run_max_rel(&a, &b, rel).err().unwrap(),
        ] {
            assert!(matches!(e, DistanceError::RelError(_)), "{e}");
            assert!(e.to_string().contains("relative error"), "{e}");
        }
    }
    assert!(distance::rel_keep(distance::MAX_REL_ERROR).is_ok());
}

// ---- the distance-culling frame stage ----

use glam::{Mat4, Quat};
use rxpipe::backend::BackendKind;
use rxpipe::distance::placed::transform_point;
use rxpipe::passes::distance_cull::{DistanceCull, Placement, Reach};
use rxpipe::passes::{FrameContext, FrameStage, ObjectBounds, Visibility};
use rxpipe::scene::{Camera, Scene};
use rxpipe::{Backend, Pipeline, Renderer};
use std::sync::Arc;
