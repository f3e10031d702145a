//! Which triangles each part of a frame draws: the frame's drawn triangles in submission order
//! cut into `parts` contiguous runs of about equal size.

use crate::passes::Visibility;
use std::ops::Range;

/// The visibility of every object for each of `parts` parts: part `p` draws the triangles
/// from `p * total / parts` to `(p + 1) * total / parts` of the `total` the frame draws
/// (`visibility`: what the frame stages left of each object; `triangles`: each object's
/// triangle count), counted in submission order. An object may be cut between two parts;
/// `late` objects (blended ones, which the frame draws after the others) come after every
/// other object in that order, as they are submitted.
pub fn split(
    visibility: &[Visibility],
    triangles: &[u32],
    late: &[bool],
    parts: usize,
) -> Vec<Vec<Visibility>> {
    let parts = parts.max(1);
    split_by(visibility, triangles, late, parts, |total, p| {
        total * p as u64 / parts as u64
    })
}

/// [`split`] into parts of the given `shares` of the frame's drawn triangles (one a part,
/// relative to their sum; a part's share may be zero): part `p` starts where the shares before it
/// end, rounded to a triangle. Uneven shares balance parts whose triangles cost unevenly
/// ([`super::balance::Balance`]).
pub fn split_shares(
    visibility: &[Visibility],
    triangles: &[u32],
    late: &[bool],
    shares: &[f64],
) -> Vec<Vec<Visibility>> {
    let parts = shares.len().max(1);
    let clean = |s: f64| if s.is_finite() && s > 0.0 { s } else { 0.0 };
    let sum: f64 = shares.iter().map(|&s| clean(s)).sum();
    let before: Vec<f64> = (0..=parts)
        .map(|p| shares.iter().take(p).map(|&s| clean(s)).sum::<f64>())
        .collect();
    split_by(visibility, triangles, late, parts, |total, p| {
        if p >= parts {
            total
        } else if sum > 0.0 {
            ((total as f64 * before[p] / sum).round() as u64).min(total)
        } else {
            // (no share given: even parts)
            total * p as u64 / parts as u64
        }
    })
}

/// Moves the cuts through object `k` (of `triangles` triangles, drawn whole by the frame: one
/// run of it a part, the parts' runs end to end) to where `align` puts them (a cut at triangle
/// `t` moves to `align(t)`, at most `triangles`): so that each part's run starts and ends where
/// the backend can draw it without a copy (at a batch start, for a mesh drawn from its batch
/// tables). Cuts stay in order; a part left with no triangles of the object draws none, a part
/// left with all of them keeps no list. Parts of an object a frame stage cut into several ranges
/// are left as they are, as are objects no part cuts.
pub fn align_cuts(
    parts: &mut [Vec<Visibility>],
    k: usize,
    triangles: u32,
    align: &dyn Fn(u32) -> u32,
) {
    // (the parts that draw some of the object, each its one run)
    let mut runs: Vec<(usize, Range<u32>)> = Vec::new();
    for (p, part) in parts.iter().enumerate() {
        let v = &part[k];
        if !v.visible {
            continue;
        }
        match v.keep.as_deref() {
            None => return,
            Some([r]) => runs.push((p, r.clone())),
            Some(_) => return,
        }
    }
    let contiguous = runs.windows(2).all(|w| w[0].1.end == w[1].1.start);
    if runs.len() < 2
        || !contiguous
        || runs[0].1.start != 0
        || runs.last().unwrap().1.end != triangles
    {
        return;
    }
    let mut start = 0;
    for (i, (p, r)) in runs.iter().enumerate() {
        let end = match i + 1 == runs.len() {
            true => triangles,
            false => align(r.end).clamp(start, triangles),
        };
        let v = &mut parts[*p][k];
        v.visible = end > start;
        v.keep = match (v.visible, start == 0 && end == triangles) {
            (false, _) | (true, true) => None,
            (true, false) => Some(std::iter::once(start..end).collect()),
        };
        start = end;
    }
}

/// The parts of [`split`], part `p` starting at `bound(total, p)` triangles (non-decreasing in
/// `p`, 0 at part 0 and `total` at `parts`).
fn split_by(
    visibility: &[Visibility],
    triangles: &[u32],
    late: &[bool],
    parts: usize,
    bound: impl Fn(u64, usize) -> u64,
) -> Vec<Vec<Visibility>> {
    // each drawn object's kept triangle ranges, in submission order
    let kept = |k: usize| -> Vec<Range<u32>> {
        match (&visibility[k].visible, &visibility[k].keep) {
            (false, _) => Vec::new(),
            (true, None) => std::iter::once(0..triangles[k]).collect(),
            (true, Some(keep)) => keep.clone(),
        }
    };
    let order: Vec<usize> = (0..visibility.len())
        .filter(|&k| !late[k])
        .chain((0..visibility.len()).filter(|&k| late[k]))
        .collect();
    let total: u64 = order
        .iter()
        .flat_map(|&k| kept(k))
        .map(|r| (r.end - r.start) as u64)
        .sum();
    let hidden = Visibility {
        visible: false,
        keep: None,
    };
    let mut out = vec![vec![hidden; visibility.len()]; parts];
    // the part boundaries, in triangles drawn before them
    let bound = |p: usize| bound(total, p);
    let mut before = 0u64;
    for &k in &order {
        for r in kept(k) {
            let (mut start, end) = (r.start, r.end);
            while start < end {
                // the part the triangle at `before` falls in, and where that part ends
                let p = (0..parts)
                    .find(|&p| before < bound(p + 1))
                    .unwrap_or(parts - 1);
                let room = bound(p + 1) - before;
                let take = (room.min((end - start) as u64)) as u32;
                let v = &mut out[p][k];
                v.visible = true;
                let keep = v.keep.get_or_insert_with(Vec::new);
                match keep.last_mut() {
                    Some(last) if last.end == start => last.end = start + take,
                    _ => keep.push(start..start + take),
                }
                start += take;
                before += take as u64;
            }
        }
    }
    // an object drawn whole by one part keeps no list
    for part in &mut out {
        for (k, v) in part.iter_mut().enumerate() {
            if matches!(v.keep.as_deref(), Some([r]) if *r == (0..triangles[k])) {
                v.keep = None;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vis(keep: Option<Vec<Range<u32>>>) -> Visibility {
        Visibility {
            visible: true,
            keep,
        }
    }

    /// The triangles each part draws, as (object, range) in order.
    fn drawn(part: &[Visibility], triangles: &[u32]) -> Vec<(usize, Range<u32>)> {
        part.iter()
            .enumerate()
            .filter(|(_, v)| v.visible)
            .flat_map(|(k, v)| {
                v.keep
                    .clone()
                    .unwrap_or_else(|| std::iter::once(0..triangles[k]).collect())
                    .into_iter()
                    .map(move |r| (k, r))
            })
            .collect()
    }

    #[test]
    fn parts_are_contiguous_balanced_and_cover_every_drawn_triangle_once() {
        let triangles = [10, 3, 0, 25, 7];
        let visibility = [
            vis(None),
            Visibility {
                visible: false,
                keep: None,
            },
            vis(None),
            vis(Some(vec![2..10, 12..20])),
            vis(None),
        ];
        let late = [false; 5];
        let total = 10 + 8 + 8 + 7;
        for parts in 1..=6 {
            let split = split(&visibility, &triangles, &late, parts);
            assert_eq!(split.len(), parts);
            let all: Vec<_> = split.iter().flat_map(|p| drawn(p, &triangles)).collect();
            // in submission order, adjacent runs of one object joined
            let mut joined: Vec<(usize, Range<u32>)> = Vec::new();
            for (k, r) in all {
                match joined.last_mut() {
                    Some((j, last)) if *j == k && last.end == r.start => last.end = r.end,
                    _ => joined.push((k, r)),
                }
            }
            assert_eq!(
                joined,
                [(0, 0..10), (3, 2..10), (3, 12..20), (4, 0..7)],
                "{parts}"
            );
            for (p, part) in split.iter().enumerate() {
                let n: u32 = drawn(part, &triangles)
                    .iter()
                    .map(|(_, r)| r.len() as u32)
                    .sum();
                let want = total * (p as u32 + 1) / parts as u32 - total * p as u32 / parts as u32;
                assert_eq!(n, want, "part {p} of {parts}");
            }
        }
        // one part: the frame's own visibility
        let one = split(&visibility, &triangles, &late, 1);
        assert_eq!(one[0][0].keep, None);
        assert_eq!(one[0][3].keep, Some(vec![2..10, 12..20]));
        assert!(!one[0][1].visible && one[0][2].keep.is_none());
    }

    #[test]
    fn shares_set_the_parts_sizes_and_keep_them_contiguous() {
        let triangles = [10, 30];
        let visibility = [vis(None), vis(None)];
        let late = [false; 2];
        let sizes = |shares: &[f64]| -> Vec<u32> {
            split_shares(&visibility, &triangles, &late, shares)
                .iter()
                .map(|p| {
                    drawn(p, &triangles)
                        .iter()
                        .map(|(_, r)| r.len() as u32)
                        .sum()
                })
                .collect()
        };
        assert_eq!(sizes(&[1.0, 3.0]), [10, 30]);
        assert_eq!(sizes(&[0.25, 0.25, 0.5]), [10, 10, 20]);
        assert_eq!(sizes(&[0.0, 1.0]), [0, 40]);
        // nothing usable: even parts
        assert_eq!(sizes(&[f64::NAN, 0.0]), [20, 20]);
        let parts = split_shares(&visibility, &triangles, &late, &[3.0, 1.0]);
        assert_eq!(drawn(&parts[0], &triangles), [(0, 0..10), (1, 0..20)]);
        assert_eq!(drawn(&parts[1], &triangles), [(1, 20..30)]);
    }

    #[test]
    fn late_objects_come_last() {
        let triangles = [4, 4, 4];
        let visibility = [vis(None), vis(None), vis(None)];
        // object 0 is blended: submitted after 1 and 2
        let split = split(&visibility, &triangles, &[true, false, false], 3);
        assert!(split[0][1].visible && !split[0][0].visible);
        assert!(split[1][2].visible);
        assert!(split[2][0].visible && !split[2][1].visible && !split[2][2].visible);
    }

    fn one(r: Range<u32>) -> Vec<Range<u32>> {
        std::iter::once(r).collect()
    }

    #[test]
    fn cuts_through_an_object_move_where_asked_and_stay_in_order() {
        let whole = vec![vis(None), vis(None)];
        let mut parts = split(&whole, &[100, 10], &[false, false], 3);
        // (the cuts fall at 36 and 73 of the first object)
        assert_eq!(parts[0][0].keep, Some(one(0..36)));
        align_cuts(&mut parts, 0, 100, &|t| t / 32 * 32);
        assert_eq!(parts[0][0].keep, Some(one(0..32)));
        assert_eq!(parts[1][0].keep, Some(one(32..64)));
        assert_eq!(parts[2][0].keep, Some(one(64..100)));
        // every triangle once, whatever the alignment, a part left empty drawing none
        let aligns: [&dyn Fn(u32) -> u32; 3] = [&|_| 0, &|_| 100, &|t| t + 50];
        for align in aligns {
            let mut parts = split(&whole, &[100, 10], &[false, false], 3);
            align_cuts(&mut parts, 0, 100, align);
            let mut next = 0;
            for part in &parts {
                let v = &part[0];
                let r = match (&v.visible, &v.keep) {
                    (false, _) => continue,
                    (true, None) => 0..100,
                    (true, Some(k)) => {
                        assert_eq!(k.len(), 1);
                        k[0].clone()
                    }
                };
                assert_eq!(r.start, next);
                assert!(r.end > r.start);
                next = r.end;
            }
            assert_eq!(next, 100);
        }
        // an object a frame stage cut into ranges is left alone
        let cut = vec![vis(Some(vec![0..40, 60..100])), vis(None)];
        let mut parts = split(&cut, &[100, 10], &[false, false], 2);
        let before = parts.clone();
        align_cuts(&mut parts, 0, 100, &|t| t / 32 * 32);
        assert_eq!(parts, before);
    }
}
