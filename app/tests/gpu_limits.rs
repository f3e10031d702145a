//! The GPU at its limits: a mesh past 100 M triangles rendered and re-indexed, the device running
//! out of memory in the middle of a frame, two processes on the GPU at once, and a kernel cache
//! folder that cannot be written. Skips without a GPU unless RXPIPE_REQUIRE_GPU=1.

#[path = "../../tests/common/mod.rs"]
mod common;
mod program;

use rxpipe::mesh::Mesh;
use rxpipe::reindex::cuda::{self, GpuMethod};
use rxpipe::{Backend, Pipeline, Renderer, Scene, Strategy};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

/// The tests here take most of the GPU's memory (or all of it): one at a time.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// `copies` copies of `m` in the same place, each with its own vertices.
fn stacked(m: &Mesh, copies: usize) -> Mesh {
    let v = m.positions.len() as u32;
    Mesh {
        name: format!("{} x{copies}", m.name),
        positions: m.positions.repeat(copies),
        normals: m.normals.as_ref().map(|a| a.repeat(copies)),
        uvs: m.uvs.as_ref().map(|a| a.repeat(copies)),
        indices: (0..copies as u32)
            .flat_map(|c| m.indices.iter().map(move |&i| i + c * v))
            .collect(),
        base_color: m.base_color,
        ..Default::default()
    }
}

/// `m` as a triangle soup: every corner its own vertex, as a scanner or an STL file gives it.
fn soup(m: &Mesh) -> Mesh {
    Mesh {
        name: format!("{} soup", m.name),
        positions: m.indices.iter().map(|&i| m.positions[i as usize]).collect(),
        normals: None,
        uvs: None,
        indices: (0..m.indices.len() as u32).collect(),
        ..Default::default()
    }
}

// Copies stacked in one place draw exactly the picture of one copy (the later copies' fragments
// lose the depth test to identical ones), with every count times the copies; re-indexed as a
// soup they weld into exactly one copy's vertices. So the 100 M-triangle results are checked,
// value for value, against a 1.3 M-triangle mesh that the other GPU tests check against the CPU.
// The big buffers pass 2^31 bytes: the soup's 303 M corners are 3.6 GB of positions.
#[test]
fn a_hundred_million_triangles_render_and_reindex_like_one_copy() {
    let Some(gpu) = common::gpu() else { return };
    let _one = one_at_a_time();
    let one = rxpipe::mesh::icosphere(8);
    let copies = 100_000_000usize.div_ceil(one.indices.len() / 3);
    let small = Scene::from_meshes("one", vec![one.clone()]);
    let mut big = Scene::from_meshes("stacked", vec![stacked(&one, copies)]);
    big.camera = small.camera;
    assert!(big.objects[0].mesh.indices.len() / 3 >= 100_000_000);

    let r = Renderer::new(Backend::Cuda).unwrap();
    for name in ["hash", "multi"] {
        let p = Pipeline::builder()
            .strategy(Strategy::parse(name).unwrap())
            .build(&r)
            .unwrap();
        let frame = |s: &Scene| {
            let prepared = p.prepare(s).unwrap();
            p.render_prepared(&prepared, s, &s.camera, (1920, 1080), 0.0)
                .unwrap()
        };
        let (a, b) = (frame(&small), frame(&big));
        let (ra, rb) = (&a.stats.raster, &b.stats.raster);
        let c = copies as u64;
        assert!(ra.rasterized > 0, "{name}: nothing drawn");
        assert_eq!(
            (rb.triangles_in, rb.culled, rb.rejected, rb.clipped),
            (
                c * ra.triangles_in,
                c * ra.culled,
                c * ra.rejected,
                c * ra.clipped
            ),
            "{name}: raster counts"
        );
        assert_eq!(rb.rasterized, c * ra.rasterized, "{name}: raster counts");
        // (fragments count those that passed the depth test when drawn: which copy's do depends
        // on the order the tiles take them in)
        assert!(rb.fragments >= ra.fragments, "{name}: fragments");
        assert_eq!(b.stats.geometry.triangles, c * a.stats.geometry.triangles);
        assert!(a.depth == b.depth, "{name}: depth buffers differ");
        assert!(a.color == b.color, "{name}: images differ");
        eprintln!(
            "{name}: {} triangles, {} rasterised, {} fragments; raster {:.2} ms",
            rb.triangles_in,
            rb.rasterized,
            rb.fragments,
            rb.setup_ms + rb.bin_ms + rb.raster_ms
        );
    }
    drop((big, r));

    let small = soup(&one);
    let big = stacked(&small, copies);
    for method in [GpuMethod::Sort, GpuMethod::Hash] {
        let a = cuda::reindex(&gpu, &small, None, method).unwrap().mesh;
        let b = cuda::reindex(&gpu, &big, None, method).unwrap().mesh;
        assert_eq!(a.positions.len(), one.positions.len(), "{method:?}");
        assert!(b.positions == a.positions, "{method:?}: vertices differ");
        assert_eq!(b.indices.len(), copies * a.indices.len());
        for (k, chunk) in b.indices.chunks(a.indices.len()).enumerate() {
            assert!(chunk == a.indices, "{method:?}: copy {k}'s indices differ");
        }
    }
}

/// Takes every byte of device memory that can be had, in ever smaller pieces.
fn take_all_memory(gpu: &rxpipe::gpu::Gpu) -> Vec<cudarc::driver::CudaSlice<u8>> {
    let mut taken = Vec::new();
    for piece in [1usize << 30, 64 << 20, 1 << 20, 64 << 10] {
        while let Ok(b) = gpu.zeros::<u8>(piece, "the test's ballast") {
            taken.push(b);
        }
    }
    taken
}

#[test]
fn running_out_of_device_memory_mid_frame_is_an_error_and_the_next_frame_draws() {
    let Some(gpu) = common::gpu() else { return };
    let _one = one_at_a_time();
    let scene = Scene::from_meshes("sphere", vec![rxpipe::mesh::icosphere(5)]);
    let r = Renderer::new(Backend::Cuda).unwrap();
    let p = Pipeline::builder().build(&r).unwrap();
    let prepared = p.prepare(&scene).unwrap();
    let cam = &scene.camera;
    let small = p
        .render_prepared(&prepared, &scene, cam, (320, 240), 0.0)
        .unwrap();
    // the mesh is on the device and the small frame's buffers are made; a larger frame needs
    // larger raster buffers, and there is no memory left for them
    let ballast = take_all_memory(&gpu);
    assert!(!ballast.is_empty());
    let e = p
        .render_prepared(&prepared, &scene, cam, (3840, 2160), 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of GPU memory allocating"), "{e}");
    // another process cannot start on the full device: a clear error, not a panic
    let dir = common::tmp_dir("device-full");
    let o = render(&dir.join("cache"), &dir.join("a.png"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("memory") && !e.contains("panicked"), "{e}");
    assert!(!dir.join("a.png").exists());
    // the small frame's buffers are still there, and give the same picture
    drop(ballast);
    // (the ballast's memory goes back to the system at its stream's next synchronisation)
    gpu.stream.synchronize().unwrap();
    let again = p
        .render_prepared(&prepared, &scene, cam, (320, 240), 0.0)
        .unwrap();
    assert!(
        again.color == small.color,
        "the frame after running out differs"
    );
    let large = p
        .render_prepared(&prepared, &scene, cam, (3840, 2160), 0.0)
        .unwrap();
    assert!(large.stats.raster.rasterized > 0);
}

fn render(cache: &Path, out: &Path) -> Command {
    let mut c = Command::new(program::rxpipe_exe());
    c.args([
        "render",
        "icosphere:6",
        "--backend",
        "cuda",
        "--width",
        "160",
    ])
    .args(["--height", "120", "--out"])
    .arg(out)
    .env("RXPIPE_CACHE_DIR", cache);
    c
}

fn check(o: &Output, what: &str) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{what}: {e}");
    e
}

/// The names in `dir` that are not whole cache entries (a temporary file left behind).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".cubin"))
                .collect()
        })
        .unwrap_or_default()
}

// Two processes that start with an empty kernel cache compile and write the same entries at once;
// both draw, the same picture, and the cache holds only whole entries that a third run uses.
#[test]
fn two_processes_render_at_once_and_share_the_kernel_cache() {
    if common::gpu().is_none() {
        return;
    }
    let _one = one_at_a_time();
    let dir = common::tmp_dir("two-processes");
    let cache = dir.join("cache");
    let (a, b) = (dir.join("a.png"), dir.join("b.png"));
    let first = render(&cache, &a).spawn().unwrap();
    let second = render(&cache, &b).spawn().unwrap();
    check(&first.wait_with_output().unwrap(), "the first process");
    check(&second.wait_with_output().unwrap(), "the second process");
    let png = |p: &Path| std::fs::read(p).unwrap();
    assert!(
        png(&a) == png(&b),
        "the two processes drew different pictures"
    );
    let entries = std::fs::read_dir(&cache).unwrap().count();
    assert!(entries > 0, "nothing was cached");
    assert_eq!(leftovers(&cache), Vec::<String>::new());
    let c = dir.join("c.png");
    check(&render(&cache, &c).output().unwrap(), "the third process");
    assert!(png(&c) == png(&a));
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), entries);
    let _ = std::fs::remove_dir_all(&dir);
}

// A cache folder that cannot be made, is read-only or whose disk is full: the frame is drawn
// anyway (the kernels are compiled), a notice says the cache was not written, and no half-written
// file is left.
#[cfg(unix)]
#[test]
fn a_kernel_cache_that_cannot_be_written_is_a_notice_and_the_frame_draws() {
    use std::os::unix::fs::PermissionsExt;
    if common::gpu().is_none() {
        return;
    }
    let _one = one_at_a_time();
    let dir = common::tmp_dir("cache-unwritable");
    let notice = "could not write the kernel cache";

    // its parent is a file
    std::fs::write(dir.join("file"), b"not a folder").unwrap();
    let e = check(
        &render(&dir.join("file").join("cache"), &dir.join("a.png"))
            .output()
            .unwrap(),
        "a cache under a file",
    );
    assert!(e.contains(notice), "{e}");
    let reference = std::fs::read(dir.join("a.png")).unwrap();

    // read-only (unless we are root, whom permissions do not stop)
    let ro = dir.join("read-only");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), b"").is_ok() {
        eprintln!("notice: running as root, a read-only folder is writable; that case is skipped");
    } else {
        let e = check(
            &render(&ro, &dir.join("b.png")).output().unwrap(),
            "a read-only cache",
        );
        assert!(e.contains(notice), "{e}");
        assert!(std::fs::read(dir.join("b.png")).unwrap() == reference);
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();

    // a full disk: files may grow to 32 KiB (the picture fits, the compiled kernels do not)
    let full = dir.join("full");
    let mut c = render(&full, &dir.join("c.png"));
    common::limit_child(&mut c, common::ChildLimit::FileSize, 32 << 10);
    let e = check(&c.output().unwrap(), "a full cache disk");
    assert!(e.contains(notice), "{e}");
    assert_eq!(leftovers(&full), Vec::<String>::new());
    assert!(std::fs::read(dir.join("c.png")).unwrap() == reference);
    let _ = std::fs::remove_dir_all(&dir);
}
