//! The frame benchmark: whole frames, per-stage times: device times (CUDA events) on the GPU,
//! host wall times on the CPU backend.

use super::{bench_mesh, Machine, MeshRow, GEOMETRY_MESHES};
use glam::Vec3;
use rxpipe::geometry::{Strategy, VertexOrder};
use rxpipe::gpu::median;
use rxpipe::Error;
use serde::Serialize;

/// The meshes of the frame benchmark (those of the geometry benchmark).
pub const FRAME_MESHES: [&str; 4] = GEOMETRY_MESHES;

/// One mesh and strategy of the frame benchmark: medians of stage times in ms (CUDA events on
/// the GPU, host wall time on the CPU).
#[derive(Debug, Clone, Serialize)]
pub struct FrameRow {
    pub mesh: String,
    pub strategy: String,
    pub triangles: u64,
    /// triangles left after setup (binned, or rasterised by the fused geometry stage)
    pub rasterized: u64,
    /// of those, the small ones the fused geometry stage rasterised itself
    pub fused: u64,
    /// whole batches the fused geometry stage culled by their bounds, and their triangles (not
    /// shaded, set up or counted as culled one by one)
    pub batches_culled: u64,
    pub batch_culled_triangles: u64,
    /// of the batches culled whole, those hidden behind what the frame drew first
    pub batches_occluded: u64,
    /// host wall time, in seconds, of loading or generating the mesh (the same in every row of
    /// a mesh), and of preparing it for the row's pipeline (its passes, the upload, the batches
    /// and their tables; `None`: prepared by an earlier row of the mesh)
    pub load_s: f64,
    pub prepare_s: Option<f64>,
    /// where the preparation's time went, seconds summed over the objects: each stage, the
    /// steps of making the meshes resident (`resident: upload`...), and the rest ('other':
    /// the meshes' checks and bounds, the objects' lists); empty where `prepare_s` is `None`
    pub prepare_steps: Vec<(String, f64)>,
    pub asr: f64,
    pub geometry_ms: f64,
    pub setup_ms: f64,
    pub bin_ms: f64,
    pub raster_ms: f64,
    /// the device time of the whole frame (median of the per-frame sums)
    pub frame_ms: f64,
    /// host wall time of a frame including the download of colour and depth
    pub with_download_ms: f64,
    /// host wall time of the viewer's frame ([`crate::viewer::FrameLoop`]): colour only,
    /// downloaded into page-locked memory, while the frame before it is copied into a
    /// window-sized buffer
    pub window_ms: f64,
    /// host wall time of the frame stages (the frustum test, with its download on the GPU)
    pub frame_stages_ms: f64,
    /// objects the frame stages dropped in the last frame
    pub culled_objects: u64,
    /// triangles the frame stages dropped in the last frame
    pub culled_triangles: u64,
    /// where the host's time of a frame goes (medians of each part)
    pub host: HostRow,
    /// triangles drawn per second of `frame_ms`
    pub triangles_per_s: f64,
    /// device memory the mesh took, prepared and drawn: free memory before it was prepared
    /// less free memory after this row's frames (its buffers, queue and the raster stage's
    /// growth; the GPU only)
    pub device_bytes: Option<u64>,
    /// of `device_bytes`, what the preparation took: free memory before less free memory after
    /// it (the resident meshes, batches and tables; the row that prepared the mesh, on the GPU)
    pub prepared_device_bytes: Option<u64>,
    /// device memory in use (total less free) after this row's frames (the GPU only)
    pub device_in_use_bytes: Option<u64>,
    pub runs: usize,
    /// the parts each frame was drawn in (sort-last on one device, the parts in turn; 1: whole)
    pub parts: usize,
    /// the GPUs each frame was spread over (a share each, composited; 1: one GPU)
    pub gpus: usize,
    /// drawn in parts: how the frame's time divides (medians, ms)
    pub parts_times: Option<PartsRow>,
}

/// Medians of the times of a frame drawn in parts, in ms: the slowest part's device time (what
/// one GPU a part would take before compositing), the composite on the host (the parts
/// downloaded), the blended layer, and the composite on the GPU of the same parts held on one
/// device (CUDA events; the CUDA backend only).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PartsRow {
    /// whether the parts were re-balanced by their times (`--balance`), else even shares
    pub balanced: bool,
    pub slowest_part_ms: f64,
    pub composite_host_ms: f64,
    pub layer_ms: Option<f64>,
    pub composite_gpu_ms: Option<f64>,
}

/// Medians of the host wall times of a frame's parts ([`rxpipe::pipeline::HostTimes`], with the
/// GPU rasteriser's call split into its tables, launches and wait), in ms.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostRow {
    pub stages_ms: f64,
    pub draws_ms: f64,
    pub raster_ms: f64,
    pub tables_ms: f64,
    pub launch_ms: f64,
    pub wait_ms: f64,
    pub stats_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FrameReport {
    #[serde(flatten)]
    pub machine: Machine,
    /// `cpu` or `cuda`
    pub backend: String,
    pub width: u32,
    pub height: u32,
    /// where the frustum stage ran (`None`: it did not)
    pub frustum: Option<String>,
    pub meshes: Vec<MeshRow>,
    pub rows: Vec<FrameRow>,
}

/// Whether a benchmark "mesh" names a scene file (glTF or rxpipe's TOML), drawn as the file has
/// it, from its own camera.
pub fn is_scene_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".gltf", ".glb", ".toml"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// A camera looking at the bounds from the front and above, at the distance where the bounding
/// sphere's diameter spans `fraction` of the screen height.
pub fn camera_spanning(lo: Vec3, hi: Vec3, fraction: f32) -> rxpipe::Camera {
    let mut c = rxpipe::Camera::framing(lo, hi);
    let centre = (lo + hi) * 0.5;
    let r = ((hi - lo).length() * 0.5).max(1e-6);
    let dist = r / (fraction * (c.fov_y.to_radians() * 0.5).tan());
    c.eye = centre + (c.eye - centre).normalize() * dist;
    c.near = (dist - r).max(dist * 1e-3);
    c.far = dist + 2.0 * r;
    c
}

/// Runs the frame benchmark: whole frames (geometry, setup, binning, rasterisation and shading,
/// lit) of each mesh with each strategy at `size` on each of `renderers` (a set of rows each:
/// one GPU, several), the mesh framed so that its bounds span 60% of the screen height. The patch strategy runs in patch order, without and (with
/// `patch_cull`) also with the per-patch culling stage. Each strategy runs in each of `shadings`
/// (a row each; rows not lit name their mode after the strategy).
#[allow(clippy::too_many_arguments)]
pub fn run(
    renderers: &[rxpipe::Renderer],
    meshes: &[&str],
    strategies: &[Strategy],
    size: (u32, u32),
    frustum: Option<rxpipe::passes::frustum::Placement>,
    patch_cull: bool,
    shadings: &[rxpipe::ShadingMode],
    (parts, balance): (usize, bool),
    warmup: usize,
    runs: usize,
    progress: &dyn Fn(&str),
) -> Result<FrameReport, Error> {
    let parts = parts.max(1);
    // (the first renderer's machine and backend; each mesh is loaded once for all of them)
    let Some(renderer) = renderers.first() else {
        return Err(Error::Backend("no renderer to measure".into()));
    };
    let mut report = FrameReport {
        machine: match renderer.gpu() {
            Some(gpu) => Machine::of(gpu, &rxpipe::gpu::probe()),
            None => Machine::host(),
        },
        backend: renderer.kind().name().into(),
        width: size.0,
        height: size.1,
        frustum: frustum.map(|p| format!("{p:?}").to_lowercase()),
        meshes: vec![],
        rows: vec![],
    };
    for &name in meshes {
        progress(&format!("{name}: loading"));
        let loading = std::time::Instant::now();
        // (a generated grid is checked against each strategy's footprint before it is made)
        let check = |sizes: &[rxpipe::footprint::Counts]| -> Result<(), Error> {
            let scene_bytes: u64 = sizes.iter().map(|c| c.mesh()).sum();
            for &s in strategies {
                // (re-indexed first, as the pipelines below are by default)
                let f = rxpipe::footprint::of(sizes, renderer.kind(), s, true);
                let what = || {
                    format!(
                        "{name} ({} triangles) through the {} strategy",
                        sizes.iter().map(|c| c.triangles).sum::<u64>(),
                        s.name()
                    )
                };
                // (the grid itself, beside what its preparation takes)
                let f = rxpipe::footprint::Footprint {
                    host: f.host.saturating_add(scene_bytes),
                    ..f
                };
                let free = free_bytes(renderer)?.map(|b| b as u64);
                f.check(renderer.kind(), free, |on| format!("{} on {on}", what()))
                    .map_err(|e| Error::Backend(e.to_string()))?;
            }
            Ok(())
        };
        let (scene, order) = bench_scene(name, &check)?;
        let load_s = loading.elapsed().as_secs_f64();
        let free_before = free_bytes(renderer)?;
        report.meshes.push(MeshRow {
            mesh: name.into(),
            vertices: scene
                .objects
                .iter()
                .map(|o| o.mesh.vertex_count() * o.placement_count())
                .sum(),
            triangles: scene.triangle_count(),
        });
        let mut prepared: Option<rxpipe::Prepared> = None;
        let runs_of: Vec<(Strategy, bool, rxpipe::ShadingMode)> = strategies
            .iter()
            .flat_map(|&s| {
                let with_cull = s == Strategy::Patch && patch_cull;
                std::iter::once((s, false)).chain(with_cull.then_some((s, true)))
            })
            .flat_map(|(s, cull)| shadings.iter().map(move |&m| (s, cull, m)))
            .collect();
        let rows = renderers
            .iter()
            .flat_map(|r| runs_of.iter().map(move |&run| (r, run)));
        for (renderer, (s, cull, shading)) in rows {
            let mut label = if cull {
                format!("{} + patch-cull", s.name())
            } else {
                s.name().to_string()
            };
            if shading != rxpipe::ShadingMode::Lit {
                label += &format!(" ({})", shading.name());
            }
            progress(&format!("{name}: {label}"));
            let order = match s {
                Strategy::Patch => VertexOrder::Patch(rxpipe::geometry::order::PATCH_FACES),
                _ => order,
            };
            let p = rxpipe::Pipeline::builder()
                .strategy(s)
                .order(order)
                .shading(shading)
                .default_stages(false);
            let p = match frustum {
                Some(place) => p.frame_stage(rxpipe::passes::Frustum::new(place)),
                None => p,
            };
            let p = if cull {
                p.frame_stage(rxpipe::passes::PatchCull)
            } else {
                p
            }
            .build(renderer)?;
            let mut p = p;
            let mut prepare_s = None;
            let mut prepare_steps = Vec::new();
            let mut prepared_device_bytes = None;
            if !prepared.as_ref().is_some_and(|pr| p.is_prepared_for(pr)) {
                // (the scene prepared for another pipeline freed first: both would not fit
                // beside each other at the largest sizes)
                drop(prepared.take());
                let preparing = std::time::Instant::now();
                let pr = p.prepare(&scene)?;
                let took = preparing.elapsed().as_secs_f64();
                prepared_device_bytes = free_before
                    .zip(free_bytes(renderer)?)
                    .map(|(b, a)| b.saturating_sub(a) as u64);
                prepare_steps = steps_of(&pr.stages, took);
                prepare_s = Some(took);
                prepared = Some(pr);
            }
            let pr = prepared.as_ref().expect("prepared above");
            let frames = Frames {
                pr,
                scene: &scene,
                size,
                warmup,
                runs,
                parts,
                balance,
            };
            let (f, stages, host, mut parts_times) = timed_frames(&p, &frames)?;
            if let (Some(t), Some(gpu), true) = (&mut parts_times, renderer.gpu(), parts > 1) {
                t.composite_gpu_ms = Some(composite_on_gpu(&p, &frames, gpu)?);
            }
            // the viewer's frames, headless: the same code the window runs
            p.color_only = true;
            let window = window_frames(&p, &frames)?;
            let free_after = free_bytes(renderer)?;
            let frame_ms = median(&stages[4]);
            report.rows.push(FrameRow {
                mesh: name.into(),
                strategy: label,
                triangles: f.stats.geometry.triangles,
                rasterized: f.stats.raster.rasterized,
                fused: f.stats.raster.fused,
                batches_culled: f.stats.raster.batches_culled,
                batch_culled_triangles: f.stats.raster.batch_culled_triangles,
                batches_occluded: f.stats.raster.batches_occluded,
                load_s,
                prepare_s,
                prepare_steps,
                asr: f.stats.geometry.asr(),
                geometry_ms: median(&stages[0]),
                setup_ms: median(&stages[1]),
                bin_ms: median(&stages[2]),
                raster_ms: median(&stages[3]),
                frame_ms,
                with_download_ms: median(&stages[5]),
                window_ms: median(&window),
                frame_stages_ms: median(&stages[6]),
                culled_objects: f.stats.culled().0,
                culled_triangles: f.stats.culled().1,
                host: HostRow {
                    stages_ms: median(&host[0]),
                    draws_ms: median(&host[1]),
                    raster_ms: median(&host[2]),
                    tables_ms: median(&host[3]),
                    launch_ms: median(&host[4]),
                    wait_ms: median(&host[5]),
                    stats_ms: median(&host[6]),
                },
                triangles_per_s: f.stats.geometry.triangles as f64 / (frame_ms * 1e-3),
                device_bytes: free_before
                    .zip(free_after)
                    .map(|(b, a)| b.saturating_sub(a) as u64),
                prepared_device_bytes,
                device_in_use_bytes: renderer
                    .gpu()
                    .zip(free_after)
                    .map(|(g, a)| g.memory_bytes.saturating_sub(a) as u64),
                runs,
                parts,
                gpus: p.ranks(),
                parts_times,
            });
        }
    }
    Ok(report)
}

/// The device's free memory (none on the CPU backend).
fn free_bytes(renderer: &rxpipe::Renderer) -> Result<Option<usize>, Error> {
    Ok(renderer.gpu().map(|g| g.free_bytes()).transpose()?)
}

/// A benchmark's scene: a scene file as it is (objects, materials, lights, its own camera), or a
/// mesh framed so that its bounds span 60% of the screen height; with the vertex order the
/// strategies other than patch take.
fn bench_scene(
    name: &str,
    check: &dyn Fn(&[rxpipe::footprint::Counts]) -> Result<(), Error>,
) -> Result<(rxpipe::Scene, VertexOrder), Error> {
    if is_scene_file(name) {
        return Ok((rxpipe::io::load_scene(name)?, VertexOrder::Forsyth));
    }
    // instances of one mesh on a grid: `bunny-instances:N` (bunny-grid:N's layout) or `MESH*N`
    let instanced = match (name.strip_prefix("bunny-instances:"), name.rsplit_once('*')) {
        (Some(n), _) => Some(("bunny", n)),
        (None, Some((mesh, n))) => Some((mesh, n)),
        (None, None) => None,
    };
    // the grids are already in Forsyth order, copy by copy
    let order = if name.starts_with("bunny-grid") || instanced.is_some() {
        VertexOrder::Input
    } else {
        VertexOrder::Forsyth
    };
    let mut scene = match instanced {
        Some((mesh, n)) => {
            let count: usize = n
                .parse()
                .map_err(|_| Error::Backend(format!("bad instance count in '{name}'")))?;
            super::grid_instances(&bench_mesh(mesh)?, count)
        }
        // (a grid past 32-bit indices as several objects)
        None => match name.strip_prefix("bunny-grid:") {
            Some(n) => {
                let count: usize = n
                    .parse()
                    .map_err(|_| Error::Backend(format!("bad grid size in '{name}'")))?;
                super::bunny_grid_scene(&bench_mesh("bunny")?, count, name, check)?
            }
            None => rxpipe::Scene::from_meshes(name, vec![bench_mesh(name)?]),
        },
    };
    scene.name = name.into();
    let (lo, hi) = scene.bounds().unwrap_or((Vec3::splat(-1.0), Vec3::ONE));
    scene.camera = camera_spanning(lo, hi, 0.6);
    Ok((scene, order))
}

/// Per run: geometry, setup, binning, raster, their sum, the frame with its download, and the
/// frame stages (device times on the GPU).
type StageTimes = [Vec<f64>; 7];
/// Per run, the host's times: frame stages, draws, raster, tables, launch, wait, statistics.
type HostTimes = [Vec<f64>; 7];

/// The frames of one row: the scene a pipeline prepared, the size, and the runs measured after
/// `warmup` more.
struct Frames<'a> {
    pr: &'a rxpipe::Prepared,
    scene: &'a rxpipe::Scene,
    size: (u32, u32),
    warmup: usize,
    runs: usize,
    /// the parts each frame is drawn in (1: whole)
    parts: usize,
    /// the parts re-balanced by their times from frame to frame (else even shares)
    balance: bool,
}

/// The frames on `p`, each with its stage times (drawn in parts: the parts' summed, and the
/// medians of how they divide); returns the last frame.
fn timed_frames(
    p: &rxpipe::Pipeline,
    x: &Frames,
) -> Result<(rxpipe::Frame, StageTimes, HostTimes, Option<PartsRow>), Error> {
    let Frames {
        pr,
        scene,
        size,
        warmup,
        runs,
        parts,
        balance,
    } = *x;
    let mut f = rxpipe::Frame::empty();
    let mut shares = rxpipe::sortlast::balance::Balance::new(parts);
    let mut draw = |f: &mut rxpipe::Frame| -> Result<(), Error> {
        if parts > 1 && balance {
            *f = p.render_parts_balanced(pr, scene, &scene.camera, size, 0.0, &mut shares)?;
            Ok(())
        } else if parts > 1 {
            *f = p.render_parts(pr, scene, &scene.camera, size, 0.0, parts)?;
            Ok(())
        } else {
            p.render_into(pr, scene, &scene.camera, size, 0.0, f)
        }
    };
    for _ in 0..warmup {
        draw(&mut f)?;
    }
    let mut stages: StageTimes = Default::default();
    let mut host: HostTimes = Default::default();
    let mut made: [Vec<f64>; 3] = Default::default();
    let mut layered = false;
    for _ in 0..runs {
        draw(&mut f)?;
        if let Some(m) = &f.stats.parts {
            made[0].push(m.slowest_ms());
            made[1].push(m.composite_ms);
            made[2].push(m.layer_ms.unwrap_or(0.0));
            layered |= m.layer_ms.is_some();
        }
        let st = &f.stats;
        let r = &st.raster;
        let dev = st.device_ms();
        for (v, x) in stages.iter_mut().zip([
            st.geometry_ms,
            r.setup_ms,
            r.bin_ms,
            r.raster_ms,
            dev,
            st.total_ms,
            st.stages.iter().fold(0.0, |a, s| a + s.ms),
        ]) {
            v.push(x);
        }
        let h = &st.host;
        for (v, x) in host.iter_mut().zip([
            h.stages_ms,
            h.draws_ms,
            h.raster_ms,
            r.host_tables_ms,
            r.host_launch_ms,
            r.host_wait_ms,
            h.stats_ms,
        ]) {
            v.push(x);
        }
    }
    // (frames drawn in parts, or spread over several GPUs)
    let parts_times = (!made[0].is_empty()).then(|| PartsRow {
        balanced: balance,
        slowest_part_ms: median(&made[0]),
        composite_host_ms: median(&made[1]),
        layer_ms: layered.then(|| median(&made[2])),
        composite_gpu_ms: None,
    });
    Ok((f, stages, host, parts_times))
}

/// The median time (CUDA events) of compositing on the GPU the parts of the row's frame, held on
/// one device (drawn once, uploaded, then composited `runs` times after `warmup`).
fn composite_on_gpu(
    p: &rxpipe::Pipeline,
    x: &Frames,
    gpu: &std::sync::Arc<rxpipe::gpu::Gpu>,
) -> Result<f64, Error> {
    let drawn = p.draw_parts(x.pr, x.scene, &x.scene.camera, x.size, 0.0, x.parts)?;
    let mut held = Vec::with_capacity(drawn.len());
    for f in &drawn {
        held.push((
            gpu.upload(&f.color, "a part's colour")?,
            gpu.upload(&f.depth, "a part's depth")?,
        ));
    }
    let parts: Vec<_> = held.iter().map(|(c, d)| (c, d)).collect();
    let pixels = x.size.0 as usize * x.size.1 as usize;
    let mut c = rxpipe::sortlast::cuda::DeviceComposite::new(gpu)?;
    let times = gpu.time(x.warmup.max(1), x.runs.max(1), || -> Result<(), Error> {
        c.parts(&parts, pixels)?;
        Ok(())
    })?;
    Ok(median(&times))
}

/// The viewer's frames, headless: the same code the window runs, a new frame each time (a
/// moving camera) while the one before it is copied into the window's buffer; host wall
/// milliseconds of the runs after the warm-up.
fn window_frames(p: &rxpipe::Pipeline, x: &Frames) -> Result<Vec<f64>, Error> {
    let Frames {
        pr,
        scene,
        size,
        warmup,
        runs,
        ..
    } = *x;
    let mut target = vec![0u8; 4 * size.0 as usize * size.1 as usize];
    let mut frames = crate::viewer::FrameLoop::default();
    let mut window = Vec::with_capacity(runs);
    for k in 0..warmup + runs {
        let t = std::time::Instant::now();
        let job = crate::viewer::FrameJob {
            pipeline: p,
            prepared: pr,
            scene,
            camera: &scene.camera,
            size,
            time: 0.0,
        };
        frames.draw(Some(job), &mut target)?;
        if k >= warmup {
            window.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(window)
}

impl FrameReport {
    pub fn markdown(&self) -> String {
        let (title, times) = if self.backend == "cpu" {
            ("the CPU backend", "host wall times of the stages")
        } else {
            ("the GPU", "CUDA-event stage times")
        };
        let mut s = format!(
            "# Whole frames on {title}\n\n{}. {}x{}, lit (Blinn-Phong, or a scene's materials) unless a row names another shading mode after its strategy, back-face culling, each mesh framed so that its bounding sphere spans 60% of the screen height; scene files are drawn as they are (their materials, textures and lights, from their own cameras; double-sided materials unculled). Medians of {times} in ms over the runs after warm-up; 'frame' is the median of the per-frame totals of geometry, setup, binning and raster; 'frame stages' is the host's wall time of the frame stages ({}; per-patch culling where the strategy says so), outside the frame total; 'triangles' are those drawn after them; 'rasterised' those left after setup (and of them, those the fused geometry stage rasterised itself; and the batches it culled whole by their bounds, with their triangles, and of them those hidden behind what the frame drew first); 'with download' is the host's wall time of the whole frame including the frame stages (and on the GPU the download of colour and depth); 'window frame' the host's wall time of the viewer's frame in motion (the same code, headless: a new frame, colour only, on the GPU downloaded into page-locked memory, while another thread copies the frame before it into a window-sized buffer).\n\n| mesh | triangles | strategy | ASR | rasterised | frame stages | geometry | setup | binning | raster + shade | frame | with download | window frame |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            self.machine,
            self.width,
            self.height,
            match &self.frustum {
                Some(p) => format!("the frustum test, on={p}"),
                None => "none".into(),
            }
        );
        for r in &self.rows {
            let mut rasterized = match r.fused {
                0 => r.rasterized.to_string(),
                n => format!("{} ({n} fused)", r.rasterized),
            };
            if r.batches_culled > 0 {
                rasterized += &format!(
                    "; {} batches of {} triangles culled whole ({} hidden)",
                    r.batches_culled, r.batch_culled_triangles, r.batches_occluded
                );
            }
            s += &format!(
                "| {} | {} | {} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | **{:.3}** | {:.2} | {:.2} |\n",
                r.mesh,
                r.triangles,
                r.strategy,
                r.asr,
                rasterized,
                r.frame_stages_ms,
                r.geometry_ms,
                r.setup_ms,
                r.bin_ms,
                r.raster_ms,
                r.frame_ms,
                r.with_download_ms,
                r.window_ms
            );
        }
        s += "\nWhere the host's time of a frame goes ('with download' above), medians in ms: the objects' matrices and the frame stages; the drawn objects' list, uniforms and geometry preparation (on the CPU, the geometry stage); the raster call, and within it on the GPU its tables, launches and the wait for the device with the download; the statistics.\n\n| mesh | strategy | stages | draws | raster | tables | launches | wait + download | statistics |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
        for r in &self.rows {
            let h = &r.host;
            s += &format!(
                "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                r.mesh,
                r.strategy,
                h.stages_ms,
                h.draws_ms,
                h.raster_ms,
                h.tables_ms,
                h.launch_ms,
                h.wait_ms,
                h.stats_ms
            );
        }
        s += "\nTime to start, host wall seconds: the mesh loaded or generated, and prepared for the row's pipeline (its passes, the upload, the batches and their tables; '-': prepared for an earlier row), and where the preparation's time went (seconds: its stages, the steps of making the meshes resident, the rest).\n\n| mesh | strategy | triangles | loaded (s) | prepared (s) | of which |\n|---|---|---:|---:|---:|---|\n";
        for r in &self.rows {
            let steps: Vec<String> = r
                .prepare_steps
                .iter()
                .map(|(step, t)| format!("{step} {t:.2}"))
                .collect();
            s += &format!(
                "| {} | {} | {} | {:.2} | {} | {} |\n",
                r.mesh,
                r.strategy,
                r.triangles,
                r.load_s,
                r.prepare_s.map_or("-".into(), |t| format!("{t:.2}")),
                steps.join(", ")
            );
        }
        if self.rows.iter().any(|r| r.parts_times.is_some()) {
            s += "\nFrames drawn in parts (sort-last on one device: the parts in turn, their times summed in 'frame' above), medians in ms: the slowest part's device time (what one GPU a part would take before compositing), the composite of the parts on the host (downloaded) and on the GPU (the same parts held on one device, CUDA events), and the blended objects' layer drawn over the composite.\n\n| mesh | strategy | parts | slowest part | composite (host) | composite (GPU) | blended layer |\n|---|---|---:|---:|---:|---:|---:|\n";
            for r in &self.rows {
                let Some(t) = &r.parts_times else { continue };
                let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
                s += &format!(
                    "| {} | {} | {}{} | {:.3} | {:.3} | {} | {} |\n",
                    r.mesh,
                    r.strategy,
                    r.parts,
                    if t.balanced { " (balanced)" } else { "" },
                    t.slowest_part_ms,
                    t.composite_host_ms,
                    ms(t.composite_gpu_ms),
                    ms(t.layer_ms)
                );
            }
        }
        if self.rows.iter().any(|r| r.gpus > 1) {
            s += &self.spread_markdown();
        }
        if self.rows.iter().any(|r| r.device_bytes.is_some()) {
            s += "\nThroughput and device memory: triangles drawn per second of 'frame'; the device memory the mesh took (free memory before it was prepared less free memory after the row's frames: its resident buffers, the triangle queue, the raster stage's growth), per triangle, and of it what the preparation took (the resident meshes, batches and tables: free memory before less free memory after the preparation, on the row that prepared the mesh); the device memory in use after the row's frames.\n\n| mesh | strategy | triangles | G triangles/s | mesh on the device (GB) | bytes per triangle | of which prepared (GB) | device in use (GB) |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
            for r in &self.rows {
                let gb =
                    |b: Option<u64>| b.map_or("-".into(), |b| format!("{:.2}", b as f64 / 1e9));
                s += &format!(
                    "| {} | {} | {} | {:.1} | {} | {} | {} | {} |\n",
                    r.mesh,
                    r.strategy,
                    r.triangles,
                    r.triangles_per_s / 1e9,
                    gb(r.device_bytes),
                    r.device_bytes.map_or("-".into(), |b| format!(
                        "{:.1}",
                        b as f64 / r.triangles.max(1) as f64
                    )),
                    gb(r.prepared_device_bytes),
                    gb(r.device_in_use_bytes)
                );
            }
        }
        s
    }
}

impl FrameReport {
    /// The scaling efficiency of row `r` spread over its GPUs: one GPU's frame time (the row of
    /// the same mesh and strategy on one GPU) over the GPUs times the row's, both host wall
    /// times of the whole frame with its download.
    pub fn efficiency(&self, r: &FrameRow) -> Option<f64> {
        let one = self.rows.iter().find(|o| {
            o.gpus == 1 && o.parts == 1 && o.mesh == r.mesh && o.strategy == r.strategy
        })?;
        Some(one.with_download_ms / (r.gpus as f64 * r.with_download_ms))
    }

    /// The table of the frames spread over several GPUs.
    fn spread_markdown(&self) -> String {
        let mut s = "\nFrames spread over several GPUs (a share of the triangles each, drawn at once, composited by depth through NCCL; the shares re-balanced by the GPUs' times from frame to frame), medians in ms: the whole frame's host wall time with its download, the slowest GPU's device time, the composite (enqueued and waited for), the blended objects' layer on the first GPU, and the scaling efficiency (one GPU's frame over the GPUs times this frame).\n\n| mesh | strategy | GPUs | frame (wall) | slowest GPU | composite | blended layer | efficiency |\n|---|---|---:|---:|---:|---:|---:|---:|\n".to_string();
        for r in &self.rows {
            let Some(t) = r.parts_times.as_ref().filter(|_| r.parts == 1) else {
                continue;
            };
            s += &format!(
                "| {} | {} | {} | {:.3} | {:.3} | {:.3} | {} | {} |\n",
                r.mesh,
                r.strategy,
                r.gpus,
                r.with_download_ms,
                t.slowest_part_ms,
                t.composite_host_ms,
                t.layer_ms.map_or("-".into(), |v| format!("{v:.3}")),
                self.efficiency(r)
                    .map_or("-".into(), |e| format!("{:.0}%", 100.0 * e))
            );
        }
        s
    }
}

/// The preparation's time by stage and resident step (seconds, summed over the objects, in the
/// order first met), and the rest of `total` as 'other'.
fn steps_of(stages: &[rxpipe::passes::StageReport], total: f64) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut add = |name: String, s: f64| match out.iter_mut().find(|(n, _)| *n == name) {
        Some((_, t)) => *t += s,
        None => out.push((name, s)),
    };
    let mut counted = 0.0;
    for st in stages {
        counted += st.ms / 1e3;
        if st.steps.is_empty() {
            add(st.stage.clone(), st.ms / 1e3);
        }
        let mut within = 0.0;
        for step in &st.steps {
            within += step.ms / 1e3;
            add(format!("{}: {}", st.stage, step.step), step.ms / 1e3);
        }
        if !st.steps.is_empty() {
            add(
                format!("{}: other", st.stage),
                (st.ms / 1e3 - within).max(0.0),
            );
        }
    }
    out.push(("other".into(), (total - counted).max(0.0)));
    out
}
