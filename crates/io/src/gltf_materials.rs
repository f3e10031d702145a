//! A glTF's materials, textures and images as [`rxpipe_core::material`] types: images decoded once
//! (PNG and JPEG through the `image` crate; embedded in the GLB, as data URIs, or in files beside
//! the glTF), each texture built once per colour space with its sampler and mip chain, each
//! material once.

use crate::error::IoError;
use gltf::texture::{MagFilter, MinFilter, WrappingMode};
use rxpipe_core::material::{AlphaMode, Filter, Material, Sampler, Texture, TextureRef, Wrap};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The largest side of an image rxpipe decodes.
const MAX_SIDE: u32 = 16384;

/// Builds a document's materials on demand, sharing what they share.
pub struct Materials<'a> {
    doc: &'a gltf::Document,
    buffers: &'a [gltf::buffer::Data],
    base: Option<&'a Path>,
    file: &'a str,
    images: HashMap<usize, Arc<(u32, u32, Vec<u8>)>>,
    textures: HashMap<(usize, bool), Arc<Texture>>,
    materials: HashMap<Option<usize>, Arc<Material>>,
    /// whether a specular-glossiness material was converted (said once, in a note)
    converted_specular: bool,
    /// what the user should know about the materials as built (textures left out)
    pub notes: Vec<String>,
}

impl<'a> Materials<'a> {
    pub fn new(
        doc: &'a gltf::Document,
        buffers: &'a [gltf::buffer::Data],
        base: Option<&'a Path>,
        file: &'a str,
    ) -> Self {
        Materials {
            doc,
            buffers,
            base,
            file,
            images: HashMap::new(),
            textures: HashMap::new(),
            materials: HashMap::new(),
            converted_specular: false,
            notes: Vec::new(),
        }
    }

    /// The KHR_texture_transform among a texture use's extensions (`others`: those the gltf
    /// crate leaves as JSON), or an error naming the material when it is malformed.
    fn extension_transform(
        &self,
        m: &gltf::Material,
        slot: &str,
        others: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Result<Option<ExtTransform>, IoError> {
        let Some(v) = others.and_then(|o| o.get("KHR_texture_transform")) else {
            return Ok(None);
        };
        let bad = |why: String| {
            self.err(
                material_place(m),
                format!("its {slot} texture's KHR_texture_transform {why}"),
            )
        };
        let t: ExtTransform =
            serde_json::from_value(v.clone()).map_err(|e| bad(format!("is malformed: {e}")))?;
        if !(t.offset.iter().chain(&t.scale).all(|x| x.is_finite()) && t.rotation.is_finite()) {
            return Err(bad("has a value that is not finite".into()));
        }
        Ok(Some(t))
    }

    /// A texture use whose KHR_texture_transform is among its extensions `others` (normal and
    /// occlusion textures): its reference, or none where it reads a third uv set.
    fn json_transformed_ref(
        &mut self,
        m: &gltf::Material,
        slot: &str,
        texture: gltf::Texture,
        set: u32,
        others: Option<&serde_json::Map<String, serde_json::Value>>,
        scale: f32,
    ) -> Result<Option<TextureRef>, IoError> {
        let t = self.extension_transform(m, slot, others)?;
        let set = t.and_then(|t| t.tex_coord).unwrap_or(set);
        let Some(uv) = self.uv_slot(m, slot, set) else {
            return Ok(None);
        };
        let transform = t.map(|t| matrix(t.offset, t.rotation, t.scale));
        Ok(Some(
            self.texture_ref(texture, false, transform, scale, uv)?,
        ))
    }

    /// The uv sets (TEXCOORD_n) the primitives of material `m` are loaded with: the base
    /// colour texture's (else the first texture's, else 0) as the mesh's `uvs`, and the first
    /// other set a texture of the material reads (metallic-roughness, normal, occlusion,
    /// emissive in that order) as its `uvs1`.
    pub fn uv_sets(&self, m: &gltf::Material) -> (u32, Option<u32>) {
        let pbr = m.pbr_metallic_roughness();
        let json = m.index().map(|i| &self.doc.as_json().materials[i]);
        // (normal and occlusion textures: KHR_texture_transform's texCoord from the JSON; a
        // malformed one is the material's error when it is built, not here)
        let json_set = |slot: &str, others: Option<&serde_json::Map<String, serde_json::Value>>| {
            self.extension_transform(m, slot, others)
                .ok()
                .flatten()
                .and_then(|t| t.tex_coord)
        };
        // (in the order their sets are taken: where three are read, the last ones' lose)
        let mut sets: Vec<u32> = [
            pbr.base_color_texture().map(|i| uv_set(&i)),
            pbr.metallic_roughness_texture().map(|i| uv_set(&i)),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let Some(sg) = m.pbr_specular_glossiness() {
            sets.extend(sg.diffuse_texture().map(|i| uv_set(&i)));
            sets.extend(sg.specular_glossiness_texture().map(|i| uv_set(&i)));
        }
        if let Some(n) = m.normal_texture() {
            let ext = json.and_then(|j| j.normal_texture.as_ref()?.extensions.as_ref());
            sets.push(json_set("normal", ext.map(|e| &e.others)).unwrap_or(n.tex_coord()));
        }
        if let Some(o) = m.occlusion_texture() {
            let ext = json.and_then(|j| j.occlusion_texture.as_ref()?.extensions.as_ref());
            sets.push(json_set("occlusion", ext.map(|e| &e.others)).unwrap_or(o.tex_coord()));
        }
        sets.extend(m.emissive_texture().map(|i| uv_set(&i)));
        // (the diffuse texture of specular-glossiness replaces the base colour's)
        let base = match m.pbr_specular_glossiness() {
            Some(sg) => sg.diffuse_texture().map(|i| uv_set(&i)),
            None => pbr.base_color_texture().map(|i| uv_set(&i)),
        };
        let first = base.or(sets.first().copied()).unwrap_or(0);
        (first, sets.into_iter().find(|&s| s != first))
    }

    /// Which of the mesh's uv sets ([`Materials::uv_sets`]) material `m`'s `slot` texture reads
    /// (TEXCOORD_`set`); none, with a note saying the texture is left out, where the material's
    /// textures read more than two sets (sampled at the wrong uvs, it would draw a pattern its
    /// author never made).
    fn uv_slot(&mut self, m: &gltf::Material, slot: &str, set: u32) -> Option<usize> {
        let (first, second) = self.uv_sets(m);
        if set == first {
            return Some(0);
        }
        if Some(set) == second {
            return Some(1);
        }
        self.notes.push(format!(
            "{}: {}: its {slot} texture reads TEXCOORD_{set}, and its other textures TEXCOORD_{first} and TEXCOORD_{}; rxpipe reads two uv sets a material: the texture is left out",
            self.file,
            material_place(m),
            second.unwrap_or(first),
        ));
        None
    }

    fn err(&self, location: String, message: String) -> IoError {
        IoError::Parse {
            file: self.file.to_string(),
            location,
            message,
        }
    }

    /// The material of a primitive (glTF's default material where it names none).
    pub fn material(&mut self, m: gltf::Material) -> Result<Arc<Material>, IoError> {
        if let Some(done) = self.materials.get(&m.index()) {
            return Ok(done.clone());
        }
        let pbr = m.pbr_metallic_roughness();
        let mut out = Material {
            name: m.name().unwrap_or("").to_string(),
            base_color: pbr.base_color_factor().into(),
            metallic: pbr.metallic_factor(),
            roughness: pbr.roughness_factor(),
            emissive: glam::Vec3::from(m.emissive_factor()) * m.emissive_strength().unwrap_or(1.0),
            alpha: match m.alpha_mode() {
                gltf::material::AlphaMode::Opaque => AlphaMode::Opaque,
                gltf::material::AlphaMode::Mask => AlphaMode::Mask(m.alpha_cutoff().unwrap_or(0.5)),
                gltf::material::AlphaMode::Blend => AlphaMode::Blend,
            },
            double_sided: m.double_sided(),
            unlit: m.unlit(),
            ..Default::default()
        };
        if let Some(i) = pbr.base_color_texture() {
            if let Some(uv) = self.uv_slot(&m, "base colour", uv_set(&i)) {
                out.base_color_texture =
                    Some(self.texture_ref(i.texture(), true, transform(&i), 1.0, uv)?);
            }
        }
        if let Some(i) = pbr.metallic_roughness_texture() {
            if let Some(uv) = self.uv_slot(&m, "metallic-roughness", uv_set(&i)) {
                out.metallic_roughness_texture =
                    Some(self.texture_ref(i.texture(), false, transform(&i), 1.0, uv)?);
            }
        }
        if let Some(i) = m.emissive_texture() {
            if let Some(uv) = self.uv_slot(&m, "emissive", uv_set(&i)) {
                out.emissive_texture =
                    Some(self.texture_ref(i.texture(), true, transform(&i), 1.0, uv)?);
            } else if out.emissive != glam::Vec3::ZERO {
                // the factor scales the texture: alone it would light the whole surface (a
                // white glow where the author painted a few lamps), so the material keeps no
                // emission, which is closer to its look
                out.emissive = glam::Vec3::ZERO;
                if let Some(n) = self.notes.last_mut() {
                    n.push_str(", and its emission with it (the factor alone would light the whole surface)");
                }
            }
        }
        // (the gltf crate reads KHR_texture_transform of these two from the JSON only)
        let json = m.index().map(|i| &self.doc.as_json().materials[i]);
        if let Some(n) = m.normal_texture() {
            let ext = json.and_then(|j| j.normal_texture.as_ref()?.extensions.as_ref());
            out.normal_texture = self.json_transformed_ref(
                &m,
                "normal",
                n.texture(),
                n.tex_coord(),
                ext.map(|e| &e.others),
                n.scale(),
            )?;
        }
        if let Some(o) = m.occlusion_texture() {
            let ext = json.and_then(|j| j.occlusion_texture.as_ref()?.extensions.as_ref());
            out.occlusion_texture = self.json_transformed_ref(
                &m,
                "occlusion",
                o.texture(),
                o.tex_coord(),
                ext.map(|e| &e.others),
                o.strength(),
            )?;
        }
        self.dielectric_specular(&m, &mut out)?;
        self.clearcoat(&m, &mut out)?;
        // (the extension's model, where the material has it, replaces metallic-roughness)
        if let Some(sg) = m.pbr_specular_glossiness() {
            self.specular_glossiness(&m, &sg, &mut out)?;
        }
        let out = Arc::new(out);
        self.materials.insert(m.index(), out.clone());
        Ok(out)
    }

    /// KHR_materials_ior and KHR_materials_specular: the dielectric part's reflectance at
    /// normal incidence, ((ior - 1) / (ior + 1))^2 times the specular colour (at most 1), and
    /// its weight, the specular factor. Their textures are left out, with a note.
    fn dielectric_specular(
        &mut self,
        m: &gltf::Material,
        out: &mut Material,
    ) -> Result<(), IoError> {
        let (ior, specular) = (m.ior(), m.specular());
        if ior.is_none() && specular.is_none() {
            return Ok(());
        }
        // (the default index, 1.5, gives 0.04: the core's value, kept exactly)
        let f0 = match ior {
            None => 0.04,
            Some(ior) if ior.is_finite() && ior >= 0.0 => ((ior - 1.0) / (ior + 1.0)).powi(2),
            Some(ior) => {
                return Err(self.err(
                    material_place(m),
                    format!(
                    "its KHR_materials_ior index of refraction {ior} is not a number of at least 0"
                ),
                ))
            }
        };
        let (color, weight) = match &specular {
            Some(s) => (
                glam::Vec3::from(s.specular_color_factor()),
                s.specular_factor(),
            ),
            None => (glam::Vec3::ONE, 1.0),
        };
        if !(color.is_finite() && weight.is_finite()) {
            return Err(self.err(
                material_place(m),
                "its KHR_materials_specular has a factor that is not finite".into(),
            ));
        }
        out.specular_f0 = (color.max(glam::Vec3::ZERO) * f0).min(glam::Vec3::ONE);
        out.specular_weight = weight.clamp(0.0, 1.0);
        if let Some(s) = specular {
            if s.specular_texture().is_some() || s.specular_color_texture().is_some() {
                self.notes.push(format!(
                    "{}: {}: its KHR_materials_specular textures are left out (their factors are drawn)",
                    self.file,
                    material_place(m)
                ));
            }
        }
        Ok(())
    }

    /// KHR_materials_clearcoat's factors: the coat's strength and roughness, each a number in
    /// [0, 1] (another is an error naming the material). Its textures are left out, with a note.
    fn clearcoat(&mut self, m: &gltf::Material, out: &mut Material) -> Result<(), IoError> {
        let Some(ext) = m.extension_value("KHR_materials_clearcoat") else {
            return Ok(());
        };
        let factor = |key: &str| -> Result<f32, IoError> {
            match ext.get(key) {
                None => Ok(0.0),
                Some(v) => v
                    .as_f64()
                    .filter(|f| (0.0..=1.0).contains(f))
                    .map(|f| f as f32)
                    .ok_or_else(|| {
                        self.err(
                            material_place(m),
                            format!(
                                "its KHR_materials_clearcoat {key} is {v}, not a number in [0, 1]"
                            ),
                        )
                    }),
            }
        };
        out.clearcoat = factor("clearcoatFactor")?;
        out.clearcoat_roughness = factor("clearcoatRoughnessFactor")?;
        let textures = [
            "clearcoatTexture",
            "clearcoatRoughnessTexture",
            "clearcoatNormalTexture",
        ];
        if textures.iter().any(|t| ext.get(t).is_some()) {
            self.notes.push(format!(
                "{}: {}: its KHR_materials_clearcoat textures are left out (its factors are drawn)",
                self.file,
                material_place(m)
            ));
        }
        Ok(())
    }

    /// KHR_materials_pbrSpecularGlossiness converted to metallic-roughness
    /// ([`super::gltf_specgloss`]): replaces `out`'s base colour, metallic and roughness and
    /// their textures.
    fn specular_glossiness(
        &mut self,
        m: &gltf::Material,
        sg: &gltf::material::PbrSpecularGlossiness,
        out: &mut Material,
    ) -> Result<(), IoError> {
        use super::gltf_specgloss::{convert_material, Converted, Source};
        let diffuse = sg
            .diffuse_texture()
            .and_then(|i| Some((self.uv_slot(m, "diffuse", uv_set(&i))?, i)));
        let mut glossy = sg
            .specular_glossiness_texture()
            .and_then(|i| Some((self.uv_slot(m, "specular-glossiness", uv_set(&i))?, i)));
        // the conversion reads both at one place: a second texture placed differently is left
        // out (its factors stay)
        if let (Some(d), Some(g)) = (&diffuse, &glossy) {
            if transform(&d.1) != transform(&g.1) || d.0 != g.0 {
                self.notes.push(format!(
                    "{}: {}: its diffuse and specular-glossiness textures have different texture transforms or uv sets, which the conversion to metallic-roughness cannot combine: the specular-glossiness texture is left out",
                    self.file,
                    material_place(m)
                ));
                glossy = None;
            }
        }
        let diffuse_image = match &diffuse {
            Some((_, i)) => Some(self.texture_image(&i.texture())?),
            None => None,
        };
        let glossy_image = match &glossy {
            Some((_, i)) => Some(self.texture_image(&i.texture())?),
            None => None,
        };
        fn view(img: &Option<Arc<(u32, u32, Vec<u8>)>>) -> Option<(u32, u32, &[u8])> {
            img.as_deref().map(|(w, h, px)| (*w, *h, &px[..]))
        }
        // (the converted textures, with their mip chains, beside the images they come from)
        let (w, h) = [&diffuse_image, &glossy_image]
            .into_iter()
            .flatten()
            .fold((0u64, 0u64), |(w, h), i| {
                (w.max(i.0 as u64), h.max(i.1 as u64))
            });
        rxpipe_core::limits::check_host(2 * 4 * w * h * 4 / 3, || {
            format!(
                "{}: {} converted from specular-glossiness",
                self.file,
                material_place(m)
            )
        })
        .map_err(|e| self.err(material_place(m), e.to_string()))?;
        let converted = convert_material(&Source {
            diffuse_factor: sg.diffuse_factor().into(),
            specular_factor: sg.specular_factor().into(),
            glossiness_factor: sg.glossiness_factor(),
            diffuse: view(&diffuse_image),
            specular_glossiness: view(&glossy_image),
        });
        match converted {
            Converted::Factors(f) => {
                out.base_color = f.base;
                out.metallic = f.metallic;
                out.roughness = f.roughness;
                out.base_color_texture = None;
                out.metallic_roughness_texture = None;
            }
            Converted::Textures {
                width,
                height,
                base,
                metallic_roughness,
            } => {
                let (uv_set, info) = diffuse.as_ref().or(glossy.as_ref()).expect("a texture");
                let s = sampler(info.texture().sampler());
                let place = material_place(m);
                let texture = |what: &str, texels: &[u8], srgb: bool| {
                    Texture::new(
                        format!("{place}: {what} converted from specular-glossiness"),
                        width,
                        height,
                        texels,
                        srgb,
                        s,
                    )
                    .map(|t| TextureRef {
                        texture: Arc::new(t),
                        transform: transform(info),
                        scale: 1.0,
                        uv_set: *uv_set,
                    })
                    .map_err(|e| self.err(place.clone(), e.to_string()))
                };
                out.base_color_texture = Some(texture("base colour", &base, true)?);
                out.metallic_roughness_texture =
                    Some(texture("metallic-roughness", &metallic_roughness, false)?);
                out.base_color = glam::Vec4::ONE;
                out.metallic = 1.0;
                out.roughness = 1.0;
            }
        }
        if !self.converted_specular {
            self.converted_specular = true;
            self.notes.push(format!(
                "{}: materials of KHR_materials_pbrSpecularGlossiness are converted to metallic-roughness when loaded (an approximation: a specular colour that is neither a dielectric's grey nor a metal's becomes the nearest blend of the two)",
                self.file
            ));
        }
        Ok(())
    }

    fn texture_ref(
        &mut self,
        t: gltf::Texture,
        srgb: bool,
        transform: Option<[f32; 6]>,
        scale: f32,
        uv_set: usize,
    ) -> Result<TextureRef, IoError> {
        Ok(TextureRef {
            texture: self.texture(t, srgb)?,
            transform,
            scale,
            uv_set,
        })
    }

    /// Texture `t` with its sampler, its texels sRGB-encoded where `srgb`.
    fn texture(&mut self, t: gltf::Texture, srgb: bool) -> Result<Arc<Texture>, IoError> {
        if let Some(done) = self.textures.get(&(t.index(), srgb)) {
            return Ok(done.clone());
        }
        let img = self.source(&t)?;
        let name = match &self.doc.as_json().images[img.index()].uri {
            Some(uri) if !uri.starts_with("data:") => uri.to_string(),
            _ => format!("image {}", img.index()),
        };
        let data = self.image(img)?;
        let sampler = sampler(t.sampler());
        let (w, h, rgba) = &*data;
        let tex = Texture::new(name, *w, *h, rgba, srgb, sampler)
            .map_err(|e| self.err(format!("texture {}", t.index()), e.to_string()))?;
        let tex = Arc::new(tex);
        self.textures.insert((t.index(), srgb), tex.clone());
        Ok(tex)
    }

    /// The image texture `t` reads: its EXT_texture_webp source where it names one (WebP is
    /// decoded), else its own `source` (absent only in files that require an extension).
    fn source(&self, t: &gltf::Texture) -> Result<gltf::Image<'a>, IoError> {
        let webp = t
            .extension_value("EXT_texture_webp")
            .and_then(|e| e.get("source"))
            .and_then(|s| s.as_u64());
        let place = || format!("texture {}", t.index());
        let index = match webp {
            Some(i) => i as usize,
            None => match t.source() {
                Some(img) => img.index(),
                None => return Err(self.err(place(), "has no source image".into())),
            },
        };
        self.doc.images().nth(index).ok_or_else(|| {
            self.err(
                place(),
                format!("its EXT_texture_webp source {index} is not an image of the file"),
            )
        })
    }

    /// The image of texture `t`, decoded.
    fn texture_image(&mut self, t: &gltf::Texture) -> Result<Arc<(u32, u32, Vec<u8>)>, IoError> {
        let img = self.source(t)?;
        self.image(img)
    }

    /// Image `img` decoded to RGBA8 (once per image).
    fn image(&mut self, img: gltf::Image) -> Result<Arc<(u32, u32, Vec<u8>)>, IoError> {
        if let Some(done) = self.images.get(&img.index()) {
            return Ok(done.clone());
        }
        // (from the JSON: the gltf crate's Image::source unwraps a missing mimeType or uri)
        let json = &self.doc.as_json().images[img.index()];
        // (named by its file too where it is read from one; a long name shortened)
        let loc = match (&json.buffer_view, &json.uri) {
            (None, Some(uri)) if !uri.starts_with("data:") => {
                let short: String = uri.chars().take(120).collect();
                let more = if short.len() < uri.len() { "..." } else { "" };
                format!("image {} ('{short}{more}')", img.index())
            }
            _ => format!("image {}", img.index()),
        };
        let source = match (&json.buffer_view, &json.uri) {
            (Some(v), _) => self
                .doc
                .views()
                .nth(v.value())
                .map(|view| gltf::image::Source::View {
                    view,
                    mime_type: "",
                }),
            (None, Some(uri)) => Some(gltf::image::Source::Uri {
                uri,
                mime_type: None,
            }),
            (None, None) => None,
        }
        .ok_or_else(|| self.err(loc.clone(), "has neither a buffer view nor a uri".into()))?;
        let bytes: std::borrow::Cow<[u8]> = match source {
            gltf::image::Source::View { view, .. } => {
                let buf = self.buffers.get(view.buffer().index()).ok_or_else(|| {
                    self.err(loc.clone(), "its buffer view's buffer is missing".into())
                })?;
                let (s, n) = (view.offset(), view.length());
                match s.checked_add(n).filter(|&e| e <= buf.0.len()) {
                    Some(e) => std::borrow::Cow::Borrowed(&buf.0[s..e]),
                    None => {
                        return Err(self.err(
                            loc,
                            format!(
                                "buffer view {} ({n} bytes at {s}) lies outside its {}-byte buffer",
                                view.index(),
                                buf.0.len()
                            ),
                        ))
                    }
                }
            }
            gltf::image::Source::Uri { uri, .. } => {
                if let Some(rest) = uri.strip_prefix("data:") {
                    let b64 = rest.split_once(";base64,").map(|(_, d)| d).ok_or_else(|| {
                        self.err(loc.clone(), "a data URI that is not base64".into())
                    })?;
                    std::borrow::Cow::Owned(base64::decode(b64).map_err(|e| {
                        self.err(loc.clone(), format!("its data URI does not decode: {e}"))
                    })?)
                } else {
                    let dir = self.base.ok_or_else(|| {
                        self.err(
                            loc.clone(),
                            format!("refers to the file '{uri}', but the data has no folder to find it in"),
                        )
                    })?;
                    if !super::gltf_accessor::percent_decodes_to_utf8(uri) {
                        return Err(self.err(loc, "its uri does not decode to UTF-8 text".into()));
                    }
                    let path = dir.join(super::gltf_accessor::percent_decode(uri));
                    std::borrow::Cow::Owned(crate::files::read_file(&path).map_err(|e| {
                        self.err(
                            loc.clone(),
                            format!("cannot read its file {}: {e}", path.display()),
                        )
                    })?)
                }
            }
        };
        let decoded = decode(&bytes).map_err(|e| self.err(loc, e))?;
        let decoded = Arc::new(decoded);
        self.images.insert(img.index(), decoded.clone());
        Ok(decoded)
    }
}

/// A glTF sampler as rxpipe's (no filter given: linear, with linear mipmaps).
fn sampler(s: gltf::texture::Sampler) -> Sampler {
    let wrap = |w: WrappingMode| match w {
        WrappingMode::ClampToEdge => Wrap::ClampToEdge,
        WrappingMode::MirroredRepeat => Wrap::MirroredRepeat,
        WrappingMode::Repeat => Wrap::Repeat,
    };
    let (min, mipmap) = match s.min_filter() {
        Some(MinFilter::Nearest) => (Filter::Nearest, None),
        Some(MinFilter::Linear) => (Filter::Linear, None),
        Some(MinFilter::NearestMipmapNearest) => (Filter::Nearest, Some(Filter::Nearest)),
        Some(MinFilter::LinearMipmapNearest) => (Filter::Linear, Some(Filter::Nearest)),
        Some(MinFilter::NearestMipmapLinear) => (Filter::Nearest, Some(Filter::Linear)),
        Some(MinFilter::LinearMipmapLinear) | None => (Filter::Linear, Some(Filter::Linear)),
    };
    Sampler {
        wrap_s: wrap(s.wrap_s()),
        wrap_t: wrap(s.wrap_t()),
        mag: match s.mag_filter() {
            Some(MagFilter::Nearest) => Filter::Nearest,
            _ => Filter::Linear,
        },
        min,
        mipmap,
    }
}

/// PNG, JPEG or WebP bytes (recognised by content) to RGBA8, refusing sides past [`MAX_SIDE`]
/// and images that would not fit the host's memory, before decoding.
pub fn decode(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), String> {
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    match reader.format() {
        Some(image::ImageFormat::Png | image::ImageFormat::Jpeg | image::ImageFormat::WebP) => {}
        // (the image crate knows more formats than this build decodes)
        Some(f) => {
            return Err(format!(
                "a {f:?} image: textures are read from PNG, JPEG and WebP images only"
            ))
        }
        None => return Err("not a PNG, JPEG or WebP image".into()),
    }
    let (w, h) = reader.into_dimensions().map_err(|e| e.to_string())?;
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(format!(
            "a {w}x{h} image is not supported (1 to {MAX_SIDE} texels a side)"
        ));
    }
    // the decoded image, its RGBA8 copy and its mip chain
    let need = 3 * 4 * w as u64 * h as u64;
    rxpipe_core::limits::check_host(need, || format!("a {w}x{h} image"))
        .map_err(|e| e.to_string())?;
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(need.max(64 << 20));
    reader.limits(limits);
    let img = reader.decode().map_err(|e| e.to_string())?;
    let rgba = img.into_rgba8();
    Ok((w, h, rgba.into_raw()))
}

/// How notes and errors name a material: its index and name ('default' for glTF's default).
fn material_place(m: &gltf::Material) -> String {
    match m.index() {
        Some(i) => format!("material {i} ('{}')", m.name().unwrap_or("")),
        None => "the default material".into(),
    }
}

/// The uv set a texture use reads: its texCoord, or KHR_texture_transform's override of it.
fn uv_set(info: &gltf::texture::Info) -> u32 {
    info.texture_transform()
        .and_then(|t| t.tex_coord())
        .unwrap_or(info.tex_coord())
}

/// A texture use's KHR_texture_transform as a 2x3 matrix (translation * rotation * scale).
fn transform(info: &gltf::texture::Info) -> Option<[f32; 6]> {
    let t = info.texture_transform()?;
    Some(matrix(t.offset(), t.rotation(), t.scale()))
}

/// KHR_texture_transform's matrix (translation * rotation * scale) as a 2x3 matrix.
fn matrix([ox, oy]: [f32; 2], r: f32, [sx, sy]: [f32; 2]) -> [f32; 6] {
    let (s, c) = r.sin_cos();
    // columns: (c sx, -s sx), (s sy, c sy), (ox, oy) as the extension's matrix
    [c * sx, -s * sx, s * sy, c * sy, ox, oy]
}

/// KHR_texture_transform as the JSON states it (for the normal and occlusion textures, whose
/// extension the gltf crate does not read).
#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(default)]
struct ExtTransform {
    offset: [f32; 2],
    rotation: f32,
    scale: [f32; 2],
    #[serde(rename = "texCoord")]
    tex_coord: Option<u32>,
}

impl Default for ExtTransform {
    fn default() -> Self {
        ExtTransform {
            offset: [0.0, 0.0],
            rotation: 0.0,
            scale: [1.0, 1.0],
            tex_coord: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn images_of_other_formats_are_refused_by_name() {
        // a GIF file's header: the image crate recognises it, this build does not decode it
        let mut gif = b"GIF89a\x01\0\x01\0\0\0\0".to_vec();
        gif.resize(32, 0);
        let e = decode(&gif).unwrap_err();
        assert!(e.contains("Gif") && e.contains("PNG, JPEG and WebP"), "{e}");
        let e = decode(b"not an image at all").unwrap_err();
        assert_eq!(e, "not a PNG, JPEG or WebP image");
    }

    #[test]
    fn webp_images_decode_to_their_texels() {
        // a lossless WebP of 3x2 texels, alpha included, decodes to the same bytes
        let texels: Vec<u8> = (0..24u8).map(|k| k * 10 + 5).collect();
        let mut webp = Vec::new();
        image::codecs::webp::WebPEncoder::new_lossless(&mut webp)
            .encode(&texels, 3, 2, image::ExtendedColorType::Rgba8)
            .unwrap();
        assert_eq!(decode(&webp).unwrap(), (3, 2, texels));
    }
}
