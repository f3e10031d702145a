#[path = "../../tests/common/mod.rs"]
mod common;
mod program;

#[test]
fn the_command_reports_the_distance_and_names_bad_input() {
    use std::process::Command;
    let dir = common::tmp_dir("distance-cli");
    // two unit tetrahedra 3 apart along x: faces x = 0.5 and x = 2.5 nearest
    let tet = |x: f32| {
        format!(
            "v {} 0 0\nv {} 1 0\nv {} 0 1\nv {} 0 0\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n",
            x + 0.5,
            x,
            x,
            x - 0.5
        )
    };
    let (a, b) = (dir.join("a.obj"), dir.join("b.obj"));
    std::fs::write(&a, tet(0.0)).unwrap();
    std::fs::write(&b, tet(3.0)).unwrap();
    // the command's JSON report, with `extra` arguments
    let report = |extra: &[&str]| -> serde_json::Value {
        let out = Command::new(program::rxpipe_exe())
            .args(["distance", "--backend", "cpu", "--json"])
            .args(extra)
            .args([&a, &b])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let j = report(&[]);
    // the nearest points: (0.5, 0, 0) of a and (2.5, 0, 0) of b
    let near = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-12;
    assert!(near(&j["distance"], 2.0), "{j}");
    assert!(
        near(&j["points"][0][0], 0.5) && near(&j["points"][1][0], 2.5),
        "{j}"
    );
    assert_eq!(j["backend"], "cpu");
    assert_eq!(j["touching"], false);
    // a and b crossing: said so, with the point where they meet
    let c = dir.join("c.obj");
    std::fs::write(&c, tet(0.2)).unwrap();
    let out = Command::new(program::rxpipe_exe())
        .args(["distance", "--backend", "cpu"])
        .args([&a, &c])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("the meshes touch or cross: least distance 0"),
        "{text}"
    );
    // the farthest points: (-0.5, 0, 0) of a and (3.5, 0, 0) of b
    let j = report(&["--max"]);
    assert!(near(&j["distance"], 4.0), "{j}");
    assert!(
        near(&j["points"][0][0], -0.5) && near(&j["points"][1][0], 3.5),
        "{j}"
    );
    assert_eq!(j["goal"], "greatest");
    // within a relative error: the exact answer here (one pair is nearest), and said so
    let j = report(&["--rel-error", "0.5"]);
    assert!(near(&j["distance"], 2.0), "{j}");
    assert_eq!(j["rel_error"], 0.5);
    let out = Command::new(program::rxpipe_exe())
        .args(["distance", "--backend", "cpu", "--rel-error", "0.25"])
        .args([&a, &b])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("within the relative error 0.25: at most 1.25 times the least"),
        "{text}"
    );
    let out = Command::new(program::rxpipe_exe())
        .args(["distance", "--backend", "cpu", "--rel-error", "-1"])
        .args([&a, &b])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("relative error -1"), "{err}");
    let out = Command::new(program::rxpipe_exe())
        .args(["distance", "--max", "--backend", "cpu"])
        .args([&a, &b])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("greatest distance 4.000000000"), "{text}");
    // a mesh without triangles, and a missing file, are named
    let pts = dir.join("points.obj");
    std::fs::write(&pts, "v 0 0 0\nv 1 0 0\n").unwrap();
    for (arg, want) in [
        (&pts, "has no triangles"),
        (&dir.join("nope.obj"), "nope.obj"),
    ] {
        let out = Command::new(program::rxpipe_exe())
            .args(["distance", "--backend", "cpu"])
            .args([arg, &a])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(want), "{err}");
    }
}

/// Touching and crossing pairs are ordinary input for the distance benchmark: they get their
/// row, with no capped search (no cap lies below 0).
#[test]
fn the_benchmark_measures_crossing_pairs() {
    let gpu = common::gpu();
    let r = rxpipe_app::bench::distance::run(gpu, &["icosphere:3+torus:32"], 0.1, 0, 1, &|_| {})
        .unwrap();
    let row = &r.rows[0];
    assert_eq!(row.distance, 0.0);
    assert_eq!(row.capped_cpu_ms, None);
    assert!(row.max.distance > 2.0, "{}", row.max.distance);
    if row.gpu_ms.is_some() {
        assert_eq!(row.gpu_equals_cpu, Some(true));
    }
    assert!(r
        .markdown()
        .contains("| icosphere:3+torus:32 | 1280 + 640 | 0.000000 |"));
}
