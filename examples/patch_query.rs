//! A computation on RXMesh queries, on both backends: the user writes what happens to one
//! element and its query result; the library maps the elements to threads.
//!
//! Here, through VV, every vertex's valence and the average of its one-ring (the heart of
//! Laplacian smoothing): on the CPU as a Rust closure, on the GPU (when there is one) as a CUDA
//! device function spliced into the query kernel; the two must agree.
//!
//! ```sh
//! cargo run --release --example patch_query -- [MESH]
//! ```

use rxpipe::patch::query::{cpu, cuda};
use rxpipe::patch::{self, PatchData, PatchOptions, Query};

/// The GPU's version of the one-ring average: `in` holds three floats per vertex (positions),
/// `out` gets three per vertex.
const ONE_RING_AVERAGE: &str = r#"
__device__ void rxq_user(unsigned v, const unsigned* ring, unsigned n, const float* in,
                         float* out) {
    float x = 0.0f, y = 0.0f, z = 0.0f;
    for (unsigned i = 0; i < n; ++i) {
        x += in[3 * ring[i]];
        y += in[3 * ring[i] + 1];
        z += in[3 * ring[i] + 2];
    }
    const float s = n ? 1.0f / (float)n : 0.0f;
    out[3 * v] = x * s;
    out[3 * v + 1] = y * s;
    out[3 * v + 2] = z * s;
}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = match std::env::args().nth(1) {
        Some(p) => rxpipe::io::load_mesh_or_spec(&p)?,
        None => rxpipe::mesh::icosphere(5),
    };
    let p = patch::cpu::patch(&mesh, &PatchOptions::default())?;
    let data = PatchData::build(&mesh, &p)?;
    println!("{}: {}", mesh.name, p.report);

    // the CPU: a closure per vertex and its one-ring
    let valence = cpu::for_each(&data, Query::VV, None, |_, ring| ring.len() as u32)?;
    let average = cpu::for_each(&data, Query::VV, None, |_, ring| {
        let sum: glam::Vec3 = ring.iter().map(|&u| mesh.positions[u as usize]).sum();
        sum / ring.len().max(1) as f32
    })?;
    let mut hist = std::collections::BTreeMap::new();
    for &n in &valence {
        *hist.entry(n).or_insert(0usize) += 1;
    }
    println!("valence histogram (valence: vertices): {hist:?}");
    // (vertices no face uses have no ring)
    let (sum, used) = average
        .iter()
        .zip(&mesh.positions)
        .zip(&valence)
        .filter(|(_, &n)| n > 0)
        .fold((0.0f32, 0usize), |(s, k), ((a, p), _)| {
            (s + a.distance(*p), k + 1)
        });
    println!(
        "mean distance from a vertex to its one-ring's average: {:.6}",
        sum / used.max(1) as f32
    );

    // the GPU: the same computation as a CUDA device function
    let Ok(gpu) = rxpipe::gpu::Gpu::new() else {
        println!("no GPU: the CUDA version is skipped");
        return Ok(());
    };
    let d = cuda::DevicePatchData::upload(&gpu, &data)?;
    let lengths = cuda::CudaQueries::new(gpu.clone())?.for_each(&d, Query::VV, None, &[], 1)?;
    let q = cuda::CudaQueries::with_user(gpu, "one_ring_average.cu", ONE_RING_AVERAGE)?;
    let positions: Vec<f32> = mesh.positions.iter().flat_map(|p| p.to_array()).collect();
    let gpu_average = q.for_each(&d, Query::VV, None, &positions, 3)?;
    let same_valence = lengths.iter().zip(&valence).all(|(&g, &c)| g == c as f32);
    let worst = average
        .iter()
        .enumerate()
        .map(|(v, a)| (glam::Vec3::from_slice(&gpu_average[3 * v..3 * v + 3]) - *a).length())
        .fold(0.0f32, f32::max);
    println!("GPU: valences equal the CPU's: {same_valence}; one-ring averages differ by at most {worst:.2e}");
    if !same_valence || worst > 1e-5 {
        return Err("the GPU's results differ from the CPU's".into());
    }
    Ok(())
}
