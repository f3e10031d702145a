//! The CUDA backend: the geometry stage of [`crate::geometry::cuda`] with a CUDA vertex shader
//! compiled into its kernels, and the raster stage of [`crate::raster::cuda`]. A frame stays on
//! the device from the first vertex to the last pixel; colour and depth are downloaded once.

use super::{Api, BackendKind, DrawRef, ShadeFor, ShadeJob};
use crate::error::Error;
use crate::geometry::batching::TABLES_MIN_TRIANGLES;
use crate::geometry::cuda::{
    CudaGeometry, CudaShader, DeviceMesh, DevicePatches, DeviceQueue, DrawLaunch, Fused, ShadeDraw,
};
use crate::geometry::{Batches, VertexIn};
use crate::geometry::{GeometryError, GeometryStats, Layout, Strategy};
use crate::gpu::Gpu;
use crate::passes::WorkingMesh;
use crate::raster::cuda::{CudaRaster, GpuDraw};
use crate::raster::{RasterOutput, RasterSettings, ShadingMode};
use cudarc::driver::{CudaStream, DevicePtr};
use std::sync::{Arc, Mutex};

/// The CUDA backend with one vertex shader: the geometry kernels compiled with it, and the
/// rasteriser with its buffers (kept from frame to frame).
pub struct CudaApi {
    /// the device
    pub gpu: Arc<Gpu>,
    /// the geometry kernels, compiled with the pipeline's shader
    pub geometry: CudaGeometry,
    raster: Mutex<CudaRaster>,
    /// the frame's geometry stage, prepared by [`Api::shade`] and launched by [`Api::raster`]
    /// after the raster stage's host work (or by [`Api::stats`] in a frame without one), so
    /// that the device runs a frame's kernels back to back instead of waiting on the host
    /// between its stages
    pending: Mutex<Option<DrawLaunch>>,
    /// the fewest triangles of a hashing frame whose geometry stage runs fused with the raster
    /// stage's setup and small triangles (kernels/geometry_fused.cu), or never ([`fuse_from`])
    fuse_from: Option<usize>,
    /// the fewest triangles a frame draws of a mesh (over its instances) made resident with its
    /// batch tables for the hashing strategies, or never ([`tables_from`])
    tables_from: Option<usize>,
}

pub use crate::raster::FUSE_MIN_TRIANGLES;

/// The fewest triangles of a fused frame by `RXPIPE_FUSED`: unset (or `1`) from
/// [`FUSE_MIN_TRIANGLES`], `always` every hashing frame, `0` none (the queue's round trip, for
/// comparison).
pub fn fuse_from(setting: Option<&str>) -> Option<usize> {
    from_setting(setting, FUSE_MIN_TRIANGLES)
}

/// The fewest triangles of a mesh made resident with batch tables by `RXPIPE_TABLES`: unset (or
/// `1`) from [`TABLES_MIN_TRIANGLES`], `always` every mesh, `0` none (hashing every frame,
/// for comparison).
pub fn tables_from(setting: Option<&str>) -> Option<usize> {
    from_setting(setting, TABLES_MIN_TRIANGLES)
}

/// A threshold in triangles by an environment setting: `0` never, `always` from none, anything
/// else (or unset) from `default`.
fn from_setting(setting: Option<&str>, default: usize) -> Option<usize> {
    match setting.map(str::trim) {
        Some("0") => None,
        Some("always") => Some(0),
        _ => Some(default),
    }
}

impl CudaApi {
    /// Compiles (or fetches from the caches) the geometry kernels with `shader` and the raster
    /// kernels.
    pub fn new(gpu: Arc<Gpu>, shader: CudaShader) -> Result<CudaApi, Error> {
        let mut geometry = CudaGeometry::new(gpu.clone(), shader, true)?;
        geometry.occlusion = std::env::var("RXPIPE_OCCLUSION")
            .ok()
            .as_deref()
            .map(str::trim)
            == Some("1");
        Ok(CudaApi {
            geometry,
            raster: Mutex::new(CudaRaster::new(gpu.clone())?),
            pending: Mutex::new(None),
            fuse_from: fuse_from(std::env::var("RXPIPE_FUSED").ok().as_deref()),
            tables_from: tables_from(std::env::var("RXPIPE_TABLES").ok().as_deref()),
            gpu,
        })
    }

    /// Launches the geometry stage [`Api::shade`] prepared, if it has not been (with `aside`,
    /// its counts' sum there: [`CudaGeometry::launch_draws`]), and returns it.
    fn launch_pending(
        &self,
        aside: Option<&Arc<CudaStream>>,
        fused: Option<&Fused>,
    ) -> Result<Option<DrawLaunch>, Error> {
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(l) = &pending {
            self.geometry.launch_draws(l, aside, fused)?;
        }
        Ok(pending)
    }

    /// Whether the pending geometry stage can run fused with the raster stage over `draws`: a
    /// hashing launch that shades exactly the queues the frame draws.
    fn fusable(&self, draws: &[GpuDraw]) -> bool {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let triangles: usize = draws.iter().map(|d| d.triangles).sum();
        let Some(l) = pending
            .as_ref()
            .filter(|l| l.fusable() && self.fuse_from.is_some_and(|n| triangles >= n))
        else {
            return false;
        };
        let stream = &self.gpu.stream;
        let mut drawn: Vec<u64> = draws
            .iter()
            .map(|d| d.queue.vertices.device_ptr(stream).0)
            .collect();
        let mut shaded = l.queues().to_vec();
        drawn.sort_unstable();
        shaded.sort_unstable();
        drawn == shaded
    }

    pub(crate) fn rasteriser(&self) -> std::sync::MutexGuard<'_, CudaRaster> {
        self.raster.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Api for CudaApi {
    type Mesh = DeviceMesh;
    type Queue = DeviceQueue;

    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn resident(
        &self,
        mesh: &mut WorkingMesh,
        layout: Layout,
        placements: usize,
        steps: &mut crate::passes::Steps,
    ) -> Result<DeviceMesh, Error> {
        let patches = super::patch_lists(mesh, layout)?;
        let faces = super::patch_values(mesh, layout)?;
        let floats = |a: &[glam::Vec4]| -> Vec<f32> { bytemuck::cast_slice(a).to_vec() };
        let colors = mesh.colors().map(floats);
        let tangents = mesh.tangents().map(floats);
        let uvs1: Option<Vec<f32>> = mesh.uvs1().map(|u| bytemuck::cast_slice(u).to_vec());
        let mut dm = match mesh.take_device() {
            Some(d) => {
                // (the shader inputs packed on the device from what the stages left there)
                let dm = DeviceMesh::from_device(&self.gpu, d)?;
                self.gpu.sync()?;
                steps.done("shader inputs");
                dm
            }
            None => {
                let m = mesh.host()?;
                // a small mesh's batches are scanned here: the GPU's build is a dozen launches
                let batches = match layout.batches {
                    Some((mi, mv)) if m.indices.len() < super::SMALL_MESH_INDICES => {
                        Some(Batches::build(&m.indices, m.vertex_count(), mi, mv)?)
                    }
                    _ => None,
                };
                let inputs = VertexIn::from_mesh(m);
                steps.done("shader inputs");
                let dm = DeviceMesh::upload(&self.gpu, &inputs, &m.indices, batches.as_ref())?;
                steps.done("upload");
                dm
            }
        };
        // (each step's kernels waited for, so that its time is its own)
        let sync = |steps: &mut crate::passes::Steps, step: &str| -> Result<(), Error> {
            self.gpu.sync()?;
            steps.done(step);
            Ok(())
        };
        if let (Some((mi, mv)), None) = (layout.batches, &dm.batches) {
            dm.build_batches(&self.gpu, mi, mv)?;
            sync(steps, "batches")?;
        }
        // (by the triangles a frame draws of it: an instanced mesh's, every instance's)
        let drawn = dm.index_count / 3 * placements.max(1);
        if layout.tables && self.tables_from.is_some_and(|n| drawn >= n) {
            self.geometry.build_tables(&mut dm)?;
            sync(steps, "batch tables")?;
        }
        if let Some(p) = patches {
            dm.patches = Some(DevicePatches::upload(&self.gpu, p)?);
        }
        if let Some(f) = faces {
            let bits: Vec<u32> = f.iter().map(|v| v.to_bits()).collect();
            dm.faces = Some(Arc::new(self.gpu.upload(&bits, "triangle values")?));
        }
        if let Some(c) = colors {
            dm.colors = Some(Arc::new(self.gpu.upload(&c, "vertex colours")?));
        }
        if let Some(t) = tangents {
            dm.tangents = Some(Arc::new(self.gpu.upload(&t, "tangents")?));
        }
        if let Some(u) = uvs1 {
            dm.uvs1 = Some(Arc::new(self.gpu.upload(&u, "second texture coordinates")?));
        }
        Ok(dm)
    }

    fn subset(
        &self,
        mesh: &Arc<DeviceMesh>,
        keep: &[std::ops::Range<u32>],
        layout: Layout,
    ) -> Result<DeviceMesh, Error> {
        if let Some(batches) = window_of(&self.gpu, mesh, keep, layout)? {
            // a run of whole batches: a window of the resident mesh, nothing copied
            return Ok(DeviceMesh::window(mesh, &self.gpu, batches)?);
        }
        if layout.patches {
            // the patch strategy reads a view: no indices or corners copied each frame
            if mesh.patches.is_none() {
                return Err(GeometryError::NoPatches.into());
            }
            return Ok(mesh.view(&self.gpu, keep)?);
        }
        let ranges: Vec<std::ops::Range<usize>> = keep
            .iter()
            .map(|r| 3 * r.start as usize..3 * r.end as usize)
            .collect();
        let mut dm = mesh.subset(&self.gpu, &ranges)?;
        if let Some((mi, mv)) = layout.batches {
            dm.build_batches(&self.gpu, mi, mv)?;
        }
        Ok(dm)
    }

    fn align_cut(&self, mesh: &DeviceMesh, triangle: u32) -> u32 {
        // (the nearest batch start: a part is then a window of the resident batches; where the
        // starts cannot be had, any cut, drawn through a subset)
        let Ok(Some(starts)) = mesh.batch_starts_host(&self.gpu) else {
            return triangle;
        };
        let i = starts.partition_point(|&s| s < triangle);
        match (i.checked_sub(1).map(|j| starts[j]), starts.get(i)) {
            (Some(a), Some(&b)) if triangle - a < b - triangle => a,
            (_, Some(&b)) => b,
            (Some(a), None) => a,
            (None, None) => triangle,
        }
    }

    fn begin_frame(&self) -> Result<(), Error> {
        // (a frame left unfinished by an error launches nothing of its geometry)
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = None;
        Ok(())
    }

    fn shade(
        &self,
        strategy: Strategy,
        jobs: &mut [ShadeJob<'_, Self>],
        what: ShadeFor,
    ) -> Result<(), Error> {
        let c = &self.geometry;
        // a frame that `raster` will fuse (as `fusable` decides: the same draws) needs no
        // queue vertices
        let triangles: usize = jobs.iter().map(|j| j.mesh.index_count / 3).sum();
        let fused = matches!(
            what,
            ShadeFor::Frame {
                over_target: false,
                ..
            }
        ) && self.fuse_from.is_some_and(|n| triangles >= n)
            && c.fuses(strategy);
        let mut draws = Vec::with_capacity(jobs.len());
        for job in jobs.iter_mut() {
            // a queue is remade only when it cannot take the mesh (a frame stage's subsets of an
            // object reuse the object's queue frame after frame)
            // (a window's queue is its whole mesh's, by the whole mesh's triangles)
            let whole = job.mesh.drawn().0;
            if job
                .queue
                .as_ref()
                .is_none_or(|q| !q.fits(strategy, whole, fused))
            {
                *job.queue = Some(c.queue(whole, strategy, fused)?);
            }
            let q = job.queue.as_mut().expect("made above");
            q.index_count = whole.index_count;
            draws.push(ShadeDraw {
                mesh: job.mesh,
                uniforms: job.uniforms,
                queue: q,
            });
        }
        // the counts feed the statistics and the shading-rate mode alike; launched by `raster`
        // or `stats` (a stage prepared before and never launched is dropped: its meshes may be)
        let prepared = c.prepare_draws(strategy, &mut draws)?;
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = prepared;
        Ok(())
    }

    fn raster(
        &self,
        draws: &[DrawRef<'_, Self>],
        settings: &RasterSettings,
        out: &mut RasterOutput,
    ) -> Result<f64, Error> {
        let rate = settings.shading == ShadingMode::ShadingRate;
        let draws: Vec<GpuDraw> = draws
            .iter()
            .map(|d| GpuDraw {
                queue: d.queue,
                corners: d.queue.corners_for(d.mesh),
                triangles: d.mesh.index_count / 3,
                color: d.color,
                rate: rate.then_some((d.mesh, &d.queue.counts)),
                faces: d.mesh.faces.as_deref(),
                runs: d.mesh.view.as_ref(),
                material: d.material,
                colors: d.mesh.colors.as_deref().map(|c| (&*d.mesh.indices, c)),
                tangents: d
                    .mesh
                    .tangents
                    .as_deref()
                    .map(|t| (&*d.mesh.indices, t, d.model)),
                uvs1: d.mesh.uvs1.as_deref().map(|u| (&*d.mesh.indices, u)),
                mirrored: crate::raster::mirrors(d.model),
            })
            .collect();
        let fuse = self.fusable(&draws);
        let mut r = self.rasteriser();
        let mut launched: Option<DrawLaunch> = None;
        r.render_after(&draws, settings, out, fuse, &mut |side, fused| {
            let before = |e: Error| crate::raster::RasterError::Before(Box::new(e));
            match &launched {
                // a fused frame rasterised again: its geometry stage again, counted once
                Some(l) => {
                    self.geometry
                        .reset_counts(l)
                        .map_err(|e| before(e.into()))?;
                    self.geometry
                        .launch_draws(l, Some(side), fused)
                        .map_err(|e| before(e.into()))?;
                }
                None => launched = self.launch_pending(Some(side), fused).map_err(before)?,
            }
            Ok(())
        })?;
        // (the frame is done, its counts read: zeroed now for the next frame's shading)
        if let Some(l) = &launched {
            self.geometry.reset_counts(l)?;
        }
        Ok(r.times.before_ms)
    }

    fn stats(&self, shaded: &[(&DeviceMesh, &DeviceQueue)]) -> Result<GeometryStats, Error> {
        self.launch_pending(None, None)?;
        // (a frame that shaded nothing launched nothing: its total is not the last launch's)
        let mut stats = GeometryStats {
            invocations: match shaded.is_empty() {
                true => 0,
                false => self.geometry.frame_invocations()?,
            },
            ..Default::default()
        };
        for (mesh, _) in shaded {
            stats.triangles += (mesh.index_count / 3) as u64;
            stats.unique_vertices += mesh.unique_vertices(&self.gpu)? as u64;
        }
        Ok(stats)
    }

    fn notes(&self) -> Vec<String> {
        self.rasteriser().grown.clone()
    }
}

/// The batches of `mesh` that `keep` holds, when it is one run of whole batches that the
/// layout's dynamic strategy draws from the mesh's batches (`None`: a subset is made).
fn window_of(
    gpu: &Gpu,
    mesh: &DeviceMesh,
    keep: &[std::ops::Range<u32>],
    layout: Layout,
) -> Result<Option<std::ops::Range<u32>>, Error> {
    let ([r], Some(limits), false) = (keep, layout.batches, layout.patches) else {
        return Ok(None);
    };
    match &mesh.batches {
        Some((_, _, mi, mv)) if (*mi, *mv) == limits && mesh.view.is_none() => {}
        _ => return Ok(None),
    }
    let Some(starts) = mesh.batch_starts_host(gpu)? else {
        return Ok(None);
    };
    match (starts.binary_search(&r.start), starts.binary_search(&r.end)) {
        (Ok(a), Ok(b)) if a < b => Ok(Some(a as u32..b as u32)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_frames_start_at_the_threshold_unless_set() {
        assert_eq!(fuse_from(None), Some(FUSE_MIN_TRIANGLES));
        assert_eq!(fuse_from(Some("1")), Some(FUSE_MIN_TRIANGLES));
        assert_eq!(fuse_from(Some(" always ")), Some(0));
        assert_eq!(fuse_from(Some("0")), None);
        assert_eq!(tables_from(None), Some(TABLES_MIN_TRIANGLES));
        assert_eq!(tables_from(Some("always")), Some(0));
        assert_eq!(tables_from(Some("0")), None);
    }
}
