//! One frame of a prepared scene: the frame stages, the geometry stage over every object,
//! the raster stage, and what the frame says about itself.

use super::diagnostics::{mostly_culled, nothing_drawn};
use super::frame::{Frame, FrameStats, HostTimes, PartsStats};
use super::prepared::{Prepared, Resident, Residents};
use super::{Engine, Pipeline};
use crate::backend::{Api, DrawRef, ShadeFor, ShadeJob};
use crate::error::Error;
use crate::geometry::{GeometryStats, Uniforms};
use crate::passes::{FrameContext, FrameStageStats, ObjectBounds, PassError, Visibility};
use crate::raster::{self, RasterSettings, ShadingMode};
use crate::sortlast::balance::Balance;
use rxpipe_core::scene::{Camera, Scene};
use std::time::Instant;

/// One drawn object of a frame: its resident mesh, or the subset a frame stage left of it, with
/// the object's queue.
pub(super) enum Slot<'a, A: Api> {
    Resident(usize, std::sync::MutexGuard<'a, Option<A::Queue>>),
    Subset(usize, A::Mesh, std::sync::MutexGuard<'a, Option<A::Queue>>),
}

/// Checks what a frame stage left: one entry per object, ranges sorted, disjoint and within the
/// object's triangles.
pub(super) fn check_visibility(
    stage: &str,
    visibility: &[Visibility],
    objects: &[ObjectBounds],
) -> Result<(), PassError> {
    let bad = |message: String| PassError::Argument {
        stage: stage.into(),
        arg: "(its result)".into(),
        message,
    };
    if visibility.len() != objects.len() {
        return Err(bad(format!(
            "{} entries for {} objects",
            visibility.len(),
            objects.len()
        )));
    }
    for (k, (v, o)) in visibility.iter().zip(objects).enumerate() {
        let Some(keep) = &v.keep else { continue };
        let mut end = 0u32;
        for r in keep {
            if r.start < end || r.start > r.end || r.end as u64 > o.triangles {
                return Err(bad(format!(
                    "object {k}: triangle range {r:?} is not sorted, disjoint and within its {} triangles",
                    o.triangles
                )));
            }
            end = r.end;
        }
    }
    Ok(())
}

impl Pipeline {
    fn raster_settings(
        &self,
        scene: &Scene,
        camera: &Camera,
        (width, height): (u32, u32),
    ) -> RasterSettings {
        RasterSettings {
            width,
            height,
            cull: self.cull,
            shading: self.shading,
            light: scene.light,
            eye: camera.eye,
            background: scene.background,
            depth_range: (camera.near, camera.far),
            count_coverage: false,
            lights: if scene.lights.is_empty() {
                raster::Lights::key(&scene.light)
            } else {
                raster::Lights::new(&scene.lights)
            },
            // (the depth mode's colours are made from the depth on the host)
            color_only: self.color_only && self.shading != ShadingMode::Depth,
            baseline_isa: self.baseline_isa,
            over_target: false,
            on_device: false,
        }
    }

    /// Prepares and renders a scene; the frame's notes say what re-indexing removed.
    pub fn render(
        &mut self,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
    ) -> Result<Frame, Error> {
        let prepared = self.prepare(scene)?;
        let mut f = self.render_prepared(&prepared, scene, camera, size, 0.0)?;
        f.notes.extend(prepared.reindex_notes());
        Ok(f)
    }

    /// Renders a prepared scene into a new frame.
    pub fn render_prepared(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
    ) -> Result<Frame, Error> {
        let mut frame = Frame::empty();
        self.render_into(prepared, scene, camera, size, time, &mut frame)?;
        Ok(frame)
    }

    /// Renders a prepared scene into an existing frame, reusing its memory (the viewer prepares
    /// once and renders every frame this way). A scene prepared for another backend, order or
    /// layout is an error: prepare it again.
    pub fn render_into(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        self.check_prepared(prepared)?;
        if !self.peers.is_empty() {
            return self.render_spread(prepared, scene, camera, size, time, frame);
        }
        self.render_rank(0, prepared, scene, View::whole(camera, size, time), frame)
    }

    /// Renders a prepared scene as `parts` parts of its triangles, one after another, each into
    /// a frame of its own, composited by depth ([`crate::sortlast`]): sort-last rendering on
    /// one device, the picture and depth of [`Pipeline::render_prepared`] byte for byte. The
    /// parts share the opaque objects; blended ones are drawn last, in order, over the
    /// composite (a layer of their own: [`RasterSettings::over_target`]). The frame's
    /// statistics are the parts' and the layer's summed (their stage times too); its notes say
    /// how it was drawn.
    pub fn render_parts(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        parts: usize,
    ) -> Result<Frame, Error> {
        let even = Balance::new(parts);
        self.render_shares(prepared, scene, camera, size, time, even.shares())
    }

    /// [`Pipeline::render_parts`] with the parts' shares of the triangles taken from `balance`,
    /// which then takes the parts' times ([`Balance::update`]): drawn frame after frame, the
    /// parts come to take equal times, and follow the view as it changes. The picture is the
    /// same whatever the shares.
    pub fn render_parts_balanced(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        balance: &mut Balance,
    ) -> Result<Frame, Error> {
        let f = self.render_shares(prepared, scene, camera, size, time, balance.shares())?;
        if let Some(p) = &f.stats.parts {
            balance.update(&p.part_ms);
        }
        Ok(f)
    }

    /// The frame in parts of the given shares of its triangles, composited.
    pub(super) fn render_shares(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        shares: &[f64],
    ) -> Result<Frame, Error> {
        let start = Instant::now();
        let staged = self.staged(prepared, scene, camera, size, time, shares)?;
        let layered = (0..prepared.objects.len()).any(|k| blended(prepared, k));
        let mut frame = Frame::empty();
        // (over several GPUs a part on each, composited there; on one, the parts in turn,
        // composited on the host)
        let (drawn, composite_ms) = if self.peers.is_empty() {
            let drawn = self.draw_staged_parts(prepared, scene, camera, size, time, &staged)?;
            let t = Instant::now();
            let layers: Vec<(&[u8], &[f32])> = drawn
                .iter()
                .map(|f| (f.color.as_slice(), f.depth.as_slice()))
                .collect();
            crate::sortlast::composite::by_depth(&layers, &mut frame.color, &mut frame.depth)?;
            (drawn, t.elapsed().as_secs_f64() * 1e3)
        } else {
            self.draw_spread(prepared, scene, camera, size, time, &staged, &mut frame)?
        };
        let parts = drawn.len();
        (frame.width, frame.height) = size;
        if self.shading == ShadingMode::Depth && !layered {
            // (the depth mode's grey spans the frame's depths, which the parts' did not; with
            // a blended layer, its frame over the composite does this)
            raster::normalize_depth(&mut frame.color, &frame.depth, camera.near, camera.far);
        }
        let mut stats = drawn[0].stats.clone();
        for f in &drawn[1..] {
            stats.add(&f.stats);
        }
        let mut notes: Vec<String> = drawn.iter().flat_map(|f| f.notes.clone()).collect();
        let mut made = PartsStats {
            part_ms: drawn.iter().map(|f| f.stats.device_ms()).collect(),
            composite_ms,
            layer_ms: None,
        };
        if layered {
            // (the layer's own frame over the composite: its colour and depth are the target)
            let view = View {
                share: Share::Blended(&staged),
                ..View::whole(camera, size, time)
            };
            self.render_rank(0, prepared, scene, view, &mut frame)?;
            stats.add(&frame.stats);
            made.layer_ms = Some(frame.stats.device_ms());
            notes.append(&mut frame.notes);
        }
        stats.parts = Some(made);
        // (the frame's wall time, where the parts' sum would count parts drawn at once twice)
        stats.total_ms = start.elapsed().as_secs_f64() * 1e3;
        frame.stats = stats;
        frame.notes = notes;
        let total: u64 = prepared.objects.iter().map(|o| o.triangles as u64).sum();
        self.diagnose(&mut frame, total, size);
        let how = match self.peers.is_empty() {
            true => format!("drawn as {parts} parts of its triangles"),
            false => {
                let on: Vec<String> = self
                    .renderer
                    .ordinals()
                    .iter()
                    .map(|o| o.to_string())
                    .collect();
                format!(
                    "spread over {parts} GPU ranks (GPUs {}), a share of its triangles each",
                    on.join(", ")
                )
            }
        };
        frame.notes.push(format!(
            "{how}, composited by depth in {composite_ms:.3} ms{}",
            if layered {
                ", the blended objects drawn over them"
            } else {
                ""
            }
        ));
        Ok(frame)
    }

    /// The parts of [`Pipeline::render_parts`] before they are composited: part `p` of
    /// `parts` (at least one) draws the `p`-th share of the frame's opaque triangles in
    /// submission order into a frame of its own (colour and depth), as a GPU of its own would.
    /// [`crate::sortlast::composite::by_depth`] (or, with CUDA, the GPU's
    /// `sortlast::cuda::DeviceComposite`) composites them; blended objects are in none of them.
    pub fn draw_parts(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        parts: usize,
    ) -> Result<Vec<Frame>, Error> {
        let even = Balance::new(parts);
        let staged = self.staged(prepared, scene, camera, size, time, even.shares())?;
        self.draw_staged_parts(prepared, scene, camera, size, time, &staged)
    }

    /// [`Pipeline::draw_parts`] from what the frame stages left (`staged`), a part for each of
    /// its shares.
    fn draw_staged_parts(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        staged: &Staged,
    ) -> Result<Vec<Frame>, Error> {
        let parts = staged.shares.len();
        let mut drawn = Vec::with_capacity(parts);
        for p in 0..parts {
            let mut f = Frame::empty();
            let view = View {
                share: Share::Part(p, staged),
                ..View::whole(camera, size, time)
            };
            self.render_rank(0, prepared, scene, view, &mut f)?;
            drawn.push(f);
        }
        Ok(drawn)
    }

    /// The frame stages run once over a frame's objects (checked for the pipeline first).
    fn staged(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        (width, height): (u32, u32),
        time: f32,
        shares: &[f64],
    ) -> Result<Staged, Error> {
        self.check_prepared(prepared)?;
        let view_proj = camera.view_projection(width as f32 / height.max(1) as f32);
        let objects = object_bounds(prepared, &object_models(prepared, scene, time));
        let (visibility, stages) =
            self.frame_stages_run(self.renderer.kind(), camera, view_proj, &objects)?;
        Ok(Staged {
            visibility,
            stages,
            shares: shares.to_vec(),
        })
    }

    /// [`Pipeline::render_into`] on the GPU of rank `rank` (0: the first, or the only device),
    /// of the view's share of the frame's triangles.
    pub(super) fn render_rank(
        &self,
        rank: usize,
        prepared: &Prepared,
        scene: &Scene,
        view: View,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        let (engine, residents) = match rank {
            0 => (&self.engine, &prepared.residents),
            r => match (self.peers.get(r - 1), prepared.peers.get(r - 1)) {
                (Some(e), Some(p)) => (e, p),
                _ => {
                    return Err(Error::Backend(format!(
                        "no GPU of rank {rank}: the pipeline draws on {} and the scene was prepared on {}",
                        1 + self.peers.len(),
                        1 + prepared.peers.len()
                    )))
                }
            },
        };
        match (engine, residents) {
            (Engine::Cpu(api), Residents::Cpu(r)) => {
                self.frame(api, r, prepared, scene, &view, frame)
            }
            #[cfg(feature = "cuda")]
            (Engine::Cuda(api), Residents::Cuda(r)) => {
                self.frame(&**api, r, prepared, scene, &view, frame)
            }
            #[cfg(feature = "cuda")]
            _ => Err(Error::Backend(
                "the scene was prepared on another backend: prepare it again".into(),
            )),
        }
    }

    /// Runs the geometry stage alone once over every object of a prepared scene (identity
    /// transforms) and returns the invocation statistics: the shading rates, on the backend.
    pub fn geometry_stats(&self, prepared: &Prepared) -> Result<GeometryStats, Error> {
        self.check_prepared(prepared)?;
        match (&self.engine, &prepared.residents) {
            (Engine::Cpu(api), Residents::Cpu(r)) => self.shade_all(api, r),
            #[cfg(feature = "cuda")]
            (Engine::Cuda(api), Residents::Cuda(r)) => self.shade_all(&**api, r),
            #[cfg(feature = "cuda")]
            _ => Err(Error::Backend(
                "the scene was prepared on another backend: prepare it again".into(),
            )),
        }
    }

    fn shade_all<A: Api>(
        &self,
        api: &A,
        residents: &[Resident<A>],
    ) -> Result<GeometryStats, Error> {
        let mut queues: Vec<_> = residents
            .iter()
            .map(|r| r.queue.lock().unwrap_or_else(|p| p.into_inner()))
            .collect();
        let mut jobs: Vec<ShadeJob<A>> = residents
            .iter()
            .zip(queues.iter_mut())
            .map(|(r, q)| ShadeJob {
                mesh: &*r.mesh,
                uniforms: Uniforms::default(),
                queue: &mut **q,
            })
            .collect();
        api.shade(self.strategy, &mut jobs, ShadeFor::Stats)?;
        drop(jobs);
        let shaded: Vec<_> = residents
            .iter()
            .zip(&queues)
            .map(|(r, q)| (&*r.mesh, q.as_ref().expect("shaded above")))
            .collect();
        api.stats(&shaded)
    }

    /// The frame, on any backend: frame stages, then every visible object's geometry stage into
    /// its queue, then the raster stage over all of them.
    fn frame<A: Api>(
        &self,
        api: &A,
        residents: &[Resident<A>],
        prepared: &Prepared,
        scene: &Scene,
        view: &View,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        let View {
            camera,
            size: (width, height),
            time,
            share,
            on_device,
        } = *view;
        frame.notes.clear();
        let start = Instant::now();
        let view_proj = camera.view_projection(width as f32 / height.max(1) as f32);
        let models = object_models(prepared, scene, time);
        // (the shares of one frame take what one run of the frame stages left)
        let (mut visibility, stages) = match share {
            Share::Part(_, s) | Share::Blended(s) => (s.visibility.clone(), s.stages.clone()),
            Share::All => {
                let objects = object_bounds(prepared, &models);
                self.frame_stages_run(api.kind(), camera, view_proj, &objects)?
            }
        };
        // a part draws its share of the opaque objects the frame stages left, the blended
        // layer the blended ones
        let hide = |v: &mut Visibility| {
            v.visible = false;
            v.keep = None;
        };
        match share {
            Share::All => {}
            Share::Part(p, staged) => {
                let triangles: Vec<u32> = prepared
                    .objects
                    .iter()
                    .map(|o| o.triangles as u32)
                    .collect();
                for (k, v) in visibility.iter_mut().enumerate() {
                    if blended(prepared, k) {
                        hide(v);
                    }
                }
                let late = vec![false; triangles.len()];
                let mut parts = crate::sortlast::partition::split_shares(
                    &visibility,
                    &triangles,
                    &late,
                    &staged.shares,
                );
                // an object drawn whole and cut between parts is cut where the backend draws
                // each part's run without a copy (at batch starts: windows of its batches)
                for (k, v) in visibility.iter().enumerate() {
                    if v.visible && v.keep.is_none() {
                        let align = |t: u32| api.align_cut(&residents[k].mesh, t);
                        crate::sortlast::partition::align_cuts(&mut parts, k, triangles[k], &align);
                    }
                }
                visibility = parts.swap_remove(p);
            }
            Share::Blended(_) => {
                for (k, v) in visibility.iter_mut().enumerate() {
                    if !blended(prepared, k) {
                        hide(v);
                    }
                }
            }
        }
        let over_target = matches!(share, Share::Blended(_));
        let stages_ms = start.elapsed().as_secs_f64() * 1e3;
        let t_draws = Instant::now();
        api.begin_frame()?;
        let layout = self.layout();
        let rate = self.shading == ShadingMode::ShadingRate;
        // each drawn object: its resident mesh and queue, or a subset of this frame's own
        let mut slots: Vec<Slot<A>> = Vec::new();
        for (k, r) in residents.iter().enumerate() {
            let v = &visibility[k];
            if !v.visible {
                continue;
            }
            let q = r.queue.lock().unwrap_or_else(|p| p.into_inner());
            match &v.keep {
                None => slots.push(Slot::Resident(k, q)),
                Some(keep) => slots.push(Slot::Subset(k, api.subset(&r.mesh, keep, layout)?, q)),
            }
        }
        // every drawn object's geometry stage at once
        let mut jobs: Vec<ShadeJob<A>> = slots
            .iter_mut()
            .map(|s| {
                let (k, mesh, queue) = match s {
                    Slot::Resident(k, q) => (*k, &*residents[*k].mesh, &mut **q),
                    Slot::Subset(k, mesh, q) => (*k, &*mesh, &mut **q),
                };
                let model = models[k];
                ShadeJob {
                    mesh,
                    uniforms: Uniforms::new(model, view_proj, camera.eye, time),
                    queue,
                }
            })
            .collect();
        api.shade(
            self.strategy,
            &mut jobs,
            ShadeFor::Frame { rate, over_target },
        )?;
        drop(jobs);
        // blended objects after the opaque ones, far to near, as the raster stage composites
        // them in submission order
        order_blended(&mut slots, prepared, &models, camera.eye);
        let draws: Vec<DrawRef<A>> = slots
            .iter()
            .map(|s| s.draw(residents, prepared, &models))
            .collect();
        let mut settings = self.raster_settings(scene, camera, (width, height));
        settings.over_target = over_target;
        settings.on_device = on_device;
        if matches!(share, Share::Part(..)) {
            // (the composite needs every part's depth)
            settings.color_only = false;
        }
        let draws_ms = t_draws.elapsed().as_secs_f64() * 1e3;
        let t_raster = Instant::now();
        let mut out = frame.take_output();
        let r = api.raster(&draws, &settings, &mut out);
        frame.put_output(out);
        let geometry_ms = r?;
        let raster_ms = t_raster.elapsed().as_secs_f64() * 1e3;
        let t_stats = Instant::now();
        // (a part's grey is made over the composite's depths: `render_shares`)
        if self.shading == ShadingMode::Depth && !matches!(share, Share::Part(..)) {
            raster::normalize_depth(&mut frame.color, &frame.depth, camera.near, camera.far);
        }
        let shaded: Vec<_> = draws.iter().map(|d| (d.mesh, d.queue)).collect();
        let geometry = api.stats(&shaded)?;
        frame.notes = api.notes();
        // one end for the total and the last part, so that the parts lie within the total
        let end = Instant::now();
        frame.stats = FrameStats {
            backend: Some(api.kind()),
            strategy: self.strategy.name(),
            stages,
            geometry,
            raster: frame.stats.raster,
            geometry_ms,
            total_ms: (end - start).as_secs_f64() * 1e3,
            host: HostTimes {
                stages_ms,
                draws_ms,
                raster_ms,
                stats_ms: (end - t_stats).as_secs_f64() * 1e3,
            },
            parts: None,
        };
        // (a share's diagnostics are the whole frame's, made from the shares' sum)
        if matches!(share, Share::All) {
            let total: u64 = prepared.objects.iter().map(|o| o.triangles as u64).sum();
            self.diagnose(frame, total, (width, height));
        }
        Ok(())
    }

    /// The frame's notes when it drew nothing or culled most of what it was given.
    fn diagnose(&self, frame: &mut Frame, total: u64, (width, height): (u32, u32)) {
        if let Some(why) = nothing_drawn(&frame.stats, total, self.cull) {
            frame.notes.push(why);
        } else if let Some(why) =
            mostly_culled(&frame.stats.raster, self.cull, width as u64 * height as u64)
        {
            frame.notes.push(why);
        }
    }

    /// The frame stages in order over every object: what each leaves visible, checked, and
    /// each stage's time and what it culled.
    fn frame_stages_run(
        &self,
        backend: rxpipe_core::execution::BackendKind,
        camera: &Camera,
        view_proj: glam::Mat4,
        objects: &[ObjectBounds],
    ) -> Result<(Vec<Visibility>, Vec<FrameStageStats>), Error> {
        let mut visibility = vec![Visibility::default(); objects.len()];
        let mut stages = Vec::new();
        for s in self.frame_stages() {
            let runs_on = s.runs_on(backend, objects.len());
            let ctx = FrameContext {
                backend: runs_on,
                gpu: self.renderer.gpu(),
                camera,
                view_proj,
                objects,
                cull: self.cull,
            };
            let before: Vec<u64> = visibility
                .iter()
                .zip(objects)
                .map(|(v, o)| v.drawn(o.triangles))
                .collect();
            let t = Instant::now();
            s.run(&ctx, &mut visibility)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            check_visibility(s.name(), &visibility, objects)?;
            let (mut co, mut ct) = (0, 0);
            for ((v, o), b) in visibility.iter().zip(objects).zip(&before) {
                co += (*b > 0 && !v.visible) as u64;
                ct += b - v.drawn(o.triangles).min(*b);
            }
            stages.push(FrameStageStats {
                stage: s.name().into(),
                backend: Some(runs_on),
                ms,
                culled_objects: co,
                culled_triangles: ct,
            });
        }
        Ok((visibility, stages))
    }
}

/// Each prepared object as the frame stages see it: its bounds, placed by its model matrix
/// (`models`), its triangles and patches.
fn object_bounds(prepared: &Prepared, models: &[glam::Mat4]) -> Vec<ObjectBounds> {
    prepared
        .objects
        .iter()
        .zip(models)
        .map(|(o, &model)| ObjectBounds {
            object: o.object,
            bounds: o.bounds.filter(|_| o.triangles > 0),
            model,
            triangles: o.triangles as u64,
            patches: o.patches.clone(),
            mesh: o.mesh.clone(),
        })
        .collect()
}

/// What one run of the frame stages left of a frame's objects, and what each stage did: the
/// shares of a frame drawn in parts all start from it.
pub(super) struct Staged {
    visibility: Vec<Visibility>,
    stages: Vec<FrameStageStats>,
    /// each part's share of the drawn triangles
    pub(super) shares: Vec<f64>,
}

/// Each prepared object's model matrix: as prepared, or where the scene's animation puts it at
/// `time` (an instance placed by its matrix under the posed transform).
fn object_models(prepared: &Prepared, scene: &Scene, time: f32) -> Vec<glam::Mat4> {
    let mut models: Vec<glam::Mat4> = prepared.objects.iter().map(|o| o.model).collect();
    if !scene.animation.is_empty() {
        let posed = scene.animation.poses(time, scene.objects.len());
        for (m, o) in models.iter_mut().zip(&prepared.objects) {
            if let Some(Some(p)) = posed.get(o.object) {
                *m = *p * o.instance.unwrap_or(glam::Mat4::IDENTITY);
            }
        }
    }
    models
}

/// Whether prepared object `k` is blended (drawn after the others, far to near).
fn blended(prepared: &Prepared, k: usize) -> bool {
    prepared.objects[k]
        .material
        .as_ref()
        .is_some_and(|m| m.alpha == rxpipe_core::material::AlphaMode::Blend)
}

/// What a frame is of: the camera, the size, the time, and which of the frame's triangles.
pub(super) struct View<'a> {
    pub(super) camera: &'a Camera,
    pub(super) size: (u32, u32),
    pub(super) time: f32,
    pub(super) share: Share<'a>,
    /// the frame stays on the device ([`RasterSettings::on_device`]): a rank's share of a frame
    /// over several GPUs, composited there
    pub(super) on_device: bool,
}

impl<'a> View<'a> {
    /// The whole frame, downloaded.
    pub(super) fn whole(camera: &'a Camera, size: (u32, u32), time: f32) -> View<'a> {
        View {
            camera,
            size,
            time,
            share: Share::All,
            on_device: false,
        }
    }
}

/// Which of a frame's triangles a drawing takes: all of them (the frame stages run for it),
/// part `p` of the opaque ones (sort-last parts: the `p`-th of the staged shares), or the
/// blended ones, drawn over the parts' composite; the shares of one frame start from what one
/// run of the frame stages left.
#[derive(Clone, Copy)]
pub(super) enum Share<'a> {
    All,
    Part(usize, &'a Staged),
    Blended(&'a Staged),
}

/// Puts the slots of blended objects after the opaque ones, far to near from `eye` (by their
/// bounds' centres); the opaque keep their order.
fn order_blended<A: Api>(
    slots: &mut [Slot<A>],
    prepared: &Prepared,
    models: &[glam::Mat4],
    eye: glam::Vec3,
) {
    let blended = |k: usize| blended(prepared, k);
    if slots.iter().any(|s| blended(s.object())) {
        let distance = |k: usize| {
            let o = &prepared.objects[k];
            o.bounds.map_or(0.0, |(lo, hi)| {
                models[k].transform_point3((lo + hi) * 0.5).distance(eye)
            })
        };
        slots.sort_by(|a, b| {
            let (ka, kb) = (a.object(), b.object());
            match (blended(ka), blended(kb)) {
                (false, false) => std::cmp::Ordering::Equal,
                (false, true) => std::cmp::Ordering::Less,
                (true, false) => std::cmp::Ordering::Greater,
                (true, true) => distance(kb).total_cmp(&distance(ka)),
            }
        });
    }
}

impl<A: Api> Slot<'_, A> {
    /// The object drawn, an index into the prepared objects.
    fn object(&self) -> usize {
        match self {
            Slot::Resident(k, _) | Slot::Subset(k, _, _) => *k,
        }
    }

    /// The draw of this slot's object: its mesh (resident or this frame's subset), shaded queue,
    /// colour, material and model matrix.
    fn draw<'s>(
        &'s self,
        residents: &'s [Resident<A>],
        prepared: &'s Prepared,
        models: &[glam::Mat4],
    ) -> DrawRef<'s, A> {
        let (k, mesh, queue) = match self {
            Slot::Resident(k, q) => (*k, &*residents[*k].mesh, q),
            Slot::Subset(k, mesh, q) => (*k, mesh, q),
        };
        DrawRef {
            mesh,
            queue: queue.as_ref().expect("shaded above"),
            color: prepared.objects[k].color,
            material: prepared.objects[k].material.as_deref(),
            model: models[k],
        }
    }
}
