//! A full CPU frame: the Stanford bunny at 1280x720 with the transform vertex shader, lit
//! shading, depth test and back-face culling; and the same frame drawn by the `euc` 0.5.3 software
//! renderer, side by side. Without ../shared/meshes (or RXPIPE_MESHES) it draws the level-6
//! icosphere instead, and says so.

use criterion::{criterion_group, criterion_main, Criterion};
use euc::{buffer::Buffer2d, rasterizer, Pipeline as EucPipeline, Target};
use rxpipe::{Backend, Pipeline, Renderer, Scene, Strategy, VertexOrder};

const W: u32 = 1280;
const H: u32 = 720;

struct EucBunny<'a> {
    mvp: vek::Mat4<f32>,
    positions: &'a [vek::Vec3<f32>],
    normals: &'a [vek::Vec3<f32>],
    light: vek::Vec3<f32>,
}

impl EucPipeline for EucBunny<'_> {
    type Vertex = u32;
    type VsOut = vek::Vec3<f32>;
    type Pixel = u32;

    #[inline(always)]
    fn vert(&self, i: &u32) -> ([f32; 4], Self::VsOut) {
        let i = *i as usize;
        (
            (self.mvp * vek::Vec4::from_point(self.positions[i])).into_array(),
            self.normals[i],
        )
    }

    #[inline(always)]
    fn frag(&self, n: &Self::VsOut) -> u32 {
        let d = n.normalized().dot(self.light).max(0.0);
        let c = ((0.15 + 0.85 * d) * 255.0) as u32;
        c | c << 8 | c << 16 | 0xff00_0000
    }
}

fn frame(c: &mut Criterion) {
    let (name, mesh) = match rxpipe::io::shared_meshes_dir() {
        Some(dir) => (
            "bunny",
            rxpipe::io::load_mesh(dir.join("stanford-bunny.obj")).expect("bunny"),
        ),
        None => {
            eprintln!("notice: ../shared/meshes not found; drawing the level-6 icosphere instead");
            ("icosphere:6", rxpipe::mesh::icosphere(6))
        }
    };
    let scene = Scene::from_meshes(name, vec![mesh]);
    let renderer = Renderer::new(Backend::Cpu).unwrap();
    let mut g = c.benchmark_group(format!("frame {name} 1280x720"));
    g.sample_size(30);
    for (name, order) in [
        ("hash", VertexOrder::Forsyth),
        ("multi", VertexOrder::Input),
        ("multi", VertexOrder::Forsyth),
        ("warp", VertexOrder::Forsyth),
    ] {
        let p = Pipeline::builder()
            .strategy(Strategy::parse(name).unwrap())
            .order(order)
            .build(&renderer)
            .unwrap();
        let prepared = p.prepare(&scene).unwrap();
        g.bench_function(format!("rxpipe {name} ({order} order)"), |b| {
            let mut f = rxpipe::Frame::empty();
            b.iter(|| {
                p.render_into(&prepared, &scene, &scene.camera, (W, H), 0.0, &mut f)
                    .unwrap()
            })
        });
    }
    // euc, given the same buffers as rxpipe (smooth normals from rxpipe's pass, the vertex
    // order's triangles and vertex layout), camera and culling
    let vp = scene.camera.view_projection(W as f32 / H as f32);
    // euc expects OpenGL-style clip space (z in [-w, w]); convert our [0, w] depth
    let to_gl = glam::Mat4::from_cols_array(&[
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, -1.0, 1.0,
    ]);
    let mvp = vek::Mat4::from_col_array((to_gl * vp).to_cols_array());
    for order in [VertexOrder::Input, VertexOrder::Forsyth] {
        let prepared = Pipeline::builder()
            .order(order)
            .build(&renderer)
            .unwrap()
            .prepare(&scene)
            .unwrap();
        let o = prepared.cpu_mesh(0).expect("the CPU backend");
        let positions: Vec<vek::Vec3<f32>> = o
            .vertices
            .iter()
            .map(|v| vek::Vec3::from(v.position.to_array()))
            .collect();
        let normals: Vec<vek::Vec3<f32>> = o
            .vertices
            .iter()
            .map(|v| vek::Vec3::from(v.normal.to_array()))
            .collect();
        let euc = EucBunny {
            mvp,
            positions: &positions,
            normals: &normals,
            light: vek::Vec3::new(0.4, 1.0, 0.6).normalized(),
        };
        let mut color = Buffer2d::new([W as usize, H as usize], 0u32);
        let mut depth = Buffer2d::new([W as usize, H as usize], 1.0f32);
        g.bench_function(format!("euc 0.5.3, one core ({order} order)"), |b| {
            b.iter(|| {
                color.clear(0);
                depth.clear(1.0);
                euc.draw::<rasterizer::Triangles<_>, _>(&o.indices, &mut color, Some(&mut depth));
            })
        });
    }
    g.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
