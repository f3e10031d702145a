//! glTF's data as the loaders read it: URIs percent-decoded, accessors checked against what
//! the specification allows and read as floats. Shared by the mesh loader (gltf.rs) and
//! the readers of its extensions (materials, skins, animation, instancing).

/// `uri` with its %XX escapes decoded (a '%' not followed by two hex digits stands for itself).
fn percent_bytes(uri: &str) -> Vec<u8> {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// `uri` with its %XX escapes decoded, as text (check [`percent_decodes_to_utf8`] first).
pub(crate) fn percent_decode(uri: &str) -> String {
    String::from_utf8_lossy(&percent_bytes(uri)).into_owned()
}

/// Whether `uri` with its %XX escapes decoded is UTF-8 (a '%' not followed by two hex digits
/// stands for itself, as the gltf crate's decoder reads it).
pub(crate) fn percent_decodes_to_utf8(uri: &str) -> bool {
    std::str::from_utf8(&percent_bytes(uri)).is_ok()
}

/// What is wrong with `count` elements of `size` bytes at `offset` in `view` (none: they fit, the
/// view lies in its buffer and its stride holds an element).
fn misfit(count: usize, size: usize, offset: usize, view: &gltf::buffer::View) -> Option<String> {
    let stride = view.stride().unwrap_or(size);
    let end = count
        .checked_sub(1)
        .and_then(|c| c.checked_mul(stride))
        .and_then(|x| x.checked_add(offset))
        .and_then(|x| x.checked_add(size));
    let view_end = view.offset().checked_add(view.length());
    if stride < size
        || end.is_none_or(|e| e > view.length())
        || view_end.is_none_or(|e| e > view.buffer().length())
    {
        return Some(format!(
            "stride {stride} does not fit buffer view {} ({} bytes at {} of a {}-byte buffer)",
            view.index(),
            view.length(),
            view.offset(),
            view.buffer().length()
        ));
    }
    None
}

/// An attribute's elements as floats, whatever component type the loader's checks let through:
/// where the accessor is normalized (or `always_norm`), an integer maps to [0, 1] (unsigned) or
/// [-1, 1] (signed, the most negative value clamped to -1) as the specification says; otherwise
/// it keeps its value. `None` where its buffer is missing.
pub(crate) fn read_floats<'a, 's, const N: usize>(
    a: gltf::Accessor<'a>,
    data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    always_norm: bool,
) -> Option<Vec<[f32; N]>>
where
    [f32; N]: gltf::accessor::Item,
    [i8; N]: gltf::accessor::Item,
    [u8; N]: gltf::accessor::Item,
    [i16; N]: gltf::accessor::Item,
    [u16; N]: gltf::accessor::Item,
{
    use gltf::accessor::{DataType as T, Iter};
    let norm = always_norm || a.normalized();
    // (a normalized integer over its type's largest value; signed ones clamped at -1)
    fn convert<C: Copy + Into<f32>, const N: usize>(
        it: Iter<'_, [C; N]>,
        largest: f32,
        norm: bool,
    ) -> Vec<[f32; N]>
    where
        [C; N]: gltf::accessor::Item,
    {
        let f = |c: C| {
            let v: f32 = c.into();
            if norm {
                (v / largest).max(-1.0)
            } else {
                v
            }
        };
        it.map(|e| e.map(f)).collect()
    }
    Some(match a.data_type() {
        T::F32 => Iter::<[f32; N]>::new(a, data)?.collect(),
        T::I8 => convert(Iter::<[i8; N]>::new(a, data)?, 127.0, norm),
        T::U8 => convert(Iter::<[u8; N]>::new(a, data)?, 255.0, norm),
        T::I16 => convert(Iter::<[i16; N]>::new(a, data)?, 32767.0, norm),
        T::U16 => convert(Iter::<[u16; N]>::new(a, data)?, 65535.0, norm),
        T::U32 => return None,
    })
}

/// Checks one accessor against the component types and dimensions the specification allows
/// for `what`, and that its elements lie inside their buffer view and the view inside its buffer.
pub(crate) fn check_accessor(
    what: &str,
    a: gltf::Accessor,
    types: &[gltf::accessor::DataType],
    dims: gltf::accessor::Dimensions,
    quantized: bool,
) -> Result<(), String> {
    use gltf::accessor::DataType as T;
    if !types.contains(&a.data_type()) || a.dimensions() != dims {
        return Err(format!(
            "{what} accessor {} is {:?} {:?}; the specification allows {types:?} {dims:?}{}",
            a.index(),
            a.data_type(),
            a.dimensions(),
            if quantized {
                " (with KHR_mesh_quantization)"
            } else {
                ""
            }
        ));
    }
    // an integer attribute other than a colour or uv is normalized or not as the table of
    // KHR_mesh_quantization says
    if (what == "NORMAL" || what == "TANGENT") && a.data_type() != T::F32 && !a.normalized() {
        return Err(format!(
            "{what} accessor {} is {:?} but not normalized; KHR_mesh_quantization stores {}s normalized",
            a.index(),
            a.data_type(),
            what.to_lowercase()
        ));
    }
    if a.count() == 0 {
        return Err(format!("{what} accessor {} has no elements", a.index()));
    }
    // the elements must lie inside the view and the view inside its buffer, with a stride
    // of at least one element (the readers assert each element's bytes: fuzz/ gltf)
    let size = a.size();
    if let Some(view) = a.view() {
        if let Some(e) = misfit(a.count(), size, a.offset(), &view) {
            return Err(format!(
                "{what} accessor {} ({} elements of {size} bytes at offset {}): {e}",
                a.index(),
                a.count(),
                a.offset()
            ));
        }
    }
    // a sparse accessor's indices and values likewise (the reader computes their ends
    // unchecked)
    if let Some(sp) = a.sparse() {
        let n = sp.count();
        let idx = sp.indices();
        let misfit = if n == 0 {
            Some("no elements".to_string())
        } else {
            misfit(n, idx.index_type().size(), idx.offset(), &idx.view())
                .map(|e| format!("its indices: {e}"))
                .or_else(|| {
                    let v = sp.values();
                    misfit(n, size, v.offset(), &v.view()).map(|e| format!("its values: {e}"))
                })
        };
        if let Some(e) = misfit {
            return Err(format!(
                "{what} accessor {} is sparse with {n} elements; {e}",
                a.index()
            ));
        }
    }
    Ok(())
}

/// Checks the accessors this loader reads against the types the specification allows for them:
/// the gltf crate's readers assume them (an indices accessor of floats reaches an
/// `unreachable!`, found by fuzz/ gltf), and an empty accessor has no last element.
pub(crate) fn check_accessors(prim: &gltf::Primitive, quantized: bool) -> Result<(), String> {
    use gltf::accessor::{DataType as T, Dimensions as D};
    use gltf::Semantic;
    let check = |what: &str, a: gltf::Accessor, types: &[T], dims: D| {
        check_accessor(what, a, types, dims, quantized)
    };
    if let Some(a) = prim.indices() {
        check("indices", a, &[T::U8, T::U16, T::U32], D::Scalar)?;
    }
    // the component types the core specification allows, and those KHR_mesh_quantization adds
    let (positions, normals, uvs): (&[T], &[T], &[T]) = if quantized {
        let all = &[T::F32, T::I8, T::U8, T::I16, T::U16];
        (all, &[T::F32, T::I8, T::I16], all)
    } else {
        (&[T::F32], &[T::F32], &[T::F32, T::U8, T::U16])
    };
    for (semantic, a) in prim.attributes() {
        match semantic {
            Semantic::Positions => check("POSITION", a, positions, D::Vec3)?,
            Semantic::Normals => check("NORMAL", a, normals, D::Vec3)?,
            Semantic::Tangents => check("TANGENT", a, normals, D::Vec4)?,
            Semantic::TexCoords(n) => check(&format!("TEXCOORD_{n}"), a, uvs, D::Vec2)?,
            Semantic::Colors(0) => {
                let d = if a.dimensions() == D::Vec3 {
                    D::Vec3
                } else {
                    D::Vec4
                };
                check("COLOR_0", a, &[T::F32, T::U8, T::U16], d)?
            }
            _ => {}
        }
    }
    Ok(())
}
