//! Loaders on the shared meshes and on malformed input.

#[path = "../common/mod.rs"]
mod common;
mod gltf;

use gltf::{gltf_buffer, gltf_json};

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
