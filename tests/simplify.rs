//! The simplification stage: its promise (input and result within ε of each other, both ways)
//! measured by brute force on dense samples, independently of the stage's own test; the
//! topology, borders and attributes it keeps; the target; bad input and arguments; and the
//! stage in pipelines on both backends.

mod common;

use common::surface::{diagonal, dist2, roughen, sampled_distance, triangles};

use glam::{Vec2, Vec3, Vec4};
use rxpipe::backend::BackendKind;
use rxpipe::passes::simplify::{cpu, Simplify};
use rxpipe::passes::{self, MeshPass, PassContext, PassError, WorkingMesh};
use rxpipe::{Backend, Mesh, Pipeline, Renderer, Scene};
use std::collections::HashMap;

/// A height field over the grid: an open surface with a border, smooth hills and one ridge.
fn hills(n: u32) -> Mesh {
    let mut m = rxpipe::mesh::grid(n, n);
    for p in &mut m.positions {
        p.y = 0.25 * (2.0 * p.x).sin() * (3.0 * p.z).cos() + 0.2 * (0.3 - p.x.abs()).max(0.0);
    }
    m.normals = None;
    m
}

/// The cases: closed and open, smooth and rough, with ε as a fraction of the diagonal.
fn cases() -> Vec<(Mesh, f64)> {
    let mut open = roughen(rxpipe::mesh::icosphere(3), 0.04, 7);
    let keep: Vec<u32> = open
        .indices
        .chunks_exact(3)
        .filter(|t| t.iter().all(|&i| open.positions[i as usize].z < 0.6))
        .flatten()
        .copied()
        .collect();
    open.indices = keep;
    vec![
        (roughen(rxpipe::mesh::icosphere(3), 0.03, 1), 0.01),
        (rxpipe::mesh::torus(1.0, 0.3, 48, 16), 0.005),
        (open, 0.02),
        (hills(24), 0.004),
    ]
}

/// Vertices and the number of triangles of each edge, by position (so that a renumbering does
/// not matter).
fn edge_counts(m: &Mesh) -> HashMap<[[u32; 3]; 2], u32> {
    let key = |v: u32| m.positions[v as usize].to_array().map(f32::to_bits);
    let mut e = HashMap::new();
    for t in m.indices.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (key(t[k]), key(t[(k + 1) % 3]));
            *e.entry([a.min(b), a.max(b)]).or_insert(0) += 1;
        }
    }
    e
}

#[test]
fn input_and_result_stay_within_eps_of_each_other_both_ways() {
    let mut exceeded = 0;
    for (m, rel) in cases() {
        let eps = rel * diagonal(&m);
        let (s, out) = cpu::run(&m, eps, 0);
        let (there, back) = (sampled_distance(&s, &m), sampled_distance(&m, &s));
        eprintln!(
            "{}: {} -> {} triangles, eps {eps:.5}: result to input {there:.5}, input to result \
             {back:.5}; {out:?}",
            m.name,
            m.triangle_count(),
            s.triangle_count()
        );
        assert!(there <= eps * (1.0 + 1e-9), "{}: {there} > {eps}", m.name);
        assert!(back <= eps * (1.0 + 1e-9), "{}: {back} > {eps}", m.name);
        // it simplified: every case loses more than half its triangles
        assert!(
            2 * s.triangle_count() < m.triangle_count(),
            "{}: {} of {}",
            m.name,
            s.triangle_count(),
            m.triangle_count()
        );
        assert!(out.collapses > 0);
        // the measure can fail: four times the envelope leaves it somewhere
        let (wide, _) = cpu::run(&m, 4.0 * eps, 0);
        if sampled_distance(&wide, &m).max(sampled_distance(&m, &wide)) > eps {
            exceeded += 1;
        }
    }
    assert!(
        exceeded >= 3,
        "a wider envelope exceeded ε in {exceeded} cases"
    );
}

#[test]
fn topology_borders_and_attributes_are_kept() {
    for (mut m, rel) in cases() {
        // attributes that are functions of the position, to check each kept vertex's
        let uv = |p: Vec3| Vec2::new(p.x + 2.0 * p.z, p.y * p.y);
        let colour = |p: Vec3| Vec4::new(p.x.abs(), p.y.abs(), p.z.abs(), 1.0);
        m.uvs = Some(m.positions.iter().map(|&p| uv(p)).collect());
        m.colors = Some(m.positions.iter().map(|&p| colour(p)).collect());
        let (s, _) = cpu::run(&m, rel * diagonal(&m), 0);
        s.validate().unwrap();
        for (i, &p) in s.positions.iter().enumerate() {
            assert_eq!(s.uvs.as_ref().unwrap()[i], uv(p), "{}", m.name);
            assert_eq!(s.colors.as_ref().unwrap()[i], colour(p), "{}", m.name);
            assert!(m.positions.contains(&p), "{}: a vertex moved", m.name);
        }
        // every vertex is used
        let mut used = vec![false; s.vertex_count()];
        s.indices.iter().for_each(|&i| used[i as usize] = true);
        assert!(used.iter().all(|&u| u), "{}", m.name);
        // the same Euler characteristic, every edge with two triangles but the border, and the
        // border edge for edge the input's
        let (ea, eb) = (edge_counts(&m), edge_counts(&s));
        let euler = |m: &Mesh, e: &HashMap<_, u32>| {
            m.referenced_vertex_count() as i64 - e.len() as i64 + m.triangle_count() as i64
        };
        assert_eq!(euler(&m, &ea), euler(&s, &eb), "{}", m.name);
        let border = |e: &HashMap<[[u32; 3]; 2], u32>| {
            let mut b: Vec<_> = e.iter().filter(|(_, &n)| n == 1).map(|(k, _)| *k).collect();
            b.sort();
            b
        };
        assert_eq!(border(&ea), border(&eb), "{}", m.name);
        assert!(eb.values().all(|&n| n <= 2), "{}", m.name);
        // no triangle names a vertex twice, and none is repeated
        let mut seen = std::collections::HashSet::new();
        for t in s.indices.chunks_exact(3) {
            assert!(t[0] != t[1] && t[1] != t[2] && t[2] != t[0]);
            let mut k = [t[0], t[1], t[2]];
            k.sort();
            assert!(seen.insert(k), "{}: a triangle twice", m.name);
        }
    }
}

#[test]
fn a_target_stops_the_collapses_and_a_wider_envelope_removes_more() {
    let m = roughen(rxpipe::mesh::icosphere(3), 0.03, 1);
    let eps = 0.01 * diagonal(&m);
    let half = m.triangle_count().div_ceil(2);
    let (s, _) = cpu::run(&m, eps, half);
    // each collapse removes two triangles
    assert!(
        s.triangle_count() <= half && s.triangle_count() + 2 > half,
        "{}",
        s.triangle_count()
    );
    let counts: Vec<usize> = [0.002, 0.01, 0.05]
        .map(|r| cpu::run(&m, r * diagonal(&m), 0).0.triangle_count())
        .to_vec();
    assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
    // the same input gives the same result
    assert_eq!(cpu::run(&m, eps, 0).0, cpu::run(&m, eps, 0).0);
}

#[test]
fn non_manifold_parts_stay_and_bad_meshes_are_errors() {
    // a fan of a sphere with three extra triangles on one of its edges: that edge's vertices
    // stay, the rest simplifies
    let mut m = roughen(rxpipe::mesh::icosphere(3), 0.01, 3);
    let (a, b) = (m.indices[0], m.indices[1]);
    let n = m.positions.len() as u32;
    m.positions.push(Vec3::new(3.0, 3.0, 3.0));
    m.indices.extend([a, b, n]);
    let (s, out) = cpu::run(&m, 0.01 * diagonal(&m), 0);
    assert!(s.triangle_count() < m.triangle_count() / 2);
    assert!(out.fixed >= 3, "{out:?}");
    for v in [a, b, n] {
        assert!(s.positions.contains(&m.positions[v as usize]));
    }

    let run = |m: Mesh| {
        let mut wm = WorkingMesh::new(m);
        let mut ctx = PassContext::new(BackendKind::Cpu, None, 3);
        Simplify::default().run(&mut wm, &mut ctx)
    };
    let mut nan = rxpipe::mesh::icosphere(1);
    nan.name = "broken".into();
    nan.positions[5].y = f32::NAN;
    let e = run(nan).unwrap_err().to_string();
    assert!(
        e.contains("object 3") && e.contains("broken") && e.contains("vertex 5"),
        "{e}"
    );
    let mut wild = rxpipe::mesh::icosphere(1);
    wild.indices[4] = 1_000_000;
    let e = run(wild).unwrap_err().to_string();
    assert!(e.contains("1000000"), "{e}");
    let empty = Mesh::new("empty", vec![], vec![]);
    assert!(run(empty).unwrap().contains("nothing to do"));
    let point = Mesh::new("point", vec![Vec3::ONE; 3], vec![0, 1, 2]);
    assert!(run(point).unwrap().contains("nothing to do"));
}

#[test]
fn arguments_are_checked() {
    let Ok(passes::Stage::Mesh(p)) = passes::parse("simplify:0.02:target=0.25") else {
        panic!()
    };
    assert_eq!(p.name(), "simplify");
    for bad in [
        "simplify:eps=0",
        "simplify:eps=-0.1",
        "simplify:eps=2",
        "simplify:eps=NaN",
        "simplify:eps=wide",
        "simplify:target=1.5",
        "simplify:levels=2",
    ] {
        assert!(
            matches!(passes::parse(bad), Err(PassError::Argument { .. })),
            "{bad} was accepted"
        );
    }
}

fn simplified_frame(backend: Backend) -> (rxpipe::Frame, Vec<rxpipe::passes::StageReport>) {
    let renderer = Renderer::new(backend).unwrap();
    let m = roughen(rxpipe::mesh::icosphere(5), 0.01, 5);
    let scene = Scene::from_meshes("ball", vec![m]);
    let p = Pipeline::builder()
        .stages(&["simplify:eps=0.005"])
        .unwrap()
        .build(&renderer)
        .unwrap();
    let prepared = p.prepare(&scene).unwrap();
    let f = p
        .render_prepared(&prepared, &scene, &scene.camera, (160, 120), 0.0)
        .unwrap();
    (f, prepared.stages)
}

#[test]
fn the_stage_runs_in_a_pipeline_and_reports_what_it_did() {
    let (f, stages) = simplified_frame(Backend::Cpu);
    let r = stages.iter().find(|r| r.stage == "simplify").unwrap();
    assert_eq!(r.backend, BackendKind::Cpu);
    assert!(r.changed.starts_with("20480 -> "), "{}", r.changed);
    assert!(
        f.stats.geometry.triangles < 20480 / 2,
        "{}",
        f.stats.geometry.triangles
    );
    // the default normals stage ran after it, over the new triangles
    assert!(stages.iter().any(|r| r.stage == "normals"));
    assert!(f.color.chunks_exact(4).any(|p| p[0] > 100));
}

#[test]
fn gpu_the_stage_runs_on_the_host_and_the_frame_equals_the_cpu_one() {
    let Some(_gpu) = common::gpu() else { return };
    let (fc, _) = simplified_frame(Backend::Cpu);
    let (fg, stages) = simplified_frame(Backend::Cuda);
    let r = stages.iter().find(|r| r.stage == "simplify").unwrap();
    assert_eq!(r.backend, BackendKind::Cpu);
    assert_eq!(fc.stats.geometry.triangles, fg.stats.geometry.triangles);
    common::assert_frames_agree(&fc, &fg, "simplified sphere");
}

#[test]
fn a_shared_mesh_with_sharp_features_keeps_them() {
    let Some(dir) = common::meshes() else { return };
    let m = rxpipe::io::load_mesh(dir.join("fandisk.obj")).unwrap();
    let m = rxpipe::reindex::reindex(&m, &Default::default(), None)
        .unwrap()
        .mesh;
    let eps = 0.002 * diagonal(&m);
    let (s, out) = cpu::run(&m, eps, 0);
    eprintln!(
        "fandisk: {} -> {} triangles; {out:?}",
        m.triangle_count(),
        s.triangle_count()
    );
    assert!(s.triangle_count() * 3 < m.triangle_count());
    // every input vertex is within ε of the result: the creases' corners have not been cut
    let st = triangles(&s);
    for p in &m.positions {
        let d = st
            .iter()
            .map(|t| dist2(p.as_dvec3(), t))
            .fold(f64::INFINITY, f64::min);
        assert!(d.sqrt() <= eps * (1.0 + 1e-9));
    }
}

#[test]
fn every_width_of_the_rounds_gives_the_one_at_a_time_result() {
    for (m, rel) in cases() {
        let eps = rel * diagonal(&m);
        let (one, o1) = cpu::run_with(&m, eps, 0, 1);
        for width in [2, 7, 64] {
            let (w, ow) = cpu::run_with(&m, eps, 0, width);
            assert_eq!(w, one, "{} at width {width}", m.name);
            assert_eq!(ow, o1, "{} at width {width}", m.name);
        }
    }
}
