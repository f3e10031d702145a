//! Loaders on the shared meshes and on malformed input.

mod common;

use common::textured_json;
use rxpipe::io::{self, IoError};
use std::io::Write;

#[test]
fn shared_meshes_load_with_the_documented_counts() {
    let Some(dir) = common::meshes() else { return };
    // (file, vertices, faces) as in ../shared/meshes/README.md
    let expect = [
        ("stanford-bunny.obj", 35_947, 69_451),
        ("ogre.obj", 62_194, 124_008),
        ("beast.obj", 32_311, 32_364),
        ("rocker-arm.obj", 10_044, 20_088),
        ("fandisk.obj", 6_475, 12_946),
        ("teapot.obj", 3_644, 6_320),
        ("spot.obj", 2_930, 5_856),
        ("cow.obj", 2_903, 5_804),
        ("suzanne.obj", 507, 500),
    ];
    for (f, v, faces) in expect {
        let (meshes, counts) = io::load_meshes(dir.join(f)).unwrap();
        assert_eq!(counts.vertices, v, "{f} vertices");
        assert_eq!(counts.faces, faces, "{f} faces");
        let m = &meshes[0];
        m.validate().unwrap();
        assert!(
            m.triangle_count() >= faces,
            "{f}: polygons triangulate to at least one triangle each"
        );
    }
    // beast has polygons of 3 to 6 corners: more triangles than faces, and v/vt corners
    let beast = io::load_mesh(dir.join("beast.obj")).unwrap();
    assert!(beast.triangle_count() > 32_364 && beast.uvs.is_some());
    // suzanne's v//vn corners carry normals
    assert!(io::load_mesh(dir.join("suzanne.obj"))
        .unwrap()
        .normals
        .is_some());
}

#[test]
fn igea_tristrips_become_triangles() {
    let Some(dir) = common::meshes() else { return };
    let (m, counts) = io::load_meshes(dir.join("igea.ply")).unwrap();
    let m = &m[0];
    assert_eq!(counts.vertices, 134_345);
    assert_eq!(m.vertex_count(), 134_345);
    // a closed-ish surface: about two triangles per vertex, every vertex used
    let t = m.triangle_count();
    assert!(t > 250_000 && t < 280_000, "{t} triangles");
    assert!(m.referenced_vertex_count() > 134_000);
    // strips alternate winding: consecutive triangles of a strip face the same way
    let n = |k: usize| {
        let p = |c: usize| m.positions[m.indices[3 * k + c] as usize];
        (p(1) - p(0)).cross(p(2) - p(0)).normalize_or_zero()
    };
    let agree = (0..1000).filter(|&k| n(k).dot(n(k + 1)) > 0.0).count();
    assert!(
        agree > 950,
        "{agree} of 1000 neighbours agree in orientation"
    );
}

#[test]
fn gzipped_distance_meshes_load_by_content() {
    let Some(dir) = common::distance_meshes() else {
        return;
    };
    for (f, v, faces) in [
        ("tools_1000_A.obj.gz", 484, 1_000),
        ("sphere_1000_B.obj.gz", 1_000, 1_996),
        ("tools_10000_B.obj.gz", 4_999, 10_000),
    ] {
        let (_, c) = io::load_meshes(dir.join(f)).unwrap();
        assert_eq!((c.vertices, c.faces), (v, faces), "{f}");
    }
    // gzip recognised by its magic bytes under a misleading name
    let tmp = common::tmp_dir("gz");
    let p = tmp.join("mesh.bin");
    std::fs::copy(dir.join("tools_1000_A.obj.gz"), &p).unwrap();
    let (_, c) = io::load_meshes(&p).unwrap();
    assert_eq!(c.faces, 1_000);
}

fn write(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let d = common::tmp_dir("malformed");
    let p = d.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn err_text(r: Result<rxpipe::Mesh, IoError>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn obj_features_and_errors() {
    let p = write(
        "features.obj",
        b"# quad with every corner style\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 1\nvn 0 0 1\ng group\nf 1/1/1 2/2/1 3/1/1 4/2/1\nf -4//1 -2//1 -1//1\n",
    );
    let m = io::load_mesh(&p).unwrap();
    assert_eq!(m.triangle_count(), 3);
    assert!(m.normals.is_some() && m.uvs.is_some());
    let p = write("bad-index.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99\n");
    let e = err_text(io::load_mesh(&p));
    assert!(e.contains("line 4") && e.contains("99"), "{e}");
    let p = write("bad-number.obj", b"v 0 zero 0\n");
    assert!(err_text(io::load_mesh(&p)).contains("line 1"));
    let p = write("two-corners.obj", b"v 0 0 0\nv 1 0 0\nf 1 2\n");
    assert!(err_text(io::load_mesh(&p)).contains("at least 3"));
}

fn ply_header(format: &str, nv: usize, nf: usize) -> Vec<u8> {
    format!(
        "ply\nformat {format} 1.0\nelement vertex {nv}\nproperty float x\nproperty float y\nproperty float z\nelement face {nf}\nproperty list uchar int vertex_indices\nend_header\n"
    )
    .into_bytes()
}

#[test]
fn ply_ascii_binary_le_and_be_agree() {
    let pos = [
        [0f32, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let mut ascii = ply_header("ascii", 4, 1);
    for p in pos {
        ascii.extend(format!("{} {} {}\n", p[0], p[1], p[2]).bytes());
    }
    ascii.extend(b"4 0 1 2 3\n");
    let mut le = ply_header("binary_little_endian", 4, 1);
    let mut be = ply_header("binary_big_endian", 4, 1);
    for p in pos {
        for c in p {
            le.extend(c.to_le_bytes());
            be.extend(c.to_be_bytes());
        }
    }
    le.push(4);
    be.push(4);
    for i in 0..4i32 {
        le.extend(i.to_le_bytes());
        be.extend(i.to_be_bytes());
    }
    let a = io::load_mesh(write("a.ply", &ascii)).unwrap();
    let l = io::load_mesh(write("le.ply", &le)).unwrap();
    let b = io::load_mesh(write("be.ply", &be)).unwrap();
    assert_eq!(a.indices, vec![0, 1, 2, 0, 2, 3]);
    assert_eq!(a.positions, l.positions);
    assert_eq!(a.positions, b.positions);
    assert_eq!(a.indices, b.indices);
}

#[test]
fn truncated_binary_ply_is_an_error() {
    let mut le = ply_header("binary_little_endian", 4, 1);
    le.extend([0u8; 4 * 12]);
    le.push(3);
    le.extend(0i32.to_le_bytes()); // two of three indices missing
    let e = err_text(io::load_mesh(write("trunc.ply", &le)));
    assert!(e.contains("truncated") && e.contains("face"), "{e}");
    if let Some(dir) = common::meshes() {
        let igea = std::fs::read(dir.join("igea.ply")).unwrap();
        let e = err_text(io::load_mesh(write(
            "igea-half.ply",
            &igea[..igea.len() / 2],
        )));
        assert!(e.contains("truncated"), "{e}");
    }
    let mut bad = ply_header("ascii", 3, 1);
    bad.extend(b"0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n");
    let e = err_text(io::load_mesh(write("range.ply", &bad)));
    assert!(e.contains("index 7"), "{e}");
}

#[test]
fn stl_binary_and_ascii_are_welded_on_load() {
    let mut bin = vec![0u8; 80];
    bin.extend(2u32.to_le_bytes());
    for t in 0..2 {
        bin.extend([0u8; 12]);
        for v in [[0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, t as f32]] {
            for c in v {
                bin.extend(c.to_le_bytes());
            }
        }
        bin.extend([0u8; 2]);
    }
    // two facets sharing the corners (0,0,0) and (1,0,0): four vertices once welded
    let m = io::load_mesh(write("b.stl", &bin)).unwrap();
    assert_eq!((m.vertex_count(), m.triangle_count()), (4, 2));
    assert_eq!(m.indices, [0, 1, 2, 0, 1, 3]);
    let ascii = b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
    let m = io::load_mesh(write("a.stl", ascii)).unwrap();
    assert_eq!((m.vertex_count(), m.triangle_count()), (3, 1));
    let e = err_text(io::load_mesh(write(
        "bad.stl",
        b"solid x\nfacet\nvertex 0 0 nope\n",
    )));
    assert!(e.contains("line 3"), "{e}");
}

fn b64(bytes: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// A glTF with one node (translated by +10 in x) holding an indexed and a non-indexed primitive.
fn gltf_json(buffer_uri: &str, byte_length: usize) -> String {
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],
"nodes":[{{"mesh":0,"translation":[10,0,0]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"material":0}},{{"attributes":{{"POSITION":0}}}}]}}],
"materials":[{{"pbrMetallicRoughness":{{"baseColorFactor":[0.5,0.25,1,1]}}}}],
"buffers":[{{"uri":"{buffer_uri}","byteLength":{byte_length}}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":6}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
{{"bufferView":1,"componentType":5123,"count":3,"type":"SCALAR"}}]}}"#
    )
}

fn gltf_buffer() -> Vec<u8> {
    let mut b = Vec::new();
    for c in [0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
        b.extend(c.to_le_bytes());
    }
    for i in [0u16, 1, 2] {
        b.extend(i.to_le_bytes());
    }
    b
}

#[test]
fn gltf_embedded_external_and_glb() {
    let buf = gltf_buffer();
    let json = gltf_json(
        &format!("data:application/octet-stream;base64,{}", b64(&buf)),
        buf.len(),
    );
    let (ms, _) = io::load_meshes(write("embedded.gltf", json.as_bytes())).unwrap();
    assert_eq!(ms.len(), 2, "indexed and non-indexed primitives");
    for m in &ms {
        assert_eq!(m.triangle_count(), 1);
        assert_eq!(m.positions[1].x, 11.0, "node translation applied");
    }
    assert_eq!(ms[0].base_color, Some([0.5, 0.25, 1.0, 1.0]));
    // external buffer beside the file
    let d = common::tmp_dir("gltf-ext");
    std::fs::write(d.join("buf.bin"), &buf).unwrap();
    std::fs::write(d.join("ext.gltf"), gltf_json("buf.bin", buf.len())).unwrap();
    assert_eq!(io::load_meshes(d.join("ext.gltf")).unwrap().0.len(), 2);
    // GLB: header, JSON chunk, BIN chunk
    let mut j = gltf_json("", buf.len())
        .replace(r#""uri":"","#, "")
        .into_bytes();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let mut bin = buf.clone();
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let mut glb = Vec::new();
    glb.extend(b"glTF");
    glb.extend(2u32.to_le_bytes());
    glb.extend(((12 + 8 + j.len() + 8 + bin.len()) as u32).to_le_bytes());
    glb.extend((j.len() as u32).to_le_bytes());
    glb.extend(b"JSON");
    glb.extend(&j);
    glb.extend((bin.len() as u32).to_le_bytes());
    glb.extend(b"BIN\0");
    glb.extend(&bin);
    assert_eq!(io::load_meshes(write("m.glb", &glb)).unwrap().0.len(), 2);
    // a scene opens directly from glTF
    let s = rxpipe::io::load_scene(write("scene.gltf", json.as_bytes())).unwrap();
    assert_eq!(s.objects.len(), 2);
    // a scene file referencing the glTF keeps its primitives apart, each with its colour and
    // material; `color` replaces them only when given
    let dir = std::path::Path::new(&write("scene.gltf", json.as_bytes()))
        .parent()
        .unwrap()
        .to_path_buf();
    let toml = |color: &str| {
        let p = dir.join("ref.toml");
        std::fs::write(
            &p,
            format!("[[object]]\nmesh = \"scene.gltf\"\nscale = 2.0\n{color}\n"),
        )
        .unwrap();
        rxpipe::io::load_scene(&p).unwrap()
    };
    let kept = toml("");
    assert_eq!(kept.objects.len(), 2);
    assert_eq!(kept.objects[0].color, [0.5, 0.25, 1.0, 1.0]);
    assert_eq!(
        kept.objects[1].color,
        [1.0, 1.0, 1.0, 1.0],
        "glTF's default"
    );
    assert!(kept.objects[0].mesh.material.is_some() && kept.objects[1].mesh.material.is_none());
    let over = toml("color = [0.1, 0.2, 0.3]");
    for o in &over.objects {
        assert_eq!(o.color, [0.1, 0.2, 0.3, 1.0]);
    }
    let m = over.objects[0].mesh.material.as_ref().unwrap();
    assert_eq!(m.base_color, glam::Vec4::new(0.1, 0.2, 0.3, 1.0));
}

#[test]
fn broken_gltf_buffer_is_an_error() {
    let buf = gltf_buffer();
    // the buffer is shorter than the accessors need
    let short = gltf_json(
        &format!("data:application/octet-stream;base64,{}", b64(&buf[..20])),
        20,
    );
    let e = err_text(io::load_mesh(write("short.gltf", short.as_bytes())));
    assert!(e.contains("short.gltf"), "{e}");
    // the external buffer file is missing
    let missing = gltf_json("nowhere.bin", buf.len());
    let e = err_text(io::load_mesh(write("missing.gltf", missing.as_bytes())));
    assert!(
        e.contains("missing.gltf") && e.contains("buffer 0") && e.contains("nowhere.bin"),
        "the missing file is named: {e}"
    );
    let e = err_text(io::load_mesh(write("garbage.gltf", b"{ not json")));
    assert!(e.contains("garbage.gltf"), "{e}");
}

#[test]
fn non_finite_positions_and_bad_indices_are_named() {
    let m = rxpipe::Mesh::new(
        "m",
        vec![glam::Vec3::ZERO, glam::Vec3::NAN, glam::Vec3::ONE],
        vec![0, 1, 2],
    );
    let e = m.validate().unwrap_err().to_string();
    assert!(e.contains("vertex 1"), "{e}");
    let p = write("nan.obj", b"v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n");
    assert!(err_text(io::load_mesh(&p)).contains("vertex 1"));
    let m = rxpipe::Mesh::new("m", vec![glam::Vec3::ZERO; 3], vec![0, 1, 2, 2, 1, 3]);
    let e = m.validate().unwrap_err().to_string();
    assert!(e.contains("triangle 1") && e.contains("index 3"), "{e}");
}

#[test]
fn writers_round_trip_and_never_clobber_on_failure() {
    let m = rxpipe::mesh::torus(1.0, 0.3, 12, 8);
    let d = common::tmp_dir("write");
    for ext in ["obj", "ply"] {
        let p = d.join(format!("t.{ext}"));
        io::save_mesh(&m, &p).unwrap();
        let back = io::load_mesh(&p).unwrap();
        assert_eq!(back.indices, m.indices);
        assert_eq!(back.positions.len(), m.positions.len());
        for (a, b) in back.positions.iter().zip(&m.positions) {
            assert!((*a - *b).length() < 1e-5);
        }
    }
    let keep = d.join("keep.stl");
    std::fs::File::create(&keep)
        .unwrap()
        .write_all(b"precious")
        .unwrap();
    assert!(io::save_mesh(&m, &keep).is_err());
    assert_eq!(std::fs::read(&keep).unwrap(), b"precious");
    // a write that fails where it is renamed into place (over a folder) leaves no temporary
    // file behind, as one that fails while writing does; the error names the target
    let folder = d.join("folder.ply");
    std::fs::create_dir_all(&folder).unwrap();
    let before: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let e = io::save_mesh(&m, &folder).unwrap_err().to_string();
    assert!(e.contains("folder.ply"), "{e}");
    let e = rxpipe::image::save(&d.join("folder.ply"), 1, 1, &[0; 4]).unwrap_err();
    assert!(e.to_string().contains(".ply"), "{e}");
    let png = d.join("frame.png");
    std::fs::create_dir_all(&png).unwrap();
    assert!(rxpipe::image::save(&png, 1, 1, &[0; 4]).is_err());
    std::fs::remove_dir(&png).unwrap();
    let e = io::write_atomically(&folder, |_| {
        Err(io::IoError::at(&folder)(std::io::ErrorKind::Other.into()))
    });
    assert!(e.is_err());
    let after: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(after, before, "stray files");
    // and one that succeeds replaces the file whole
    io::write_atomically(&keep, |w| {
        w.write_all(b"new").map_err(io::IoError::at(&keep))
    })
    .unwrap();
    assert_eq!(std::fs::read(&keep).unwrap(), b"new");
}

#[test]
fn scene_files_parse_and_report_errors_with_lines() {
    let s = rxpipe::io::load_scene("scenes/default.toml").unwrap();
    assert!(s.objects.len() >= 3 && s.triangle_count() > 10_000);
    // the built-in copy (what `rxpipe view` opens from any folder) is the same scene
    let b = rxpipe::io::builtin_scene();
    assert_eq!(b.objects.len(), s.objects.len());
    assert_eq!(b.triangle_count(), s.triangle_count());
    assert_eq!(b.camera, s.camera);
    assert_eq!(
        s.sources,
        vec![std::path::PathBuf::from("scenes/default.toml")]
    );
    let d = common::tmp_dir("scene");
    let p = d.join("bad.toml");
    std::fs::write(
        &p,
        "[camera]\neye = [0, 0, 1]\ntarget = [0, 0, 0]\n\n[[object]]\ngenerator = \"cube\"\n",
    )
    .unwrap();
    let e = rxpipe::io::load_scene(&p).unwrap_err().to_string();
    assert!(e.contains("object 1") && e.contains("cube"), "{e}");
    std::fs::write(&p, "[camera]\neye = [0, 0]\n").unwrap();
    let e = rxpipe::io::load_scene(&p).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("line 2"), "{e}");
    std::fs::write(&p, "[[object]]\nmesh = \"does-not-exist.obj\"\n").unwrap();
    let e = rxpipe::io::load_scene(&p).unwrap_err().to_string();
    assert!(e.contains("does-not-exist.obj"), "{e}");
}

#[test]
fn gltf_sparse_accessors_must_fit_their_views() {
    // POSITION: three vertices, of which vertex 2 is replaced sparsely by (5, 5, 0)
    let mut buf = gltf_buffer();
    buf.truncate(36);
    buf.extend(2u16.to_le_bytes());
    buf.extend([0u8; 2]);
    for c in [5f32, 5.0, 0.0] {
        buf.extend(c.to_le_bytes());
    }
    let gltf = |values_len: usize, sparse_count: usize| {
        format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],
"buffers":[{{"uri":"data:application/octet-stream;base64,{}","byteLength":{}}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":2}},
{{"buffer":0,"byteOffset":40,"byteLength":{values_len}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[5,5,0],
"sparse":{{"count":{sparse_count},"indices":{{"bufferView":1,"componentType":5123}},"values":{{"bufferView":2}}}}}}]}}"#,
            b64(&buf),
            buf.len()
        )
    };
    let m = io::load_mesh(write("sparse.gltf", gltf(12, 1).as_bytes())).unwrap();
    assert_eq!(m.positions[2], glam::Vec3::new(5.0, 5.0, 0.0));
    // values shorter than one element, and a count the indices cannot hold: errors naming the
    // accessor, no panic in the reader
    for (len, count, part) in [(8, 1, "values"), (12, 4, "indices")] {
        let e = err_text(io::load_mesh(write(
            "sparse-bad.gltf",
            gltf(len, count).as_bytes(),
        )));
        assert!(
            e.contains("sparse-bad.gltf") && e.contains("accessor 0") && e.contains(part),
            "{e}"
        );
    }
}

#[test]
fn gltf_non_indexed_primitives_are_welded_on_load() {
    // a quad as a 6-corner soup: (0,0) (1,0) (1,1) | (0,0) (1,1) (0,1)
    let mut buf = Vec::new();
    for c in [
        0f32, 0., 0., 1., 0., 0., 1., 1., 0., 0., 0., 0., 1., 1., 0., 0., 1., 0.,
    ] {
        buf.extend(c.to_le_bytes());
    }
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],
"buffers":[{{"uri":"data:application/octet-stream;base64,{}","byteLength":72}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":72}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":6,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}}]}}"#,
        b64(&buf)
    );
    let m = io::load_mesh(write("soup.gltf", json.as_bytes())).unwrap();
    assert_eq!((m.vertex_count(), m.triangle_count()), (4, 2));
    assert_eq!(m.indices, [0, 1, 2, 0, 2, 3]);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

// Text formats are parsed from the gzip stream and binary ones read whole: either way a gzipped
// file loads exactly as the plain one, and a broken one fails the same way.
#[test]
fn gzipped_files_load_exactly_like_plain_ones() {
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut ascii = ply_header("ascii", 4, 2);
    ascii.extend(b"0 0 0\n1 0 0\n1 1 0.5\n0 1 0\n3 0 1 2\n4 0 2 3 1\n");
    cases.push(("a.ply".into(), ascii));
    let mut le = ply_header("binary_little_endian", 3, 1);
    for c in [0f32, 0., 0., 1., 0., 0., 0., 1., 0.] {
        le.extend(c.to_le_bytes());
    }
    le.push(3);
    for i in 0..3i32 {
        le.extend(i.to_le_bytes());
    }
    cases.push(("le.ply".into(), le));
    cases.push((
        "a.stl".into(),
        b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 1 0 0\nvertex 1 1 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n".to_vec(),
    ));
    // a binary STL whose header starts like an ascii one
    let mut bin = b"solid but binary".to_vec();
    bin.resize(80, b' ');
    bin.extend(1u32.to_le_bytes());
    bin.extend([0u8; 12]);
    for c in [0f32, 0., 0., 1., 0., 0., 0., 1., 0.] {
        bin.extend(c.to_le_bytes());
    }
    bin.extend([0u8; 2]);
    cases.push(("b.stl".into(), bin));
    cases.push((
        "q.obj".into(),
        b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 4//1\n".to_vec(),
    ));
    if let Some(dir) = common::meshes() {
        for f in ["igea.ply", "stanford-bunny.obj"] {
            cases.push((f.into(), std::fs::read(dir.join(f)).unwrap()));
        }
    }
    for (name, bytes) in &cases {
        let plain = io::load_mesh(write(name, bytes)).unwrap();
        let gz = io::load_mesh(write(&format!("{name}.gz"), &gzip(bytes))).unwrap();
        assert_eq!(gz.positions, plain.positions, "{name}");
        assert_eq!(gz.normals, plain.normals, "{name}");
        assert_eq!(gz.indices, plain.indices, "{name}");
        assert!(plain.triangle_count() > 0, "{name}");
    }
    // the same errors, with the same places
    let mut bad = ply_header("ascii", 3, 1);
    bad.extend(b"0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n");
    let bad_stl = b"solid x\nfacet\nvertex 0 0 nope\n".to_vec();
    let mut short = ply_header("ascii", 3, 1);
    short.extend(b"0 0 0\n1 0 0\n0 1\n");
    // a word too long to be a number, on the body's second line (the file's eleventh)
    let mut long = ply_header("ascii", 3, 1);
    long.extend(b"0 0 0\n1 0 ");
    long.extend([b'7'; 200]);
    let e = err_text(io::load_mesh(write("long.ply", &long)));
    assert!(e.contains("line 11") && e.contains("longer than"), "{e}");
    for (name, bytes) in [
        ("r.ply", bad),
        ("n.stl", bad_stl),
        ("s.ply", short),
        ("long.ply", long),
    ] {
        let plain = err_text(io::load_mesh(write(name, &bytes)));
        let gz = err_text(io::load_mesh(write(&format!("{name}.gz"), &gzip(&bytes))));
        assert_eq!(
            gz.replace(&format!("{name}.gz"), name),
            plain,
            "{name}: gzipped and plain errors differ"
        );
    }
}

#[test]
fn gltf_textures_on_a_third_uv_set_are_left_out_with_a_note() {
    // the project's textured scene (its images are data URIs), with the bricks' normal map on
    // TEXCOORD_1 (which the cube is given) and their emission painted by a texture on
    // TEXCOORD_2, its factor white: a third set; the leaf's base colour moved to TEXCOORD_2 by
    // KHR_texture_transform; the glow's emission on TEXCOORD_1, which its ring lacks
    let mut g = textured_json();
    let named = |g: &serde_json::Value, n: &str| common::gltf_material(g, n);
    let (bricks, leaf, glow) = (named(&g, "bricks"), named(&g, "leaf"), named(&g, "glow"));
    let mats = g["materials"].as_array_mut().unwrap();
    mats[bricks]["normalTexture"]["texCoord"] = 1.into();
    mats[bricks]["emissiveTexture"] = serde_json::json!({"index": 1, "texCoord": 2});
    mats[bricks]["emissiveFactor"] = serde_json::json!([1.0, 1.0, 1.0]);
    mats[leaf]["pbrMetallicRoughness"]["baseColorTexture"]["extensions"] =
        serde_json::json!({"KHR_texture_transform": {"texCoord": 2}});
    mats[glow]["emissiveTexture"] = serde_json::json!({"index": 0, "texCoord": 1});
    mats[glow]["emissiveFactor"] = serde_json::json!([1.0, 1.0, 1.0]);
    mats[glow]["pbrMetallicRoughness"]["baseColorTexture"] = serde_json::json!({"index": 0});
    let cube = &mut g["meshes"][1]["primitives"][0]["attributes"];
    cube["TEXCOORD_1"] = cube["TEXCOORD_0"].clone();
    g["extensionsUsed"] = serde_json::json!(["KHR_texture_transform"]);
    let p = write("uv-sets.gltf", g.to_string().as_bytes());
    let scene = rxpipe::io::load_scene(&p).unwrap();
    assert_eq!(scene.notes.len(), 3, "{:?}", scene.notes);
    let said = |what: &[&str]| {
        assert!(
            scene
                .notes
                .iter()
                .any(|n| what.iter().all(|w| n.contains(w))),
            "{what:?} in {:?}",
            scene.notes
        )
    };
    // the leaf's only texture reads TEXCOORD_2, which its primitive lacks: read at (0, 0), said
    said(&["has textures but no TEXCOORD_2"]);
    // the glow's emissive texture is kept; its ring has no TEXCOORD_1, said
    said(&["has textures that read TEXCOORD_1 but no such coordinates"]);
    let glowing = common::scene_material(&scene, "glow");
    assert_eq!(glowing.emissive_texture.as_ref().unwrap().uv_set, 1);
    // the bricks read two sets; the third is left out, and its emission with it (the factor
    // alone would light the whole surface white)
    said(&[
        "'bricks'",
        "emissive texture reads TEXCOORD_2",
        "its emission with it",
    ]);
    let material = |n: &str| common::scene_material(&scene, n);
    let bricks = material("bricks");
    assert_eq!(
        (bricks.emissive, bricks.emissive_texture.is_none()),
        (rxpipe::glam::Vec3::ZERO, true)
    );
    assert_eq!(bricks.normal_texture.as_ref().unwrap().uv_set, 1);
    assert_eq!(bricks.base_color_texture.as_ref().unwrap().uv_set, 0);
    assert!(material("leaf").base_color_texture.is_some());
    let cube = scene
        .objects
        .iter()
        .find(|o| o.mesh.name.ends_with(": cube"))
        .unwrap();
    assert_eq!(cube.mesh.uvs1, cube.mesh.uvs);
    // a scene file naming the glTF twice says each thing once
    let toml = p.with_file_name("uv-sets.toml");
    std::fs::write(
        &toml,
        "[[object]]\nmesh = \"uv-sets.gltf\"\n[[object]]\nmesh = \"uv-sets.gltf\"\n",
    )
    .unwrap();
    let twice = rxpipe::io::load_scene(&toml).unwrap();
    assert_eq!(twice.notes, scene.notes);
    // an extension the file uses and rxpipe does not draw is named
    g["extensionsUsed"] = serde_json::json!(["KHR_texture_transform", "KHR_materials_sheen"]);
    let p = write("uv-sets-sheen.gltf", g.to_string().as_bytes());
    let notes = rxpipe::io::load_scene(&p).unwrap().notes;
    assert_eq!(notes.len(), 4, "{notes:?}");
    assert!(notes[3].contains("KHR_materials_sheen"), "{notes:?}");
    // the file as it is has none of this
    assert!(rxpipe::io::load_scene("scenes/textured/textured.gltf")
        .unwrap()
        .notes
        .is_empty());
}

/// A material whose textures read two uv sets draws each from its own: the bricks' emissive
/// texture on TEXCOORD_1 (their uvs times two) draws the picture that the same texture on
/// TEXCOORD_0 scaled by two with KHR_texture_transform draws, bit for bit, and not the picture
/// of the first set read twice.
#[test]
fn gltf_materials_read_two_uv_sets() {
    let (two, one) = common::two_uv_sets("uv-two");
    let (a, b) = (
        rxpipe::io::load_scene(&two).unwrap(),
        rxpipe::io::load_scene(&one).unwrap(),
    );
    assert!(a.notes.is_empty(), "{:?}", a.notes);
    let draw = |s: &rxpipe::Scene| {
        let r = rxpipe::Renderer::new(rxpipe::Backend::Cpu).unwrap();
        let mut p = rxpipe::Pipeline::builder().build(&r).unwrap();
        p.render(s, &s.camera, (320, 180)).unwrap().color
    };
    let (fa, fb) = (draw(&a), draw(&b));
    assert!(fa == fb, "{:?}", common::compare(&fa, &fb));
    // the first set read in its place draws another picture (the test can tell)
    let mut first = a.clone();
    for o in &mut first.objects {
        o.mesh.uvs1 = o.mesh.uvs.clone().filter(|_| o.mesh.uvs1.is_some());
    }
    let f1 = draw(&first);
    assert!(
        common::compare(&f1, &fb).0 > 100,
        "{:?}",
        common::compare(&f1, &fb)
    );
}

/// A material whose textures all read TEXCOORD_1 is drawn from its primitives' TEXCOORD_1: the
/// same scene, texture for texture and pixel for pixel, as the file with those uvs as TEXCOORD_0.
#[test]
fn gltf_materials_on_another_uv_set_read_it() {
    let plain = textured_json();
    let mut g = plain.clone();
    let floor = common::gltf_material(&g, "floor");
    g["materials"][floor]["pbrMetallicRoughness"]["baseColorTexture"]["texCoord"] = 1.into();
    // the floor's uvs as TEXCOORD_1, and in TEXCOORD_0 the leaf's (other uvs, a trap)
    let attrs = &mut g["meshes"][0]["primitives"][0]["attributes"];
    attrs["TEXCOORD_1"] = attrs["TEXCOORD_0"].clone();
    attrs["TEXCOORD_0"] = 22.into();
    let uv1 = write("uv1.gltf", g.to_string().as_bytes());
    let uv0 = write("uv0.gltf", plain.to_string().as_bytes());
    let (a, b) = (
        rxpipe::io::load_scene(&uv1).unwrap(),
        rxpipe::io::load_scene(&uv0).unwrap(),
    );
    assert!(a.notes.is_empty(), "{:?}", a.notes);
    assert!(common::scene_material(&a, "floor")
        .base_color_texture
        .is_some());
    assert_eq!(a.objects[0].mesh.uvs, b.objects[0].mesh.uvs);
    let draw = |s: &rxpipe::Scene| {
        let r = rxpipe::Renderer::new(rxpipe::Backend::Cpu).unwrap();
        let mut p = rxpipe::Pipeline::builder().build(&r).unwrap();
        p.render(s, &s.camera, (160, 90)).unwrap().color
    };
    assert!(draw(&a) == draw(&b));
}

#[test]
fn gzipped_gltf_loads_as_the_same_scene() {
    // the project's textured scene (lights, a camera), with one texture on another uv set so
    // that it has a note, gzipped: the same scene as the plain file, notes, lights and camera
    let mut g = textured_json();
    let mats = g["materials"].as_array_mut().unwrap();
    let bricks = mats.iter().position(|m| m["name"] == "bricks").unwrap();
    mats[bricks]["normalTexture"]["texCoord"] = 1.into();
    let bytes = g.to_string().into_bytes();
    let plain = rxpipe::io::load_scene(write("gz-scene.gltf", &bytes)).unwrap();
    let gz = rxpipe::io::load_scene(write("gz-scene.gltf.gz", &gzip(&bytes))).unwrap();
    assert_eq!(plain.notes.len(), 1, "{:?}", plain.notes);
    assert_eq!(
        gz.notes[0].replace("gz-scene.gltf.gz", "gz-scene.gltf"),
        plain.notes[0]
    );
    assert_eq!(format!("{:?}", gz.camera), format!("{:?}", plain.camera));
    assert_eq!(gz.lights, plain.lights);
    assert_eq!(plain.lights.len(), 2);
    assert_eq!(gz.objects.len(), plain.objects.len());
    // a scene file naming the gzipped glTF keeps its notes too
    let toml = write(
        "gz-scene.toml",
        b"[[object]]\nmesh = \"gz-scene.gltf.gz\"\n",
    );
    assert_eq!(rxpipe::io::load_scene(&toml).unwrap().notes, gz.notes);
    // the files a gzipped glTF refers to are its inputs, as a plain one's are
    let tri = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
        "bufferViews":[{"buffer":0,"byteLength":36}],"buffers":[{"uri":"gz-tri.bin","byteLength":36}]}"#;
    let corners: Vec<u8> = [0f32, 0., 0., 1., 0., 0., 0., 1., 0.]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let bin = write("gz-tri.bin", &corners);
    let scene = rxpipe::io::load_scene(write("gz-tri.gltf.gz", &gzip(tri.as_bytes()))).unwrap();
    assert_eq!(scene.triangle_count(), 1);
    assert!(scene.sources.contains(&bin), "{:?}", scene.sources);
}

#[test]
fn gltf_quantized_attributes_load_as_floats() {
    // KHR_mesh_quantization: 16-bit positions (not normalized) under a node that scales them
    // by a half, 8-bit normalized normals, 16-bit normalized uvs
    let mut bin = Vec::new();
    for p in [[0i16, 0, 0], [2, 0, 0], [0, 2, 0]] {
        p.iter().for_each(|c| bin.extend(c.to_le_bytes()));
        bin.extend([0, 0]); // (each element aligned to 4 bytes)
    }
    for _ in 0..3 {
        bin.extend([0u8, 0, 127, 0]);
    }
    for uv in [[0u16, 0], [65535, 0], [0, 65535]] {
        uv.iter().for_each(|c| bin.extend(c.to_le_bytes()));
    }
    // a sparse replacement of position 2 by (0, 4, 0)
    bin.extend([2, 0, 0, 0]);
    [0i16, 4, 0]
        .iter()
        .for_each(|c| bin.extend(c.to_le_bytes()));
    bin.extend([0, 0]);
    write("quantized.bin", &bin);
    let gltf = |ext: &str, normal_norm: bool| {
        format!(
            r#"{{"asset":{{"version":"2.0"}},{ext}"scene":0,"scenes":[{{"nodes":[0]}}],
            "nodes":[{{"mesh":0,"scale":[0.5,0.5,0.5]}}],
            "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"NORMAL":1,"TEXCOORD_0":2}}}}]}}],
            "accessors":[{{"bufferView":0,"componentType":5122,"count":3,"type":"VEC3","min":[0,0,0],"max":[2,2,0]}},
                {{"bufferView":1,"componentType":5120,"normalized":{normal_norm},"count":3,"type":"VEC3"}},
                {{"bufferView":2,"componentType":5123,"normalized":true,"count":3,"type":"VEC2"}}],
            "bufferViews":[{{"buffer":0,"byteLength":24,"byteStride":8}},
                {{"buffer":0,"byteOffset":24,"byteLength":12,"byteStride":4}},
                {{"buffer":0,"byteOffset":36,"byteLength":12}},
                {{"buffer":0,"byteOffset":48,"byteLength":1}},
                {{"buffer":0,"byteOffset":52,"byteLength":6}}],
            "buffers":[{{"uri":"quantized.bin","byteLength":60}}]}}"#
        )
    };
    let ext = r#""extensionsUsed":["KHR_mesh_quantization"],"extensionsRequired":["KHR_mesh_quantization"],"#;
    let p = write("quantized.gltf", gltf(ext, true).as_bytes());
    let (meshes, _) = io::load_meshes(&p).unwrap();
    let m = &meshes[0];
    assert_eq!(
        m.positions,
        vec![glam::Vec3::ZERO, glam::Vec3::X, glam::Vec3::Y],
        "dequantized by the node's scale"
    );
    assert_eq!(m.normals.as_deref(), Some(&[glam::Vec3::Z; 3][..]));
    let uvs = [glam::Vec2::ZERO, glam::Vec2::X, glam::Vec2::Y];
    assert_eq!(m.uvs.as_deref(), Some(&uvs[..]));
    assert!(rxpipe::io::load_scene(&p).unwrap().notes.is_empty());
    // sparse quantized positions: the base values with one replaced
    let sparse = gltf(ext, true).replacen(
        r#""max":[2,2,0]}"#,
        r#""max":[2,4,0],"sparse":{"count":1,"indices":{"bufferView":3,"componentType":5121},"values":{"bufferView":4}}}"#,
        1,
    );
    let (meshes, _) = io::load_meshes(write("quantized-sparse.gltf", sparse.as_bytes())).unwrap();
    let two_y = glam::Vec3::new(0.0, 2.0, 0.0);
    assert_eq!(
        meshes[0].positions,
        vec![glam::Vec3::ZERO, glam::Vec3::X, two_y]
    );
    // without the extension, 16-bit positions are an error naming the accessor
    let e = err_text(io::load_mesh(write(
        "unquantized.gltf",
        gltf("", true).as_bytes(),
    )));
    assert!(e.contains("POSITION accessor 0"), "{e}");
    // normals are stored normalized under the extension
    let e = err_text(io::load_mesh(write(
        "raw-normals.gltf",
        gltf(ext, false).as_bytes(),
    )));
    assert!(
        e.contains("NORMAL accessor 1") && e.contains("normalized"),
        "{e}"
    );
}

#[test]
fn gltf_meshopt_compressed_views_decode() {
    // EXT_meshopt_compression (with KHR_mesh_quantization, as gltfpack writes them): a square's
    // f32 positions, its normals as 8-bit octahedral (filtered) and its u32 triangles, all in a
    // compressed buffer, the views in a fallback buffer without data
    let pos = [[0f32, 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.]];
    let nrm = meshopt::encoding::encode_filter_oct::<i8>(&[[0.0, 0.0, 1.0, 0.0]; 4], 8);
    let idx = [0u32, 1, 2, 0, 2, 3];
    let parts = [
        meshopt::encoding::encode_vertex_buffer(&pos).unwrap(),
        meshopt::encoding::encode_vertex_buffer(&nrm).unwrap(),
        meshopt::encoding::encode_index_buffer(&idx, 4).unwrap(),
    ];
    let mut packed = Vec::new();
    let mut at = Vec::new();
    for p in &parts {
        at.push((packed.len(), p.len()));
        packed.extend(p);
        packed.resize(packed.len().div_ceil(4) * 4, 0);
    }
    let uri = base64::encode(&packed);
    let doc = |stride0: usize, data: &str| {
        let ext = |k: usize, stride: usize, count: usize, mode: &str, filter: &str| {
            format!(
                r#"{{"EXT_meshopt_compression":{{"buffer":0,"byteOffset":{},"byteLength":{},"byteStride":{stride},"count":{count},"mode":"{mode}","filter":"{filter}"}}}}"#,
                at[k].0, at[k].1
            )
        };
        format!(
            r#"{{"asset":{{"version":"2.0"}},
            "extensionsUsed":["EXT_meshopt_compression","KHR_mesh_quantization"],
            "extensionsRequired":["EXT_meshopt_compression","KHR_mesh_quantization"],
            "scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
            "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"NORMAL":1}},"indices":2}}]}}],
            "accessors":[{{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
                {{"bufferView":1,"componentType":5120,"normalized":true,"count":4,"type":"VEC3"}},
                {{"bufferView":2,"componentType":5125,"count":6,"type":"SCALAR"}}],
            "bufferViews":[{{"buffer":1,"byteLength":48,"byteStride":12,"extensions":{}}},
                {{"buffer":1,"byteOffset":48,"byteLength":16,"byteStride":4,"extensions":{}}},
                {{"buffer":1,"byteOffset":64,"byteLength":24,"extensions":{}}}],
            "buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{data}"}},
                {{"byteLength":88,"extensions":{{"EXT_meshopt_compression":{{"fallback":true}}}}}}]}}"#,
            ext(0, stride0, 4, "ATTRIBUTES", "NONE"),
            ext(1, 4, 4, "ATTRIBUTES", "OCTAHEDRAL"),
            ext(2, 4, 6, "TRIANGLES", "NONE"),
            packed.len()
        )
    };
    let (meshes, _) = io::load_meshes(write("meshopt.gltf", doc(12, &uri).as_bytes())).unwrap();
    let m = &meshes[0];
    assert_eq!(m.indices, idx.to_vec());
    let want: Vec<glam::Vec3> = pos.iter().map(|p| glam::Vec3::from_array(*p)).collect();
    assert_eq!(m.positions, want);
    for n in m.normals.as_ref().unwrap() {
        assert!((*n - glam::Vec3::Z).length() < 1e-2, "{n}");
    }
    // a stride the specification does not allow is refused before decoding, naming the view
    let e = err_text(io::load_mesh(write(
        "meshopt-stride.gltf",
        doc(6, &uri).as_bytes(),
    )));
    assert!(
        e.contains("buffer view 0") && e.contains("byteStride 6"),
        "{e}"
    );
    // corrupt data is an error naming the view, not garbage
    let mut bad = packed.clone();
    bad[at[0].0] ^= 0xff;
    let bad_uri = base64::encode(&bad);
    let e = err_text(io::load_mesh(write(
        "meshopt-bad.gltf",
        doc(12, &bad_uri).as_bytes(),
    )));
    assert!(
        e.contains("buffer view 0") && e.contains("does not decode"),
        "{e}"
    );
}

#[test]
fn gltf_textures_without_coordinates_are_named_in_a_note() {
    // the project's textured scene with the floor's TEXCOORD_0 taken away
    let mut g = textured_json();
    let floor = g["meshes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["name"] == "floor")
        .unwrap();
    floor["primitives"][0]["attributes"]
        .as_object_mut()
        .unwrap()
        .remove("TEXCOORD_0");
    let scene = rxpipe::io::load_scene(write("no-uvs.gltf", g.to_string().as_bytes())).unwrap();
    assert_eq!(scene.notes.len(), 1, "{:?}", scene.notes);
    assert!(
        scene.notes[0].contains("('floor') primitive 0 has textures but no TEXCOORD_0"),
        "{:?}",
        scene.notes
    );
}

#[test]
fn gltf_files_requiring_an_extension_not_implemented_are_refused_by_name() {
    // (a texture of KHR_texture_basisu, a format rxpipe does not decode)
    let gltf = r#"{"asset":{"version":"2.0"},"extensionsUsed":["KHR_texture_basisu"],
        "extensionsRequired":["KHR_texture_basisu"],"scene":0,"scenes":[{"nodes":[0]}],
        "nodes":[{"mesh":0}],"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
        "bufferViews":[{"buffer":0,"byteLength":36}],
        "buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}]}"#;
    let e = rxpipe::io::load_scene(write("basisu.gltf", gltf.as_bytes()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("basisu.gltf") && e.contains("requires KHR_texture_basisu"),
        "{e}"
    );
}

#[test]
fn gltf_cameras_are_offered_in_the_order_met_the_first_the_starting_view() {
    // three camera nodes (one orthographic, not offered), met in the walk's order: the scene's
    // last root first
    let gltf = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,1,2,3]}],
        "nodes":[{"mesh":0},{"camera":0,"translation":[0,0,5]},{"camera":1},
                 {"camera":0,"translation":[1,2,9]}],
        "cameras":[{"type":"perspective","perspective":{"yfov":0.8,"znear":0.1,"zfar":100}},
                   {"type":"orthographic","orthographic":{"xmag":1,"ymag":1,"znear":0.1,"zfar":10}}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
        "bufferViews":[{"buffer":0,"byteLength":36}],
        "buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}]}"#;
    let scene = rxpipe::io::load_scene(write("cameras.gltf", gltf.as_bytes())).unwrap();
    let eyes: Vec<glam::Vec3> = scene.cameras.iter().map(|c| c.eye).collect();
    assert_eq!(
        eyes,
        [
            glam::Vec3::new(1.0, 2.0, 9.0),
            glam::Vec3::new(0.0, 0.0, 5.0)
        ]
    );
    assert_eq!(scene.camera, scene.cameras[0]);
    assert!(scene
        .notes
        .iter()
        .any(|n| n.contains("camera 1 is orthographic")));
    // a scene without a glTF camera offers none
    assert!(rxpipe::io::load_scene("icosphere:1")
        .unwrap()
        .cameras
        .is_empty());
}

#[test]
fn gltf_parts_not_drawn_are_named_in_notes() {
    // a triangle with a morph target (of default weight 0: its base shape) in a skinned node
    // but without joints and weights, a line primitive beside it, an animation, an
    // orthographic camera
    let gltf = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,1]}],
        "nodes":[{"mesh":0,"skin":0},{"name":"joint","camera":0}],
        "cameras":[{"type":"orthographic","orthographic":{"xmag":1,"ymag":1,"znear":0.1,"zfar":10}}],
        "skins":[{"joints":[1]}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0},"targets":[{"POSITION":0}]},
                                 {"attributes":{"POSITION":0},"mode":1}]}],
        "animations":[{"channels":[{"sampler":0,"target":{"node":1,"path":"translation"}}],
                       "samplers":[{"input":1,"output":2}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},
                     {"bufferView":1,"componentType":5126,"count":1,"type":"SCALAR","min":[0],"max":[0]},
                     {"bufferView":2,"componentType":5126,"count":1,"type":"VEC3"}],
        "bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":4},
                       {"buffer":0,"byteOffset":40,"byteLength":12}],
        "buffers":[{"uri":"parts.bin","byteLength":52}]}"#;
    let floats = [0f32, 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 0., 0.];
    let bin: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    write("parts.bin", &bin);
    let scene = rxpipe::io::load_scene(write("parts.gltf", gltf.as_bytes())).unwrap();
    assert_eq!(scene.triangle_count(), 1);
    let said = |what: &str| scene.notes.iter().any(|n| n.contains(what));
    assert_eq!(scene.notes.len(), 4, "{:?}", scene.notes);
    assert!(said("camera 0 is orthographic"), "{:?}", scene.notes);
    assert!(
        said("1 primitive(s) of points or lines"),
        "{:?}",
        scene.notes
    );
    assert!(
        said("1 primitive(s) of skinned nodes have no JOINTS_0 and WEIGHTS_0"),
        "{:?}",
        scene.notes
    );
    // (the animation moves the joint, which no mesh hangs from)
    assert!(
        said("animations move 1 node(s) with no mesh"),
        "{:?}",
        scene.notes
    );
    assert!(scene.animation.is_empty());
}

#[test]
fn gltf_normal_textures_take_their_texture_transform() {
    let mut g = textured_json();
    let bricks = g["materials"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["name"] == "bricks")
        .unwrap();
    g["extensionsUsed"] = serde_json::json!(["KHR_texture_transform"]);
    let with = |g: &serde_json::Value, t: serde_json::Value| {
        let mut g = g.clone();
        g["materials"][bricks]["normalTexture"]["extensions"] =
            serde_json::json!({ "KHR_texture_transform": t });
        write("normal-transform.gltf", g.to_string().as_bytes())
    };
    let normal = |scene: &rxpipe::Scene| {
        scene
            .objects
            .iter()
            .filter_map(|o| o.mesh.material.clone())
            .find(|m| m.name == "bricks")
            .unwrap()
            .normal_texture
            .clone()
    };
    // a scale of 4 on the normal map: the same matrix the base colour's transform would get
    let p = with(
        &g,
        serde_json::json!({ "scale": [4.0, 2.0], "offset": [0.5, 0.25] }),
    );
    let scene = rxpipe::io::load_scene(&p).unwrap();
    assert!(scene.notes.is_empty(), "{:?}", scene.notes);
    let t = normal(&scene).expect("the normal map is kept").transform;
    assert_eq!(t, Some([4.0, -0.0, 0.0, 2.0, 0.5, 0.25]));
    // its texCoord override names the set it reads (which the cube lacks: said)
    let p = with(&g, serde_json::json!({ "texCoord": 1 }));
    let scene = rxpipe::io::load_scene(&p).unwrap();
    assert_eq!(normal(&scene).expect("kept").uv_set, 1);
    assert!(
        scene.notes[0].contains("read TEXCOORD_1 but no such coordinates"),
        "{:?}",
        scene.notes
    );
    // a malformed one is an error naming the material
    let p = with(&g, serde_json::json!({ "rotation": "a quarter turn" }));
    let e = rxpipe::io::load_scene(&p).unwrap_err().to_string();
    assert!(
        e.contains(&format!("material {bricks}")) && e.contains("KHR_texture_transform"),
        "{e}"
    );
}

#[test]
fn gltf_tangents_are_read_for_normal_maps() {
    // the project's textured scene with TANGENT on the bricks' cube (its normal map) and on the
    // floor (no normal map): w -0.5 or 2 on alternate vertices, 8-bit normalized under
    // KHR_mesh_quantization in a second version
    let mut g = textured_json();
    let floats: Vec<u8> = (0..28)
        .flat_map(|i| [1.0f32, 0.0, 0.0, if i % 2 == 0 { -0.5 } else { 2.0 }])
        .flat_map(f32::to_le_bytes)
        .collect();
    let bytes: Vec<u8> = (0..28)
        .flat_map(|i| [127u8, 0, 0, if i % 2 == 0 { 0x81 } else { 127 }])
        .collect();
    let with = |g: &serde_json::Value, data: &[u8], component: u32, name: &str| {
        let mut g = g.clone();
        let buffer = g["buffers"].as_array().unwrap().len();
        let view = g["bufferViews"].as_array().unwrap().len();
        let accessor = g["accessors"].as_array().unwrap().len();
        let stride = data.len() / 28;
        g["buffers"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
                "uri": format!("data:application/octet-stream;base64,{}", b64(data)),
                "byteLength": data.len()
            }));
        g["bufferViews"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({ "buffer": buffer, "byteLength": data.len() }));
        for (count, offset) in [(24, 0), (4, 24 * stride)] {
            g["accessors"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({
                    "bufferView": view, "byteOffset": offset, "componentType": component,
                    "normalized": component != 5126, "count": count, "type": "VEC4"
                }));
        }
        g["meshes"][1]["primitives"][0]["attributes"]["TANGENT"] = accessor.into();
        g["meshes"][0]["primitives"][0]["attributes"]["TANGENT"] = (accessor + 1).into();
        write(name, g.to_string().as_bytes())
    };
    let check = |p: &std::path::Path| {
        let scene = rxpipe::io::load_scene(p).unwrap();
        let mesh = |name: &str| {
            &scene
                .objects
                .iter()
                .find(|o| o.mesh.material.as_ref().is_some_and(|m| m.name == name))
                .unwrap()
                .mesh
        };
        let t = mesh("bricks")
            .tangents
            .as_ref()
            .expect("the cube's tangents");
        assert_eq!(t.len(), 24);
        for (i, t) in t.iter().enumerate() {
            // (the node's transform taken into them, kept unit length)
            assert!((t.truncate().length() - 1.0).abs() < 1e-5, "{t}");
            assert_eq!(t.w, if i % 2 == 0 { -1.0 } else { 1.0 }, "{i}");
        }
        assert!(
            mesh("floor").tangents.is_none(),
            "read without a normal map"
        );
        scene
    };
    let plain = check(&with(&g, &floats, 5126, "tangents.gltf"));
    let quantization = "KHR_mesh_quantization";
    g["extensionsUsed"]
        .as_array_mut()
        .unwrap()
        .push(quantization.into());
    g["extensionsRequired"] = serde_json::json!([quantization]);
    let quantized = check(&with(&g, &bytes, 5120, "tangents-quantized.gltf"));
    assert_eq!(
        plain.objects[1].mesh.tangents,
        quantized.objects[1].mesh.tangents
    );
    // without the extension, 8-bit tangents are an error naming the accessor
    g["extensionsUsed"].as_array_mut().unwrap().pop();
    g.as_object_mut().unwrap().remove("extensionsRequired");
    let e = rxpipe::io::load_scene(with(&g, &bytes, 5120, "tangents-8bit.gltf"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("TANGENT accessor"), "{e}");
}

/// Files that would never end, or are not files, are refused before reading: a device, a folder,
/// a glTF buffer or an OBJ material library that names one (a pipe is still read).
#[cfg(unix)]
#[test]
fn devices_and_folders_are_refused_before_reading() {
    let e = err_text(io::load_mesh("/dev/zero"));
    assert!(e.contains("/dev/zero: a device, not a file"), "{e}");
    let d = common::tmp_dir("devices");
    let e = err_text(io::load_mesh(&d));
    assert!(e.contains("a folder, not a file"), "{e}");
    let gltf = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
        "bufferViews":[{"buffer":0,"byteLength":36}],"buffers":[{"uri":"/dev/zero","byteLength":36}]}"#;
    let e = err_text(io::load_mesh(write("zero.gltf", gltf.as_bytes())));
    assert!(
        e.contains("buffer 0") && e.contains("not a regular file"),
        "{e}"
    );
    let obj = write(
        "zero.obj",
        b"mtllib /dev/zero\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n",
    );
    let s = rxpipe::io::load_scene(&obj).unwrap();
    assert!(
        s.notes.iter().any(|n| n.contains("a device, not a file")),
        "{:?}",
        s.notes
    );
    // a scene file naming a device
    let toml = write("zero.toml", b"[[object]]\nmesh = \"/dev/zero\"\n");
    let e = rxpipe::io::load_scene(&toml).unwrap_err().to_string();
    assert!(e.contains("a device"), "{e}");
}

/// A PLY with a colour per face (what `rxpipe patch --out` writes) loads with those colours:
/// each triangle's corners carry its face's colour.
#[test]
fn ply_face_colours_are_read() {
    let dir = common::tmp_dir("ply-face-colours");
    let mesh = rxpipe::mesh::icosphere(1);
    let colors: Vec<[u8; 3]> = (0..mesh.triangle_count())
        .map(|t| [t as u8 * 3, 255 - t as u8, 128])
        .collect();
    let path = dir.join("faces.ply");
    rxpipe::io::save_mesh_with_face_colors(&mesh, &colors, &path).unwrap();
    let back = rxpipe::io::load_mesh(&path).unwrap();
    assert_eq!(back.triangle_count(), mesh.triangle_count());
    let got = back.colors.as_ref().expect("the face colours are read");
    for (t, c) in colors.iter().enumerate() {
        for k in 0..3 {
            let v = back.indices[3 * t + k] as usize;
            // (the positions are the triangle's own, the colour its face's)
            assert_eq!(
                back.positions[v],
                mesh.positions[mesh.indices[3 * t + k] as usize]
            );
            let [r, g, b] = c.map(|x| x as f32 / 255.0);
            let want = rxpipe::io::display_color([r, g, b, 1.0]);
            assert!((got[v] - want).abs().max_element() < 1e-6, "triangle {t}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
