//! glTF KHR_draco_mesh_compression (crates/io/src/gltf_draco.rs): a grid encoded here with the
//! draco-core encoder loads to the same triangles and attributes, within the encoder's
//! quantization; a bitstream that does not decode is an error naming the primitive.

mod common;

use draco_core::{
    DataType, EncoderBuffer, EncoderOptions, FaceIndex, GeometryAttributeType, Mesh, MeshEncoder,
    PointAttribute,
};
use glam::{Vec2, Vec3, Vec4};
use serde_json::json;

const SIDE: usize = 17;

/// Positions, normals, uvs, 8-bit colours and triangles.
type Grid = (Vec<Vec3>, Vec<Vec3>, Vec<Vec2>, Vec<[u8; 4]>, Vec<[u32; 3]>);

/// The grid's vertices and triangles: a bumpy sheet with normals, uvs and colours.
fn grid() -> Grid {
    let (mut p, mut n, mut uv, mut c) = (vec![], vec![], vec![], vec![]);
    for y in 0..SIDE {
        for x in 0..SIDE {
            let (fx, fy) = (x as f32 / 16.0, y as f32 / 16.0);
            p.push(Vec3::new(fx, fy, (fx * 6.0).sin() * 0.2));
            n.push(Vec3::new(-(fx * 6.0).cos() * 1.2, 0.0, 1.0).normalize());
            uv.push(Vec2::new(fx, 1.0 - fy));
            c.push([(x * 15) as u8, (y * 15) as u8, 200, 255]);
        }
    }
    let mut t = vec![];
    for y in 0..SIDE - 1 {
        for x in 0..SIDE - 1 {
            let a = (y * SIDE + x) as u32;
            let (b, d) = (a + 1, a + SIDE as u32);
            t.push([a, b, d + 1]);
            t.push([a, d + 1, d]);
        }
    }
    (p, n, uv, c, t)
}

fn attribute(
    kind: GeometryAttributeType,
    data: &[u8],
    comps: u8,
    ty: DataType,
    n: usize,
) -> PointAttribute {
    let mut a = PointAttribute::new();
    a.init(kind, comps, ty, ty == DataType::Uint8, n);
    a.buffer_mut().write(0, data);
    a
}

/// The grid as a Draco bitstream, and the unique ids of its position, normal, uv and colour.
fn encoded() -> (Vec<u8>, [u32; 4]) {
    let (p, n, uv, c, t) = grid();
    let floats = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|f| f.to_le_bytes()).collect() };
    let count = p.len();
    let mut mesh = Mesh::new();
    let flat3 = |v: &[Vec3]| v.iter().flat_map(|x| x.to_array()).collect::<Vec<f32>>();
    let flat2 = |v: &[Vec2]| v.iter().flat_map(|x| x.to_array()).collect::<Vec<f32>>();
    let ids = [
        mesh.add_attribute(attribute(
            GeometryAttributeType::Position,
            &floats(&flat3(&p)),
            3,
            DataType::Float32,
            count,
        )),
        mesh.add_attribute(attribute(
            GeometryAttributeType::Normal,
            &floats(&flat3(&n)),
            3,
            DataType::Float32,
            count,
        )),
        mesh.add_attribute(attribute(
            GeometryAttributeType::TexCoord,
            &floats(&flat2(&uv)),
            2,
            DataType::Float32,
            count,
        )),
        mesh.add_attribute(attribute(
            GeometryAttributeType::Color,
            c.as_flattened(),
            4,
            DataType::Uint8,
            count,
        )),
    ];
    mesh.set_num_faces(t.len());
    for (k, f) in t.iter().enumerate() {
        mesh.set_face(FaceIndex(k as u32), f.map(|i| i.into()));
    }
    let mut options = EncoderOptions::new();
    for (att, bits) in [(0, 14), (1, 10), (2, 12)] {
        options.set_attribute_int(att, "quantization_bits", bits);
    }
    let mut encoder = MeshEncoder::new();
    encoder.set_mesh(mesh);
    let mut out = EncoderBuffer::new();
    encoder.encode(&options, &mut out).unwrap();
    (out.data().to_vec(), ids.map(|i| i as u32))
}

/// A glTF of one primitive compressed as `bytes`, whose attributes have the ids `ids`.
fn gltf(bytes: &[u8], ids: [u32; 4], faces: usize) -> String {
    let n = SIDE * SIDE;
    let acc = |kind: &str, comp: u32| json!({"componentType": comp, "count": n, "type": kind});
    let mut position = acc("VEC3", 5126);
    position["min"] = json!([0.0, 0.0, -0.2]);
    position["max"] = json!([1.0, 1.0, 0.2]);
    let mut color = acc("VEC4", 5121);
    color["normalized"] = json!(true);
    json!({
        "asset": {"version": "2.0"},
        "extensionsUsed": ["KHR_draco_mesh_compression"],
        "extensionsRequired": ["KHR_draco_mesh_compression"],
        "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{
            "attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2, "COLOR_0": 3},
            "indices": 4,
            "extensions": {"KHR_draco_mesh_compression": {"bufferView": 0, "attributes":
                {"POSITION": ids[0], "NORMAL": ids[1], "TEXCOORD_0": ids[2], "COLOR_0": ids[3]}}}
        }]}],
        "accessors": [position, acc("VEC3", 5126), acc("VEC2", 5126), color,
                      {"componentType": 5125, "count": faces * 3, "type": "SCALAR"}],
        "bufferViews": [{"buffer": 0, "byteLength": bytes.len()}],
        "buffers": [{"byteLength": bytes.len(), "uri": format!(
            "data:application/octet-stream;base64,{}", base64::encode(bytes))}]
    })
    .to_string()
}

#[test]
fn draco_primitives_load_to_their_triangles_and_attributes() {
    let (bytes, ids) = encoded();
    let (p, n, uv, c, t) = grid();
    let path = common::tmp_dir("draco").join("grid.gltf");
    std::fs::write(&path, gltf(&bytes, ids, t.len())).unwrap();
    let scene = rxpipe::io::load_gltf_scene(&path).unwrap();
    assert!(scene.notes.is_empty(), "{:?}", scene.notes);
    let m = &scene.meshes[0];
    assert_eq!(m.triangle_count(), t.len());
    // each decoded vertex is the grid's nearest vertex, within the quantization
    let (normals, uvs, colors) = (
        m.normals.as_ref().unwrap(),
        m.uvs.as_ref().unwrap(),
        m.colors.as_ref().unwrap(),
    );
    let original: Vec<usize> = m
        .positions
        .iter()
        .map(|q| {
            (0..p.len())
                .min_by(|&a, &b| p[a].distance(*q).total_cmp(&p[b].distance(*q)))
                .unwrap()
        })
        .collect();
    for (k, &o) in original.iter().enumerate() {
        assert!(m.positions[k].distance(p[o]) < 1e-3, "position {k}");
        assert!(
            normals[k].distance(n[o]) < 1e-2,
            "normal {k}: {} for {}",
            normals[k],
            n[o]
        );
        assert!(uvs[k].distance(uv[o]) < 1e-3, "uv {k}");
        let want = Vec4::from_array(c[o].map(|b| b as f32 / 255.0));
        assert!(
            colors[k].distance(want) < 1e-6,
            "colour {k}: {} for {want}",
            colors[k]
        );
    }
    // the same triangles, each with its corners in the same turn
    let canonical = |f: [u32; 3]| {
        let r = (0..3).min_by_key(|&k| f[k]).unwrap();
        [f[r], f[(r + 1) % 3], f[(r + 2) % 3]]
    };
    let mut got: Vec<[u32; 3]> = m
        .indices
        .chunks_exact(3)
        .map(|f| canonical([0, 1, 2].map(|k| original[f[k] as usize] as u32)))
        .collect();
    let mut want: Vec<[u32; 3]> = t.iter().map(|&f| canonical(f)).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn draco_data_that_does_not_decode_is_an_error_naming_the_primitive() {
    let (mut bytes, ids) = encoded();
    let faces = (SIDE - 1) * (SIDE - 1) * 2;
    // the bitstream cut short, and its header broken
    let half = bytes.len() / 2;
    for (name, data) in [
        ("cut", bytes[..half].to_vec()),
        ("broken", {
            bytes[..8].copy_from_slice(b"NOTDRACO");
            bytes.clone()
        }),
    ] {
        let path = common::tmp_dir("draco").join(format!("{name}.gltf"));
        std::fs::write(&path, gltf(&data, ids, faces)).unwrap();
        let e = rxpipe::io::load_gltf_scene(&path).unwrap_err().to_string();
        assert!(
            e.contains("mesh 0 ('') primitive 0") && e.contains("Draco data"),
            "{name}: {e}"
        );
    }
    // an attribute id the bitstream does not have
    let (bytes, mut ids) = encoded();
    ids[1] = 9;
    let path = common::tmp_dir("draco").join("id.gltf");
    std::fs::write(&path, gltf(&bytes, ids, faces)).unwrap();
    let e = rxpipe::io::load_gltf_scene(&path).unwrap_err().to_string();
    assert!(e.contains("no attribute 9 (for NORMAL)"), "{e}");
}
