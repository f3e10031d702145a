//! gltf (a part of the loaders tests).

use super::*;

/// A glTF with one node (translated by +10 in x) holding an indexed and a non-indexed primitive.
pub(super) fn gltf_json(buffer_uri: &str, byte_length: usize) -> String {
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

pub(super) fn gltf_buffer() -> Vec<u8> {
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
