//! Bytes as a scene file (TOML); mesh paths resolve under a folder that does not exist.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = rxpipe::Scene::parse(text, "input.toml", std::path::Path::new("/nonexistent"));
    }
});
