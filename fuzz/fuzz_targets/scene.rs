//! Bytes as a scene file (TOML); mesh paths resolve under a folder that does not exist.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // a scene may ask for a generated mesh of any size the machine holds: count on 1 GB, well
    // under libFuzzer's RSS limit, so that a big one is refused, not made
    rxpipe::limits::cap_host(1 << 30);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = rxpipe::Scene::parse(text, "input.toml", std::path::Path::new("/nonexistent"));
    }
});
