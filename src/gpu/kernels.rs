//! The CUDA sources in kernels/, embedded in the binary at build time.

/// A named piece of CUDA C source. The name is what NVRTC's messages call it (`#line`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// Types and helpers shared by every kernel and vertex shader (VertexIn, VertexOut, Uniforms,
/// `rxp_transform`).
pub const COMMON: Source<'static> = Source {
    name: "kernels/common.cuh",
    text: include_str!("../../kernels/common.cuh"),
};

/// The geometry stage's kernels; a vertex shader (`vs_main`) must precede them.
pub const GEOMETRY: Source<'static> = Source {
    name: "kernels/geometry.cu",
    text: include_str!("../../kernels/geometry.cu"),
};

/// A block-wide prefix sum, used by the raster and batching kernels.
pub const SCAN: Source<'static> = Source {
    name: "kernels/scan.cuh",
    text: include_str!("../../kernels/scan.cuh"),
};

/// The dynamic batching preprocess (batch starts of the CPU's front-to-back scan, in parallel).
pub const BATCHING: Source<'static> = Source {
    name: "kernels/batching.cu",
    text: include_str!("../../kernels/batching.cu"),
};

/// Device-wide prefix sum and stable LSD radix sort (needs [`SCAN`] before it).
pub const SORT: Source<'static> = Source {
    name: "kernels/sort.cu",
    text: include_str!("../../kernels/sort.cu"),
};

/// The re-indexing stage's kernels (needs [`SCAN`] and [`SORT`] before it).
pub const REINDEX: Source<'static> = Source {
    name: "kernels/reindex.cu",
    text: include_str!("../../kernels/reindex.cu"),
};

/// The raster stage's kernels (setup, binning, tile rasterisation and shading).
pub const RASTER: Source<'static> = Source {
    name: "kernels/raster.cu",
    text: include_str!("../../kernels/raster.cu"),
};

/// The built-in vertex shaders.
pub const SHADER_TRANSFORM: Source<'static> = Source {
    name: "kernels/shaders/transform.cu",
    text: include_str!("../../kernels/shaders/transform.cu"),
};
pub const SHADER_FMA: Source<'static> = Source {
    name: "kernels/shaders/fma.cu",
    text: include_str!("../../kernels/shaders/fma.cu"),
};

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
