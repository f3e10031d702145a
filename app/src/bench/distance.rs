//! The distance benchmark: the least and the greatest distance between the shared mesh pairs
//! (../shared/meshes/distance/), on the CPU (the reference's search, host wall time) and on the
//! GPU (gDist's front expansion, CUDA events around the whole query, its read-backs included);
//! the BVHs are built before timing on the host, as gDist's are. Also what the distance frame stage
//! adds per frame for an object that moves: B placed under a new transform (positions
//! transformed, tree refit), on the host and on the device.

use super::Machine;
use rxpipe::distance::bvh::Bvh;
use rxpipe::distance::placed::Placed;
use rxpipe::distance::{cpu, cuda};
use rxpipe::gpu::{median, Gpu};
use rxpipe::{Error, Mesh};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The shared pairs (../shared/meshes/distance/), `bench distance`'s default.
pub const PAIRS: [&str; 7] = [
    "sphere_1000",
    "sphere_10000",
    "sphere_100000",
    "tools_1000",
    "tools_10000",
    "tools_100000",
    "tools_200000",
];

/// A CPU search longer than this (ms) is timed once.
const SLOW_MS: f64 = 1000.0;

/// One pair: sizes, result, and medians in ms.
#[derive(Debug, Clone, Serialize)]
pub struct DistanceRow {
    pub pair: String,
    pub triangles: [usize; 2],
    pub distance: f64,
    /// both BVHs, built in parallel on the host
    pub bvh_ms: f64,
    pub cpu_ms: f64,
    /// CPU runs timed (one where a run takes more than a second)
    pub cpu_runs: usize,
    pub cpu_pairs_tested: u64,
    pub gpu_ms: Option<f64>,
    pub gpu_pairs_tested: Option<u64>,
    pub gpu_expansions: Option<u32>,
    pub gpu_largest_front: Option<u64>,
    /// the GPU found the CPU's distance (bit for bit) and pair
    pub gpu_equals_cpu: Option<bool>,
    /// the least-distance search capped at half the distance (`min_distance_within`,
    /// `query_within`: a pair beyond the cap; the distance stage itself asks a tolerance query),
    /// on the host and on the device; none where the meshes touch or cross (no cap lies below 0)
    pub capped_cpu_ms: Option<f64>,
    pub capped_gpu_ms: Option<f64>,
    /// B moved: its positions transformed and its tree refit, on the host (all threads)
    pub refit_cpu_ms: f64,
    /// the same on the device (CUDA events)
    pub refit_gpu_ms: Option<f64>,
    /// the greatest distance between the pair (gDist's maximum distance)
    pub max: MaxRow,
    /// both searches within a relative error, where one was asked for
    pub rel: Option<RelRow>,
    pub runs: usize,
}

/// Both searches of one pair within the relative error `rel` (`min_distance_rel`,
/// `max_distance_rel` and their GPU queries).
#[derive(Debug, Clone, Serialize)]
pub struct RelRow {
    pub rel: f64,
    pub least: RelGoal,
    pub greatest: RelGoal,
}

/// One search within a relative error: what it found and medians in ms.
#[derive(Debug, Clone, Serialize)]
pub struct RelGoal {
    /// the CPU's distance, and its ratio to the exact one
    pub distance: f64,
    pub ratio: f64,
    pub cpu_ms: f64,
    pub cpu_runs: usize,
    pub cpu_pairs_tested: u64,
    /// the GPU's ratio to the exact distance (its pair may differ from the CPU's)
    pub gpu_ratio: Option<f64>,
    pub gpu_ms: Option<f64>,
    pub gpu_pairs_tested: Option<u64>,
}

/// The greatest distance between one pair: result and medians in ms.
#[derive(Debug, Clone, Serialize)]
pub struct MaxRow {
    pub distance: f64,
    pub cpu_ms: f64,
    pub cpu_runs: usize,
    pub cpu_pairs_tested: u64,
    pub gpu_ms: Option<f64>,
    pub gpu_pairs_tested: Option<u64>,
    pub gpu_expansions: Option<u32>,
    pub gpu_largest_front: Option<u64>,
    /// the GPU found the CPU's distance (bit for bit) and pair
    pub gpu_equals_cpu: Option<bool>,
}

/// Times `f` on the host: `warmup` runs, then `runs` timed, each in ms; a run longer than
/// [`SLOW_MS`] is timed and ends the series. Also the last result.
fn time_host<T>(warmup: usize, runs: usize, mut f: impl FnMut() -> T) -> (Vec<f64>, T) {
    let mut ms = Vec::new();
    let mut last = None;
    for i in 0..warmup + runs.max(1) {
        let t = Instant::now();
        last = Some(f());
        let took = t.elapsed().as_secs_f64() * 1e3;
        if i >= warmup || took > SLOW_MS {
            ms.push(took);
        }
        if took > SLOW_MS {
            break;
        }
    }
    (ms, last.expect("ran at least once"))
}

/// The distance frame stage over a scene of many objects, per frame (host wall time of the
/// stage's `run`, its device work and read-backs included).
#[derive(Debug, Clone, Serialize)]
pub struct StageRow {
    /// "still" (no object moves: the stage's cached reaches) or "moving" (every object turns
    /// every frame)
    pub case: String,
    pub objects: usize,
    pub triangles: u64,
    /// the stage's distance
    pub within: f64,
    /// objects within it (of those that are not the reference)
    pub near: usize,
    /// objects whose boxes come within it (placed and searched each time they move)
    pub searched: usize,
    pub cpu_ms: f64,
    pub gpu_ms: Option<f64>,
    /// the GPU kept the CPU's objects, with the same distances to the bit
    pub gpu_equals_cpu: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DistanceReport {
    #[serde(flatten)]
    pub machine: Machine,
    pub host: String,
    pub rows: Vec<DistanceRow>,
    pub stage: Vec<StageRow>,
}

/// Measures each pair: `NAME` for ../shared/meshes/distance/NAME_{A,B}.obj.gz, or two mesh
/// files or generator specs joined by `+`; both searches also within the relative error `rel`
/// where it is above 0.
pub fn run(
    gpu: Option<Arc<Gpu>>,
    pairs: &[&str],
    rel: f64,
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<DistanceReport, Error> {
    let mut rows = Vec::new();
    let mut query = gpu.as_ref().map(cuda::Distance::new).transpose()?;
    for &name in pairs {
        progress(&format!("loading {name}"));
        let (a, b) = load_pair(name)?;
        rxpipe::distance::check(&a)?;
        rxpipe::distance::check(&b)?;
        let pair = Pair { name, a, b };
        progress(&format!("{name}: BVHs"));
        let mut bvh_ms = Vec::new();
        let mut trees = None;
        for _ in 0..runs.clamp(1, 5) {
            let t = Instant::now();
            trees = Some(rayon::join(
                || Bvh::of_checked(&pair.a),
                || Bvh::of_checked(&pair.b),
            ));
            bvh_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let trees = trees.expect("built at least once");
        let times = Times { warmup, runs };
        let (mut row, found) = on_cpu(&pair, &trees, rel, times, progress)?;
        row.bvh_ms = median(&bvh_ms);
        if let (Some(gpu), Some(q)) = (&gpu, query.as_mut()) {
            on_gpu(gpu, q, &pair, &trees, &found, &mut row, times, progress)?;
        }
        rows.push(row);
    }
    progress("the frame stage");
    let stage = stage_rows(gpu.as_ref(), warmup, runs)?;
    Ok(DistanceReport {
        stage,
        machine: match &gpu {
            Some(g) => Machine::of(g, &rxpipe::gpu::probe()),
            None => Machine::host(),
        },
        host: format!(
            "{}, {} threads",
            super::reindex::cpu_name(),
            rayon::current_num_threads()
        ),
        rows,
    })
}

/// A pair of meshes measured.
struct Pair<'n> {
    name: &'n str,
    a: Mesh,
    b: Mesh,
}

/// The runs of each measurement and those before them, not counted.
#[derive(Clone, Copy)]
struct Times {
    warmup: usize,
    runs: usize,
}

/// What the CPU found, which the GPU's searches must equal (or approach within `rel`).
struct Found {
    least: rxpipe::distance::Closest,
    greatest: rxpipe::distance::Farthest,
    /// half the least distance, where the meshes neither touch nor cross
    cap: Option<f64>,
    /// the two poses the refits turn B between
    poses: [glam::Mat4; 2],
}

/// A pair's row as the CPU measures it (its BVH time left to the caller): the least distance,
/// capped, the greatest, both within `rel` where it is above 0, and B's refit.
fn on_cpu(
    pair: &Pair,
    (ta, tb): &(Bvh, Bvh),
    rel: f64,
    Times { warmup, runs }: Times,
    progress: &dyn Fn(&str),
) -> Result<(DistanceRow, Found), Error> {
    let (name, a, b) = (pair.name, &pair.a, &pair.b);
    let (ta, tb) = (ta, tb);
    progress(&format!("{name}: CPU"));
    // (a search of seconds is timed once: the nested spheres' cost grows as n^1.5)
    let (cpu_ms, c) = time_host(warmup, runs, || cpu::min_distance(a, ta, b, tb));
    // (touching or crossing meshes have no cap below their distance)
    let cap = (c.distance > 0.0).then_some(c.distance * 0.5);
    let mut capped_ms = None;
    if let Some(cap) = cap {
        let (ms, r) = time_host(warmup, runs, || {
            cpu::min_distance_within(a, ta, b, tb, cap).map(|r| r.distance)
        });
        if let Some(d) = r.filter(|&d| d <= cap) {
            return Err(Error::Backend(format!(
                "{name}: a search capped at {cap} found {d}, below the whole search's {}",
                c.distance
            )));
        }
        capped_ms = Some(median(&ms));
    }
    progress(&format!("{name}: the greatest distance, CPU"));
    let (max_ms, far) = time_host(warmup, runs, || cpu::max_distance(a, ta, b, tb));
    let mut rel_row = None;
    if rel > 0.0 {
        progress(&format!("{name}: within {rel}, CPU"));
        let (ms, near) = time_host(warmup, runs, || cpu::min_distance_rel(a, ta, b, tb, rel));
        let near = near?;
        let (max_ms, wide) = time_host(warmup, runs, || cpu::max_distance_rel(a, ta, b, tb, rel));
        let wide = wide?;
        let goal = |ms: &[f64], distance: f64, exact: f64, pairs: u64| RelGoal {
            distance,
            ratio: distance / exact,
            cpu_ms: median(ms),
            cpu_runs: ms.len(),
            cpu_pairs_tested: pairs,
            gpu_ratio: None,
            gpu_ms: None,
            gpu_pairs_tested: None,
        };
        rel_row = Some(RelRow {
            rel,
            least: goal(&ms, near.distance, c.distance, near.pairs_tested),
            greatest: goal(&max_ms, wide.distance, far.distance, wide.pairs_tested),
        });
    }
    progress(&format!("{name}: refit"));
    // B turned back and forth between two poses, so that every placing moves it
    let poses = [
        glam::Mat4::from_rotation_y(0.25),
        glam::Mat4::from_rotation_translation(
            glam::Quat::from_rotation_x(0.5),
            glam::Vec3::new(0.1, 0.0, 0.0),
        ),
    ];
    let shared_b = Arc::new(b.clone());
    let mut placed = Placed::new(shared_b)?;
    let mut refit_ms = Vec::new();
    for i in 0..warmup + runs {
        let t = Instant::now();
        placed.place(poses[i % 2])?;
        if i >= warmup {
            refit_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let row = DistanceRow {
        pair: name.to_string(),
        triangles: [a.triangle_count(), b.triangle_count()],
        distance: c.distance,
        bvh_ms: 0.0,
        cpu_ms: median(&cpu_ms),
        cpu_runs: cpu_ms.len(),
        cpu_pairs_tested: c.pairs_tested,
        gpu_ms: None,
        gpu_pairs_tested: None,
        gpu_expansions: None,
        gpu_largest_front: None,
        gpu_equals_cpu: None,
        capped_cpu_ms: capped_ms,
        capped_gpu_ms: None,
        refit_cpu_ms: median(&refit_ms),
        refit_gpu_ms: None,
        max: MaxRow {
            distance: far.distance,
            cpu_ms: median(&max_ms),
            cpu_runs: max_ms.len(),
            cpu_pairs_tested: far.pairs_tested,
            gpu_ms: None,
            gpu_pairs_tested: None,
            gpu_expansions: None,
            gpu_largest_front: None,
            gpu_equals_cpu: None,
        },
        rel: rel_row,
        runs,
    };
    let found = Found {
        least: c,
        greatest: far,
        cap,
        poses,
    };
    Ok((row, found))
}

/// The GPU's columns of a pair's row: the same searches, their equality with the CPU's, and
/// B's refit on the device.
#[allow(clippy::too_many_arguments)]
fn on_gpu(
    gpu: &Arc<Gpu>,
    q: &mut cuda::Distance,
    pair: &Pair,
    (ta, tb): &(Bvh, Bvh),
    found: &Found,
    row: &mut DistanceRow,
    Times { warmup, runs }: Times,
    progress: &dyn Fn(&str),
) -> Result<(), Error> {
    let (name, a, b) = (pair.name, &pair.a, &pair.b);
    let (c, far, cap, poses) = (&found.least, &found.greatest, found.cap, &found.poses);
    let rel = row.rel.as_ref().map_or(0.0, |r| r.rel);
    progress(&format!("{name}: GPU"));
    let da = cuda::DeviceMesh::new(gpu, a, ta)?;
    let db = cuda::DeviceMesh::new(gpu, b, tb)?;
    let mut last = None;
    let times = gpu.time(warmup, runs, || {
        last = Some(q.query(&da, &db)?);
        Ok::<_, Error>(())
    })?;
    let g = last.expect("ran at least once");
    row.gpu_ms = Some(median(&times));
    row.gpu_pairs_tested = Some(g.pairs_tested);
    row.gpu_expansions = Some(g.expansions);
    row.gpu_largest_front = Some(g.largest_front);
    // (where the meshes cross, each search ends at the first crossing pair it finds)
    row.gpu_equals_cpu = Some(
        g.d2.sqrt().to_bits() == c.distance.to_bits()
            && (g.triangles == c.triangles || c.distance == 0.0),
    );
    if let Some(cap) = cap {
        let times = gpu.time(warmup, runs, || q.query_within(&da, &db, cap).map(|_| ()))?;
        row.capped_gpu_ms = Some(median(&times));
    }
    progress(&format!("{name}: the greatest distance, GPU"));
    let mut last = None;
    let times = gpu.time(warmup, runs, || {
        last = Some(q.query_max(&da, &db)?);
        Ok::<_, Error>(())
    })?;
    let g = last.expect("ran at least once");
    let m = &mut row.max;
    m.gpu_ms = Some(median(&times));
    m.gpu_pairs_tested = Some(g.pairs_tested);
    m.gpu_expansions = Some(g.expansions);
    m.gpu_largest_front = Some(g.largest_front);
    m.gpu_equals_cpu =
        Some(g.d2.sqrt().to_bits() == far.distance.to_bits() && g.triangles == far.triangles);
    if let Some(r) = row.rel.as_mut() {
        progress(&format!("{name}: within {rel}, GPU"));
        for (g, greatest, exact) in [
            (&mut r.least, false, c.distance),
            (&mut r.greatest, true, far.distance),
        ] {
            let mut last = None;
            let times = gpu.time(warmup, runs, || {
                last = Some(if greatest {
                    q.query_max_rel(&da, &db, rel)?
                } else {
                    q.query_rel(&da, &db, rel)?
                });
                Ok::<_, Error>(())
            })?;
            let found = last.expect("ran at least once");
            g.gpu_ms = Some(median(&times));
            g.gpu_ratio = Some(found.d2.sqrt() / exact);
            g.gpu_pairs_tested = Some(found.pairs_tested);
        }
    }
    let mut moving = cuda::DeviceMesh::placed(gpu, b, tb)?;
    let mut i = 0;
    let times = gpu.time(warmup, runs, || {
        i += 1;
        q.place(&mut moving, &poses[i % 2])
    })?;
    row.refit_gpu_ms = Some(median(&times));
    Ok(())
}

/// The stage's scene: a sphere of 81,920 triangles (the reference, radius 1) and 63 tori of 8,192
/// triangles on a spiral around it, from crossing it to 3 away; in frame `f` of the moving case
/// each torus turns about its own centre.
fn stage_scene(
    f: usize,
    moving: bool,
    [sphere, torus]: &[Arc<Mesh>; 2],
) -> Vec<(Arc<Mesh>, glam::Mat4)> {
    use glam::{Mat4, Quat, Vec3};
    let mut v = vec![(sphere.clone(), Mat4::IDENTITY)];
    for k in 0..63 {
        let t = k as f32 / 62.0;
        let angle = k as f32 * 2.4;
        // the torus's centre 1.3 to 4.4 from the sphere's: its ring's nearest points 0.38
        // closer than that (0.3 + 0.08), so the first few cross the sphere
        let r = 1.3 + 3.1 * t * t;
        let centre = Vec3::new(
            angle.cos() * r,
            (k as f32 * 0.7).sin() * 0.3,
            angle.sin() * r,
        );
        let spin = if moving { f as f32 * 0.05 } else { 0.0 };
        let turn = Quat::from_rotation_y(angle + spin) * Quat::from_rotation_x(0.3 * k as f32);
        v.push((torus.clone(), Mat4::from_rotation_translation(turn, centre)));
    }
    v
}

/// The distance stage over [`stage_scene`], still and moving, on the CPU and the GPU.
fn stage_rows(gpu: Option<&Arc<Gpu>>, warmup: usize, runs: usize) -> Result<Vec<StageRow>, Error> {
    use rxpipe::backend::BackendKind;
    use rxpipe::passes::distance_cull::{DistanceCull, Placement, Reach};
    use rxpipe::passes::{FrameContext, FrameStage, ObjectBounds, Visibility};
    const WITHIN: f64 = 0.05;
    // (the meshes made once: the stage keeps a tree per mesh it has met)
    let meshes = [
        Arc::new(rxpipe::mesh::icosphere(6)),
        Arc::new(rxpipe::mesh::torus(0.3, 0.08, 128, 32)),
    ];
    let camera = rxpipe::scene::Camera {
        eye: glam::Vec3::new(0.0, 3.0, 8.0),
        target: glam::Vec3::ZERO,
        up: glam::Vec3::Y,
        fov_y: 50.0,
        near: 0.1,
        far: 100.0,
    };
    let mut rows = Vec::new();
    for moving in [false, true] {
        // one run of frames on a side: per-frame ms and the last frame's reaches
        let side = |kind: BackendKind,
                    g: Option<&Arc<Gpu>>|
         -> Result<(Vec<f64>, Vec<Option<Reach>>), Error> {
            let placement = match kind {
                BackendKind::Cpu => Placement::Cpu,
                BackendKind::Cuda => Placement::Cuda,
            };
            let stage = DistanceCull::new(0, WITHIN, placement);
            let measures = stage.measures();
            let mut ms = Vec::new();
            for f in 0..warmup + runs {
                let objects: Vec<ObjectBounds> = stage_scene(f, moving, &meshes)
                    .into_iter()
                    .enumerate()
                    .map(|(k, (mesh, model))| ObjectBounds {
                        object: k,
                        bounds: mesh.bounds(),
                        model,
                        triangles: mesh.triangle_count() as u64,
                        patches: None,
                        mesh: Some(mesh),
                    })
                    .collect();
                let ctx = FrameContext {
                    backend: kind,
                    gpu: g,
                    camera: &camera,
                    view_proj: glam::Mat4::IDENTITY,
                    objects: &objects,
                    cull: rxpipe::raster::CullMode::Back,
                };
                let mut v = vec![Visibility::default(); objects.len()];
                let t = Instant::now();
                stage.run(&ctx, &mut v)?;
                if f >= warmup {
                    ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            Ok((ms, measures.last()))
        };
        let (cpu_ms, cpu_last) = side(BackendKind::Cpu, None)?;
        let scene = stage_scene(0, moving, &meshes);
        let reference_box = rxpipe::distance::placed::world_box(
            scene[0].0.bounds().expect("the sphere has positions"),
            &scene[0].1,
        );
        let searched = scene[1..]
            .iter()
            .filter(|(m, model)| {
                let b = rxpipe::distance::placed::world_box(m.bounds().expect("positions"), model);
                rxpipe::distance::placed::box_gap(&reference_box, &b) <= WITHIN
            })
            .count();
        let mut row = StageRow {
            case: if moving { "moving" } else { "still" }.into(),
            objects: scene.len(),
            triangles: scene.iter().map(|(m, _)| m.triangle_count() as u64).sum(),
            within: WITHIN,
            near: cpu_last
                .iter()
                .filter(|r| matches!(r, Some(Reach::Within)))
                .count(),
            searched,
            cpu_ms: median(&cpu_ms),
            gpu_ms: None,
            gpu_equals_cpu: None,
        };
        if let Some(g) = gpu {
            let (gpu_ms, gpu_last) = side(BackendKind::Cuda, Some(g))?;
            row.gpu_ms = Some(median(&gpu_ms));
            row.gpu_equals_cpu = Some(gpu_last == cpu_last);
        }
        rows.push(row);
    }
    Ok(rows)
}

fn load_pair(name: &str) -> Result<(Mesh, Mesh), Error> {
    if let Some((a, b)) = name.split_once('+') {
        return Ok((
            rxpipe::io::load_mesh_or_spec(a)?,
            rxpipe::io::load_mesh_or_spec(b)?,
        ));
    }
    let dir = rxpipe::io::shared_meshes_dir().ok_or_else(|| {
        Error::Backend(format!(
            "the pair '{name}' is one of ../shared/meshes/distance/, which was not found (set \
             RXPIPE_MESHES, or give two meshes as A+B)"
        ))
    })?;
    let file = |s: &str| dir.join("distance").join(format!("{name}_{s}.obj.gz"));
    let load = |p: &Path| rxpipe::io::load_mesh(p);
    Ok((load(&file("A"))?, load(&file("B"))?))
}

/// A search's GPU columns (time, pairs measured, expansions, largest front, GPU = CPU), '-'
/// where the GPU did not run.
fn gpu_cells(
    ms: Option<f64>,
    pairs: Option<u64>,
    expansions: Option<u32>,
    largest: Option<u64>,
    equal: Option<bool>,
) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    [
        opt(ms.map(|v| format!("{v:.3}"))),
        opt(pairs.map(|v| v.to_string())),
        opt(expansions.map(|v| v.to_string())),
        opt(largest.map(|v| v.to_string())),
        opt(equal.map(|v| if v { "yes" } else { "NO" }.to_string())),
    ]
    .join(" | ")
}

impl DistanceReport {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Least and greatest distance between two meshes (gDist)\n\n{} (host: {})\n\n",
            self.machine, self.host
        );
        s += "BVHs built on the host before timing; CPU: the reference's search on every host thread \
              (host wall time; a search of more than a second timed once); GPU: gDist's front \
              expansion, CUDA events around the whole query. Capped: the least-distance search capped at \
              half the distance (a pair beyond the cap; the distance stage asks a tolerance query \
              instead, measured in the stage's table below; '-' where the meshes touch or cross). \
              Where they cross, each search ends at the first crossing pair it finds, so GPU = CPU \
              compares the distances only. Refit: B \
              moved (positions transformed, its tree refit), as the distance frame stage does for an object that moved, on the host \
              (wall time) and on the device (CUDA events). Medians in ms.\n\n";
        s += "| pair | triangles | distance | BVHs | CPU | CPU pairs | GPU | GPU pairs | expansions | largest front | GPU = CPU | capped CPU | capped GPU | refit CPU | refit GPU |\n";
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n";
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        for r in &self.rows {
            s += &format!(
                "| {} | {} + {} | {:.6} | {:.2} | {:.3} | {} | {} | {} | {} | {:.3} | {} |\n",
                r.pair,
                r.triangles[0],
                r.triangles[1],
                r.distance,
                r.bvh_ms,
                r.cpu_ms,
                r.cpu_pairs_tested,
                gpu_cells(
                    r.gpu_ms,
                    r.gpu_pairs_tested,
                    r.gpu_expansions,
                    r.gpu_largest_front,
                    r.gpu_equals_cpu
                ),
                opt(r.capped_cpu_ms.map(|v| format!("{v:.3}"))),
                opt(r.capped_gpu_ms.map(|v| format!("{v:.3}"))),
                r.refit_cpu_ms,
                opt(r.refit_gpu_ms.map(|v| format!("{v:.3}"))),
            );
        }
        s += "\nThe greatest distance between a point of A and a point of B (gDist's maximum \
              distance, its MaxDist benchmark), the same trees and timing:\n\n";
        s += "| pair | greatest distance | CPU | CPU runs | CPU pairs | GPU | GPU pairs | expansions | largest front | GPU = CPU |\n";
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
        for r in &self.rows {
            let m = &r.max;
            s += &format!(
                "| {} | {:.6} | {:.3} | {} | {} | {} |\n",
                r.pair,
                m.distance,
                m.cpu_ms,
                m.cpu_runs,
                m.cpu_pairs_tested,
                gpu_cells(
                    m.gpu_ms,
                    m.gpu_pairs_tested,
                    m.gpu_expansions,
                    m.gpu_largest_front,
                    m.gpu_equals_cpu
                ),
            );
        }
        if let Some(rel) = self.rows.iter().find_map(|r| r.rel.as_ref()).map(|r| r.rel) {
            s += &format!(
                "\nBoth searches within the relative error {rel} (`rxpipe distance --rel-error \
                 {rel}`): a pair at most 1 + {rel} times the least distance, at least the \
                 greatest over 1 + {rel}. Found: the distance over the exact one (the GPU's \
                 pair may differ from the CPU's). The same trees and timing:\n\n"
            );
            s += "| pair | least: found | CPU | CPU pairs | GPU found | GPU | GPU pairs | greatest: found | CPU | CPU pairs | GPU found | GPU | GPU pairs |\n";
            s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
            let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            for r in &self.rows {
                let Some(q) = &r.rel else { continue };
                s += &format!("| {} |", r.pair);
                for g in [&q.least, &q.greatest] {
                    s += &format!(
                        " {:.6} | {:.3} | {} | {} | {} | {} |",
                        g.ratio,
                        g.cpu_ms,
                        g.cpu_pairs_tested,
                        opt(g.gpu_ratio.map(|v| format!("{v:.6}"))),
                        opt(g.gpu_ms.map(|v| format!("{v:.3}"))),
                        opt(g.gpu_pairs_tested.map(|v| v.to_string())),
                    );
                }
                s += "\n";
            }
        }
        s += "\nThe distance frame stage (`distance:to=0:within=W`) over a sphere of 81,920 triangles \
              and 63 tori of 8,192 around it: host wall time of the stage per frame (its device \
              work and read-backs included), medians in ms. Still: no object moves (the reaches \
              are cached); moving: every torus turns every frame (those whose boxes come within \
              W are placed and searched again, the others told by their boxes).\n\n";
        s += "| case | objects | triangles | within | near | searched | CPU | GPU | GPU = CPU |\n";
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
        for r in &self.stage {
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {:.3} | {} | {} |\n",
                r.case,
                r.objects,
                r.triangles,
                r.within,
                r.near,
                r.searched,
                r.cpu_ms,
                opt(r.gpu_ms.map(|v| format!("{v:.3}"))),
                opt(r
                    .gpu_equals_cpu
                    .map(|v| if v { "yes" } else { "NO" }.to_string())),
            );
        }
        s
    }
}
