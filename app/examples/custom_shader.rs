//! A custom vertex shader: a travelling wave that displaces vertices along their normals over
//! time, written in CUDA C (examples/shaders/wave.cu, compiled at run time by NVRTC and spliced
//! into every geometry kernel) and, for the CPU backend, as a Rust closure of the same meaning.
//! Renders the wave animated in a window.
//!
//! cargo run --release --example custom_shader                              # the wave
//! cargo run --release --example custom_shader -- examples/shaders/broken.cu  # a readable error
//! cargo run --release --example custom_shader -- SHADER.cu --backend cpu --png wave.png

use rxpipe::geometry::cuda::CudaShader;
use rxpipe::geometry::shaders::FnShader;
use rxpipe::geometry::{Transform, Uniforms, VertexIn, VertexShader};
use rxpipe::{Backend, Pipeline, Renderer, Scene, Strategy};
use std::process::ExitCode;

/// The wave of examples/shaders/wave.cu, for the CPU.
fn wave(v: &VertexIn, u: &Uniforms) -> rxpipe::geometry::VertexOut {
    let (a, k, w) = (0.04f32, 14.0f32, 3.0f32);
    let phase = k * v.position.y - w * u.time;
    let d = a * phase.sin();
    let slope = a * k * phase.cos();
    let n = v.normal;
    let moved = VertexIn {
        position: v.position + d * n,
        normal: glam::Vec3::new(
            n.x + slope * n.y * n.x,
            n.y - slope * (1.0 - n.y * n.y),
            n.z + slope * n.y * n.z,
        ),
        ..*v
    };
    let mut o = Transform.shade(&moved, u);
    o.extra = d;
    o
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("custom_shader: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), rxpipe::Error> {
    let mut args = std::env::args().skip(1);
    // (the wave is built in, so the example runs from any folder; a path replaces it)
    let mut shader_path: Option<String> = None;
    let mut backend = Backend::Auto;
    let mut png = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--backend" => {
                let b = args.next().unwrap_or_default();
                backend = Backend::parse(&b)
                    .ok_or_else(|| rxpipe::Error::Backend(format!("unknown backend '{b}'")))?;
            }
            "--png" => png = args.next(),
            _ => shader_path = Some(a),
        }
    }
    let shader = match &shader_path {
        Some(p) => CudaShader::from_file(p)?,
        None => CudaShader::from_source(
            "examples/shaders/wave.cu",
            include_str!("../../examples/shaders/wave.cu"),
        ),
    };
    let renderer = Renderer::new(backend)?;
    eprintln!("{}", renderer.notice);
    if renderer.kind() == rxpipe::backend::BackendKind::Cpu {
        // (NVRTC compiles the CUDA source for a device, which the CPU backend does not open)
        eprintln!(
            "note: on the CPU the wave is the Rust closure `wave`; {} is not compiled or checked \
             (it runs, and its errors are reported, with --backend cuda)",
            shader.name
        );
    }
    // the CUDA source runs on the GPU, the closure on the CPU; a broken .cu file fails here
    let pipeline = Pipeline::builder()
        .strategy(Strategy::parse("hash").unwrap())
        .cuda_shader(shader)
        .vertex_shader(FnShader(wave))
        .build(&renderer)?;
    let mut sphere = rxpipe::mesh::icosphere(5);
    sphere.name = "wave".into();
    let scene = Scene::from_meshes("wave", vec![sphere]);
    if let Some(out) = png {
        let prepared = pipeline.prepare(&scene)?;
        let frame = pipeline.render_prepared(&prepared, &scene, &scene.camera, (960, 540), 0.7)?;
        frame.save_png(&out)?;
        println!("{out}: {}", frame.stats);
        return Ok(());
    }
    rxpipe_app::viewer::run(scene, pipeline)
}
