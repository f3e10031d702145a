//! The CPU reference backend: the geometry stage of [`crate::geometry::cpu`] with a Rust vertex
//! shader, and the raster stage of [`crate::raster`], both parallel with rayon.

use super::{Api, BackendKind, DrawRef, ShadeJob};
use crate::error::Error;
use crate::geometry::{self, Batches, GeometryError, GeometryStats, Layout, PatchBatches};
use crate::geometry::{ShadedGeometry, Strategy};
use crate::geometry::{VertexIn, VertexShader};
use crate::passes::WorkingMesh;
use crate::raster::{self, Draw, RasterOutput, RasterSettings};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A mesh resident on the CPU: shader inputs, indices and dynamic batches.
#[derive(Debug, Clone, Default)]
pub struct CpuMesh {
    /// shared with the subsets frame stages make of the mesh
    pub vertices: Arc<[VertexIn]>,
    /// three per triangle
    pub indices: Vec<u32>,
    /// the dynamic batches for the pipeline's limits, when it has them
    pub batches: Option<Batches>,
    /// the patches' vertex lists, for the patch strategy
    pub patches: Option<PatchBatches>,
    /// a value per triangle for the raster stage (the patch shading mode's)
    pub faces: Option<Vec<f32>>,
    /// vertex colours (linear RGBA), for materials
    pub colors: Option<Arc<[glam::Vec4]>>,
    /// tangents, for normal maps
    pub tangents: Option<Arc<[glam::Vec4]>>,
    /// the second uv set, for materials whose textures read two
    pub uvs1: Option<Arc<[glam::Vec2]>>,
}

/// The CPU backend with one vertex shader.
pub struct CpuApi {
    /// the vertex shader every strategy runs
    pub shader: Arc<dyn VertexShader>,
    started: Mutex<Option<Instant>>,
}

impl CpuApi {
    /// The CPU backend running `shader`.
    pub fn new(shader: Arc<dyn VertexShader>) -> CpuApi {
        CpuApi {
            shader,
            started: Mutex::new(None),
        }
    }
}

impl Api for CpuApi {
    type Mesh = CpuMesh;
    type Queue = ShadedGeometry;

    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn resident(
        &self,
        mesh: &mut WorkingMesh,
        layout: Layout,
        _placements: usize,
        steps: &mut crate::passes::Steps,
    ) -> Result<CpuMesh, Error> {
        // (the lists first: changing the host mesh forgets its patching)
        let patches = super::patch_lists(mesh, layout)?;
        let faces = super::patch_values(mesh, layout)?;
        let m = mesh.host()?;
        let vertices: Arc<[VertexIn]> = VertexIn::from_mesh(m).into();
        let colors = m.colors.as_deref().map(Arc::from);
        let tangents = m.tangents.as_deref().map(Arc::from);
        let uvs1 = m.uvs1.as_deref().map(Arc::from);
        // (the scene's own mesh, where no stage changed it, keeps its indices)
        let indices = mesh.take_indices()?;
        steps.done("shader inputs");
        let batches = match layout.batches {
            Some((mi, mv)) => Some(Batches::build(&indices, vertices.len(), mi, mv)?),
            None => None,
        };
        if batches.is_some() {
            steps.done("batches");
        }
        Ok(CpuMesh {
            vertices,
            indices,
            batches,
            patches,
            faces,
            colors,
            tangents,
            uvs1,
        })
    }

    fn subset(
        &self,
        mesh: &Arc<CpuMesh>,
        keep: &[std::ops::Range<u32>],
        layout: Layout,
    ) -> Result<CpuMesh, Error> {
        let mut indices = Vec::with_capacity(keep.iter().map(|r| 3 * r.len()).sum());
        for r in keep {
            indices.extend_from_slice(&mesh.indices[3 * r.start as usize..3 * r.end as usize]);
        }
        let batches = match layout.batches {
            Some((mi, mv)) => Some(Batches::build(&indices, mesh.vertices.len(), mi, mv)?),
            None => None,
        };
        let patches = match (layout.patches, &mesh.patches) {
            (false, _) => None,
            (true, Some(p)) => Some(p.subset(keep)),
            (true, None) => return Err(GeometryError::NoPatches.into()),
        };
        let faces = mesh.faces.as_ref().map(|f| {
            keep.iter()
                .flat_map(|r| &f[r.start as usize..r.end as usize])
                .copied()
                .collect()
        });
        Ok(CpuMesh {
            vertices: mesh.vertices.clone(),
            indices,
            batches,
            patches,
            faces,
            colors: mesh.colors.clone(),
            tangents: mesh.tangents.clone(),
            uvs1: mesh.uvs1.clone(),
        })
    }

    fn begin_frame(&self) -> Result<(), Error> {
        *self.started.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        Ok(())
    }

    fn shade(
        &self,
        strategy: Strategy,
        jobs: &mut [ShadeJob<'_, Self>],
        what: super::ShadeFor,
    ) -> Result<(), Error> {
        let rate = matches!(what, super::ShadeFor::Frame { rate: true, .. });
        // the jobs at once (each into its own queue): a scene's many small objects are too
        // small for the stage's own parallelism to keep the threads busy one after another
        use rayon::prelude::*;
        jobs.par_iter_mut().try_for_each(|job| {
            let mesh = job.mesh;
            let g = job.queue.get_or_insert_with(Default::default);
            // batches built for other limits are not used (the stage builds its own)
            let batches = mesh
                .batches
                .as_ref()
                .filter(|b| Some((b.max_indices, b.max_vertices)) == strategy.dynamic_limits());
            geometry::cpu::run_into(
                strategy,
                &mesh.vertices,
                &mesh.indices,
                batches,
                mesh.patches.as_ref(),
                &*self.shader,
                &job.uniforms,
                g,
            )?;
            if rate {
                let counts = g.invocations_per_vertex(mesh.vertices.len());
                for (v, &s) in g.vertices.iter_mut().zip(&g.sources) {
                    v.extra = counts[s as usize] as f32;
                }
            }
            Ok(())
        })
    }

    fn raster(
        &self,
        draws: &[DrawRef<'_, Self>],
        settings: &RasterSettings,
        out: &mut RasterOutput,
    ) -> Result<f64, Error> {
        let geometry_ms = self
            .started
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
        let draws: Vec<Draw> = draws
            .iter()
            .map(|d| Draw {
                geometry: d.queue,
                color: d.color,
                faces: d.mesh.faces.as_deref(),
                material: d.material,
                colors: d.mesh.colors.as_deref(),
                uvs1: d.mesh.uvs1.as_deref(),
                tangents: d
                    .mesh
                    .tangents
                    .as_deref()
                    .map(|t| raster::Tangents::new(t, d.model)),
                mirrored: raster::mirrors(d.model),
            })
            .collect();
        raster::rasterize_into(&draws, settings, out)?;
        Ok(geometry_ms)
    }

    fn stats(&self, shaded: &[(&CpuMesh, &ShadedGeometry)]) -> Result<GeometryStats, Error> {
        let mut stats = GeometryStats::default();
        for (_, q) in shaded {
            stats.add(&q.stats);
        }
        Ok(stats)
    }
}
