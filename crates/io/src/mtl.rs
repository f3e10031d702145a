//! Wavefront MTL material libraries, as an OBJ file names them (`mtllib`, `usemtl`), read as
//! rxpipe's metallic-roughness materials so that OBJ scenes draw with their colours and textures.
//!
//! What is read, and how it maps:
//! - `Kd` (default 1) and `map_Kd` (sRGB): the base colour, factor times texture;
//! - `d`, or `Tr` as 1 - d: the base colour's alpha; below 1 the material blends;
//!   `map_d` naming the `map_Kd` image: its alpha cuts out (alpha mask at 0.5);
//! - `Pr` (the PBR extension's roughness), else `Ns` as the roughness (2 / (Ns + 2))^(1/4), the
//!   GGX roughness whose distribution matches a Blinn-Phong lobe of that exponent (1 where
//!   neither is given); `Pm` as the metalness (0 where absent);
//! - `Ke` and `map_Ke` (sRGB): the emissive colour;
//! - `norm`: a tangent-space normal map, as glTF's normal texture.
//!
//! A texture's options (`-o`, `-s`, `-clamp`, ...) are skipped; bump maps (`map_Bump`, `bump`:
//! height or normal maps, the files do not say which), `map_Pr` and `map_Pm`, `Ks`, `Ka`, `illum`
//! and other statements are not drawn, and each one a material uses is named once in a
//! note. A library or texture that cannot be read is a note too (the scene draws without it),
//! as is a `usemtl` naming a material no library defines; a malformed number is an error
//! naming the library's file and line.
//!
//! OBJ texture coordinates have v up where glTF's (and rxpipe's textures) have v down: the parts
//! drawn with a material get v flipped.

use super::obj::MaterialUses;
use crate::error::IoError;
use glam::{Vec2, Vec3};
use rxpipe_core::material::{AlphaMode, Material, Sampler, Texture, TextureRef};
use rxpipe_core::mesh::Mesh;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An OBJ mesh split into one part per material, with what loading said.
#[derive(Debug, Default)]
pub struct ObjScene {
    pub meshes: Vec<Mesh>,
    pub notes: Vec<String>,
}

/// One `newmtl` as the library states it.
#[derive(Debug, Default)]
struct Entry {
    kd: Option<Vec3>,
    ke: Option<Vec3>,
    ns: Option<f32>,
    /// the PBR extension's roughness and metalness (`Pr`, `Pm`)
    pr: Option<f32>,
    pm: Option<f32>,
    alpha: Option<f32>,
    map_kd: Option<String>,
    map_ke: Option<String>,
    map_d: Option<String>,
    /// a tangent-space normal map (`norm`)
    norm: Option<String>,
    /// statements seen that are not drawn
    unsupported: Vec<String>,
}

/// The textures of one load, each image read and decoded once (`None`: could not be).
type Textures = HashMap<(PathBuf, bool), Option<Arc<Texture>>>;

/// Splits `mesh` (parsed from `file`, in the folder `dir`) into one part per material its
/// `uses` name, with the materials of its libraries. A mesh that names no material comes back
/// as it is.
pub fn apply(mesh: Mesh, uses: &MaterialUses, file: &str, dir: &Path) -> Result<ObjScene, IoError> {
    let mut out = ObjScene::default();
    if uses.uses.is_empty() {
        out.meshes.push(mesh);
        return Ok(out);
    }
    if uses.libraries.is_empty() {
        out.notes.push(format!(
            "{file}: names materials (usemtl) but no library (mtllib): drawn in the lit mode"
        ));
        out.meshes.push(mesh);
        return Ok(out);
    }
    // the libraries' entries, the first definition of a name winning
    let mut entries: HashMap<String, (Entry, PathBuf)> = HashMap::new();
    let mut read_any = false;
    for lib in &uses.libraries {
        let path = dir.join(lib.replace('\\', "/"));
        let text = match crate::files::read_file(&path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                out.notes.push(format!(
                    "{file}: its material library {} cannot be read ({e}): drawn without its materials",
                    path.display()
                ));
                continue;
            }
        };
        read_any = true;
        let lib_dir = path.parent().unwrap_or(dir).to_path_buf();
        for (name, e) in parse(&text, &path.display().to_string())? {
            entries.entry(name).or_insert((e, lib_dir.clone()));
        }
    }
    // each material used, made once
    let mut textures = Textures::new();
    let mut made: HashMap<&str, Option<Arc<Material>>> = HashMap::new();
    let mut not_drawn = NotDrawn::default();
    for (name, _) in &uses.uses {
        if made.contains_key(name.as_str()) {
            continue;
        }
        let m = match entries.get(name) {
            Some((e, lib_dir)) => Some(Arc::new(material(
                name,
                e,
                lib_dir,
                file,
                &mut textures,
                &mut out,
                &mut not_drawn,
            ))),
            None => {
                if read_any {
                    out.notes.push(format!(
                        "{file}: usemtl '{name}' names a material no library defines: drawn in the lit mode"
                    ));
                }
                None
            }
        };
        made.insert(name, m);
    }
    out.notes.extend(not_drawn.notes(file));
    if made.values().all(Option::is_none) {
        out.meshes.push(mesh);
        return Ok(out);
    }
    // the triangles of each material, parts in the order of their first use (those before the
    // first usemtl, or of an undefined material, form the part without one)
    let tris = mesh.triangle_count();
    let mut part_of_name: HashMap<Option<&str>, usize> = HashMap::new();
    let mut parts: Vec<(Option<Arc<Material>>, Vec<usize>)> = Vec::new();
    let mut bounds: Vec<(Option<&str>, usize, usize)> = Vec::new();
    let first = uses.uses[0].1.min(tris);
    if first > 0 {
        bounds.push((None, 0, first));
    }
    for (k, (name, start)) in uses.uses.iter().enumerate() {
        let end = uses.uses.get(k + 1).map_or(tris, |u| u.1).min(tris);
        let key = made[name.as_str()].as_ref().map(|_| name.as_str());
        bounds.push((key, (*start).min(tris), end));
    }
    for (key, start, end) in bounds {
        if start >= end {
            continue;
        }
        let p = *part_of_name.entry(key).or_insert_with(|| {
            parts.push((key.and_then(|n| made[n].clone()), Vec::new()));
            parts.len() - 1
        });
        parts[p].1.extend(start..end);
    }
    // (one map from old to new vertex numbers for all parts, each part resetting what it set)
    let mut new_of = vec![u32::MAX; mesh.vertex_count()];
    for (material, triangles) in parts {
        out.meshes
            .push(part(&mesh, &triangles, material, file, &mut new_of));
    }
    Ok(out)
}

/// The triangles `triangles` of `mesh` as a compact mesh with `material` (v flipped where it
/// has one). `new_of` holds `u32::MAX` for every vertex, and does again on return.
fn part(
    mesh: &Mesh,
    triangles: &[usize],
    material: Option<Arc<Material>>,
    file: &str,
    new_of: &mut [u32],
) -> Mesh {
    let mut old_of: Vec<u32> = Vec::new();
    let mut indices = Vec::with_capacity(triangles.len() * 3);
    for &t in triangles {
        for &i in &mesh.indices[3 * t..3 * t + 3] {
            let n = &mut new_of[i as usize];
            if *n == u32::MAX {
                *n = old_of.len() as u32;
                old_of.push(i);
            }
            indices.push(*n);
        }
    }
    for &o in &old_of {
        new_of[o as usize] = u32::MAX;
    }
    fn gather<T: Copy>(v: &[T], old_of: &[u32]) -> Vec<T> {
        old_of.iter().map(|&o| v[o as usize]).collect()
    }
    let flip = material.is_some();
    Mesh {
        name: match &material {
            Some(m) => format!("{file}: {}", m.name),
            None => file.to_string(),
        },
        positions: gather(&mesh.positions, &old_of),
        normals: mesh.normals.as_ref().map(|n| gather(n, &old_of)),
        uvs: mesh.uvs.as_ref().map(|uv| {
            let uv = gather(uv, &old_of);
            if flip {
                uv.into_iter().map(|t| Vec2::new(t.x, 1.0 - t.y)).collect()
            } else {
                uv
            }
        }),
        uvs1: None,
        colors: mesh.colors.as_ref().map(|c| gather(c, &old_of)),
        indices,
        base_color: mesh.base_color,
        tangents: None,
        material,
    }
}

/// The statements materials use that are not drawn, each with the materials that use it, for
/// one note per statement (a library of thousands of materials gives a few lines, not thousands).
#[derive(Default)]
struct NotDrawn {
    /// statements in the order first met, each with its materials
    uses: Vec<(String, Vec<String>)>,
    at: HashMap<String, usize>,
}

/// How many materials a not-drawn note names before it counts the rest.
const NAMED: usize = 8;

impl NotDrawn {
    /// Notes that material `name` uses `what`.
    fn add(&mut self, what: &str, name: &str) {
        let k = *self.at.entry(what.to_string()).or_insert_with(|| {
            self.uses.push((what.to_string(), Vec::new()));
            self.uses.len() - 1
        });
        self.uses[k].1.push(name.to_string());
    }

    /// The notes, one per statement: `FILE: WHAT is not drawn (used by 'a', 'b' and 3 more)`.
    fn notes(self, file: &str) -> impl Iterator<Item = String> + '_ {
        self.uses.into_iter().map(move |(what, names)| {
            let listed: Vec<String> = names.iter().take(NAMED).map(|n| format!("'{n}'")).collect();
            let more = match names.len().saturating_sub(NAMED) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            format!(
                "{file}: {what} is not drawn (used by {}{more})",
                listed.join(", ")
            )
        })
    }
}

/// The material `name` of `e`, its textures read from `dir` (notes for what is not drawn).
fn material(
    name: &str,
    e: &Entry,
    dir: &Path,
    file: &str,
    textures: &mut Textures,
    out: &mut ObjScene,
    not_drawn: &mut NotDrawn,
) -> Material {
    let mut texture = |map: &Option<String>, srgb: bool, out: &mut ObjScene| {
        let path = dir.join(map.as_ref()?.replace('\\', "/"));
        let key = (path.clone(), srgb);
        if let Some(t) = textures.get(&key) {
            return t.clone().map(TextureRef::new);
        }
        let t = match crate::files::read_file(&path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| super::gltf_materials::decode(&bytes))
            .and_then(|(w, h, rgba)| {
                Texture::new(
                    path.display().to_string(),
                    w,
                    h,
                    &rgba,
                    srgb,
                    Sampler::default(),
                )
                .map_err(|e| e.to_string())
            }) {
            Ok(t) => Some(Arc::new(t)),
            Err(err) => {
                out.notes.push(format!(
                    "{file}: material '{name}': its texture {} is left out: {err}",
                    path.display()
                ));
                None
            }
        };
        textures.insert(key, t.clone());
        t.map(TextureRef::new)
    };
    let base_color_texture = texture(&e.map_kd, true, out);
    let emissive_texture = texture(&e.map_ke, true, out);
    let normal_texture = texture(&e.norm, false, out);
    let alpha = e.alpha.unwrap_or(1.0).clamp(0.0, 1.0);
    let mask = e.map_d.is_some() && e.map_d == e.map_kd && base_color_texture.is_some();
    for u in &e.unsupported {
        not_drawn.add(u, name);
    }
    if e.map_d.is_some() && !mask {
        not_drawn.add("map_d (an alpha image other than map_Kd's)", name);
    }
    let kd = e.kd.unwrap_or(Vec3::ONE);
    Material {
        name: name.to_string(),
        base_color: kd.extend(alpha),
        base_color_texture,
        metallic: e.pm.unwrap_or(0.0).clamp(0.0, 1.0),
        roughness: match (e.pr, e.ns) {
            (Some(pr), _) => pr.clamp(0.0, 1.0),
            (None, Some(ns)) => (2.0 / (ns.max(0.0) + 2.0)).powf(0.25).clamp(0.0, 1.0),
            (None, None) => 1.0,
        },
        normal_texture,
        emissive: e.ke.unwrap_or(Vec3::ZERO),
        emissive_texture,
        alpha: if mask {
            AlphaMode::Mask(0.5)
        } else if alpha < 1.0 {
            AlphaMode::Blend
        } else {
            AlphaMode::Opaque
        },
        ..Default::default()
    }
}

/// The files an OBJ file refers to: its material libraries and the images they name, resolved
/// as [`apply`] resolves them (none that cannot be read); none for a file not named .obj (or
/// .obj.gz). Reads the OBJ (through gzip where it is gzipped) for its `mtllib` lines only.
pub fn referenced_files(obj: &Path) -> Vec<PathBuf> {
    use std::io::{BufRead, BufReader, Read};
    if !crate::files::named(obj, &["obj"]) {
        return Vec::new();
    }
    let Ok(file) = std::fs::File::open(obj) else {
        return Vec::new();
    };
    let mut file = BufReader::new(file);
    let gzipped = file.fill_buf().is_ok_and(|b| b.starts_with(&[0x1f, 0x8b]));
    let input: Box<dyn Read> = if gzipped {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let dir = obj.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    let mut l = String::new();
    let mut input = BufReader::new(input);
    // (as the parser reads it: a line too long, or not text, ends the search)
    while super::text::read_line_capped(&mut input, &mut l).is_ok_and(|n| n > 0) {
        let Some(rest) = l.trim_start().strip_prefix("mtllib") else {
            continue;
        };
        let lib = dir.join(rest.trim().replace('\\', "/"));
        let Ok(text) = crate::files::read_file(&lib) else {
            continue;
        };
        let lib_dir = lib.parent().unwrap_or(dir).to_path_buf();
        for l in String::from_utf8_lossy(&text).lines() {
            let l = l.trim();
            let tag = l.split_ascii_whitespace().next().unwrap_or("");
            if tag.starts_with("map_") || matches!(tag, "bump" | "disp" | "decal" | "refl" | "norm")
            {
                if let Some(n) = texture_name(l[tag.len()..].trim()) {
                    out.push(lib_dir.join(n.replace('\\', "/")));
                }
            }
        }
        out.push(lib);
    }
    out
}

/// The entries of an MTL library's text, in order; `file` names it in errors.
fn parse(text: &str, file: &str) -> Result<Vec<(String, Entry)>, IoError> {
    let mut out: Vec<(String, Entry)> = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let err = |message: String| IoError::Parse {
            file: file.to_string(),
            location: format!("line {}", k + 1),
            message,
        };
        let mut it = l.split_ascii_whitespace();
        let tag = it.next().unwrap_or("");
        let rest = l[tag.len()..].trim();
        if tag == "newmtl" {
            out.push((rest.to_string(), Entry::default()));
            continue;
        }
        let Some((_, e)) = out.last_mut() else {
            // statements before the first newmtl belong to no material
            continue;
        };
        let number = |s: &str| {
            s.parse::<f32>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| err(format!("'{s}' is not a number")))
        };
        let color = |it: &mut std::str::SplitAsciiWhitespace| {
            let first = it
                .next()
                .ok_or_else(|| err(format!("{tag} needs a colour")))?;
            if first == "spectral" || first == "xyz" {
                return Err(err(format!("{tag} {first}: only RGB colours are read")));
            }
            let r = number(first)?;
            // one value stands for all three
            let g = it.next().map(number).transpose()?.unwrap_or(r);
            let b = it.next().map(number).transpose()?.unwrap_or(r);
            Ok(Vec3::new(r, g, b))
        };
        match tag {
            "Kd" => e.kd = Some(color(&mut it)?),
            "Ke" => e.ke = Some(color(&mut it)?),
            "Ns" => e.ns = Some(number(it.next().unwrap_or(""))?),
            "Pr" => e.pr = Some(number(it.next().unwrap_or(""))?),
            "Pm" => e.pm = Some(number(it.next().unwrap_or(""))?),
            "norm" => e.norm = texture_name(rest),
            "d" => {
                // (`d -halo f`: the halo is not drawn)
                let v = it.find(|s| !s.starts_with('-')).unwrap_or("");
                e.alpha = Some(number(v)?);
            }
            "Tr" => e.alpha = Some(1.0 - number(it.next().unwrap_or(""))?),
            "map_Kd" => e.map_kd = texture_name(rest),
            "map_Ke" => e.map_ke = texture_name(rest),
            "map_d" => e.map_d = texture_name(rest),
            // (the Phong terms the mapping replaces)
            "Ka" | "Ks" | "Ni" | "illum" | "Tf" => {}
            other => {
                if !e.unsupported.iter().any(|u| u == other) {
                    e.unsupported.push(other.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// The file a `map_*` statement names after its options (`-o u v w`, `-s ...`, `-clamp on`, ...).
fn texture_name(rest: &str) -> Option<String> {
    let words: Vec<&str> = rest.split_ascii_whitespace().collect();
    let mut k = 0;
    while k < words.len() && words[k].starts_with('-') {
        let takes_numbers = matches!(words[k], "-o" | "-s" | "-t" | "-mm");
        k += 1;
        if takes_numbers {
            // up to three numbers follow
            let mut n = 0;
            while n < 3 && k < words.len() && words[k].parse::<f32>().is_ok() {
                k += 1;
                n += 1;
            }
        } else if k < words.len() {
            // one value (`on`, `off`, a channel, a number)
            k += 1;
        }
    }
    (k < words.len()).then(|| words[k..].join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texture_names_follow_their_options() {
        assert_eq!(texture_name("wood.png").as_deref(), Some("wood.png"));
        assert_eq!(
            texture_name("-s 2 2 1 -clamp on my wood.png").as_deref(),
            Some("my wood.png")
        );
        assert_eq!(
            texture_name("-o 0.5 -bm 0.3 b.jpg").as_deref(),
            Some("b.jpg")
        );
        assert_eq!(texture_name("-clamp on"), None);
    }

    #[test]
    fn entries_read_colours_numbers_and_maps() {
        let text =
            "# lib\nnewmtl a\nKd 0.5 0.25 1\nNs 96\nd 0.5\nmap_Kd -s 1 1 1 a.png\nmap_Bump n.png\n\
                    newmtl b\nKe 1\nTr 0.25\nPr 0.3\nPm 1\nnorm -bm 1 n b.png\nPc 0.5\n";
        let e = parse(text, "x.mtl").unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].0, "a");
        assert_eq!(e[0].1.kd, Some(Vec3::new(0.5, 0.25, 1.0)));
        assert_eq!(e[0].1.ns, Some(96.0));
        assert_eq!(e[0].1.alpha, Some(0.5));
        assert_eq!(e[0].1.map_kd.as_deref(), Some("a.png"));
        assert_eq!(e[0].1.unsupported, vec!["map_Bump".to_string()]);
        assert_eq!(e[1].1.ke, Some(Vec3::ONE));
        assert_eq!(e[1].1.alpha, Some(0.75));
        assert_eq!((e[1].1.pr, e[1].1.pm), (Some(0.3), Some(1.0)));
        assert_eq!(e[1].1.norm.as_deref(), Some("n b.png"));
        assert_eq!(e[1].1.unsupported, vec!["Pc".to_string()]);
        let bad = parse("newmtl a\nKd 1 x 1\n", "x.mtl")
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("x.mtl") && bad.contains("line 2") && bad.contains("'x'"),
            "{bad}"
        );
    }

    #[test]
    fn statements_not_drawn_make_one_note_each_naming_a_few_materials() {
        let mut n = NotDrawn::default();
        for i in 0..12 {
            n.add("map_Bump", &format!("m{i}"));
        }
        n.add("Pc", "m3");
        let notes: Vec<String> = n.notes("x.obj").collect();
        assert_eq!(
            notes,
            [
                "x.obj: map_Bump is not drawn (used by 'm0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7' and 4 more)",
                "x.obj: Pc is not drawn (used by 'm3')",
            ]
        );
    }
}
