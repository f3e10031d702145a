//! extensions (a part of the materials tests).

use super::*;

#[test]
fn obj_files_draw_with_their_mtl_materials() {
    // two squares side by side: the left one red by its Kd, the right one textured by map_Kd
    // with a 1x2 image, green above blue (the image's first row is its top; OBJ's v points up)
    let dir = common::tmp_dir("obj-mtl");
    rxpipe::image::save(
        &dir.join("tex.png"),
        1,
        2,
        &[0, 255, 0, 255, 0, 0, 255, 255],
    )
    .unwrap();
    std::fs::write(
        dir.join("lib.mtl"),
        "newmtl red\nKd 1 0 0\nNs 10\n\
         newmtl tex\nKd 1 1 1\nmap_Kd -s 1 1 1 tex.png\nmap_Bump bump.png\nPr 0.25\nPm 0\n\
         newmtl lost\nmap_Kd missing.png\n",
    )
    .unwrap();
    let obj = dir.join("two.obj");
    std::fs::write(
        &obj,
        "mtllib lib.mtl\n\
         v -2 -1 0\nv 0 -1 0\nv 0 1 0\nv -2 1 0\nv 2 -1 0\nv 2 1 0\n\
         vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\n\
         usemtl red\nf 1/1/1 2/2/1 3/3/1\nf 1/1/1 3/3/1 4/4/1\n\
         usemtl tex\nf 2/1/1 5/2/1 6/3/1\nf 2/1/1 6/3/1 3/4/1\n\
         usemtl lost\nusemtl nowhere\nf 4/1/1 3/2/1 6/3/1\n",
    )
    .unwrap();
    let scene = rxpipe::io::load_scene(&obj).unwrap();
    // one object per material; the triangle of the undefined material on its own
    let names: Vec<&str> = scene.objects.iter().map(|o| o.mesh.name.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names[0].ends_with(": red") && names[1].ends_with(": tex"),
        "{names:?}"
    );
    let said = |what: &str| scene.notes.iter().any(|n| n.contains(what));
    assert!(
        said("map_Bump is not drawn (used by 'tex')"),
        "{:?}",
        scene.notes
    );
    assert!(
        said("'nowhere' names a material no library defines"),
        "{:?}",
        scene.notes
    );
    assert!(
        !said("missing.png"),
        "an unused material is not made: {:?}",
        scene.notes
    );
    for f in ["lib.mtl", "tex.png", "bump.png", "missing.png"] {
        assert!(
            scene.sources.iter().any(|s| s.ends_with(f)),
            "{f} is an input: {:?}",
            scene.sources
        );
    }
    let material = |k: usize| scene.objects[k].mesh.material.clone().unwrap();
    // roughness from Ns (a Blinn-Phong exponent of 10), and from the PBR extension's Pr
    assert!((material(0).roughness - (2.0f32 / 12.0).powf(0.25)).abs() < 1e-6);
    assert_eq!((material(1).roughness, material(1).metallic), (0.25, 0.0));
    let meshes: Vec<Mesh> = scene.objects.into_iter().take(2).map(|o| o.mesh).collect();
    let f = render(meshes, 2.0);
    let left = px(&f, W / 4, H / 2);
    assert!(
        left[0] > 100 && left[1] < 40 && left[2] < 40,
        "red: {left:?}"
    );
    let (top, bottom) = (px(&f, 3 * W / 4, H / 4), px(&f, 3 * W / 4, 3 * H / 4));
    // (bilinear filtering blends the two texels a little)
    assert!(top[1] > 100 && top[1] > 2 * top[2], "green above: {top:?}");
    assert!(
        bottom[2] > 100 && bottom[2] > 2 * bottom[1],
        "blue below: {bottom:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gltf_specular_glossiness_materials_are_converted_to_metallic_roughness() {
    let mut g = common::textured_json();
    let named = common::gltf_material;
    let (bricks, metal) = (named(&g, "bricks"), named(&g, "metal"));
    // the bricks: their texture as the diffuse one, a dielectric's specular, glossiness 0.1
    // (the roughness they had); the metal: a gold specular over a black diffuse. Each keeps a
    // metallic-roughness block that says otherwise, which the extension overrides.
    g["materials"][bricks]["extensions"] = serde_json::json!({
        "KHR_materials_pbrSpecularGlossiness": {
            "diffuseTexture": {"index": 1},
            "specularFactor": [0.04, 0.04, 0.04],
            "glossinessFactor": 0.1
        }
    });
    g["materials"][bricks]["pbrMetallicRoughness"] = serde_json::json!({"metallicFactor": 1.0});
    g["materials"][metal]["extensions"] = serde_json::json!({
        "KHR_materials_pbrSpecularGlossiness": {
            "diffuseFactor": [0.0, 0.0, 0.0, 1.0],
            "specularFactor": [0.95, 0.8, 0.5],
            "glossinessFactor": 0.7
        }
    });
    g["extensionsUsed"] = serde_json::json!(["KHR_materials_pbrSpecularGlossiness"]);
    let p = common::tmp_dir("spec-gloss").join("spec-gloss.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let scene = rxpipe::io::load_scene(&p).unwrap();
    assert_eq!(scene.notes.len(), 1, "{:?}", scene.notes);
    assert!(
        scene.notes[0].contains("converted to metallic-roughness"),
        "{:?}",
        scene.notes
    );
    let material = common::scene_material;
    let m = material(&scene, "metal");
    assert!(m.metallic > 0.99, "{m:?}");
    assert!((m.roughness - 0.3).abs() < 1e-5);
    assert!(
        m.base_color
            .truncate()
            .abs_diff_eq(glam::Vec3::new(0.95, 0.8, 0.5), 1e-3),
        "{:?}",
        m.base_color
    );
    assert!(m.base_color_texture.is_none() && m.metallic_roughness_texture.is_none());
    // the bricks' converted textures: their own colours (a dielectric) at their own size,
    // roughness 0.9 and metallic 0 everywhere
    let b = material(&scene, "bricks");
    let original = material(
        &rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap(),
        "bricks",
    );
    let (was, now) = (
        &original.base_color_texture.as_ref().unwrap().texture.levels[0],
        &b.base_color_texture.as_ref().unwrap().texture.levels[0],
    );
    assert_eq!((now.width, now.height), (was.width, was.height));
    let off = was
        .texels
        .iter()
        .zip(&now.texels)
        .flat_map(|(a, b)| (0..4).map(move |c| a[c].abs_diff(b[c])))
        .max()
        .unwrap();
    assert!(off <= 1, "base colour texels differ by up to {off}");
    let mr = &b
        .metallic_roughness_texture
        .as_ref()
        .unwrap()
        .texture
        .levels[0];
    assert!(
        mr.texels.iter().all(|t| t[1] == 230 && t[2] == 0),
        "{:?}",
        &mr.texels[..4]
    );
    assert_eq!(
        (b.metallic, b.roughness, b.base_color),
        (1.0, 1.0, glam::Vec4::ONE)
    );
    assert!(b.normal_texture.is_some());
    // drawn (on both backends), the scene looks as it did: the gold metal and the bricks'
    // dielectric convert to what the file's metallic-roughness materials said
    let frame = |s: &Scene| on_both(Pipeline::builder, s, (160, 120), "specular-glossiness");
    let original = frame(&rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap());
    let converted = frame(&scene);
    let differing = original
        .color
        .chunks(4)
        .zip(converted.color.chunks(4))
        .filter(|(x, y)| x.iter().zip(y.iter()).any(|(p, q)| p.abs_diff(*q) > 2))
        .count();
    assert!(differing < 20, "{differing} pixels differ");
}

#[test]
fn dielectric_specular_follows_the_index_of_refraction_and_the_specular_extension() {
    // the loader: KHR_materials_ior and KHR_materials_specular's factors, on the textured
    // scene's floor; the bricks' specular texture is left out with a note
    let mut g = common::textured_json();
    let named = common::gltf_material;
    let (floor, bricks) = (named(&g, "floor"), named(&g, "bricks"));
    g["materials"][floor]["extensions"] = serde_json::json!({
        "KHR_materials_ior": {"ior": 3.0},
        "KHR_materials_specular": {"specularFactor": 0.5, "specularColorFactor": [1.0, 0.5, 8.0]}
    });
    g["materials"][bricks]["extensions"] = serde_json::json!({
        "KHR_materials_specular": {"specularTexture": {"index": 0}}
    });
    g["extensionsUsed"] = serde_json::json!(["KHR_materials_ior", "KHR_materials_specular"]);
    let p = common::tmp_dir("dielectric-specular").join("specular.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let scene = rxpipe::io::load_scene(&p).unwrap();
    let material = |n: &str| common::scene_material(&scene, n);
    // ((3 - 1) / (3 + 1))^2 = 0.25, times the colour, at most 1
    let f = material("floor");
    assert!(
        f.specular_f0.abs_diff_eq(Vec3::new(0.25, 0.125, 1.0), 1e-6),
        "{:?}",
        f.specular_f0
    );
    assert_eq!(f.specular_weight, 0.5);
    assert_eq!(material("bricks").specular_f0, Vec3::splat(0.04));
    assert_eq!(scene.notes.len(), 1, "{:?}", scene.notes);
    assert!(scene.notes[0].contains("'bricks'") && scene.notes[0].contains("specular textures"));
    // a negative index of refraction is an error naming the material
    g["materials"][floor]["extensions"]["KHR_materials_ior"]["ior"] = serde_json::json!(-2.0);
    std::fs::write(&p, g.to_string()).unwrap();
    let e = rxpipe::io::load_scene(&p)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("material {floor}")) && e.contains("ior"),
        "{e}"
    );

    // the shading, on both backends: a grey dielectric sphere's highlight grows with its
    // reflectance at normal incidence and goes with a specular weight of 0
    let sphere = |f0: f32, weight: f32| {
        sphere_of(Material {
            base_color: Vec4::new(0.3, 0.3, 0.3, 1.0),
            metallic: 0.0,
            roughness: 0.5,
            specular_f0: Vec3::splat(f0),
            specular_weight: weight,
            ..Default::default()
        })
    };
    let plain = brightest(&sphere(0.04, 1.0));
    let (glassy, matte) = (brightest(&sphere(0.25, 1.0)), brightest(&sphere(0.04, 0.0)));
    assert!(
        glassy > plain + 30 && plain > matte + 30,
        "{matte} {plain} {glassy}"
    );
}

#[test]
fn gltf_webp_textures_are_read_through_ext_texture_webp() {
    // the bricks' base colour image, re-encoded as a lossless WebP: the texture names it in
    // EXT_texture_webp, with no core source (the extension required), or with another image as
    // the fallback that viewers without WebP read
    let original = common::textured_json();
    let bricks = common::gltf_material(&original, "bricks");
    let texture = original["materials"][bricks]["pbrMetallicRoughness"]["baseColorTexture"]["index"]
        .as_u64()
        .unwrap() as usize;
    let image = original["textures"][texture]["source"].as_u64().unwrap() as usize;
    let uri = original["images"][image]["uri"].as_str().unwrap();
    let png = base64::decode(uri.split_once(";base64,").unwrap().1).unwrap();
    let rgba = image::load_from_memory(&png).unwrap().to_rgba8();
    let mut webp = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut webp)
        .encode(
            &rgba,
            rgba.width(),
            rgba.height(),
            image::ExtendedColorType::Rgba8,
        )
        .unwrap();
    let uri = format!("data:image/webp;base64,{}", base64::encode(&webp));
    let was = rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap();
    let texels = |s: &Scene| {
        common::scene_material(s, "bricks")
            .base_color_texture
            .as_ref()
            .unwrap()
            .texture
            .levels[0]
            .texels
            .clone()
    };
    for fallback in [None, Some(0)] {
        let mut g = original.clone();
        let webp_image = g["images"].as_array().unwrap().len();
        g["images"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"uri": uri, "mimeType": "image/webp"}));
        let t = &mut g["textures"][texture];
        t["extensions"] = serde_json::json!({"EXT_texture_webp": {"source": webp_image}});
        match fallback {
            Some(f) => t["source"] = serde_json::json!(f),
            None => {
                t.as_object_mut().unwrap().remove("source");
                g["extensionsRequired"] = serde_json::json!(["EXT_texture_webp"]);
            }
        }
        g["extensionsUsed"] = serde_json::json!(["EXT_texture_webp"]);
        let p = common::tmp_dir("webp").join("webp.gltf");
        std::fs::write(&p, g.to_string()).unwrap();
        let scene = rxpipe::io::load_scene(&p).unwrap();
        assert!(scene.notes.is_empty(), "{:?}", scene.notes);
        assert!(texels(&scene) == texels(&was), "fallback {fallback:?}");
        let frame = |s: &Scene| on_both(Pipeline::builder, s, (160, 120), "webp");
        assert_eq!(frame(&scene).color, frame(&was).color);
    }
    // a texture with neither source is an error naming it
    let mut g = original.clone();
    g["textures"][texture]
        .as_object_mut()
        .unwrap()
        .remove("source");
    let p = common::tmp_dir("webp").join("no-source.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let e = rxpipe::io::load_scene(&p).unwrap_err().to_string();
    assert!(
        e.contains(&format!("texture {texture}: has no source image")),
        "{e}"
    );
}

#[test]
fn clear_coats_add_a_sharp_highlight_on_both_backends() {
    // the loader: KHR_materials_clearcoat's factors on the textured scene's floor; its texture
    // is left out with a note, and a factor past 1 is an error naming the material
    let mut g = common::textured_json();
    let floor = common::gltf_material(&g, "floor");
    g["materials"][floor]["extensions"] = serde_json::json!({
        "KHR_materials_clearcoat": {"clearcoatFactor": 0.75, "clearcoatRoughnessFactor": 0.25,
                                    "clearcoatTexture": {"index": 0}}
    });
    g["extensionsUsed"] = serde_json::json!(["KHR_materials_clearcoat"]);
    let p = common::tmp_dir("clearcoat").join("clearcoat.gltf");
    std::fs::write(&p, g.to_string()).unwrap();
    let scene = rxpipe::io::load_scene(&p).unwrap();
    let f = common::scene_material(&scene, "floor");
    assert_eq!((f.clearcoat, f.clearcoat_roughness), (0.75, 0.25));
    assert_eq!(common::scene_material(&scene, "bricks").clearcoat, 0.0);
    assert_eq!(scene.notes.len(), 1, "{:?}", scene.notes);
    assert!(scene.notes[0].contains("clearcoat textures are left out"));
    // drawn on both backends (on_both compares them)
    let frame = |s: &Scene| on_both(Pipeline::builder, s, (160, 120), "clear coat");
    let was = rxpipe::io::load_scene("scenes/textured/textured.gltf").unwrap();
    assert_ne!(frame(&scene).color, frame(&was).color);
    g["materials"][floor]["extensions"]["KHR_materials_clearcoat"]["clearcoatFactor"] =
        serde_json::json!(1.5);
    std::fs::write(&p, g.to_string()).unwrap();
    let e = rxpipe::io::load_scene(&p)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("material {floor}")) && e.contains("clearcoatFactor is 1.5"),
        "{e}"
    );

    // the shading: a rough dark sphere gains a sharp highlight under a smooth coat, a coat of
    // strength 0 changes no byte, and the coat dims the sphere's glow at its rim (its Fresnel
    // term grows towards grazing angles)
    let sphere = |coat: f32, emissive: f32| {
        sphere_of(Material {
            base_color: Vec4::new(0.05, 0.05, 0.05, 1.0),
            metallic: 0.0,
            roughness: 0.9,
            emissive: Vec3::splat(emissive),
            clearcoat: coat,
            clearcoat_roughness: 0.1,
            ..Default::default()
        })
    };
    let (bare, coated) = (sphere(0.0, 0.0), sphere(1.0, 0.0));
    assert!(
        brightest(&coated) > brightest(&bare) + 150,
        "{} {}",
        brightest(&bare),
        brightest(&coated)
    );
    let mut none = common::textured_json();
    none["materials"][floor]["extensions"] =
        serde_json::json!({"KHR_materials_clearcoat": {"clearcoatFactor": 0.0}});
    std::fs::write(&p, none.to_string()).unwrap();
    assert_eq!(
        frame(&rxpipe::io::load_scene(&p).unwrap()).color,
        frame(&was).color
    );
    // the glow at the rim: the outermost lit pixel of the middle row, against the centre's
    let (glow, glow_coated) = (sphere(0.0, 0.5), sphere(1.0, 0.5));
    let row = |f: &rxpipe::Frame| {
        let y = f.height / 2;
        let px = |x: u32| px(f, x, y);
        let rim = (0..f.width / 2).find(|&x| px(x)[0] > 0).unwrap();
        (px(rim)[0], px(f.width / 2)[0])
    };
    let ((rim, centre), (rim_c, centre_c)) = (row(&glow), row(&glow_coated));
    assert!(
        (rim as f32 / centre as f32) > (rim_c as f32 / centre_c as f32) + 0.05,
        "bare {rim}/{centre}, coated {rim_c}/{centre_c}"
    );
}
