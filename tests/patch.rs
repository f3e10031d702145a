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
    // the vertices numbered otherwise (as CPU and GPU re-indexing do): the same patches
    let n = m.vertex_count() as u32;
    // (a bijection: 7919 is prime and does not divide the 3072 vertices)
    let renumber = |v: u32| (v * 7919 + 13) % n;
    let mut r = m.clone();
    let mut positions = r.positions.clone();
    for v in 0..n {
        positions[renumber(v) as usize] = m.positions[v as usize];
    }
    r.positions = positions;
    r.normals = None;
    r.uvs = None;
    r.indices = m.indices.iter().map(|&v| renumber(v)).collect();
    let c = cpu::patch(&r, &opts(200)).unwrap();
    assert_eq!(a.patch_of_face, c.patch_of_face);
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
    // the same triangles, each corner its own vertex in its face's colour
    assert_eq!(back.triangle_count(), m.triangle_count());
    let corner = |mesh: &rxpipe::Mesh, i: usize| mesh.positions[mesh.indices[i] as usize];
    assert!((0..m.indices.len()).all(|i| corner(&back, i) == corner(&m, i)));
    assert!(back.colors.is_some());
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

/// Checks patch data against the plain index buffer: ownership unique and complete, owned
/// elements first, every local face's vertices (through FE and EV) equal to the mesh's in order,
/// the ribbon exactly the other patches' faces around the owned faces' vertices, and every owned
/// vertex's whole one-ring inside its patch.
fn check_data(m: &Mesh, p: &Patching, d: &rxpipe::patch::PatchData, what: &str) {
    use std::collections::{HashMap, HashSet};
    let nv = m.vertex_count();
    let mut owned_v = vec![0u32; nv];
    let mut owned_e = vec![0u32; d.edges.len()];
    let mut owned_f = vec![0u32; m.triangle_count()];
    // global edges of the mesh, independently
    let mut edge_set: HashSet<(u32, u32)> = HashSet::new();
    for t in m.indices.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            edge_set.insert((a.min(b), a.max(b)));
        }
    }
    assert_eq!(edge_set.len(), d.edges.len(), "{what}: edge count");
    for (q, pd) in d.patches.iter().enumerate() {
        let q = q as u32;
        let (ov, oe, of) = (
            pd.owned_vertices as usize,
            pd.owned_edges as usize,
            pd.owned_faces as usize,
        );
        for (i, &v) in pd.vertices.iter().enumerate() {
            assert_eq!(
                i < ov,
                d.vertex_owner.get(v as usize) == q,
                "{what}: owned vertices first"
            );
        }
        for (i, &e) in pd.edges.iter().enumerate() {
            assert_eq!(
                i < oe,
                d.edge_owner.get(e as usize) == q,
                "{what}: owned edges first"
            );
        }
        for (i, &f) in pd.faces.iter().enumerate() {
            assert_eq!(
                i < of,
                p.patch_of_face[f as usize] == q,
                "{what}: owned faces first"
            );
        }
        pd.vertices[..ov]
            .iter()
            .for_each(|&v| owned_v[v as usize] += 1);
        pd.edges[..oe]
            .iter()
            .for_each(|&e| owned_e[e as usize] += 1);
        pd.faces[..of]
            .iter()
            .for_each(|&f| owned_f[f as usize] += 1);
        // faces through FE and EV
        for (lf, &f) in pd.faces.iter().enumerate() {
            let got = pd.face_vertices(lf).map(|lv| pd.vertices[lv as usize]);
            let want = &m.indices[3 * f as usize..3 * f as usize + 3];
            assert_eq!(&got[..], want, "{what}: patch {q} face {f}");
        }
        // the ribbon
        let own_verts: HashSet<u32> = pd.faces[..of]
            .iter()
            .flat_map(|&f| m.indices[3 * f as usize..3 * f as usize + 3].to_vec())
            .collect();
        let want: HashSet<u32> = m
            .indices
            .chunks_exact(3)
            .enumerate()
            .filter(|(t, tri)| {
                p.patch_of_face[*t] != q && tri.iter().any(|v| own_verts.contains(v))
            })
            .map(|(t, _)| t as u32)
            .collect();
        let got: HashSet<u32> = pd.faces[of..].iter().copied().collect();
        assert_eq!(got, want, "{what}: patch {q} ribbon");
    }
    // every vertex a face uses is owned once; a vertex no face uses has no owner
    let mut used = vec![false; nv];
    m.indices.iter().for_each(|&v| used[v as usize] = true);
    for v in 0..nv {
        assert_eq!(owned_v[v], used[v] as u32, "{what}: vertex {v}");
        if !used[v] {
            assert_eq!(d.vertex_owner.get(v), u32::MAX, "{what}: unused vertex {v}");
        }
    }
    assert!(
        owned_e.iter().all(|&c| c == 1),
        "{what}: an edge not owned once"
    );
    assert!(
        owned_f.iter().all(|&c| c == 1),
        "{what}: a face not owned once"
    );
    // an owned vertex's whole one-ring lies in its patch
    let mut ring: HashMap<u32, Vec<u32>> = HashMap::new();
    for (t, tri) in m.indices.chunks_exact(3).enumerate() {
        for &v in tri {
            ring.entry(v).or_default().push(t as u32);
        }
    }
    for (v, faces) in ring {
        let pd = &d.patches[d.vertex_owner.get(v as usize) as usize];
        let local: HashSet<u32> = pd.faces.iter().copied().collect();
        assert!(
            faces.iter().all(|f| local.contains(f)),
            "{what}: vertex {v}'s one-ring"
        );
    }
}

#[test]
fn patch_data_matches_the_index_buffer() {
    let mut meshes = vec![
        (rxpipe::mesh::icosphere(4), 256),
        (rxpipe::mesh::torus(1.0, 0.3, 48, 16), 100),
        (rxpipe::mesh::grid(20, 20), 64),
    ];
    if let Some(dir) = common::meshes() {
        for f in [
            "stanford-bunny.obj",
            "suzanne.obj",
            "spot.obj",
            "fandisk.obj",
        ] {
            meshes.push((rxpipe::io::load_mesh(dir.join(f)).unwrap(), 512));
        }
    }
    for (m, limit) in meshes {
        let p = cpu::patch(&m, &opts(limit)).unwrap();
        let d = rxpipe::patch::PatchData::build(&m, &p).unwrap();
        check_data(&m, &p, &d, &m.name);
        let mem = d.memory();
        assert!(mem.ribbon_overhead >= 1.0);
        eprintln!("{}: {:?}", m.name, mem);
    }
}

#[test]
fn a_ribbon_past_16_bits_is_an_error_naming_the_patch() {
    // a fan of 70,000 triangles around one vertex: every patch's ribbon holds the whole fan
    let mut fan = Mesh::new("fan", vec![Vec3::ZERO], Vec::new());
    for k in 0..70_001u32 {
        let a = k as f32 * 1e-4;
        fan.positions.push(Vec3::new(a.cos(), a.sin(), 0.0));
    }
    for k in 0..70_000u32 {
        fan.indices.extend([0, k + 1, k + 2]);
    }
    let p = cpu::patch(&fan, &opts(512)).unwrap();
    let e = rxpipe::patch::PatchData::build(&fan, &p)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("patch") && e.contains("65535"), "{e}");
}

/// The awkward inputs of [`awkward_inputs_terminate_and_keep_the_contract`] and a few generated
/// meshes, with a limit each.
fn gpu_cases() -> Vec<(Mesh, u32, PatchOptions)> {
    let p = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
    let mut v = Vec::new();
    let one = Mesh::new(
        "one",
        vec![p(0., 0., 0.), p(1., 0., 0.), p(0., 1., 0.)],
        vec![0, 1, 2],
    );
    v.push((one, 512));
    let mut soup = Mesh::new("soup", Vec::new(), Vec::new());
    for t in 0..20_000u32 {
        let o = t as f32;
        soup.positions
            .extend([p(o, 0., 0.), p(o + 0.5, 0., 0.), p(o, 0.5, 0.)]);
        soup.indices.extend([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    v.push((soup, 512));
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
    v.push((fin.clone(), 512));
    v.push((fin, 7));
    v.push((fan, 512));
    let mut odd = rxpipe::mesh::icosphere(2);
    odd.indices
        .extend([0, 0, 1, 5, 6, 7, 5, 6, 7, 2, 2, 2, 3, 4, 3]);
    v.push((odd, 32));
    v.push((rxpipe::mesh::icosphere(1), 1));
    v.push((rxpipe::mesh::icosphere(6), 512));
    v.push((rxpipe::mesh::icosphere(4), 20));
    v.push((rxpipe::mesh::torus(1.0, 0.3, 96, 32), 200));
    v.push((rxpipe::mesh::grid(60, 40), 512));
    v.push((rxpipe::mesh::rings(20_000), 256));
    let mut cases: Vec<(Mesh, u32, PatchOptions)> =
        v.into_iter().map(|(m, l)| (m, l, opts(l))).collect();
    // the iterations run out: the oversized patches are split
    let few = PatchOptions {
        max_faces: 300,
        max_iterations: 1,
        ..Default::default()
    };
    cases.push((rxpipe::mesh::icosphere(5), 300, few));
    cases
}

/// Patches each case on the GPU and the CPU and asserts they are the same; returns how many
/// patches the CPU split.
fn gpu_equals_cpu(gpu: &rxpipe::gpu::Gpu, cases: Vec<(Mesh, u32, PatchOptions)>) -> usize {
    let mut split = 0;
    for (m, limit, o) in cases {
        let c = cpu::patch(&m, &o).unwrap();
        let g = rxpipe::patch::cuda::patch_indices(gpu, &m.indices, &o).unwrap();
        let what = format!("{} (limit {limit})", m.name);
        check(&m, &g, limit, &what);
        assert_eq!(g.patch_of_face, c.patch_of_face, "{what}: patches differ");
        let (mut a, mut b) = (g.report.clone(), c.report.clone());
        (a.ms, b.ms) = (0.0, 0.0);
        assert_eq!(a, b, "{what}: reports differ");
        split += c.report.split;
        eprintln!("{what}: {}", g.report);
    }
    split
}

// The generated cases are small enough for compute-sanitizer (.ci/sanitize runs this test alone);
// the shared meshes are the next test.
#[test]
fn gpu_patching_equals_the_cpu_patching() {
    let Some(gpu) = common::gpu() else { return };
    let split = gpu_equals_cpu(&gpu, gpu_cases());
    assert!(split > 0, "no case split a patch");
    // no faces at all
    let g = rxpipe::patch::cuda::patch_indices(&gpu, &[], &opts(512)).unwrap();
    assert_eq!(g.report.patches, 0);
    let e = rxpipe::patch::cuda::patch_indices(&gpu, &[0, 1, 2], &opts(0)).unwrap_err();
    assert!(e.to_string().contains("1 to 65535"), "{e}");
}

#[test]
fn gpu_patching_equals_the_cpu_on_the_shared_meshes() {
    let Some(gpu) = common::gpu() else { return };
    let Some(dir) = common::meshes() else { return };
    let cases = common::SHARED
        .iter()
        .map(|f| (rxpipe::io::load_mesh(dir.join(f)).unwrap(), 512, opts(512)))
        .collect();
    gpu_equals_cpu(&gpu, cases);
}
