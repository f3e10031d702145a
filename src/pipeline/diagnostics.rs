//! What a frame says when it drew nothing, or culled most of what it saw.

use super::frame::FrameStats;
use crate::raster::{self, CullMode};

/// Why a frame drew nothing, when it drew nothing: what dropped the scene's `total` triangles.
pub(super) fn nothing_drawn(stats: &FrameStats, total: u64, cull: CullMode) -> Option<String> {
    let r = &stats.raster;
    if r.fragments > 0 || total == 0 {
        return None;
    }
    let n = thousands;
    let (_, staged) = stats.culled();
    let faced = match cull {
        CullMode::Front => "faced the camera (front faces are culled): try --cull none",
        _ => "faced away: try --cull none",
    };
    Some(if r.triangles_in == 0 {
        format!(
            "nothing was drawn: the frame stages dropped all {} triangles (outside the view or facing away)",
            n(total)
        )
    } else if r.culled == r.triangles_in {
        format!("nothing was drawn: all {} triangles {faced}", n(r.culled))
    } else if r.rejected == r.triangles_in {
        format!(
            "nothing was drawn: all {} triangles lie outside the view or cover no pixel centre (is the camera looking at the scene?)",
            n(r.rejected)
        )
    } else {
        format!(
            "nothing was drawn: of {} triangles, the frame stages dropped {}, {} {faced}, and {} lie outside the view or cover no pixel centre",
            n(total),
            n(staged),
            n(r.culled),
            n(r.rejected)
        )
    })
}

/// What to say when back-face culling drops most of the triangles in view: a closed mesh shows
/// about half of its faces, so most culled means surfaces seen from their backs, as an open
/// scan is from behind. rxpipe keeps culling on (and a material's doubleSided draws both
/// sides): it says so instead of drawing every open surface two-sided.
///
/// The count of culled triangles also holds those of no area, which is most of them where
/// triangles are smaller than a pixel: said only where the triangles in view average at least
/// half a pixel of the frame's `pixels`.
pub(super) fn mostly_culled(
    r: &raster::RasterStats,
    cull: CullMode,
    pixels: u64,
) -> Option<String> {
    let in_view = r.triangles_in.saturating_sub(r.rejected);
    let large = 2 * pixels >= in_view;
    (cull == CullMode::Back && large && in_view >= 16 && r.culled * 4 > in_view * 3).then(|| {
        format!(
            "back-face culling dropped {} of the {} triangles in view ({:.0}%): surfaces seen \
             from their backs (an open mesh from behind?) are not drawn; --cull none draws both \
             sides",
            thousands(r.culled),
            thousands(in_view),
            100.0 * r.culled as f64 / in_view as f64
        )
    })
}

/// `n` with a comma between groups of three digits (2,553).
pub(super) fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
