//! Any bytes as a mesh file, the format found by content (gzip included), as `load_meshes` does.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = rxpipe::io::parse_meshes(data.to_vec(), "input", None);
});
