//! Patching: the contract (every face in exactly one patch, patches non-empty, connected through
//! shared edges and within the limit) checked independently on real, generated and awkward
//! meshes, and the report's counts against the result.

mod common;

use glam::Vec3;
use rxpipe::patch::{cpu, PatchOptions, Patching};
use rxpipe::Mesh;
use std::collections::HashMap;

/// Checks the contract with a union-find over the faces of each patch joined through shared
/// edges, independent of the patcher's own adjacency.
fn check(m: &Mesh, p: &Patching, limit: u32, what: &str) {
    let faces = m.triangle_count();
    assert_eq!(p.patch_of_face.len(), faces, "{what}");
    let n = p.report.patches;
    let mut size = vec![0usize; n];
    for &q in &p.patch_of_face {
        assert!((q as usize) < n, "{what}: patch {q} of {n}");
        size[q as usize] += 1;
    }
    assert!(size.iter().all(|&s| s > 0), "{what}: an empty patch");
    assert!(
        size.iter().all(|&s| s <= limit as usize),
        "{what}: a patch over {limit}"
    );
    assert_eq!(
        p.report.max_faces,
        *size.iter().max().unwrap_or(&0),
        "{what}"
    );
    assert_eq!(
        p.report.min_faces,
        *size.iter().min().unwrap_or(&0),
        "{what}"
    );
    // union-find of faces sharing an edge within one patch
    let mut parent: Vec<usize> = (0..faces).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut first: HashMap<(u32, u32, u32), usize> = HashMap::new();
    for (t, tri) in m.indices.chunks_exact(3).enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            if a == b {
                continue;
            }
            let key = (a.min(b), a.max(b), p.patch_of_face[t]);
            match first.get(&key) {
                Some(&o) => {
                    let (ra, rb) = (root(&mut parent, o), root(&mut parent, t));
                    parent[ra] = rb;
                }
                None => {
                    first.insert(key, t);
                }
            }
        }
    }
    let mut roots = vec![usize::MAX; n];
    for t in 0..faces {
        let r = root(&mut parent, t);
        let q = p.patch_of_face[t] as usize;
        if roots[q] == usize::MAX {
            roots[q] = r;
        }
        assert_eq!(roots[q], r, "{what}: patch {q} is not connected (face {t})");
    }
}

fn opts(limit: u32) -> PatchOptions {
    PatchOptions {
        max_faces: limit,
        ..Default::default()
    }
}

#[test]
fn generated_meshes_patch_within_the_limit() {
    for (m, limit) in [
        (rxpipe::mesh::icosphere(5), 512),
        (rxpipe::mesh::icosphere(3), 64),
        (rxpipe::mesh::torus(1.0, 0.3, 64, 24), 100),
        (rxpipe::mesh::grid(40, 40), 512),
        (rxpipe::mesh::rings(20_000), 256),
    ] {
        let p = cpu::patch(&m, &opts(limit)).unwrap();
        check(&m, &p, limit, &m.name);
        // Lloyd balances: the mean is not far below the limit
        assert!(
            p.report.mean_faces > limit as f64 / 4.0 || p.report.components > p.report.patches / 2,
            "{}: {}",
            m.name,
            p.report
        );
        eprintln!("{}: {}", m.name, p.report);
    }
}

#[test]
fn shared_meshes_patch_within_the_limit() {
    let Some(dir) = common::meshes() else { return };
    for f in common::SHARED {
        let m = rxpipe::io::load_mesh(dir.join(f)).unwrap();
        let p = cpu::patch(&m, &opts(512)).unwrap();
        check(&m, &p, 512, f);
        eprintln!("{f}: {}", p.report);
    }
}

#[test]
fn awkward_inputs_terminate_and_keep_the_contract() {
    let p = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
    // a single triangle
    let one = Mesh::new(
        "one",
        vec![p(0., 0., 0.), p(1., 0., 0.), p(0., 1., 0.)],
        vec![0, 1, 2],
    );
    let r = cpu::patch(&one, &opts(512)).unwrap();
    check(&one, &r, 512, "one triangle");
    assert_eq!((r.report.patches, r.report.isolated_faces), (1, 1));
    // no faces at all
    let empty = Mesh::new("empty", vec![p(0., 0., 0.)], vec![]);
    let r = cpu::patch(&empty, &opts(512)).unwrap();
    assert_eq!((r.report.patches, r.patch_of_face.len()), (0, 0));
    // 100,000 separate triangles: one patch each (RXMesh's issue #24: tiny components)
    let n = 100_000u32;
    let mut soup = Mesh::new("soup", Vec::new(), Vec::new());
    for t in 0..n {
        let o = t as f32;
        soup.positions
            .extend([p(o, 0., 0.), p(o + 0.5, 0., 0.), p(o, 0.5, 0.)]);
        soup.indices.extend([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    let r = cpu::patch(&soup, &opts(512)).unwrap();
    check(&soup, &r, 512, "soup");
    assert_eq!(r.report.components, n as usize);
    assert_eq!(r.report.patches, n as usize);
    // 3,000 triangles on one edge (non-manifold), and a fan of 3,000 around one vertex
    let mut fin = Mesh::new("fin", vec![p(0., 0., 0.), p(0., 0., 1.)], Vec::new());
    let mut fan = Mesh::new("fan", vec![p(0., 0., 0.)], Vec::new());
    for k in 0..3000u32 {
        let a = k as f32 * 0.002;
        fin.positions.push(p(a.cos(), a.sin(), 0.5));
        fin.indices.extend([0, 1, k + 2]);
        fan.positions.push(p(a.cos(), a.sin(), 0.));
    }
    for k in 0..2999u32 {
        fan.indices.extend([0, k + 1, k + 2]);
    }
    for (m, limit) in [(&fin, 512), (&fan, 512), (&fin, 7)] {
        let r = cpu::patch(m, &opts(limit)).unwrap();
        check(m, &r, limit, &m.name);
        assert!(r.report.patches >= m.triangle_count().div_ceil(limit as usize));
    }
    assert_eq!(
        cpu::patch(&fin, &opts(512))
            .unwrap()
            .report
            .non_manifold_edges,
        1
    );
    // degenerate and repeated triangles
    let mut odd = rxpipe::mesh::icosphere(2);
    odd.indices.extend([0, 0, 1, 5, 6, 7, 5, 6, 7, 2, 2, 2]);
    let r = cpu::patch(&odd, &opts(32)).unwrap();
    check(&odd, &r, 32, "degenerate and repeated");
    // a limit of one face: every face its own patch
    let m = rxpipe::mesh::icosphere(1);
    let r = cpu::patch(&m, &opts(1)).unwrap();
    check(&m, &r, 1, "limit 1");
    assert_eq!(r.report.patches, m.triangle_count());
}

#[test]
fn too_few_iterations_still_end_within_the_limit() {
    let m = rxpipe::mesh::icosphere(5);
    let o = PatchOptions {
        max_faces: 300,
        max_iterations: 1,
        ..Default::default()
    };
    let r = cpu::patch(&m, &o).unwrap();
    check(&m, &r, 300, "one iteration");
    assert_eq!(r.report.iterations, 1);
}

#[test]
fn bad_limits_and_bad_meshes_are_errors() {
    let m = rxpipe::mesh::icosphere(1);
    for limit in [0, 70_000] {
        let e = cpu::patch(&m, &opts(limit)).err().unwrap().to_string();
        assert!(e.contains("1 to 65535"), "{e}");
    }
    let mut bad = m.clone();
    bad.indices.push(1000);
    bad.indices.extend([0, 1]);
    let e = cpu::patch(&bad, &opts(64)).err().unwrap().to_string();
    assert!(e.contains("index 1000"), "{e}");
}

#[test]
fn patching_is_deterministic() {
    let m = rxpipe::mesh::torus(1.0, 0.3, 96, 32);
    let a = cpu::patch(&m, &opts(200)).unwrap();
    let b = cpu::patch(&m, &opts(200)).unwrap();
    assert_eq!(a.patch_of_face, b.patch_of_face);
}

#[test]
fn patch_colours_are_written_as_ply_that_loads_again() {
    let m = rxpipe::mesh::icosphere(3);
    let p = cpu::patch(&m, &opts(64)).unwrap();
    let colors = p.face_colors();
    assert_eq!(colors.len(), m.triangle_count());
    // faces of one patch share its colour; the first few patches' colours differ
    let first: Vec<[u8; 3]> = (0..8).map(rxpipe::patch::patch_color).collect();
    for i in 0..8 {
        for j in 0..i {
            assert_ne!(first[i], first[j]);
        }
    }
    let dir = common::tmp_dir("patch-ply");
    let path = dir.join("patches.ply");
    rxpipe::io::save_mesh_with_face_colors(&m, &colors, &path).unwrap();
    let back = rxpipe::io::load_mesh(&path).unwrap();
    assert_eq!(back.positions, m.positions);
    assert_eq!(back.indices, m.indices);
    let bytes = std::fs::read(&path).unwrap();
    let header = String::from_utf8_lossy(&bytes[..400.min(bytes.len())]).to_string();
    assert!(header.contains("property uchar red"), "{header}");
    // OBJ has no face colours
    let e = rxpipe::io::save_mesh_with_face_colors(&m, &colors, dir.join("p.obj"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains(".ply"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
