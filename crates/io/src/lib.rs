//! Loaders and writers: glTF, OBJ, PLY, STL, any of them gzip-compressed; scene files; images.
//!
//! Formats are recognised by content (gzip magic, `ply`, `glTF`, JSON, binary STL size), with the
//! file extension only as a tie-breaker between text formats.

pub mod gltf;
mod gltf_accessor;
mod gltf_animation;
mod gltf_document;
mod gltf_draco;
mod gltf_instancing;
mod gltf_materials;
mod gltf_meshopt;
pub(crate) mod gltf_skin;
mod gltf_specgloss;
pub mod image;
pub mod mtl;
pub mod obj;
pub mod ply;
pub mod scene;
pub use scene::{builtin_scene, check_drawable, load_scene, parse_scene};
pub mod stl;
pub mod text;

use rxpipe_core::mesh::{Mesh, MeshError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Errors from loading or writing files.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {location}: {message}")]
    Parse {
        file: String,
        location: String,
        message: String,
    },
    #[error("{file}: {message}")]
    Unsupported { file: String, message: String },
    /// An image that cannot be written or read (its format, its encoder's error).
    #[error("image: {0}")]
    Image(String),
    #[error(transparent)]
    Mesh(#[from] MeshError),
}

impl IoError {
    /// Makes an error of the file system name `path`: `.map_err(IoError::at(path))`.
    pub fn at(path: &Path) -> impl Fn(std::io::Error) -> IoError + '_ {
        move |source| IoError::Io {
            file: path.display().to_string(),
            source,
        }
    }
}

/// Counts as the file states them, before triangulation or corner splitting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceCounts {
    /// vertices (positions) in the file
    pub vertices: usize,
    /// faces in the file: polygons for OBJ and PLY faces, triangles for strips and STL
    pub faces: usize,
}

/// The format of a mesh file, as recognised from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Obj,
    Ply,
    Stl,
    Gltf,
}

/// Reads a file a user named, whole, without letting it eat the machine: a folder or a device
/// (`/dev/zero` would never end) is refused, a regular file's size is checked against the host's
/// memory before it is read, and a pipe grows a megabyte at a time, each step checked.
pub fn read_file(path: &Path) -> Result<Vec<u8>, IoError> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(IoError::at(path))?;
    let refuse = |what: &str| IoError::Unsupported {
        file: name.clone(),
        message: format!("{what}, not a file"),
    };
    if meta.is_dir() {
        return Err(refuse("a folder"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() || t.is_block_device() {
            return Err(refuse("a device"));
        }
    }
    let mut f = std::fs::File::open(path).map_err(IoError::at(path))?;
    let mut out = Vec::new();
    if meta.is_file() {
        rxpipe_core::limits::check_host(meta.len(), || format!("reading {name}")).map_err(|e| {
            IoError::Unsupported {
                file: name.clone(),
                message: e.to_string(),
            }
        })?;
        out.reserve_exact(meta.len() as usize);
        f.take(meta.len())
            .read_to_end(&mut out)
            .map_err(IoError::at(path))?;
    } else {
        // (the growth checks name a gzip stream; this is a pipe)
        read_checked(&mut f, &mut out, usize::MAX, &name).map_err(|e| match e {
            IoError::Parse { file, message, .. } => IoError::Parse {
                file,
                location: "reading it".into(),
                message,
            },
            e => e,
        })?;
    }
    Ok(out)
}

/// Whether `path` is named with one of `extensions` (without the dot, lower case), a `.gz` after
/// it allowed: `named(p, &["gltf", "glb"])` holds for `scene.GLB.gz`.
pub(crate) fn named(path: &Path, extensions: &[&str]) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    extensions
        .iter()
        .any(|e| name.strip_suffix(e).is_some_and(|stem| stem.ends_with('.')))
}

/// Gzip data, recognised by its magic bytes whatever the name.
fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b])
}

/// The first `limit` bytes of gzip `data` decompressed, each growth checked ([`read_checked`]).
fn gunzip(data: &[u8], limit: usize, file: &str) -> Result<Vec<u8>, IoError> {
    let mut out = Vec::new();
    read_checked(
        &mut flate2::read::MultiGzDecoder::new(data),
        &mut out,
        limit,
        file,
    )?;
    Ok(out)
}

/// Appends up to `limit` bytes of `r` to `out`, a megabyte at a time, checking each growth
/// against the host's memory (a gzip bomb is an error naming the size it reached).
fn read_checked(
    r: &mut impl Read,
    out: &mut Vec<u8>,
    limit: usize,
    file: &str,
) -> Result<(), IoError> {
    const CHUNK: usize = 1 << 20;
    let gz = |message: String| IoError::Parse {
        file: file.into(),
        location: "gzip stream".into(),
        message,
    };
    while out.len() < limit {
        let want = CHUNK.min(limit - out.len());
        if out.capacity() - out.len() < want {
            let grown = (out.capacity() * 2).max(out.len() + want);
            rxpipe_core::limits::check_host((grown - out.capacity()) as u64, || {
                format!("decompressing {file} past {} bytes", out.len())
            })
            .map_err(|e| gz(e.to_string()))?;
            out.reserve_exact(grown - out.len());
        }
        let start = out.len();
        out.resize(start + want, 0);
        let n = r.read(&mut out[start..]).map_err(|e| gz(e.to_string()))?;
        out.truncate(start + n);
        if n == 0 {
            break;
        }
    }
    Ok(())
}

/// Recognises the format of (decompressed) file content; `name` breaks ties.
pub fn sniff(data: &[u8], name: &str) -> Option<Format> {
    let lower = name.to_ascii_lowercase();
    let lower = lower.strip_suffix(".gz").unwrap_or(&lower);
    if data.starts_with(b"ply") {
        return Some(Format::Ply);
    }
    if data.starts_with(b"glTF") {
        return Some(Format::Gltf);
    }
    if stl::looks_binary(data) {
        return Some(Format::Stl);
    }
    let head = &data[..data.len().min(512)];
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start();
    if t.starts_with('{') {
        return Some(Format::Gltf);
    }
    if t.starts_with("solid") && (lower.ends_with(".stl") || text.contains("facet")) {
        return Some(Format::Stl);
    }
    for (ext, f) in [
        (".obj", Format::Obj),
        (".ply", Format::Ply),
        (".stl", Format::Stl),
        (".gltf", Format::Gltf),
        (".glb", Format::Gltf),
    ] {
        if lower.ends_with(ext) {
            return Some(f);
        }
    }
    // OBJ has no magic: recognise its statements
    if t.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("v ") || l.starts_with("f ") || l.starts_with("vn ") || l.starts_with('#')
    }) {
        return Some(Format::Obj);
    }
    None
}

/// A vertex colour as files store it (sRGB-encoded display values in [0, 1], alpha linear) in
/// linear RGBA, as materials use it; out-of-range values are clamped, NaN reads as 0.
pub fn display_color(c: [f32; 4]) -> glam::Vec4 {
    let lin = |v: f32| {
        rxpipe_core::color::srgb_to_linear(if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) })
    };
    let a = if c[3].is_nan() {
        1.0
    } else {
        c[3].clamp(0.0, 1.0)
    };
    glam::Vec4::new(lin(c[0]), lin(c[1]), lin(c[2]), a)
}

/// Welds a triangle soup (STL, a non-indexed glTF primitive) into an indexed mesh (exact
/// equality, [`rxpipe_core::mesh::weld`]): duplicate corners become one vertex. The serial method
/// keeps the file's order (vertices numbered by first reference), which loaders promise.
pub fn weld_soup(m: Mesh) -> Result<Mesh, IoError> {
    use rxpipe_core::mesh::weld::{weld, WeldError};
    if m.indices.is_empty() {
        return Ok(m);
    }
    match weld(&m, None) {
        Ok(w) => Ok(w.mesh),
        Err(WeldError::Mesh(e)) => Err(e.into()),
        Err(e) => Err(IoError::Unsupported {
            file: m.name.clone(),
            message: e.to_string(),
        }),
    }
}

/// Loads every mesh of a file (glTF may hold several primitives; other formats hold one), each
/// validated, with the file's own counts.
pub fn load_meshes(path: impl AsRef<Path>) -> Result<(Vec<Mesh>, SourceCounts), IoError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let base = path.parent().map(PathBuf::from);
    parse_meshes(read_file(path)?, &name, base.as_deref())
}

/// [`load_meshes`] on bytes already read: `name` names them in errors and breaks format ties by
/// its extension; a glTF's external buffers and images are looked for under `base` (none: only
/// embedded ones). The loaders' fuzz targets (fuzz/) enter here.
pub fn parse_meshes(
    data: Vec<u8>,
    name: &str,
    base: Option<&Path>,
) -> Result<(Vec<Mesh>, SourceCounts), IoError> {
    if is_gzip(&data) {
        // enough of the text to recognise the format; the text formats are then parsed from the
        // stream, so that memory follows the mesh and not its text
        let mut dec = flate2::read::MultiGzDecoder::new(&data[..]);
        let mut head = Vec::new();
        read_checked(&mut dec, &mut head, 64 << 10, name)?;
        let format = sniff(&head, name);
        // ascii STL starts with "solid"; so may a binary one's header, but then NUL bytes follow
        let ascii_stl = format == Some(Format::Stl)
            && head.trim_ascii_start().starts_with(b"solid")
            && !head.contains(&0);
        if matches!(format, Some(Format::Obj | Format::Ply)) || ascii_stl {
            let input = std::io::BufReader::new(Read::chain(&head[..], dec));
            let (m, c) = match format {
                Some(Format::Obj) => obj::parse_reader(input, name)?,
                Some(Format::Ply) => ply::parse_stream(input, name)?,
                _ => stl::parse_ascii(input, name)?,
            };
            m.validate()?;
            return Ok((vec![m], c));
        }
        read_checked(&mut dec, &mut head, usize::MAX, name)?;
        return parse_plain(head, name, base);
    }
    parse_plain(data, name, base)
}

/// [`parse_meshes`] on data that is not compressed.
fn parse_plain(
    data: Vec<u8>,
    name: &str,
    base: Option<&Path>,
) -> Result<(Vec<Mesh>, SourceCounts), IoError> {
    let name = name.to_string();
    let format = sniff(&data, &name).ok_or_else(|| IoError::Unsupported {
        file: name.clone(),
        message: "not a recognised mesh format (OBJ, PLY, STL, glTF, optionally gzipped)".into(),
    })?;
    fn text<'a>(d: &'a [u8], name: &str) -> Result<&'a str, IoError> {
        std::str::from_utf8(d).map_err(|e| IoError::Parse {
            file: name.to_string(),
            location: format!("byte {}", e.valid_up_to()),
            message: "not valid UTF-8 text".into(),
        })
    }
    let (meshes, counts) = match format {
        Format::Obj => {
            let (m, c) = obj::parse(text(&data, &name)?, &name)?;
            (vec![m], c)
        }
        Format::Ply => {
            let (m, c) = ply::parse(&data, &name)?;
            (vec![m], c)
        }
        Format::Stl => {
            let (m, c) = stl::parse(&data, &name)?;
            (vec![m], c)
        }
        Format::Gltf => {
            let ms = gltf::parse(&data, &name, base)?;
            let c = SourceCounts {
                vertices: ms.iter().map(|m| m.vertex_count()).sum(),
                faces: ms.iter().map(|m| m.triangle_count()).sum(),
            };
            (ms, c)
        }
    };
    for m in &meshes {
        m.validate()?;
    }
    Ok((meshes, counts))
}

/// Loads a glTF file (.gltf or .glb) as a scene: its primitives with their materials, each
/// validated, and its lights and camera.
pub fn load_gltf_scene(path: impl AsRef<Path>) -> Result<gltf::GltfScene, IoError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let mut data = read_file(path)?;
    if is_gzip(&data) {
        // a gzipped glTF is a scene all the same: its lights, camera and notes are kept
        data = gunzip(&data, usize::MAX, &name)?;
    }
    if !matches!(sniff(&data, &name), Some(Format::Gltf) | None) {
        // named like a glTF but holding another format: load it as that format (what is no
        // format at all gets the glTF parser's error)
        let (meshes, _) = parse_plain(data, &name, path.parent())?;
        return Ok(gltf::GltfScene::of_meshes(meshes, Vec::new()));
    }
    let g = gltf::parse_scene(&data, &name, path.parent())?;
    for m in &g.meshes {
        m.validate()?;
    }
    Ok(g)
}

/// The files a mesh file refers to, which no output may replace: a glTF's buffers and images
/// ([`gltf::referenced_files`]), an OBJ's material libraries and their images
/// ([`mtl::referenced_files`]); none for other files.
pub fn referenced_files(path: &Path) -> Vec<PathBuf> {
    let mut v = gltf::referenced_files(path);
    v.extend(mtl::referenced_files(path));
    v
}

/// Loads an OBJ file (gzipped or not) as a scene takes it: one mesh per material its libraries
/// define (see [`mtl`]), with notes. A file whose content is another format loads as that
/// format.
pub fn load_obj_scene(path: impl AsRef<Path>) -> Result<mtl::ObjScene, IoError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let data = read_file(path)?;
    let gz = is_gzip(&data);
    let head = if gz {
        gunzip(&data, 64 << 10, &name)?
    } else {
        data[..data.len().min(64 << 10)].to_vec()
    };
    if sniff(&head, &name) != Some(Format::Obj) {
        let (meshes, _) = parse_meshes(data, &name, path.parent())?;
        return Ok(mtl::ObjScene {
            meshes,
            ..Default::default()
        });
    }
    let (mesh, _, uses) = if gz {
        let stream = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(&data[..]));
        obj::parse_with_materials(stream, &name)?
    } else {
        obj::parse_with_materials(&data[..], &name)?
    };
    mesh.validate()?;
    mtl::apply(mesh, &uses, &name, path.parent().unwrap_or(Path::new(".")))
}

/// Loads a file as one mesh (glTF primitives merged in world space).
///
/// ```no_run
/// let bunny = rxpipe_io::load_mesh("../shared/meshes/stanford-bunny.obj")?;
/// println!("{} triangles", bunny.triangle_count());
/// # Ok::<(), rxpipe_io::IoError>(())
/// ```
pub fn load_mesh(path: impl AsRef<Path>) -> Result<Mesh, IoError> {
    let path = path.as_ref();
    let (meshes, _) = load_meshes(path)?;
    let mut it = meshes.into_iter();
    let mut first = it.next().ok_or_else(|| IoError::Unsupported {
        file: path.display().to_string(),
        message: "the file holds no triangles".into(),
    })?;
    for m in it {
        first.append(&m);
    }
    first.name = path.display().to_string();
    Ok(first)
}

/// Loads a mesh file, or, where no file of that name exists and the text has the shape of one, the
/// mesh a generator spec names (`icosphere:LEVEL`, `torus:N`, `grid:N`, `rings:N`; see
/// [`rxpipe_core::mesh::Generator`]). A bad spec is an error listing the generators.
pub fn load_mesh_or_spec(path: impl AsRef<Path>) -> Result<Mesh, IoError> {
    let path = path.as_ref();
    match path.to_str() {
        Some(s) if !path.exists() && rxpipe_core::mesh::looks_like_spec(s) => {
            Ok(rxpipe_core::mesh::from_spec(s)?)
        }
        _ => load_mesh(path),
    }
}

/// Writes a mesh as OBJ or binary PLY, chosen by the extension. The file is written to a
/// temporary name beside the target and renamed into place, so a failure leaves any existing
/// file untouched.
pub fn save_mesh(mesh: &Mesh, path: impl AsRef<Path>) -> Result<(), IoError> {
    save(mesh, None, path.as_ref())
}

/// [`save_mesh`] with an RGB colour per face; PLY only.
pub fn save_mesh_with_face_colors(
    mesh: &Mesh,
    colors: &[[u8; 3]],
    path: impl AsRef<Path>,
) -> Result<(), IoError> {
    save(mesh, Some(colors), path.as_ref())
}

fn save(mesh: &Mesh, colors: Option<&[[u8; 3]]>, path: &Path) -> Result<(), IoError> {
    let name = path.display().to_string();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let unsupported = |message: &str| {
        Err(IoError::Unsupported {
            file: name.clone(),
            message: message.into(),
        })
    };
    match ext.as_str() {
        "ply" => {}
        _ if colors.is_some() => return unsupported("face colours can be written to .ply only"),
        "obj" => {}
        _ => return unsupported("can write .obj or .ply"),
    }
    write_atomically(path, |w| {
        let r = match ext.as_str() {
            "obj" => obj::write(mesh, w),
            _ => ply::write_binary_colored(mesh, colors, w),
        };
        r.map_err(IoError::at(path))
    })
}

/// Writes `path` whole or not at all: `write` fills a new temporary file beside it (named for
/// this process, and never one that exists), which is renamed into place once `write` and the
/// flush succeeded and removed on any failure. So a failed write leaves neither a partial file
/// nor a stray temporary one, and whatever was at `path` before stays until the new file is
/// complete. Errors of the file system name `path`.
pub fn write_atomically<E: From<IoError>>(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<(), E>,
) -> Result<(), E> {
    let io = IoError::at(path);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".rxpipe-{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(&io)?;
    let mut w = std::io::BufWriter::new(file);
    let result = write(&mut w).and_then(|()| {
        // (the file closed before it is renamed)
        let file = w.into_inner().map_err(|e| io(e.into_error()))?;
        drop(file);
        std::fs::rename(&tmp, path).map_err(|e| io(e).into())
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The shared glTF scenes: `$RXPIPE_SCENES`, else `../shared/scenes` from the current directory
/// or from the crate root. `None` when absent.
pub fn shared_scenes_dir() -> Option<PathBuf> {
    shared_dir("RXPIPE_SCENES", "scenes")
}

/// Where the shared test meshes are: `$RXPIPE_MESHES`, else `../shared/meshes` from the current
/// directory or from the crate root. `None` when absent.
pub fn shared_meshes_dir() -> Option<PathBuf> {
    shared_dir("RXPIPE_MESHES", "meshes")
}

/// A folder of ../shared: the one `$var` names, else ../shared/<name> (or one level further up).
fn shared_dir(var: &str, name: &str) -> Option<PathBuf> {
    if let Ok(d) = std::env::var(var) {
        let p = PathBuf::from(d);
        if p.is_dir() {
            return Some(p);
        }
    }
    // (from the top of the repository, from the folder above it, or from a crate's folder)
    [
        format!("../shared/{name}"),
        format!("../../shared/{name}"),
        format!("../../../shared/{name}"),
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_by_extension_through_gz() {
        let gltf = ["gltf", "glb"];
        assert!(named(Path::new("a/scene.GLB.gz"), &gltf));
        assert!(named(Path::new("scene.gltf"), &gltf));
        assert!(!named(Path::new("scene.gltf.zip"), &gltf));
        assert!(!named(Path::new("myglb"), &gltf));
        assert!(named(Path::new("m.obj.gz"), &["obj"]));
        assert!(!named(Path::new("m.objx"), &["obj"]));
    }
}
