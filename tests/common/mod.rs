//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod surface;

use std::path::PathBuf;

/// The shared meshes folder, or `None` with a printed notice (the test then returns early).
pub fn meshes() -> Option<PathBuf> {
    let d = rxpipe::io::shared_meshes_dir();
    if d.is_none() {
        eprintln!("notice: ../shared/meshes not found (set RXPIPE_MESHES); skipping this test");
    }
    d
}

/// The shared mesh pairs for distance queries (`distance/` of the shared meshes), or `None` with
/// a printed notice (a copy of the meshes may leave them out).
pub fn distance_meshes() -> Option<PathBuf> {
    let d = meshes()?.join("distance");
    if !d.is_dir() {
        eprintln!("notice: {} not found; skipping this test", d.display());
        return None;
    }
    Some(d)
}

/// The shared glTF scenes, or `None` with a printed notice.
pub fn scenes() -> Option<PathBuf> {
    // (a folder without scenes in it, such as a GPU bundle's made without --scene, counts as
    // absent: the tests would fail on its missing files instead of skipping)
    let d = rxpipe::io::shared_scenes_dir().filter(|d| d.join("sponza/Sponza.gltf").is_file());
    if d.is_none() {
        eprintln!(
            "notice: ../shared/scenes not found, or without its scenes (set RXPIPE_SCENES); \
             skipping this test"
        );
    }
    d
}

/// Every triangle mesh of the shared folder (not the distance pairs).
pub const SHARED: [&str; 10] = [
    "stanford-bunny.obj",
    "ogre.obj",
    "beast.obj",
    "rocker-arm.obj",
    "fandisk.obj",
    "teapot.obj",
    "spot.obj",
    "cow.obj",
    "suzanne.obj",
    "igea.ply",
];

/// The shared glTF scenes (files under [`scenes`]): materials, textures, alpha-tested and
/// blended surfaces, double-sided ones, vertex colours, texture settings.
pub const SCENE_FILES: [&str; 7] = [
    "sponza/Sponza.gltf",
    "FlightHelmet/FlightHelmet.gltf",
    "CesiumMilkTruck/CesiumMilkTruck.gltf",
    "TwoSidedPlane/TwoSidedPlane.gltf",
    "VertexColorTest/VertexColorTest.gltf",
    "TextureSettingsTest/TextureSettingsTest.gltf",
    "BoxTextured/BoxTextured.gltf",
];

/// A file of this repository by its path from the top: the tests of the application crate run
/// in its folder, the others (and every test on the GPU host) at the top.
pub fn repo(path: &str) -> PathBuf {
    let mut d = std::env::current_dir().expect("the current folder");
    loop {
        if d.join("scenes/default.toml").is_file() {
            return d.join(path);
        }
        if !d.pop() {
            return PathBuf::from(path);
        }
    }
}

pub fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rxpipe-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The GPU, or `None` with a printed notice when there is none (the test then returns early).
/// With `RXPIPE_REQUIRE_GPU=1` a missing GPU fails the test instead.
pub fn gpu() -> Option<std::sync::Arc<rxpipe::gpu::Gpu>> {
    gpu_with_cache(rxpipe::gpu::cache::default_dir())
}

pub fn gpu_with_cache(dir: Option<PathBuf>) -> Option<std::sync::Arc<rxpipe::gpu::Gpu>> {
    match rxpipe::gpu::Gpu::open(dir) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("RXPIPE_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("RXPIPE_REQUIRE_GPU=1 but the GPU cannot be used: {e}")
        }
        Err(e) => {
            eprintln!("notice: no GPU ({e}); skipping this test");
            None
        }
    }
}

/// A limit a child process runs under.
#[cfg(unix)]
#[derive(Clone, Copy)]
pub enum ChildLimit {
    /// its address space (RLIMIT_AS), as a machine with that much memory
    Memory,
    /// the size of any file it writes (RLIMIT_FSIZE), as a full disk; a write past it fails with
    /// EFBIG instead of the signal killing the process
    FileSize,
}

/// Makes `c` run under `limit` at `bytes`.
#[cfg(unix)]
pub fn limit_child(c: &mut std::process::Command, limit: ChildLimit, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit and signal are async-signal-safe and touch only the child.
    unsafe {
        c.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            let resource = match limit {
                ChildLimit::Memory => libc::RLIMIT_AS,
                ChildLimit::FileSize => {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    libc::RLIMIT_FSIZE
                }
            };
            if libc::setrlimit(resource, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// How many pixels of two RGBA8 images differ, and by how much at most (in any channel).
pub fn compare(a: &[u8], b: &[u8]) -> (usize, u8) {
    let mut differ = 0;
    let mut worst = 0;
    for (x, y) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = x.iter().zip(y).map(|(p, q)| p.abs_diff(*q)).max().unwrap();
        differ += (d > 0) as usize;
        worst = worst.max(d);
    }
    (differ, worst)
}

/// Asserts that a frame drawn by the CUDA backend (`g`) agrees with the CPU's (`c`): the same
/// raster counts, identical depth, and colours that differ in at most 0.1% of the pixels, by at
/// most 2/255 (where the two round transcendental functions differently).
pub fn assert_frames_agree(c: &rxpipe::Frame, g: &rxpipe::Frame, what: &str) {
    assert_same_work(c, g, what);
    let depth_differ = c.depth.iter().zip(&g.depth).filter(|(a, b)| a != b).count();
    assert_eq!(depth_differ, 0, "{what}: depth buffers differ");
    let (differ, worst) = compare(&c.color, &g.color);
    let pixels = (c.width * c.height) as usize;
    assert!(
        differ * 1000 <= pixels && worst <= 2,
        "{what}: {differ} of {pixels} pixels differ, by up to {worst}"
    );
}

/// Asserts that frame `g` shaded and drew what `c` did: the same geometry statistics and raster
/// counts. Where `g`'s fused geometry stage culled whole batches (and `c` none), their
/// triangles are counted apart instead of as culled or rejected, and their vertices were never
/// shaded: those triangles and culled plus rejected ones together, and those vertices and the
/// invocations together, must be `c`'s. Batches culled as hidden would have been rasterised:
/// then fewer triangles are kept and culled or rejected one by one.
pub fn assert_same_work(c: &rxpipe::Frame, g: &rxpipe::Frame, what: &str) {
    let (rc, rg) = (&c.stats.raster, &g.stats.raster);
    assert_eq!(rc.batches_culled, 0, "{what}: the reference culled batches");
    let mut geometry = g.stats.geometry;
    geometry.invocations += rg.batch_unshaded_vertices;
    assert_eq!(c.stats.geometry, geometry, "{what}");
    let counts = |r: &rxpipe::raster::RasterStats| {
        (
            r.triangles_in,
            r.culled + r.rejected + r.batch_culled_triangles,
            r.clipped,
            r.rasterized,
        )
    };
    if rg.batches_occluded > 0 {
        // batches hidden behind others would have been set up and rasterised, then lost the
        // depth test: fewer triangles kept, as many accounted for
        let (c, g) = (counts(rc), counts(rg));
        assert!(
            c.0 == g.0 && g.1 >= c.1 && g.2 <= c.2 && g.3 < c.3,
            "{what}: raster counts {c:?}, with occlusion culling {g:?}"
        );
        assert!(rg.culled + rg.rejected <= rc.culled + rc.rejected, "{what}");
        return;
    }
    assert_eq!(counts(rc), counts(rg), "{what}: raster counts");
    if rg.batches_culled == 0 {
        assert_eq!(
            (rc.culled, rc.rejected),
            (rg.culled, rg.rejected),
            "{what}: culled and rejected"
        );
    } else {
        assert!(
            rg.batch_culled_triangles > 0,
            "{what}: batches without triangles"
        );
    }
}

/// The project's textured scene (its images are data URIs) as JSON, for tests to change.
pub fn textured_json() -> serde_json::Value {
    let text = std::fs::read_to_string("scenes/textured/textured.gltf").unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The index of the glTF material named `name` in `g`.
pub fn gltf_material(g: &serde_json::Value, name: &str) -> usize {
    g["materials"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["name"] == name)
        .unwrap()
}

/// The material named `name` of a loaded scene's objects.
pub fn scene_material(
    scene: &rxpipe::Scene,
    name: &str,
) -> std::sync::Arc<rxpipe::material::Material> {
    scene
        .objects
        .iter()
        .filter_map(|o| o.mesh.material.clone())
        .find(|m| m.name == name)
        .unwrap()
}

/// The project's textured scene twice, its bricks glowing with their own texture at twice its
/// scale beside their base colour: in the first file the emissive texture reads TEXCOORD_1,
/// which holds the cube's uvs times two; in the second it reads TEXCOORD_0 through
/// KHR_texture_transform's scale of 2. One picture, bit for bit (a scale of two is exact in
/// every step), where the second uv set is read; another where it is not.
pub fn two_uv_sets(name: &str) -> (PathBuf, PathBuf) {
    use serde_json::json;
    let dir = tmp_dir(name);
    let plain = rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap();
    let cube = plain
        .objects
        .iter()
        .find(|o| o.mesh.name.ends_with(": cube"))
        .unwrap();
    let bytes: Vec<u8> = cube
        .mesh
        .uvs
        .as_ref()
        .unwrap()
        .iter()
        .flat_map(|t| (*t * 2.0).to_array())
        .flat_map(f32::to_le_bytes)
        .collect();
    std::fs::write(dir.join("uv1.bin"), &bytes).unwrap();
    let mut two = textured_json();
    let bricks = gltf_material(&two, "bricks");
    let mut one = two.clone();
    let at = |g: &serde_json::Value, k: &str| g[k].as_array().unwrap().len();
    let (buffer, view, accessor) = (
        at(&two, "buffers"),
        at(&two, "bufferViews"),
        at(&two, "accessors"),
    );
    two["buffers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"uri": "uv1.bin", "byteLength": bytes.len()}));
    two["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(json!({"buffer": buffer, "byteLength": bytes.len()}));
    two["accessors"].as_array_mut().unwrap().push(json!({
        "bufferView": view, "componentType": 5126, "count": bytes.len() / 8, "type": "VEC2"
    }));
    let cube_mesh = two["meshes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["name"] == "cube")
        .unwrap();
    two["meshes"][cube_mesh]["primitives"][0]["attributes"]["TEXCOORD_1"] = accessor.into();
    two["materials"][bricks]["emissiveTexture"] = json!({"index": 1, "texCoord": 1});
    two["materials"][bricks]["emissiveFactor"] = json!([1.0, 1.0, 1.0]);
    one["materials"][bricks]["emissiveTexture"] = json!({"index": 1, "extensions":
        {"KHR_texture_transform": {"scale": [2.0, 2.0]}}});
    one["materials"][bricks]["emissiveFactor"] = json!([1.0, 1.0, 1.0]);
    one["extensionsUsed"] = json!(["KHR_texture_transform"]);
    let (a, b) = (dir.join("two-sets.gltf"), dir.join("one-set.gltf"));
    std::fs::write(&a, two.to_string()).unwrap();
    std::fs::write(&b, one.to_string()).unwrap();
    (a, b)
}

/// A mesh of `nv` vertices (positions three at a time from `coords`) and the triangles `tris`,
/// every index taken modulo `nv`: what the property tests draw at random (fans, fins, repeats,
/// degenerate and crossing triangles all occur).
pub fn random_mesh(nv: usize, tris: &[(u32, u32, u32)], coords: &[f32]) -> rxpipe::mesh::Mesh {
    let n = nv as u32;
    let indices: Vec<u32> = tris
        .iter()
        .flat_map(|&(a, b, c)| [a % n, b % n, c % n])
        .collect();
    let positions: Vec<glam::Vec3> = (0..nv)
        .map(|i| glam::Vec3::from_slice(&coords[3 * i..3 * i + 3]))
        .collect();
    rxpipe::mesh::Mesh::new("random", positions, indices)
}
