//! The CPU geometry stage: every strategy with each shader load (transform, 256, 512 and 1024
//! dependent multiply-adds) on the Forsyth-ordered bunny (or the level-6 icosphere without
//! ../shared/meshes).

use criterion::{criterion_group, criterion_main, Criterion};
use rxpipe::geometry::{cpu, Batches, FmaLoad, Transform, Uniforms, VertexIn, VertexShader};
use rxpipe::{Strategy, VertexOrder};

fn geometry(c: &mut Criterion) {
    let mesh = match rxpipe::io::shared_meshes_dir() {
        Some(d) => rxpipe::io::load_mesh(d.join("stanford-bunny.obj")).expect("bunny"),
        None => {
            eprintln!("notice: ../shared/meshes not found; benchmarking the icosphere instead");
            rxpipe::mesh::icosphere(6)
        }
    };
    let v = VertexIn::from_mesh(&mesh);
    let idx = VertexOrder::Forsyth.apply(&mesh.indices, mesh.vertex_count());
    let batches = Batches::build(&idx, v.len(), 1023, 256).unwrap();
    let u = Uniforms::default();
    let shaders: Vec<Box<dyn VertexShader>> = vec![
        Box::new(Transform),
        Box::new(FmaLoad::new(256)),
        Box::new(FmaLoad::new(512)),
        Box::new(FmaLoad::new(1024)),
    ];
    for sh in &shaders {
        let mut g = c.benchmark_group(format!(
            "geometry {} {}",
            mesh.name.rsplit('/').next().unwrap_or(""),
            sh.name()
        ));
        g.sample_size(20);
        g.warm_up_time(std::time::Duration::from_secs(1));
        g.measurement_time(std::time::Duration::from_secs(2));
        for s in Strategy::all() {
            g.bench_function(s.name(), |b| {
                b.iter(|| cpu::run(s, &v, &idx, Some(&batches), sh.as_ref(), &u).unwrap())
            });
        }
        g.finish();
    }
}

criterion_group!(benches, geometry);
criterion_main!(benches);
