//! `rxpipe distance`: the least (or with `--max` the greatest) distance between two meshes
//! (gDist), where it is reached, on the CPU or the GPU.

use crate::{spinner, Res};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(clap::Args)]
pub struct Args {
    /// a mesh file, or a generator: icosphere:LEVEL, torus:N, grid:N, rings:TRIANGLES
    a: PathBuf,
    /// the other mesh
    b: PathBuf,
    /// the greatest distance between a point of A and a point of B (their span) instead of the
    /// least
    #[arg(long)]
    max: bool,
    /// answer within this relative error instead of exactly: a pair whose distance is at most
    /// 1 + E times the least (with --max: at least the greatest over 1 + E), found by measuring
    /// fewer pairs where many lie near the answer (0 to 1000)
    #[arg(
        long,
        value_name = "E",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    rel_error: f64,
    /// auto: the GPU when one can be used, else the CPU (and says so)
    #[arg(long, value_enum, default_value = "auto")]
    backend: Which,
    /// print JSON instead of text
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Which {
    Auto,
    Cpu,
    Cuda,
}

pub fn run(a: Args) -> Res {
    // (before the meshes are loaded: a bad value costs nothing)
    rxpipe::distance::rel_keep(a.rel_error)?;
    let pb = spinner(format!("loading {} and {}", a.a.display(), a.b.display()));
    let ma = rxpipe::io::load_mesh_or_spec(&a.a)?;
    let mb = rxpipe::io::load_mesh_or_spec(&a.b)?;
    let gpu = match a.backend {
        Which::Cpu => None,
        Which::Cuda => Some(
            rxpipe::gpu::Gpu::new()
                .map_err(|e| format!("{e} (or measure on the CPU: --backend cpu)"))?,
        ),
        Which::Auto => match rxpipe::gpu::Gpu::new() {
            Ok(g) => Some(g),
            Err(e) => {
                pb.suspend(|| eprintln!("notice: {e}; measuring on the CPU"));
                None
            }
        },
    };
    pb.set_message(format!(
        "measuring {} against {} triangles",
        ma.triangle_count(),
        mb.triangle_count()
    ));
    let t = std::time::Instant::now();
    // (distance, triangles, points, pairs) of the goal. The GPU's search is one launch that
    // says nothing until it ends; the CPU's runs on its own thread while this one shows the pairs
    // it has measured
    let rel = a.rel_error;
    let (distance, triangles, points, pairs) = match (&gpu, a.max) {
        (Some(g), false) => least(rxpipe::distance::cuda::run_rel(g, &ma, &mb, rel)?),
        (Some(g), true) => greatest(rxpipe::distance::cuda::run_max_rel(g, &ma, &mb, rel)?),
        (None, max) => {
            let watch = AtomicU64::new(0);
            let search = || -> Result<Answer, rxpipe::distance::DistanceError> {
                let w = Some(&watch);
                Ok(if max {
                    greatest(rxpipe::distance::cpu::run_max_watched(&ma, &mb, rel, w)?)
                } else {
                    least(rxpipe::distance::cpu::run_watched(&ma, &mb, rel, w)?)
                })
            };
            let what = pb.message();
            std::thread::scope(|s| {
                let job = s.spawn(search);
                while !job.is_finished() {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    let secs = t.elapsed().as_secs_f64();
                    pb.set_message(match watch.load(Ordering::Relaxed) {
                        0 => format!("{what} ({secs:.0} s)"),
                        n => format!("{what}: {n} pairs measured ({secs:.0} s)"),
                    });
                }
                job.join().expect("the search does not panic")
            })?
        }
    };
    let ms = t.elapsed().as_secs_f64() * 1e3;
    pb.finish_and_clear();
    let (backend, on) = if gpu.is_some() {
        ("cuda", "the GPU")
    } else {
        ("cpu", "the CPU")
    };
    let goal = if a.max { "greatest" } else { "least" };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "a": a.a, "b": a.b,
                "goal": goal,
                "rel_error": rel,
                "distance": distance,
                "triangles": triangles,
                "points": points.map(|p| p.to_array()),
                "pairs_tested": pairs,
                // (the least distance 0: the meshes touch or cross, at the points given)
                "touching": !a.max && distance == 0.0,
                "backend": backend,
                "ms": ms,
            }))?
        );
    } else {
        let p = |v: glam::DVec3| format!("({:.6}, {:.6}, {:.6})", v.x, v.y, v.z);
        if !a.max && distance == 0.0 {
            println!(
                "the meshes touch or cross: least distance 0, triangle {} of {} and triangle {} \
                 of {} meet at {}",
                triangles[0],
                a.a.display(),
                triangles[1],
                a.b.display(),
                p(points[0])
            );
        } else {
            println!(
            "{goal} distance {distance:.9} between triangle {} of {} at {} and triangle {} of {} at {}",
            triangles[0],
            a.a.display(),
            p(points[0]),
            triangles[1],
            a.b.display(),
            p(points[1])
        );
        }
        if rel > 0.0 {
            let bound = if a.max {
                format!("at least the greatest over {}", 1.0 + rel)
            } else {
                format!("at most {} times the least", 1.0 + rel)
            };
            println!("within the relative error {rel}: {bound}");
        }
        println!(
            "{pairs} triangle pairs measured; {ms:.1} ms on {on} (loading excluded, BVHs included)"
        );
    }
    Ok(())
}

type Answer = (f64, [u32; 2], [glam::DVec3; 2], u64);

fn least(c: rxpipe::distance::Closest) -> Answer {
    (c.distance, c.triangles, c.points, c.pairs_tested)
}

fn greatest(f: rxpipe::distance::Farthest) -> Answer {
    (f.distance, f.triangles, f.points, f.pairs_tested)
}
