//! A rendered frame and its statistics.

use crate::backend::BackendKind;
use crate::error::Error;
use crate::geometry::GeometryStats;
use crate::passes::FrameStageStats;
use crate::raster::{self, RasterStats};
use std::path::Path;

/// Per-frame statistics: which backend ran it, frame-stage results, geometry invocations, raster
/// counts and stage times.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FrameStats {
    /// the backend of the geometry and raster stages
    pub backend: Option<BackendKind>,
    /// the geometry stage's strategy
    pub strategy: &'static str,
    /// what each frame stage did
    pub stages: Vec<FrameStageStats>,
    /// shader invocations and triangles of the geometry stage
    pub geometry: GeometryStats,
    /// counts and times of the raster stage
    pub raster: RasterStats,
    /// the geometry stage's time in milliseconds (device time with CUDA)
    pub geometry_ms: f64,
    /// host wall time of the whole frame in milliseconds
    pub total_ms: f64,
    /// where the host's time of the frame went
    pub host: HostTimes,
    /// how a frame drawn in parts ([`super::Pipeline::render_parts`]) was made; `None` for a
    /// frame drawn whole
    pub parts: Option<PartsStats>,
}

/// A frame drawn in parts: each part's time and the composite's.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PartsStats {
    /// each part's time in ms: its geometry, setup, binning and raster (device time with CUDA)
    pub part_ms: Vec<f64>,
    /// host wall time of compositing the parts, in ms
    pub composite_ms: f64,
    /// the time of the blended objects' layer drawn over the composite, when there was one
    pub layer_ms: Option<f64>,
}

impl PartsStats {
    /// The slowest part's time: what parts drawn side by side, one a GPU, would take before
    /// compositing.
    pub fn slowest_ms(&self) -> f64 {
        self.part_ms.iter().fold(0.0, |a, &b| a.max(b))
    }
}

/// Host wall times of a frame's parts, in milliseconds: what the host does for the device (on
/// the CPU backend, the work itself).
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct HostTimes {
    /// the objects' model matrices (posed) and bounds, and the frame stages (each also in
    /// [`FrameStats::stages`])
    pub stages_ms: f64,
    /// the drawn objects' list and uniforms and the geometry stage's preparation (on the CPU,
    /// the geometry stage itself)
    pub draws_ms: f64,
    /// the raster stage's call: on the GPU its tables, its launches with the geometry stage's,
    /// the wait for the device and the download ([`RasterStats`]'s host times split it)
    pub raster_ms: f64,
    /// the frame's statistics and notes
    pub stats_ms: f64,
}

impl FrameStats {
    /// Adds the counts and times of `o`, another part of the same frame ([`crate::sortlast`]);
    /// the frame stages' results stay this part's (every part runs them over the whole scene).
    /// The frame's device time (host time on the CPU): geometry, setup, binning and raster.
    pub fn device_ms(&self) -> f64 {
        let r = &self.raster;
        self.geometry_ms + r.setup_ms + r.bin_ms + r.raster_ms
    }

    pub fn add(&mut self, o: &FrameStats) {
        self.geometry.add(&o.geometry);
        self.raster.add(&o.raster);
        self.geometry_ms += o.geometry_ms;
        self.total_ms += o.total_ms;
        self.host.stages_ms += o.host.stages_ms;
        self.host.draws_ms += o.host.draws_ms;
        self.host.raster_ms += o.host.raster_ms;
        self.host.stats_ms += o.host.stats_ms;
    }

    /// Objects and triangles the frame stages dropped.
    pub fn culled(&self) -> (u64, u64) {
        self.stages.iter().fold((0, 0), |(o, t), s| {
            (o + s.culled_objects, t + s.culled_triangles)
        })
    }
}

impl std::fmt::Display for FrameStats {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        for s in &self.stages {
            write!(
                f,
                "{} ({}): {} objects / {} triangles culled in {:.3} ms; ",
                s.stage,
                s.backend.map_or("-", |b| b.name()),
                s.culled_objects,
                s.culled_triangles,
                s.ms
            )?;
        }
        write!(
            f,
            "{} triangles, {} invocations (ASR {:.3}, ideal {:.3}, strategy {}, {}), {} rasterised, {} fragments; geometry {:.2} ms, setup {:.2} ms, binning {:.2} ms, raster {:.2} ms, total {:.2} ms",
            self.geometry.triangles,
            self.geometry.invocations,
            self.geometry.asr(),
            self.geometry.ideal_asr(),
            self.strategy,
            self.backend.map_or("-", |b| b.name()),
            self.raster.rasterized,
            self.raster.fragments,
            self.geometry_ms,
            self.raster.setup_ms,
            self.raster.bin_ms,
            self.raster.raster_ms,
            self.total_ms
        )?;
        let r = &self.raster;
        if r.batches_culled > 0 {
            write!(
                f,
                "; {} batches of {} triangles culled whole before shading",
                r.batches_culled, r.batch_culled_triangles
            )?;
        }
        Ok(())
    }
}

/// A rendered image: RGBA8 (sRGB) colour, f32 depth (NDC, 1 = far) and statistics.
#[derive(Debug, Clone)]
pub struct Frame {
    /// pixels across
    pub width: u32,
    /// pixels down
    pub height: u32,
    /// RGBA8, sRGB, row by row from the top
    pub color: Vec<u8>,
    /// NDC depth per pixel, 1 = far
    pub depth: Vec<f32>,
    /// fragments covering each pixel before the depth test, when requested
    pub coverage: Option<Vec<u32>>,
    /// what the frame's stages did and cost
    pub stats: FrameStats,
    /// what the renderer had to adapt for this frame (GPU buffers that grew), for the user
    pub notes: Vec<String>,
    /// the raster stage's working memory, reused by the next frame rendered into this one
    pub(super) scratch: raster::Scratch,
}

impl Frame {
    /// A frame with no pixels; rendering sizes it.
    pub fn empty() -> Frame {
        Frame {
            width: 0,
            height: 0,
            color: Vec::new(),
            depth: Vec::new(),
            coverage: None,
            stats: FrameStats::default(),
            notes: Vec::new(),
            scratch: raster::Scratch::default(),
        }
    }

    /// Writes the colour buffer as PNG (to a temporary name first, then renamed into place).
    pub fn save_png(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        Ok(rxpipe_io::image::save_png(
            path.as_ref(),
            self.width,
            self.height,
            &self.color,
        )?)
    }

    /// Writes the colour image in the format the path's extension names (PNG or JPEG; see
    /// [`rxpipe_io::image::ImageFormat`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        Ok(rxpipe_io::image::save(
            path.as_ref(),
            self.width,
            self.height,
            &self.color,
        )?)
    }

    /// The frame's buffers as a raster target (given back with [`Frame::put_output`]).
    pub(super) fn take_output(&mut self) -> raster::RasterOutput {
        raster::RasterOutput {
            width: self.width,
            height: self.height,
            color: std::mem::take(&mut self.color),
            depth: std::mem::take(&mut self.depth),
            coverage: self.coverage.take(),
            stats: Default::default(),
            scratch: std::mem::take(&mut self.scratch),
        }
    }

    pub(super) fn put_output(&mut self, out: raster::RasterOutput) {
        self.width = out.width;
        self.height = out.height;
        self.color = out.color;
        self.depth = out.depth;
        self.coverage = out.coverage;
        self.scratch = out.scratch;
        self.stats.raster = out.stats;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statistics_name_the_batches_culled_whole_when_there_are_any() {
        let mut s = FrameStats::default();
        assert!(!s.to_string().contains("culled whole"));
        s.raster.batches_culled = 3;
        s.raster.batch_culled_triangles = 1000;
        assert!(
            s.to_string()
                .ends_with("; 3 batches of 1000 triangles culled whole before shading"),
            "{s}"
        );
    }
}
