//! KHR_materials_pbrSpecularGlossiness as metallic-roughness: a material of the (archived, still
//! common) specular-glossiness model is converted when it is loaded, texel by texel, into the base
//! colour, metallic and roughness that rxpipe's one BRDF shades. Both backends then draw it as
//! any other material.
//!
//! The two models do not map exactly (a specular-glossiness texel has six colour values where
//! metallic-roughness has four), so the conversion is the usual approximation: roughness is one
//! minus glossiness; metallic solves the quadratic that makes a dielectric's 4% reflectance and a
//! metal's specular colour meet the texel's perceived diffuse and specular brightness; the base
//! colour blends the colour that explains the diffuse (for the dielectric part) with the one
//! that explains the specular (for the metal), by metallic squared. A dielectric (specular 0.04
//! grey) keeps its diffuse colour with metallic 0; a metal (diffuse black) becomes its specular
//! colour with metallic 1.

use glam::{Vec3, Vec4};

/// The reflectance at normal incidence of metallic-roughness's dielectrics.
const DIELECTRIC: f32 = 0.04;
const EPSILON: f32 = 1e-6;

/// A specular-glossiness material's values at one texel, in linear light: the diffuse colour
/// (and alpha), the specular colour and the glossiness.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpecGloss {
    pub diffuse: Vec4,
    pub specular: Vec3,
    pub glossiness: f32,
}

/// The metallic-roughness values of one texel: linear base colour and alpha, metallic,
/// roughness.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetalRough {
    pub base: Vec4,
    pub metallic: f32,
    pub roughness: f32,
}

/// Perceived brightness of a linear colour.
fn brightness(c: Vec3) -> f32 {
    (0.299 * c.x * c.x + 0.587 * c.y * c.y + 0.114 * c.z * c.z).sqrt()
}

/// The metallic value whose blend of a dielectric and a metal gives the diffuse and specular
/// brightnesses (`kept`: the light the specular leaves to the diffuse).
fn solve_metallic(diffuse: f32, specular: f32, kept: f32) -> f32 {
    if specular < DIELECTRIC {
        return 0.0;
    }
    let a = DIELECTRIC;
    let b = diffuse * kept / (1.0 - DIELECTRIC) + specular - 2.0 * DIELECTRIC;
    let c = DIELECTRIC - specular;
    let d = (b * b - 4.0 * a * c).max(0.0);
    ((-b + d.sqrt()) / (2.0 * a)).clamp(0.0, 1.0)
}

/// One texel converted (every input clamped to [0, 1] first; the output is in [0, 1]).
pub fn convert(sg: SpecGloss) -> MetalRough {
    let diffuse = sg.diffuse.truncate().clamp(Vec3::ZERO, Vec3::ONE);
    let specular = sg.specular.clamp(Vec3::ZERO, Vec3::ONE);
    let kept = 1.0 - specular.max_element();
    let metallic = solve_metallic(brightness(diffuse), brightness(specular), kept);
    let from_diffuse = diffuse * (kept / (1.0 - DIELECTRIC) / (1.0 - metallic).max(EPSILON));
    let from_specular =
        (specular - Vec3::splat(DIELECTRIC * (1.0 - metallic))) / metallic.max(EPSILON);
    let base = from_diffuse
        .lerp(from_specular, metallic * metallic)
        .clamp(Vec3::ZERO, Vec3::ONE);
    MetalRough {
        base: base.extend(sg.diffuse.w.clamp(0.0, 1.0)),
        metallic,
        roughness: 1.0 - sg.glossiness.clamp(0.0, 1.0),
    }
}

/// An RGBA8 image: width, height, texels.
pub type Image<'a> = (u32, u32, &'a [u8]);

/// The material's factors and its textures' images (diffuse: sRGB RGB and linear alpha;
/// specular-glossiness: sRGB RGB, linear alpha), both read at the same coordinates.
pub struct Source<'a> {
    pub diffuse_factor: Vec4,
    pub specular_factor: Vec3,
    pub glossiness_factor: f32,
    pub diffuse: Option<Image<'a>>,
    pub specular_glossiness: Option<Image<'a>>,
}

/// A converted material: its factors when it has no texture, else the base colour texels (sRGB
/// RGB, linear alpha) and the metallic-roughness texels (roughness in G, metallic in B), whose
/// factors are then one.
pub enum Converted {
    Factors(MetalRough),
    Textures {
        width: u32,
        height: u32,
        base: Vec<u8>,
        metallic_roughness: Vec<u8>,
    },
}

/// Converts a material. With textures, the output has the larger of their sizes in each
/// direction, and each output texel reads the nearest texel of each image at its place.
pub fn convert_material(s: &Source) -> Converted {
    let lut = rxpipe_core::color::srgb_to_linear_lut();
    let at = |img: &Image, x: u32, y: u32, w: u32, h: u32| -> [u8; 4] {
        let (iw, ih, px) = *img;
        let sx = (x as u64 * iw as u64 / w as u64) as usize;
        let sy = (y as u64 * ih as u64 / h as u64) as usize;
        let k = 4 * (sy * iw as usize + sx);
        [px[k], px[k + 1], px[k + 2], px[k + 3]]
    };
    let srgb = |t: [u8; 4]| {
        Vec4::new(
            lut[t[0] as usize],
            lut[t[1] as usize],
            lut[t[2] as usize],
            t[3] as f32 / 255.0,
        )
    };
    let texel = |d: Option<[u8; 4]>, g: Option<[u8; 4]>| {
        let diffuse = s.diffuse_factor * d.map_or(Vec4::ONE, srgb);
        let sg = g.map_or(Vec4::ONE, srgb);
        convert(SpecGloss {
            diffuse,
            specular: s.specular_factor * sg.truncate(),
            glossiness: s.glossiness_factor * sg.w,
        })
    };
    let sizes = [s.diffuse.as_ref(), s.specular_glossiness.as_ref()];
    let (width, height) = sizes
        .iter()
        .flatten()
        .fold((0, 0), |(w, h), i| (w.max(i.0), h.max(i.1)));
    if width == 0 || height == 0 {
        return Converted::Factors(texel(None, None));
    }
    let n = width as usize * height as usize;
    let (mut base, mut mr) = (vec![0u8; 4 * n], vec![0u8; 4 * n]);
    let byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    // (rows over the thread pool: a 4096 x 4096 material is 16 M texels)
    use rayon::prelude::*;
    let row = 4 * width as usize;
    base.par_chunks_mut(row)
        .zip(mr.par_chunks_mut(row))
        .enumerate()
        .for_each(|(y, (base, mr))| {
            for x in 0..width {
                let d = s
                    .diffuse
                    .as_ref()
                    .map(|i| at(i, x, y as u32, width, height));
                let g = s
                    .specular_glossiness
                    .as_ref()
                    .map(|i| at(i, x, y as u32, width, height));
                let t = texel(d, g);
                let k = 4 * x as usize;
                base[k..k + 4].copy_from_slice(&[
                    rxpipe_core::color::srgb_byte(t.base.x),
                    rxpipe_core::color::srgb_byte(t.base.y),
                    rxpipe_core::color::srgb_byte(t.base.z),
                    byte(t.base.w),
                ]);
                mr[k..k + 4].copy_from_slice(&[0, byte(t.roughness), byte(t.metallic), 255]);
            }
        });
    Converted::Textures {
        width,
        height,
        base,
        metallic_roughness: mr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dielectrics_keep_their_colour_and_metals_take_their_specular() {
        let plastic = convert(SpecGloss {
            diffuse: Vec4::new(0.6, 0.2, 0.1, 0.5),
            specular: Vec3::splat(0.04),
            glossiness: 0.7,
        });
        assert_eq!(plastic.metallic, 0.0);
        assert!((plastic.roughness - 0.3).abs() < 1e-6);
        assert!(
            plastic
                .base
                .abs_diff_eq(Vec4::new(0.6, 0.2, 0.1, 0.5), 1e-5),
            "{plastic:?}"
        );
        let gold = Vec3::new(1.0, 0.766, 0.336);
        let metal = convert(SpecGloss {
            diffuse: Vec4::new(0.0, 0.0, 0.0, 1.0),
            specular: gold,
            glossiness: 1.0,
        });
        assert!(metal.metallic > 0.999, "{metal:?}");
        assert!(metal.base.truncate().abs_diff_eq(gold, 1e-3), "{metal:?}");
        assert_eq!(metal.roughness, 0.0);
        // a dim specular below the dielectric's is no metal either
        let matte = convert(SpecGloss {
            diffuse: Vec4::ONE,
            specular: Vec3::ZERO,
            glossiness: 0.0,
        });
        assert_eq!((matte.metallic, matte.roughness), (0.0, 1.0));
    }

    #[test]
    fn out_of_range_inputs_give_values_in_range() {
        for v in [-3.0f32, 0.5, 7.0, f32::MAX] {
            let m = convert(SpecGloss {
                diffuse: Vec4::splat(v),
                specular: Vec3::splat(v),
                glossiness: v,
            });
            for c in [
                m.base.x,
                m.base.y,
                m.base.z,
                m.base.w,
                m.metallic,
                m.roughness,
            ] {
                assert!((0.0..=1.0).contains(&c), "{v}: {m:?}");
            }
        }
    }

    #[test]
    fn textures_are_read_at_the_larger_size() {
        // a 2x1 diffuse texture (red, blue) and a 1x2 specular-glossiness one (dielectric and
        // glossy, dielectric and rough): 2x2 texels out
        let diffuse = [255, 0, 0, 255, 0, 0, 255, 128];
        let sg = [56, 56, 56, 255, 56, 56, 56, 0];
        let c = convert_material(&Source {
            diffuse_factor: Vec4::ONE,
            specular_factor: Vec3::ONE,
            glossiness_factor: 1.0,
            diffuse: Some((2, 1, &diffuse)),
            specular_glossiness: Some((1, 2, &sg)),
        });
        let Converted::Textures {
            width,
            height,
            base,
            metallic_roughness,
        } = c
        else {
            panic!("textures expected")
        };
        assert_eq!((width, height), (2, 2));
        // (sRGB 56 is linear 0.0395: a dielectric, so the colours stay)
        let texel = |b: &[u8], x: usize, y: usize| b[4 * (2 * y + x)..][..4].to_vec();
        assert_eq!(texel(&base, 0, 0)[..3], [255, 0, 0]);
        assert_eq!(texel(&base, 1, 1)[..3], [0, 0, 255]);
        assert_eq!(texel(&base, 1, 0)[3], 128);
        assert_eq!(texel(&metallic_roughness, 0, 0)[1], 0);
        assert_eq!(texel(&metallic_roughness, 0, 1)[1], 255);
        assert!(metallic_roughness.chunks(4).all(|t| t[2] < 8));
    }
}
