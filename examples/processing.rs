//! Your own per-vertex program on the geometry stage's reuse strategies (the processing mode):
//! one step of umbrella smoothing, each vertex moved halfway to the mean of its neighbours, run
//! over the mesh's triangles by every strategy. A vertex that a batch shares runs once, so a
//! strategy that reuses more runs the (costly) ring walk fewer times; every strategy gives every
//! vertex the same result.
//!
//! On the CPU the program is a closure; where there is a GPU, the same program in CUDA C
//! (`rxp_program`, spliced into the strategies' kernels) runs through every strategy too, its
//! records left on the device, and its result is checked against the CPU's.
//!
//! ```text
//! cargo run --release --example processing [MESH]    # default: icosphere:5
//! ```

use rxpipe::geometry::cpu::process;
use rxpipe::geometry::Strategy;
use rxpipe::glam::Vec3;

/// The program in CUDA C: the record of vertex `id` from the table the host fills in
/// ([`UmbrellaTable`], byte for byte); `world` carries the new position.
const UMBRELLA_CU: &str = r#"
struct Umbrella {
    const float* positions;    // 3 a vertex
    const unsigned* offsets;   // v + 1
    const unsigned* neighbours;
};

__device__ VertexOut rxp_program(const void* table, unsigned id) {
    const Umbrella& in = *reinterpret_cast<const Umbrella*>(table);
    const unsigned b = in.offsets[id], e = in.offsets[id + 1];
    float3 p = make_float3(in.positions[3 * id], in.positions[3 * id + 1],
                           in.positions[3 * id + 2]);
    if (e > b) {
        float3 s = make_float3(0.0f, 0.0f, 0.0f);
        for (unsigned k = b; k < e; ++k) {
            const unsigned j = in.neighbours[k];
            s.x += in.positions[3 * j];
            s.y += in.positions[3 * j + 1];
            s.z += in.positions[3 * j + 2];
        }
        const float n = (float)(e - b);
        p = make_float3(p.x + (s.x / n - p.x) * 0.5f, p.y + (s.y / n - p.y) * 0.5f,
                        p.z + (s.z / n - p.z) * 0.5f);
    }
    VertexOut o;
    o.clip = make_float4(0.0f, 0.0f, 0.0f, 1.0f);
    o.world = p;
    o.normal = make_float3(0.0f, 0.0f, 0.0f);
    o.uv = make_float2(0.0f, 0.0f);
    o.extra = 0.0f;
    return o;
}
"#;

/// The GPU program's table: device addresses of its inputs.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct UmbrellaTable {
    positions: u64,
    offsets: u64,
    neighbours: u64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = std::env::args().nth(1).unwrap_or("icosphere:5".into());
    let mesh = rxpipe::io::load_mesh_or_spec(std::path::Path::new(&spec))?;
    let mesh = rxpipe::reindex::reindex(&mesh, &Default::default(), None)?.mesh;
    // the auxiliary input: every vertex's neighbours along the triangles' edges (both ways)
    let n = mesh.vertex_count();
    let mut ring: Vec<Vec<u32>> = vec![Vec::new(); n];
    for t in mesh.indices.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if a != b && !ring[a as usize].contains(&b) {
                ring[a as usize].push(b);
                ring[b as usize].push(a);
            }
        }
    }
    let mut offsets = vec![0u32];
    offsets.extend(ring.iter().scan(0u32, |s, r| {
        *s += r.len() as u32;
        Some(*s)
    }));
    let neighbours: Vec<u32> = ring.concat();
    // the program on the CPU: a closure of the vertex id over those inputs
    let (positions, offsets_ref, neighbours_ref) = (&mesh.positions, &offsets, &neighbours);
    let umbrella = move |id: u32| -> Vec3 {
        let i = id as usize;
        let ring = &neighbours_ref[offsets_ref[i] as usize..offsets_ref[i + 1] as usize];
        if ring.is_empty() {
            return positions[i];
        }
        let sum = ring
            .iter()
            .fold(Vec3::ZERO, |s, &j| s + positions[j as usize]);
        let mean = sum / ring.len() as f32;
        positions[i] + (mean - positions[i]) * 0.5
    };
    println!(
        "{spec}: {} vertices, {} triangles",
        n,
        mesh.triangle_count()
    );
    let mut first: Option<Vec<Vec3>> = None;
    let mut runs = Vec::new();
    for strategy in Strategy::all() {
        let t = std::time::Instant::now();
        let out = process(strategy, n, &mesh.indices, None, &umbrella)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        // each vertex's result, whichever of its runs it comes from
        let mut moved = mesh.positions.clone();
        out.scatter(&mut moved);
        let same = first.get_or_insert_with(|| moved.clone()) == &moved;
        println!(
            "cpu {:>6}: {:>8} runs ({:.3} a triangle, the least {:.3}) in {ms:.1} ms; {}",
            strategy.name(),
            out.stats.invocations,
            out.stats.asr(),
            out.stats.ideal_asr(),
            if same {
                "the same result"
            } else {
                "A DIFFERENT RESULT"
            }
        );
        if !same {
            return Err(format!("{strategy} gave another result").into());
        }
        runs.push(out.stats.invocations);
    }
    let cpu = first.expect("at least one strategy");
    match rxpipe::gpu::Gpu::new() {
        Ok(gpu) => on_the_gpu(&gpu, &mesh, &offsets, &neighbours, &cpu, &runs),
        Err(e) => {
            println!("(no GPU: {e})");
            Ok(())
        }
    }
}

/// The same program in CUDA C through every strategy, against the CPU's result and its runs
/// (`cpu_runs`, strategy by strategy).
fn on_the_gpu(
    gpu: &std::sync::Arc<rxpipe::gpu::Gpu>,
    mesh: &rxpipe::mesh::Mesh,
    offsets: &[u32],
    neighbours: &[u32],
    cpu: &[Vec3],
    cpu_runs: &[u64],
) -> Result<(), Box<dyn std::error::Error>> {
    use rxpipe::geometry::cuda::{CudaGeometry, CudaShader};
    use rxpipe::gpu::kernels::Source;
    let n = mesh.vertex_count();
    let positions = gpu.upload(bytemuck::cast_slice::<_, f32>(&mesh.positions), "positions")?;
    let offsets = gpu.upload(offsets, "ring offsets")?;
    let neighbours = gpu.upload(neighbours, "rings")?;
    let indices = std::sync::Arc::new(gpu.upload(&mesh.indices, "indices")?);
    let table = UmbrellaTable {
        positions: gpu.address(&positions),
        offsets: gpu.address(&offsets),
        neighbours: gpu.address(&neighbours),
    };
    let program = CudaShader::program(Source {
        name: "umbrella.cu",
        text: UMBRELLA_CU,
    });
    let geometry = CudaGeometry::new(gpu.clone(), program, true)?;
    for (strategy, &cpu_runs) in Strategy::all().into_iter().zip(cpu_runs) {
        let out = geometry.process_on_device(strategy, &table, n, &indices, mesh.indices.len())?;
        let records = gpu.download(&out.records, n)?;
        // the largest difference from the CPU's result (float sums in the same order; the
        // compilers may contract or reorder differently)
        let worst = records
            .iter()
            .zip(cpu)
            .map(|(r, c)| (Vec3::new(r.0[4], r.0[5], r.0[6]) - *c).abs().max_element())
            .fold(0f32, f32::max);
        println!(
            "gpu {:>6}: {:>8} runs ({:.3} a triangle) in {:.3} ms (kernels); at most {worst:.1e} from the CPU",
            strategy.name(),
            out.stats.invocations,
            out.stats.asr(),
            out.kernel_ms,
        );
        let size = mesh.bounds().map_or(1.0, |(lo, hi)| (hi - lo).length());
        if worst > 1e-5 * size.max(1.0) {
            return Err(format!("{strategy} on the GPU gave another result").into());
        }
        if out.stats.invocations != cpu_runs {
            return Err(format!("{strategy} ran another number of times on the GPU").into());
        }
    }
    Ok(())
}
