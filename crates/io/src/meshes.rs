//! Meshes from files and to files: each format's loader chosen by content, gzip read as a stream
//! where the format allows, and the writers.

use crate::error::{IoError, SourceCounts};
use crate::files::{gunzip, is_gzip, read_checked, read_file, write_atomically};
use crate::format::{sniff, Format};
use crate::{gltf, mtl, obj, ply, stl};
use rxpipe_core::mesh::Mesh;
use std::io::Read;
use std::path::{Path, PathBuf};

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
