//! Embedded CUDA sources: how a stage names its kernel file ([`crate::kernel_source!`]), the
//! shared building blocks every stage may include, and how pieces become one translation unit.
//! Stages own their kernels (each stage's `cuda.rs` declares its source); this module names
//! none of them.

/// A named piece of CUDA C source. The name is what NVRTC's messages call it (`#line`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// A file of the calling crate's kernels/ folder embedded in the binary at build time, as a
/// [`Source`] named `kernels/FILE` (the binary never reads kernels/ at run time).
#[macro_export]
macro_rules! kernel_source {
    ($file:literal) => {
        $crate::kernels::Source {
            name: concat!("kernels/", $file),
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $file)),
        }
    };
}

/// A file of the top-level kernels/ that this crate itself embeds (the workspace's root is two
/// folders up from this crate's).
macro_rules! shared_source {
    ($file:literal) => {
        Source {
            name: concat!("kernels/", $file),
            text: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../kernels/",
                $file
            )),
        }
    };
}

/// Types every vertex shader and the kernels that read shaded vertices share (VertexIn,
/// VertexOut, Uniforms, `rxp_transform`).
pub const COMMON: Source<'static> = shared_source!("common.cuh");

/// Warp- and block-wide prefix sums and a block-wide bitonic sort, written once for every stage.
pub const BLOCKS: Source<'static> = shared_source!("blocks.cuh");

/// Double-precision 3-vectors for kernels that sum geometry in float64 (normals, smoothing).
pub const DVEC: Source<'static> = shared_source!("dvec.cuh");

/// Device-wide prefix sum and stable LSD radix sort of multi-word keys (needs [`BLOCKS`] first).
pub const SORT: Source<'static> = shared_source!("sort.cu");

/// Concatenates sources into one translation unit, each preceded by a `#line` directive so that
/// NVRTC's errors name the file and line the text came from (`#pragma once` lines are dropped:
/// every piece appears exactly once).
pub fn assemble(parts: &[Source]) -> String {
    let mut s = String::new();
    for p in parts {
        s.push_str(&format!("#line 1 \"{}\"\n", p.name.replace('"', "'")));
        for line in p.text.lines() {
            if line.trim() == "#pragma once" {
                s.push('\n');
            } else {
                s.push_str(line);
                s.push('\n');
            }
        }
    }
    s
}
