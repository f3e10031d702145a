//! The binary as a user meets it: bad input is an error naming the cause (exit 1), memory is
//! checked before it is used, and a panic is reported as a bug (exit 70) without a backtrace.

#[path = "../../../tests/common/mod.rs"]
mod common;
#[path = "../program/mod.rs"]
mod program;
mod render;
mod tools;

use std::process::{Command, Output};

fn rxpipe(args: &[&str]) -> Command {
    let mut c = Command::new(program::rxpipe_exe());
    c.args(args).env("RUST_BACKTRACE", "1");
    c
}

/// `render SCENE --backend cpu` at 64x48 into `out`, then `extra`.
fn render_small(scene: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> Command {
    let mut args = vec!["render", scene.to_str().unwrap(), "--backend", "cpu"];
    args.extend(["--width", "64", "--height", "48", "--out"]);
    args.push(out.to_str().unwrap());
    args.extend(extra);
    rxpipe(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs with the address space limited to `bytes` (RLIMIT_AS), as a machine with that much memory.
/// The limit counts address space reserved, not used: glibc reserves 64 MB for each thread's
/// malloc arena, so on a many-core machine a process would meet a small limit by reservations
/// alone. Two arenas and four worker threads make the child the same small machine everywhere.
#[cfg(unix)]
fn with_memory_limit(mut c: Command, bytes: u64) -> Output {
    c.env("MALLOC_ARENA_MAX", "2").env("RAYON_NUM_THREADS", "4");
    common::limit_child(&mut c, common::ChildLimit::Memory, bytes);
    c.output().expect("rxpipe runs")
}

#[test]
fn a_panic_is_reported_as_a_bug_without_a_backtrace() {
    let o = rxpipe(&["panic"]).output().unwrap();
    assert_eq!(o.status.code(), Some(70));
    let e = stderr(&o);
    assert!(
        e.contains("internal error") && e.contains("bug in rxpipe"),
        "{e}"
    );
    assert!(!e.contains("stack backtrace"), "{e}");
}

#[test]
fn bad_generator_specs_list_the_generators() {
    let o = rxpipe(&["asr", "gird:10"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("unknown generator 'gird'") && e.contains("icosphere:LEVEL"),
        "{e}"
    );
    assert!(!e.contains("No such file"), "{e}");
}

#[test]
fn huge_generator_specs_are_refused_before_allocating() {
    // the sizes a user tried: each grew past 10 GB or asked for 40 GB at once before
    for spec in [
        "grid:70000",
        "rings:1000000000",
        "torus:100000",
        "icosphere:14",
    ] {
        // (as a machine of 8 GB: a big host has the memory for some of them)
        let o = with_memory_limit(rxpipe(&["asr", spec]), 8 << 30);
        assert_eq!(o.status.code(), Some(1), "{spec}");
        let e = stderr(&o);
        assert!(
            e.contains("would need") || e.contains("32-bit indices"),
            "{spec}: {e}"
        );
        assert!(
            !e.contains("backtrace") && !e.contains("memory allocation"),
            "{spec}: {e}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_memory_limit_is_met_with_an_error_naming_the_size() {
    // 4 M triangles: the mesh fits in 600 MB, the naive geometry stage's 12 M shaded vertices
    // (about 820 MB) do not; without the check the allocator would abort the process. The
    // pipeline's footprint refuses it before any stage runs
    let o = with_memory_limit(
        rxpipe(&["asr", "rings:4000000", "--backend", "cpu"]),
        600 << 20,
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("through the naive strategy on the CPU") && e.contains("would need"),
        "{e}"
    );
    // render: the mesh (1.2 GB while generated) fits in 2 GB, the whole pipeline does not; it
    // is refused before the mesh is generated, with the figure it needs
    let png = common::tmp_dir("memory-limit").join("x.png");
    let mut c = rxpipe(&["render", "icosphere:10", "--backend", "cpu", "--out"]);
    c.arg(&png);
    let o = with_memory_limit(c, 2 << 30);
    assert!(!png.exists());
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("icosphere:10 (20971520 triangles) through the hash strategy")
            && e.contains("would need")
            && e.contains("available"),
        "{e}"
    );
    // a generator past the limit is refused before generating
    let o = with_memory_limit(rxpipe(&["asr", "rings:40000000"]), 600 << 20);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("rings:40000000") && e.contains("would need"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn a_benchmark_grid_too_large_is_refused_before_it_is_made() {
    if rxpipe::io::shared_meshes_dir().is_none() {
        eprintln!("skipped: ../shared/meshes not found (set RXPIPE_MESHES)");
        return;
    }
    // 139 M triangles: the grid itself (2.5 GB) fits in 4 GB, the pipeline that would prepare
    // it does not; the refusal names the strategy and the figures, and comes before the grid
    // is generated (the process never holds it)
    let o = with_memory_limit(
        rxpipe(&[
            "bench",
            "frame",
            "--backend",
            "cpu",
            "--strategies",
            "hash",
            "--meshes",
            "bunny-grid:2000",
        ]),
        4 << 30,
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("bunny-grid:2000 (138902000 triangles) through the hash strategy on the CPU")
            && e.contains("would need")
            && e.contains("available"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn a_frame_too_large_for_the_memory_is_refused_before_rendering() {
    // 16384 x 16384 pixels of colour and depth: 2.1 GB, past a 600 MB machine; the output file is
    // not made
    let dir = std::env::temp_dir().join(format!("rxpipe-bigframe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("big.png");
    let o = with_memory_limit(
        rxpipe(&[
            "render",
            "icosphere:2",
            "--backend",
            "cpu",
            "--width",
            "16384",
            "--height",
            "16384",
            "--out",
            png.to_str().unwrap(),
        ]),
        600 << 20,
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("16384x16384 frame") && e.contains("would need"),
        "{e}"
    );
    assert!(!png.exists());
    // a small frame is written once; a second run needs --force
    let small = |force: bool| {
        let mut args = vec!["render", "icosphere:2", "--backend", "cpu", "--width", "64"];
        args.extend(["--height", "48", "--out", png.to_str().unwrap()]);
        if force {
            args.push("--force");
        }
        rxpipe(&args).output().unwrap()
    };
    assert!(small(false).status.success());
    let again = small(false);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("use --force"), "{}", stderr(&again));
    assert!(small(true).status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `head`, 400 MB of `filler` and `tail` gzipped to `name` in a fresh folder.
#[cfg(unix)]
fn gz_with_filler(name: &str, head: &[u8], filler: &[u8], tail: &[u8]) -> std::path::PathBuf {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("rxpipe-gz-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    gz.write_all(head).unwrap();
    let block = filler.repeat((1 << 20) / filler.len());
    let mut written = 0;
    while written < 400 << 20 {
        gz.write_all(&block).unwrap();
        written += block.len();
    }
    gz.write_all(tail).unwrap();
    gz.finish().unwrap();
    path
}

// One triangle in 400 MB of filler, a few MB gzipped: the text never fits the 300 MB the process
// is given, the mesh does. Each text format is parsed from the stream.
#[cfg(unix)]
#[test]
fn gzipped_text_meshes_are_parsed_as_a_stream() {
    let cases = [
        (
            "comments.obj.gz",
            &b"v 0 0 0\nv 1 0 0\nv 0 1 0\n"[..],
            &b"# a comment line repeated to make the text large\n"[..],
            &b"f 1 2 3\n"[..],
        ),
        (
            "spaces.ply.gz",
            b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1",
            b"  \n \t ",
            b" 0\n3 0 1 2\n",
        ),
        (
            "loops.stl.gz",
            b"solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n",
            b"   \n",
            b"vertex 0 1 0\nendloop\nendfacet\nendsolid s\n",
        ),
    ];
    for (name, head, filler, tail) in cases {
        let path = gz_with_filler(name, head, filler, tail);
        let p = path.to_str().unwrap();
        let o = with_memory_limit(rxpipe(&["asr", p, "--backend", "cpu"]), 300 << 20);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {e}");
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("naive"),
            "{name}: {e}"
        );
    }
}

// One endless word, or one endless line: an error naming the line, in bounded memory.
#[cfg(unix)]
#[test]
fn gzipped_text_without_end_is_an_error_not_memory() {
    let cases = [
        ("word.ply.gz", &b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n"[..], "longer than"),
        ("line.obj.gz", &b"v 0 0 0\n"[..], "longer than 16 MB"),
        ("word.stl.gz", &b"solid s\nfacet normal 0 0 1\n"[..], "longer than"),
    ];
    for (name, head, says) in cases {
        let path = gz_with_filler(name, head, b"7777777777777777", b"\n");
        let p = path.to_str().unwrap();
        let o = with_memory_limit(rxpipe(&["asr", p, "--backend", "cpu"]), 300 << 20);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {e}");
        assert!(e.contains(says) && e.contains("line"), "{name}: {e}");
    }
}

/// `asr` re-indexes as `render` does, and measures the file as it is with --no-reindex: a mesh
/// whose every corner is its own vertex shades each vertex once per corner without re-indexing.
#[test]
fn asr_reindexes_as_render_does() {
    let dir = common::tmp_dir("asr");
    // a 2x2 quad grid as a soup of 8 triangles, 24 OBJ vertices (9 distinct)
    let mut obj = String::new();
    let mut k = 1;
    for y in 0..2 {
        for x in 0..2 {
            let (x, y) = (x as f32, y as f32);
            for t in [
                [(x, y), (x + 1.0, y), (x + 1.0, y + 1.0)],
                [(x, y), (x + 1.0, y + 1.0), (x, y + 1.0)],
            ] {
                for (a, b) in t {
                    obj.push_str(&format!("v {a} {b} 0\n"));
                }
                obj.push_str(&format!("f {} {} {}\n", k, k + 1, k + 2));
                k += 3;
            }
        }
    }
    let mesh = dir.join("soup.obj");
    std::fs::write(&mesh, obj).unwrap();
    let asr = |extra: &[&str]| {
        let mut args = vec!["asr", mesh.to_str().unwrap(), "--backend", "cpu"];
        args.extend(["--strategy", "hash", "--json"]);
        args.extend(extra);
        let o = rxpipe(&args).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["rows"][0]["invocations"].as_u64().unwrap()
    };
    assert_eq!(asr(&["--no-reindex"]), 24);
    assert_eq!(asr(&[]), 9);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a new user met: `--strategy all` refused, an empty mesh and `rings:0` taken without a
/// word, a reversed face range called outside the mesh, a GPU method asked for by name falling
/// back to the CPU, and a sentence where JSON should hold the backend's name.
#[test]
fn small_things_a_new_user_met() {
    let d = common::tmp_dir("newuser");
    // `all` among the strategies, each measured once
    let o = rxpipe(&["asr", "icosphere:2", "--backend", "cpu", "--json"])
        .args(["--strategy", "hash,all"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 7, "{v}");
    assert_eq!(
        (v["backend"].as_str(), v["order"].as_str()),
        (Some("cpu"), Some("input"))
    );
    // no triangles: an error, not a table of zeros
    let empty = d.join("empty.obj");
    std::fs::write(&empty, "v 0 0 0\n").unwrap();
    let o = rxpipe(&["asr", empty.to_str().unwrap(), "--backend", "cpu"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no triangles"), "{}", stderr(&o));
    // a generator asked for less than it makes
    let png = d.join("r.png");
    let o = render_small(std::path::Path::new("rings:0"), &png, &[])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("at least 72"), "{}", stderr(&o));
    assert!(!png.exists());
    // a reversed range says so
    let mesh = d.join("m.obj");
    let o = rxpipe(&["reindex", "icosphere:2", mesh.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let sub = d.join("s.obj");
    let o = rxpipe(&["subset", mesh.to_str().unwrap(), sub.to_str().unwrap()])
        .args(["--faces", "5..2"])
        .output()
        .unwrap();
    assert!(stderr(&o).contains("'5..2' is reversed"), "{}", stderr(&o));
    // a GPU method by name without a GPU is an error, as --backend cuda is
    if common::gpu().is_none() {
        let o = rxpipe(&["reindex", "icosphere:2", sub.to_str().unwrap()])
            .args(["--method", "cuda-hash"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("--method cuda-hash") && !sub.exists(),
            "{}",
            stderr(&o)
        );
    }
    // JSON holds the backend's name, and its reason beside it
    let o = render_small(std::path::Path::new("icosphere:2"), &png, &["--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["backend"], "cpu", "{v}");
    assert!(
        v["backend_notice"].as_str().unwrap().contains("asked for"),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Output into a pipe that closes early (`rxpipe query MESH | head -1`) ends quietly, not as an
/// internal error.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    let mut child = rxpipe(&["query", "icosphere:6", "--query", "vv"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // (the read end is closed here, with most of the output unread)
    let o = child.wait_with_output().unwrap();
    // (neither an internal error nor "Broken pipe": nothing at all)
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// `bench frame --parts 2` on a scene with a blended object (the repository's textured scene):
/// the parts, their composite on the host (and on the GPU with CUDA) and the blended layer are
/// reported, the program's own way of running frames (on the GPU its stream held while a frame
/// is enqueued) included; a hang is a failure, not a wait.
#[test]
fn bench_frame_in_parts_reports_the_composite_and_the_layer() {
    let backend = if common::gpu().is_some() {
        "cuda"
    } else {
        "cpu"
    };
    let scene = common::repo("scenes/textured/textured.gltf");
    let mut child = rxpipe(&["bench", "frame", "--backend", backend, "--parts", "2"])
        .args(["--meshes", scene.to_str().unwrap(), "--strategies", "hash"])
        .args([
            "--size", "640x360", "--runs", "2", "--warmup", "1", "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(300) {
            child.kill().unwrap();
            panic!("bench frame --parts 2 did not finish in 300 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &v["rows"][0];
    assert_eq!(row["parts"], 2, "{row}");
    let t = &row["parts_times"];
    assert!(t["slowest_part_ms"].as_f64().unwrap() > 0.0, "{t}");
    assert!(t["composite_host_ms"].as_f64().unwrap() > 0.0, "{t}");
    assert!(t["layer_ms"].as_f64().is_some(), "the blended layer: {t}");
    assert_eq!(t["composite_gpu_ms"].is_f64(), backend == "cuda", "{t}");
    // re-balancing without parts is a usage error, not whole frames measured silently
    let o = rxpipe(&["bench", "frame", "--backend", "cpu", "--balance"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--parts"), "{}", stderr(&o));
}
