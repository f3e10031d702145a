//! Compositing the parts of a frame by depth.

use crate::error::Error;

/// The colour (RGBA8, four bytes a pixel) and depth of `parts`, frames of the same size drawn
/// by the parts of one frame in submission order, composited into `color` and `depth`: each
/// pixel from the part whose depth there is the smallest, a tie going to the earlier part (its
/// triangles come first, and a single frame keeps the first of equal fragments). A pixel no
/// part covered keeps the background all of them hold there (depth 1).
pub fn by_depth(
    parts: &[(&[u8], &[f32])],
    color: &mut Vec<u8>,
    depth: &mut Vec<f32>,
) -> Result<(), Error> {
    use rayon::prelude::*;
    let Some(&(c0, d0)) = parts.first() else {
        return Err(Error::Backend("no parts to composite".into()));
    };
    let n = d0.len();
    if let Some(k) = parts
        .iter()
        .position(|(c, d)| d.len() != n || c.len() != 4 * n)
    {
        return Err(Error::Backend(format!(
            "part {k} of the frame is not the size of part 0 ({n} pixels)"
        )));
    }
    color.clear();
    color.extend_from_slice(c0);
    depth.clear();
    depth.extend_from_slice(d0);
    const ROWS: usize = 4096;
    color
        .par_chunks_mut(4 * ROWS)
        .zip(depth.par_chunks_mut(ROWS))
        .enumerate()
        .for_each(|(chunk, (c, d))| {
            let first = chunk * ROWS;
            for (pc, pd) in &parts[1..] {
                let (pc, pd) = (&pc[4 * first..], &pd[first..]);
                for i in 0..d.len() {
                    // (strictly nearer: an equal depth stays with the earlier part)
                    if pd[i] < d[i] {
                        d[i] = pd[i];
                        c[4 * i..4 * i + 4].copy_from_slice(&pc[4 * i..4 * i + 4]);
                    }
                }
            }
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_part_wins_and_ties_go_to_the_earlier() {
        let c = |v: u8| vec![v; 4 * 3];
        let (c0, c1, c2) = (c(10), c(20), c(30));
        let d0 = [0.5, 1.0, 0.2];
        let d1 = [0.4, 1.0, 0.2];
        let d2 = [0.4, 0.9, 0.3];
        let (mut color, mut depth) = (Vec::new(), Vec::new());
        by_depth(
            &[(&c0, &d0), (&c1, &d1), (&c2, &d2)],
            &mut color,
            &mut depth,
        )
        .unwrap();
        assert_eq!(depth, [0.4, 0.9, 0.2]);
        // pixel 0: parts 1 and 2 tie nearest (part 1); pixel 1: part 2; pixel 2: 0 and 1 tie
        assert_eq!(color, [[20u8; 4], [30; 4], [10; 4]].concat());
        let short = [0.5f32; 2];
        assert!(by_depth(&[(&c0, &d0), (&c1[..8], &short)], &mut color, &mut depth).is_err());
        assert!(by_depth(&[], &mut color, &mut depth).is_err());
    }
}
