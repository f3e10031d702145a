//! Light at a pixel: what the metallic-roughness BRDF reads of a pixel lit by one light, and
//! Khronos' PBR Neutral tone mapping, for one pixel or eight in lanes.

use glam::Vec3;
use rxpipe_core::material::wide::{Num, Xyz};
use rxpipe_core::material::PunctualLight;

/// What [`MaterialShader::lit`] reads of one pixel or eight: the surface, the side it is seen
/// from, the base colour and the texture values (each meaningful where the material has the
/// texture).
pub(super) struct Pixel<T> {
    pub(super) world: Xyz<T>,
    pub(super) normal: Xyz<T>,
    pub(super) tangent: Xyz<T>,
    pub(super) bitangent: Xyz<T>,
    /// 1 seen from the front, -1 from the back
    pub(super) side: T,
    pub(super) base: Xyz<T>,
    /// the normal texture's texel
    pub(super) normal_map: Xyz<T>,
    /// the metallic-roughness texture's roughness (green) and metalness (blue)
    pub(super) rough: T,
    pub(super) metal: T,
    /// the occlusion texture's red
    pub(super) occlusion: T,
    /// the emissive texture's texel
    pub(super) emission: Xyz<T>,
}

/// What the BRDF reads of a pixel (or eight) lit by a light.
pub(super) struct Lit<T> {
    /// the shading normal
    pub(super) n: Xyz<T>,
    /// towards the eye
    pub(super) view: Xyz<T>,
    pub(super) world: Xyz<T>,
    /// |n . view|, at least 1e-4
    pub(super) nv: T,
    /// the diffuse colour and the reflectance at normal incidence
    pub(super) c_diff: Xyz<T>,
    pub(super) f0: Xyz<T>,
    /// what the Fresnel term is scaled by (KHR_materials_specular)
    pub(super) weight: T,
    /// roughness to the fourth power (at least 1e-6)
    pub(super) a2: T,
}

impl<T: Num> Lit<T> {
    /// The light `l` reflects towards the eye (Lambertian diffuse and GGX specular with the
    /// height-correlated Smith visibility term and Schlick's Fresnel), and where it counts: not
    /// where it lights the surface from behind or not at all. Worked out in every lane, without
    /// branches.
    #[inline(always)]
    pub(super) fn light(&self, l: &PunctualLight) -> (Xyz<T>, T::Mask) {
        let Lit {
            n,
            view,
            world,
            nv,
            c_diff,
            f0,
            weight,
            a2,
        } = *self;
        let (zero, one) = (T::splat(0.0), T::splat(1.0));
        let (dir, radiance) = l.at(world);
        let nl = n.dot(dir);
        let on = nl.gt(zero) & radiance.nonzero();
        let h = (dir + view).normalize_or_zero();
        let nh = n.dot(h).max(zero);
        let vh = view.dot(h).max(zero);
        let white = Xyz::splat(Vec3::ONE);
        let fresnel = (f0 + (white - f0).scale((one - vh).pow5())).scale(weight);
        let dd = nh * nh * (a2 - one) + one;
        let distribution = a2 / (T::splat(std::f32::consts::PI) * dd * dd);
        let visibility = T::splat(0.5)
            / (nl * (nv * nv * (one - a2) + a2).sqrt() + nv * (nl * nl * (one - a2) + a2).sqrt())
                .max(T::splat(1e-8));
        let diffuse = ((white - fresnel) * c_diff).scale(T::splat(std::f32::consts::FRAC_1_PI));
        let specular = fresnel.scale(distribution * visibility);
        (((diffuse + specular) * radiance).scale(nl), on)
    }
}

impl<T: Copy> Clone for Lit<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Copy> Copy for Lit<T> {}

/// Khronos' PBR Neutral tone mapping: colours up to about 0.76 pass unchanged (so base colours
/// under unit light look as authored), brighter ones are compressed towards white.
pub fn pbr_neutral(c: Vec3) -> Vec3 {
    tone_map(Xyz::from(c)).into()
}

/// [`pbr_neutral`] of one colour or eight (worked out whole, then chosen).
#[inline(always)]
pub(super) fn tone_map<T: Num>(c: Xyz<T>) -> Xyz<T> {
    const START: f32 = 0.8 - 0.04;
    const DESATURATION: f32 = 0.15;
    let x = c.min_element();
    let offset = T::select(
        x.lt(T::splat(0.08)),
        x - T::splat(6.25) * x * x,
        T::splat(0.04),
    );
    let c = Xyz::new(c.x - offset, c.y - offset, c.z - offset);
    let peak = c.max_element();
    let d = 1.0 - START;
    let new_peak = T::splat(1.0) - T::splat(d * d) / (peak + T::splat(d) - T::splat(START));
    let squeezed = c.scale(new_peak / peak);
    let g = T::splat(1.0)
        - T::splat(1.0) / (T::splat(DESATURATION) * (peak - new_peak) + T::splat(1.0));
    let out = squeezed.lerp(Xyz::new(new_peak, new_peak, new_peak), g);
    Xyz::select(peak.lt(T::splat(START)), c, out)
}
