//! PLY: ascii, binary little- and big-endian; `vertex` with x y z (nx ny nz, u v / s t, red green
//! blue alpha),
//! `face` lists of any arity (fan-triangulated) and `tristrips` with -1 restarts.

use super::text::{room, Tokens};
use crate::error::{IoError, SourceCounts};
use glam::{Vec2, Vec3};
use rxpipe_core::mesh::Mesh;
use std::io::{BufRead, Read, Write};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Ascii,
    BinaryLe,
    BinaryBe,
}

#[derive(Clone, Copy, Debug)]
enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    fn parse(s: &str) -> Option<Scalar> {
        Some(match s {
            "char" | "int8" => Scalar::I8,
            "uchar" | "uint8" => Scalar::U8,
            "short" | "int16" => Scalar::I16,
            "ushort" | "uint16" => Scalar::U16,
            "int" | "int32" => Scalar::I32,
            "uint" | "uint32" => Scalar::U32,
            "float" | "float32" => Scalar::F32,
            "double" | "float64" => Scalar::F64,
            _ => return None,
        })
    }
    fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }
}

#[derive(Debug)]
struct Property {
    name: String,
    /// `Some(count type)` for a list property
    list: Option<Scalar>,
    ty: Scalar,
}

#[derive(Debug)]
struct Element {
    name: String,
    count: usize,
    props: Vec<Property>,
}

/// A cursor over the body that reads scalars in the file's format.
struct Body<'a> {
    /// binary: the whole file
    data: &'a [u8],
    pos: usize,
    format: Format,
    file: &'a str,
    /// ascii: tokens of the body, read as a stream
    tokens: Option<Tokens<Box<dyn BufRead + 'a>>>,
    element: String,
    index: usize,
}

impl Body<'_> {
    fn error(&self, message: String) -> IoError {
        IoError::Parse {
            file: self.file.to_string(),
            location: format!("element '{}' #{}", self.element, self.index),
            message,
        }
    }

    fn read(&mut self, ty: Scalar) -> Result<f64, IoError> {
        if self.format == Format::Ascii {
            let tok = match self.tokens.as_mut() {
                Some(t) => t.next_token(self.file)?,
                None => None,
            };
            let Some(tok) = tok else {
                return Err(self.error("unexpected end of file".into()));
            };
            return match tok.parse::<f64>() {
                Ok(v) => Ok(v),
                Err(_) => {
                    let m = format!("'{tok}' is not a number");
                    Err(self.error(m))
                }
            };
        }
        let n = ty.size();
        if self.pos + n > self.data.len() {
            return Err(self.error(format!(
                "file is truncated: needed {n} more bytes at offset {}, file has {}",
                self.pos,
                self.data.len()
            )));
        }
        let b = &self.data[self.pos..self.pos + n];
        self.pos += n;
        let le = self.format == Format::BinaryLe;
        macro_rules! get {
            ($t:ty) => {{
                let arr: [u8; std::mem::size_of::<$t>()] = b.try_into().unwrap();
                if le {
                    <$t>::from_le_bytes(arr)
                } else {
                    <$t>::from_be_bytes(arr)
                }
            }};
        }
        Ok(match ty {
            Scalar::I8 => b[0] as i8 as f64,
            Scalar::U8 => b[0] as f64,
            Scalar::I16 => get!(i16) as f64,
            Scalar::U16 => get!(u16) as f64,
            Scalar::I32 => get!(i32) as f64,
            Scalar::U32 => get!(u32) as f64,
            Scalar::F32 => get!(f32) as f64,
            Scalar::F64 => get!(f64),
        })
    }
}

fn find_header_end(data: &[u8]) -> Option<usize> {
    let needle = b"end_header";
    let i = data.windows(needle.len()).position(|w| w == needle)?;
    let mut j = i + needle.len();
    // the header line ends with \n or \r\n
    while j < data.len() && data[j] != b'\n' {
        j += 1;
    }
    Some((j + 1).min(data.len()))
}

/// The header of a PLY: its format and elements, and where the body starts.
fn parse_header(data: &[u8], file: &str) -> Result<(Format, Vec<Element>, usize), IoError> {
    let perr = |location: String, message: String| IoError::Parse {
        file: file.to_string(),
        location,
        message,
    };
    if !data.starts_with(b"ply") {
        return Err(perr("header".into(), "missing 'ply' magic".into()));
    }
    let end = find_header_end(data)
        .ok_or_else(|| perr("header".into(), "no 'end_header' line".into()))?;
    let header = std::str::from_utf8(&data[..end])
        .map_err(|_| perr("header".into(), "header is not text".into()))?;
    let mut format = None;
    let mut elements: Vec<Element> = Vec::new();
    for (ln, l) in header.lines().enumerate() {
        let loc = || format!("header line {}", ln + 1);
        let w: Vec<&str> = l.split_ascii_whitespace().collect();
        match w.first().copied() {
            Some("format") => {
                format = Some(match w.get(1).copied() {
                    Some("ascii") => Format::Ascii,
                    Some("binary_little_endian") => Format::BinaryLe,
                    Some("binary_big_endian") => Format::BinaryBe,
                    other => return Err(perr(loc(), format!("unknown format {other:?}"))),
                })
            }
            Some("element") => {
                let (Some(name), Some(count)) = (w.get(1), w.get(2)) else {
                    return Err(perr(loc(), "element needs a name and a count".into()));
                };
                let count = count
                    .parse()
                    .map_err(|_| perr(loc(), format!("bad element count '{count}'")))?;
                elements.push(Element {
                    name: name.to_string(),
                    count,
                    props: vec![],
                });
            }
            Some("property") => {
                let el = elements
                    .last_mut()
                    .ok_or_else(|| perr(loc(), "property before any element".into()))?;
                let bad = || perr(loc(), format!("bad property line '{l}'"));
                let p = if w.get(1) == Some(&"list") {
                    Property {
                        list: Some(w.get(2).and_then(|s| Scalar::parse(s)).ok_or_else(bad)?),
                        ty: w.get(3).and_then(|s| Scalar::parse(s)).ok_or_else(bad)?,
                        name: w.get(4).ok_or_else(bad)?.to_string(),
                    }
                } else {
                    Property {
                        list: None,
                        ty: w.get(1).and_then(|s| Scalar::parse(s)).ok_or_else(bad)?,
                        name: w.get(2).ok_or_else(bad)?.to_string(),
                    }
                };
                el.props.push(p);
            }
            _ => {}
        }
    }
    let format = format.ok_or_else(|| perr("header".into(), "no format line".into()))?;
    Ok((format, elements, end))
}

/// Parses PLY bytes. `file` names the source in errors.
pub fn parse(data: &[u8], file: &str) -> Result<(Mesh, SourceCounts), IoError> {
    let (format, elements, end) = parse_header(data, file)?;
    let mut body = Body {
        data,
        pos: end,
        format,
        file,
        tokens: None,
        element: String::new(),
        index: 0,
    };
    if format == Format::Ascii {
        if std::str::from_utf8(&data[end..]).is_err() {
            return Err(IoError::Parse {
                file: file.to_string(),
                location: "body".into(),
                message: "ascii body is not text".into(),
            });
        }
        body.tokens = Some(body_tokens(Box::new(&data[end..]), &data[..end]));
    }
    read_elements(&elements, body, Some(data.len()))
}

/// Tokens of an ascii body that follows `header`, numbering lines as in the whole file.
fn body_tokens<'a>(body: Box<dyn BufRead + 'a>, header: &[u8]) -> Tokens<Box<dyn BufRead + 'a>> {
    let mut t = Tokens::new(body);
    t.line += header.iter().filter(|&&b| b == b'\n').count();
    t
}

/// The longest header read from a stream.
const MAX_HEADER: usize = 1 << 20;

/// Parses PLY read from `input` (a gzip stream, say). An ascii body is read as a stream, so
/// memory follows the mesh, not the text; a binary body, about the size of its mesh, is read
/// whole.
pub fn parse_stream<'a>(
    mut input: impl BufRead + 'a,
    file: &str,
) -> Result<(Mesh, SourceCounts), IoError> {
    let mut head = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = input
            .by_ref()
            .take((MAX_HEADER - head.len()) as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| IoError::Parse {
                file: file.into(),
                location: "header".into(),
                message: e.to_string(),
            })?;
        head.extend_from_slice(&line);
        if n == 0 || line.trim_ascii().starts_with(b"end_header") || head.len() >= MAX_HEADER {
            break;
        }
    }
    let (format, elements, end) = parse_header(&head, file)?;
    if format != Format::Ascii {
        crate::files::read_checked(&mut input, &mut head, usize::MAX, file)?;
        return parse(&head, file);
    }
    let body = Body {
        data: &[],
        pos: end,
        format,
        file,
        tokens: Some(body_tokens(Box::new(input), &head[..end])),
        element: String::new(),
        index: 0,
    };
    read_elements(&elements, body, None)
}

/// Reads the elements of the body; `len` is the file's size when known, to refuse counts that
/// could not fit in it before reserving for them.
fn read_elements(
    elements: &[Element],
    mut body: Body,
    len: Option<usize>,
) -> Result<(Mesh, SourceCounts), IoError> {
    let file = body.file;
    let mut out = Gathered::default();
    for el in elements {
        body.element = el.name.clone();
        let slots = Slots::of(el);
        if el.name == "vertex" && slots.position.is_none() {
            return Err(parse_error(
                file,
                "header",
                "vertex element lacks x, y or z",
            ));
        }
        // guard against absurd counts before reserving memory
        let min_bytes = if body.format == Format::Ascii {
            1
        } else {
            el.props
                .iter()
                .map(|p| p.list.unwrap_or(p.ty).size())
                .sum::<usize>()
        };
        if let Some(len) = len.filter(|&l| el.count.saturating_mul(min_bytes) > l) {
            return Err(parse_error(
                file,
                &format!("element '{}'", el.name),
                &format!(
                    "declares {} entries but the file is only {len} bytes (truncated?)",
                    el.count
                ),
            ));
        }
        // an element without properties holds nothing to read, whatever its count
        if el.props.is_empty() {
            continue;
        }
        if el.name == "vertex" && len.is_some() {
            out.positions.reserve(el.count);
        }
        let mut vals = vec![0f64; el.props.len()];
        for i in 0..el.count {
            body.index = i;
            let triangles_before = out.indices.len() / 3;
            for (k, p) in el.props.iter().enumerate() {
                match p.list {
                    None => vals[k] = body.read(p.ty)?,
                    Some(ct) => out.list(el, p, ct, &mut body)?,
                }
            }
            if el.name == "face" {
                if let Some(color) = slots.color(&vals) {
                    let added = out.indices.len() / 3 - triangles_before;
                    room(&mut out.face_colors, added, "face colours", file)?;
                    out.face_colors.extend(std::iter::repeat_n(color, added));
                }
            }
            if el.name == "vertex" {
                out.vertex(&slots, &vals, file)?;
            }
        }
    }
    out.finish(file)
}

fn parse_error(file: &str, location: &str, message: &str) -> IoError {
    IoError::Parse {
        file: file.to_string(),
        location: location.to_string(),
        message: message.to_string(),
    }
}

/// Where an element's attributes sit among its properties (each only where all its components
/// are scalars of the element).
struct Slots {
    position: Option<[usize; 3]>,
    normal: Option<[usize; 3]>,
    uv: Option<[usize; 2]>,
    /// red, green, blue, and alpha where present, each with its unit: colours are display
    /// values, integers over 255 (the usual uchar) or 65535, floats over 1
    color: Option<([Channel; 3], Option<Channel>)>,
}

/// A colour channel: its property's slot and the value that stands for full intensity.
type Channel = (usize, f64);

impl Slots {
    fn of(el: &Element) -> Slots {
        let slot = |n: &str| {
            el.props
                .iter()
                .position(|p| p.name == n && p.list.is_none())
        };
        let unit = |k: usize| match el.props[k].ty {
            Scalar::F32 | Scalar::F64 => (k, 1.0),
            Scalar::U16 | Scalar::I16 => (k, 65535.0),
            _ => (k, 255.0),
        };
        let channel = |a: &str, b: &str| slot(a).or(slot(b)).map(unit);
        let rgb = (|| {
            Some([
                channel("red", "r")?,
                channel("green", "g")?,
                channel("blue", "b")?,
            ])
        })();
        Slots {
            position: (|| Some([slot("x")?, slot("y")?, slot("z")?]))(),
            normal: (|| Some([slot("nx")?, slot("ny")?, slot("nz")?]))(),
            uv: (|| {
                Some([
                    slot("u").or(slot("s")).or(slot("texture_u"))?,
                    slot("v").or(slot("t")).or(slot("texture_v"))?,
                ])
            })(),
            color: rgb.map(|rgb| (rgb, channel("alpha", "a"))),
        }
    }

    /// The colour of an entry with values `vals`, where the element has one.
    fn color(&self, vals: &[f64]) -> Option<glam::Vec4> {
        let (rgb, alpha) = self.color?;
        let c = |(k, unit): (usize, f64)| (vals[k] / unit) as f32;
        Some(crate::vertex::display_color([
            c(rgb[0]),
            c(rgb[1]),
            c(rgb[2]),
            alpha.map_or(1.0, c),
        ]))
    }
}

/// What the body's elements gave so far.
#[derive(Default)]
struct Gathered {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    uvs: Vec<Vec2>,
    colors: Vec<glam::Vec4>,
    indices: Vec<u32>,
    /// a colour per triangle, where the faces have red, green and blue (`rxpipe patch --out`
    /// writes the patches so)
    face_colors: Vec<glam::Vec4>,
    faces: usize,
    /// the list being read
    list: Vec<i64>,
}

impl Gathered {
    /// A list property `p` (its length of type `count`): a face's corners, fan-triangulated,
    /// or a triangle strip; other lists are read and left.
    fn list(
        &mut self,
        el: &Element,
        p: &Property,
        count: Scalar,
        body: &mut Body,
    ) -> Result<(), IoError> {
        let n = body.read(count)?;
        if !(0.0..=1e9).contains(&n) {
            return Err(body.error(format!("bad list length {n}")));
        }
        self.list.clear();
        for _ in 0..n as usize {
            self.list.push(body.read(p.ty)? as i64);
        }
        if p.name != "vertex_indices" && p.name != "vertex_index" {
            return Ok(());
        }
        let list = &self.list;
        if el.name == "face" {
            if list.len() < 3 {
                return Err(body.error(format!(
                    "a face needs at least 3 corners, this one has {}",
                    list.len()
                )));
            }
            self.faces += 1;
            for j in 1..list.len() - 1 {
                for &c in &[list[0], list[j], list[j + 1]] {
                    room(&mut self.indices, 1, "face corners", body.file)?;
                    self.indices.push(index_u32(c, body)?);
                }
            }
        } else if el.name == "tristrips" {
            self.faces += strip_to_triangles(list, &mut self.indices, body)?;
        }
        Ok(())
    }

    /// A vertex entry with values `vals`.
    fn vertex(&mut self, slots: &Slots, vals: &[f64], file: &str) -> Result<(), IoError> {
        let v3 = |s: [usize; 3]| Vec3::new(vals[s[0]] as f32, vals[s[1]] as f32, vals[s[2]] as f32);
        if let Some(s) = slots.position {
            room(&mut self.positions, 1, "vertices", file)?;
            self.positions.push(v3(s));
        }
        if let Some(s) = slots.normal {
            room(&mut self.normals, 1, "normals", file)?;
            self.normals.push(v3(s));
        }
        if let Some(s) = slots.uv {
            room(&mut self.uvs, 1, "texture coordinates", file)?;
            self.uvs
                .push(Vec2::new(vals[s[0]] as f32, vals[s[1]] as f32));
        }
        if let Some(c) = slots.color(vals) {
            room(&mut self.colors, 1, "vertex colours", file)?;
            self.colors.push(c);
        }
        Ok(())
    }

    /// The mesh, coloured per face where every triangle has a face colour.
    fn finish(self, file: &str) -> Result<(Mesh, SourceCounts), IoError> {
        let n = self.positions.len();
        let mut mesh = Mesh::new(file, self.positions, self.indices);
        mesh.normals = (!self.normals.is_empty()).then_some(self.normals);
        mesh.uvs = (!self.uvs.is_empty()).then_some(self.uvs);
        mesh.colors = (!self.colors.is_empty()).then_some(self.colors);
        // (where an index is out of range, the mesh's validation names it; nothing is copied)
        let in_range = mesh.indices.iter().all(|&i| (i as usize) < n);
        let face_colors = self.face_colors;
        if !face_colors.is_empty() && face_colors.len() == mesh.triangle_count() && in_range {
            mesh = with_face_colors(&mesh, &face_colors, file)?;
        }
        let faces = self.faces;
        Ok((mesh, SourceCounts { vertices: n, faces }))
    }
}

/// `mesh` drawn with a colour per triangle: every corner its own vertex, coloured as its
/// triangle (over any vertex colour: a face's colour is the more specific), its other
/// attributes copied. Re-indexing merges again the corners that agree in every attribute, so
/// only vertices on a border between colours stay apart.
fn with_face_colors(mesh: &Mesh, colors: &[glam::Vec4], file: &str) -> Result<Mesh, IoError> {
    let corners = mesh.indices.len();
    // (checked before the copies are made: a position, normal, uv and colour for each corner)
    rxpipe_core::limits::check_host(corners as u64 * 48, || {
        format!("{corners} corners, a vertex each for the face colours")
    })
    .map_err(|e| IoError::Unsupported {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    fn each<T: Copy>(a: &[T], indices: &[u32]) -> Vec<T> {
        indices.iter().map(|&i| a[i as usize]).collect()
    }
    Ok(Mesh {
        name: mesh.name.clone(),
        positions: each(&mesh.positions, &mesh.indices),
        normals: mesh.normals.as_deref().map(|a| each(a, &mesh.indices)),
        uvs: mesh.uvs.as_deref().map(|a| each(a, &mesh.indices)),
        uvs1: mesh.uvs1.as_deref().map(|a| each(a, &mesh.indices)),
        indices: (0..corners as u32).collect(),
        base_color: None,
        colors: Some(colors.iter().flat_map(|&c| [c; 3]).collect()),
        tangents: None,
        material: None,
    })
}

fn index_u32(c: i64, body: &Body) -> Result<u32, IoError> {
    u32::try_from(c).map_err(|_| body.error(format!("negative or too large vertex index {c}")))
}

/// Appends the triangles of one strip list (with -1 restarts); degenerate triangles (two equal
/// corners, used to stitch strips) are dropped. Returns the number of triangles added.
fn strip_to_triangles(list: &[i64], out: &mut Vec<u32>, body: &Body) -> Result<usize, IoError> {
    let mut added = 0;
    for strip in list.split(|&i| i < 0) {
        for k in 2..strip.len() {
            let (a, b, c) = (strip[k - 2], strip[k - 1], strip[k]);
            if a == b || b == c || a == c {
                continue;
            }
            let tri = if k % 2 == 0 { [a, b, c] } else { [b, a, c] };
            for t in tri {
                room(out, 1, "strip corners", body.file)?;
                out.push(index_u32(t, body)?);
            }
            added += 1;
        }
    }
    Ok(added)
}

/// Writes a binary little-endian PLY (positions, normals and uvs where present, triangle faces).
pub fn write_binary(mesh: &Mesh, out: &mut impl std::io::Write) -> std::io::Result<()> {
    write_binary_colored(mesh, None, out)
}

/// [`write_binary`] with an RGB colour per face (`red`, `green`, `blue` face properties, which
/// MeshLab and Blender show), one per triangle.
pub fn write_binary_colored(
    mesh: &Mesh,
    face_colors: Option<&[[u8; 3]]>,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(out);
    writeln!(
        w,
        "ply\nformat binary_little_endian 1.0\ncomment written by rxpipe"
    )?;
    writeln!(w, "element vertex {}", mesh.positions.len())?;
    writeln!(w, "property float x\nproperty float y\nproperty float z")?;
    if mesh.normals.is_some() {
        writeln!(w, "property float nx\nproperty float ny\nproperty float nz")?;
    }
    if mesh.uvs.is_some() {
        writeln!(w, "property float u\nproperty float v")?;
    }
    writeln!(w, "element face {}", mesh.triangle_count())?;
    writeln!(w, "property list uchar uint vertex_indices")?;
    if face_colors.is_some() {
        writeln!(
            w,
            "property uchar red\nproperty uchar green\nproperty uchar blue"
        )?;
    }
    writeln!(w, "end_header")?;
    for (i, p) in mesh.positions.iter().enumerate() {
        w.write_all(bytemuck::bytes_of(p))?;
        if let Some(n) = &mesh.normals {
            w.write_all(bytemuck::bytes_of(&n[i]))?;
        }
        if let Some(t) = &mesh.uvs {
            w.write_all(bytemuck::bytes_of(&t[i]))?;
        }
    }
    for (k, t) in mesh.indices.chunks_exact(3).enumerate() {
        w.write_all(&[3u8])?;
        w.write_all(bytemuck::cast_slice(t))?;
        if let Some(c) = face_colors {
            w.write_all(&c.get(k).copied().unwrap_or([255; 3]))?;
        }
    }
    w.flush()
}
