//! The binary as a user meets it: bad input is an error naming the cause (exit 1), memory is
//! checked before it is used, and a panic is reported as a bug (exit 70) without a backtrace.

#[path = "../../../tests/common/mod.rs"]
mod common;
mod program;

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

/// `render --out` writes the format its extension names, refuses formats it cannot write, and
/// never writes over a file the scene was read from (a glTF's buffer included), even with --force.
#[test]
fn render_output_follows_the_extension_and_spares_the_inputs() {
    let dir = common::tmp_dir("render-out");
    let render = |scene: &std::path::Path, out: &std::path::Path, force: bool| {
        let force: &[&str] = if force { &["--force"] } else { &[] };
        render_small(scene, out, force).output().unwrap()
    };
    // a glTF with an external buffer: a triangle facing +z
    let bin: Vec<u8> = [0f32, 0., 0., 1., 0., 0., 0., 1., 0.]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    std::fs::write(dir.join("tri.bin"), &bin).unwrap();
    let gltf = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
        "bufferViews":[{"buffer":0,"byteLength":36}],"buffers":[{"uri":"tri.bin","byteLength":36}]}"#;
    let scene = dir.join("tri.gltf");
    std::fs::write(&scene, gltf).unwrap();
    let jpg = dir.join("frame.jpg");
    let o = render(&scene, &jpg, false);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&jpg).unwrap();
    assert_eq!(&bytes[..3], &[0xff, 0xd8, 0xff], "a JPEG");
    let png = dir.join("frame.PNG");
    assert!(render(&scene, &png, false).status.success());
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    let bmp = dir.join("frame.bmp");
    let o = render(&scene, &bmp, false);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(".png or .jpg"), "{}", stderr(&o));
    assert!(!bmp.exists());
    // the buffer the scene reads is an input: refused even with --force, and left as it was
    let target = dir.join("tri.bin");
    std::fs::rename(&target, dir.join("keep.bin")).unwrap();
    std::fs::copy(dir.join("keep.bin"), &target).unwrap();
    let as_png = dir.join("tri.png");
    std::fs::copy(&target, &as_png).unwrap();
    let gltf_png = gltf.replace("tri.bin", "tri.png");
    let scene2 = dir.join("tri2.gltf");
    std::fs::write(&scene2, gltf_png).unwrap();
    let o = render(&scene2, &as_png, true);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("is an input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&as_png).unwrap(), bin);
    // a missing buffer is named
    std::fs::remove_file(&as_png).unwrap();
    let o = render(&scene2, &dir.join("x.png"), false);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("tri.png") && stderr(&o).contains("buffer 0"),
        "{}",
        stderr(&o)
    );
    // a folder, or a file in a folder that does not exist, is refused before rendering
    std::fs::create_dir_all(dir.join("frames.png")).unwrap();
    let o = render(&scene, &dir.join("frames.png"), true);
    assert!(stderr(&o).contains("is a folder"), "{}", stderr(&o));
    let o = render(&scene, &dir.join("no/such.png"), false);
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    // the other commands that write spare a glTF's buffers as well, even with --force (the
    // buffer named .obj so that the mesh tools would write it)
    std::fs::write(dir.join("tri.obj"), &bin).unwrap();
    let scene3 = dir.join("tri3.gltf");
    std::fs::write(&scene3, gltf.replace("tri.bin", "tri.obj")).unwrap();
    let (s3, obj) = (scene3.to_str().unwrap(), dir.join("tri.obj"));
    let o3 = obj.to_str().unwrap();
    for args in [
        vec!["query", s3, "--query", "vv", "--out", o3, "--force"],
        vec!["reindex", s3, o3, "--force"],
        vec!["merge", s3, s3, "--out", o3, "--force"],
    ] {
        let o = rxpipe(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("is an input"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(&obj).unwrap(), bin, "{args:?}");
    }
    // and an OBJ's material library and the images it names
    let mtl = dir.join("lib.mtl");
    std::fs::write(&mtl, "newmtl a\nmap_Kd tex.png\n").unwrap();
    std::fs::write(dir.join("tex.png"), b"not read").unwrap();
    let quad = dir.join("quad.obj");
    std::fs::write(
        &quad,
        "mtllib lib.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n",
    )
    .unwrap();
    let q = quad.to_str().unwrap();
    for target in ["lib.mtl", "tex.png"] {
        let t = dir.join(target);
        let before = std::fs::read(&t).unwrap();
        let o = rxpipe(&[
            "query",
            q,
            "--query",
            "fv",
            "--out",
            t.to_str().unwrap(),
            "--force",
        ])
        .output()
        .unwrap();
        assert!(
            stderr(&o).contains("is an input"),
            "{target}: {}",
            stderr(&o)
        );
        if target.ends_with(".png") {
            let o = render(&quad, &t, true);
            assert!(
                stderr(&o).contains("is an input"),
                "{target}: {}",
                stderr(&o)
            );
        }
        assert_eq!(std::fs::read(&t).unwrap(), before, "{target}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Blank output never goes without a word: a file with no triangles and a degenerate camera are
/// errors naming the cause; a frame in which every triangle faced away says so and exits 0.
#[test]
fn blank_frames_say_why() {
    let dir = common::tmp_dir("blank");
    let out = dir.join("f.png");
    let render = |scene: &std::path::Path, extra: &[&str]| {
        let extra: Vec<&str> = ["--force"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        render_small(scene, &out, &extra).output().unwrap()
    };
    let points = dir.join("points.obj");
    std::fs::write(&points, "v 0 0 0\nv 1 0 0\nv 0 1 0\n").unwrap();
    let o = render(&points, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("3 vertices and no triangles"),
        "{}",
        stderr(&o)
    );
    let toml = |camera: &str| {
        let p = dir.join("cam.toml");
        std::fs::write(
            &p,
            format!("[camera]\n{camera}\n[[object]]\ngenerator = \"icosphere\"\nlevel = 1\n"),
        )
        .unwrap();
        p
    };
    for (camera, says) in [
        (
            "eye = [0.0, 0.0, 3.0]\ntarget = [0.0, 0.0, 3.0]",
            "eye on its target",
        ),
        (
            "eye = [0.0, 0.0, 3.0]\ntarget = [0.0, 0.0, 0.0]\nfov_y = 0.0",
            "field of view",
        ),
        (
            "eye = [0.0, 3.0, 0.0]\ntarget = [0.0, 0.0, 0.0]",
            "up vector",
        ),
    ] {
        let o = render(&toml(camera), &[]);
        assert_eq!(o.status.code(), Some(1), "{camera}");
        assert!(stderr(&o).contains(says), "{camera}: {}", stderr(&o));
    }
    // one triangle seen from behind
    let back = dir.join("back.obj");
    std::fs::write(&back, "v 0 0 0\nv 0 1 0\nv 1 0 0\nf 1 2 3\n").unwrap();
    let toml_back = dir.join("back.toml");
    std::fs::write(
        &toml_back,
        "[camera]\neye = [0.3, 0.3, 3.0]\ntarget = [0.3, 0.3, 0.0]\n[[object]]\nmesh = \"back.obj\"\n",
    )
    .unwrap();
    let o = render(&toml_back, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("all 1 triangles faced away: try --cull none"),
        "{}",
        stderr(&o)
    );
    let o = render(&toml_back, &["--cull", "none"]);
    assert!(o.status.success());
    assert!(!stderr(&o).contains("nothing was drawn"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Many notes do not bury what matters: `render` prints why nothing was drawn first, then at most
/// 20 notes and a count of the rest, which `--json` lists in full.
#[test]
fn many_notes_are_counted_after_the_first() {
    let dir = common::tmp_dir("many-notes");
    let n = 30;
    let mut mtl = String::new();
    let mut obj = String::from("mtllib lib.mtl\nv 0 0 0\nv 0 1 0\nv 1 0 0\n");
    for i in 0..n {
        mtl += &format!("newmtl m{i}\nmap_Kd missing{i}.png\nmap_Bump bump.png\n");
        obj += &format!("usemtl m{i}\nf 1 2 3\n");
    }
    std::fs::write(dir.join("lib.mtl"), mtl).unwrap();
    std::fs::write(dir.join("many.obj"), obj).unwrap();
    std::fs::write(
        dir.join("back.toml"),
        "[camera]\neye = [0.3, 0.3, 3.0]\ntarget = [0.3, 0.3, 0.0]\n[[object]]\nmesh = \"many.obj\"\n",
    )
    .unwrap();
    let out = dir.join("f.png");
    let run = |json: bool| {
        let extra: &[&str] = if json {
            &["--force", "--json"]
        } else {
            &["--force"]
        };
        render_small(&dir.join("back.toml"), &out, extra)
            .output()
            .unwrap()
    };
    let o = run(false);
    assert!(o.status.success(), "{}", stderr(&o));
    let notes: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.starts_with("note: "))
        .map(String::from)
        .collect();
    // n missing textures, one note for map_Bump naming 8 materials, and why nothing was drawn
    assert_eq!(notes.len(), 21, "{notes:#?}");
    assert!(notes[0].contains("faced away"), "{notes:#?}");
    assert_eq!(
        notes[20],
        format!(
            "note: ... and {} more notes (--json lists them all)",
            n + 2 - 20
        )
    );
    let json: serde_json::Value = serde_json::from_slice(&run(true).stdout).unwrap();
    let all = json["notes"].as_array().unwrap();
    assert_eq!(all.len(), n + 2);
    let bump: Vec<&str> = all
        .iter()
        .filter_map(|v| v.as_str())
        .filter(|s| s.contains("map_Bump is not drawn"))
        .collect();
    assert_eq!(bump.len(), 1);
    assert!(bump[0].ends_with("'m7' and 22 more)"), "{}", bump[0]);
    let _ = std::fs::remove_dir_all(&dir);
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

#[test]
fn render_time_must_be_a_finite_number_of_seconds() {
    let d = common::tmp_dir("time");
    let out = d.join("t.png");
    for bad in ["nan", "inf", "soon"] {
        let o = render_small(std::path::Path::new("icosphere:1"), &out, &["--time", bad])
            .output()
            .unwrap();
        assert!(
            !o.status.success() && stderr(&o).contains("--time"),
            "{bad}: {}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
    let o = render_small(
        std::path::Path::new("icosphere:1"),
        &out,
        &["--time", "2.5"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // a scene without animations says nothing about them
    assert!(!stderr(&o).contains("animation"), "{}", stderr(&o));
}

#[test]
fn render_draws_from_the_camera_asked_for() {
    let Some(dir) = common::scenes() else { return };
    let d = common::tmp_dir("camera");
    let sponza = dir.join("sponza/Sponza.gltf");
    let (a, b, c) = (d.join("a.png"), d.join("b.png"), d.join("c.png"));
    let ok = |out: &std::path::Path, extra: &[&str]| {
        let o = render_small(&sponza, out, extra).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(out).unwrap()
    };
    // camera 0 is the starting view; camera 1 another
    let (first, start, second) = (
        ok(&a, &["--camera", "0"]),
        ok(&b, &[]),
        ok(&c, &["--camera", "1"]),
    );
    assert_eq!(first, start);
    assert_ne!(first, second);
    let o = render_small(&sponza, &d.join("x.png"), &["--camera", "4"])
        .output()
        .unwrap();
    assert!(
        !o.status.success() && stderr(&o).contains("offers 4 camera(s): 0 to 3"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("x.png").exists());
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

/// The covered pixels' extent (columns, rows) of a PNG whose background is its corner pixel.
fn covered_extent(png: &std::path::Path) -> (u32, u32) {
    let (w, h, rgba) = rxpipe::image::load_png(png).unwrap();
    let bg = &rgba[0..4];
    let (mut x0, mut x1, mut y0, mut y1) = (w, 0, h, 0);
    for y in 0..h {
        for x in 0..w {
            let i = 4 * (y * w + x) as usize;
            if &rgba[i..i + 4] != bg {
                (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
            }
        }
    }
    (x1.saturating_sub(x0), y1.saturating_sub(y0))
}

/// `--up` turns the framing so that the axis named points up, and `--azimuth` / `--elevation`
/// move the camera around the framed scene; a scene file without a camera frames its objects
/// whatever their size.
#[test]
fn the_camera_turns_from_the_command_line() {
    let d = common::tmp_dir("viewpoint");
    // a pole along z, 10 times longer than wide
    let mut pole = rxpipe::mesh::icosphere(3);
    for p in &mut pole.positions {
        *p *= rxpipe::glam::Vec3::new(0.1, 0.1, 1.0);
    }
    let mesh = d.join("pole.obj");
    rxpipe::io::save_mesh(&pole, &mesh).unwrap();
    let png = d.join("p.png");
    let extent = |extra: &[&str]| {
        let o = render_small(&mesh, &png, &[&["--force"], extra].concat())
            .output()
            .unwrap();
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        covered_extent(&png)
    };
    // stored Z-up and seen with y up, the pole runs towards the camera; with z up it stands
    let (w, h) = extent(&["--up", "z"]);
    assert!(h > 3 * w, "z up: {w} x {h}");
    let (w, h) = extent(&["--up", "-z", "--azimuth", "90"]);
    assert!(h > 3 * w, "-z up, from the side: {w} x {h}");
    let (w, h) = extent(&[]);
    assert!(h < 2 * w, "y up: {w} x {h}");
    // looking down the pole from above: a small disc
    let (w, h) = extent(&["--up", "z", "--elevation", "89"]);
    assert!(h < 2 * w && w < 20, "from above: {w} x {h}");
    for bad in [["--elevation", "90"], ["--up", "w"], ["--azimuth", "nan"]] {
        let o = render_small(&mesh, &png, &bad).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    // an object in millimetres in a scene file without a camera is framed as a mesh is
    let toml = d.join("mm.toml");
    std::fs::write(
        &toml,
        "[[object]]\nmesh = \"pole.obj\"\nscale = 1000.0\nrotate = [-90.0, 0.0, 0.0]\n",
    )
    .unwrap();
    let o = render_small(&toml, &png, &["--force"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (w, h) = covered_extent(&png);
    assert!(h > 3 * w && h > 30, "the scene file: {w} x {h}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Back-face culling that drops most of what is in view (an open surface from behind) is said,
/// with the way to draw both sides; a closed mesh, or the surface from its front, says nothing.
#[test]
fn culling_most_of_an_open_surface_is_said() {
    let d = common::tmp_dir("open");
    let png = d.join("g.png");
    let note = |scene: &str, extra: &[&str]| {
        let o = render_small(
            std::path::Path::new(scene),
            &png,
            &[&["--force"], extra].concat(),
        )
        .output()
        .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o).contains("--cull none")
    };
    // the grid faces +y: from above it is drawn, from below culled
    assert!(!note("grid:20", &[]));
    assert!(note("grid:20", &["--elevation", "-30"]));
    // most but not all: a bowl seen from below, its far rim turned towards the camera
    let mut bowl = rxpipe::mesh::grid(40, 40);
    for p in &mut bowl.positions {
        p.y = 0.8 * (p.x * p.x + p.z * p.z);
    }
    let bowl_obj = d.join("bowl.obj");
    rxpipe::io::save_mesh(&bowl, &bowl_obj).unwrap();
    let o = render_small(&bowl_obj, &png, &["--force", "--elevation", "-60"])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("back-face culling dropped") && !stderr(&o).contains("nothing"),
        "{}",
        stderr(&o)
    );
    assert!(!note("grid:20", &["--elevation", "-30", "--cull", "none"]));
    assert!(!note("icosphere:3", &["--elevation", "-30"]));
    let _ = std::fs::remove_dir_all(&d);
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
