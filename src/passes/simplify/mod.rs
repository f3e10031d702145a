//! The simplification stage: fewer triangles with a guaranteed bound on the error, after
//! simplification envelopes (Cohen, Varshney, Manocha, Turk, Weber, Agarwal, Brooks and Wright,
//! "Simplification Envelopes", SIGGRAPH 1996).
//!
//! Cohen et al. build two offset surfaces at distance ε on either side of the input, the
//! envelopes, and remove vertices only where the new triangles stay between them, so that every
//! point of the result is within ε of the input and every point of the input within ε of the
//! result. This stage keeps the same promise with one test instead of offset surfaces: the
//! envelope is the set of points within ε of a surface, and whether a triangle lies inside it is
//! decided exactly ([`envelope`]: the distance to a triangle is convex, so a piece of a triangle
//! whose three corners are within ε of one triangle lies within ε of it).
//!
//! The steps ([`cpu`]): half-edge collapses (a vertex merged into a neighbour: Cohen et al.'s
//! vertex removal with the hole filled as a fan), tried in the order of Garland and Heckbert's
//! quadric error, each kept only when
//!
//! - the topology stays as it was (the link condition; borders, seams, non-manifold and
//!   inconsistently oriented parts are not touched: their vertices are fixed),
//! - no triangle folds over or turns by more than about 78 degrees ([`cpu::MIN_TURN_COS`]),
//! - every new triangle lies within ε of the input (found near it in the input's f12-BVH), and
//! - every part of the input that the changed triangles covered is still within ε of the
//!   surface (a certificate per input triangle, kept up to date).
//!
//! So the two-sided Hausdorff distance between input and result is at most ε (up to
//! double-precision rounding), whatever the order or the target. No vertex moves: the kept
//! vertices keep their attributes, normals included (a mesh with none gets them from the
//! normals stage after this one; on a coarse result of a model with sharp edges,
//! `normals:angle` keeps those edges), and the result's vertices are a subset of the input's.
//!
//! The envelope bounds positions only: over a new fan the texture coordinates are interpolated
//! between kept vertices, so a texture may shift there by up to what it spans across the removed
//! vertex's neighbourhood (uv seams, being borders of the re-indexed mesh, stay where they are).
//!
//! ε is given relative to the object's bounding-box diagonal, as the paper gives it. The stage
//! runs on the CPU; with the CUDA backend the mesh moves to the host for it and the report says
//! so.
//!
//! ```
//! use rxpipe::passes::{self, Stage};
//! let Stage::Mesh(p) = passes::parse("simplify:eps=0.01")? else { unreachable!() };
//! assert_eq!(p.name(), "simplify");
//! assert!(passes::parse("simplify:eps=-1").is_err());
//! # Ok::<(), rxpipe::passes::PassError>(())
//! ```

pub mod cpu;
pub mod envelope;

use super::WorkingMesh;
use super::{ArgInfo, Args, Derived, MeshPass, PassContext, PassError, StageInfo, StageKind};
use rxpipe_core::execution::BackendKind;

/// The simplification stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simplify {
    /// the envelope's width: the most any point of the result may be from the input and any
    /// point of the input from the result, as a fraction of the object's bounding-box diagonal
    pub eps: f64,
    /// stop once the object has at most this fraction of its triangles (0: go on while any
    /// collapse is allowed)
    pub target: f64,
}

impl Default for Simplify {
    fn default() -> Self {
        Simplify {
            eps: 0.001,
            target: 0.0,
        }
    }
}

/// Collapses a run refused, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Rejections {
    /// it would have changed the topology, or the edge was not an ordinary interior one
    pub topology: u64,
    /// a triangle would have folded over, turned too far or lost its area
    pub fold: u64,
    /// a new triangle would have left the envelope of the input
    pub outside: u64,
    /// part of the input would no longer have been within ε of the surface
    pub uncovered: u64,
}

pub(crate) const INFO: StageInfo = StageInfo {
    name: "simplify",
    kind: StageKind::Mesh,
    about: "simplification within an envelope (Cohen et al. 1996): quadric-ordered edge collapses, each kept only if the result and the input stay within eps of each other",
    args: &[
        ArgInfo {
            name: "eps",
            values: "0..=1 (exclusive of 0)",
            default: "0.001",
            about: "the envelope's width as a fraction of the object's bounding-box diagonal: the greatest distance allowed between input and result, either way",
        },
        ArgInfo {
            name: "target",
            values: "0..=1",
            default: "0",
            about: "stop at this fraction of the object's triangles (0: as few as the envelope allows)",
        },
    ],
    backends: &[BackendKind::Cpu],
    default: "only when listed",
};

impl Simplify {
    pub(crate) fn from_args(a: &Args) -> Result<Simplify, PassError> {
        let d = Simplify::default();
        let number = |key: &str, default: f64, ok: fn(f64) -> bool, expected: &str| match a.get(key)
        {
            None => Ok(default),
            Some(v) => {
                v.parse::<f64>()
                    .ok()
                    .filter(|&x| ok(x))
                    .ok_or_else(|| PassError::Argument {
                        stage: "simplify".into(),
                        arg: format!("{key}={v}"),
                        message: expected.into(),
                    })
            }
        };
        Ok(Simplify {
            eps: number(
                "eps",
                d.eps,
                |x| x > 0.0 && x <= 1.0,
                "expected a fraction of the diagonal above 0 and at most 1",
            )?,
            target: number(
                "target",
                d.target,
                |x| (0.0..=1.0).contains(&x),
                "expected a fraction of the triangles from 0 to 1",
            )?,
        })
    }
}

/// Bytes the CPU stage holds per input triangle, about (the input in double precision, its tree,
/// the working triangles, the certificates and the fans).
const BYTES_PER_TRIANGLE: u64 = 320;

impl MeshPass for Simplify {
    fn name(&self) -> &str {
        "simplify"
    }

    fn backends(&self) -> &'static [BackendKind] {
        INFO.backends
    }

    fn invalidates(&self) -> Derived {
        // not the normals: no vertex moves, and a kept vertex's normal is still the input's
        // surface normal there (authored hard edges are seams, whose vertices stay)
        Derived::ADJACENCY | Derived::BOUNDS
    }

    fn run(&self, mesh: &mut WorkingMesh, ctx: &mut PassContext) -> Result<String, PassError> {
        let object = ctx.object;
        let host = mesh.host().map_err(PassError::gpu("simplify"))?;
        let failed = |message: String| PassError::Failed {
            stage: "simplify".into(),
            object,
            mesh: host.name.clone(),
            message,
        };
        let (v0, f0) = (host.vertex_count(), host.triangle_count());
        if f0 == 0 {
            return Ok("nothing to do (no triangles)".into());
        }
        host.validate().map_err(|e| failed(e.to_string()))?;
        rxpipe_core::limits::check_host(BYTES_PER_TRIANGLE * f0 as u64, || {
            format!("simplifying {f0} triangles")
        })
        .map_err(|e| failed(e.to_string()))?;
        let (lo, hi) = host
            .bounds()
            .expect("a valid mesh with triangles has positions");
        let eps = self.eps * (hi - lo).as_dvec3().length();
        if eps == 0.0 {
            return Ok("nothing to do (every vertex at one point)".into());
        }
        let target = (self.target * f0 as f64).ceil() as usize;
        let (simplified, out) = cpu::run(host, eps, target);
        *mesh.host_mut().map_err(PassError::gpu("simplify"))? = simplified;
        let r = out.rejected;
        Ok(format!(
            "{f0} -> {} triangles, {v0} -> {} vertices within {eps:.4e} ({} of the diagonal): \
             {} collapses; {} vertices fixed; refused: {} topology, {} fold, {} outside, {} \
             uncovered",
            mesh.triangle_count(),
            mesh.vertex_count(),
            self.eps,
            out.collapses,
            out.fixed,
            r.topology,
            r.fold,
            r.outside,
            r.uncovered
        ))
    }
}
