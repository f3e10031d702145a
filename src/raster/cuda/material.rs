//! The material tables of the GPU raster stage (kernels/material.cuh), beside the CPU's material
//! path ([`super::MaterialShader`]): the frame's textures on the device, each level's RGBA8
//! texels in one buffer with a table of levels, sampled by our own code (the CPU's arithmetic,
//! not the texture units': see kernels/material.cuh), and per frame the small tables of draws,
//! materials and lights that the raster kernel reads.
//!
//! Textures are uploaded when a frame uses one the buffer does not hold, and then kept: the
//! frames after it upload only the tables (a few hundred bytes per draw), so a frame needs no
//! host round trip for its textures. When a new texture appears, the buffer is rebuilt with the
//! textures of that frame only, so textures of scenes no longer drawn do not pile up.

use super::{RasterSettings, ShadingMode};
use crate::gpu::{Gpu, GpuError};
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, ValidAsZeroBits};
use rxpipe_core::material::{AlphaMode, Filter, LightKind, Material, Texture, TextureRef, Wrap};
use std::collections::HashMap;
use std::sync::Arc;

/// `RxpLevel`
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
struct LevelDesc {
    offset: u64,
    width: u32,
    height: u32,
}

/// `RxpTexture`
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
struct TextureDesc {
    first_level: u32,
    levels: u32,
    srgb: u32,
    sampler: u32,
}

/// `RxpTexUse`
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct TexUse {
    texture: i32,
    scale: f32,
    transformed: i32,
    m: [f32; 6],
    /// the mesh's uv set it reads (0 or 1)
    uv_set: i32,
}

/// `RxpMaterial`
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct MaterialDesc {
    base: [f32; 4],
    emissive: [f32; 3],
    metallic: f32,
    roughness: f32,
    cutoff: f32,
    flags: u32,
    /// bits 0, 1, 2: the base colour, metallic-roughness and normal textures that sample alike
    /// the first of them present (see [`alike_group`])
    alike: u32,
    tex: [TexUse; 5],
    /// the dielectric reflectance at normal incidence and the Fresnel term's weight
    /// ([`Material::specular_f0`], [`Material::specular_weight`])
    specular_f0: [f32; 3],
    specular_weight: f32,
    /// the clear coat's strength and roughness ([`Material::clearcoat`])
    clearcoat: f32,
    clearcoat_roughness: f32,
}

/// `RxpDraw`: a draw as setup and the material path read it.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub(super) struct DrawDesc {
    pub queue: u64,
    pub corners: u64,
    pub runs: u64,
    pub indices: u64,
    pub colors: u64,
    pub counts: u64,
    pub faces: u64,
    pub nverts: u64,
    pub ncolors: u64,
    pub nruns: u32,
    pub tri_base: u32,
    pub material: i32,
    pub cull: u32,
    pub alpha: u32,
    pub pad: u32,
    pub tangents: u64,
    pub ntangents: u64,
    /// the model matrix's linear part, by columns
    pub to_world: [f32; 9],
    pub handedness: f32,
    /// the mesh's second uvs (two floats per vertex; 0: none) and how many vertices they cover
    pub uvs1: u64,
    pub nuvs1: u64,
}

/// `RxpLight`
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
struct LightDesc {
    kind: u32,
    color: [f32; 3],
    intensity: f32,
    position: [f32; 3],
    direction: [f32; 3],
    range: f32,
    cos_inner: f32,
    cos_outer: f32,
}

/// `RxpMaterials`: the device addresses of the frame's tables.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub(super) struct Tables {
    /// the draw table (what the setup kernels take too)
    pub draws: u64,
    materials: u64,
    textures: u64,
    levels: u64,
    texels: u64,
    lights: u64,
    to_linear: u64,
    nlights: u32,
    pad: u32,
}

// SAFETY: plain integers and floats with the layout of the CUDA structs (kernels/material.cuh).
unsafe impl DeviceRepr for LevelDesc {}
unsafe impl DeviceRepr for TextureDesc {}
unsafe impl DeviceRepr for TexUse {}
unsafe impl DeviceRepr for MaterialDesc {}
unsafe impl DeviceRepr for DrawDesc {}
unsafe impl DeviceRepr for LightDesc {}
unsafe impl DeviceRepr for Tables {}
// SAFETY: all-zero bytes are valid values of these plain structs.
unsafe impl ValidAsZeroBits for LevelDesc {}
unsafe impl ValidAsZeroBits for TextureDesc {}
unsafe impl ValidAsZeroBits for DrawDesc {}
unsafe impl ValidAsZeroBits for LightDesc {}

/// How a draw's triangles take part in rasterisation (the record flag bits RXP_F_MASK and
/// RXP_F_BLEND of kernels/raster.cuh): alpha-tested, composited after the opaque ones, or
/// neither.
pub(super) fn alpha_class(m: Option<&Material>, s: &RasterSettings) -> u32 {
    match m.map(|m| m.alpha) {
        Some(AlphaMode::Mask(_)) => 1,
        // blending composites in the lit mode; the other modes draw such triangles as opaque
        Some(AlphaMode::Blend) if s.shading == ShadingMode::Lit => 2,
        _ => 0,
    }
}

fn sampler_bits(t: &Texture) -> u32 {
    let wrap = |w: Wrap| match w {
        Wrap::Repeat => 0,
        Wrap::ClampToEdge => 1,
        Wrap::MirroredRepeat => 2,
    };
    let s = &t.sampler;
    wrap(s.wrap_s)
        | wrap(s.wrap_t) << 2
        | u32::from(s.mag == Filter::Linear) << 4
        | u32::from(s.min == Filter::Linear) << 5
        | match s.mipmap {
            None => 0,
            Some(Filter::Nearest) => 1,
            Some(Filter::Linear) => 2,
        } << 6
}

/// The frame's material data on the device.
pub(super) struct DeviceMaterials {
    /// the textures the texel buffer holds, by address, with their index in `textures` (the
    /// `Arc`s in `kept` keep the addresses from being reused)
    known: HashMap<usize, i32>,
    kept: Vec<Arc<Texture>>,
    texels: CudaSlice<u8>,
    levels: CudaSlice<LevelDesc>,
    textures: CudaSlice<TextureDesc>,
    to_linear: CudaSlice<f32>,
    draws: CudaSlice<DrawDesc>,
    materials: CudaSlice<MaterialDesc>,
    lights: CudaSlice<LightDesc>,
}

impl DeviceMaterials {
    pub fn new(gpu: &Gpu) -> Result<DeviceMaterials, GpuError> {
        // sRGB bytes to linear, then bytes to unsigned normalised values (kernels/material.cuh)
        let to_linear: Vec<f32> = rxpipe_core::color::srgb_to_linear_lut()
            .iter()
            .copied()
            .chain((0..256).map(|i| i as f32 / 255.0))
            .collect();
        Ok(DeviceMaterials {
            known: HashMap::new(),
            kept: Vec::new(),
            texels: gpu.zeros(4, "textures")?,
            levels: gpu.zeros(1, "texture levels")?,
            textures: gpu.zeros(1, "texture table")?,
            to_linear: gpu.upload(&to_linear, "the byte-to-float tables")?,
            draws: gpu.zeros(1, "draw table")?,
            // (MaterialDesc has no ValidAsZeroBits: its i32 texture fields are -1 when unused)
            materials: gpu.upload(
                &[material_desc(&Material::default(), &HashMap::new())],
                "material table",
            )?,
            lights: gpu.zeros(1, "light table")?,
        })
    }

    /// Uploads what the frame needs: the textures of `materials` when the buffer lacks one, and
    /// the tables of `draws` (each with its material's index among `materials`, or -1) and the
    /// frame's lights. Returns the tables' addresses for the raster kernel.
    pub fn prepare(
        &mut self,
        gpu: &Gpu,
        materials: &[&Material],
        draws: &[DrawDesc],
        s: &RasterSettings,
    ) -> Result<Tables, GpuError> {
        let used: Vec<&Arc<Texture>> = materials
            .iter()
            .flat_map(|m| m.textures())
            .map(|t: &TextureRef| &t.texture)
            .collect();
        if used.iter().any(|t| !self.known.contains_key(&key(t))) {
            self.upload_textures(gpu, &used)?;
        }
        let descs: Vec<MaterialDesc> = materials
            .iter()
            .map(|m| material_desc(m, &self.known))
            .collect();
        let lights: Vec<LightDesc> = s.lights.as_slice().iter().map(light_desc).collect();
        gpu.put(&mut self.materials, &descs, "material table")?;
        gpu.put(&mut self.draws, draws, "draw table")?;
        gpu.put(&mut self.lights, &lights, "light table")?;
        let stream = &gpu.stream;
        let addr = |p: (cudarc::driver::sys::CUdeviceptr, _)| p.0;
        Ok(Tables {
            draws: addr(self.draws.device_ptr(stream)),
            materials: addr(self.materials.device_ptr(stream)),
            textures: addr(self.textures.device_ptr(stream)),
            levels: addr(self.levels.device_ptr(stream)),
            texels: addr(self.texels.device_ptr(stream)),
            lights: addr(self.lights.device_ptr(stream)),
            to_linear: addr(self.to_linear.device_ptr(stream)),
            nlights: lights.len() as u32,
            pad: 0,
        })
    }

    /// Replaces the texture buffer with the textures `used` (each once).
    fn upload_textures(&mut self, gpu: &Gpu, used: &[&Arc<Texture>]) -> Result<(), GpuError> {
        self.known.clear();
        self.kept.clear();
        let mut levels = Vec::new();
        let mut textures = Vec::new();
        let mut bytes = 0usize;
        for t in used {
            if self.known.contains_key(&key(t)) {
                continue;
            }
            self.known.insert(key(t), textures.len() as i32);
            self.kept.push(Arc::clone(t));
            textures.push(TextureDesc {
                first_level: levels.len() as u32,
                levels: t.levels.len() as u32,
                srgb: t.srgb as u32,
                sampler: sampler_bits(t),
            });
            for l in &t.levels {
                levels.push(LevelDesc {
                    offset: (bytes / 4) as u64,
                    width: l.width,
                    height: l.height,
                });
                bytes += 4 * l.texels.len();
            }
        }
        // free the old buffer first: the two need not fit together
        self.texels = gpu.zeros(4, "textures")?;
        self.texels = gpu.zeros(bytes.max(4), "textures")?;
        let mut at = 0;
        for t in &self.kept {
            for l in &t.levels {
                let b: &[u8] = bytemuck::cast_slice(&l.texels);
                gpu.stream
                    .memcpy_htod(b, &mut self.texels.slice_mut(at..at + b.len()))
                    .ctx(&format!("uploading texture {}", t.name))?;
                at += b.len();
            }
        }
        self.levels = gpu.upload(&levels, "texture levels")?;
        self.textures = gpu.upload(&textures, "texture table")?;
        Ok(())
    }
}

use crate::gpu::Context;

/// A texture's identity: the address of its shared data.
fn key(t: &Arc<Texture>) -> usize {
    Arc::as_ptr(t) as usize
}

fn tex_use(t: &Option<TextureRef>, known: &HashMap<usize, i32>) -> TexUse {
    match t {
        Some(t) => TexUse {
            texture: known.get(&key(&t.texture)).copied().unwrap_or(-1),
            scale: t.scale,
            transformed: t.transform.is_some() as i32,
            m: t.transform.unwrap_or([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]),
            uv_set: t.uv_set.min(1) as i32,
        },
        None => TexUse {
            texture: -1,
            scale: 1.0,
            transformed: 0,
            m: [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
            uv_set: 0,
        },
    }
}

/// Which of `m`'s base colour, metallic-roughness and normal textures (bits 0, 1, 2) the GPU
/// samples together: those of [`Material::alike_slots`], the CPU's rule, that the device holds.
/// (The kernel groups the first three slots only, to keep its registers; an occlusion or
/// emissive texture alike the others is sampled on its own there, with the same values.)
fn alike_group(m: &Material, known: &HashMap<usize, i32>) -> u32 {
    let (slots, alike) = (m.sampled(), m.alike_slots());
    (0..3)
        .filter(|&k| alike >> k & 1 == 1)
        .filter(|&k| slots[k].is_some_and(|t| known.contains_key(&key(&t.texture))))
        .fold(0, |bits, k| bits | 1 << k)
}

fn material_desc(m: &Material, known: &HashMap<usize, i32>) -> MaterialDesc {
    let (alpha, cutoff) = match m.alpha {
        AlphaMode::Opaque => (0, 0.0),
        AlphaMode::Mask(c) => (2, c),
        AlphaMode::Blend => (4, 0.0),
    };
    MaterialDesc {
        base: m.base_color.to_array(),
        emissive: m.emissive.to_array(),
        metallic: m.metallic,
        roughness: m.roughness,
        cutoff,
        flags: m.unlit as u32 | alpha,
        alike: alike_group(m, known),
        tex: [
            tex_use(&m.base_color_texture, known),
            tex_use(&m.metallic_roughness_texture, known),
            tex_use(&m.normal_texture, known),
            tex_use(&m.occlusion_texture, known),
            tex_use(&m.emissive_texture, known),
        ],
        specular_f0: m.specular_f0.to_array(),
        specular_weight: m.specular_weight,
        clearcoat: m.clearcoat,
        clearcoat_roughness: m.clearcoat_roughness,
    }
}

/// A light as the kernel reads it: what the CPU's `PunctualLight::at` computes of the light alone
/// (a directional light's unit vector towards it and its radiance, a spot's unit axis and cone
/// cosines) is computed here once, with the same operations.
fn light_desc(l: &rxpipe_core::material::PunctualLight) -> LightDesc {
    let mut d = LightDesc {
        color: l.color.to_array(),
        intensity: l.intensity,
        position: l.position.to_array(),
        direction: l.direction.normalize_or_zero().to_array(),
        range: l.range.unwrap_or(0.0),
        ..Default::default()
    };
    match l.kind {
        LightKind::Directional => {
            d.kind = 0;
            d.direction = (-l.direction).normalize_or_zero().to_array();
            d.color = (l.color * l.intensity).to_array();
            d.intensity = 1.0;
        }
        LightKind::Point => d.kind = 1,
        LightKind::Spot { inner, outer } => {
            d.kind = 2;
            d.cos_inner = inner.cos();
            d.cos_outer = outer.cos();
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_layouts_match_the_kernels() {
        // kernels/material.cuh: the sizes the structs have there
        assert_eq!(std::mem::size_of::<LevelDesc>(), 16);
        assert_eq!(std::mem::size_of::<TextureDesc>(), 16);
        assert_eq!(std::mem::size_of::<TexUse>(), 40);
        assert_eq!(std::mem::size_of::<MaterialDesc>(), 48 + 5 * 40 + 16 + 8);
        assert_eq!(std::mem::size_of::<DrawDesc>(), 168);
        assert_eq!(std::mem::size_of::<LightDesc>(), 56);
        assert_eq!(std::mem::size_of::<Tables>(), 64);
    }

    #[test]
    fn alike_groups_are_the_cpus() {
        use rxpipe_core::material::texture::{Filter, Sampler};
        let tex = |w: u32, h: u32, sampler: Sampler| {
            let rgba = vec![128u8; (4 * w * h) as usize];
            Arc::new(Texture::new("t", w, h, &rgba, false, sampler).unwrap())
        };
        let (a, b, c) = (
            tex(8, 8, Sampler::default()),
            tex(8, 8, Sampler::default()),
            tex(8, 4, Sampler::default()),
        );
        let nearest = tex(
            8,
            8,
            Sampler {
                mag: Filter::Nearest,
                ..Sampler::default()
            },
        );
        let known: HashMap<usize, i32> = [&a, &b, &c, &nearest]
            .iter()
            .enumerate()
            .map(|(i, t)| (key(t), i as i32))
            .collect();
        let with =
            |base: Option<&Arc<Texture>>, mr: Option<&Arc<Texture>>, n: Option<&Arc<Texture>>| {
                Material {
                    base_color_texture: base.map(|t| TextureRef::new(t.clone())),
                    metallic_roughness_texture: mr.map(|t| TextureRef::new(t.clone())),
                    normal_texture: n.map(|t| TextureRef::new(t.clone())),
                    ..Material::default()
                }
            };
        // all three alike (Sponza's materials)
        assert_eq!(
            alike_group(&with(Some(&a), Some(&b), Some(&a)), &known),
            0b111
        );
        // a different size or sampler is sampled alone
        assert_eq!(
            alike_group(&with(Some(&a), Some(&c), Some(&b)), &known),
            0b101
        );
        assert_eq!(
            alike_group(&with(Some(&a), Some(&nearest), None), &known),
            0b001
        );
        // the lead is the first texture present
        assert_eq!(alike_group(&with(None, Some(&c), Some(&a)), &known), 0b010);
        assert_eq!(alike_group(&with(None, None, None), &known), 0);
        // a different transform is sampled alone
        let mut m = with(Some(&a), Some(&b), None);
        m.metallic_roughness_texture.as_mut().unwrap().transform =
            Some([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        assert_eq!(alike_group(&m, &known), 0b001);
        // an unlit material samples its base colour only
        let mut m = with(Some(&a), Some(&b), Some(&b));
        m.unlit = true;
        assert_eq!(alike_group(&m, &known), 0b001);
    }
}
