//! smooth (a part of the stages tests).

use super::*;

/// Smoothing written independently from the plain index buffer: neighbours from the distinct
/// edges (uniform) or every face's corners (cotangent), boundary vertices (an edge with other
/// than two faces) fixed, Jacobi steps in float64.
fn smooth_reference(m: &Mesh, s: &Smooth) -> Vec<DVec3> {
    let n = m.vertex_count();
    let mut edge_faces = std::collections::HashMap::<(u32, u32), u32>::new();
    for t in m.indices.chunks_exact(3) {
        let mut seen = vec![];
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let key = (a.min(b), a.max(b));
            if !seen.contains(&key) {
                *edge_faces.entry(key).or_default() += 1;
                seen.push(key);
            }
        }
    }
    let mut fixed = vec![false; n];
    for (&(a, b), &c) in &edge_faces {
        if c != 2 {
            fixed[a as usize] = true;
            fixed[b as usize] = true;
        }
    }
    let mut p: Vec<DVec3> = m.positions.iter().map(|v| v.as_dvec3()).collect();
    for _ in 0..s.iterations {
        let mut acc = vec![(DVec3::ZERO, 0.0f64); n];
        match s.method {
            SmoothMethod::Uniform => {
                for &(a, b) in edge_faces.keys() {
                    if a != b {
                        let (pa, pb) = (p[a as usize], p[b as usize]);
                        acc[a as usize].0 += pb - pa;
                        acc[a as usize].1 += 1.0;
                        acc[b as usize].0 += pa - pb;
                        acc[b as usize].1 += 1.0;
                    }
                }
            }
            SmoothMethod::Cotangent => {
                for t in m.indices.chunks_exact(3) {
                    for k in 0..3 {
                        let (i, j) = (t[(k + 1) % 3] as usize, t[(k + 2) % 3] as usize);
                        let (a, b) = (p[i] - p[t[k] as usize], p[j] - p[t[k] as usize]);
                        let sin = a.cross(b).length();
                        if sin == 0.0 {
                            continue;
                        }
                        let w = 0.5 * a.dot(b) / sin;
                        acc[i].0 += w * (p[j] - p[i]);
                        acc[i].1 += w;
                        acc[j].0 += w * (p[i] - p[j]);
                        acc[j].1 += w;
                    }
                }
            }
        }
        // the stage rounds to float after every step
        p = (0..n)
            .map(|v| {
                let (sum, w) = acc[v];
                let moved = if !fixed[v] && w > 0.0 {
                    p[v] + s.lambda as f64 / w * sum
                } else {
                    p[v]
                };
                moved.as_vec3().as_dvec3()
            })
            .collect();
    }
    p
}

/// A unit icosphere with noise along the normals and its top cut off (an open border).
fn noisy_open_sphere() -> Mesh {
    let mut m = rxpipe::mesh::icosphere(4);
    let mut state = 12345u32;
    for p in &mut m.positions {
        state = state.wrapping_mul(1664525).wrapping_add(1013904223);
        *p *= 1.0 + 0.05 * ((state >> 8) as f32 / (1u32 << 24) as f32 - 0.5);
    }
    let keep: Vec<u32> = m
        .indices
        .chunks_exact(3)
        .filter(|t| t.iter().all(|&i| m.positions[i as usize].z < 0.7))
        .flatten()
        .copied()
        .collect();
    m.indices = keep;
    m.normals = None;
    m
}

fn smooth_cases() -> Vec<Smooth> {
    [SmoothMethod::Uniform, SmoothMethod::Cotangent]
        .map(|method| Smooth {
            method,
            iterations: 8,
            lambda: 0.5,
        })
        .to_vec()
}

/// Every position within 1e-5 of the reference's (the sums run in another order).
fn assert_positions_close(got: &[Vec3], want: &[DVec3], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        let e = (g.as_dvec3() - *w).length();
        assert!(e <= 1e-5, "{what}: vertex {v}: {g:?} against {w:?}");
    }
}

#[test]
fn smoothing_matches_the_reference_keeps_the_border_and_removes_noise() {
    let m = noisy_open_sphere();
    let spread = |p: &[Vec3]| {
        let used: std::collections::HashSet<u32> = m.indices.iter().copied().collect();
        let r: Vec<f32> = used.iter().map(|&i| p[i as usize].length()).collect();
        let mean = r.iter().sum::<f32>() / r.len() as f32;
        (r.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / r.len() as f32).sqrt()
    };
    for s in smooth_cases() {
        let mut wm = WorkingMesh::new(m.clone());
        let mut ctx = PassContext::new(BackendKind::Cpu, None, 0);
        let msg = s.run(&mut wm, &mut ctx).unwrap();
        let got = wm.into_host().unwrap();
        let what = format!("smooth {}", s.method.name());
        assert!(got.normals.is_none(), "{what}: stale normals dropped");
        assert_positions_close(&got.positions, &smooth_reference(&m, &s), &what);
        assert!(
            spread(&got.positions) < 0.5 * spread(&m.positions),
            "{what}: {msg}: radius spread {} from {}",
            spread(&got.positions),
            spread(&m.positions)
        );
        // the border: vertices of the cut stay exactly where they were
        let border = got
            .positions
            .iter()
            .zip(&m.positions)
            .filter(|(a, b)| a == b)
            .count();
        assert!(border > 10 && msg.contains("fixed"), "{what}: {msg}");
    }
    assert!(passes::parse("smooth:cotangent:iterations=3:lambda=0.3").is_ok());
    for bad in [
        "smooth:iterations=lots",
        "smooth:lambda=2",
        "smooth:method=gauss",
    ] {
        assert!(passes::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn gpu_smoothing_equals_the_cpu_and_stays_on_the_device() {
    let Some(gpu) = common::gpu() else { return };
    let mut meshes = vec![noisy_open_sphere(), rxpipe::mesh::torus(1.0, 0.3, 48, 16)];
    if let Some(dir) = common::meshes() {
        meshes.push(rxpipe::io::load_mesh(dir.join("stanford-bunny.obj")).unwrap());
    }
    for m in meshes {
        for s in smooth_cases() {
            let mut c = WorkingMesh::new(m.clone());
            s.run(&mut c, &mut PassContext::new(BackendKind::Cpu, None, 0))
                .unwrap();
            let mut g = WorkingMesh::new(m.clone());
            s.run(
                &mut g,
                &mut PassContext::new(BackendKind::Cuda, Some(&gpu), 0),
            )
            .unwrap();
            assert!(g.on_device(), "the positions stay on the device");
            let (c, g) = (c.into_host().unwrap(), g.into_host().unwrap());
            let want: Vec<DVec3> = c.positions.iter().map(|p| p.as_dvec3()).collect();
            let what = format!("{} smooth {} (cuda)", m.name, s.method.name());
            assert_positions_close(&g.positions, &want, &what);
            assert_eq!(g.indices, m.indices, "{what}");
        }
    }
}
