//! Stage specifications as `--pass` and scene files give them (`normals:angle`, lists).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = rxpipe::passes::parse_list(&[text]);
    }
});
