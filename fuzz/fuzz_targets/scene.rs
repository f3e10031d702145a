//! Bytes as a scene file (TOML); mesh paths resolve under a folder that does not exist.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // a scene may ask for a generated mesh of any size the machine holds: count on 256 MB, well
    // under libFuzzer's RSS limit, so that a big one is refused, not made (icosphere level 9,
    // about 300 MB to make, took 5.7 s in this instrumented build and past the 10 s timeout
    // when the machine was busy: the fuzzer's budget, not a hang)
    rxpipe::limits::cap_host(256 << 20);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = rxpipe::io::parse_scene(text, "input.toml", std::path::Path::new("/nonexistent"));
    }
});
