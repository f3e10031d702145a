//! The queries on the CPU, patch by patch: each patch answers for the elements it owns, from its
//! two matrices and their transposes, in parallel over patches.

use super::{sources, Query, QueryResult};
use crate::patch::{Patch, PatchData, PatchError};
use rayon::prelude::*;

/// One patch's answers for the elements it owns (among `active`), as (global id, list).
fn patch_answers(p: &Patch, q: Query, active: Option<&[bool]>) -> Vec<(u32, Vec<u32>)> {
    let global = p.owned(q.source());
    let owned = global.len();
    let is_active = |l: usize| active.is_none_or(|a| a[global[l] as usize]);
    if !(0..owned).any(is_active) {
        return Vec::new();
    }
    let gv = |l: u16| p.vertices[l as usize];
    let ge = |l: u16| p.edges[l as usize];
    let edge_of = |f: usize, k: usize| p.fe[3 * f + k] >> 1;
    // local lists of the owned sources, built from the patch's two matrices
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); owned];
    match q {
        Query::FV => {
            for (f, l) in lists.iter_mut().enumerate() {
                l.extend(p.face_vertices(f).map(gv));
            }
        }
        Query::FE => {
            for (f, l) in lists.iter_mut().enumerate() {
                l.extend((0..3).map(|k| ge(edge_of(f, k))));
            }
        }
        Query::EV => {
            for (e, l) in lists.iter_mut().enumerate() {
                l.extend([gv(p.ev[2 * e]), gv(p.ev[2 * e + 1])]);
            }
        }
        // the transposes: every local element adds itself to its owned neighbours' lists
        Query::VV | Query::VE => {
            for e in 0..p.edges.len() {
                let (a, b) = (p.ev[2 * e], p.ev[2 * e + 1]);
                for (x, y) in [(a, b), (b, a)] {
                    if let Some(l) = lists.get_mut(x as usize) {
                        match q {
                            Query::VV if x != y => l.push(gv(y)),
                            Query::VE => l.push(ge(e as u16)),
                            _ => {}
                        }
                    }
                }
            }
        }
        Query::VF => {
            for f in 0..p.faces.len() {
                for v in p.face_vertices(f) {
                    if let Some(l) = lists.get_mut(v as usize) {
                        l.push(p.faces[f]);
                    }
                }
            }
        }
        Query::EF => {
            for f in 0..p.faces.len() {
                for k in 0..3 {
                    if let Some(l) = lists.get_mut(edge_of(f, k) as usize) {
                        l.push(p.faces[f]);
                    }
                }
            }
        }
        Query::FF => {
            // the faces around every local edge, then each owned face's edges' faces
            let mut ef: Vec<Vec<u32>> = vec![Vec::new(); p.edges.len()];
            for f in 0..p.faces.len() {
                for k in 0..3 {
                    ef[edge_of(f, k) as usize].push(p.faces[f]);
                }
            }
            for (f, l) in lists.iter_mut().enumerate() {
                for k in 0..3 {
                    l.extend(
                        ef[edge_of(f, k) as usize]
                            .iter()
                            .filter(|&&g| g != p.faces[f]),
                    );
                }
            }
        }
    }
    lists
        .into_iter()
        .enumerate()
        .filter(|&(l, _)| is_active(l))
        .map(|(l, mut list)| {
            if !matches!(q, Query::FV | Query::FE | Query::EV) {
                list.sort_unstable();
                list.dedup();
            }
            (global[l], list)
        })
        .collect()
}

/// Answers `q` for every element (or the `active` ones: one flag per source element, a set of
/// another length is an error; the others get empty lists), patch by patch in parallel.
pub fn run(data: &PatchData, q: Query, active: Option<&[bool]>) -> Result<QueryResult, PatchError> {
    let n = source_count(data, q, active)?;
    let answers: Vec<Vec<(u32, Vec<u32>)>> = data
        .patches
        .par_iter()
        .map(|p| patch_answers(p, q, active))
        .collect();
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (k, l) in answers.into_iter().flatten() {
        lists[k as usize] = l;
    }
    Ok(QueryResult::from_lists(q, lists))
}

/// The number of source elements of `q`, which an active set must match.
fn source_count(data: &PatchData, q: Query, active: Option<&[bool]>) -> Result<usize, PatchError> {
    let n = sources(
        q,
        data.vertex_owner.len(),
        data.edges.len(),
        data.face_owner.len(),
    );
    match active {
        Some(a) if a.len() != n => Err(PatchError::Active {
            query: q.name(),
            got: a.len(),
            want: n,
        }),
        _ => Ok(n),
    }
}

/// The paper's programming model on the CPU: `f(element, its list)` for every source element
/// of `q` (or the `active` ones), in parallel patch by patch; the results by element id
/// (`T::default()` for the elements not run).
pub fn for_each<T, F>(
    data: &PatchData,
    q: Query,
    active: Option<&[bool]>,
    f: F,
) -> Result<Vec<T>, PatchError>
where
    T: Default + Clone + Send + Sync,
    F: Fn(u32, &[u32]) -> T + Sync,
{
    let n = source_count(data, q, active)?;
    let answers: Vec<Vec<(u32, T)>> = data
        .patches
        .par_iter()
        .map(|p| {
            patch_answers(p, q, active)
                .into_iter()
                .map(|(k, l)| (k, f(k, &l)))
                .collect()
        })
        .collect();
    let mut out = vec![T::default(); n];
    for (k, t) in answers.into_iter().flatten() {
        out[k as usize] = t;
    }
    Ok(out)
}
