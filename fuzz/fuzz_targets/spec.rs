//! Generator specs: parsing never panics, and a small spec generates exactly the counts it
//! announced (big ones are only sized, not generated, to keep runs fast).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = rxpipe::mesh::looks_like_spec(text);
    let Ok(g) = rxpipe::mesh::Generator::parse(text) else { return };
    let (v, t) = g.counts();
    if t <= 20_000 {
        let m = g.generate(text).expect("a small spec generates");
        assert_eq!((m.vertex_count() as u64, m.triangle_count() as u64), (v, t));
        m.validate().expect("generated meshes are valid");
    }
});
