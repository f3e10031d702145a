//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared meshes folder, or `None` with a printed notice (the test then returns early).
pub fn meshes() -> Option<PathBuf> {
    let d = rxpipe::io::shared_meshes_dir();
    if d.is_none() {
        eprintln!("notice: ../shared/meshes not found (set RXPIPE_MESHES); skipping this test");
    }
    d
}

/// Every triangle mesh of the shared folder (not the distance pairs).
pub const SHARED: [&str; 10] = [
    "stanford-bunny.obj",
    "ogre.obj",
    "beast.obj",
    "rocker-arm.obj",
    "fandisk.obj",
    "teapot.obj",
    "spot.obj",
    "cow.obj",
    "suzanne.obj",
    "igea.ply",
];

pub fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rxpipe-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
