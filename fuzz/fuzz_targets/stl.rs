//! Bytes named as a .stl file (the extension breaks format ties), through the whole loader.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = rxpipe::io::parse_meshes(data.to_vec(), "input.stl", None);
});
