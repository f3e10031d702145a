//! The re-indexing stage on the CPU: the paper's worked example, shared and generated meshes,
//! property-based random meshes, meshopt as a peer, bad input, merge, subset and weld.

mod common;

use glam::{Vec2, Vec3};
use proptest::prelude::*;
use rxpipe::mesh::weld::WeldError;
use rxpipe::mesh::{self, Mesh};
use rxpipe::reindex::{self, cpu, Method, ReindexError, ReindexOptions};

/// The unique referenced vertex count as meshoptimizer finds it (byte equality, so signed zeros
/// are made positive first, as rxpipe's policy takes them as equal).
fn meshopt_unique(m: &Mesh) -> usize {
    let z = |f: f32| if f == 0.0 { 0.0 } else { f };
    let verts: Vec<[f32; 12]> = (0..m.vertex_count())
        .map(|i| {
            let p = m.positions[i];
            let n = m.normals.as_ref().map_or(Vec3::ZERO, |n| n[i]);
            let t = m.uvs.as_ref().map_or(Vec2::ZERO, |t| t[i]);
            let g = m.tangents.as_ref().map_or(glam::Vec4::ZERO, |g| g[i]);
            [p.x, p.y, p.z, n.x, n.y, n.z, t.x, t.y, g.x, g.y, g.z, g.w].map(z)
        })
        .collect();
    meshopt::generate_vertex_remap(&verts, Some(&m.indices)).0
}

/// Serial and parallel both correct, equal in counts, and equal to meshopt's count.
fn check_all(m: &Mesh) -> usize {
    let s = cpu::serial(m, None).unwrap();
    let p = cpu::parallel(m, None).unwrap();
    reindex::verify(m, &s.mesh, None).unwrap_or_else(|e| panic!("{}: serial: {e}", m.name));
    reindex::verify(m, &p.mesh, None).unwrap_or_else(|e| panic!("{}: parallel: {e}", m.name));
    assert_eq!(s.report.vertices_out, p.report.vertices_out, "{}", m.name);
    assert_eq!(s.report.unused, p.report.unused, "{}", m.name);
    assert_eq!(s.report.vertices_out, meshopt_unique(m), "{}", m.name);
    assert_eq!(
        s.report.vertices_out + s.report.unused + s.report.duplicates,
        m.vertex_count()
    );
    s.report.vertices_out
}

/// Wald's section 2 example: A, B, C', X, D', C'', E, F, Y, D''; X and Y unused.
fn paper_example() -> Mesh {
    let v = |x: f32| Vec3::new(x, 0.0, 0.0);
    let (a, b, c, d, e, f, x, y) = (v(1.), v(2.), v(3.), v(4.), v(5.), v(6.), v(7.), v(8.));
    Mesh::new(
        "wald",
        vec![a, b, c, x, d, c, e, f, y, d],
        vec![0, 1, 2, 0, 2, 4, 5, 6, 7, 5, 7, 9],
    )
}

#[test]
fn the_papers_worked_example() {
    let m = paper_example();
    let p = cpu::parallel(&m, None).unwrap();
    // newVtx = {A, B, C, D, E, F}; idx = (0,1,2) (0,2,3) (2,4,5) (2,5,3), as in the paper
    let xs: Vec<f32> = p.mesh.positions.iter().map(|v| v.x).collect();
    assert_eq!(xs, [1., 2., 3., 4., 5., 6.]);
    assert_eq!(p.mesh.indices, [0, 1, 2, 0, 2, 3, 2, 4, 5, 2, 5, 3]);
    assert_eq!((p.report.unused, p.report.duplicates), (2, 2));
    // the serial reference numbers vertices by first reference: A B C D E F as well
    let s = cpu::serial(&m, None).unwrap();
    assert_eq!(s.mesh.indices, p.mesh.indices);
    check_all(&m);
}

#[test]
fn generated_meshes() {
    for m in [
        mesh::icosphere(3),
        mesh::torus(1.0, 0.3, 24, 8),
        mesh::grid(17, 9),
        mesh::rings(2000),
    ] {
        // already indexed without duplicates: nothing but unused vertices goes
        let n = check_all(&m);
        assert_eq!(n, m.referenced_vertex_count(), "{}", m.name);
    }
    for n in [1u32, 2, 8, 33] {
        let m = reindex::paper_grid(n);
        assert_eq!(m.vertex_count(), 5 * (n * n) as usize);
        assert_eq!(check_all(&m), ((n + 1) * (n + 1)) as usize);
    }
}

#[test]
fn shared_meshes() {
    let Some(dir) = common::meshes() else { return };
    for name in common::SHARED {
        let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
        check_all(&m);
    }
}

/// A random mesh: vertices drawn from a small pool of values (so many are equal, including
/// -0.0 against +0.0), optional normals, uvs (with colours) and tangents, indices that skip some vertices and repeat
/// triangles and corners.
fn random_mesh() -> impl Strategy<Value = Mesh> {
    (
        1usize..60,
        1usize..5,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(nv, pool, normals, uvs, tangents, seed)| {
            let mut s = seed | 1;
            let mut next = move || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s
            };
            let values = [0.0f32, -0.0, 1.0, -1.0, 0.5];
            let mut f = || values[(next() % pool as u64) as usize];
            let positions: Vec<Vec3> = (0..nv).map(|_| Vec3::new(f(), f(), f())).collect();
            let nrm = normals.then(|| (0..nv).map(|_| Vec3::new(f(), f(), f())).collect());
            let uv = uvs.then(|| (0..nv).map(|_| Vec2::new(f(), f())).collect());
            let tangents = tangents.then(|| {
                (0..nv)
                    .map(|_| glam::Vec4::new(f(), f(), f(), f()))
                    .collect()
            });
            let tris = 1 + (next() % 40) as usize;
            let used = 1 + (next() % nv as u64) as usize;
            let mut indices = Vec::new();
            for t in 0..tris {
                if t > 0 && next() % 5 == 0 {
                    // a repeated triangle
                    let k = 3 * (next() as usize % t);
                    indices.extend_from_within(k..k + 3);
                } else {
                    for _ in 0..3 {
                        indices.push((next() % used as u64) as u32);
                    }
                }
            }
            // colours follow the uvs (so duplicates stay duplicates)
            let colors = uv.as_ref().map(|u: &Vec<glam::Vec2>| {
                u.iter()
                    .map(|t| glam::Vec4::new(t.x, 0.5, t.y, 1.0))
                    .collect()
            });
            // a second uv set on even seeds, from the first too: keys of up to 18 words
            let uvs1 = uv
                .as_ref()
                .filter(|_| seed % 2 == 0)
                .map(|u| u.iter().map(|t| Vec2::new(t.y, -t.x)).collect());
            Mesh {
                name: "random".into(),
                positions,
                normals: nrm,
                uvs: uv,
                uvs1,
                colors,
                tangents,
                indices,
                ..Default::default()
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn random_meshes(m in random_mesh()) {
        check_all(&m);
        // the parallel result does not depend on the thread count
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let a = one.install(|| cpu::parallel(&m, None).unwrap());
        let b = cpu::parallel(&m, None).unwrap();
        prop_assert_eq!(a.mesh, b.mesh);
    }
}

#[test]
fn signed_zeros_are_equal() {
    let m = Mesh::new(
        "zeros",
        vec![
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(-0.0, 1.0, -0.0),
            Vec3::X,
        ],
        vec![0, 2, 1, 1, 2, 0],
    );
    assert_eq!(check_all(&m), 2);
}

#[test]
fn bad_input_is_a_clear_error() {
    let mut m = paper_example();
    m.normals = Some(vec![Vec3::Z; 10]);
    m.normals.as_mut().unwrap()[6] = Vec3::new(0.0, f32::NAN, 1.0);
    for method in [Method::Serial, Method::Parallel] {
        let opts = ReindexOptions { method, weld: None };
        let e = reindex::reindex(&m, &opts, None).unwrap_err();
        assert!(
            matches!(e, ReindexError::Weld(WeldError::NaN { vertex: 6, .. })),
            "{e}"
        );
        assert!(e.to_string().contains("vertex 6 has a NaN normal"), "{e}");
    }
    let mut m = paper_example();
    m.positions[2].y = f32::NAN;
    assert!(cpu::parallel(&m, None)
        .unwrap_err()
        .to_string()
        .contains("vertex 2"));
    let mut m = paper_example();
    m.indices[4] = 10;
    let e = cpu::serial(&m, None).unwrap_err().to_string();
    assert!(e.contains("triangle 1 corner 1 has index 10"), "{e}");
    let empty = Mesh::new("empty", vec![Vec3::ZERO; 3], vec![]);
    let e = cpu::parallel(&empty, None).unwrap_err();
    assert!(
        matches!(e, ReindexError::Weld(WeldError::Empty { .. })),
        "{e}"
    );
    let e = cpu::parallel(&paper_example(), Some(0.0)).unwrap_err();
    assert!(
        matches!(e, ReindexError::Weld(WeldError::WeldCell { .. })),
        "{e}"
    );
    let e = cpu::parallel(&paper_example(), Some(1e-30)).unwrap_err();
    assert!(
        matches!(
            e,
            ReindexError::Weld(WeldError::WeldRange { vertex: 0, .. })
        ),
        "{e}"
    );
}

#[test]
fn cuda_methods_without_a_gpu_fall_back_to_the_cpu() {
    let m = paper_example();
    for method in [Method::CudaSort, Method::CudaHash] {
        let opts = ReindexOptions { method, weld: None };
        let r = reindex::reindex(&m, &opts, None).unwrap();
        assert_eq!(r.report.method, Method::Parallel);
        assert!(r.report.fallback.as_deref().unwrap().contains("no GPU"));
        assert_eq!(r.mesh.vertex_count(), 6);
    }
}

#[test]
fn weld_merges_positions_in_one_cell() {
    // a soup of two triangles whose shared corners differ by 1e-6
    let e = 1e-6;
    let p = |x: f32, y: f32| Vec3::new(x, y, 0.0);
    let soup = Mesh::new(
        "scan",
        vec![
            p(0., 0.),
            p(1., 0.),
            p(1., 1.),
            p(e, 0.),
            p(1., 1. + e),
            p(0., 1.),
        ],
        (0..6).collect(),
    );
    assert_eq!(cpu::serial(&soup, None).unwrap().mesh.vertex_count(), 6);
    for w in [
        cpu::serial(&soup, Some(1e-3)),
        cpu::parallel(&soup, Some(1e-3)),
    ] {
        let r = w.unwrap();
        assert_eq!(r.mesh.vertex_count(), 4);
        reindex::verify(&soup, &r.mesh, Some(1e-3)).unwrap();
    }
}

#[test]
fn merge_shares_common_vertices() {
    // two quads sharing an edge, each as its own mesh
    let p = |x: f32, y: f32| Vec3::new(x, y, 0.0);
    let a = Mesh::new(
        "a",
        vec![p(0., 0.), p(1., 0.), p(1., 1.), p(0., 1.)],
        vec![0, 1, 2, 0, 2, 3],
    );
    let b = Mesh::new(
        "b",
        vec![p(1., 0.), p(2., 0.), p(2., 1.), p(1., 1.)],
        vec![0, 1, 2, 0, 2, 3],
    );
    let r = reindex::merge(&[a.clone(), b.clone()], &ReindexOptions::default(), None).unwrap();
    assert_eq!(r.mesh.vertex_count(), 6);
    assert_eq!(r.mesh.triangle_count(), 4);
    let mut both = a.clone();
    both.append(&b);
    reindex::verify(&both, &r.mesh, None).unwrap();
    assert_eq!(r.mesh.name, "a + b");
}

#[test]
fn subset_keeps_only_what_the_faces_use() {
    let m = mesh::icosphere(2);
    let keep: Vec<bool> = (0..m.triangle_count()).map(|t| t % 3 == 0).collect();
    let r = reindex::subset(&m, &keep, &ReindexOptions::default(), None).unwrap();
    assert_eq!(r.mesh.triangle_count(), keep.iter().filter(|&&k| k).count());
    let kept: Vec<u32> = m
        .indices
        .chunks(3)
        .zip(&keep)
        .filter(|(_, &k)| k)
        .flat_map(|(t, _)| t.to_vec())
        .collect();
    let part = Mesh {
        indices: kept,
        ..m.clone()
    };
    reindex::verify(&part, &r.mesh, None).unwrap();
    assert!(r.mesh.vertex_count() < m.vertex_count());
    let e = reindex::subset(&m, &keep[1..], &ReindexOptions::default(), None).unwrap_err();
    assert!(e.to_string().contains("face mask"), "{e}");
}

#[test]
fn verify_catches_each_kind_of_mistake() {
    let m = paper_example();
    let good = cpu::serial(&m, None).unwrap().mesh;
    reindex::verify(&m, &good, None).unwrap();
    let mut swapped = good.clone();
    swapped.indices.swap(0, 1);
    assert!(reindex::verify(&m, &swapped, None)
        .unwrap_err()
        .contains("triangle 0 corner 0"));
    let mut dup = good.clone();
    dup.positions.push(dup.positions[2]);
    dup.indices[2] = 6;
    assert!(reindex::verify(&m, &dup, None)
        .unwrap_err()
        .contains("are equal"));
    let mut unused = good.clone();
    unused.positions.push(Vec3::splat(9.0));
    assert!(reindex::verify(&m, &unused, None)
        .unwrap_err()
        .contains("unused"));
}
