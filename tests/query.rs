//! The eight queries on the CPU, patch by patch, against the reference built from the plain index
//! buffer: generated, shared, awkward (non-manifold, degenerate, repeated, isolated) and random
//! meshes, whole and with active sets.

mod common;

use glam::Vec3;
use proptest::prelude::*;
use rxpipe::patch::query::pde::{CudaPde, DirectedEdges};
use rxpipe::patch::query::{cpu, reference};
use rxpipe::patch::{self, PatchData, PatchOptions, Query};
use rxpipe::Mesh;

fn data(m: &Mesh, limit: u32) -> PatchData {
    let p = patch::cpu::patch(
        m,
        &PatchOptions {
            max_faces: limit,
            ..Default::default()
        },
    )
    .unwrap();
    PatchData::build(m, &p).unwrap()
}

/// Every query of `m` (patches of `limit` faces) equals the reference.
fn check_all(m: &Mesh, limit: u32, what: &str) {
    let d = data(m, limit);
    for q in Query::ALL {
        let want = reference(&m.indices, m.vertex_count(), q);
        let got = cpu::run(&d, q, None).unwrap();
        assert_eq!(got.len(), want.len(), "{what} {q}: element count");
        for k in 0..want.len() {
            assert_eq!(got.of(k), want.of(k), "{what} {q}: element {k}");
        }
    }
}

fn awkward() -> Vec<Mesh> {
    let p = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
    // three triangles on one edge (non-manifold), a bow tie (non-manifold vertex), a vertex no
    // face uses, a degenerate and a repeated triangle, an isolated triangle
    let mut m = Mesh::new(
        "awkward",
        vec![
            p(0., 0., 0.),
            p(1., 0., 0.),
            p(0., 1., 0.),
            p(0., -1., 0.),
            p(0., 0., 1.),
            p(2., 0., 0.),
            p(2., 1., 0.),
            p(9., 9., 9.),
            p(5., 5., 5.),
            p(6., 5., 5.),
            p(5., 6., 5.),
        ],
        vec![
            0, 1, 2, 1, 0, 3, 0, 1, 4, // fin
            1, 5, 6, // bow tie at vertex 1
            0, 0, 2, // degenerate
            0, 1, 2, // repeated
            8, 9, 10, // isolated
        ],
    );
    m.normals = None;
    vec![m, rxpipe::mesh::icosphere(0)]
}

#[test]
fn queries_equal_the_reference_on_generated_and_awkward_meshes() {
    for (m, limit) in [
        (rxpipe::mesh::icosphere(3), 64),
        (rxpipe::mesh::icosphere(4), 512),
        (rxpipe::mesh::torus(1.0, 0.3, 48, 16), 100),
        (rxpipe::mesh::torus(1.0, 0.3, 48, 16), 1),
    ] {
        check_all(&m, limit, &format!("{} / {limit}", m.name));
    }
    for m in awkward() {
        for limit in [1, 2, 512] {
            check_all(&m, limit, &format!("{} / {limit}", m.name));
        }
    }
    // no faces
    let empty = Mesh::new("empty", vec![Vec3::ZERO; 2], vec![]);
    check_all(&empty, 512, "empty");
}

#[test]
fn queries_equal_the_reference_on_the_shared_meshes() {
    let Some(dir) = common::meshes() else { return };
    for name in common::SHARED {
        let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
        check_all(&m, 512, name);
    }
}

#[test]
fn active_sets_answer_only_their_elements() {
    let m = rxpipe::mesh::icosphere(4);
    let d = data(&m, 256);
    for q in Query::ALL {
        let full = cpu::run(&d, q, None).unwrap();
        let active: Vec<bool> = (0..full.len()).map(|k| k % 7 == 3).collect();
        let some = cpu::run(&d, q, Some(&active)).unwrap();
        for (k, &on) in active.iter().enumerate() {
            if on {
                assert_eq!(some.of(k), full.of(k), "{q} {k}");
            } else {
                assert!(some.of(k).is_empty(), "{q} {k} is not active");
            }
        }
    }
}

#[test]
fn lists_in_patch_rows_come_back_in_element_order() {
    // the layout the GPU's `Rows::Patch` writes: each patch's owned elements in local order,
    // patch after patch, then the elements no patch owns (the awkward mesh's unused vertex)
    let mut meshes = awkward();
    meshes.push(rxpipe::mesh::icosphere(3));
    for m in &meshes {
        for limit in [2, 64] {
            let d = data(m, limit);
            for q in Query::ALL {
                let want = cpu::run(&d, q, None).unwrap();
                let owned: Vec<&[u32]> = d.patches.iter().map(|p| p.owned(q.source())).collect();
                let mut order: Vec<usize> = owned
                    .iter()
                    .flat_map(|o| o.iter())
                    .map(|&e| e as usize)
                    .collect();
                let mut seen = vec![false; want.len()];
                order.iter().for_each(|&e| seen[e] = true);
                order.extend((0..want.len()).filter(|&e| !seen[e]));
                let mut offsets = vec![0u32];
                let mut items = Vec::new();
                for &e in &order {
                    items.extend_from_slice(want.of(e));
                    offsets.push(items.len() as u32);
                }
                let got = rxpipe::patch::QueryResult::from_patch_rows(q, owned, &offsets, &items);
                assert_eq!(got, want, "{} / {limit} {q}", m.name);
            }
        }
    }
}

#[test]
fn user_computations_run_per_element() {
    // valence through VV, and the one-ring average through VV, against the reference lists
    let m = rxpipe::mesh::torus(1.0, 0.3, 32, 12);
    let d = data(&m, 128);
    let valence = cpu::for_each(&d, Query::VV, None, |_, ring| ring.len() as u32).unwrap();
    let want = reference(&m.indices, m.vertex_count(), Query::VV);
    for (v, &n) in valence.iter().enumerate() {
        assert_eq!(n as usize, want.of(v).len());
    }
    assert!(
        valence.iter().all(|&n| n == 6),
        "a torus grid has valence 6"
    );
    let avg = cpu::for_each(&d, Query::VV, None, |_, ring| {
        ring.iter().map(|&u| m.positions[u as usize]).sum::<Vec3>() / ring.len() as f32
    })
    .unwrap();
    let v = 5;
    let manual: Vec3 = want
        .of(v)
        .iter()
        .map(|&u| m.positions[u as usize])
        .sum::<Vec3>()
        / 6.0;
    assert!((avg[v] - manual).length() < 1e-6);
}

#[test]
fn results_write_as_one_line_per_element() {
    let m = rxpipe::mesh::icosphere(0);
    let r = reference(&m.indices, m.vertex_count(), Query::FV);
    let mut out = Vec::new();
    r.write_text(&mut out, "icosphere:0").unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("# rxpipe query fv"));
    assert_eq!(lines.len(), 1 + m.triangle_count());
    let first: Vec<u32> = lines[1].split(' ').map(|x| x.parse().unwrap()).collect();
    assert_eq!(first, m.indices[..3]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random index buffers over a few vertices: fans, fins, repeats and degenerate faces all
    /// occur; every query still equals the reference.
    #[test]
    fn random_meshes_answer_as_the_reference(
        nv in 3usize..24,
        tris in proptest::collection::vec((0u32..24, 0u32..24, 0u32..24), 1..60),
        limit in 1u32..20,
    ) {
        let indices: Vec<u32> = tris
            .iter()
            .flat_map(|&(a, b, c)| [a % nv as u32, b % nv as u32, c % nv as u32])
            .collect();
        let positions = (0..nv).map(|i| Vec3::new(i as f32, (i * i) as f32, 1.0)).collect();
        let m = Mesh::new("random", positions, indices);
        let d = data(&m, limit);
        for q in Query::ALL {
            let want = reference(&m.indices, m.vertex_count(), q);
            let got = cpu::run(&d, q, None).unwrap();
            prop_assert_eq!(got.len(), want.len());
            for k in 0..want.len() {
                prop_assert_eq!(got.of(k), want.of(k), "{} element {}", q, k);
            }
        }
    }
}

/// The GPU's lists for `m` (patches of `limit` faces), every query, whole and with an active
/// set, equal the CPU's.
fn gpu_equals_cpu(
    q_gpu: &rxpipe::patch::query::cuda::CudaQueries,
    m: &Mesh,
    limit: u32,
    what: &str,
) {
    use rxpipe::patch::query::cuda::{DevicePatchData, Rows};
    let d = data(m, limit);
    let dd = DevicePatchData::upload(&q_gpu.gpu, &d).unwrap();
    for q in Query::ALL {
        for rows in [Rows::Element, Rows::Patch] {
            let want = cpu::run(&d, q, None).unwrap();
            let got = q_gpu.run_in(&dd, q, None, rows).unwrap();
            assert_eq!(
                got.offsets, want.offsets,
                "{what} {q} {rows:?}: list lengths"
            );
            assert_eq!(got.items, want.items, "{what} {q} {rows:?}: lists");
            let active: Vec<bool> = (0..want.len()).map(|k| k % 3 == 1).collect();
            let want = cpu::run(&d, q, Some(&active)).unwrap();
            let got = q_gpu.run_in(&dd, q, Some(&active), rows).unwrap();
            assert_eq!(got, want, "{what} {q} {rows:?}: active set");
        }
    }
}

#[test]
fn gpu_queries_equal_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let qg = rxpipe::patch::query::cuda::CudaQueries::new(gpu).unwrap();
    for (m, limit) in [
        (rxpipe::mesh::icosphere(4), 512),
        (rxpipe::mesh::torus(1.0, 0.3, 48, 16), 100),
        (rxpipe::mesh::torus(1.0, 0.3, 48, 16), 1),
    ] {
        gpu_equals_cpu(&qg, &m, limit, &format!("{} / {limit}", m.name));
    }
    for m in awkward() {
        for limit in [1, 2, 512] {
            gpu_equals_cpu(&qg, &m, limit, &format!("{} / {limit}", m.name));
        }
    }
    gpu_equals_cpu(
        &qg,
        &Mesh::new("empty", vec![Vec3::ZERO; 2], vec![]),
        512,
        "empty",
    );
    if let Some(dir) = common::meshes() {
        for name in common::SHARED {
            let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
            gpu_equals_cpu(&qg, &m, 512, name);
        }
    }
}

#[test]
fn gpu_user_computations_run_per_element_and_bad_ones_name_their_line() {
    let Some(gpu) = common::gpu() else { return };
    use rxpipe::patch::query::cuda::{CudaQueries, DevicePatchData};
    let m = rxpipe::mesh::torus(1.0, 0.3, 32, 12);
    let d = data(&m, 128);
    let dd = DevicePatchData::upload(&gpu, &d).unwrap();
    // the built-in computation: each list's length (the valence, for VV)
    let qg = CudaQueries::new(gpu.clone()).unwrap();
    let valence = qg.for_each(&dd, Query::VV, None, &[], 1).unwrap();
    let cpu_valence = cpu::for_each(&d, Query::VV, None, |_, ring| ring.len() as f32).unwrap();
    assert_eq!(valence, cpu_valence);
    // a user's: the largest neighbour id plus the element's own, with an active set
    let src = "__device__ void rxq_user(unsigned e, const unsigned* l, unsigned n, const float* in,\n                         float* out) {\n  unsigned m = 0;\n  for (unsigned i = 0; i < n; ++i) m = max(m, l[i]);\n  out[e] = (float)(m + e) + in[0];\n}\n";
    let qg = CudaQueries::with_user(gpu.clone(), "largest.cu", src).unwrap();
    let active: Vec<bool> = (0..m.vertex_count()).map(|v| v % 2 == 0).collect();
    let got = qg
        .for_each(&dd, Query::VF, Some(&active), &[0.5], 1)
        .unwrap();
    let want = cpu::for_each(&d, Query::VF, Some(&active), |e, l| {
        (l.iter().copied().max().unwrap_or(0) + e) as f32 + 0.5
    })
    .unwrap();
    assert_eq!(got, want);
    // a computation that does not compile: the error names the file and the line
    let bad = "__device__ void rxq_user(unsigned e, const unsigned* l, unsigned n, const float* in,\n                         float* out) {\n  out[e] = undefined_name;\n}\n";
    let e = CudaQueries::with_user(gpu, "bad_user.cu", bad)
        .err()
        .expect("a compile error");
    let msg = e.to_string();
    assert!(msg.contains("bad_user.cu(3)"), "{msg}");
}

#[test]
fn an_active_set_of_the_wrong_length_is_an_error() {
    let m = rxpipe::mesh::icosphere(2);
    let d = data(&m, 64);
    let e = cpu::run(&d, Query::VV, Some(&[true; 3])).unwrap_err();
    assert!(e.to_string().contains("3 active flags"), "{e}");
    assert!(cpu::for_each(&d, Query::FF, Some(&[]), |_, l| l.len()).is_err());
}

/// `r` with every list sorted (directed edges list in walk order; the sets are what compare).
fn as_sets(r: &rxpipe::patch::QueryResult) -> rxpipe::patch::QueryResult {
    let mut s = r.clone();
    for k in 0..s.len() {
        let (a, b) = (s.offsets[k] as usize, s.offsets[k + 1] as usize);
        s.items[a..b].sort_unstable();
    }
    s
}

/// Meshes directed edges hold: closed, with boundaries, with unused vertices, and the shared
/// meshes that are manifold.
fn manifold_meshes() -> Vec<Mesh> {
    let mut v = vec![
        rxpipe::mesh::icosphere(4),
        rxpipe::mesh::torus(1.0, 0.3, 48, 16),
        rxpipe::mesh::grid(12, 12),
    ];
    if let Some(dir) = common::meshes() {
        for name in common::SHARED {
            let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
            match DirectedEdges::build(&m.indices, m.vertex_count()) {
                Ok(_) => v.push(m),
                Err(e) => eprintln!("{name}: {e}"),
            }
        }
    }
    v
}

#[test]
fn directed_edges_answer_every_query_as_sets_and_refuse_what_they_cannot_hold() {
    let meshes = manifold_meshes();
    assert!(meshes.len() >= 3);
    for m in &meshes {
        let d = DirectedEdges::build(&m.indices, m.vertex_count()).unwrap();
        assert_eq!(d.face_edge.len(), m.triangle_count());
        for q in Query::ALL {
            let want = reference(&m.indices, m.vertex_count(), q);
            let got = d.query(q);
            assert_eq!(got.offsets, want.offsets, "{} {q}: list lengths", m.name);
            assert_eq!(as_sets(&got), as_sets(&want), "{} {q}", m.name);
            if matches!(q, Query::FV | Query::FE | Query::EV) {
                assert_eq!(got, want, "{} {q}: in the documented order", m.name);
            }
        }
    }
    let msg = |m: &Mesh| {
        DirectedEdges::build(&m.indices, m.vertex_count())
            .unwrap_err()
            .to_string()
    };
    let bad = &awkward()[0];
    assert!(msg(bad).contains("edge"), "{}", msg(bad));
    let flipped = Mesh::new("flipped", bad.positions.clone(), vec![0, 1, 2, 0, 1, 3]);
    assert!(
        msg(&flipped).contains("from vertex 0 to 1"),
        "{}",
        msg(&flipped)
    );
    let bow = Mesh::new("bow tie", bad.positions.clone(), vec![0, 1, 2, 1, 5, 6]);
    assert!(msg(&bow).contains("vertex 1"), "{}", msg(&bow));
    let degenerate = Mesh::new("degenerate", bad.positions.clone(), vec![0, 0, 2]);
    assert!(
        msg(&degenerate).contains("degenerate"),
        "{}",
        msg(&degenerate)
    );
}

#[test]
fn gpu_directed_edges_equal_the_host_walks() {
    let Some(gpu) = common::gpu() else { return };
    for m in manifold_meshes() {
        let d = DirectedEdges::build(&m.indices, m.vertex_count()).unwrap();
        let g = CudaPde::upload(gpu.clone(), &d).unwrap();
        for q in Query::ALL {
            let want = d.query(q);
            assert_eq!(g.run(q, &want).unwrap(), want, "{} {q}", m.name);
        }
    }
}

#[test]
fn patches_too_large_for_shared_memory_are_split_until_they_fit() {
    use rxpipe::patch::query::shared::fits_shared;
    // patches of up to 4096 faces: the largest need more shared memory than a block has
    let m = rxpipe::mesh::icosphere(6);
    let o = rxpipe::patch::PatchOptions {
        max_faces: 4096,
        ..Default::default()
    };
    let p = rxpipe::patch::cpu::patch(&m, &o).unwrap();
    let d = PatchData::build(&m, &p).unwrap();
    let unfit = d.patches.iter().filter(|q| !fits_shared(q)).count();
    assert!(unfit > 0, "every patch fits: the test needs larger ones");
    let (fp, fd) = rxpipe::patch::fit(&m, &p, fits_shared).unwrap();
    assert!(fd.patches.iter().all(fits_shared));
    assert!(
        fp.report.patches >= p.report.patches + unfit,
        "{}",
        fp.report
    );
    // (halves that still do not fit are split again)
    assert!(fp.report.split >= p.report.split + unfit, "{}", fp.report);
    // every face in one patch, every patch connected: the queries equal the index buffer's
    let vv = cpu::run(&fd, Query::VV, None).unwrap();
    let want = cpu::run(&data(&m, 512), Query::VV, None).unwrap();
    assert_eq!(vv, want, "VV over the split patches");
    // patches that fit are left alone
    let (same, _) = rxpipe::patch::fit(&m, &fp, fits_shared).unwrap();
    assert_eq!(same.patch_of_face, fp.patch_of_face);
    // the GPU refuses the unsplit data, naming the patch, and answers over the split data
    if let Some(gpu) = common::gpu() {
        use rxpipe::patch::query::cuda::{CudaQueries, DevicePatchData};
        let e = DevicePatchData::upload(&gpu, &d).err().expect("too large");
        assert!(e.to_string().contains("shared memory"), "{e}");
        let qg = CudaQueries::new(gpu.clone()).unwrap();
        let dd = DevicePatchData::upload(&gpu, &fd).unwrap();
        for q in Query::ALL {
            assert_eq!(
                qg.run(&dd, q, None).unwrap(),
                cpu::run(&fd, q, None).unwrap(),
                "{q}"
            );
        }
    }
}

#[test]
fn gpu_lists_fill_only_from_the_data_they_were_laid_out_for() {
    let Some(gpu) = common::gpu() else { return };
    use rxpipe::patch::query::cuda::{CudaQueries, DevicePatchData, Rows};
    let qg = CudaQueries::new(gpu.clone()).unwrap();
    let small = DevicePatchData::upload(&gpu, &data(&rxpipe::mesh::icosphere(2), 512)).unwrap();
    let big = DevicePatchData::upload(&gpu, &data(&rxpipe::mesh::icosphere(4), 512)).unwrap();
    let mut lists = qg.layout(&small, Query::VV, None, Rows::Patch).unwrap();
    let e = qg.fill(&big, &mut lists).unwrap_err();
    assert!(e.to_string().contains("other patch data"), "{e}");
    let e = lists.download(&gpu, &big).unwrap_err();
    assert!(e.to_string().contains("other patch data"), "{e}");
    qg.fill(&small, &mut lists).unwrap();
}
