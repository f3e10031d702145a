//! Bytes as glTF JSON or GLB (embedded and data-URI buffers; no external files are read).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = rxpipe::io::gltf::parse(data, "input.gltf", None);
});
