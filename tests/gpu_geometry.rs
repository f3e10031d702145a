//! The geometry stage on the GPU against the CPU reference: exact invocation counts per vertex for
//! every strategy, mesh and order; triangle queues within float tolerance; custom and broken
//! shaders; the kernel cache. Skips without a GPU unless RXPIPE_REQUIRE_GPU=1.

mod common;

use glam::{Mat4, Vec3};
use rxpipe::geometry::cuda::{CudaGeometry, CudaShader};
use rxpipe::geometry::shaders::FnShader;
use rxpipe::geometry::{cpu, Batches, FmaLoad, Transform, Uniforms, VertexIn, VertexOut};
use rxpipe::gpu::ModuleOrigin;
use rxpipe::patch::bounds::PatchBound;
use rxpipe::VertexShader;
use rxpipe::{Strategy, VertexOrder};
use std::sync::Arc;

fn uniforms() -> Uniforms {
    Uniforms::new(
        Mat4::from_rotation_y(0.4),
        Mat4::perspective_rh(0.8, 1.5, 0.1, 10.0)
            * Mat4::from_translation(Vec3::new(0.0, 0.0, -3.0)),
        Vec3::new(0.0, 0.0, 3.0),
        0.5,
    )
}

fn close(a: &VertexOut, b: &VertexOut, tol: f32) -> bool {
    let fa = [
        a.clip.to_array(),
        [a.world.x, a.world.y, a.world.z, a.extra],
    ];
    let fb = [
        b.clip.to_array(),
        [b.world.x, b.world.y, b.world.z, b.extra],
    ];
    let n = (a.normal - b.normal).abs().max_element() <= tol * (1.0 + a.normal.abs().max_element());
    n && fa
        .iter()
        .flatten()
        .zip(fb.iter().flatten())
        .all(|(x, y)| (x - y).abs() <= tol * (1.0 + x.abs()))
}

#[test]
fn invocation_counts_equal_the_cpu_for_every_strategy_mesh_and_order() {
    let Some(gpu) = common::gpu() else { return };
    let Some(dir) = common::meshes() else { return };
    let g = CudaGeometry::new(gpu, CudaShader::transform(), true).unwrap();
    let u = uniforms();
    let mut mismatches = Vec::new();
    for f in common::SHARED {
        let m = rxpipe::io::load_mesh(dir.join(f)).unwrap();
        let v = VertexIn::from_mesh(&m);
        for order in [
            VertexOrder::Input,
            VertexOrder::Forsyth,
            VertexOrder::Random(7),
        ] {
            let idx = order.apply(&m.indices, m.vertex_count());
            for s in Strategy::all() {
                let c = cpu::run(s, &v, &idx, None, &Transform, &u).unwrap();
                let r = g.run(s, &v, &idx, None, &u).unwrap();
                let cpu_counts = c.invocations_per_vertex(v.len());
                if r.counts.as_ref() != Some(&cpu_counts) || r.stats != c.stats {
                    mismatches.push(format!(
                        "{f} {order} {}: GPU {} invocations, CPU {}",
                        s.name(),
                        r.stats.invocations,
                        c.stats.invocations
                    ));
                }
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn block_sizes_are_configurable() {
    let Some(gpu) = common::gpu() else { return };
    use rxpipe::geometry::cuda::BlockSizes;
    let m = rxpipe::mesh::icosphere(4);
    let v = VertexIn::from_mesh(&m);
    let u = uniforms();
    let default = CudaGeometry::new(gpu.clone(), CudaShader::transform(), true).unwrap();
    for (elementwise, vote_warps, hash) in [(32, 1, 32), (512, 8, 256), (128, 16, 1024)] {
        let b = BlockSizes {
            elementwise,
            vote_warps,
            hash,
        };
        let g = CudaGeometry::with_blocks(gpu.clone(), CudaShader::transform(), true, b).unwrap();
        for name in ["naive", "multi", "warp", "hash", "phash", "patch"] {
            let s = Strategy::parse(name).unwrap();
            let a = default.run(s, &v, &m.indices, None, &u).unwrap();
            let r = g.run(s, &v, &m.indices, None, &u).unwrap();
            assert_eq!(r.counts, a.counts, "{name} {b:?}");
            assert_eq!(r.queue, a.queue, "{name} {b:?}");
        }
    }
    for (elementwise, vote_warps, hash) in [
        (100, 4, 128),
        (1024, 4, 128),
        (256, 0, 128),
        (256, 33, 128),
        (256, 4, 0),
        (256, 4, 48),
        (256, 4, 2048),
    ] {
        let b = BlockSizes {
            elementwise,
            vote_warps,
            hash,
        };
        let e = CudaGeometry::with_blocks(gpu.clone(), CudaShader::transform(), true, b);
        assert!(e.is_err(), "{b:?}");
    }
}

/// Asserts that the batch tables of `dm` (of indices `idx` over `positions`, its batches built)
/// number every batch: each index's number names it among its batch's ids, the numbers run below
/// the batch's count, and the count is the batch's distinct ids; and that each batch's bounds are
/// the CPU's (`PatchBound::of`): the same sphere to the bit, a cone about an axis summed in
/// another order that holds every face normal.
fn tables_number_the_batches(
    gpu: &rxpipe::gpu::Gpu,
    geometry: &CudaGeometry,
    dm: &mut rxpipe::geometry::cuda::DeviceMesh,
    (positions, idx): (&[Vec3], &[u32]),
    what: &str,
) {
    assert!(geometry.build_tables(dm).unwrap(), "{what}: no tables");
    let b = dm.download_batches(gpu).unwrap().unwrap();
    let t = dm.tables.as_ref().unwrap();
    let mv = b.max_vertices as usize;
    let nb = b.starts.len() - 1;
    let numbers = gpu.download(&t.numbers, idx.len()).unwrap();
    let vertices = gpu.download(&t.vertices, nb * mv).unwrap();
    let counts = gpu.download(&t.counts, nb).unwrap();
    let bounds = gpu.download(&t.bounds, nb).unwrap();
    for k in 0..nb {
        let range = 3 * b.starts[k] as usize..3 * b.starts[k + 1] as usize;
        let cpu = PatchBound::of(positions, &idx[range.clone()]);
        let g = PatchBound::from(bounds[k]);
        assert_eq!(
            (g.center, g.radius),
            (cpu.center, cpu.radius),
            "{what}: batch {k}'s sphere"
        );
        assert_eq!(g.cutoff > 0.0, cpu.cutoff > 0.0, "{what}: batch {k}'s cone");
        if g.cutoff > 0.0 {
            assert!(
                (g.axis - cpu.axis).length() < 1e-5 && (g.cutoff - cpu.cutoff).abs() < 1e-5,
                "{what}: batch {k}'s cone {g:?}, the CPU's {cpu:?}"
            );
            for t in idx[range.clone()].chunks_exact(3) {
                let p = |i: u32| positions[i as usize].as_dvec3();
                let n = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0])).normalize();
                assert!(
                    n.dot(g.axis.as_dvec3()) >= g.cutoff as f64,
                    "{what}: batch {k}'s cone leaves out a face"
                );
            }
        }
        let distinct: std::collections::HashSet<u32> = idx[range.clone()].iter().copied().collect();
        assert_eq!(
            counts[k] as usize,
            distinct.len(),
            "{what}: batch {k}'s count"
        );
        for i in range {
            let n = numbers[i] as usize;
            assert!(n < distinct.len(), "{what}: index {i}'s number {n}");
            assert_eq!(vertices[k * mv + n], idx[i], "{what}: index {i}");
        }
    }
}

/// Builds the batches of every mesh in three orders and six limits on the GPU and the CPU and
/// asserts they are equal (and that the batch tables of two of those limits number them);
/// returns how many were compared.
fn batches_equal(gpu: &Arc<rxpipe::gpu::Gpu>, meshes: &[(String, rxpipe::Mesh)]) -> usize {
    use rxpipe::geometry::cuda::DeviceMesh;
    let geometry = CudaGeometry::new(gpu.clone(), CudaShader::transform(), false).unwrap();
    let mut checked = 0;
    for (name, m) in meshes {
        let v = VertexIn::from_mesh(m);
        for order in [
            VertexOrder::Input,
            VertexOrder::Forsyth,
            VertexOrder::Random(3),
        ] {
            let idx = order.apply(&m.indices, m.vertex_count());
            let mut dm = DeviceMesh::upload(gpu, &v, &idx, None).unwrap();
            for (mi, mv) in [
                (1023, 256),
                (96, 32),
                (300, 100),
                (1024, 1024),
                (3, 3),
                (9, 3),
            ] {
                let cpu = Batches::build(&idx, v.len(), mi, mv).unwrap();
                dm.build_batches(gpu, mi, mv).unwrap();
                let g = dm.download_batches(gpu).unwrap().unwrap();
                assert_eq!(g, cpu, "{name} {order} {mi}/{mv}");
                if [(1023, 256), (300, 100)].contains(&(mi, mv)) {
                    let what = format!("{name} {order} {mi}/{mv} tables");
                    let mesh = (&m.positions[..], &idx[..]);
                    tables_number_the_batches(gpu, &geometry, &mut dm, mesh, &what);
                }
                checked += 1;
            }
        }
    }
    checked
}

// Generated meshes, small enough for compute-sanitizer (.ci/sanitize runs this test alone); the
// shared meshes are the next test.
#[test]
fn gpu_batches_equal_the_cpu_preprocess() {
    let Some(gpu) = common::gpu() else { return };
    let mut meshes: Vec<(String, rxpipe::Mesh)> = vec![
        ("icosphere:6".into(), rxpipe::mesh::icosphere(6)),
        ("empty".into(), rxpipe::Mesh::default()),
    ];
    // a strip of degenerate and repeating triangles
    let mut odd = rxpipe::mesh::icosphere(2);
    odd.indices.extend([0, 0, 0, 1, 1, 2, 3, 4, 3, 5, 5, 5]);
    meshes.push(("degenerate".into(), odd));
    let checked = batches_equal(&gpu, &meshes);
    use rxpipe::geometry::cuda::DeviceMesh;
    assert_eq!(checked, 54);
    // limits the GPU does not take are errors
    let m = rxpipe::mesh::icosphere(1);
    let mut dm = DeviceMesh::upload(&gpu, &VertexIn::from_mesh(&m), &m.indices, None).unwrap();
    assert!(dm.build_batches(&gpu, 2, 256).is_err());
    assert!(dm.build_batches(&gpu, 2048, 256).is_err());
}

#[test]
fn shared_meshes_batch_on_the_gpu_as_on_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let Some(dir) = common::meshes() else { return };
    let meshes: Vec<(String, rxpipe::Mesh)> = common::SHARED
        .iter()
        .map(|f| (f.to_string(), rxpipe::io::load_mesh(dir.join(f)).unwrap()))
        .collect();
    assert_eq!(batches_equal(&gpu, &meshes), 18 * meshes.len());
}

#[test]
fn triangle_queues_equal_the_cpu_within_float_tolerance() {
    let Some(gpu) = common::gpu() else { return };
    let Some(dir) = common::meshes() else { return };
    let u = uniforms();
    for (shader, cpu_shader, tol) in [
        (
            CudaShader::transform(),
            Box::new(Transform) as Box<dyn VertexShader>,
            1e-5,
        ),
        (CudaShader::fma(256), Box::new(FmaLoad::new(256)), 1e-4),
    ] {
        let g = CudaGeometry::new(gpu.clone(), shader, false).unwrap();
        for f in ["stanford-bunny.obj", "igea.ply", "fandisk.obj"] {
            let m = rxpipe::io::load_mesh(dir.join(f)).unwrap();
            let v = VertexIn::from_mesh(&m);
            let idx = VertexOrder::Forsyth.apply(&m.indices, m.vertex_count());
            let c = cpu::run(Strategy::Naive, &v, &idx, None, cpu_shader.as_ref(), &u).unwrap();
            for s in Strategy::all() {
                let r = g.run(s, &v, &idx, None, &u).unwrap();
                assert_eq!(r.queue.len(), idx.len());
                for (i, q) in r.queue.iter().enumerate() {
                    let want = c.vertices[c.triangles[i / 3][i % 3] as usize];
                    assert!(
                        close(q, &want, tol),
                        "{f} {} corner {i}: GPU {q:?}, CPU {want:?}",
                        s.name()
                    );
                }
            }
        }
    }
}

#[test]
fn batch_limits_are_configurable_on_the_gpu() {
    let Some(gpu) = common::gpu() else { return };
    let m = rxpipe::mesh::icosphere(4);
    let v = VertexIn::from_mesh(&m);
    let u = uniforms();
    let g = CudaGeometry::new(gpu, CudaShader::transform(), true).unwrap();
    for (mi, mv) in [(96, 32), (384, 128), (1023, 256), (1023, 512)] {
        let b = Batches::build(&m.indices, v.len(), mi, mv).unwrap();
        for s in [
            Strategy::DynamicSort {
                max_indices: mi,
                max_vertices: mv,
            },
            Strategy::DynamicHash {
                max_indices: mi,
                max_vertices: mv,
            },
            Strategy::ParallelHash {
                max_indices: mi,
                max_vertices: mv,
                fast_probes: 2,
            },
        ] {
            let c = cpu::run(s, &v, &m.indices, Some(&b), &Transform, &u).unwrap();
            let r = g.run(s, &v, &m.indices, Some(&b), &u).unwrap();
            assert_eq!(r.stats, c.stats, "{s:?}");
        }
    }
    for batch in [3, 48, 96, 192, 384] {
        let s = Strategy::WarpVote { batch };
        let c = cpu::run(s, &v, &m.indices, None, &Transform, &u).unwrap();
        let r = g.run(s, &v, &m.indices, None, &u).unwrap();
        assert_eq!(
            r.counts.unwrap(),
            c.invocations_per_vertex(v.len()),
            "{s:?}"
        );
    }
}

/// A travelling wave along the normals, in CUDA and as a Rust closure.
const WAVE: &str = r#"
__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u) {
    VertexIn w = v;
    float d = 0.1f * sinf(4.0f * v.position.y - 2.0f * u.time);
    w.position = make_float3(v.position.x + d * v.normal.x, v.position.y + d * v.normal.y,
                             v.position.z + d * v.normal.z);
    VertexOut o = rxp_transform(w, u);
    o.extra = d;
    return o;
}
"#;

#[test]
fn custom_shader_matches_its_cpu_closure() {
    let Some(gpu) = common::gpu() else { return };
    let m = rxpipe::mesh::icosphere(3);
    let v = VertexIn::from_mesh(&m);
    let u = uniforms();
    let cpu_wave = FnShader(|v: &VertexIn, u: &Uniforms| {
        let d = 0.1 * (4.0 * v.position.y - 2.0 * u.time).sin();
        let mut o = Transform.shade(
            &VertexIn {
                position: v.position + d * v.normal,
                ..*v
            },
            u,
        );
        o.extra = d;
        o
    });
    let g = CudaGeometry::new(gpu, CudaShader::from_source("wave.cu", WAVE), false).unwrap();
    let c = cpu::run(Strategy::Naive, &v, &m.indices, None, &cpu_wave, &u).unwrap();
    let r = g
        .run(Strategy::parse("hash").unwrap(), &v, &m.indices, None, &u)
        .unwrap();
    for (i, q) in r.queue.iter().enumerate() {
        let want = c.vertices[c.triangles[i / 3][i % 3] as usize];
        assert!(close(q, &want, 1e-4), "corner {i}: GPU {q:?}, CPU {want:?}");
    }
}

#[test]
fn a_broken_shader_is_an_error_naming_its_file_and_line() {
    let Some(gpu) = common::gpu() else { return };
    let broken = "__device__ VertexOut vs_main(const VertexIn& v, const Uniforms& u) {\n    VertexOut o = rxp_transform(v, u);\n    o.extra = undefined_thing;\n    return o;\n}\n";
    let e = CudaGeometry::new(gpu, CudaShader::from_source("my_shader.cu", broken), false)
        .err()
        .expect("a broken shader must not compile");
    let msg = e.to_string();
    assert!(msg.contains("my_shader.cu(3)"), "{msg}");
    assert!(msg.contains("undefined_thing"), "{msg}");
}

#[test]
fn kernel_cache_round_trip_and_corrupt_entries_are_rebuilt() {
    let dir = common::tmp_dir("kernel-cache");
    let Some(gpu) = common::gpu_with_cache(Some(dir.clone())) else {
        return;
    };
    let shader = CudaShader::fma(7);
    let first = CudaGeometry::new(gpu.clone(), shader.clone(), false).unwrap();
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "one module, one cache entry");
    assert_eq!(first.origin(), Some(ModuleOrigin::Compiled));
    gpu.clear_memory_cache();
    let again = CudaGeometry::new(gpu.clone(), shader.clone(), false).unwrap();
    assert_eq!(again.origin(), Some(ModuleOrigin::DiskCache));
    let u = uniforms();
    let m = rxpipe::mesh::icosphere(2);
    let v = VertexIn::from_mesh(&m);
    let a = again
        .run(Strategy::Naive, &v, &m.indices, None, &u)
        .unwrap();
    // corrupt the entry: it must be rebuilt, not trusted
    let path = entries[0].path();
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    gpu.clear_memory_cache();
    let rebuilt = CudaGeometry::new(gpu.clone(), shader.clone(), false).unwrap();
    assert_eq!(rebuilt.origin(), Some(ModuleOrigin::Compiled));
    let b = rebuilt
        .run(Strategy::Naive, &v, &m.indices, None, &u)
        .unwrap();
    assert_eq!(a.queue, b.queue);
    assert_ne!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the corrupt entry was rewritten"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn queues_are_indexed_and_made_for_one_strategy() {
    let Some(gpu) = common::gpu() else { return };
    use rxpipe::geometry::cuda::DeviceMesh;
    let m = rxpipe::mesh::icosphere(4);
    let v = VertexIn::from_mesh(&m);
    let g = CudaGeometry::new(gpu.clone(), CudaShader::transform(), false).unwrap();
    let hash = Strategy::parse("hash").unwrap();
    let mut dm = DeviceMesh::upload(&gpu, &v, &m.indices, None).unwrap();
    let (mi, mv) = hash.dynamic_limits().unwrap();
    dm.build_batches(&gpu, mi, mv).unwrap();
    let u = uniforms();
    // naive writes three vertices per triangle; every reuse strategy's queue holds fewer vertices
    // (its batches' shaded vertices) plus three corners per triangle
    let naive = g.queue(&dm, Strategy::Naive, false).unwrap();
    assert!(naive.corners.is_none());
    assert_eq!(naive.vertices.len(), m.indices.len());
    for s in Strategy::all()
        .into_iter()
        .filter(|s| !matches!(s, Strategy::Naive | Strategy::Patch))
    {
        let q = g.queue(&dm, s, false).unwrap();
        // warp voting's batches may write a few vertices twice (a triangle cut at a round's end)
        if !matches!(s, Strategy::WarpVote { .. }) {
            assert!(q.vertices.len() < m.indices.len(), "{}", s.name());
        }
        assert_eq!(q.corners.as_ref().unwrap().len(), m.indices.len());
    }
    // a queue laid out for one strategy is refused by another
    let mut q = g.queue(&dm, hash, false).unwrap();
    let e = g.enqueue(Strategy::Naive, &dm, &u, &mut q).unwrap_err();
    assert!(e.to_string().contains("made for"), "{e}");
    g.enqueue(hash, &dm, &u, &mut q).unwrap();
    gpu.sync().unwrap();
    let c = cpu::run(hash, &v, &m.indices, None, &Transform, &u).unwrap();
    let r = q.download(&gpu, &dm).unwrap();
    for (i, q) in r.iter().enumerate() {
        let want = c.vertices[c.triangles[i / 3][i % 3] as usize];
        assert!(close(q, &want, 1e-5), "corner {i}: GPU {q:?}, CPU {want:?}");
    }
    // a queue for fused frames holds corners but no vertices: shading into it unfused and
    // downloading it are refused, naming why
    let mut f = g.queue(&dm, hash, true).unwrap();
    assert!(f.fused_only && f.vertices.len() == 1);
    assert_eq!(f.corners.as_ref().unwrap().len(), m.indices.len());
    let e = g.enqueue(hash, &dm, &u, &mut f).unwrap_err();
    assert!(e.to_string().contains("made for fused frames"), "{e}");
    let e = f.download(&gpu, &dm).unwrap_err();
    assert!(e.to_string().contains("made for fused frames"), "{e}");
    assert!(g.fuses(hash) && !g.fuses(Strategy::Naive));
    let e = g.queue(&dm, Strategy::Naive, true).err().unwrap();
    assert!(e.to_string().contains("no fused geometry stage"), "{e}");
}

/// A window of a mesh's batches (what a part of a frame in parts draws of an object cut at batch
/// starts) reads the whole mesh's indices and batches: its triangles are the batches' run, its
/// distinct vertices counted as the CPU counts them; runs that are not the mesh's batches are
/// refused.
#[test]
fn a_window_of_batches_is_their_run_of_the_whole_mesh() {
    use rxpipe::geometry::cuda::DeviceMesh;
    let Some(gpu) = common::gpu() else { return };
    let m = rxpipe::mesh::icosphere(5);
    let batches = Batches::build(&m.indices, m.vertex_count(), 96, 64).unwrap();
    let whole = Arc::new(
        DeviceMesh::upload(&gpu, &VertexIn::from_mesh(&m), &m.indices, Some(&batches)).unwrap(),
    );
    let starts = whole.batch_starts_host(&gpu).unwrap().unwrap().to_vec();
    assert_eq!(starts.len(), batches.len() + 1);
    assert_eq!(*starts.last().unwrap() as usize, m.indices.len() / 3);
    for (a, b) in [(0, 1), (3, 9), (0, batches.len() as u32)] {
        let w = DeviceMesh::window(&whole, &gpu, a..b).unwrap();
        let (lo, hi) = (starts[a as usize], starts[b as usize]);
        assert_eq!(w.index_count, 3 * (hi - lo) as usize);
        assert_eq!(w.view.as_ref().unwrap().host, vec![lo, hi - lo, 0]);
        let (drawn, run) = w.drawn();
        assert!(std::ptr::eq(drawn, &*whole));
        assert_eq!(run, Some(a..b));
        let mut used: Vec<u32> = m.indices[3 * lo as usize..3 * hi as usize].to_vec();
        used.sort_unstable();
        used.dedup();
        assert_eq!(w.unique_vertices(&gpu).unwrap(), used.len(), "{a}..{b}");
        // the same window again is not counted again
        let again = DeviceMesh::window(&whole, &gpu, a..b).unwrap();
        assert!(again.unique_pending.is_none());
        assert_eq!(again.unique_vertices(&gpu).unwrap(), used.len(), "{a}..{b}");
        assert!(DeviceMesh::window(&Arc::new(w), &gpu, 0..1).is_err());
    }
    assert!(DeviceMesh::window(&whole, &gpu, 0..batches.len() as u32 + 1).is_err());
    let plain =
        Arc::new(DeviceMesh::upload(&gpu, &VertexIn::from_mesh(&m), &m.indices, None).unwrap());
    assert!(DeviceMesh::window(&plain, &gpu, 0..1).is_err());
}
