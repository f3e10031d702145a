//! Wavefront OBJ: `v`, `vt`, `vn`, faces with `v`, `v/vt`, `v//vn`, `v/vt/vn` corners, negative
//! (relative) indices, polygons fan-triangulated; `mtllib` and `usemtl` recorded (see
//! [`super::mtl`] for what a scene makes of them); groups and objects ignored.

use super::text::room;
use crate::error::{IoError, SourceCounts};
use glam::{Vec2, Vec3};
use rxpipe_core::mesh::Mesh;
use std::collections::HashMap;
use std::io::Write;

/// The materials an OBJ file names: its material libraries and, in file order, each `usemtl`
/// with the first triangle it applies to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MaterialUses {
    /// `mtllib` names, as written (relative to the OBJ file's folder)
    pub libraries: Vec<String>,
    /// (material name, index of the first triangle drawn with it)
    pub uses: Vec<(String, usize)>,
}

/// Parses OBJ text. `file` names the source in errors.
pub fn parse(text: &str, file: &str) -> Result<(Mesh, SourceCounts), IoError> {
    parse_reader(text.as_bytes(), file)
}

/// Parses OBJ read line by line from `input` (a gzip stream, say): memory follows the mesh, not
/// the text. A line that is not UTF-8, or a read error, names its line.
pub fn parse_reader(
    input: impl std::io::BufRead,
    file: &str,
) -> Result<(Mesh, SourceCounts), IoError> {
    parse_with_materials(input, file).map(|(m, c, _)| (m, c))
}

/// [`parse_reader`], with the material libraries and uses the file names.
pub fn parse_with_materials(
    mut input: impl std::io::BufRead,
    file: &str,
) -> Result<(Mesh, SourceCounts, MaterialUses), IoError> {
    let mut materials = MaterialUses::default();
    // (the libraries named so far: a file may name thousands)
    let mut libraries = std::collections::HashSet::new();
    let mut pos: Vec<Vec3> = Vec::new();
    let mut tex: Vec<Vec2> = Vec::new();
    let mut nrm: Vec<Vec3> = Vec::new();
    let mut col: Vec<glam::Vec4> = Vec::new();
    // corners as (v, vt, vn) with -1 for absent, resolved to zero-based indices (hashed with
    // foldhash, seeded for each map: SipHash was a third of the loading time, and the keys come
    // from the file, so not a fixed-seed hash)
    let mut corner_ids: HashMap<(u32, i64, i64), u32, foldhash::fast::RandomState> =
        HashMap::default();
    let mut corners: Vec<(u32, i64, i64)> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut faces = 0usize;
    let mut any_vt = false;
    let mut any_vn = false;
    let mut poly: Vec<u32> = Vec::with_capacity(8);

    let err = |line: usize, message: String| IoError::Parse {
        file: file.to_string(),
        location: format!("line {line}"),
        message,
    };
    let floats = |it: &mut dyn Iterator<Item = &str>, n: usize, line: usize| {
        let mut out = [0f32; 3];
        for (k, o) in out.iter_mut().enumerate().take(n) {
            let s = it
                .next()
                .ok_or_else(|| err(line, format!("expected {n} numbers")))?;
            *o = s
                .parse::<f32>()
                .map_err(|_| err(line, format!("'{s}' is not a number")))?;
            let _ = k;
        }
        Ok::<_, IoError>(out)
    };

    let mut raw = String::new();
    let mut line = 0usize;
    loop {
        raw.clear();
        line += 1;
        match super::text::read_line_capped(&mut input, &mut raw) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(err(line, e.to_string())),
        }
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut it = l.split_ascii_whitespace();
        let Some(tag) = it.next() else { continue };
        match tag {
            "v" => {
                let p = floats(&mut it, 3, line)?;
                room(&mut pos, 1, "vertices", file)?;
                pos.push(Vec3::from_array(p));
                // `v x y z r g b`: a colour per vertex (a fourth value alone is a weight)
                if it.clone().nth(2).is_some() {
                    let rgb = floats(&mut it, 3, line)?;
                    room(&mut col, 1, "vertex colours", file)?;
                    if col.len() + 1 < pos.len() {
                        // vertices before the first coloured one are white
                        col.resize(pos.len() - 1, glam::Vec4::ONE);
                    }
                    col.push(crate::vertex::display_color([rgb[0], rgb[1], rgb[2], 1.0]));
                }
            }
            "vt" => {
                let first = it
                    .next()
                    .ok_or_else(|| err(line, "expected texture coordinates".into()))?;
                let u = first
                    .parse::<f32>()
                    .map_err(|_| err(line, format!("'{first}' is not a number")))?;
                let v = match it.next() {
                    Some(s) => s
                        .parse::<f32>()
                        .map_err(|_| err(line, format!("'{s}' is not a number")))?,
                    None => 0.0,
                };
                room(&mut tex, 1, "texture coordinates", file)?;
                tex.push(Vec2::new(u, v));
            }
            "vn" => {
                let n = floats(&mut it, 3, line)?;
                room(&mut nrm, 1, "normals", file)?;
                nrm.push(Vec3::from_array(n));
            }
            "f" => {
                poly.clear();
                for c in it {
                    let mut parts = c.split('/');
                    let resolve = |s: Option<&str>,
                                   len: usize,
                                   what: &str|
                     -> Result<i64, IoError> {
                        match s {
                            None | Some("") => Ok(-1),
                            Some(s) => {
                                let i: i64 = s.parse().map_err(|_| {
                                    err(line, format!("'{c}': '{s}' is not an index"))
                                })?;
                                let r = if i > 0 {
                                    i - 1
                                } else if i < 0 {
                                    len as i64 + i
                                } else {
                                    -2
                                };
                                if r < 0 || r >= len as i64 {
                                    return Err(err(
                                        line,
                                        format!("{what} index {i} in '{c}' is out of range (there are {len} so far)"),
                                    ));
                                }
                                Ok(r)
                            }
                        }
                    };
                    let v = resolve(parts.next(), pos.len(), "vertex")?;
                    if v < 0 {
                        return Err(err(line, format!("corner '{c}' has no vertex index")));
                    }
                    let vt = resolve(parts.next(), tex.len(), "texture")?;
                    let vn = resolve(parts.next(), nrm.len(), "normal")?;
                    any_vt |= vt >= 0;
                    any_vn |= vn >= 0;
                    let key = (v as u32, vt, vn);
                    let id = *corner_ids.entry(key).or_insert_with(|| {
                        corners.push(key);
                        corners.len() as u32 - 1
                    });
                    poly.push(id);
                }
                if poly.len() < 3 {
                    return Err(err(
                        line,
                        format!(
                            "a face needs at least 3 corners, this one has {}",
                            poly.len()
                        ),
                    ));
                }
                faces += 1;
                room(&mut indices, 3 * (poly.len() - 2), "face corners", file)?;
                for k in 1..poly.len() - 1 {
                    indices.extend_from_slice(&[poly[0], poly[k], poly[k + 1]]);
                }
            }
            "mtllib" | "usemtl" => {
                // (the rest of the line: names may hold spaces)
                let name = l[tag.len()..].trim().to_string();
                if tag == "mtllib" {
                    if !name.is_empty() && libraries.insert(name.clone()) {
                        materials.libraries.push(name);
                    }
                } else {
                    let first = indices.len() / 3;
                    // (a use that draws nothing is replaced by the next)
                    if materials.uses.last().is_some_and(|u| u.1 == first) {
                        materials.uses.pop();
                    }
                    materials.uses.push((name, first));
                }
            }
            _ => {} // g, o, s, l, p: ignored
        }
    }

    // When every corner's attribute indices equal its position index (or are absent), keep the
    // file's vertex array as it is (unused vertices included) so that indices keep their meaning.
    let aligned = corners
        .iter()
        .all(|c| (c.1 < 0 || c.1 == c.0 as i64) && (c.2 < 0 || c.2 == c.0 as i64))
        && (!any_vt || tex.len() == pos.len())
        && (!any_vn || nrm.len() == pos.len());
    let mesh = if aligned {
        let remap: Vec<u32> = corners.iter().map(|c| c.0).collect();
        Mesh {
            name: file.to_string(),
            positions: pos.clone(),
            normals: any_vn.then(|| nrm.clone()),
            uvs: any_vt.then(|| tex.clone()),
            indices: indices.iter().map(|&i| remap[i as usize]).collect(),
            base_color: None,
            colors: colors_of(&col, 0..pos.len()),
            uvs1: None,
            tangents: None,
            material: None,
        }
    } else {
        Mesh {
            name: file.to_string(),
            positions: corners.iter().map(|c| pos[c.0 as usize]).collect(),
            normals: any_vn.then(|| {
                corners
                    .iter()
                    .map(|c| {
                        if c.2 >= 0 {
                            nrm[c.2 as usize]
                        } else {
                            Vec3::ZERO
                        }
                    })
                    .collect()
            }),
            uvs: any_vt.then(|| {
                corners
                    .iter()
                    .map(|c| {
                        if c.1 >= 0 {
                            tex[c.1 as usize]
                        } else {
                            Vec2::ZERO
                        }
                    })
                    .collect()
            }),
            indices,
            base_color: None,
            colors: colors_of(&col, corners.iter().map(|c| c.0 as usize)),
            uvs1: None,
            tangents: None,
            material: None,
        }
    };
    Ok((
        mesh,
        SourceCounts {
            vertices: pos.len(),
            faces,
        },
        materials,
    ))
}

/// The colours of vertices `of` (positions' indices), when any vertex had one (vertices after the
/// last coloured one are white).
fn colors_of(col: &[glam::Vec4], of: impl Iterator<Item = usize>) -> Option<Vec<glam::Vec4>> {
    if col.is_empty() {
        return None;
    }
    Some(
        of.map(|i| col.get(i).copied().unwrap_or(glam::Vec4::ONE))
            .collect(),
    )
}

/// Writes positions (and normals and uvs where present) as OBJ text.
pub fn write(mesh: &Mesh, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(out);
    writeln!(w, "# written by rxpipe")?;
    for p in &mesh.positions {
        writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
    }
    if let Some(uv) = &mesh.uvs {
        for t in uv {
            writeln!(w, "vt {} {}", t.x, t.y)?;
        }
    }
    if let Some(nr) = &mesh.normals {
        for n in nr {
            writeln!(w, "vn {} {} {}", n.x, n.y, n.z)?;
        }
    }
    let (t, n) = (mesh.uvs.is_some(), mesh.normals.is_some());
    for tri in mesh.indices.chunks_exact(3) {
        write!(w, "f")?;
        for &i in tri {
            let i = i + 1;
            match (t, n) {
                (false, false) => write!(w, " {i}")?,
                (true, false) => write!(w, " {i}/{i}")?,
                (false, true) => write!(w, " {i}//{i}")?,
                (true, true) => write!(w, " {i}/{i}/{i}")?,
            }
        }
        writeln!(w)?;
    }
    w.flush()
}
