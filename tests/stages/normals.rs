//! normals (a part of the stages tests).

use super::*;

/// The float64 reference: a serial scatter over the triangles, written independently of the
/// stage (the stage gathers per vertex over the adjacency on the CPU, scatters with atomics on
/// the GPU).
fn reference(m: &Mesh, mode: NormalsMode) -> Vec<DVec3> {
    let mut acc = vec![DVec3::ZERO; m.vertex_count()];
    for t in m.indices.chunks_exact(3) {
        let p: Vec<DVec3> = t
            .iter()
            .map(|&i| m.positions[i as usize].as_dvec3())
            .collect();
        let n = (p[1] - p[0]).cross(p[2] - p[0]);
        for k in 0..3 {
            let w = match mode {
                NormalsMode::Area => n,
                NormalsMode::Max => {
                    let a = p[(k + 1) % 3] - p[k];
                    let b = p[(k + 2) % 3] - p[k];
                    let d = a.length_squared() * b.length_squared();
                    if d == 0.0 {
                        DVec3::ZERO
                    } else {
                        n / d
                    }
                }
                _ => {
                    if n.length() == 0.0 {
                        DVec3::ZERO
                    } else {
                        let a = p[(k + 1) % 3] - p[k];
                        let b = p[(k + 2) % 3] - p[k];
                        let cos = (a.dot(b) / (a.length() * b.length())).clamp(-1.0, 1.0);
                        n.normalize() * cos.acos()
                    }
                }
            };
            acc[t[k] as usize] += w;
        }
    }
    acc.into_iter().map(|v| v.normalize_or_zero()).collect()
}

/// Every normal within 1e-5 (relative to the reference's unit length) of the reference, for the
/// vertices whose reference sum is well conditioned (not a near-cancellation of its faces).
fn assert_close(got: &[Vec3], want: &[DVec3], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let mut worst = 0.0f64;
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        let e = (g.as_dvec3() - *w).length();
        worst = worst.max(e);
        assert!(
            e <= 1e-5,
            "{what}: vertex {v}: {g:?} against {w:?} (error {e:e})"
        );
    }
    eprintln!("{what}: worst error {worst:e}");
}

fn test_meshes() -> Vec<Mesh> {
    let mut v = vec![
        rxpipe::mesh::icosphere(4),
        rxpipe::mesh::torus(1.0, 0.3, 48, 16),
        rxpipe::mesh::rings(5000),
    ];
    if let Some(dir) = common::meshes() {
        for f in ["stanford-bunny.obj", "fandisk.obj", "igea.ply"] {
            v.push(rxpipe::io::load_mesh(dir.join(f)).unwrap());
        }
    }
    for m in &mut v {
        m.normals = None;
    }
    v
}

#[test]
fn cpu_normals_match_the_float64_reference_by_every_implementation() {
    for m in test_meshes() {
        for mode in SMOOTH {
            let want = reference(&m, mode);
            for via in VIAS {
                let mut c = m.clone();
                Normals::new(mode).via(via).apply(&mut c).unwrap();
                assert_eq!(c.positions, m.positions);
                assert_eq!(c.indices, m.indices);
                let what = format!("{} {} via {}", m.name, mode.name(), via.name());
                assert_close(c.normals.as_ref().unwrap(), &want, &what);
            }
        }
    }
}

#[test]
fn normals_through_the_queries_use_the_patch_order_patching_and_refuse_flat() {
    let m = rxpipe::mesh::icosphere(3);
    let mut wm = WorkingMesh::new(m.clone());
    let mut ctx = PassContext::new(BackendKind::Cpu, None, 0);
    let msg = Normals::new(NormalsMode::Max)
        .via(NormalsVia::Vf)
        .run(&mut wm, &mut ctx)
        .unwrap();
    assert!(msg.contains("VF query"), "{msg}");
    assert!(passes::parse("normals:mode=flat:via=fv").is_err());
    assert!(passes::parse("normals:mode=max:via=vf").is_ok());
    assert_close(
        wm.host().unwrap().normals.as_ref().unwrap(),
        &reference(&m, NormalsMode::Max),
        "icosphere max via vf (stage)",
    );
}

#[test]
fn flat_normals_split_every_triangle() {
    let m = rxpipe::mesh::icosphere(2);
    let mut f = m.clone();
    Normals::new(NormalsMode::Flat).apply(&mut f).unwrap();
    assert_eq!(f.vertex_count(), 3 * m.triangle_count());
    assert_eq!(
        f.indices,
        (0..3 * m.triangle_count() as u32).collect::<Vec<_>>()
    );
    let n = f.normals.as_ref().unwrap();
    for (t, tri) in m.indices.chunks_exact(3).enumerate() {
        let p: Vec<DVec3> = tri
            .iter()
            .map(|&i| m.positions[i as usize].as_dvec3())
            .collect();
        let want = (p[1] - p[0]).cross(p[2] - p[0]).normalize();
        for k in 0..3 {
            assert_eq!(f.positions[3 * t + k], m.positions[tri[k] as usize]);
            assert!((n[3 * t + k].as_dvec3() - want).length() < 1e-6);
        }
    }
}

#[test]
fn gpu_normals_match_the_float64_reference_and_stay_on_the_device() {
    let Some(gpu) = common::gpu() else { return };
    let cases = SMOOTH
        .iter()
        .flat_map(|&m| VIAS.map(|v| (m, v)))
        .chain([(NormalsMode::Flat, NormalsVia::Indices)]);
    let cases: Vec<_> = cases.collect();
    for m in test_meshes() {
        for &(mode, via) in &cases {
            let mut wm = WorkingMesh::new(m.clone());
            let mut ctx = PassContext::new(BackendKind::Cuda, Some(&gpu), 0);
            Normals::new(mode).via(via).run(&mut wm, &mut ctx).unwrap();
            assert!(wm.on_device(), "the normals stay on the device");
            let g = wm.into_host().unwrap();
            let what = format!("{} {} via {} (cuda)", m.name, mode.name(), via.name());
            if mode == NormalsMode::Flat {
                let mut c = m.clone();
                Normals::new(mode).apply(&mut c).unwrap();
                assert_eq!(g.positions, c.positions, "{what}");
                assert_eq!(g.indices, c.indices, "{what}");
                assert_close(
                    g.normals.as_ref().unwrap(),
                    &c.normals
                        .unwrap()
                        .iter()
                        .map(|n| n.as_dvec3())
                        .collect::<Vec<_>>(),
                    &what,
                );
            } else {
                assert_eq!(g.positions, m.positions, "{what}");
                assert_close(g.normals.as_ref().unwrap(), &reference(&m, mode), &what);
            }
        }
    }
}
