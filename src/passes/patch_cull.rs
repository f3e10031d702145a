//! Per-patch culling: a frame stage that drops the patches (of objects in patch order) that lie
//! outside the view, or whose faces all face away from the eye while back faces are culled. What
//! it keeps is each object's kept patches as triangle ranges, so the geometry stage neither
//! shades nor sets up the others.
//!
//! Each patch keeps a bounding sphere and the cone of its face normals ([`PatchBounds`]), and is
//! dropped when [`CullView::keeps`] says nothing within may show: it lies outside the view, or
//! (while back faces are culled) every face faces away.

use super::{FrameContext, FrameStage, PassError, StageInfo, StageKind, Visibility};
use crate::patch::bounds::CullView;
use crate::patch::PatchBounds;
use crate::raster::CullMode;
use rxpipe_core::execution::BackendKind;
use std::ops::Range;

/// From how many patches an object's tests are spread over the CPU's cores, and how many a task
/// takes (below that, waking threads costs more than the tests).
const PARALLEL_FROM: usize = 8192;
const CHUNK: usize = 1024;

/// The per-patch culling stage.
#[derive(Debug, Default, Clone, Copy)]
pub struct PatchCull;

pub(crate) const INFO: StageInfo = StageInfo {
    name: "patch-cull",
    kind: StageKind::Frame,
    about: "drops the patches outside the view or facing away (bounding sphere and normal cone per patch; objects in patch order)",
    args: &[],
    backends: &[BackendKind::Cpu],
    default: "default with the built-in vertex shaders and the patch order",
};

/// The triangle ranges of the patches `keep` says to keep, adjacent ones merged.
fn kept_ranges(bounds: &PatchBounds, keep: impl Iterator<Item = bool>) -> Vec<Range<u32>> {
    let mut out: Vec<Range<u32>> = Vec::new();
    for (p, k) in keep.enumerate() {
        if !k {
            continue;
        }
        let r = bounds.face_start[p]..bounds.face_start[p + 1];
        match out.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            _ => out.push(r),
        }
    }
    out
}

/// The ranges in both sorted, disjoint lists.
fn intersect(a: &[Range<u32>], b: &[Range<u32>]) -> Vec<Range<u32>> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].start.max(b[j].start), a[i].end.min(b[j].end));
        if s < e {
            out.push(s..e);
        }
        if a[i].end < b[j].end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// What the culling test calls `facing` for a cull mode: +1 back faces culled, -1 front faces, 0
/// none.
pub(crate) fn facing(cull: CullMode) -> f32 {
    match cull {
        CullMode::None => 0.0,
        CullMode::Back => 1.0,
        CullMode::Front => -1.0,
    }
}

impl FrameStage for PatchCull {
    fn name(&self) -> &str {
        "patch-cull"
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn run(&self, ctx: &FrameContext, visible: &mut [Visibility]) -> Result<(), PassError> {
        use rayon::prelude::*;
        for (k, o) in ctx.objects.iter().enumerate() {
            let Some(bounds) = o.patches.as_deref() else {
                continue;
            };
            if !visible[k].visible || bounds.patches.is_empty() {
                continue;
            }
            let view = CullView::new(ctx.view_proj, o.model, ctx.camera.eye, facing(ctx.cull));
            // (a few thousand patches take microseconds on one core, less than waking the
            // thread pool)
            let keep: Vec<bool> = if bounds.patches.len() < PARALLEL_FROM {
                bounds.patches.iter().map(|b| view.keeps(b)).collect()
            } else {
                bounds
                    .patches
                    .par_chunks(CHUNK)
                    .flat_map_iter(|c| c.iter().map(|b| view.keeps(b)))
                    .collect()
            };
            if keep.iter().all(|&k| k) {
                continue;
            }
            let mut ranges = kept_ranges(bounds, keep.into_iter());
            if let Some(before) = &visible[k].keep {
                ranges = intersect(before, &ranges);
            }
            visible[k].visible = !ranges.is_empty();
            visible[k].keep = Some(ranges);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::bounds::PatchBound;
    use glam::{Mat4, Vec3};

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn ranges_merge_and_intersect() {
        let b = PatchBounds {
            face_start: vec![0, 2, 5, 9],
            patches: vec![Default::default(); 3],
        };
        assert_eq!(kept_ranges(&b, [true, true, false].into_iter()), vec![0..5]);
        assert_eq!(
            kept_ranges(&b, [true, false, true].into_iter()),
            vec![0..2, 5..9]
        );
        assert_eq!(intersect(&[0..4, 6..9], &[3..7]), vec![3..4, 6..7]);
        assert_eq!(intersect(&[0..2], &[2..3]), Vec::<Range<u32>>::new());
    }

    #[test]
    fn a_patch_facing_away_is_dropped_and_one_facing_the_eye_kept() {
        let proj = Mat4::perspective_rh(0.8, 1.0, 0.1, 100.0);
        let eye = Vec3::new(0.0, 0.0, 5.0);
        let vp = proj * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
        let b = |axis: Vec3, cutoff: f32| PatchBound {
            center: Vec3::ZERO,
            radius: 0.5,
            axis,
            cutoff,
        };
        let v = CullView::new(vp, Mat4::IDENTITY, eye, facing(CullMode::Back));
        assert!(v.keeps(&b(Vec3::Z, 0.9)), "facing the eye");
        assert!(!v.keeps(&b(-Vec3::Z, 0.9)), "facing away");
        assert!(v.keeps(&b(-Vec3::Z, 0.0)), "a cone too wide to say");
        assert!(v.keeps(&b(Vec3::X, 0.9)), "edge-on");
        let none = CullView::new(vp, Mat4::IDENTITY, eye, facing(CullMode::None));
        assert!(none.keeps(&b(-Vec3::Z, 0.9)));
        let front = CullView::new(vp, Mat4::IDENTITY, eye, facing(CullMode::Front));
        assert!(!front.keeps(&b(Vec3::Z, 0.9)));
        // mirrored: what faces away in object space faces away in the world too (the raster
        // stage takes a mirrored draw's clockwise faces as its front)
        let mirror = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        let m = CullView::new(vp, mirror, eye, facing(CullMode::Back));
        assert!(!m.keeps(&b(-Vec3::Z, 0.9)));
        assert!(m.keeps(&b(Vec3::Z, 0.9)));
        // outside the view
        let far = PatchBound {
            center: Vec3::new(100.0, 0.0, 0.0),
            ..b(Vec3::Z, 0.9)
        };
        assert!(!v.keeps(&far));
    }
}
