//! The mesh tools and the benchmarks as a user runs them (a part of the cli tests).

use super::*;

/// Benchmarks that need a GPU say so on a machine without one.
#[test]
fn gpu_benchmarks_say_they_need_a_gpu() {
    if common::gpu().is_some() {
        eprintln!("skipped: this machine has a GPU");
        return;
    }
    for b in ["geometry", "frame", "frustum", "rxmesh"] {
        let o = rxpipe(&["bench", b]).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{b}");
        assert!(
            stderr(&o).contains(&format!(
                "`rxpipe bench {b}` measures the CUDA backend and needs an NVIDIA GPU"
            )),
            "{b}: {}",
            stderr(&o)
        );
    }
}

/// On a fresh clone (no ../shared/meshes beside it) the benchmarks' defaults still run: the
/// shared meshes they name are measured as generated meshes of about their size, and a notice
/// says so.
#[test]
fn benchmarks_run_without_the_shared_meshes() {
    // (two levels below the temporary folder: neither ../shared nor ../../shared is there)
    let d = common::tmp_dir("fresh-clone").join("a").join("b");
    std::fs::create_dir_all(&d).unwrap();
    let run = |args: &[&str]| {
        rxpipe(args)
            .current_dir(&d)
            .env_remove("RXPIPE_MESHES")
            .output()
            .unwrap()
    };
    let o = run(&[
        "bench",
        "frame",
        "--backend",
        "cpu",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--strategies",
        "hash",
        "--meshes",
        "bunny,ogre,bunny-grid:2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bunny as icosphere:6") && stderr(&o).contains("ogre as torus:430"),
        "{}",
        stderr(&o)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("icosphere:6") && text.contains("rings:138902"),
        "{text}"
    );
    // how long each mesh took to load (or generate) and to prepare: one strategy, so every
    // row prepared its mesh
    let start = text
        .split("Time to start")
        .nth(1)
        .expect("a time-to-start table");
    let rows: Vec<&str> = start
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(" hash |"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 3, "{start}");
    for r in rows {
        let cells: Vec<&str> = r.trim_matches('|').split('|').map(str::trim).collect();
        for c in &cells[3..5] {
            assert!(c.parse::<f64>().is_ok_and(|t| t >= 0.0), "{r}");
        }
    }
    let o = run(&[
        "bench",
        "distance",
        "--pairs",
        "sphere_1000,tools_10000",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 2, "{v}");
    let _ = std::fs::remove_dir_all(d.parent().unwrap().parent().unwrap());
}

/// `rxpipe subdivide` writes the stage's result, the same bytes on a reuse strategy as on the
/// stage's own path, reports the strategy's runs, and refuses a bad strategy and an existing
/// output.
#[test]
fn subdivide_writes_the_same_mesh_on_every_path() {
    let d = common::tmp_dir("cli-subdivide");
    let (plain, hashed) = (d.join("plain.ply"), d.join("hash.ply"));
    let run = |out: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "subdivide",
            "torus:24",
            out.to_str().unwrap(),
            "--levels",
            "2",
        ];
        args.extend(["--backend", "cpu", "--force"]);
        args.extend(extra);
        rxpipe(&args).output().unwrap()
    };
    let o = run(&plain, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&hashed, &["--strategy", "hash", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        json["triangles"],
        json["triangles_in"].as_u64().unwrap() * 16
    );
    assert!(
        json["report"]
            .as_str()
            .unwrap()
            .contains("runs of Loop's rules through hash"),
        "{json}"
    );
    assert_eq!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&hashed).unwrap()
    );
    let o = run(&hashed, &["--strategy", "bogus"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("expected one of naive"),
        "{}",
        stderr(&o)
    );
    let o = rxpipe(&["subdivide", "torus:24", plain.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
}

/// `rxpipe envelope`: both envelopes written, the same bytes through a strategy as without one,
/// the report as JSON, and clear refusals (nothing to write, one file for both, a distance out
/// of range, a bad strategy, an existing output).
#[test]
fn envelope_writes_both_sides_alike_on_every_path() {
    let d = common::tmp_dir("cli-envelope");
    let (inner, outer, hashed) = (d.join("in.ply"), d.join("out.ply"), d.join("hash.ply"));
    let run = |extra: &[&str]| {
        let mut args = vec!["envelope", "torus:24", "--backend", "cpu", "--force"];
        args.extend(extra);
        rxpipe(&args).output().unwrap()
    };
    let o = run(&[
        "--inner",
        inner.to_str().unwrap(),
        "--outer",
        outer.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "--outer",
        hashed.to_str().unwrap(),
        "--strategy",
        "hash",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &json[0]["report"];
    assert_eq!(r["side"], "outer");
    assert_eq!(r["strategy"], "hash");
    assert!(r["offsets"]["max"].as_f64().unwrap() <= r["distance"].as_f64().unwrap());
    assert_eq!(
        std::fs::read(&outer).unwrap(),
        std::fs::read(&hashed).unwrap()
    );
    assert_ne!(
        std::fs::read(&inner).unwrap(),
        std::fs::read(&outer).unwrap()
    );
    let same = outer.to_str().unwrap();
    for (extra, says) in [
        (vec![], "nothing to write"),
        (vec!["--inner", same, "--outer", same], "same file"),
        (vec!["--outer", same, "--distance", "1.5"], "fraction"),
        (
            vec!["--outer", same, "--strategy", "bogus"],
            "expected one of naive",
        ),
    ] {
        let o = run(&extra);
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
    }
    let o = rxpipe(&["envelope", "torus:24", "--outer", same])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
}

/// `rxpipe bench processing` once on `meshes` with `more` arguments: its JSON report.
fn processing_report(meshes: &str, more: &[&str]) -> serde_json::Value {
    let mut args = vec!["bench", "processing", "--meshes", meshes];
    args.extend(more);
    args.extend(["--runs", "1", "--warmup", "0", "--json"]);
    let o = rxpipe(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `rxpipe bench processing --tasks` measures the tasks named and no others.
#[test]
fn the_processing_benchmark_measures_the_tasks_asked() {
    let json = processing_report("icosphere:1", &["--tasks", "envelope"]);
    let rows = json["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{json}");
    assert!(rows.iter().all(|r| r["task"] == "envelope"), "{json}");
    let o = rxpipe(&["bench", "processing", "--tasks", "smooth"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("smooth"), "{}", stderr(&o));
}

/// `rxpipe bench processing`: a row per strategy and the stage's own path, each strategy's runs
/// a triangle (naive's exactly three, multi's one a vertex), and `NAME@N` subdivides first.
#[test]
fn the_processing_benchmark_measures_every_strategy() {
    let json = processing_report("icosphere:2,icosphere:1@1", &[]);
    let rows = json["rows"].as_array().unwrap();
    let cpu: Vec<_> = rows.iter().filter(|r| r["backend"] == "cpu").collect();
    // per mesh: the stage and 7 strategies for each task
    assert_eq!(cpu.len(), 2 * 2 * 8, "{json}");
    let of = |task: &str, mesh: &str, path: &str| {
        *cpu.iter()
            .find(|r| r["task"] == task && r["mesh"] == mesh && r["path"] == path)
            .unwrap_or_else(|| panic!("{task} {mesh} {path} in {json}"))
    };
    let row = |mesh: &str, path: &str| of("subdivide", mesh, path);
    // the envelope: naive runs every corner, each vertex once is one run a vertex
    assert_eq!(
        of("envelope", "icosphere:2", "naive")["runs_per_triangle"],
        3.0
    );
    let once = of("envelope", "icosphere:2", "each vertex")["runs_per_triangle"]
        .as_f64()
        .unwrap();
    assert!((once - 162.0 / 320.0).abs() < 1e-3, "{once}");
    assert!(
        of("envelope", "icosphere:2", "hash")["check_ms"]
            .as_f64()
            .unwrap()
            >= 0.0
    );
    // icosphere:1 subdivided once is the same size as icosphere:2
    assert_eq!(row("icosphere:1@1", "stage")["triangles"], 320);
    assert_eq!(row("icosphere:2", "naive")["runs_per_triangle"], 3.0);
    let multi = row("icosphere:2", "multi")["runs_per_triangle"]
        .as_f64()
        .unwrap();
    // one run a vertex of the level: 162 + 480 vertices over 1280 triangles
    assert!((multi - 642.0 / 1280.0).abs() < 1e-3, "{multi}");
    let hash = row("icosphere:2", "hash")["runs_per_triangle"]
        .as_f64()
        .unwrap();
    assert!(hash > multi && hash < 3.0, "{hash}");
}

/// `rxpipe reindex`, `merge` and `subset` as a user runs them.
#[test]
fn reindex_merge_and_subset_as_a_user_runs_them() {
    let exe = program::rxpipe_exe();
    let d = common::tmp_dir("reindex-cli");
    // the paper's grid with 2x2 quads: 20 vertices, 9 used distinct
    let input = d.join("grid.obj");
    rxpipe::io::save_mesh(&rxpipe::reindex::paper_grid(2), &input).unwrap();
    let run = |args: &[&str]| {
        let o = std::process::Command::new(&exe)
            .args(args)
            .args(["--method", "parallel"])
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    let out = d.join("out.ply");
    let _ = std::fs::remove_file(&out);
    let (ok, text) = run(&["reindex", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(
        text.contains("20 -> 9 vertices (4 unused and 7 duplicate removed)"),
        "{text}"
    );
    let m = rxpipe::io::load_mesh(&out).unwrap();
    assert_eq!((m.vertex_count(), m.triangle_count()), (9, 8));
    // an existing output is kept unless --force; an input is never overwritten
    let (ok, text) = run(&["reindex", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(!ok && text.contains("--force"), "{text}");
    let (ok, text) = run(&[
        "reindex",
        input.to_str().unwrap(),
        input.to_str().unwrap(),
        "--force",
    ]);
    assert!(!ok && text.contains("is an input"), "{text}");
    assert_eq!(rxpipe::io::load_mesh(&input).unwrap().vertex_count(), 20);
    // merging the grid with itself stores each vertex once
    let merged = d.join("merged.obj");
    let _ = std::fs::remove_file(&merged);
    let (ok, text) = run(&[
        "merge",
        input.to_str().unwrap(),
        input.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let m = rxpipe::io::load_mesh(&merged).unwrap();
    assert_eq!((m.vertex_count(), m.triangle_count()), (9, 16));
    // the first quad's two triangles
    let part = d.join("part.obj");
    let _ = std::fs::remove_file(&part);
    let (ok, text) = run(&[
        "subset",
        input.to_str().unwrap(),
        part.to_str().unwrap(),
        "--faces",
        "0..2",
    ]);
    assert!(ok, "{text}");
    let m = rxpipe::io::load_mesh(&part).unwrap();
    assert_eq!((m.vertex_count(), m.triangle_count()), (4, 2));
    let (ok, text) = run(&["subset", input.to_str().unwrap(), part.to_str().unwrap()]);
    assert!(!ok && text.contains("--faces"), "{text}");
}

/// `bench frame` draws instances of one mesh on a grid (`MESH*N`), as many triangles as copies
/// would be, and refuses a count that is not a number.
#[test]
fn the_frame_benchmark_draws_instances() {
    let args = |m: &'static str| {
        [
            "bench",
            "frame",
            "--backend",
            "cpu",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--strategies",
            "hash",
            "--json",
            "--meshes",
            m,
        ]
    };
    let o = rxpipe(&args("icosphere:2*4")).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["meshes"][0]["mesh"], "icosphere:2*4");
    assert_eq!(v["meshes"][0]["triangles"], 4 * 320);
    assert!(v["rows"][0]["rasterized"].as_u64().unwrap() > 0, "{v}");
    let o = rxpipe(&args("icosphere:2*four")).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("bad instance count in 'icosphere:2*four'"),
        "{}",
        stderr(&o)
    );
}
