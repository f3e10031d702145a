//! Bytes in and out, safely: files read whole after their size is checked against the memory,
//! gzip streams decompressed with each growth checked, names matched by extension, files written
//! atomically, and the shared test data found.

use crate::error::IoError;
use std::io::Read;
use std::path::{Path, PathBuf};

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
pub(crate) fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b])
}

/// The first `limit` bytes of gzip `data` decompressed, each growth checked ([`read_checked`]).
pub(crate) fn gunzip(data: &[u8], limit: usize, file: &str) -> Result<Vec<u8>, IoError> {
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
pub(crate) fn read_checked(
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
