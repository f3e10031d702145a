//! The surface at a pixel as the material path reads it: the attributes of the draw's source
//! triangle interpolated perspective-correct at the pixel centre (one pixel, or eight in lanes),
//! with the texture coordinates' screen-space derivatives and the tangent frame.

use super::MaterialShader;
use crate::raster::{Draw, Tangents};
use glam::{Vec2, Vec3, Vec4};
use rxpipe_core::material::lanes::{Rgba, LANES, V2, V3, V4};
use rxpipe_core::material::wide::{Num, Wide, Xyz};

/// What the material path reads of one pixel of a source triangle.
pub(super) struct Surface {
    pub(super) world: Vec3,
    pub(super) normal: Vec3,
    /// each uv set's coordinates and their derivatives ([`TextureRef::uv_set`] indexes them;
    /// the second is the first's where the draw has one set)
    pub(super) uv: [Vec2; 2],
    pub(super) duv_dx: [Vec2; 2],
    pub(super) duv_dy: [Vec2; 2],
    pub(super) color: Rgba,
    /// the tangent and bitangent (unnormalised): the mesh's, or the triangle's from its uvs (zero
    /// when they are degenerate)
    pub(super) tangent: Vec3,
    pub(super) bitangent: Vec3,
}

/// What the material path reads of a source triangle whatever the pixel: its edge planes in
/// homogeneous 2D and its corners' attributes.
pub(in crate::raster) struct Corners<'a> {
    /// barycentric k at a point p of the screen is p . edges[k] over their sum
    pub(super) edges: [Vec3; 3],
    pub(super) uv: [Vec2; 3],
    /// the corners' second uvs where the draw has them
    pub(super) uv1: Option<[Vec2; 3]>,
    pub(super) world: [Vec3; 3],
    pub(super) normal: [Vec3; 3],
    /// the corners' vertex colours where the draw has them
    pub(super) colors: Option<[Vec4; 3]>,
    /// the corners' tangents where a normal map wants the mesh's
    pub(super) tangents: Option<([Vec4; 3], &'a Tangents<'a>)>,
    /// the triangle's tangent frame from the normal map's uvs where it wants one and the mesh
    /// has no tangents, else zero
    pub(super) frame: (Vec3, Vec3),
}

impl<'a> Corners<'a> {
    /// Source triangle `tri` of `d`, with what a normal map needs where `with_tangents`.
    #[inline(always)]
    pub(in crate::raster) fn of(d: &'a Draw, tri: u32, with_tangents: bool) -> Corners<'a> {
        let g = d.geometry;
        let idx = g.triangles[tri as usize];
        let v = idx.map(|i| &g.vertices[i as usize]);
        // edge planes in homogeneous 2D: barycentric k is p . (c_{k+1} x c_{k+2})
        let c = v.map(|v| Vec3::new(v.clip.x, v.clip.y, v.clip.w));
        let edges = [c[1].cross(c[2]), c[2].cross(c[0]), c[0].cross(c[1])];
        // a per-source-vertex attribute at each corner (`none` for a corner without one)
        let corners = |values: &[Vec4], none: Vec4| {
            idx.map(|i| {
                g.sources
                    .get(i as usize)
                    .and_then(|&s| values.get(s as usize))
                    .copied()
                    .unwrap_or(none)
            })
        };
        let uv = v.map(|v| v.uv);
        let uv1 = d.uvs1.map(|u1| {
            idx.map(|i| {
                g.sources
                    .get(i as usize)
                    .and_then(|&s| u1.get(s as usize))
                    .copied()
                    .unwrap_or_default()
            })
        });
        let world = v.map(|v| v.world);
        let tangents = d
            .tangents
            .as_ref()
            .filter(|_| with_tangents)
            .map(|t| (corners(t.values, Vec4::ZERO), t));
        // (the frame follows the uv set the normal map reads)
        let normal_set = d
            .material
            .and_then(|m| m.normal_texture.as_ref())
            .map_or(0, |t| t.uv_set);
        let frame_uv = match uv1 {
            Some(u1) if normal_set == 1 => u1,
            _ => uv,
        };
        Corners {
            edges,
            uv,
            uv1,
            world,
            normal: v.map(|v| v.normal),
            colors: d.colors.map(|c| corners(c, Vec4::ONE)),
            frame: if with_tangents {
                uv_frame(world, frame_uv)
            } else {
                (Vec3::ZERO, Vec3::ZERO)
            },
            tangents,
        }
    }
}

/// The barycentrics at the point `q` (one, or eight in lanes) of the triangle whose edge planes
/// are `e` ([`Corners`]); a third each where they do not sum to a usable number. (A function,
/// not a closure, so that it is inlined into the fragment stage's wide build.)
#[inline(always)]
pub(super) fn bary<T: Num>(e: &[Xyz<T>; 3], q: [T; 2]) -> Xyz<T> {
    let one = T::splat(1.0);
    let p = Xyz::new(q[0], q[1], one);
    let b = Xyz::new(p.dot(e[0]), p.dot(e[1]), p.dot(e[2]));
    let sum = b.x + b.y + b.z;
    // one division and three products (the GPU's rxm_bary)
    let ok = sum.abs().gt(T::splat(f32::MIN_POSITIVE)) & sum.is_finite();
    Xyz::select(ok, b.scale(one / sum), Xyz::splat(Vec3::splat(1.0 / 3.0)))
}

/// [`Surface`] of one pixel (`f32`) or eight ([`Wide`]).
pub(super) struct SurfaceOf<T> {
    pub(super) world: Xyz<T>,
    pub(super) normal: Xyz<T>,
    /// by uv set, as [`Surface`]'s
    pub(super) uv: [[T; 2]; 2],
    pub(super) duv_dx: [[T; 2]; 2],
    pub(super) duv_dy: [[T; 2]; 2],
    pub(super) color: [T; 4],
    pub(super) tangent: Xyz<T>,
    pub(super) bitangent: Xyz<T>,
}

/// A triangle's tangent and bitangent (unnormalised) from its corners' positions and uvs: the
/// directions of increasing u and v; zero when its uvs are degenerate.
#[inline(always)]
pub(super) fn uv_frame(p: [Vec3; 3], uv: [Vec2; 3]) -> (Vec3, Vec3) {
    let (dp1, dp2) = (p[1] - p[0], p[2] - p[0]);
    let (dt1, dt2) = (uv[1] - uv[0], uv[2] - uv[0]);
    let det = dt1.x * dt2.y - dt2.x * dt1.y;
    if det.abs() > 1e-20 {
        let r = 1.0 / det;
        (
            (dp1 * dt2.y - dp2 * dt1.y) * r,
            (dp2 * dt1.x - dp1 * dt2.x) * r,
        )
    } else {
        (Vec3::ZERO, Vec3::ZERO)
    }
}

/// The surfaces ([`MaterialShader::surface`]) of eight pixels, and the side each is seen from.
#[derive(Default)]
pub(in crate::raster) struct SurfaceLanes {
    pub(super) world: V3,
    pub(super) normal: V3,
    /// by uv set, as [`Surface`]'s
    pub(super) uv: [V2; 2],
    pub(super) duv_dx: [V2; 2],
    pub(super) duv_dy: [V2; 2],
    pub(super) color: V4,
    pub(super) tangent: V3,
    pub(super) bitangent: V3,
    pub(super) front: [bool; LANES],
}

impl SurfaceLanes {
    /// Every lane: the surfaces of the triangle of `c` (as for [`SurfaceLanes::set`]) at the
    /// pixels (px[i], py[i]), all seen from one side, worked out in lanes.
    #[inline(always)]
    pub(in crate::raster) fn set_all(
        &mut self,
        ms: &MaterialShader,
        c: &Corners,
        px: [u32; LANES],
        py: [u32; LANES],
        front: bool,
    ) {
        // (lane loops rather than `array::map`, which can stay out of line)
        let float = |v: [u32; LANES]| {
            let mut r = [0.0; LANES];
            for i in 0..LANES {
                r[i] = v[i] as f32;
            }
            Wide(r)
        };
        let f = ms.surface_of(c, ms.ndc(float(px), float(py)));
        let v3 = |v: Xyz<Wide>| V3 {
            x: v.x.0,
            y: v.y.0,
            z: v.z.0,
        };
        let v2 = |v: [Wide; 2]| V2 {
            x: v[0].0,
            y: v[1].0,
        };
        self.world = v3(f.world);
        self.normal = v3(f.normal);
        self.uv = [v2(f.uv[0]), v2(f.uv[1])];
        self.duv_dx = [v2(f.duv_dx[0]), v2(f.duv_dx[1])];
        self.duv_dy = [v2(f.duv_dy[0]), v2(f.duv_dy[1])];
        self.color = V4 {
            x: f.color[0].0,
            y: f.color[1].0,
            z: f.color[2].0,
            w: f.color[3].0,
        };
        self.tangent = v3(f.tangent);
        self.bitangent = v3(f.bitangent);
        self.front = [front; LANES];
    }

    /// Lane `i`: the surface of the triangle of `c` ([`Corners::of`] with tangents where the
    /// material has a normal map) at pixel (px, py), seen from its front or back.
    #[inline(always)]
    pub(in crate::raster) fn set(
        &mut self,
        i: usize,
        ms: &MaterialShader,
        c: &Corners,
        px: u32,
        py: u32,
        front: bool,
    ) {
        let f = ms.surface_at(c, px, py);
        self.world.set(i, f.world);
        self.normal.set(i, f.normal);
        for k in 0..2 {
            self.uv[k].set(i, f.uv[k]);
            self.duv_dx[k].set(i, f.duv_dx[k]);
            self.duv_dy[k].set(i, f.duv_dy[k]);
        }
        self.color.set(i, f.color);
        self.tangent.set(i, f.tangent);
        self.bitangent.set(i, f.bitangent);
        self.front[i] = front;
    }
}
