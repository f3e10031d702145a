//! Replays the fuzz targets' inputs on the stable toolchain: every minimised input that once
//! crashed, hung or ate memory (fuzz/regressions/<target>/, named for what it found) and the
//! committed seeds (fuzz/seeds/<target>/: fuzz/seed.py and the minimised corpora of fuzzing runs) go through the same entry points as the targets in
//! fuzz/fuzz_targets/. Each must return (an error is fine) without panicking, within seconds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The entry point of fuzz target `target` (as in fuzz/fuzz_targets/<target>.rs).
fn run_target(target: &str, data: &[u8]) {
    // as the scene target does: a generated mesh past 256 MB is refused, whatever this machine
    // holds
    rxpipe::limits::cap_host(256 << 20);
    match target {
        "mesh" => drop(rxpipe::io::parse_meshes(data.to_vec(), "input", None)),
        "obj" | "ply" | "stl" => drop(rxpipe::io::parse_meshes(
            data.to_vec(),
            &format!("input.{target}"),
            None,
        )),
        "gltf" => drop(rxpipe::io::gltf::parse(data, "input.gltf", None)),
        "scene" => {
            if let Ok(text) = std::str::from_utf8(data) {
                drop(rxpipe::io::parse_scene(
                    text,
                    "input.toml",
                    Path::new("/nonexistent"),
                ));
            }
        }
        "spec" => {
            if let Ok(text) = std::str::from_utf8(data) {
                if let Ok(g) = rxpipe::mesh::Generator::parse(text) {
                    let (v, t) = g.counts();
                    if t <= 20_000 {
                        let m = g.generate(text).expect("a small spec generates");
                        assert_eq!((m.vertex_count() as u64, m.triangle_count() as u64), (v, t));
                    }
                }
            }
        }
        "stages" => {
            if let Ok(text) = std::str::from_utf8(data) {
                drop(rxpipe::passes::parse_list(&[text]));
            }
        }
        other => panic!("no fuzz target '{other}'"),
    }
}

fn inputs(dir: &str) -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(dir);
    let mut out = Vec::new();
    let Ok(targets) = std::fs::read_dir(&root) else {
        return out;
    };
    for t in targets.flatten() {
        let target = t.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(t.path()).into_iter().flatten().flatten() {
            out.push((target.clone(), f.path()));
        }
    }
    out.sort();
    out
}

fn replay(dir: &str) -> usize {
    let all = inputs(dir);
    for (target, path) in &all {
        let data = std::fs::read(path).unwrap();
        let start = Instant::now();
        run_target(target, &data);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{}: {:?}",
            path.display(),
            start.elapsed()
        );
    }
    all.len()
}

#[test]
fn regressions_found_by_fuzzing_stay_fixed() {
    let n = replay("regressions");
    assert!(n >= 2, "the regression inputs are missing ({n})");
}

#[test]
fn fuzz_seeds_load_without_panics() {
    let n = replay("seeds");
    assert!(n > 0, "the seeds are missing");
}
