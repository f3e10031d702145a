//! The re-indexing stage on the GPU against the CPU: the sort method must reproduce the parallel
//! CPU method exactly (same algorithm, same stable order), the hash method must be a correct
//! re-indexing with the same vertex count. Skips without a GPU unless RXPIPE_REQUIRE_GPU=1.

mod common;

use glam::{Vec2, Vec3};
use rxpipe::mesh::weld::WeldError;
use rxpipe::mesh::{self, Mesh};
use rxpipe::reindex::cuda::{self, DeviceInput, GpuMethod, Reindexer};
use rxpipe::reindex::{self, cpu, Method, ReindexError, ReindexOptions};

/// Runs both GPU methods on `m` (with `weld`) and checks them against the parallel CPU method.
fn check(gpu: &std::sync::Arc<rxpipe::gpu::Gpu>, m: &Mesh, weld: Option<f32>) {
    let reference = cpu::parallel(m, weld).unwrap();
    let sort = cuda::reindex(gpu, m, weld, GpuMethod::Sort).unwrap();
    assert_eq!(
        sort.mesh, reference.mesh,
        "{}: sort differs from the CPU",
        m.name
    );
    assert_eq!(sort.report.unused, reference.report.unused, "{}", m.name);
    assert_eq!(sort.report.method, Method::CudaSort);
    let hash = cuda::reindex(gpu, m, weld, GpuMethod::Hash).unwrap();
    reindex::verify(m, &hash.mesh, weld).unwrap_or_else(|e| panic!("{}: hash: {e}", m.name));
    assert_eq!(
        (hash.report.vertices_out, hash.report.unused),
        (reference.report.vertices_out, reference.report.unused),
        "{}",
        m.name
    );
    // the hash method keeps each class's lowest original id, in id order: deterministic
    let again = cuda::reindex(gpu, m, weld, GpuMethod::Hash).unwrap();
    assert_eq!(again.mesh, hash.mesh, "{}: hash not deterministic", m.name);
    // left on the device: the same arrays as downloaded, and their bounds
    for (method, host) in [(GpuMethod::Sort, &sort), (GpuMethod::Hash, &hash)] {
        on_device_equals(gpu, m, weld, method, &host.mesh);
    }
}

/// `m` re-indexed with `method` and left on the device holds what `expected` (the same method's
/// downloaded result) holds, with its bounds; a mesh with attributes the device arrays do not
/// hold is refused.
fn on_device_equals(
    gpu: &std::sync::Arc<rxpipe::gpu::Gpu>,
    m: &Mesh,
    weld: Option<f32>,
    method: GpuMethod,
    expected: &Mesh,
) {
    let r = cuda::reindex_on_device(gpu, m, weld, method);
    if !cuda::stays_on_device(m) {
        let e = r.err().expect("refused");
        assert!(e.to_string().contains("device arrays do not hold"), "{e}");
        return;
    }
    let cuda::OnDevice {
        arrays: d,
        bounds,
        report,
    } = r.unwrap();
    let n = expected.vertex_count();
    assert_eq!((d.vertex_count, report.vertices_out), (n, n), "{}", m.name);
    let floats = |b: &cudarc::driver::CudaSlice<f32>, k: usize| gpu.download(b, k * n).unwrap();
    let flat = |v: &[Vec3]| v.iter().flat_map(|p| p.to_array()).collect::<Vec<f32>>();
    assert_eq!(
        floats(&d.positions, 3),
        flat(&expected.positions),
        "{}",
        m.name
    );
    assert_eq!(
        d.normals.as_ref().map(|b| floats(b, 3)),
        expected.normals.as_deref().map(flat),
        "{}",
        m.name
    );
    assert_eq!(
        d.uvs.as_ref().map(|b| floats(b, 2)),
        expected
            .uvs
            .as_ref()
            .map(|u| u.iter().flat_map(|t| t.to_array()).collect()),
        "{}",
        m.name
    );
    assert_eq!(
        gpu.download(&d.indices, d.index_count).unwrap(),
        expected.indices
    );
    // (equal as numbers: a zero's sign may differ)
    let (lo, hi) = bounds.expect("bounds");
    let (elo, ehi) = expected.bounds().unwrap();
    assert!(
        lo == elo && hi == ehi,
        "{}: {lo} {hi} against {elo} {ehi}",
        m.name
    );
}

/// xorshift, for reproducible random meshes
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn f(&mut self) -> f32 {
        (self.next() % 2_000_000) as f32 / 1000.0 - 1000.0
    }
}

/// `n` distinct random vertices, each copied `copies` times to random places, some unused.
fn random_mesh(seed: u64, n: usize, copies: usize, attrs: bool) -> Mesh {
    let mut r = Rng(seed);
    let base: Vec<(Vec3, Vec3, Vec2)> = (0..n)
        .map(|_| {
            (
                Vec3::new(r.f(), r.f(), r.f()),
                Vec3::new(r.f(), r.f(), r.f()),
                Vec2::new(r.f(), r.f()),
            )
        })
        .collect();
    let mut slots: Vec<usize> = (0..n * copies).map(|k| k % n).collect();
    for i in (1..slots.len()).rev() {
        let j = (r.next() % (i as u64 + 1)) as usize;
        slots.swap(i, j);
    }
    let positions = slots.iter().map(|&s| base[s].0).collect();
    let normals = attrs.then(|| slots.iter().map(|&s| base[s].1).collect());
    let uvs = attrs.then(|| slots.iter().map(|&s| base[s].2).collect());
    // vertex colours with the other attributes (keys of 12 words), from the uv so that copies
    // stay equal
    let colors = attrs.then(|| {
        slots
            .iter()
            .map(|&s| glam::Vec4::new(base[s].2.x, 0.25, base[s].2.y, 1.0))
            .collect()
    });
    // tangents too on even seeds (keys of 16 words), likewise from the uv
    let tangents = (attrs && seed % 2 == 0).then(|| {
        slots
            .iter()
            .map(|&s| glam::Vec4::new(base[s].2.y, 0.5, base[s].2.x, base[s].2.x.signum()))
            .collect()
    });
    // a second uv set on seeds divisible by 3 (keys of up to 18 words)
    let uvs1 = (attrs && seed % 3 == 0).then(|| {
        slots
            .iter()
            .map(|&s| Vec2::new(base[s].1.x, base[s].2.y))
            .collect()
    });
    // triangles over the first 90% of the slots: the rest are unused
    let used = (slots.len() * 9 / 10).max(1) as u64;
    let indices = (0..3 * n).map(|_| (r.next() % used) as u32).collect();
    Mesh {
        name: format!("random {seed} {n}x{copies}"),
        positions,
        normals,
        uvs,
        uvs1,
        colors,
        tangents,
        indices,
        ..Default::default()
    }
}

#[test]
fn the_papers_worked_example_on_the_gpu() {
    let Some(gpu) = common::gpu() else { return };
    let v = |x: f32| Vec3::new(x, 0.0, 0.0);
    let (a, b, c, d, e, f, x, y) = (v(1.), v(2.), v(3.), v(4.), v(5.), v(6.), v(7.), v(8.));
    let m = Mesh::new(
        "wald",
        vec![a, b, c, x, d, c, e, f, y, d],
        vec![0, 1, 2, 0, 2, 4, 5, 6, 7, 5, 7, 9],
    );
    let r = cuda::reindex(&gpu, &m, None, GpuMethod::Sort).unwrap();
    assert_eq!(r.mesh.indices, [0, 1, 2, 0, 2, 3, 2, 4, 5, 2, 5, 3]);
    let h = cuda::reindex(&gpu, &m, None, GpuMethod::Hash).unwrap();
    // lowest ids first: A B C' D' E F (ids 0 1 2 4 6 7)
    assert_eq!(h.mesh.indices, [0, 1, 2, 0, 2, 3, 2, 4, 5, 2, 5, 3]);
    check(&gpu, &m, None);
}

#[test]
fn generated_and_random_meshes_match_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    for m in [
        mesh::icosphere(4),
        mesh::torus(1.0, 0.3, 64, 16),
        mesh::rings(10_000),
        reindex::paper_grid(1),
        reindex::paper_grid(64),
    ] {
        check(&gpu, &m, None);
    }
    for (seed, n, copies, attrs) in [
        (1, 1, 1, false),
        (2, 10, 3, true),
        (3, 5000, 4, false),
        (4, 5000, 2, true),
        (5, 70_000, 3, true),
        // two uv sets (14 words), and with tangents too (18 words)
        (9, 4000, 3, true),
        (12, 3000, 2, true),
    ] {
        check(&gpu, &random_mesh(seed, n, copies, attrs), None);
    }
    // welding on the GPU as on the CPU
    let mut scan = random_mesh(6, 3000, 3, false);
    for (k, p) in scan.positions.iter_mut().enumerate() {
        p.x += (k % 7) as f32 * 1e-5;
    }
    check(&gpu, &scan, Some(0.01));
}

#[test]
fn large_meshes_cross_every_scan_level() {
    let Some(gpu) = common::gpu() else { return };
    // 5.4 M vertices: more than 1024 scan tiles, every radix pass over many tiles
    check(&gpu, &reindex::paper_grid(1040), None);
    check(&gpu, &random_mesh(7, 1_500_000, 3, false), None);
}

#[test]
fn shared_meshes_match_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let Some(dir) = common::meshes() else { return };
    for name in common::SHARED {
        let m = rxpipe::io::load_mesh(dir.join(name)).unwrap();
        check(&gpu, &m, None);
    }
}

#[test]
fn bad_input_on_the_gpu_path_is_a_clear_error() {
    let Some(gpu) = common::gpu() else { return };
    let mut m = mesh::icosphere(1);
    m.uvs = Some(vec![Vec2::ZERO; m.vertex_count()]);
    m.uvs.as_mut().unwrap()[17].y = f32::NAN;
    let opts = ReindexOptions {
        method: Method::CudaSort,
        weld: None,
    };
    let e = reindex::reindex(&m, &opts, Some(&gpu)).unwrap_err();
    assert!(
        matches!(e, ReindexError::Weld(WeldError::NaN { vertex: 17, .. })),
        "{e}"
    );
    assert!(DeviceInput::upload(&gpu, &m, None).is_err());
    let empty = Mesh::new("empty", vec![Vec3::ZERO], vec![]);
    assert!(matches!(
        reindex::reindex(&empty, &opts, Some(&gpu)).unwrap_err(),
        ReindexError::Weld(WeldError::Empty { .. })
    ));
    // a workspace that cannot fit is refused before anything is allocated
    let r = Reindexer::new(&gpu).unwrap();
    let mut input = DeviceInput::upload(&gpu, &mesh::icosphere(1), None).unwrap();
    input.vertices = 3 << 30;
    input.indices = 3 << 30;
    for method in [GpuMethod::Sort, GpuMethod::Hash] {
        let e = r.workspace(&input, method).err().expect("refused");
        assert!(
            matches!(e, rxpipe::gpu::GpuError::OutOfMemory { .. }),
            "{e}"
        );
        assert!(
            e.to_string().contains("re-indexing 3221225472 vertices"),
            "{e}"
        );
    }
}

#[test]
fn auto_uses_the_gpu_and_reports_it() {
    let Some(gpu) = common::gpu() else { return };
    let m = reindex::paper_grid(64);
    let r = reindex::reindex(&m, &ReindexOptions::default(), Some(&gpu)).unwrap();
    assert_eq!(r.report.method, Method::CudaHash);
    assert_eq!(r.report.fallback, None);
    assert_eq!(r.mesh.vertex_count(), 65 * 65);
    assert_eq!(r.report.unused, 64 * 64);
    assert_eq!(r.report.duplicates, 4 * 64 * 64 - 65 * 65);
    // a small mesh is re-indexed on one thread, GPU or not
    let small = reindex::paper_grid(16);
    let r = reindex::reindex(&small, &ReindexOptions::default(), Some(&gpu)).unwrap();
    assert_eq!(r.report.method, Method::Serial);
    assert_eq!(r.mesh.vertex_count(), 17 * 17);
}
