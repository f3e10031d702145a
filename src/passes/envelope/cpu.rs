//! The envelope's per-vertex program on the CPU: how far one vertex may move along its normal
//! ([`SafeOffset`]), found against the input's BVH. It is the expensive program the geometry
//! stage's strategies save (Kenzel et al. 2018, section 5.2): a vertex a batch shares is
//! searched for once. kernels/programs/envelope.cu is the same program in CUDA C, operation for
//! operation (the kernels are built without fused multiply-adds), so both give the same bits.

use crate::distance::bvh::Bvh;
use crate::distance::triangle::{crossing, normal, point_dist2, Aabb, Tri};
use crate::geometry::cpu::Program;
use glam::{DVec3, Vec3};
use rxpipe_core::mesh::VertexFaces;

/// One vertex's record: the moved position (3), the offset it moved by (0: it stays), and the
/// unit direction it moved along (3), and what limited it ([`Limit`] as a float).
pub type Record = [f32; 8];

/// How many times the clearance test may halve an offset before the vertex stays.
pub const HALVINGS: u32 = 10;

/// The segment cast along the normal is this many times the distance asked for, and a vertex
/// moves at most a third of the way to the first triangle it meets: two sheets facing each other
/// across a gap then each take at most a third of it.
pub const CAST: f64 = 3.0;

/// What decided a vertex's offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Limit {
    /// it moved the whole distance asked for
    Full = 0,
    /// a triangle in its way, or too near its new place, held it back
    Blocked = 1,
    /// it stays: it has no triangle, its triangles have no area, or no direction leaves all
    /// of them on the asked side
    Pinned = 2,
}

/// The envelope's program: vertex `id`'s largest safe offset up to `distance` along its normal
/// (outwards for `side` +1, inwards for -1), and where that takes it.
///
/// 1. The direction: the sum of the vertex's triangles' area-weighted normals, normalised and
///    turned to the side. The vertex stays where the sum is zero or where a triangle of its own
///    (one with area) does not face the direction (the move would fold it).
/// 2. The cast: the segment from the vertex [`CAST`] times the distance along the direction;
///    the offset is at most a third of the way to the first triangle it crosses that is not
///    the vertex's own (a triangle with a corner at the vertex's position is its own).
/// 3. The clearance: no triangle but its own may come nearer the new place than half the
///    offset; where one does, the offset halves, up to [`HALVINGS`] times, then the vertex stays.
///
/// The offset is rounded down to a float; the position is the vertex plus the direction times
/// it, in double precision, rounded to float once.
pub struct SafeOffset<'a> {
    pub positions: &'a [Vec3],
    pub indices: &'a [u32],
    pub faces: &'a VertexFaces,
    pub bvh: &'a Bvh,
    /// +1: outwards (along the normals); -1: inwards
    pub side: f64,
    /// the distance asked for, in the mesh's units
    pub distance: f64,
}

/// The least float above finite `f`.
fn float_after(f: f32) -> f32 {
    if f == 0.0 {
        f32::from_bits(1)
    } else if f > 0.0 {
        f32::from_bits(f.to_bits() + 1)
    } else {
        f32::from_bits(f.to_bits() - 1)
    }
}

/// `x` rounded to a float towards minus infinity.
pub fn f32_down(x: f64) -> f32 {
    let f = x as f32;
    if f as f64 > x {
        -float_after(-f)
    } else {
        f
    }
}

/// `x` rounded to a float towards plus infinity.
fn f32_up(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x {
        float_after(f)
    } else {
        f
    }
}

/// The float box around points `a` and `b` widened by `r`, rounded outwards.
fn box_around(a: DVec3, b: DVec3, r: f64) -> Aabb {
    let (lo, hi) = (a.min(b), a.max(b));
    [
        [f32_down(lo.x - r), f32_down(lo.y - r), f32_down(lo.z - r)],
        [f32_up(hi.x + r), f32_up(hi.y + r), f32_up(hi.z + r)],
    ]
}

impl SafeOffset<'_> {
    fn corner(&self, t: u32, k: usize) -> u32 {
        self.indices[3 * t as usize + k]
    }

    fn tri(&self, t: u32) -> Tri {
        [0, 1, 2].map(|k| self.positions[self.corner(t, k) as usize].as_dvec3())
    }

    /// Whether triangle `t` is vertex `v`'s own: a corner of it is `v` or lies where `v` does.
    fn own(&self, t: u32, v: u32) -> bool {
        let p = self.positions[v as usize];
        (0..3).any(|k| {
            let c = self.corner(t, k);
            c == v || self.positions[c as usize] == p
        })
    }

    /// The direction vertex `v` moves along (unit, turned to the side), or `None` where it
    /// stays.
    pub fn direction(&self, v: u32) -> Option<DVec3> {
        let corners = self.faces.corners_of(v as usize);
        let mut n = DVec3::ZERO;
        for &c in corners {
            n += normal(&self.tri(c / 3));
        }
        let len2 = n.x * n.x + n.y * n.y + n.z * n.z;
        if len2 == 0.0 {
            return None;
        }
        let dir = n * (self.side / len2.sqrt());
        for &c in corners {
            let nt = normal(&self.tri(c / 3)) * self.side;
            if nt != DVec3::ZERO && dir.x * nt.x + dir.y * nt.y + dir.z * nt.z <= 0.0 {
                return None;
            }
        }
        Some(dir)
    }

    /// The record of a vertex moved `offset` along `dir` (its limit `limit`).
    pub fn record(&self, v: u32, dir: DVec3, offset: f32, limit: Limit) -> Record {
        let p = self.positions[v as usize].as_dvec3() + dir * offset as f64;
        [
            p.x as f32,
            p.y as f32,
            p.z as f32,
            offset,
            dir.x as f32,
            dir.y as f32,
            dir.z as f32,
            limit as u8 as f32,
        ]
    }

    /// The record of vertex `v` where it stays.
    pub fn pinned(&self, v: u32) -> Record {
        let p = self.positions[v as usize];
        [
            p.x,
            p.y,
            p.z,
            0.0,
            0.0,
            0.0,
            0.0,
            Limit::Pinned as u8 as f32,
        ]
    }
}

impl Program for SafeOffset<'_> {
    type Out = Record;

    fn run(&self, id: u32) -> Record {
        let Some(dir) = self.direction(id) else {
            return self.pinned(id);
        };
        let v0 = self.positions[id as usize].as_dvec3();
        // the cast
        let reach = self.distance * CAST;
        let q = v0 + dir * reach;
        let mut hit = reach;
        self.bvh.visit(&box_around(v0, q, 0.0), |t| {
            if self.own(t, id) {
                return;
            }
            let tri = self.tri(t);
            if let Some(x) = crossing(v0, q, &tri, normal(&tri)) {
                let d = x - v0;
                hit = hit.min((d.x * d.x + d.y * d.y + d.z * d.z).sqrt());
            }
        });
        let mut offset = if hit < reach {
            self.distance.min(hit / CAST)
        } else {
            self.distance
        };
        let mut limit = if offset < self.distance {
            Limit::Blocked
        } else {
            Limit::Full
        };
        // the clearance
        for _ in 0..=HALVINGS {
            let p = v0 + dir * offset;
            let r = offset * 0.5;
            let r2 = r * r;
            let mut clear = true;
            self.bvh.visit(&box_around(p, p, r), |t| {
                if clear && !self.own(t, id) && point_dist2(p, &self.tri(t)) < r2 {
                    clear = false;
                }
            });
            if clear {
                return self.record(id, dir, f32_down(offset), limit);
            }
            offset *= 0.5;
            limit = Limit::Blocked;
        }
        self.pinned(id)
    }
}

/// The reference: every vertex's record, each vertex run once (in parallel), no strategy.
pub fn reference(program: &SafeOffset) -> Vec<Record> {
    use rayon::prelude::*;
    (0..program.positions.len() as u32)
        .into_par_iter()
        .map(|v| program.run(v))
        .collect()
}
