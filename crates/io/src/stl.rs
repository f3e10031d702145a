//! STL, binary and ascii: triangle soups (three vertices per facet), welded on load into an
//! indexed mesh by the re-indexing stage (`io::weld_soup`); facet normals are not kept.

use crate::error::{IoError, SourceCounts};
use glam::Vec3;
use rxpipe_core::mesh::Mesh;

/// True when the bytes have the exact size of a binary STL with the count in its header.
pub fn looks_binary(data: &[u8]) -> bool {
    data.len() >= 84 && {
        let n = u32::from_le_bytes(data[80..84].try_into().unwrap()) as usize;
        Some(data.len()) == n.checked_mul(50).and_then(|b| b.checked_add(84))
    }
}

pub fn parse(data: &[u8], file: &str) -> Result<(Mesh, SourceCounts), IoError> {
    if !looks_binary(data) {
        if std::str::from_utf8(data).is_err() {
            return Err(IoError::Parse {
                file: file.into(),
                location: "start".into(),
                message:
                    "neither a binary STL (size does not match its triangle count) nor ascii text"
                        .into(),
            });
        }
        return parse_ascii(data, file);
    }
    let n = u32::from_le_bytes(data[80..84].try_into().unwrap()) as usize;
    let mut p = Vec::with_capacity(n * 3);
    for t in 0..n {
        let rec = &data[84 + 50 * t..84 + 50 * t + 50];
        for k in 0..3 {
            let f = |j: usize| {
                let o = 12 + 12 * k + 4 * j;
                f32::from_le_bytes(rec[o..o + 4].try_into().unwrap())
            };
            p.push(Vec3::new(f(0), f(1), f(2)));
        }
    }
    weld(p, n, file)
}

/// Parses ascii STL read from `input` (a gzip stream, say): memory follows the facets, not the
/// text.
pub fn parse_ascii(
    input: impl std::io::BufRead,
    file: &str,
) -> Result<(Mesh, SourceCounts), IoError> {
    let mut tokens = super::text::Tokens::new(input);
    let mut p: Vec<Vec3> = Vec::new();
    while let Some(t) = tokens.next_token(file)? {
        if t != "vertex" || !tokens.first_on_line {
            continue;
        }
        let line = tokens.line;
        let mut v = [0f32; 3];
        for c in &mut v {
            let s = tokens.next_token(file)?.unwrap_or("");
            *c = s.parse().map_err(|_| IoError::Parse {
                file: file.into(),
                location: format!("line {line}"),
                message: format!("bad vertex coordinate '{s}'"),
            })?;
        }
        super::text::room(&mut p, 1, "vertices", file)?;
        p.push(Vec3::from_array(v));
    }
    if p.len() % 3 != 0 {
        return Err(IoError::Parse {
            file: file.into(),
            location: "end".into(),
            message: format!("{} vertices is not a whole number of facets", p.len()),
        });
    }
    let n = p.len() / 3;
    weld(p, n, file)
}

/// The soup of `faces` facets welded into an indexed mesh, with the file's counts.
fn weld(positions: Vec<Vec3>, faces: usize, file: &str) -> Result<(Mesh, SourceCounts), IoError> {
    let indices = (0..positions.len() as u32).collect();
    let nv = positions.len();
    Ok((
        crate::vertex::weld_soup(Mesh::new(file, positions, indices))?,
        SourceCounts {
            vertices: nv,
            faces,
        },
    ))
}
