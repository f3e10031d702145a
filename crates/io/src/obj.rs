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
    let mut parser = Parser::new(file);
    let mut raw = String::new();
    let mut line = 0usize;
    loop {
        raw.clear();
        line += 1;
        match super::text::read_line_capped(&mut input, &mut raw) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(parser.err(line, e.to_string())),
        }
        parser.line(raw.trim(), line)?;
    }
    Ok(parser.finish())
}

/// A corner as written: (v, vt, vn), zero-based, -1 for an absent attribute.
type Corner = (u32, i64, i64);

/// What an OBJ file has said so far.
struct Parser<'f> {
    file: &'f str,
    materials: MaterialUses,
    /// the libraries named so far (a file may name thousands)
    libraries: std::collections::HashSet<String>,
    pos: Vec<Vec3>,
    tex: Vec<Vec2>,
    nrm: Vec<Vec3>,
    col: Vec<glam::Vec4>,
    /// each distinct corner's index (hashed with foldhash, seeded for each map: SipHash was a
    /// third of the loading time, and the keys come from the file, so not a fixed-seed hash)
    corner_ids: HashMap<Corner, u32, foldhash::fast::RandomState>,
    corners: Vec<Corner>,
    indices: Vec<u32>,
    faces: usize,
    any_vt: bool,
    any_vn: bool,
    /// the face being read, as corner indices
    poly: Vec<u32>,
}

impl<'f> Parser<'f> {
    fn new(file: &'f str) -> Self {
        Parser {
            file,
            materials: MaterialUses::default(),
            libraries: Default::default(),
            pos: Vec::new(),
            tex: Vec::new(),
            nrm: Vec::new(),
            col: Vec::new(),
            corner_ids: HashMap::default(),
            corners: Vec::new(),
            indices: Vec::new(),
            faces: 0,
            any_vt: false,
            any_vn: false,
            poly: Vec::with_capacity(8),
        }
    }

    fn err(&self, line: usize, message: String) -> IoError {
        IoError::Parse {
            file: self.file.to_string(),
            location: format!("line {line}"),
            message,
        }
    }

    /// One line, trimmed.
    fn line(&mut self, l: &str, line: usize) -> Result<(), IoError> {
        if l.is_empty() || l.starts_with('#') {
            return Ok(());
        }
        let mut it = l.split_ascii_whitespace();
        let Some(tag) = it.next() else {
            return Ok(());
        };
        match tag {
            "v" => self.vertex(&mut it, line),
            "vt" => self.texcoord(&mut it, line),
            "vn" => {
                let n = self.floats(&mut it, 3, line)?;
                room(&mut self.nrm, 1, "normals", self.file)?;
                self.nrm.push(Vec3::from_array(n));
                Ok(())
            }
            "f" => self.face(it, line),
            // (the rest of the line: names may hold spaces)
            "mtllib" => {
                let name = l[tag.len()..].trim().to_string();
                if !name.is_empty() && self.libraries.insert(name.clone()) {
                    self.materials.libraries.push(name);
                }
                Ok(())
            }
            "usemtl" => {
                let name = l[tag.len()..].trim().to_string();
                let first = self.indices.len() / 3;
                // (a use that draws nothing is replaced by the next)
                if self.materials.uses.last().is_some_and(|u| u.1 == first) {
                    self.materials.uses.pop();
                }
                self.materials.uses.push((name, first));
                Ok(())
            }
            _ => Ok(()), // g, o, s, l, p: ignored
        }
    }

    /// `n` numbers (at most 3) from `it`.
    fn floats<'l>(
        &self,
        it: &mut impl Iterator<Item = &'l str>,
        n: usize,
        line: usize,
    ) -> Result<[f32; 3], IoError> {
        let mut out = [0f32; 3];
        for o in out.iter_mut().take(n) {
            let s = it
                .next()
                .ok_or_else(|| self.err(line, format!("expected {n} numbers")))?;
            *o = s
                .parse::<f32>()
                .map_err(|_| self.err(line, format!("'{s}' is not a number")))?;
        }
        Ok(out)
    }

    /// `v x y z`, or `v x y z r g b`: a position with a colour (a fourth value alone is a
    /// weight).
    fn vertex<'l>(
        &mut self,
        it: &mut (impl Iterator<Item = &'l str> + Clone),
        line: usize,
    ) -> Result<(), IoError> {
        let p = self.floats(it, 3, line)?;
        room(&mut self.pos, 1, "vertices", self.file)?;
        self.pos.push(Vec3::from_array(p));
        if it.clone().nth(2).is_some() {
            let rgb = self.floats(it, 3, line)?;
            room(&mut self.col, 1, "vertex colours", self.file)?;
            if self.col.len() + 1 < self.pos.len() {
                // vertices before the first coloured one are white
                self.col.resize(self.pos.len() - 1, glam::Vec4::ONE);
            }
            self.col
                .push(crate::vertex::display_color([rgb[0], rgb[1], rgb[2], 1.0]));
        }
        Ok(())
    }

    /// `vt u [v]`.
    fn texcoord<'l>(
        &mut self,
        it: &mut impl Iterator<Item = &'l str>,
        line: usize,
    ) -> Result<(), IoError> {
        let number = |s: &str| {
            s.parse::<f32>()
                .map_err(|_| self.err(line, format!("'{s}' is not a number")))
        };
        let first = it
            .next()
            .ok_or_else(|| self.err(line, "expected texture coordinates".into()))?;
        let u = number(first)?;
        let v = it.next().map(number).transpose()?.unwrap_or(0.0);
        room(&mut self.tex, 1, "texture coordinates", self.file)?;
        self.tex.push(Vec2::new(u, v));
        Ok(())
    }

    /// One index of corner `c` (1-based, or negative: relative to the end) into `len` elements,
    /// zero-based; -1 where absent.
    fn resolve(
        &self,
        s: Option<&str>,
        len: usize,
        what: &str,
        c: &str,
        line: usize,
    ) -> Result<i64, IoError> {
        let Some(s) = s.filter(|s| !s.is_empty()) else {
            return Ok(-1);
        };
        let i: i64 = s
            .parse()
            .map_err(|_| self.err(line, format!("'{c}': '{s}' is not an index")))?;
        let r = match i {
            1.. => i - 1,
            0 => -2,
            _ => len as i64 + i,
        };
        if r < 0 || r >= len as i64 {
            return Err(self.err(
                line,
                format!("{what} index {i} in '{c}' is out of range (there are {len} so far)"),
            ));
        }
        Ok(r)
    }

    /// `f` with its corners: the polygon fan-triangulated.
    fn face<'l>(&mut self, it: impl Iterator<Item = &'l str>, line: usize) -> Result<(), IoError> {
        self.poly.clear();
        for c in it {
            let mut parts = c.split('/');
            let v = self.resolve(parts.next(), self.pos.len(), "vertex", c, line)?;
            if v < 0 {
                return Err(self.err(line, format!("corner '{c}' has no vertex index")));
            }
            let vt = self.resolve(parts.next(), self.tex.len(), "texture", c, line)?;
            let vn = self.resolve(parts.next(), self.nrm.len(), "normal", c, line)?;
            self.any_vt |= vt >= 0;
            self.any_vn |= vn >= 0;
            let key = (v as u32, vt, vn);
            let corners = &mut self.corners;
            let id = *self.corner_ids.entry(key).or_insert_with(|| {
                corners.push(key);
                corners.len() as u32 - 1
            });
            self.poly.push(id);
        }
        let n = self.poly.len();
        if n < 3 {
            return Err(self.err(
                line,
                format!("a face needs at least 3 corners, this one has {n}"),
            ));
        }
        self.faces += 1;
        room(&mut self.indices, 3 * (n - 2), "face corners", self.file)?;
        for k in 1..n - 1 {
            self.indices
                .extend_from_slice(&[self.poly[0], self.poly[k], self.poly[k + 1]]);
        }
        Ok(())
    }

    /// The mesh. When every corner's attribute indices equal its position index (or are
    /// absent), the file's vertex array is kept as it is (unused vertices included) so that
    /// indices keep their meaning; otherwise each distinct corner is a vertex.
    fn finish(self) -> (Mesh, SourceCounts, MaterialUses) {
        let Parser {
            file,
            materials,
            pos,
            tex,
            nrm,
            col,
            corners,
            indices,
            faces,
            any_vt,
            any_vn,
            ..
        } = self;
        let aligned = corners
            .iter()
            .all(|c| (c.1 < 0 || c.1 == c.0 as i64) && (c.2 < 0 || c.2 == c.0 as i64))
            && (!any_vt || tex.len() == pos.len())
            && (!any_vn || nrm.len() == pos.len());
        let counts = SourceCounts {
            vertices: pos.len(),
            faces,
        };
        let mut mesh = Mesh::new(file.to_string(), Vec::new(), Vec::new());
        if aligned {
            let remap: Vec<u32> = corners.iter().map(|c| c.0).collect();
            mesh.indices = indices.iter().map(|&i| remap[i as usize]).collect();
            mesh.colors = colors_of(&col, 0..pos.len());
            mesh.normals = any_vn.then_some(nrm);
            mesh.uvs = any_vt.then_some(tex);
            mesh.positions = pos;
        } else {
            let of = |c: i64, from: &[Vec3]| if c >= 0 { from[c as usize] } else { Vec3::ZERO };
            mesh.positions = corners.iter().map(|c| pos[c.0 as usize]).collect();
            mesh.normals = any_vn.then(|| corners.iter().map(|c| of(c.2, &nrm)).collect());
            mesh.uvs = any_vt.then(|| {
                let of = |c: i64| if c >= 0 { tex[c as usize] } else { Vec2::ZERO };
                corners.iter().map(|c| of(c.1)).collect()
            });
            mesh.indices = indices;
            mesh.colors = colors_of(&col, corners.iter().map(|c| c.0 as usize));
        }
        (mesh, counts, materials)
    }
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
