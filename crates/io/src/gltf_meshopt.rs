//! EXT_meshopt_compression: buffer views stored compressed by meshoptimizer's codecs (what
//! gltfpack writes), decoded at load time with the `meshopt` crate into the bytes the views
//! would hold uncompressed, so that the rest of the loader reads them as any other view.
//!
//! A compressed view keeps its place in its own buffer (usually a "fallback" buffer with no data
//! in the file): its decoded bytes are written there, at the view's offset. Every size and mode
//! is checked against the specification before a decoder runs (the decoders assert on strides
//! and counts they do not take); a decoder's failure is an error naming the view.

use gltf::buffer::Data;
use serde_json::Value;

/// The extension's name.
pub const NAME: &str = "EXT_meshopt_compression";

/// Whether buffer `b` is a fallback buffer of the extension: its bytes come from decoding, so
/// its file (if it names one) is not read.
pub fn is_fallback(b: &gltf::Buffer) -> bool {
    b.extension_value(NAME)
        .and_then(|v| v.get("fallback"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// Decodes every compressed view of `doc` into `buffers` (one per buffer of `doc`, fallback
/// buffers zero-filled to their length). Errors name the view.
pub fn decode_views(doc: &gltf::Document, buffers: &mut [Data]) -> Result<(), (String, String)> {
    for v in doc.views() {
        let Some(ext) = v.extension_value(NAME) else {
            continue;
        };
        let place = format!("buffer view {}", v.index());
        decode_view(&v, ext, buffers).map_err(|m| (place, m))?;
    }
    Ok(())
}

fn decode_view(v: &gltf::buffer::View, ext: &Value, buffers: &mut [Data]) -> Result<(), String> {
    let field = |name: &str| ext.get(name).and_then(Value::as_u64);
    let need = |name: &str| field(name).ok_or_else(|| format!("{NAME} without a valid {name}"));
    let source = need("buffer")? as usize;
    let offset = field("byteOffset").unwrap_or(0) as usize;
    let length = need("byteLength")? as usize;
    let stride = need("byteStride")? as usize;
    let count = need("count")? as usize;
    let mode = ext.get("mode").and_then(Value::as_str).unwrap_or("");
    let filter = ext.get("filter").and_then(Value::as_str).unwrap_or("NONE");
    // the specification's limits, which the decoders assert
    let ok = match mode {
        "ATTRIBUTES" => stride % 4 == 0 && (4..=256).contains(&stride),
        "TRIANGLES" => count % 3 == 0 && (stride == 2 || stride == 4),
        "INDICES" => stride == 2 || stride == 4,
        _ => return Err(format!("{NAME} with the unknown mode '{mode}'")),
    };
    if !ok {
        return Err(format!(
            "{NAME} in {mode} mode with byteStride {stride} and count {count}, which the specification does not allow"
        ));
    }
    let filter_ok = match filter {
        "NONE" => true,
        "OCTAHEDRAL" => mode == "ATTRIBUTES" && (stride == 4 || stride == 8),
        "QUATERNION" => mode == "ATTRIBUTES" && stride == 8,
        "EXPONENTIAL" => mode == "ATTRIBUTES",
        _ => false,
    };
    if !filter_ok {
        return Err(format!(
            "{NAME} with filter '{filter}' in {mode} mode with byteStride {stride}, which the specification does not allow"
        ));
    }
    let size = count
        .checked_mul(stride)
        .filter(|&s| s == v.length())
        .ok_or_else(|| {
            format!(
                "{NAME}: {count} elements of {stride} bytes do not make the view's {} bytes",
                v.length()
            )
        })?;
    let src = buffers
        .get(source)
        .and_then(|b| b.get(offset..offset.checked_add(length)?))
        .ok_or_else(|| {
            format!("{NAME}: bytes {offset}+{length} of buffer {source} lie outside it")
        })?
        .to_vec();
    let dest = v.buffer().index();
    let at = v.offset();
    if buffers[dest].len() < at.saturating_add(size) {
        return Err(format!(
            "{NAME}: the view's bytes {at}+{size} lie outside buffer {dest}"
        ));
    }
    // decoded into 32-bit words: the filters work on aligned words
    rxpipe_core::limits::check_host(size as u64, || format!("decoding {size} bytes"))
        .map_err(|e| e.to_string())?;
    let mut words = vec![0u32; size.div_ceil(4)];
    let out = words.as_mut_ptr().cast::<std::ffi::c_void>();
    // SAFETY: `words` holds at least count * stride bytes; the source slice is read within its
    // length; stride, count and mode were checked against what each decoder takes above.
    let code = unsafe {
        use meshopt::ffi;
        match mode {
            "ATTRIBUTES" => {
                ffi::meshopt_decodeVertexBuffer(out, count, stride, src.as_ptr(), src.len())
            }
            "TRIANGLES" => {
                ffi::meshopt_decodeIndexBuffer(out, count, stride, src.as_ptr(), src.len())
            }
            _ => ffi::meshopt_decodeIndexSequence(out, count, stride, src.as_ptr(), src.len()),
        }
    };
    if code != 0 {
        return Err(format!(
            "{NAME}: the {mode} data does not decode (meshoptimizer's code {code})"
        ));
    }
    // SAFETY: as above; the filter's stride was checked against what it takes
    unsafe {
        use meshopt::ffi;
        match filter {
            "OCTAHEDRAL" => ffi::meshopt_decodeFilterOct(out, count, stride),
            "QUATERNION" => ffi::meshopt_decodeFilterQuat(out, count, stride),
            "EXPONENTIAL" => ffi::meshopt_decodeFilterExp(out, count, stride),
            _ => {}
        }
    }
    let bytes: &[u8] = bytemuck::cast_slice(&words);
    buffers[dest].0[at..at + size].copy_from_slice(&bytes[..size]);
    Ok(())
}
