//! The fragment stage of materials (the lit mode of draws that have a [`Material`]): glTF's
//! metallic-roughness BRDF (Lambertian diffuse, GGX specular with the height-correlated Smith
//! visibility term, Schlick's Fresnel) under the frame's punctual lights plus an ambient term,
//! emissive light, and Khronos' PBR Neutral tone mapping to sRGB; unlit materials show their base
//! colour as it is.
//!
//! Every attribute is interpolated with the perspective-correct barycentrics of the pixel centre
//! in the draw's source triangle (from the homogeneous 2D positions of its corners, Olano and
//! Greer 1997), so a clipped triangle's pieces read the same values as the whole; the texture
//! coordinates' screen-space derivatives, which choose the mip level, are the differences to the
//! right and lower pixel centres' coordinates.

mod light;
mod surface;

use super::{Draw, RasterSettings};
use glam::{Vec2, Vec3, Vec4};
pub use light::pbr_neutral;
use light::{tone_map, Lit, Pixel};
use rxpipe_core::material::lanes::{Rgba, LANES, V3, V4};
use rxpipe_core::material::texture::Texture;
use rxpipe_core::material::wide::{Num, Wide, Xyz};
use rxpipe_core::material::{AlphaMode, Material, PunctualLight, TextureRef, SLOTS};
use surface::{bary, Surface, SurfaceOf};
pub(super) use surface::{Corners, SurfaceLanes};

/// The most lights a frame shades with; the pipeline says when a scene has more.
pub const MAX_LIGHTS: usize = 8;

/// A frame's punctual lights (at most [`MAX_LIGHTS`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lights {
    list: [PunctualLight; MAX_LIGHTS],
    count: usize,
}

impl Lights {
    /// The first [`MAX_LIGHTS`] of `lights`.
    pub fn new(lights: &[PunctualLight]) -> Lights {
        let mut list = [PunctualLight {
            kind: rxpipe_core::material::LightKind::Directional,
            color: Vec3::ZERO,
            intensity: 0.0,
            position: Vec3::ZERO,
            direction: Vec3::NEG_Y,
            range: None,
        }; MAX_LIGHTS];
        let count = lights.len().min(MAX_LIGHTS);
        list[..count].copy_from_slice(&lights[..count]);
        Lights { list, count }
    }

    /// The key light of a scene without lights: the scene's directional light, with an irradiance
    /// of pi, so that a white Lambertian surface facing it reflects 1.
    pub fn key(light: &rxpipe_core::scene::Light) -> Lights {
        Lights::new(&[PunctualLight {
            kind: rxpipe_core::material::LightKind::Directional,
            color: light.color,
            intensity: std::f32::consts::PI,
            position: Vec3::ZERO,
            direction: light.direction,
            range: None,
        }])
    }

    pub fn as_slice(&self) -> &[PunctualLight] {
        &self.list[..self.count]
    }
}

/// The material path of one frame.
pub struct MaterialShader<'a> {
    s: &'a RasterSettings,
    /// pixel size in NDC
    step: Vec2,
}

impl<'a> MaterialShader<'a> {
    pub fn new(s: &'a RasterSettings) -> Self {
        MaterialShader {
            s,
            step: Vec2::new(2.0 / s.width as f32, -2.0 / s.height as f32),
        }
    }

    /// The surface of source triangle `tri` of `d` at pixel (px, py).
    #[inline(always)]
    fn surface(&self, d: &Draw, tri: u32, px: u32, py: u32, with_tangents: bool) -> Surface {
        self.surface_at(&Corners::of(d, tri, with_tangents), px, py)
    }

    /// The surface of the triangle of `c` at pixel (px, py).
    #[inline(always)]
    fn surface_at(&self, c: &Corners, px: u32, py: u32) -> Surface {
        let f = self.surface_of(c, self.ndc(px as f32, py as f32));
        Surface {
            world: f.world.into(),
            normal: f.normal.into(),
            uv: [Vec2::from_array(f.uv[0]), Vec2::from_array(f.uv[1])],
            duv_dx: [Vec2::from_array(f.duv_dx[0]), Vec2::from_array(f.duv_dx[1])],
            duv_dy: [Vec2::from_array(f.duv_dy[0]), Vec2::from_array(f.duv_dy[1])],
            color: Rgba::new(f.color[0], f.color[1], f.color[2], f.color[3]),
            tangent: f.tangent.into(),
            bitangent: f.bitangent.into(),
        }
    }

    /// The centre of pixel (px, py) (one, or eight in lanes) in NDC.
    #[inline(always)]
    fn ndc<T: Num>(&self, px: T, py: T) -> [T; 2] {
        let half = T::splat(0.5);
        [
            (px + half) * T::splat(self.step.x) - T::splat(1.0),
            T::splat(1.0) + (py + half) * T::splat(self.step.y),
        ]
    }

    /// The surface of the triangle of `c` at the point `ndc` (one pixel, or eight in lanes:
    /// the same operations, glam's in glam's order, so the same values).
    #[inline(always)]
    fn surface_of<T: Num>(&self, c: &Corners, ndc: [T; 2]) -> SurfaceOf<T> {
        let one = T::splat(1.0);
        // (arrays written out rather than `array::map`, which a large caller can leave out of
        // line)
        let e = [
            Xyz::<T>::splat(c.edges[0]),
            Xyz::<T>::splat(c.edges[1]),
            Xyz::<T>::splat(c.edges[2]),
        ];
        let b = bary(&e, ndc);
        let bx = bary(&e, [ndc[0] + T::splat(self.step.x), ndc[1] + T::splat(0.0)]);
        let by = bary(&e, [ndc[0] + T::splat(0.0), ndc[1] + T::splat(self.step.y)]);
        // corner attributes blended by barycentrics b, component by component
        let mix = |b: Xyz<T>, a: [f32; 3]| {
            T::splat(a[0]) * b.x + T::splat(a[1]) * b.y + T::splat(a[2]) * b.z
        };
        let mix2 = |b: Xyz<T>, a: &[Vec2; 3]| {
            let k = |k: usize| mix(b, [a[0][k], a[1][k], a[2][k]]);
            [k(0), k(1)]
        };
        let mix3 = |b: Xyz<T>, a: &[Vec3; 3]| {
            let k = |k: usize| mix(b, [a[0][k], a[1][k], a[2][k]]);
            Xyz::new(k(0), k(1), k(2))
        };
        let mix4 = |a: &[Vec4; 3]| {
            let k = |k: usize| mix(b, [a[0][k], a[1][k], a[2][k]]);
            [k(0), k(1), k(2), k(3)]
        };
        let uv = mix2(b, &c.uv);
        let color = c.colors.as_ref().map_or([one; 4], mix4);
        let normal = mix3(b, &c.normal);
        // the mesh's tangents where it has them (interpolated, to world space: glam's Mat3 *
        // Vec3; the bitangent from the interpolated normal and the sign w), else the
        // triangle's frame from its positions and uvs
        let (frame_t, frame_b) = (Xyz::splat(c.frame.0), Xyz::splat(c.frame.1));
        let (tangent, bitangent) = match &c.tangents {
            Some((values, t)) => {
                let ti = mix4(values);
                let m = t.to_world;
                let axis = |a: Vec3, k: usize| T::splat(a[k]);
                let row = |k: usize| {
                    axis(m.x_axis, k) * ti[0]
                        + axis(m.y_axis, k) * ti[1]
                        + axis(m.z_axis, k) * ti[2]
                };
                let tw = Xyz::new(row(0), row(1), row(2));
                let h = t.handedness;
                let sign = T::select(ti[3].lt(T::splat(0.0)), T::splat(-h), T::splat(h));
                let given = tw.dot(tw).gt(T::splat(1e-20));
                (
                    Xyz::select(given, tw, frame_t),
                    Xyz::select(given, normal.cross(tw).scale(sign), frame_b),
                )
            }
            None => (frame_t, frame_b),
        };
        let minus = |a: [T; 2], b: [T; 2]| [a[0] - b[0], a[1] - b[1]];
        let (dx, dy) = (minus(mix2(bx, &c.uv), uv), minus(mix2(by, &c.uv), uv));
        let (uv1, dx1, dy1) = match &c.uv1 {
            Some(u1) => {
                let w = mix2(b, u1);
                (w, minus(mix2(bx, u1), w), minus(mix2(by, u1), w))
            }
            None => (uv, dx, dy),
        };
        SurfaceOf {
            world: mix3(b, &c.world),
            normal,
            uv: [uv, uv1],
            duv_dx: [dx, dx1],
            duv_dy: [dy, dy1],
            color,
            tangent,
            bitangent,
        }
    }

    /// The base colour (linear RGBA: factor, vertex colour and texture) of `m` at a pixel.
    #[inline(always)]
    fn base(&self, m: &Material, f: &Surface) -> Rgba {
        let mut base = Rgba::from(m.base_color) * f.color;
        if let Some(t) = &m.base_color_texture {
            let k = t.uv_set.min(1);
            base = base * t.sample_rgba(f.uv[k], f.duv_dx[k], f.duv_dy[k]);
        }
        base
    }

    /// Whether a fragment of a masked material survives its alpha test at pixel (px, py).
    #[inline]
    pub fn passes_mask(&self, d: &Draw, m: &Material, tri: u32, px: u32, py: u32) -> bool {
        match m.alpha {
            AlphaMode::Mask(cutoff) => {
                let f = self.surface(d, tri, px, py, false);
                self.base(m, &f).a >= cutoff
            }
            _ => true,
        }
    }

    /// The colour (linear RGB, tone-mapped and ready for sRGB encoding) and alpha of `m` at pixel
    /// (px, py) of source triangle `tri`, seen from its front or its back.
    #[inline(always)]
    pub fn shade(
        &self,
        d: &Draw,
        m: &Material,
        tri: u32,
        px: u32,
        py: u32,
        front: bool,
    ) -> (Vec3, f32) {
        let f = self.surface(d, tri, px, py, m.normal_texture.is_some());
        let tex = sample_slots(m, &f);
        let base = base_color(m, Rgba::from(m.base_color), &f, &tex);
        if m.unlit {
            return (base.rgb(), base.a);
        }
        let x = |c: Rgba| Xyz::new(c.r, c.g, c.b);
        let p = Pixel {
            world: f.world.into(),
            normal: f.normal.into(),
            tangent: f.tangent.into(),
            bitangent: f.bitangent.into(),
            side: if front { 1.0 } else { -1.0 },
            base: x(base),
            normal_map: x(tex[NORMAL]),
            rough: tex[METALLIC_ROUGHNESS].g,
            metal: tex[METALLIC_ROUGHNESS].b,
            occlusion: tex[OCCLUSION].r,
            emission: x(tex[EMISSIVE]),
        };
        (self.lit(m, &p).into(), base.a)
    }

    /// The lit colour (tone-mapped, linear RGB) of material `m` at one pixel or eight
    /// ([`Num`]; the same values either way): the shading normal (with the normal map), the
    /// BRDF's inputs, each light's reflection, the ambient light and the emission.
    #[inline(always)]
    fn lit<T: Num>(&self, m: &Material, p: &Pixel<T>) -> Xyz<T> {
        let one = T::splat(1.0);
        let mut n = p.normal.scale(p.side).normalize_or_zero();
        if let Some(t) = &m.normal_texture {
            let (two, scale) = (T::splat(2.0), T::splat(t.scale));
            let tex = p.normal_map;
            let tn = Xyz::new(
                (tex.x * two - one) * scale,
                (tex.y * two - one) * scale,
                tex.z * two - one,
            );
            // Gram-Schmidt against the interpolated normal; the bitangent keeps the uv
            // handedness (each step worked out in every lane, then chosen)
            let tangent = p.tangent.scale(p.side);
            let tg = (tangent - n.scale(n.dot(tangent))).normalize_or_zero();
            let bt = n.cross(tg);
            let flip = bt.dot(p.bitangent.scale(p.side)).lt(T::splat(0.0));
            let bt = Xyz::select(flip, -bt, bt);
            let mapped = (tg.scale(tn.x) + bt.scale(tn.y) + n.scale(tn.z)).normalize_or_zero();
            n = Xyz::select(tg.nonzero() & mapped.nonzero(), mapped, n);
        }
        let (mut metallic, mut roughness) = (T::splat(m.metallic), T::splat(m.roughness));
        if m.metallic_roughness_texture.is_some() {
            roughness = roughness * p.rough;
            metallic = metallic * p.metal;
        }
        let (metallic, roughness) = (metallic.clamp(0.0, 1.0), roughness.clamp(0.0, 1.0));
        let occlusion = match &m.occlusion_texture {
            Some(t) => one + T::splat(t.scale) * (p.occlusion - one),
            None => one,
        };
        let mut emissive = Xyz::splat(m.emissive);
        if m.emissive_texture.is_some() {
            emissive = emissive * p.emission;
        }
        let rgb = p.base;
        let c_diff = rgb.scale(one - metallic);
        let f0 = Xyz::splat(m.specular_f0).lerp(rgb, metallic);
        // KHR_materials_specular's factor weighs the dielectric part's Fresnel term (a metal's
        // is whole); exactly one without it
        let weight = match m.specular_weight {
            1.0 => one,
            w => T::splat(w) * (one - metallic) + metallic,
        };
        let alpha = (roughness * roughness).max(T::splat(1e-3));
        let view = (Xyz::splat(self.s.eye) - p.world).normalize_or_zero();
        let lit = Lit {
            n,
            view,
            world: p.world,
            nv: n.dot(view).abs().max(T::splat(1e-4)),
            c_diff,
            f0,
            weight,
            a2: alpha * alpha,
        };
        let ambient = (c_diff + f0.scale(weight)).scale(T::splat(self.s.light.ambient) * occlusion)
            * Xyz::splat(self.s.light.color);
        let light = self.lights(&lit);
        let under = light + ambient + emissive;
        if m.clearcoat > 0.0 {
            return tone_map(self.coat(m, p, view, occlusion, under));
        }
        tone_map(under)
    }

    /// The sum of the scene's lights as `lit` reflects them.
    #[inline(always)]
    fn lights<T: Num>(&self, lit: &Lit<T>) -> Xyz<T> {
        let mut light = Xyz::splat(Vec3::ZERO);
        for l in self.s.lights.as_slice() {
            let (c, on) = lit.light(l);
            light = Xyz::select(on, light + c, light);
        }
        light
    }

    /// KHR_materials_clearcoat over `under` (the material's light, ambient light and
    /// emission): the coat reflects each light and the ambient light as a dielectric of
    /// reflectance 0.04 about the interpolated normal (no normal map), and passes what lies
    /// under it dimmed by its Fresnel term towards the eye, both by its strength.
    #[inline(always)]
    fn coat<T: Num>(
        &self,
        m: &Material,
        p: &Pixel<T>,
        view: Xyz<T>,
        occlusion: T,
        under: Xyz<T>,
    ) -> Xyz<T> {
        let one = T::splat(1.0);
        let n = p.normal.scale(p.side).normalize_or_zero();
        let alpha = (m.clearcoat_roughness * m.clearcoat_roughness).max(1e-3);
        let coat = Lit {
            n,
            view,
            world: p.world,
            nv: n.dot(view).abs().max(T::splat(1e-4)),
            c_diff: Xyz::splat(Vec3::ZERO),
            f0: Xyz::splat(Vec3::splat(0.04)),
            weight: one,
            a2: T::splat(alpha * alpha),
        };
        let light = self.lights(&coat);
        let ambient = Xyz::splat(self.s.light.color)
            .scale(T::splat(0.04) * (T::splat(self.s.light.ambient) * occlusion));
        let strength = T::splat(m.clearcoat);
        let fresnel = T::splat(0.04) + T::splat(0.96) * (one - coat.nv).pow5();
        under.scale(one - strength * fresnel) + (light + ambient).scale(strength)
    }

    /// [`MaterialShader::shade`]'s colour of eight pixels of material `m` (their surfaces and
    /// sides in `f`, from [`SurfaceLanes::set`] or [`SurfaceLanes::set_all`]; `plan` is
    /// [`SlotPlan::of`] `m`, which the caller keeps while the material repeats): the same
    /// values, the textures sampled and the colour computed in lanes. `WIDE`: this is the
    /// fragment stage's x86-64-v3 build (the textures' loads in AVX2 gathers:
    /// [`Texture::sample_lanes`]).
    #[inline(always)]
    pub(super) fn shade_lanes<const WIDE: bool>(
        &self,
        m: &Material,
        plan: Option<&SlotPlan>,
        f: &SurfaceLanes,
    ) -> V3 {
        let tex = sample_slots_lanes::<WIDE>(plan, f);
        // base_color's products in lanes
        let mut base = V4::splat(Rgba::from(m.base_color)).mul(&f.color);
        if m.base_color_texture.is_some() {
            base = base.mul(&tex[0]);
        }
        if m.unlit {
            return V3 {
                x: base.x,
                y: base.y,
                z: base.z,
            };
        }
        let w = |v: &V3| Xyz::new(Wide(v.x), Wide(v.y), Wide(v.z));
        let rgb = |v: &V4| Xyz::new(Wide(v.x), Wide(v.y), Wide(v.z));
        let p = Pixel {
            world: w(&f.world),
            normal: w(&f.normal),
            tangent: w(&f.tangent),
            bitangent: w(&f.bitangent),
            side: {
                // (lane loops rather than `array::map`, which can stay out of line)
                let mut side = [1.0; LANES];
                for (s, &front) in side.iter_mut().zip(&f.front) {
                    *s = if front { 1.0 } else { -1.0 };
                }
                Wide(side)
            },
            base: rgb(&base),
            normal_map: rgb(&tex[NORMAL]),
            rough: Wide(tex[METALLIC_ROUGHNESS].y),
            metal: Wide(tex[METALLIC_ROUGHNESS].z),
            occlusion: Wide(tex[OCCLUSION].x),
            emission: rgb(&tex[EMISSIVE]),
        };
        let c = self.lit(m, &p);
        V3 {
            x: c.x.0,
            y: c.y.0,
            z: c.z.0,
        }
    }
}

/// A material's sampled textures ([`Material::sampled`]) as the fragment stage samples them:
/// the first one present (`lead`) with those alike it ([`Material::alike_slots`]) together,
/// `set[..n]` going to slots `at[..n]`, and the others (`alone`) each on its own.
pub(super) struct SlotPlan<'m> {
    lead: &'m TextureRef,
    set: [&'m Texture; SLOTS],
    at: [usize; SLOTS],
    n: usize,
    alone: [Option<&'m TextureRef>; SLOTS],
}

impl<'m> SlotPlan<'m> {
    /// The plan for `m`; none where it samples no texture.
    #[inline(always)]
    pub(super) fn of(m: &'m Material) -> Option<SlotPlan<'m>> {
        let mut alone = m.sampled();
        let lead = alone.iter().flatten().next().copied()?;
        let alike = m.alike_slots();
        let mut p = SlotPlan {
            lead,
            set: [&*lead.texture; SLOTS],
            at: [0; SLOTS],
            n: 0,
            alone,
        };
        for k in (0..SLOTS).filter(|k| alike >> k & 1 == 1) {
            if let Some(t) = alone[k].take() {
                (p.set[p.n], p.at[p.n]) = (&*t.texture, k);
                p.n += 1;
            }
        }
        p.alone = alone;
        Some(p)
    }
}

/// Each texture `m` samples at the surface `f`, in [`Texels`] order, as its [`SlotPlan`] says
/// ([`Texture::sample_alike`] for the alike ones: the same values as one by one); the slots
/// `m` samples no texture for hold ones.
#[inline(always)]
fn sample_slots(m: &Material, f: &Surface) -> Texels {
    let mut tex = [Rgba::ONE; SLOTS];
    let Some(p) = SlotPlan::of(m) else {
        return tex;
    };
    for (out, t) in tex.iter_mut().zip(&p.alone) {
        if let Some(t) = t {
            let k = t.uv_set.min(1);
            *out = t.sample_rgba(f.uv[k], f.duv_dx[k], f.duv_dy[k]);
        }
    }
    let k = p.lead.uv_set.min(1);
    let (uv, dx, dy) = p.lead.coords(f.uv[k], f.duv_dx[k], f.duv_dy[k]);
    let mut got = [Rgba::ONE; SLOTS];
    Texture::sample_alike(&p.set[..p.n], uv, dx, dy, &mut got[..p.n]);
    for i in 0..p.n {
        tex[p.at[i]] = got[i];
    }
    tex
}

/// [`sample_slots`] of the eight pixels of `f` ([`Texture::sample_lanes_alike`] for the alike
/// ones), their alphas 1: the lanes shade opaque colour ([`MaterialShader::shade_lanes`] gives
/// no alpha; alpha-tested draws are tested in the scan, and blended ones shade pixel by pixel).
#[inline(always)]
fn sample_slots_lanes<const WIDE: bool>(plan: Option<&SlotPlan>, f: &SurfaceLanes) -> [V4; SLOTS] {
    let mut tex = [V4::splat(Rgba::ONE); SLOTS];
    let Some(p) = plan else {
        return tex;
    };
    for (out, t) in tex.iter_mut().zip(&p.alone) {
        if let Some(t) = t {
            let k = t.uv_set.min(1);
            *out = t.sample_lanes::<WIDE>(&f.uv[k], &f.duv_dx[k], &f.duv_dy[k], false);
        }
    }
    let k = p.lead.uv_set.min(1);
    let (uv, dx, dy) = p.lead.coords_lanes(&f.uv[k], &f.duv_dx[k], &f.duv_dy[k]);
    let mut got = [V4::default(); SLOTS];
    Texture::sample_lanes_alike::<WIDE>(&p.set[..p.n], &uv, &dx, &dy, false, &mut got[..p.n]);
    for i in 0..p.n {
        tex[p.at[i]] = got[i];
    }
    tex
}

/// A material's texture values at one pixel: base colour, metallic-roughness, normal,
/// occlusion, emissive (each slot whatever where the material has no such texture).
type Texels = [Rgba; SLOTS];
const METALLIC_ROUGHNESS: usize = 1;
const NORMAL: usize = 2;
const OCCLUSION: usize = 3;
const EMISSIVE: usize = 4;

/// The base colour (linear RGBA: factor, vertex colour and texture) of `m` at a pixel (`factor`
/// is `m`'s, as [`Rgba`]).
#[inline(always)]
fn base_color(m: &Material, factor: Rgba, f: &Surface, tex: &Texels) -> Rgba {
    let mut base = factor * f.color;
    if m.base_color_texture.is_some() {
        base = base * tex[0];
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_shade_as_each_pixel_alone() {
        use crate::geometry::{ShadedGeometry, VertexOut};
        use rxpipe_core::material::{LightKind, Sampler, Texture, Wrap};
        use std::sync::Arc;
        let mut rng = 99u32;
        let mut next = || {
            rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (rng >> 8) as f32 / (1 << 24) as f32
        };
        // random triangles over a 64x64 frame, with their corners' attributes
        let mut vertices = Vec::new();
        for _ in 0..30 {
            let w = 0.5 + next() * 2.0;
            vertices.push(VertexOut {
                clip: Vec4::new(
                    (next() * 2.0 - 1.0) * w,
                    (next() * 2.0 - 1.0) * w,
                    next() * w,
                    w,
                ),
                world: Vec3::new(next(), next(), next()) * 4.0 - 2.0,
                normal: Vec3::new(next(), next(), next()) * 2.0 - 1.0,
                uv: Vec2::new(next(), next()) * 3.0 - 1.0,
                extra: 0.0,
            });
        }
        let geometry = ShadedGeometry {
            triangles: (0..10).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect(),
            sources: (0..30).collect(),
            vertices,
            stats: Default::default(),
        };
        let colors: Vec<Vec4> = (0..30)
            .map(|_| Vec4::new(next(), next(), next(), next()))
            .collect();
        let texture = |w: u32, h: u32, srgb: bool, sampler: Sampler, seed: u32| {
            let px: Vec<u8> = (0..4 * w * h)
                .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
                .collect();
            TextureRef::new(Arc::new(
                Texture::new("t", w, h, &px, srgb, sampler).unwrap(),
            ))
        };
        let clamp = Sampler {
            wrap_s: Wrap::ClampToEdge,
            ..Sampler::default()
        };
        let mut normal = texture(32, 32, false, Sampler::default(), 3);
        normal.scale = 0.7;
        let mut occlusion = texture(16, 8, false, Sampler::default(), 4);
        occlusion.scale = 0.5;
        let mut emissive = texture(8, 8, true, Sampler::default(), 5);
        emissive.transform = Some([1.5, 0.2, -0.3, 0.8, 0.25, -0.5]);
        let full = Material {
            base_color: Vec4::new(0.9, 0.7, 0.5, 0.8),
            base_color_texture: Some(texture(64, 32, true, Sampler::default(), 1)),
            metallic: 0.6,
            roughness: 0.9,
            metallic_roughness_texture: Some(texture(24, 12, false, clamp, 2)),
            normal_texture: Some(normal),
            occlusion_texture: Some(occlusion),
            emissive: Vec3::new(0.5, 0.2, 0.1),
            emissive_texture: Some(emissive),
            ..Material::default()
        };
        let unlit = Material {
            unlit: true,
            ..full.clone()
        };
        // every slot alike the base colour's (sampled together in both paths), and the same
        // with the occlusion texture under a transform of its own (sampled alone)
        let mut alike = Material {
            name: "alike".into(),
            base_color_texture: Some(texture(32, 32, true, Sampler::default(), 11)),
            metallic_roughness_texture: Some(texture(32, 32, false, Sampler::default(), 12)),
            occlusion_texture: Some(texture(32, 32, false, Sampler::default(), 14)),
            emissive_texture: Some(texture(32, 32, true, Sampler::default(), 15)),
            ..full.clone()
        };
        assert_eq!(alike.alike_slots(), 0b11111);
        let mut one_apart = alike.clone();
        one_apart.name = "one apart".into();
        if let Some(t) = &mut one_apart.occlusion_texture {
            t.transform = Some([0.5, 0.0, 0.0, 2.0, 0.1, 0.3]);
        }
        assert_eq!(one_apart.alike_slots(), 0b10111);
        alike.name = "alike".into();
        let plain = Material::plain("plain", Vec4::new(0.3, 0.6, 0.9, 1.0));
        let mut s = RasterSettings::new(64, 64);
        s.eye = Vec3::new(0.5, 3.0, -4.0);
        let spot = PunctualLight {
            kind: LightKind::Spot {
                inner: 0.3,
                outer: 0.9,
            },
            color: Vec3::new(1.0, 0.8, 0.6),
            intensity: 20.0,
            position: Vec3::new(0.0, 3.0, 0.0),
            direction: Vec3::NEG_Y,
            range: Some(8.0),
        };
        let point = PunctualLight {
            kind: LightKind::Point,
            range: None,
            ..spot
        };
        let mut lights = Lights::key(&s.light).as_slice().to_vec();
        lights.extend([spot, point]);
        s.lights = Lights::new(&lights);
        let ms = MaterialShader::new(&s);
        // the mesh's own tangents (some of them zero), under a mirroring model matrix
        let tangent_values: Vec<Vec4> = (0..30)
            .map(|k| match k % 7 {
                0 => Vec4::ZERO,
                _ => {
                    Vec4::new(next(), next(), next(), next() - 0.5) * 2.0
                        - Vec4::new(1.0, 1.0, 1.0, 0.0)
                }
            })
            .collect();
        let model =
            glam::Mat4::from_scale(Vec3::new(-1.0, 0.5, 2.0)) * glam::Mat4::from_rotation_y(0.7);
        let mut compared = 0;
        let all = [&full, &unlit, &plain, &alike, &one_apart];
        for m in all {
            for tangents in [
                None,
                Some(crate::raster::Tangents::new(&tangent_values, model)),
            ] {
                let draw = Draw {
                    material: Some(m),
                    colors: Some(&colors),
                    tangents,
                    ..Draw::new(&geometry, [1.0; 4])
                };
                let with_tangents = m.normal_texture.is_some();
                for k in 0..200 {
                    // odd rounds: the eight pixels of one triangle, its surfaces in lanes
                    // (SurfaceLanes::set_all); even ones: pixels of any triangles, lane by lane
                    // (SurfaceLanes::set)
                    let one = k % 2 == 1;
                    let (tri, front) = ((next() * 10.0) as u32, next() < 0.7);
                    let mut f = SurfaceLanes::default();
                    let mut want = [Vec3::ZERO; LANES];
                    let (mut xs, mut ys) = ([0u32; LANES], [0u32; LANES]);
                    for (i, want) in want.iter_mut().enumerate() {
                        let (tri, front) = match one {
                            true => (tri, front),
                            false => ((next() * 10.0) as u32, next() < 0.7),
                        };
                        let (px, py) = ((next() * 64.0) as u32, (next() * 64.0) as u32);
                        (xs[i], ys[i]) = (px, py);
                        let c = Corners::of(&draw, tri, with_tangents);
                        f.set(i, &ms, &c, px, py, front);
                        *want = ms.shade(&draw, m, tri, px, py, front).0;
                    }
                    if one {
                        f = SurfaceLanes::default();
                        let c = Corners::of(&draw, tri, with_tangents);
                        f.set_all(&ms, &c, xs, ys, front);
                    }
                    // the baseline build's lane loops, and the x86-64-v3 build's gathers where
                    // the CPU has them
                    let v3 = crate::raster::tile::wide_isa().then_some(true);
                    for wide in std::iter::once(false).chain(v3) {
                        let plan = SlotPlan::of(m);
                        let got = match wide {
                            false => ms.shade_lanes::<false>(m, plan.as_ref(), &f),
                            true => ms.shade_lanes::<true>(m, plan.as_ref(), &f),
                        };
                        for (i, want) in want.iter().enumerate() {
                            // compared as bits: NaN where one pixel alone gives NaN too
                            assert_eq!(
                                got.get(i).to_array().map(f32::to_bits),
                                want.to_array().map(f32::to_bits),
                                "{}: lane {i}, round {k}, v3: {wide}",
                                m.name
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
        let builds = 1 + crate::raster::tile::wide_isa() as usize;
        assert_eq!(compared, all.len() * 2 * 200 * LANES * builds);
    }

    #[test]
    fn tone_mapping_keeps_darks_and_compresses_brights() {
        let mid = Vec3::new(0.5, 0.3, 0.2);
        assert!((pbr_neutral(mid) - (mid - 0.04)).abs().max_element() < 1e-6);
        let hot = pbr_neutral(Vec3::splat(10.0));
        assert!(
            hot.max_element() <= 1.0 && hot.min_element() > 0.95,
            "{hot}"
        );
        assert_eq!(pbr_neutral(Vec3::ZERO), Vec3::ZERO);
    }
}
