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

use super::{Draw, RasterSettings};
use crate::material::texture::Texture;
use crate::material::{AlphaMode, Material, PunctualLight, TextureRef};
use glam::{Vec2, Vec3, Vec4};

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
            kind: crate::material::LightKind::Directional,
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
    pub fn key(light: &crate::io::scene::Light) -> Lights {
        Lights::new(&[PunctualLight {
            kind: crate::material::LightKind::Directional,
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

/// What the material path reads of one pixel of a source triangle.
struct Surface {
    world: Vec3,
    normal: Vec3,
    uv: Vec2,
    duv_dx: Vec2,
    duv_dy: Vec2,
    color: Vec4,
    /// the triangle's tangent and bitangent (unnormalised; zero when its uvs are degenerate)
    tangent: Vec3,
    bitangent: Vec3,
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
        let g = d.geometry;
        let idx = g.triangles[tri as usize];
        let v = idx.map(|i| &g.vertices[i as usize]);
        // edge planes in homogeneous 2D: barycentric k is p . (c_{k+1} x c_{k+2})
        let c = v.map(|v| Vec3::new(v.clip.x, v.clip.y, v.clip.w));
        let e = [c[1].cross(c[2]), c[2].cross(c[0]), c[0].cross(c[1])];
        let ndc = Vec2::new(
            (px as f32 + 0.5) * self.step.x - 1.0,
            1.0 + (py as f32 + 0.5) * self.step.y,
        );
        let bary = |q: Vec2| {
            let p = q.extend(1.0);
            let b = Vec3::new(p.dot(e[0]), p.dot(e[1]), p.dot(e[2]));
            let sum = b.x + b.y + b.z;
            if sum.abs() > f32::MIN_POSITIVE && sum.is_finite() {
                // one division and three products (the GPU's rxm_bary)
                b * (1.0 / sum)
            } else {
                Vec3::splat(1.0 / 3.0)
            }
        };
        let b = bary(ndc);
        let bx = bary(ndc + Vec2::new(self.step.x, 0.0));
        let by = bary(ndc + Vec2::new(0.0, self.step.y));
        let mix2 = |b: Vec3, a: [Vec2; 3]| a[0] * b.x + a[1] * b.y + a[2] * b.z;
        let mix3 = |b: Vec3, a: [Vec3; 3]| a[0] * b.x + a[1] * b.y + a[2] * b.z;
        let uvs = v.map(|v| v.uv);
        let uv = mix2(b, uvs);
        let world = v.map(|v| v.world);
        let color = match d.colors {
            Some(cols) => {
                let col = idx.map(|i| {
                    g.sources
                        .get(i as usize)
                        .and_then(|&s| cols.get(s as usize))
                        .copied()
                        .unwrap_or(Vec4::ONE)
                });
                col[0] * b.x + col[1] * b.y + col[2] * b.z
            }
            None => Vec4::ONE,
        };
        let (mut tangent, mut bitangent) = (Vec3::ZERO, Vec3::ZERO);
        if with_tangents {
            let (dp1, dp2) = (world[1] - world[0], world[2] - world[0]);
            let (dt1, dt2) = (uvs[1] - uvs[0], uvs[2] - uvs[0]);
            let det = dt1.x * dt2.y - dt2.x * dt1.y;
            if det.abs() > 1e-20 {
                let r = 1.0 / det;
                tangent = (dp1 * dt2.y - dp2 * dt1.y) * r;
                bitangent = (dp2 * dt1.x - dp1 * dt2.x) * r;
            }
        }
        Surface {
            world: mix3(b, world),
            normal: mix3(b, v.map(|v| v.normal)),
            uv,
            duv_dx: mix2(bx, uvs) - uv,
            duv_dy: mix2(by, uvs) - uv,
            color,
            tangent,
            bitangent,
        }
    }

    /// The base colour (linear RGBA: factor, vertex colour and texture) of `m` at a pixel.
    #[inline(always)]
    fn base(&self, m: &Material, f: &Surface) -> Vec4 {
        let mut base = m.base_color * f.color;
        if let Some(t) = &m.base_color_texture {
            base *= t.sample(f.uv, f.duv_dx, f.duv_dy);
        }
        base
    }

    /// The base colour, metallic-roughness and normal textures of `m` at the surface (those it
    /// has; the base colour's alone with `only_base`), each as [`TextureRef::sample`] returns
    /// it. Those that sample alike the first one present (alike textures, the same transform)
    /// share its level choice and texel positions ([`Texture::sample_alike`]: the same values);
    /// any other is sampled on its own.
    #[inline(always)]
    fn sample_main<'m>(&self, m: &'m Material, f: &Surface, only_base: bool) -> [Option<Vec4>; 3] {
        let rest = |t: Option<&'m TextureRef>| if only_base { None } else { t };
        let uses: [Option<&TextureRef>; 3] = [
            m.base_color_texture.as_ref(),
            rest(m.metallic_roughness_texture.as_ref()),
            rest(m.normal_texture.as_ref()),
        ];
        let mut out = [None; 3];
        let Some(lead) = uses.iter().flatten().next() else {
            return out;
        };
        let (mut set, mut n) = ([0usize; 3], 0);
        for (k, u) in uses.iter().enumerate() {
            let Some(u) = u else { continue };
            if u.transform == lead.transform && u.texture.alike(&lead.texture) {
                set[n] = k;
                n += 1;
            } else {
                out[k] = Some(u.sample(f.uv, f.duv_dx, f.duv_dy));
            }
        }
        let (uv, dx, dy) = lead.coords(f.uv, f.duv_dx, f.duv_dy);
        let tex = |i: usize| &*uses[set[i]].expect("listed above").texture;
        let got: [Vec4; 3] = match n {
            1 => {
                let [a] = Texture::sample_alike([tex(0)], uv, dx, dy);
                [a, Vec4::ZERO, Vec4::ZERO]
            }
            2 => {
                let [a, b] = Texture::sample_alike([tex(0), tex(1)], uv, dx, dy);
                [a, b, Vec4::ZERO]
            }
            _ => Texture::sample_alike([tex(0), tex(1), tex(2)], uv, dx, dy),
        };
        for i in 0..n {
            out[set[i]] = Some(got[i]);
        }
        out
    }

    /// Whether a fragment of a masked material survives its alpha test at pixel (px, py).
    #[inline]
    pub fn passes_mask(&self, d: &Draw, m: &Material, tri: u32, px: u32, py: u32) -> bool {
        match m.alpha {
            AlphaMode::Mask(cutoff) => {
                let f = self.surface(d, tri, px, py, false);
                self.base(m, &f).w >= cutoff
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
        let [base_tex, mr_tex, normal_tex] = self.sample_main(m, &f, m.unlit);
        let mut base = m.base_color * f.color;
        if let Some(t) = base_tex {
            base *= t;
        }
        if m.unlit {
            return (base.truncate(), base.w);
        }
        let side = if front { 1.0 } else { -1.0 };
        let mut n = (f.normal * side).normalize_or_zero();
        if let (Some(t), Some(tex)) = (&m.normal_texture, normal_tex) {
            let tn = Vec3::new(
                (tex.x * 2.0 - 1.0) * t.scale,
                (tex.y * 2.0 - 1.0) * t.scale,
                tex.z * 2.0 - 1.0,
            );
            // Gram-Schmidt against the interpolated normal; the bitangent keeps the uv
            // handedness
            let tg = (f.tangent * side - n * n.dot(f.tangent * side)).normalize_or_zero();
            if tg != Vec3::ZERO {
                let mut bt = n.cross(tg);
                if bt.dot(f.bitangent * side) < 0.0 {
                    bt = -bt;
                }
                let mapped = (tg * tn.x + bt * tn.y + n * tn.z).normalize_or_zero();
                if mapped != Vec3::ZERO {
                    n = mapped;
                }
            }
        }
        let (mut metallic, mut roughness) = (m.metallic, m.roughness);
        if let Some(mr) = mr_tex {
            roughness *= mr.y;
            metallic *= mr.z;
        }
        let (metallic, roughness) = (metallic.clamp(0.0, 1.0), roughness.clamp(0.0, 1.0));
        let occlusion = match &m.occlusion_texture {
            Some(t) => 1.0 + t.scale * (t.sample(f.uv, f.duv_dx, f.duv_dy).x - 1.0),
            None => 1.0,
        };
        let mut emissive = m.emissive;
        if let Some(t) = &m.emissive_texture {
            emissive *= t.sample(f.uv, f.duv_dx, f.duv_dy).truncate();
        }
        let rgb = base.truncate();
        let c_diff = rgb * (1.0 - metallic);
        let f0 = Vec3::splat(0.04).lerp(rgb, metallic);
        let alpha = (roughness * roughness).max(1e-3);
        let a2 = alpha * alpha;
        let view = (self.s.eye - f.world).normalize_or_zero();
        let nv = n.dot(view).abs().max(1e-4);
        let mut light = Vec3::ZERO;
        for l in self.s.lights.as_slice() {
            let (dir, radiance) = l.at(f.world);
            let nl = n.dot(dir);
            if nl <= 0.0 || radiance == Vec3::ZERO {
                continue;
            }
            let h = (dir + view).normalize_or_zero();
            let nh = n.dot(h).max(0.0);
            let vh = view.dot(h).max(0.0);
            let fresnel = f0 + (Vec3::ONE - f0) * (1.0 - vh).powi(5);
            let dd = nh * nh * (a2 - 1.0) + 1.0;
            let distribution = a2 / (std::f32::consts::PI * dd * dd);
            let visibility = 0.5
                / (nl * (nv * nv * (1.0 - a2) + a2).sqrt()
                    + nv * (nl * nl * (1.0 - a2) + a2).sqrt())
                .max(1e-8);
            let diffuse = (Vec3::ONE - fresnel) * c_diff * std::f32::consts::FRAC_1_PI;
            let specular = fresnel * (distribution * visibility);
            light += (diffuse + specular) * radiance * nl;
        }
        let ambient = (c_diff + f0) * (self.s.light.ambient * occlusion) * self.s.light.color;
        (pbr_neutral(light + ambient + emissive), base.w)
    }
}

/// Khronos' PBR Neutral tone mapping: colours up to about 0.76 pass unchanged (so base colours
/// under unit light look as authored), brighter ones are compressed towards white.
#[inline(always)]
pub fn pbr_neutral(c: Vec3) -> Vec3 {
    const START: f32 = 0.8 - 0.04;
    const DESATURATION: f32 = 0.15;
    let x = c.min_element();
    let offset = if x < 0.08 { x - 6.25 * x * x } else { 0.04 };
    let c = c - offset;
    let peak = c.max_element();
    if peak < START {
        return c;
    }
    let d = 1.0 - START;
    let new_peak = 1.0 - d * d / (peak + d - START);
    let c = c * (new_peak / peak);
    let g = 1.0 - 1.0 / (DESATURATION * (peak - new_peak) + 1.0);
    c.lerp(Vec3::splat(new_peak), g)
}

#[cfg(test)]
mod tests {
    use super::*;

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
