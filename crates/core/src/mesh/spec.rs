//! Generated meshes described by a short spec (`icosphere:LEVEL`, `torus:N`, `grid:N`,
//! `rings:TRIANGLES`) or by a scene file's generator object. The size of the output is known
//! before anything is generated: a request whose indices would not fit 32 bits, or whose memory
//! the host cannot give now, is refused with the size it would need.

use super::{grid, icosphere, rings, torus, Mesh, MeshError};

/// What the spec syntax accepts, for messages.
pub const SPECS: &str =
    "icosphere:LEVEL (0 to 13), torus:SEGMENTS, grid:N (N by N quads), rings:TRIANGLES";

/// A generator with its arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Generator {
    Icosphere {
        level: u32,
    },
    Torus {
        major: f32,
        minor: f32,
        segments: u32,
        sides: u32,
    },
    Grid {
        nx: u32,
        nz: u32,
    },
    Rings {
        triangles: u32,
    },
}

/// True when `text` has the shape of a spec (a generator name, a colon, an argument), so that a
/// path that does not exist can be reported as a bad spec instead.
pub fn looks_like_spec(text: &str) -> bool {
    text.split_once(':').is_some_and(|(k, a)| {
        !k.is_empty()
            && k.bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
            && !a.is_empty()
            && !a.contains(['/', '\\', '.'])
    })
}

impl Generator {
    /// Parses `NAME:N`. The error names the spec and lists the generators.
    pub fn parse(spec: &str) -> Result<Generator, MeshError> {
        let bad = |message: String| MeshError::Spec {
            spec: spec.into(),
            message,
        };
        let (kind, arg) = spec
            .split_once(':')
            .ok_or_else(|| bad(format!("not a generator spec; the generators are {SPECS}")))?;
        let n: u32 = arg.parse().map_err(|_| {
            bad(format!(
                "'{arg}' is not a whole number from 0 to 4294967295"
            ))
        })?;
        // (the generators round a smaller argument up: asked for, it would draw another mesh)
        let least = match kind {
            "torus" => 3,
            "grid" => 1,
            "rings" => 72,
            _ => 0,
        };
        if n < least {
            return Err(bad(format!(
                "{kind}:{n} is too small: {kind} needs at least {least} (the generators are \
                 {SPECS})"
            )));
        }
        Ok(match kind {
            "icosphere" => Generator::Icosphere { level: n },
            "torus" => Generator::Torus {
                major: 1.0,
                minor: 0.3,
                segments: n,
                sides: n / 3,
            },
            "grid" => Generator::Grid { nx: n, nz: n },
            "rings" => Generator::Rings { triangles: n },
            _ => {
                return Err(bad(format!(
                    "unknown generator '{kind}'; the generators are {SPECS}"
                )))
            }
        })
    }

    /// Vertices and triangles of the output (as u64: they are checked before generating).
    pub fn counts(&self) -> (u64, u64) {
        match *self {
            Generator::Icosphere { level } => {
                let f = 4u64.checked_pow(level).unwrap_or(u64::MAX);
                (f.saturating_mul(10).saturating_add(2), f.saturating_mul(20))
            }
            Generator::Torus {
                segments, sides, ..
            } => {
                let q = segments.max(3) as u64 * sides.max(3) as u64;
                (q, 2 * q)
            }
            Generator::Grid { nx, nz } => {
                let (nx, nz) = (nx.max(1) as u64, nz.max(1) as u64);
                ((nx + 1) * (nz + 1), 2 * nx * nz)
            }
            Generator::Rings { triangles } => {
                let (segments, sides) = super::generators::rings_size(triangles);
                let q = segments as u64 * sides as u64;
                (2 * q, 4 * q)
            }
        }
    }

    /// Bytes the generated mesh takes (positions, normals, uvs, indices), and about twice that
    /// while it is made (the icosphere's edge table, the rings' second torus).
    pub fn bytes(&self) -> u64 {
        let (v, t) = self.counts();
        v.saturating_mul(32).saturating_add(t.saturating_mul(12))
    }

    /// Generates the mesh after checking that its indices fit 32 bits and that the host has the
    /// memory.
    pub fn generate(&self, name: &str) -> Result<Mesh, MeshError> {
        let (v, t) = self.counts();
        let bad = |message: String| MeshError::Spec {
            spec: name.into(),
            message,
        };
        if v > u32::MAX as u64 || t.saturating_mul(3) > u32::MAX as u64 {
            // (counts past 2^64 saturate: said as such, not as the saturated number)
            let count = |n: u64| match n {
                u64::MAX => "more than 2^64".to_string(),
                n => n.to_string(),
            };
            return Err(bad(format!(
                "{} vertices and {} triangles do not fit 32-bit indices (at most {} triangles)",
                count(v),
                count(t),
                u32::MAX / 3
            )));
        }
        crate::limits::check_host(self.bytes().saturating_mul(2), || {
            format!("the mesh ({v} vertices, {t} triangles)")
        })
        .map_err(|e| bad(e.to_string()))?;
        Ok(match *self {
            Generator::Icosphere { level } => icosphere(level),
            Generator::Torus {
                major,
                minor,
                segments,
                sides,
            } => torus(major, minor, segments, sides),
            Generator::Grid { nx, nz } => grid(nx, nz),
            Generator::Rings { triangles } => rings(triangles),
        })
    }
}

/// The mesh a spec names, checked as [`Generator::generate`] does.
///
/// ```
/// assert_eq!(rxpipe_core::mesh::from_spec("icosphere:2").unwrap().triangle_count(), 320);
/// let e = rxpipe_core::mesh::from_spec("sphere:2").unwrap_err().to_string();
/// assert!(e.contains("icosphere:LEVEL"), "{e}");
/// ```
pub fn from_spec(spec: &str) -> Result<Mesh, MeshError> {
    Generator::parse(spec)?.generate(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_what_is_generated() {
        for spec in [
            "icosphere:0",
            "icosphere:3",
            "torus:8",
            "torus:40",
            "grid:1",
            "grid:7",
            "rings:72",
            "rings:1000",
            "rings:20000",
        ] {
            let g = Generator::parse(spec).unwrap();
            let m = g.generate(spec).unwrap();
            assert_eq!(
                g.counts(),
                (m.vertex_count() as u64, m.triangle_count() as u64),
                "{spec}"
            );
        }
    }

    #[test]
    fn specs_below_a_generators_least_are_refused() {
        for (spec, least) in [
            ("rings:0", 72),
            ("rings:71", 72),
            ("torus:2", 3),
            ("grid:0", 1),
        ] {
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(
                e.contains("is too small") && e.contains(&format!("at least {least}")),
                "{e}"
            );
        }
        assert_eq!(from_spec("rings:72").unwrap().triangle_count(), 72);
    }

    #[test]
    fn huge_specs_are_refused_before_generating() {
        for spec in ["grid:70000", "icosphere:14", "torus:100000"] {
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(e.starts_with(spec) && e.contains("32-bit indices"), "{e}");
        }
        // this one fits 32-bit indices; whether it fits the memory (56 GB) depends on the
        // machine (a big host would generate it: tests/cli.rs checks it under a memory limit)
        for spec in ["rings:1000000000"] {
            let needed = Generator::parse(spec).unwrap().bytes() * 2;
            if crate::limits::host_available() >= needed {
                eprintln!("notice: this host has the memory for {spec}; not generating it");
                continue;
            }
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(e.starts_with(spec) && e.contains("would need"), "{e}");
        }
        let e = from_spec("icosphere:20").unwrap_err().to_string();
        assert!(e.contains("32-bit indices"), "{e}");
        // counts past 2^64 are said so, not printed as the saturated u64
        let e = from_spec("icosphere:99").unwrap_err().to_string();
        assert!(e.contains("more than 2^64 vertices"), "{e}");
        assert!(!e.contains(&u64::MAX.to_string()), "{e}");
    }

    #[test]
    fn bad_specs_list_the_generators() {
        for spec in ["cube:3", "grid:x", "grid:-1", "icosphere:"] {
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(e.starts_with(spec), "{e}");
        }
        assert!(from_spec("cube:3").unwrap_err().to_string().contains(SPECS));
        assert!(looks_like_spec("grid:70000") && looks_like_spec("cube:3"));
        assert!(!looks_like_spec("bunny.obj") && !looks_like_spec("C:/mesh.obj"));
        assert!(!looks_like_spec("dir/a:b.obj"));
    }
}
