//! Procedural meshes: icosphere, torus, grid and a pair of interlocking rings.

use super::Mesh;
use glam::{Vec2, Vec3};
use std::collections::HashMap;
use std::f32::consts::TAU;

/// A unit icosphere subdivided `level` times: `10 * 4^level + 2` vertices and `20 * 4^level`
/// triangles (level 6: 40,962 and 81,920, the vertex-reuse paper's "sphere").
pub fn icosphere(level: u32) -> Mesh {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    let mut positions: Vec<Vec3> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|p| Vec3::from_array(*p).normalize())
    .collect();
    let mut indices: Vec<u32> = vec![
        0, 11, 5, 0, 5, 1, 0, 1, 7, 0, 7, 10, 0, 10, 11, 1, 5, 9, 5, 11, 4, 11, 10, 2, 10, 7, 6, 7,
        1, 8, 3, 9, 4, 3, 4, 2, 3, 2, 6, 3, 6, 8, 3, 8, 9, 4, 9, 5, 2, 4, 11, 6, 2, 10, 8, 6, 7, 9,
        8, 1,
    ];
    for _ in 0..level {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::with_capacity(indices.len());
        let mut next = Vec::with_capacity(indices.len() * 4);
        let mut midpoint = |a: u32, b: u32, positions: &mut Vec<Vec3>| {
            let key = (a.min(b), a.max(b));
            *mid.entry(key).or_insert_with(|| {
                let p = (positions[a as usize] + positions[b as usize]).normalize();
                positions.push(p);
                positions.len() as u32 - 1
            })
        };
        for tri in indices.chunks_exact(3) {
            let (a, b, c) = (tri[0], tri[1], tri[2]);
            let ab = midpoint(a, b, &mut positions);
            let bc = midpoint(b, c, &mut positions);
            let ca = midpoint(c, a, &mut positions);
            next.extend_from_slice(&[a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca]);
        }
        indices = next;
    }
    let normals = positions.clone();
    let uvs = positions
        .iter()
        .map(|p| {
            Vec2::new(
                0.5 + p.z.atan2(p.x) / TAU,
                0.5 - p.y.asin() / std::f32::consts::PI,
            )
        })
        .collect();
    Mesh {
        name: format!("icosphere({level})"),
        positions,
        normals: Some(normals),
        uvs: Some(uvs),
        indices,
        base_color: None,
        colors: None,
        uvs1: None,
        tangents: None,
        material: None,
    }
}

/// A torus around the y axis: `major` radius to the tube centre, `minor` tube radius,
/// `segments` around the ring and `sides` around the tube (2 * segments * sides triangles).
pub fn torus(major: f32, minor: f32, segments: u32, sides: u32) -> Mesh {
    let (segments, sides) = (segments.max(3), sides.max(3));
    let mut positions = Vec::with_capacity((segments * sides) as usize);
    let mut normals = Vec::with_capacity(positions.capacity());
    let mut uvs = Vec::with_capacity(positions.capacity());
    for i in 0..segments {
        let u = i as f32 / segments as f32;
        let (su, cu) = (u * TAU).sin_cos();
        for j in 0..sides {
            let v = j as f32 / sides as f32;
            let (sv, cv) = (v * TAU).sin_cos();
            let n = Vec3::new(cu * cv, sv, su * cv);
            positions.push(Vec3::new(cu * major, 0.0, su * major) + n * minor);
            normals.push(n);
            uvs.push(Vec2::new(u, v));
        }
    }
    let mut indices = Vec::with_capacity((segments * sides * 6) as usize);
    for i in 0..segments {
        for j in 0..sides {
            let a = i * sides + j;
            let b = ((i + 1) % segments) * sides + j;
            let c = ((i + 1) % segments) * sides + (j + 1) % sides;
            let d = i * sides + (j + 1) % sides;
            indices.extend_from_slice(&[a, d, b, b, d, c]);
        }
    }
    Mesh {
        name: format!("torus({segments}x{sides})"),
        positions,
        normals: Some(normals),
        uvs: Some(uvs),
        indices,
        base_color: None,
        colors: None,
        uvs1: None,
        tangents: None,
        material: None,
    }
}

/// A flat grid in the xz plane spanning [-1, 1]^2 with `nx` by `nz` quads (two triangles each),
/// facing +y.
pub fn grid(nx: u32, nz: u32) -> Mesh {
    let (nx, nz) = (nx.max(1), nz.max(1));
    let mut positions = Vec::with_capacity(((nx + 1) * (nz + 1)) as usize);
    let mut uvs = Vec::with_capacity(positions.capacity());
    for j in 0..=nz {
        for i in 0..=nx {
            let (u, v) = (i as f32 / nx as f32, j as f32 / nz as f32);
            positions.push(Vec3::new(u * 2.0 - 1.0, 0.0, v * 2.0 - 1.0));
            uvs.push(Vec2::new(u, v));
        }
    }
    let normals = vec![Vec3::Y; positions.len()];
    let mut indices = Vec::with_capacity((nx * nz * 6) as usize);
    for j in 0..nz {
        for i in 0..nx {
            let a = j * (nx + 1) + i;
            let (b, c, d) = (a + 1, a + nx + 2, a + nx + 1);
            indices.extend_from_slice(&[a, d, b, b, d, c]);
        }
    }
    Mesh {
        name: format!("grid({nx}x{nz})"),
        positions,
        normals: Some(normals),
        uvs: Some(uvs),
        indices,
        base_color: None,
        colors: None,
        uvs1: None,
        tangents: None,
        material: None,
    }
}

/// Segments and sides of each of the two tori of `rings(triangles)`.
pub(super) fn rings_size(triangles: u32) -> (u32, u32) {
    // each torus has 2 * seg * sides triangles, with seg = 4 * sides
    let per = (triangles / 2).max(36) as f32;
    let sides = ((per / 8.0).sqrt().round() as u32).max(3);
    let segments = (per / (2.0 * sides as f32)).round().max(3.0) as u32;
    (segments, sides)
}

/// Two interlocking tori with about `triangles` triangles in all (at least 72).
pub fn rings(triangles: u32) -> Mesh {
    let (segments, sides) = rings_size(triangles);
    let mut a = torus(1.0, 0.25, segments, sides);
    let mut b = torus(1.0, 0.25, segments, sides);
    b.transform(
        glam::Mat4::from_translation(Vec3::new(1.0, 0.0, 0.0))
            * glam::Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2),
    );
    a.transform(glam::Mat4::IDENTITY);
    a.append(&b);
    a.name = format!("rings({})", a.triangle_count());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icosphere_counts_match_the_paper_sphere() {
        let m = icosphere(6);
        assert_eq!(m.vertex_count(), 40_962);
        assert_eq!(m.triangle_count(), 81_920);
        m.validate().unwrap();
        // every vertex on the unit sphere, every triangle facing outwards
        for t in m.indices.chunks_exact(3).step_by(97) {
            let [a, b, c] = [0, 1, 2].map(|k| m.positions[t[k] as usize]);
            assert!((b - a).cross(c - a).dot(a + b + c) > 0.0);
        }
    }

    #[test]
    fn generators_are_closed_and_valid() {
        for m in [torus(1.0, 0.3, 24, 12), rings(10_000), grid(4, 3)] {
            m.validate().unwrap();
        }
        let r = rings(10_000);
        let t = r.triangle_count() as f32;
        assert!((t - 10_000.0).abs() / 10_000.0 < 0.1, "{t}");
        assert_eq!(grid(4, 3).triangle_count(), 24);
        // a closed torus: every edge is shared by exactly two triangles
        let tor = torus(1.0, 0.3, 24, 12);
        let mut edges = HashMap::new();
        for t in tor.indices.chunks_exact(3) {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&c| c == 2));
    }
}
