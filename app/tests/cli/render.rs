//! Rendering as a user runs it: outputs, cameras, what a frame says about itself (a part of the
//! cli tests).

use super::*;

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

/// `--gpus`: a frame spread over GPU ranks is the one-GPU picture byte for byte (on a one-GPU
/// host, three ranks named on it); GPUs that are not there, GPUs with the CPU backend and a count
/// of none are each a clear error.
#[test]
fn render_over_several_gpus_is_the_one_gpu_picture() {
    let dir = common::tmp_dir("render-gpus");
    let render = |out: &str, args: &[&str]| {
        rxpipe(&["render", "icosphere:4", "--width", "160", "--height", "120"])
            .args(["--out", dir.join(out).to_str().unwrap(), "--force"])
            .args(args)
            .output()
            .unwrap()
    };
    if common::gpu().is_some() {
        let one = render("one.png", &["--backend", "cuda"]);
        assert!(one.status.success(), "{}", stderr(&one));
        let spread = render("spread.png", &["--backend", "cuda", "--gpus", "list:0,0,0"]);
        assert!(spread.status.success(), "{}", stderr(&spread));
        let (a, b) = (
            std::fs::read(dir.join("one.png")).unwrap(),
            std::fs::read(dir.join("spread.png")).unwrap(),
        );
        assert!(
            a == b,
            "the picture over three ranks differs from one GPU's"
        );
    }
    let there = rxpipe::gpu::Gpu::count();
    let more = (there + 2).to_string();
    let o = render("more.png", &["--gpus", &more]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("GPUs were asked for") && stderr(&o).contains(&format!("has {there}")),
        "{}",
        stderr(&o)
    );
    let o = render("cpu.png", &["--backend", "cpu", "--gpus", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("backend is cpu"), "{}", stderr(&o));
    let o = render("none.png", &["--gpus", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("number of GPUs"), "{}", stderr(&o));
}
