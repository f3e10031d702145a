//! KHR_draco_mesh_compression: primitives whose attributes and triangles are stored as one
//! Draco bitstream, decoded at load time with the `draco-core` crate (pure Rust, made for
//! untrusted input: its decodes are bounded by [`DecodeLimits`]).
//!
//! Each compressed primitive's decoded attributes and triangles are written into one new
//! buffer, with a view and an accessor of their own (floats; joints as 16-bit integers;
//! triangles as 32-bit indices), and the primitive is pointed at those accessors. The rest of
//! the loader then reads the primitive as any other. Errors name the primitive.

use draco_core::{DataType, DecodeLimits, DecoderBuffer, Mesh as DracoMesh, MeshDecoder};
use gltf::buffer::Data;
use serde_json::{json, Value};

/// The extension's name.
pub const NAME: &str = "KHR_draco_mesh_compression";

/// Gives the accessors of compressed primitives that have no data of their own (the
/// extension's accessors describe the decoded values but hold none) a one-byte placeholder
/// view, so that the gltf crate's validation, which requires a view, passes; they are never
/// read, as [`decode`] points the primitives at new accessors. Returns the placeholder
/// buffer's index (its one byte comes from the loader, not from a file), if one was added.
pub fn placeholders(json: &mut gltf::json::Root) -> Option<usize> {
    if !json.extensions_used.iter().any(|e| e == NAME) {
        return None;
    }
    let mut empty: Vec<usize> = Vec::new();
    for prim in json.meshes.iter().flat_map(|m| &m.primitives) {
        let compressed = prim
            .extensions
            .as_ref()
            .is_some_and(|e| e.others.contains_key(NAME));
        if !compressed {
            continue;
        }
        let used = prim.attributes.values().chain(prim.indices.as_ref());
        for a in used.map(|a| a.value()) {
            if json
                .accessors
                .get(a)
                .is_some_and(|a| a.buffer_view.is_none() && a.sparse.is_none())
            {
                empty.push(a);
            }
        }
    }
    if empty.is_empty() {
        return None;
    }
    let buffer = json.buffers.len();
    json.buffers
        .push(serde_json::from_value(json!({"byteLength": 1})).expect("a valid buffer"));
    json.buffer_views.push(
        serde_json::from_value(json!({"buffer": buffer, "byteLength": 1})).expect("a valid view"),
    );
    let view = gltf::json::Index::new(json.buffer_views.len() as u32 - 1);
    for a in empty {
        json.accessors[a].buffer_view = Some(view);
    }
    Some(buffer)
}

/// Largest decoded attribute bytes of one primitive: at most a quarter of the host's memory
/// left (each decoded float is copied twice more before the mesh is built), and 2 GB.
fn max_decoded_bytes() -> u64 {
    (rxpipe_core::limits::host_available() / 4).min(2 << 30)
}

/// The document with every Draco-compressed primitive of `doc` decoded into a new buffer,
/// appended to `buffers`; `None` when the file uses no Draco. Errors: (place, message).
pub fn decode(
    doc: &gltf::Document,
    buffers: &mut Vec<Data>,
) -> Result<Option<gltf::Document>, (String, String)> {
    if !doc.extensions_used().any(|e| e == NAME) {
        return Ok(None);
    }
    let mut root =
        serde_json::to_value(doc.as_json()).map_err(|e| ("document".into(), e.to_string()))?;
    let mut blob: Vec<u8> = Vec::new();
    let buffer = buffers.len();
    for mesh in doc.meshes() {
        for prim in mesh.primitives() {
            // (points and lines are left to the loader, which says it does not draw them)
            let Some(ext) = prim
                .extension_value(NAME)
                .filter(|_| prim.mode() == gltf::mesh::Mode::Triangles)
            else {
                continue;
            };
            let place = format!(
                "mesh {} ('{}') primitive {}",
                mesh.index(),
                mesh.name().unwrap_or(""),
                prim.index()
            );
            let (attributes, indices) =
                decode_primitive(doc, &prim, ext, buffers, &mut blob).map_err(|m| (place, m))?;
            // (new accessors, as a file may share one between primitives)
            for (semantic, accessor) in attributes {
                let a = push_accessor(&mut root, buffer, accessor);
                root["meshes"][mesh.index()]["primitives"][prim.index()]["attributes"][semantic] =
                    json!(a);
            }
            let i = push_accessor(&mut root, buffer, indices);
            root["meshes"][mesh.index()]["primitives"][prim.index()]["indices"] = json!(i);
        }
    }
    root["buffers"]
        .as_array_mut()
        .ok_or_else(|| ("buffers".to_string(), "the file has no buffers".to_string()))?
        .push(json!({"byteLength": blob.len()}));
    buffers.push(Data(blob));
    let root: gltf::json::Root =
        serde_json::from_value(root).map_err(|e| ("document".into(), e.to_string()))?;
    let doc = gltf::Document::from_json(root).map_err(|e| ("document".into(), e.to_string()))?;
    Ok(Some(doc))
}

/// A decoded attribute or the triangles: where its bytes lie in the new buffer and how the
/// accessor describes them.
struct Decoded {
    offset: usize,
    length: usize,
    component: u32,
    kind: &'static str,
    count: usize,
    /// the original accessor's bounds (POSITION must keep them)
    min: Option<Value>,
    max: Option<Value>,
}

/// Adds a view and an accessor over `d` to `root`; the accessor's index.
fn push_accessor(root: &mut Value, buffer: usize, d: Decoded) -> usize {
    if !root["bufferViews"].is_array() {
        root["bufferViews"] = json!([]);
    }
    let views = root["bufferViews"]
        .as_array_mut()
        .expect("made an array above");
    views.push(json!({"buffer": buffer, "byteOffset": d.offset, "byteLength": d.length}));
    let view = views.len() - 1;
    let mut a = json!({"bufferView": view, "componentType": d.component, "count": d.count,
                       "type": d.kind});
    if let (Some(lo), Some(hi)) = (d.min, d.max) {
        a["min"] = lo;
        a["max"] = hi;
    }
    let accessors = root["accessors"]
        .as_array_mut()
        .expect("a primitive has accessors");
    accessors.push(a);
    accessors.len() - 1
}

/// Decodes one primitive's bitstream; its attributes (by semantic name) and its triangles, their
/// bytes appended to `blob`.
fn decode_primitive(
    doc: &gltf::Document,
    prim: &gltf::Primitive,
    ext: &Value,
    buffers: &[Data],
    blob: &mut Vec<u8>,
) -> Result<(Vec<(String, Decoded)>, Decoded), String> {
    let view = ext
        .get("bufferView")
        .and_then(Value::as_u64)
        .and_then(|v| doc.views().nth(v as usize))
        .ok_or_else(|| format!("its {NAME} names no buffer view of the file"))?;
    let ids = ext
        .get("attributes")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("its {NAME} has no attributes"))?;
    let bytes = buffers
        .get(view.buffer().index())
        .and_then(|b| {
            b.0.get(view.offset()..view.offset().checked_add(view.length())?)
        })
        .ok_or_else(|| {
            format!(
                "its {NAME} buffer view {} lies outside its buffer",
                view.index()
            )
        })?;
    let mut mesh = DracoMesh::new();
    let limits = DecodeLimits::default().with_max_decoded_bytes(max_decoded_bytes());
    let mut input = DecoderBuffer::new(bytes).with_limits(limits);
    // (a panic inside the decoder on some input is its bug; here it is the file's error)
    let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        MeshDecoder::new().decode(&mut input, &mut mesh)
    }));
    match decoded {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("its Draco data does not decode: {e}")),
        Err(_) => return Err("its Draco data does not decode (the decoder failed)".into()),
    }
    let points = mesh.num_points();
    if points == 0 || mesh.num_faces() == 0 {
        return Err("its Draco data holds no triangles".into());
    }
    // every attribute the extension names, from the decoded points
    let mut out = Vec::new();
    for (semantic, id) in ids {
        let id = id
            .as_u64()
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| format!("its {NAME} attribute {semantic} has no valid id"))?;
        let accessor = prim
            .attributes()
            .find(|(s, _)| s.to_string() == *semantic)
            .map(|(_, a)| a)
            .ok_or_else(|| {
                format!("its {NAME} names {semantic}, which the primitive does not have")
            })?;
        let attribute = mesh
            .attribute_by_unique_id(id)
            .ok_or_else(|| format!("its Draco data has no attribute {id} (for {semantic})"))?;
        use gltf::accessor::Dimensions as D;
        let (components, kind) = match accessor.dimensions() {
            D::Scalar => (1, "SCALAR"),
            D::Vec2 => (2, "VEC2"),
            D::Vec3 => (3, "VEC3"),
            D::Vec4 => (4, "VEC4"),
            d => return Err(format!("its attribute {semantic} is {d:?}, not a vector")),
        };
        let mut values = attribute.read_f32s(points, components);
        // integers the file marks normalized are fractions of their type's largest value
        if attribute.normalized() {
            let largest = match attribute.data_type() {
                DataType::Uint8 => 255.0,
                DataType::Int8 => 127.0,
                DataType::Uint16 => 65535.0,
                DataType::Int16 => 32767.0,
                _ => 1.0,
            };
            for v in &mut values {
                *v = (*v / largest).max(-1.0);
            }
        }
        while blob.len() % 4 != 0 {
            blob.push(0);
        }
        let offset = blob.len();
        let joints = semantic.starts_with("JOINTS_");
        if joints {
            // (joint indices stay integers: 16 bits, as the specification allows)
            for v in &values {
                blob.extend_from_slice(&(v.clamp(0.0, 65535.0) as u16).to_le_bytes());
            }
        } else {
            for v in &values {
                blob.extend_from_slice(&v.to_le_bytes());
            }
        }
        let positions = semantic == "POSITION";
        out.push((
            semantic.clone(),
            Decoded {
                offset,
                length: blob.len() - offset,
                component: if joints { 5123 } else { 5126 },
                kind,
                count: points,
                min: positions.then(|| bounds(&values, min_of)).flatten(),
                max: positions.then(|| bounds(&values, max_of)).flatten(),
            },
        ));
    }
    while blob.len() % 4 != 0 {
        blob.push(0);
    }
    let offset = blob.len();
    for face in mesh.faces() {
        for corner in face {
            blob.extend_from_slice(&corner.0.to_le_bytes());
        }
    }
    let triangles = Decoded {
        offset,
        length: blob.len() - offset,
        component: 5125,
        kind: "SCALAR",
        count: mesh.num_faces() * 3,
        min: None,
        max: None,
    };
    Ok((out, triangles))
}

fn min_of(a: f32, b: f32) -> f32 {
    a.min(b)
}

fn max_of(a: f32, b: f32) -> f32 {
    a.max(b)
}

/// The componentwise bounds of three-component `values` (POSITION's min or max).
fn bounds(values: &[f32], pick: fn(f32, f32) -> f32) -> Option<Value> {
    let mut it = values.chunks_exact(3);
    let first: [f32; 3] = it.next()?.try_into().ok()?;
    let b = it.fold(first, |acc, v| [0, 1, 2].map(|k| pick(acc[k], v[k])));
    Some(json!(b))
}
