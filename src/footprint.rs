//! What a pipeline's preparation and frames take of the host's and the device's memory, worked
//! out from the scene's sizes before any work, so that a scene too large for the machine is
//! refused with the figure it needs and the figure available instead of growing until the
//! system kills it.
//!
//! The figures are a model, not a measurement: each stage's buffers by the counts that size them
//! (vertices, triangles, shader invocations), summed over the objects as if every one were
//! resident at once, as they are once prepared. A stage's scratch (re-indexing's keys, the
//! vertex order's copy) is counted for the largest object only: objects are prepared one after
//! another. The model errs towards more than the peak measured (tests/cli.rs compares it with
//! the process's peak on generated meshes).

use crate::geometry::batching::{table_bytes, TABLES_MIN_TRIANGLES};
use crate::geometry::{Strategy, VertexIn, VertexOut};
use rxpipe_core::execution::BackendKind;
use rxpipe_core::limits::OutOfMemory;

/// Bytes a pipeline will take: new host memory (beyond the scene already loaded) and device
/// memory (the CUDA backend's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    pub host: u64,
    pub device: u64,
}

impl Footprint {
    /// Refuses work of this footprint on `backend` where it does not fit: the host's part
    /// against the host's available memory, the device's against `device_free` (where known).
    /// `what(side)` names the work and the side that would not hold it ("the CPU", "the GPU
    /// (the host's part)", "the GPU (its memory)"); the error gives the figure needed and the
    /// figure available.
    pub fn check(
        &self,
        backend: BackendKind,
        device_free: Option<u64>,
        what: impl Fn(&str) -> String,
    ) -> Result<(), OutOfMemory> {
        let on_host = match backend {
            BackendKind::Cpu => "the CPU",
            BackendKind::Cuda => "the GPU (the host's part)",
        };
        rxpipe_core::limits::check_host(self.host, || what(on_host))?;
        match device_free {
            Some(free) if self.device > free => Err(OutOfMemory {
                what: what("the GPU (its memory)"),
                needed: self.device,
                available: free,
            }),
            _ => Ok(()),
        }
    }
}

/// One object's sizes: vertices, triangles, the bytes of its vertex attributes a vertex, how
/// many times it is drawn (its instances: the mesh is held once, a queue and the frame's
/// triangles are counted for each), whether the mesh stages change it on the host (a copy
/// of it is then made: the scene's own mesh is otherwise prepared as it is), and whether, re-
/// indexed on the GPU, it stays there (its attributes are ones a mesh's device arrays hold).
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    pub vertices: u64,
    pub triangles: u64,
    pub attribute_bytes: u64,
    pub placements: u64,
    pub copied: bool,
    pub stays_on_device: bool,
}

impl Counts {
    pub fn of(mesh: &rxpipe_core::mesh::Mesh) -> Counts {
        let vertices = mesh.vertex_count() as u64;
        Counts {
            vertices,
            triangles: mesh.triangle_count() as u64,
            attribute_bytes: (mesh.bytes() as u64 - 4 * mesh.indices.len() as u64)
                / vertices.max(1),
            placements: 1,
            copied: true,
            stays_on_device: mesh.has_only_device_attributes(),
        }
    }

    /// The same mesh, staying on the device once re-indexed there or not.
    pub fn stays_on_device(self, stays: bool) -> Counts {
        Counts {
            stays_on_device: stays,
            ..self
        }
    }

    /// The same mesh, changed by the mesh stages or not (`copied`).
    pub fn copied(self, copied: bool) -> Counts {
        Counts { copied, ..self }
    }

    /// The same mesh drawn `placements` times.
    pub fn placed(self, placements: usize) -> Counts {
        Counts {
            placements: placements as u64,
            ..self
        }
    }

    /// The mesh's own bytes: attributes and indices.
    pub fn mesh(&self) -> u64 {
        self.vertices * self.attribute_bytes + 12 * self.triangles
    }
}

/// What the CPU rasteriser keeps for each triangle it is given (its setup record and tile-bin
/// entries).
const CPU_RASTER_BYTES_PER_TRIANGLE: u64 = 64;

/// What the GPU rasteriser keeps for each triangle of a frame: its first record, its flags and
/// its place in setup's lists.
const GPU_RASTER_BYTES_PER_TRIANGLE: u64 = 12;

/// What it keeps for each triangle that survives setup: the record (168 bytes: edge functions,
/// depth plane, bounds, varyings), a big-box entry and two tile-bin entries.
const GPU_RASTER_BYTES_PER_SURVIVOR: u64 = 168 + 4 + 8;

/// Device memory a triangle takes beyond the buffers counted here one by one, as measured
/// (`rxpipe bench frame`, grids of 104 M to 2 G triangles on an H200: about 4 bytes a resident
/// triangle after the preparation and 2 a drawn triangle after the frames, where the
/// allocator's pool keeps what a trim cannot give back and smaller buffers are not modelled);
/// counted for the resident and for the drawn triangles both.
const GPU_UNCOUNTED_BYTES_PER_TRIANGLE: u64 = 4;

/// The survivors the model allows for: as many as the GPU rasteriser first provides for a
/// 3840x2160 frame (a frame with more grows its buffers).
const SURVIVORS: u64 = crate::raster::SURVIVORS_PER_PIXEL as u64 * 3840 * 2160;

/// The footprint of preparing and drawing objects of sizes `objects` on `backend` with
/// `strategy`, re-indexed first where `reindex`.
pub fn of(
    objects: &[Counts],
    backend: BackendKind,
    strategy: Strategy,
    reindex: bool,
) -> Footprint {
    let vin = std::mem::size_of::<VertexIn>() as u64;
    let vout = std::mem::size_of::<VertexOut>() as u64 + 4;
    let mut resident = 0u64;
    // what the GPU holds of the prepared meshes
    let (mut device_resident, mut resident_triangles) = (0u64, 0u64);
    let mut scratch = 0u64;
    // the GPU's preparation on the host, the largest object's (objects are prepared one after
    // another, and nothing of this outlives an object's upload)
    let mut gpu_host = 0u64;
    // the GPU's re-indexing scratch beside what is resident, the largest object's (given back
    // before the frame's queues and raster buffers exist)
    let mut gpu_scratch = 0u64;
    // the CPU's queues and raster buffers (every drawn object's at once: the frame shades them
    // all, then rasterises them together)
    let mut cpu_frame = 0u64;
    // the GPU's queues (one per object, kept from frame to frame) and the frame's triangles
    let (mut queues, mut corners, mut triangles) = (0u64, 0u64, 0u64);
    // the GPU's batch tables (a hashing strategy's, for big meshes)
    let mut tables = 0u64;
    for c in objects {
        let (v, t) = (c.vertices, c.triangles);
        // the shader's outputs: every index for naive shading, about every vertex once and a
        // half for the others (a batch shades the vertices it shares with its neighbours again)
        let invocations = match strategy {
            Strategy::Naive => 3 * t,
            _ => (3 * v / 2).min(3 * t),
        };
        // the re-indexed mesh replaces the loaded one's copy; its keys and map are scratch
        let kept = c.mesh();
        let reindex_scratch = if reindex { c.mesh() + 8 * v } else { 0 };
        // the vertex order's copy of the mesh, the shader inputs and the dynamic batches
        scratch = scratch.max(reindex_scratch + c.mesh());
        resident += kept + vin * v + 16 * t;
        gpu_host = gpu_host.max(if reindex && c.stays_on_device {
            // re-indexed on the GPU and kept there for the stages after: on the host only the
            // vertices packed for the upload where they are more than positions (or a patch
            // layout's copy, which its lists are made from); on the device
            // the input's copy, the workspace's flags, numbers and map (four words a vertex) and
            // its hash table (up to four more)
            gpu_scratch = gpu_scratch.max(c.mesh() + 32 * v);
            let packed = if c.attribute_bytes > 12 {
                c.attribute_bytes * v
            } else {
                0
            };
            packed.max(if strategy.layout().patches { kept } else { 0 })
        } else {
            // the re-indexed mesh and its scratch, or a copy for the stages that change it; the
            // shader inputs and host lists, until uploaded
            let changed = if reindex {
                kept + reindex_scratch
            } else if c.copied {
                kept
            } else {
                0
            };
            changed + vin * v + 16 * t
        });
        // a batch ends at its index limit or its vertex limit, whichever comes first
        let batches = strategy.dynamic_limits().map(|(mi, mv)| {
            let n = (3 * t)
                .div_ceil(mi as u64)
                .max(invocations.div_ceil(mv as u64));
            (n, mv)
        });
        let layout = strategy.layout();
        // on the device: the shader inputs and the indices; the batches' starts; a patch
        // layout's lists and corners, and its triangles' values; the attributes the shader inputs
        // do not hold (colours, tangents, a second uv set: at most all but the positions)
        resident_triangles += t;
        device_resident += vin * v
            + 12 * t
            + batches.map_or(0, |(n, _)| 4 * (n + 1))
            + if layout.patches {
                4 * invocations + 12 * t
            } else {
                0
            }
            + if layout.patch_colors { 4 * t } else { 0 }
            + if c.stays_on_device {
                0
            } else {
                c.attribute_bytes.saturating_sub(12) * v
            };
        if let (true, Some((n, mv))) = (layout.tables, batches) {
            // (held once, by the triangles a frame draws: every instance's)
            if t * c.placements >= TABLES_MIN_TRIANGLES as u64 {
                tables += table_bytes(3 * t as usize, n as usize, mv);
            }
        }
        let queue = invocations * vout + 12 * t;
        cpu_frame += (queue + CPU_RASTER_BYTES_PER_TRIANGLE * t) * c.placements;
        queues += queue * c.placements;
        corners += 12 * t * c.placements;
        triangles += t * c.placements;
    }
    // a fused frame's queues hold corners only, and the survivors' vertices are the raster
    // stage's (as many as its records at first); the hashing strategies fuse big frames
    let fused = matches!(
        strategy,
        Strategy::DynamicHash { .. } | Strategy::ParallelHash { .. }
    ) && triangles >= crate::raster::FUSE_MIN_TRIANGLES as u64;
    if fused {
        queues = corners + vout * triangles.min(SURVIVORS);
    }
    match backend {
        BackendKind::Cpu => Footprint {
            host: resident + scratch + cpu_frame,
            device: 0,
        },
        // the host holds an object's preparation until its upload; the device the inputs,
        // batches, batch tables, queues and one frame's raster buffers
        BackendKind::Cuda => Footprint {
            host: gpu_host,
            device: device_resident
                + GPU_UNCOUNTED_BYTES_PER_TRIANGLE * (resident_triangles + triangles)
                + gpu_scratch.max(
                    tables
                        + queues
                        + GPU_RASTER_BYTES_PER_TRIANGLE * triangles
                        + GPU_RASTER_BYTES_PER_SURVIVOR * triangles.min(SURVIVORS),
                ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn larger_scenes_take_more_and_naive_shading_the_most() {
        let c = |v, t| Counts {
            vertices: v,
            triangles: t,
            attribute_bytes: 32,
            placements: 1,
            copied: true,
            stays_on_device: false,
        };
        let hash = Strategy::parse("hash").unwrap();
        let small = of(&[c(1000, 2000)], BackendKind::Cpu, hash, true);
        let large = of(&[c(1_000_000, 2_000_000)], BackendKind::Cpu, hash, true);
        assert!(large.host > 900 * small.host && small.device == 0);
        let naive = of(&[c(1000, 2000)], BackendKind::Cpu, Strategy::Naive, true);
        assert!(naive.host > small.host);
        let gpu = of(&[c(1000, 2000)], BackendKind::Cuda, hash, true);
        assert!(gpu.device > 0 && gpu.host < small.host);
        // a frame holds every drawn object's queue and raster buffers at once, an instance's
        // too; the mesh of an instanced object once
        let twice = of(&[c(1000, 2000).placed(2)], BackendKind::Cpu, hash, true);
        let apart = of(
            &[c(1000, 2000), c(1000, 2000)],
            BackendKind::Cpu,
            hash,
            true,
        );
        assert!(twice.host >= small.host + CPU_RASTER_BYTES_PER_TRIANGLE * 2000);
        assert!(apart.host > twice.host);
    }

    #[test]
    fn the_gpu_host_part_is_one_object_at_a_time_and_copies_only_changed_meshes() {
        let c = Counts {
            vertices: 500_000,
            triangles: 1_000_000,
            attribute_bytes: 12,
            placements: 1,
            copied: false,
            stays_on_device: false,
        };
        let hash = Strategy::parse("hash").unwrap();
        let host = |objects: &[Counts], reindex| of(objects, BackendKind::Cuda, hash, reindex).host;
        let vin = std::mem::size_of::<VertexIn>() as u64;
        // as it is: its shader inputs and host lists, until uploaded
        assert_eq!(host(&[c], false), vin * c.vertices + 16 * c.triangles);
        // changed by a stage: a copy too; re-indexed: the new mesh and its scratch
        assert_eq!(host(&[c.copied(true)], false), host(&[c], false) + c.mesh());
        assert!(host(&[c], true) > host(&[c.copied(true)], false));
        // objects prepared one after another: the largest decides
        assert_eq!(host(&[c, c], false), host(&[c], false));
        // re-indexed on the GPU and kept there: nothing of it on the host but a packed copy of
        // vertices with more than positions; on the device its scratch, where more than the
        // frame's buffers
        let kept = c.stays_on_device(true);
        assert_eq!(host(&[kept], true), 0);
        let lit = Counts {
            attribute_bytes: 24,
            ..kept
        };
        assert_eq!(host(&[lit], true), 24 * lit.vertices);
        let device = |c: Counts| of(&[c], BackendKind::Cuda, hash, true).device;
        assert!(device(kept) >= device(c) && device(kept) >= c.mesh() + 32 * c.vertices);
    }

    #[test]
    fn big_meshes_hashed_on_the_gpu_hold_batch_tables() {
        let (mi, mv) = (1023, 256);
        let hash = Strategy::DynamicHash {
            max_indices: mi,
            max_vertices: mv,
        };
        let sort = Strategy::DynamicSort {
            max_indices: mi,
            max_vertices: mv,
        };
        let c = |t: u64| Counts {
            vertices: t / 2,
            triangles: t,
            attribute_bytes: 32,
            placements: 1,
            copied: true,
            stays_on_device: false,
        };
        let gap = |t: u64| {
            of(&[c(t)], BackendKind::Cuda, hash, true).device as i128
                - of(&[c(t)], BackendKind::Cuda, sort, true).device as i128
        };
        // below the thresholds none; above, a byte an index, and a list of ids, a count, bounds
        // and a list entry a batch (a batch of 341 triangles holds about 256 of these meshes'
        // vertices); and the frame is fused: its queue holds no vertices (3/4 of a shaded
        // vertex a triangle), the raster stage as many survivors' vertices as records
        assert_eq!(gap(TABLES_MIN_TRIANGLES as u64 - 1), 0);
        const { assert!(crate::raster::FUSE_MIN_TRIANGLES <= TABLES_MIN_TRIANGLES) };
        let vout = std::mem::size_of::<VertexOut>() as i128 + 4;
        for t in [3 * TABLES_MIN_TRIANGLES as u64, 20 * SURVIVORS] {
            let batches = (3 * t).div_ceil(mi as u64);
            let tables = 3 * t + batches * (4 * mv as u64 + 4 + 32 + 8);
            let queue = vout * (3 * t as i128 / 4);
            let survivors = vout * t.min(SURVIVORS) as i128;
            assert_eq!(gap(t), tables as i128 - queue + survivors, "{t}");
        }
        assert!(gap(20 * SURVIVORS) < 0);
        let t = 3 * TABLES_MIN_TRIANGLES as u64;
        assert_eq!(
            of(&[c(t)], BackendKind::Cpu, hash, true),
            of(&[c(t)], BackendKind::Cpu, sort, true)
        );
    }
}
