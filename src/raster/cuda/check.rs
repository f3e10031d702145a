//! What the raster kernels trust, checked on the host before a frame is enqueued: every draw's
//! inputs cover the triangles it reads (the frame's triangle count is checked against the
//! kernels' 32-bit ids before, in `render_after`).

use super::GpuDraw;
use crate::gpu::GpuError;

/// Checks that every draw's inputs cover the triangles it reads (the kernels trust them).
pub(super) fn check_draws(draws: &[GpuDraw]) -> Result<(), GpuError> {
    for (d, draw) in draws.iter().enumerate() {
        if draw.triangles == 0 {
            continue;
        }
        let q = draw.queue;
        // the triangles of the whole mesh the draw reads
        let span = draw.runs.map_or(draw.triangles, |r| r.end());
        let short = match draw.corners {
            None => draw.runs.is_some() || q.vertices.len() < 3 * draw.triangles,
            Some(c) => c.len() < 3 * span,
        };
        if short || q.index_count < 3 * draw.triangles {
            return Err(GpuError::Limit(format!(
                "draw {d}: its queue holds {} triangles, not {}",
                q.index_count / 3,
                draw.triangles
            )));
        }
        if let Some((mesh, counts)) = draw.rate {
            if mesh.index_count < 3 * draw.triangles
                || mesh.indices.len() < 3 * span
                || counts.len() < mesh.vertex_count
            {
                return Err(GpuError::Limit(format!(
                    "draw {d}: its shading-rate inputs cover {} indices and {} counts, not the {} indices of {} triangles over {} vertices",
                    mesh.index_count,
                    counts.len(),
                    3 * draw.triangles,
                    draw.triangles,
                    mesh.vertex_count
                )));
            }
        }
        if draw.faces.is_some_and(|f| f.len() < span) {
            return Err(GpuError::Limit(format!(
                "draw {d}: its triangle values cover fewer than its {} triangles",
                draw.triangles
            )));
        }
        if draw.colors.is_some_and(|(i, _)| i.len() < 3 * span) {
            return Err(GpuError::Limit(format!(
                "draw {d}: its indices cover fewer than its {} triangles",
                draw.triangles
            )));
        }
    }
    Ok(())
}
