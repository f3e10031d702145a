//! The frustum benchmark: what the frustum stage costs a frame, on the host and on the GPU, for
//! a range of object counts (host wall time of the whole stage, the GPU's copies and wait
//! included: that is what a frame pays before its geometry stage can start).

use super::Machine;
use glam::{Mat4, Vec3};
use rxpipe::backend::BackendKind;
use rxpipe::gpu::{median, Gpu};
use rxpipe::passes::frustum::{Frustum, Placement};
use rxpipe::passes::{FrameContext, FrameStage, ObjectBounds, Visibility};
use rxpipe::scene::Camera;
use rxpipe::Error;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One object count: medians of the stage's host wall time in ms.
#[derive(Debug, Clone, Serialize)]
pub struct FrustumRow {
    pub objects: usize,
    pub culled: usize,
    pub cpu_ms: f64,
    pub gpu_ms: f64,
    pub runs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct FrustumReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub threads: usize,
    pub rows: Vec<FrustumRow>,
}

/// Boxes scattered around the origin (a fixed xorshift sequence), about a third in view.
fn scattered(n: usize) -> Vec<ObjectBounds> {
    let mut seed = 0x9e37_79b9u32;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32 * 2.0 - 1.0
    };
    (0..n)
        .map(|_| {
            let c = Vec3::new(rnd(), rnd(), rnd()) * 8.0;
            let h = Vec3::new(rnd().abs(), rnd().abs(), rnd().abs()) + Vec3::splat(0.1);
            ObjectBounds {
                object: 0,
                bounds: Some((c - h, c + h)),
                model: Mat4::from_rotation_y(rnd()),
                triangles: 1,
                patches: None,
                mesh: None,
            }
        })
        .collect()
}

/// Times the stage on the CPU and on the GPU for each object count.
pub fn run(
    gpu: Arc<Gpu>,
    counts: &[usize],
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<FrustumReport, Error> {
    let info = rxpipe::gpu::probe();
    let camera = Camera {
        eye: Vec3::new(0.0, 2.0, 10.0),
        target: Vec3::ZERO,
        up: Vec3::Y,
        fov_y: 50.0,
        near: 0.5,
        far: 40.0,
    };
    let mut report = FrustumReport {
        machine: Machine::of(&gpu, &info),
        threads: rayon::current_num_threads(),
        rows: Vec::new(),
    };
    for &n in counts {
        progress(&format!("{n} objects"));
        let objects = scattered(n);
        let mut times = [Vec::new(), Vec::new()];
        let mut verdicts: Vec<Vec<bool>> = Vec::new();
        for (k, (kind, place)) in [
            (BackendKind::Cpu, Placement::Cpu),
            (BackendKind::Cuda, Placement::Cuda),
        ]
        .into_iter()
        .enumerate()
        {
            let stage = Frustum::new(place);
            let ctx = FrameContext {
                backend: kind,
                gpu: Some(&gpu),
                camera: &camera,
                view_proj: camera.view_projection(16.0 / 9.0),
                objects: &objects,
                cull: rxpipe::raster::CullMode::Back,
            };
            let mut visible = vec![Visibility::default(); n];
            for i in 0..warmup + runs {
                visible.iter_mut().for_each(|v| *v = Visibility::default());
                let t = Instant::now();
                stage.run(&ctx, &mut visible)?;
                if i >= warmup {
                    times[k].push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            verdicts.push(visible.iter().map(|v| v.visible).collect());
        }
        if verdicts[0] != verdicts[1] {
            return Err(Error::Backend(format!(
                "{n} objects: the GPU's frustum verdicts differ from the CPU's"
            )));
        }
        report.rows.push(FrustumRow {
            objects: n,
            culled: verdicts[0].iter().filter(|v| !**v).count(),
            cpu_ms: median(&times[0]),
            gpu_ms: median(&times[1]),
            runs,
        });
    }
    Ok(report)
}

impl FrustumReport {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# The frustum stage: host against GPU\n\n{}; host test on one thread of {}. Medians of the stage's host wall time in ms (the GPU's column includes uploading the objects, the launch, downloading the verdicts and the wait: what a frame pays before its geometry stage). Boxes scattered around the camera, about two thirds culled.\n\n| objects | culled | CPU ms | GPU ms |\n|---:|---:|---:|---:|\n",
            self.machine, self.threads
        );
        for r in &self.rows {
            s += &format!(
                "| {} | {} | {:.4} | {:.4} |\n",
                r.objects, r.culled, r.cpu_ms, r.gpu_ms
            );
        }
        s
    }
}
