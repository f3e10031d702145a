//! The program the application tests run.

use std::path::PathBuf;

/// The rxpipe program: cargo's build of it here, or on the GPU host the bundle's (`.gpu/bin`,
/// beside the test binaries' `.gpu/tests`).
pub fn rxpipe_exe() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_rxpipe"));
    if built.exists() {
        return built;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(|d| d.parent())
        .map(|d| d.join("bin").join("rxpipe"))
        .expect("the bundle's bin folder")
}
