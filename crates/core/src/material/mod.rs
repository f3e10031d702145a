//! Materials: glTF 2.0 metallic-roughness materials with their textures, as the fragment stage
//! shades them (the CPU reference in `rxpipe::raster`).
//!
//! A [`Material`] holds factors and optional [`TextureRef`]s; a texture is decoded once at load
//! time into RGBA8 levels with a full mip chain ([`Texture`]), and sampled with its glTF sampler
//! (wrap modes, filters, trilinear filtering, the level chosen from the screen-space derivatives
//! of the texture coordinates). Colour textures (base colour, emissive) hold sRGB-encoded texels,
//! decoded to linear before filtering; the others hold linear data.

pub mod lanes;
pub mod texture;
pub mod wide;

pub use texture::{Filter, Sampler, Texture, TextureError, Wrap};

use glam::{Vec2, Vec3, Vec4};
use lanes::{LANES, V2, V4};
use std::sync::Arc;
use wide::{Num, Xyz};

/// How a material's alpha is used (glTF `alphaMode`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum AlphaMode {
    /// alpha is ignored
    #[default]
    Opaque,
    /// fragments with alpha below the cutoff are discarded (before the depth test)
    Mask(f32),
    /// composited over what is behind: drawn after the opaque geometry, objects far to near
    Blend,
}

/// A texture as a material uses it: the texture, the texture coordinate transform
/// (KHR_texture_transform, as a 2x3 matrix: `uv' = m * [u, v, 1]`), and the scalar glTF gives
/// some uses (the normal texture's scale, the occlusion texture's strength; 1 otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct TextureRef {
    pub texture: Arc<Texture>,
    pub transform: Option<[f32; 6]>,
    pub scale: f32,
    /// the mesh's uv set it reads: 0 [`crate::mesh::Mesh::uvs`], 1 [`crate::mesh::Mesh::uvs1`] (a mesh
    /// without that set reads its first)
    pub uv_set: usize,
}

impl TextureRef {
    /// A plain use of `texture`.
    pub fn new(texture: Arc<Texture>) -> TextureRef {
        TextureRef {
            texture,
            transform: None,
            scale: 1.0,
            uv_set: 0,
        }
    }

    /// The texture coordinates this use samples at, and their derivatives, transformed.
    #[inline(always)]
    pub fn coords(&self, uv: Vec2, dx: Vec2, dy: Vec2) -> (Vec2, Vec2, Vec2) {
        match &self.transform {
            None => (uv, dx, dy),
            Some(m) => {
                let lin = |v: Vec2| Vec2::new(m[0] * v.x + m[2] * v.y, m[1] * v.x + m[3] * v.y);
                (lin(uv) + Vec2::new(m[4], m[5]), lin(dx), lin(dy))
            }
        }
    }

    /// The filtered texel (linear RGBA) at `uv` with screen-space derivatives `dx`, `dy`.
    #[inline(always)]
    pub fn sample(&self, uv: Vec2, dx: Vec2, dy: Vec2) -> Vec4 {
        let (uv, dx, dy) = self.coords(uv, dx, dy);
        self.texture.sample(uv, dx, dy)
    }

    /// [`TextureRef::sample`] as [`lanes::Rgba`].
    #[inline(always)]
    pub fn sample_rgba(&self, uv: Vec2, dx: Vec2, dy: Vec2) -> lanes::Rgba {
        let (uv, dx, dy) = self.coords(uv, dx, dy);
        self.texture.sample_rgba(uv, dx, dy)
    }

    /// Whether `self` and `other` sample alike: alike textures ([`texture::Texture::alike`])
    /// read through the same uv set and transform, so that the same coordinates choose the same levels and texel
    /// places in both (what lets the fragment stage, on the CPU and the GPU, sample them
    /// together).
    pub fn samples_alike(&self, other: &TextureRef) -> bool {
        self.uv_set == other.uv_set
            && self.transform == other.transform
            && self.texture.alike(&other.texture)
    }

    /// [`TextureRef::sample`] of eight pixels ([`Texture::sample_lanes`], the alpha where
    /// `alpha`; `WIDE` as there).
    #[inline(always)]
    pub fn sample_lanes<const WIDE: bool>(&self, uv: &V2, dx: &V2, dy: &V2, alpha: bool) -> V4 {
        let (u, x, y) = self.coords_lanes(uv, dx, dy);
        self.texture.sample_lanes::<WIDE>(&u, &x, &y, alpha)
    }

    /// [`TextureRef::coords`] of eight pixels.
    #[inline(always)]
    pub fn coords_lanes(&self, uv: &V2, dx: &V2, dy: &V2) -> (V2, V2, V2) {
        let (mut u, mut x, mut y) = (*uv, *dx, *dy);
        if self.transform.is_some() {
            for i in 0..LANES {
                let (a, b, c) = self.coords(uv.get(i), dx.get(i), dy.get(i));
                u.set(i, a);
                x.set(i, b);
                y.set(i, c);
            }
        }
        (u, x, y)
    }
}

/// A glTF metallic-roughness material. [`Material::default`] is glTF's default material (white,
/// fully metallic and rough, opaque, single-sided).
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    pub name: String,
    /// linear RGBA factor
    pub base_color: Vec4,
    pub base_color_texture: Option<TextureRef>,
    pub metallic: f32,
    pub roughness: f32,
    /// roughness in G, metallic in B
    pub metallic_roughness_texture: Option<TextureRef>,
    /// tangent-space normals; `scale` scales their x and y. The tangent frame is the mesh's
    /// ([`crate::mesh::Mesh::tangents`]) where it has one, else each triangle's from its uvs
    pub normal_texture: Option<TextureRef>,
    /// occlusion in R; `scale` is the strength
    pub occlusion_texture: Option<TextureRef>,
    /// linear RGB factor
    pub emissive: Vec3,
    pub emissive_texture: Option<TextureRef>,
    pub alpha: AlphaMode,
    /// no back-face culling; back faces are shaded with the flipped normal
    pub double_sided: bool,
    /// KHR_materials_unlit: the base colour as it is, without lighting
    pub unlit: bool,
    /// the dielectric part's reflectance at normal incidence (linear RGB): 0.04, or what
    /// KHR_materials_ior's index of refraction and KHR_materials_specular's colour make it
    pub specular_f0: Vec3,
    /// KHR_materials_specular's factor: the strength of the dielectric part's specular
    /// reflection (its Fresnel term scaled by it; 1 leaves it as it is, 0 leaves only diffuse)
    pub specular_weight: f32,
    /// KHR_materials_clearcoat: the strength of a clear coat over the material (0: none),
    /// which reflects as a dielectric (reflectance 0.04) about the interpolated normal and
    /// dims what lies under it by its Fresnel term
    pub clearcoat: f32,
    /// the clear coat's roughness
    pub clearcoat_roughness: f32,
}

impl Default for Material {
    fn default() -> Self {
        Material {
            name: String::new(),
            base_color: Vec4::ONE,
            base_color_texture: None,
            metallic: 1.0,
            roughness: 1.0,
            metallic_roughness_texture: None,
            normal_texture: None,
            occlusion_texture: None,
            emissive: Vec3::ZERO,
            emissive_texture: None,
            alpha: AlphaMode::Opaque,
            double_sided: false,
            unlit: false,
            specular_f0: Vec3::splat(0.04),
            specular_weight: 1.0,
            clearcoat: 0.0,
            clearcoat_roughness: 0.0,
        }
    }
}

impl Material {
    /// A dielectric of one colour (what a mesh with vertex colours and no material gets): the
    /// colours are multiplied into its white base.
    pub fn plain(name: impl Into<String>, base: Vec4) -> Material {
        Material {
            name: name.into(),
            base_color: base,
            metallic: 0.0,
            roughness: 0.8,
            ..Default::default()
        }
    }

    /// Every texture the material uses.
    pub fn textures(&self) -> impl Iterator<Item = &TextureRef> {
        [
            &self.base_color_texture,
            &self.metallic_roughness_texture,
            &self.normal_texture,
            &self.occlusion_texture,
            &self.emissive_texture,
        ]
        .into_iter()
        .flatten()
    }

    /// The textures the fragment stage samples, by slot (base colour, metallic-roughness,
    /// normal, occlusion, emissive: [`SLOTS`]): those the material has, of an unlit material its
    /// base colour's alone.
    pub fn sampled<'a>(&'a self) -> [Option<&'a TextureRef>; SLOTS] {
        let lit = |t: Option<&'a TextureRef>| t.filter(|_| !self.unlit);
        [
            self.base_color_texture.as_ref(),
            lit(self.metallic_roughness_texture.as_ref()),
            lit(self.normal_texture.as_ref()),
            lit(self.occlusion_texture.as_ref()),
            lit(self.emissive_texture.as_ref()),
        ]
    }

    /// Which of the [`Material::sampled`] textures (bit k for slot k) sample alike the first one
    /// present ([`TextureRef::samples_alike`]; the first one included): the fragment stage, on
    /// the CPU and the GPU, samples them together (one level choice and one set of texel places
    /// for all; the same values as one by one) and any other on its own.
    pub fn alike_slots(&self) -> u32 {
        let slots = self.sampled();
        let Some(lead) = slots.iter().flatten().next() else {
            return 0;
        };
        (0..SLOTS)
            .filter(|&k| slots[k].is_some_and(|t| t.samples_alike(lead)))
            .fold(0, |bits, k| bits | 1 << k)
    }
}

/// How many texture slots a material has ([`Material::sampled`]).
pub const SLOTS: usize = 5;

/// A punctual light (KHR_lights_punctual), in world space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PunctualLight {
    pub kind: LightKind,
    /// linear RGB
    pub color: Vec3,
    /// lux for directional lights, candela for point and spot lights
    pub intensity: f32,
    pub position: Vec3,
    /// the direction light travels (towards the scene)
    pub direction: Vec3,
    /// the distance where a point or spot light's contribution reaches zero (none: infinite)
    pub range: Option<f32>,
}

/// What kind of light a [`PunctualLight`] is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LightKind {
    Directional,
    Point,
    /// cone angles from the axis, in radians
    Spot {
        inner: f32,
        outer: f32,
    },
}

impl PunctualLight {
    /// The unit vector towards the light and the light's radiance scale at `p` (zero outside its
    /// range or cone), at one point or eight ([`Num`]: the same values either way).
    #[inline(always)]
    pub fn at<T: Num>(&self, p: Xyz<T>) -> (Xyz<T>, Xyz<T>) {
        match self.kind {
            LightKind::Directional => (
                Xyz::splat((-self.direction).normalize_or_zero()),
                Xyz::splat(self.color * self.intensity),
            ),
            LightKind::Point | LightKind::Spot { .. } => {
                let d = Xyz::splat(self.position) - p;
                let dist2 = d.dot(d).max(T::splat(1e-8));
                let len = dist2.sqrt();
                let l = Xyz::new(d.x / len, d.y / len, d.z / len);
                // the specification's recommended window: (1 - (d / range)^4)^2, clamped
                let window = match self.range {
                    Some(r) if r > 0.0 => {
                        let x = dist2 / T::splat(r * r);
                        let w = (T::splat(1.0) - x * x).clamp(0.0, 1.0);
                        w * w
                    }
                    _ => T::splat(1.0),
                };
                let cone = match self.kind {
                    LightKind::Spot { inner, outer } => {
                        let (ci, co) = (inner.cos(), outer.cos());
                        let cd = Xyz::splat(self.direction.normalize_or_zero()).dot(-l);
                        let c =
                            ((cd - T::splat(co)) / T::splat((ci - co).max(1e-4))).clamp(0.0, 1.0);
                        c * c
                    }
                    _ => T::splat(1.0),
                };
                let scale = T::splat(self.intensity) * window * cone / dist2;
                (l, Xyz::splat(self.color).scale(scale))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alike_slots_group_the_textures_that_sample_alike_the_first() {
        let tex = |w: u32, sampler: Sampler| {
            let px = vec![128u8; 4 * w as usize * 8];
            TextureRef::new(Arc::new(
                Texture::new("t", w, 8, &px, false, sampler).unwrap(),
            ))
        };
        let clamp = Sampler {
            wrap_t: Wrap::ClampToEdge,
            ..Sampler::default()
        };
        let mut shifted = tex(16, Sampler::default());
        shifted.transform = Some([1.0, 0.0, 0.0, 1.0, 0.5, 0.0]);
        let mut m = Material {
            base_color_texture: None,
            metallic_roughness_texture: Some(tex(16, Sampler::default())),
            normal_texture: Some(tex(8, Sampler::default())),
            occlusion_texture: Some(tex(16, clamp)),
            emissive_texture: Some(tex(16, Sampler::default())),
            ..Material::default()
        };
        // the lead is the first present (metallic-roughness): the normal texture's size, the
        // occlusion texture's sampler differ
        assert_eq!(m.alike_slots(), 0b10010);
        m.emissive_texture = Some(shifted.clone());
        assert_eq!(m.alike_slots(), 0b00010);
        // a lead under a transform groups those under the same one
        m.metallic_roughness_texture = Some(shifted);
        assert_eq!(m.alike_slots(), 0b10010);
        // an unlit material samples its base colour alone
        m.unlit = true;
        assert_eq!(m.sampled().iter().flatten().count(), 0);
        assert_eq!(m.alike_slots(), 0);
        m.base_color_texture = Some(tex(16, Sampler::default()));
        assert_eq!(m.alike_slots(), 0b00001);
        assert_eq!(Material::default().alike_slots(), 0);
    }
}
