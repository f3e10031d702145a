//! The frustum test on the CPU: the same arithmetic, in the same order, as kernels/frustum.cu.

use super::{FrustumObject, MARGIN};

/// Whether an object may be visible (false: all eight box corners outside one clip plane).
pub fn inside(o: &FrustumObject) -> bool {
    let m = &o.mvp;
    let mut all_out = 0x3fu32;
    for c in 0..8 {
        let x = if c & 1 != 0 { o.hi[0] } else { o.lo[0] };
        let y = if c & 2 != 0 { o.hi[1] } else { o.lo[1] };
        let z = if c & 4 != 0 { o.hi[2] } else { o.lo[2] };
        let cx = m[0] * x + m[4] * y + m[8] * z + m[12];
        let cy = m[1] * x + m[5] * y + m[9] * z + m[13];
        let cz = m[2] * x + m[6] * y + m[10] * z + m[14];
        let cw = m[3] * x + m[7] * y + m[11] * z + m[15];
        let slack = MARGIN * (cx.abs() + cy.abs() + cz.abs() + cw.abs());
        let out = (-cx - cw > slack) as u32
            | ((cx - cw > slack) as u32) << 1
            | ((-cy - cw > slack) as u32) << 2
            | ((cy - cw > slack) as u32) << 3
            | ((-cz > slack) as u32) << 4
            | ((cz - cw > slack) as u32) << 5;
        all_out &= out;
    }
    all_out == 0
}
