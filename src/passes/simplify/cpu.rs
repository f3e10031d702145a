//! The simplification stage on the CPU: greedy half-edge collapses in the order of their
//! quadric error, each kept only when the surface stays inside the ε-envelope of the input and
//! the input stays inside the ε-envelope of the surface ([`super::envelope::cover`]).
//!
//! The state is an indexed triangle list that only ever loses triangles and has corners
//! renamed: collapsing vertex u into its neighbour v deletes the two triangles of the edge and
//! renames u to v in the others (u's fan becomes v's). No vertex moves, so every attribute of the
//! surviving vertices (texture coordinates, colours, tangents, normals) stays as it was.
//!
//! Two certificates are kept:
//!
//! - **the surface within ε of the input**: each triangle a collapse makes is tested against the
//!   input's triangles near it (found in the input's f12-BVH, so the set is complete and a miss
//!   is a refutation);
//! - **the input within ε of the surface**: every input triangle has a certificate, a list of
//!   surface triangles that cover its pieces, and each of those triangles lists it ("watches"
//!   it). A collapse changes only u's fan; the input triangles its triangles watch are tested
//!   again against the fan as it will be and the triangles around it, and the collapse is kept
//!   only when every one of them is covered again. Certificates are versioned, so an entry left
//!   in a list by an older certificate is recognised and skipped.
//!
//! Each certificate holds exactly (but for double-precision rounding), so the result is within ε
//! of the input in both directions: the two-sided Hausdorff distance is at most ε.

use super::envelope::{cover, widened_box, Cover};
use super::Rejections;
use crate::distance::bvh::Bvh;
use crate::distance::triangle::{box_lower2, Aabb, Tri};
use glam::DVec3;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use rxpipe_core::mesh::Mesh;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The least cosine between a triangle's normal before and after a collapse (about 78 degrees):
/// a collapse that turns a triangle further, or folds it over, is refused.
pub const MIN_TURN_COS: f64 = 0.2;

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// collapses kept
    pub collapses: u64,
    /// vertices that may not be removed (on a border or a seam, at a non-manifold edge or
    /// vertex, in a degenerate triangle)
    pub fixed: u64,
    /// collapses refused, by reason
    pub rejected: Rejections,
}

/// A plane quadric (Garland and Heckbert): the symmetric 4x4 matrix's ten entries, so that the
/// sum of squared distances to its planes at p is `value(p)`.
#[derive(Debug, Clone, Copy, Default)]
struct Quadric([f64; 10]);

impl Quadric {
    /// The plane through `t`, weighted by its area.
    fn of(t: &Tri) -> Quadric {
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        let len = n.length();
        if len == 0.0 {
            return Quadric::default();
        }
        let w = 0.5 * len;
        let u = n / len;
        let d = -u.dot(t[0]);
        let (a, b, c) = (u.x, u.y, u.z);
        Quadric(
            [
                a * a,
                a * b,
                a * c,
                a * d,
                b * b,
                b * c,
                b * d,
                c * c,
                c * d,
                d * d,
            ]
            .map(|x| x * w),
        )
    }

    fn add(&mut self, o: &Quadric) {
        for (x, y) in self.0.iter_mut().zip(o.0) {
            *x += y;
        }
    }

    fn value(&self, p: DVec3) -> f64 {
        let q = &self.0;
        let (x, y, z) = (p.x, p.y, p.z);
        (q[0] * x * x + q[4] * y * y + q[7] * z * z + q[9])
            + 2.0 * (q[1] * x * y + q[2] * x * z + q[5] * y * z)
            + 2.0 * (q[3] * x + q[6] * y + q[8] * z)
    }
}

/// A candidate collapse of `from` into `to`, in the order tried: least error first, then the
/// shorter edge (flat regions have no error), then by vertex.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    error: f64,
    length2: f64,
    from: u32,
    to: u32,
    /// `from`'s version when this was pushed: stale once its fan changed
    version: u32,
    /// its place among `from`'s candidates, least error first
    rank: u32,
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, o: &Self) -> Ordering {
        // reversed: the heap's greatest is the least error
        o.error
            .total_cmp(&self.error)
            .then(o.length2.total_cmp(&self.length2))
            .then(o.from.cmp(&self.from))
            .then(o.to.cmp(&self.to))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// What the collapses of the current round changed: the round a vertex's triangles or an input
/// triangle's certificate last changed in.
struct Rounds {
    dirty_vertex: Vec<u32>,
    dirty_input: Vec<u32>,
    round: u32,
}

impl Rounds {
    fn vertex_changed(&self, v: u32) -> bool {
        self.dirty_vertex[v as usize] == self.round
    }

    fn input_changed(&self, i: u32) -> bool {
        self.dirty_input[i as usize] == self.round
    }
}

/// A collapse that passed every test: what applying it changes.
struct Plan {
    u: u32,
    v: u32,
    /// the two triangles of the edge, which go
    shared: Vec<u32>,
    /// u's other triangles with u renamed v
    renamed: Vec<(u32, [u32; 3])>,
    /// the triangles the reverse test covered the input with (the renamed ones among them)
    around: Vec<u32>,
    /// each input triangle tested again, with the triangles of `around` (by place) it used
    certificates: Vec<(u32, Vec<u32>)>,
}

/// A tested collapse and what its tests read: u and its neighbours (the tests read only
/// triangles with one of them as a corner) and the input triangles whose certificates it
/// tested again.
struct Attempt {
    reads: Vec<u32>,
    watched: Vec<u32>,
    outcome: Result<Plan, Refusal>,
}

struct State<'a> {
    pos: Vec<DVec3>,
    faces: Vec<[u32; 3]>,
    alive: Vec<bool>,
    /// each vertex's live triangles
    fans: Vec<Vec<u32>>,
    fixed: Vec<bool>,
    quadrics: Vec<Quadric>,
    version: Vec<u32>,
    /// the input's triangles, in double precision, and its tree
    input: Vec<Tri>,
    tree: &'a Bvh,
    /// for each surface triangle, the input triangles whose certificates use it (with the
    /// certificate's version)
    watch: Vec<Vec<(u32, u32)>>,
    /// each input triangle's certificate version
    stamp: Vec<u32>,
    eps: f64,
    eps2: f64,
    live: usize,
}

/// Simplifies `mesh` (checked by the caller: valid, with triangles) within `eps` (absolute, in
/// the mesh's units) until it has at most `target` triangles or no collapse is allowed. Returns
/// the simplified mesh, its unused vertices removed (the kept ones in their order), and what was
/// done.
pub fn run(mesh: &Mesh, eps: f64, target: usize) -> (Mesh, Outcome) {
    run_with(mesh, eps, target, 2 * rayon::current_num_threads())
}

/// [`run`] testing up to `width` candidate collapses at once (1: one at a time). The result is
/// the same for every width; a wider one keeps more threads busy.
pub fn run_with(mesh: &Mesh, eps: f64, target: usize, width: usize) -> (Mesh, Outcome) {
    let width = width.max(1);
    let tree = Bvh::of_checked(mesh);
    let faces: Vec<[u32; 3]> = mesh
        .indices
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let pos: Vec<DVec3> = mesh.positions.iter().map(|p| p.as_dvec3()).collect();
    let input: Vec<Tri> = faces.iter().map(|f| f.map(|i| pos[i as usize])).collect();
    let n = pos.len();
    let mut fans: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (t, f) in faces.iter().enumerate() {
        for &v in f {
            if !fans[v as usize].contains(&(t as u32)) {
                fans[v as usize].push(t as u32);
            }
        }
    }
    let fixed = fixed_vertices(&faces, &fans);
    let mut quadrics = vec![Quadric::default(); n];
    for (f, t) in faces.iter().zip(&input) {
        let q = Quadric::of(t);
        for &v in f {
            quadrics[v as usize].add(&q);
        }
    }
    let mut s = State {
        pos,
        alive: vec![true; faces.len()],
        watch: (0..faces.len() as u32).map(|t| vec![(t, 0)]).collect(),
        stamp: vec![0; faces.len()],
        live: faces.len(),
        faces,
        fans,
        fixed,
        quadrics,
        version: vec![0; n],
        input,
        tree: &tree,
        eps,
        eps2: eps * eps,
    };
    let mut out = Outcome {
        fixed: s.fixed.iter().filter(|&&f| f).count() as u64,
        ..Default::default()
    };
    let mut heap = BinaryHeap::new();
    for u in 0..n as u32 {
        s.push_candidate(u, 0, &mut heap);
    }
    // Rounds: the best candidates, up to `width` of them, are tested at once on the state as
    // it is, then taken in the heap's order exactly as the one-at-a-time loop would take them:
    // a candidate pushed during the round that comes first is tested and taken on the spot, and
    // a candidate whose tests read what an earlier collapse of the round changed (a triangle
    // at u or at one of its neighbours, or the certificate of an input triangle it tested
    // again) is tested again. So every width gives the same result. The width halves when most
    // of a round's tests were made again and doubles when none was.
    let mut rounds = Rounds {
        dirty_vertex: vec![0; n],
        dirty_input: vec![0; s.input.len()],
        round: 0,
    };
    let mut w = width;
    'rounds: while s.live > target {
        rounds.round += 1;
        let mut batch = Vec::with_capacity(w);
        while batch.len() < w {
            let Some(c) = heap.pop() else { break };
            if c.version == s.version[c.from as usize] {
                batch.push(c);
            }
        }
        if batch.is_empty() {
            break;
        }
        let attempts: Vec<Attempt> = if batch.len() == 1 {
            vec![s.plan(batch[0].from, batch[0].to)]
        } else {
            batch.par_iter().map(|c| s.plan(c.from, c.to)).collect()
        };
        let mut kept = 0;
        for (c, a) in batch.iter().zip(attempts) {
            // candidates pushed in this round that come first
            while heap.peek().is_some_and(|h| h > c) {
                let h = heap.pop().expect("peeked");
                if h.version == s.version[h.from as usize] {
                    let a = s.plan(h.from, h.to);
                    s.take(&h, a.outcome, &mut heap, &mut out, &mut rounds);
                    if s.live <= target {
                        break 'rounds;
                    }
                }
            }
            // (made stale by an earlier collapse: skipped, as it would have been)
            if c.version != s.version[c.from as usize] {
                continue;
            }
            let read_changed = a.reads.iter().any(|&x| rounds.vertex_changed(x))
                || a.watched.iter().any(|&i| rounds.input_changed(i));
            let outcome = if read_changed {
                s.plan(c.from, c.to).outcome
            } else {
                kept += 1;
                a.outcome
            };
            s.take(c, outcome, &mut heap, &mut out, &mut rounds);
            if s.live <= target {
                break 'rounds;
            }
        }
        w = if 2 * kept < batch.len() {
            (w / 2).max(1)
        } else if kept == batch.len() {
            (2 * w).min(width)
        } else {
            w
        };
    }
    (s.finish(mesh), out)
}

/// Why a collapse was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// it would change the topology (the link condition, a duplicate or a vertex left with
    /// fewer than three edges) or the edge is not an ordinary interior one
    Topology,
    /// a triangle would fold over, turn too far or lose its area
    Fold,
    /// a new triangle would leave the envelope of the input
    Outside,
    /// part of the input would no longer be within ε of the surface
    Uncovered,
}

impl Rejections {
    fn count(&mut self, r: Refusal) {
        match r {
            Refusal::Topology => self.topology += 1,
            Refusal::Fold => self.fold += 1,
            Refusal::Outside => self.outside += 1,
            Refusal::Uncovered => self.uncovered += 1,
        }
    }
}

/// Vertices no collapse may remove: on an edge with other than two triangles (a border, a
/// seam the re-indexing kept, a non-manifold edge) or two triangles that run it the same way
/// (a flipped neighbour), in a triangle that names a vertex twice, or where the triangles
/// around the vertex are not one fan (two surfaces meeting at a point).
fn fixed_vertices(faces: &[[u32; 3]], fans: &[Vec<u32>]) -> Vec<bool> {
    // each edge: (triangles, sum of directions: +1 from the smaller vertex, -1 back)
    let mut edges: FxHashMap<(u32, u32), (u32, i32)> = FxHashMap::default();
    let mut fixed = vec![false; fans.len()];
    for f in faces {
        if f[0] == f[1] || f[1] == f[2] || f[2] == f[0] {
            for &v in f {
                fixed[v as usize] = true;
            }
            continue;
        }
        for k in 0..3 {
            let (a, b) = (f[k], f[(k + 1) % 3]);
            let e = edges.entry((a.min(b), a.max(b))).or_default();
            e.0 += 1;
            e.1 += if a < b { 1 } else { -1 };
        }
    }
    for (&(a, b), &(n, dir)) in &edges {
        if n != 2 || dir != 0 {
            fixed[a as usize] = true;
            fixed[b as usize] = true;
        }
    }
    for (v, fan) in fans.iter().enumerate() {
        if !fixed[v] && !one_fan(v as u32, fan, faces) {
            fixed[v] = true;
        }
    }
    fixed
}

/// Whether the triangles `fan` around `v` (each of whose edges at `v` has two triangles) are
/// connected through those edges.
fn one_fan(v: u32, fan: &[u32], faces: &[[u32; 3]]) -> bool {
    if fan.is_empty() {
        return true;
    }
    let mut reached = vec![false; fan.len()];
    let mut stack = vec![0usize];
    reached[0] = true;
    while let Some(i) = stack.pop() {
        let f = faces[fan[i] as usize];
        for &w in f.iter().filter(|&&w| w != v) {
            for (j, &g) in fan.iter().enumerate() {
                if !reached[j] && faces[g as usize].contains(&w) {
                    reached[j] = true;
                    stack.push(j);
                }
            }
        }
    }
    reached.iter().all(|&r| r)
}

impl State<'_> {
    fn corners(&self, f: [u32; 3]) -> Tri {
        f.map(|i| self.pos[i as usize])
    }

    /// The vertices joined to `v` by an edge of a live triangle.
    fn neighbours(&self, v: u32) -> Vec<u32> {
        let mut n = Vec::with_capacity(8);
        for &t in &self.fans[v as usize] {
            for w in self.faces[t as usize] {
                if w != v && !n.contains(&w) {
                    n.push(w);
                }
            }
        }
        n
    }

    /// Pushes `u`'s candidate of rank `rank` (its collapses into each neighbour, least error
    /// first), if it has that many: the heap holds one candidate per vertex, the best not yet
    /// tried since its fan last changed, so that it pops the least error of all.
    fn push_candidate(&self, u: u32, rank: u32, heap: &mut BinaryHeap<Candidate>) {
        if self.fixed[u as usize] || self.fans[u as usize].is_empty() {
            return;
        }
        let (pu, qu) = (self.pos[u as usize], self.quadrics[u as usize]);
        let mut all: Vec<Candidate> = self
            .neighbours(u)
            .into_iter()
            .map(|v| {
                let pv = self.pos[v as usize];
                let mut q = qu;
                q.add(&self.quadrics[v as usize]);
                Candidate {
                    error: q.value(pv).max(0.0),
                    length2: (pv - pu).length_squared(),
                    from: u,
                    to: v,
                    version: self.version[u as usize],
                    rank,
                }
            })
            .collect();
        // the heap's order is reversed: the greatest candidate is the least error
        all.sort_unstable_by(|a, b| b.cmp(a));
        if let Some(&c) = all.get(rank as usize) {
            heap.push(c);
        }
    }

    /// The input triangles within ε of `t` (a superset: those whose boxes come that near).
    fn input_near(&self, t: &Tri) -> Vec<Tri> {
        let q: Aabb = widened_box(t, self.eps);
        let tree = self.tree;
        let mut found = Vec::new();
        let mut stack = vec![0usize];
        let first_leaf = (1usize << tree.depth) - 1;
        while let Some(node) = stack.pop() {
            if box_lower2(&q, &tree.boxes[node]) > 0.0 {
                continue;
            }
            if node >= first_leaf {
                found.extend(tree.leaf(node).iter().map(|&i| self.input[i as usize]));
            } else {
                stack.extend([2 * node + 1, 2 * node + 2]);
            }
        }
        found
    }

    /// Tests the collapse of `u` into `v` on the state as it is, changing nothing: the plan
    /// of the collapse if every test passes, and what the tests read.
    fn plan(&self, u: u32, v: u32) -> Attempt {
        let mut reads = self.neighbours(u);
        let mut watched = Vec::new();
        let outcome = self.tests(u, v, &reads, &mut watched);
        reads.push(u);
        Attempt {
            reads,
            watched,
            outcome,
        }
    }

    /// The tests of [`State::plan`], given u's neighbours `nu`; `watched` gets the input
    /// triangles of the reverse test.
    fn tests(&self, u: u32, v: u32, nu: &[u32], watched: &mut Vec<u32>) -> Result<Plan, Refusal> {
        let fan_u = &self.fans[u as usize];
        let (shared, moved): (Vec<u32>, Vec<u32>) = fan_u
            .iter()
            .partition(|&&t| self.faces[t as usize].contains(&v));
        if shared.len() != 2 {
            return Err(Refusal::Topology);
        }
        // the link condition: u and v share exactly the two opposite corners of their edge
        let opposite: Vec<u32> = shared
            .iter()
            .map(|&t| {
                let f = self.faces[t as usize];
                *f.iter()
                    .find(|&&w| w != u && w != v)
                    .expect("three corners")
            })
            .collect();
        if opposite[0] == opposite[1] {
            return Err(Refusal::Topology);
        }
        let nv = self.neighbours(v);
        let common = nu.iter().filter(|w| nv.contains(w)).count();
        if common != 2 {
            return Err(Refusal::Topology);
        }
        // the opposite corners each lose an edge; three is the least a closed surface's vertex has
        if opposite.iter().any(|&w| self.neighbours(w).len() < 4) {
            return Err(Refusal::Topology);
        }
        // the triangles as they would be, u renamed v
        let renamed: Vec<(u32, [u32; 3])> = moved
            .iter()
            .map(|&t| {
                (
                    t,
                    self.faces[t as usize].map(|w| if w == u { v } else { w }),
                )
            })
            .collect();
        for &(t, f) in &renamed {
            // a triangle v already has with the same corners
            let mut key = f;
            key.sort_unstable();
            let dup = self.fans[v as usize].iter().any(|&g| {
                let mut k = self.faces[g as usize];
                k.sort_unstable();
                k == key
            });
            if dup {
                return Err(Refusal::Topology);
            }
            let (before, after) = (self.corners(self.faces[t as usize]), self.corners(f));
            let n0 = (before[1] - before[0]).cross(before[2] - before[0]);
            let n1 = (after[1] - after[0]).cross(after[2] - after[0]);
            let scale = (after[1] - after[0])
                .length_squared()
                .max((after[2] - after[0]).length_squared());
            if n1.length_squared() <= 1e-24 * scale * scale {
                return Err(Refusal::Fold);
            }
            if n0.length_squared() > 0.0 && n0.dot(n1) < MIN_TURN_COS * n0.length() * n1.length() {
                return Err(Refusal::Fold);
            }
        }
        // the new triangles within ε of the input
        // (the tests are independent: they run in parallel, with the same answers)
        let inside = renamed.par_iter().all(|&(_, f)| {
            let t = self.corners(f);
            matches!(
                cover(&t, &self.input_near(&t), self.eps2, true),
                Cover::Inside(_)
            )
        });
        if !inside {
            return Err(Refusal::Outside);
        }
        // the input that u's triangles covered, within ε of the triangles after the collapse:
        // the new fan and the triangles around it
        let mut around: Vec<u32> = renamed.iter().map(|&(t, _)| t).collect();
        for &w in nu {
            around.extend(
                self.fans[w as usize]
                    .iter()
                    .filter(|&&g| !shared.contains(&g)),
            );
        }
        around.sort_unstable();
        around.dedup();
        let shapes: Vec<Tri> = around
            .iter()
            .map(|&g| match renamed.iter().find(|&&(t, _)| t == g) {
                Some(&(_, f)) => self.corners(f),
                None => self.corners(self.faces[g as usize]),
            })
            .collect();
        for &t in fan_u {
            watched.extend(
                self.watch[t as usize]
                    .iter()
                    .filter(|&&(i, s)| self.stamp[i as usize] == s)
                    .map(|&(i, _)| i),
            );
        }
        watched.sort_unstable();
        watched.dedup();
        let certificates: Option<Vec<(u32, Vec<u32>)>> = watched
            .par_iter()
            .map(
                |&i| match cover(&self.input[i as usize], &shapes, self.eps2, false) {
                    Cover::Inside(used) => Some((i, used)),
                    _ => None,
                },
            )
            .collect();
        let certificates = certificates.ok_or(Refusal::Uncovered)?;
        Ok(Plan {
            u,
            v,
            shared,
            renamed,
            around,
            certificates,
        })
    }

    /// Takes candidate `c` with its tests' outcome: carries the collapse out (marking what it
    /// changes in `rounds`, pushing the changed vertices' candidates) or counts the refusal (and
    /// pushes the vertex's next candidate).
    fn take(
        &mut self,
        c: &Candidate,
        outcome: Result<Plan, Refusal>,
        heap: &mut BinaryHeap<Candidate>,
        out: &mut Outcome,
        rounds: &mut Rounds,
    ) {
        match outcome {
            Ok(plan) => {
                for &t in plan.shared.iter().chain(&plan.around) {
                    for x in self.faces[t as usize] {
                        rounds.dirty_vertex[x as usize] = rounds.round;
                    }
                }
                rounds.dirty_vertex[plan.u as usize] = rounds.round;
                for (i, _) in &plan.certificates {
                    rounds.dirty_input[*i as usize] = rounds.round;
                }
                out.collapses += 1;
                for x in self.apply(plan) {
                    self.version[x as usize] += 1;
                    self.push_candidate(x, 0, heap);
                }
            }
            Err(reason) => {
                out.rejected.count(reason);
                // the vertex's next candidate takes its place
                self.push_candidate(c.from, c.rank + 1, heap);
            }
        }
    }

    /// Carries out a planned collapse; returns the vertices whose candidates changed (v and its
    /// new neighbours).
    fn apply(&mut self, p: Plan) -> Vec<u32> {
        let Plan {
            u,
            v,
            shared,
            renamed,
            around,
            certificates,
        } = p;
        for &t in &shared {
            self.alive[t as usize] = false;
            self.live -= 1;
            for w in self.faces[t as usize] {
                self.fans[w as usize].retain(|&g| g != t);
            }
            self.watch[t as usize] = Vec::new();
        }
        for &(t, f) in &renamed {
            self.faces[t as usize] = f;
            self.fans[v as usize].push(t);
        }
        self.fans[u as usize].clear();
        let qu = self.quadrics[u as usize];
        self.quadrics[v as usize].add(&qu);
        for (i, used) in certificates {
            self.stamp[i as usize] += 1;
            let s = self.stamp[i as usize];
            for j in used {
                self.watch[around[j as usize] as usize].push((i, s));
            }
        }
        // drop the entries the new certificates made stale from the fan's lists
        for &(t, _) in &renamed {
            let stamp = &self.stamp;
            self.watch[t as usize].retain(|&(i, s)| stamp[i as usize] == s);
        }
        let mut ring = self.neighbours(v);
        ring.push(v);
        ring
    }

    /// The mesh as it stands: live triangles in their order, the vertices they use in theirs,
    /// each with its attributes (an attribute that does not have one value per vertex is
    /// dropped).
    fn finish(self, mesh: &Mesh) -> Mesh {
        let n = self.pos.len();
        let mut used = vec![false; n];
        for (f, _) in self.faces.iter().zip(&self.alive).filter(|(_, &a)| a) {
            for &v in f {
                used[v as usize] = true;
            }
        }
        let order: Vec<u32> = (0..n as u32).filter(|&v| used[v as usize]).collect();
        let mut new_of = vec![u32::MAX; n];
        for (i, &v) in order.iter().enumerate() {
            new_of[v as usize] = i as u32;
        }
        let indices = self
            .faces
            .iter()
            .zip(&self.alive)
            .filter(|(_, &a)| a)
            .flat_map(|(f, _)| f.map(|v| new_of[v as usize]))
            .collect();
        fn pick<T: Copy>(a: Option<&Vec<T>>, n: usize, order: &[u32]) -> Option<Vec<T>> {
            a.filter(|a| a.len() == n)
                .map(|a| order.iter().map(|&v| a[v as usize]).collect())
        }
        Mesh {
            name: mesh.name.clone(),
            positions: order.iter().map(|&v| mesh.positions[v as usize]).collect(),
            normals: pick(mesh.normals.as_ref(), n, &order),
            uvs: pick(mesh.uvs.as_ref(), n, &order),
            uvs1: pick(mesh.uvs1.as_ref(), n, &order),
            indices,
            base_color: mesh.base_color,
            colors: pick(mesh.colors.as_ref(), n, &order),
            tangents: pick(mesh.tangents.as_ref(), n, &order),
            material: mesh.material.clone(),
        }
    }
}
