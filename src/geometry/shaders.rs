//! Vertex shaders: the inputs and outputs every strategy passes around, the [`VertexShader`]
//! trait users implement, and the built-in shaders.

use glam::{Mat3, Mat4, Vec2, Vec3, Vec4};

/// What a vertex shader reads: one vertex of the mesh. The same 32 bytes as CUDA's `VertexIn`
/// (kernels/common.cuh).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C)]
pub struct VertexIn {
    pub position: Vec3,
    pub normal: Vec3,
    pub uv: Vec2,
}

impl VertexIn {
    /// The shader inputs of every vertex of a mesh (missing normals and uvs read as zero).
    pub fn from_mesh(m: &rxpipe_core::mesh::Mesh) -> Vec<VertexIn> {
        use rayon::prelude::*;
        let nr = m.normals.as_deref().unwrap_or(&[]);
        let uv = m.uvs.as_deref().unwrap_or(&[]);
        // (in parallel: a billion-triangle mesh has half a billion vertices)
        (0..m.vertex_count())
            .into_par_iter()
            .map(|i| VertexIn {
                position: m.positions[i],
                normal: nr.get(i).copied().unwrap_or_default(),
                uv: uv.get(i).copied().unwrap_or_default(),
            })
            .collect()
    }
}

/// What a vertex shader writes: the clip-space position and a fixed small set of varyings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VertexOut {
    /// clip-space position (depth in [0, w] for visible points)
    pub clip: Vec4,
    /// world-space position, for lighting
    pub world: Vec3,
    /// world-space normal
    pub normal: Vec3,
    pub uv: Vec2,
    /// a free scalar varying (the FMA loads write their result here; the shading-rate mode puts
    /// the vertex's invocation count here)
    pub extra: f32,
}

/// Per-draw constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Uniforms {
    pub model: Mat4,
    pub view_proj: Mat4,
    /// inverse transpose of the model matrix's upper 3x3 ([`normal_matrix`])
    pub normal_matrix: Mat3,
    pub eye: Vec3,
    /// seconds, for animated shaders
    pub time: f32,
}

impl Uniforms {
    pub fn new(model: Mat4, view_proj: Mat4, eye: Vec3, time: f32) -> Self {
        Uniforms {
            model,
            view_proj,
            normal_matrix: normal_matrix(model),
            eye,
            time,
        }
    }
}

/// The matrix that takes a mesh's normals to world space under `model`: the inverse transpose of
/// its upper 3x3. A singular one (a scale of 0 along an axis, as an animation may key to flatten
/// or hide an object) has no inverse; its cofactor matrix, the inverse transpose times the
/// determinant, still maps each normal to the flattened surface's normal, and is used instead.
pub fn normal_matrix(model: Mat4) -> Mat3 {
    let m = Mat3::from_mat4(model);
    if m.determinant() != 0.0 {
        return m.inverse().transpose();
    }
    Mat3::from_cols(
        m.y_axis.cross(m.z_axis),
        m.z_axis.cross(m.x_axis),
        m.x_axis.cross(m.y_axis),
    )
}

impl Default for Uniforms {
    fn default() -> Self {
        Uniforms::new(Mat4::IDENTITY, Mat4::IDENTITY, Vec3::ZERO, 0.0)
    }
}

/// A vertex shader for the CPU backend. Implementations must be pure: the same input gives the
/// same output, however often and in whatever order it runs.
///
/// ```
/// use rxpipe::geometry::{VertexIn, VertexOut, VertexShader, Uniforms, Transform};
/// struct Inflate(f32);
/// impl VertexShader for Inflate {
///     fn shade(&self, v: &VertexIn, u: &Uniforms) -> VertexOut {
///         let moved = VertexIn { position: v.position + v.normal * self.0, ..*v };
///         Transform.shade(&moved, u)
///     }
/// }
/// let out = Inflate(0.1).shade(&VertexIn { normal: glam::Vec3::Y, ..Default::default() }, &Uniforms::default());
/// assert!((out.clip.y - 0.1).abs() < 1e-6);
/// ```
pub trait VertexShader: Send + Sync {
    fn shade(&self, v: &VertexIn, u: &Uniforms) -> VertexOut;
    /// A short name for reports.
    fn name(&self) -> String {
        "custom".into()
    }
}

/// The standard transform: model-view-projection, world position, normal and uv.
#[derive(Debug, Clone, Copy, Default)]
pub struct Transform;

impl VertexShader for Transform {
    #[inline]
    fn shade(&self, v: &VertexIn, u: &Uniforms) -> VertexOut {
        let world = u.model.transform_point3(v.position);
        VertexOut {
            clip: u.view_proj * world.extend(1.0),
            world,
            normal: u.normal_matrix * v.normal,
            uv: v.uv,
            extra: 0.0,
        }
    }
    fn name(&self) -> String {
        "transform".into()
    }
}

/// The paper's synthetic shader loads: the standard transform plus `n` dependent multiply-adds
/// (256, 512 and 1024 in the paper), whose result lands in `extra` so it cannot be optimised away.
#[derive(Debug, Clone, Copy)]
pub struct FmaLoad {
    pub n: u32,
}

impl FmaLoad {
    pub fn new(n: u32) -> Self {
        FmaLoad { n }
    }
}

impl VertexShader for FmaLoad {
    #[inline]
    fn shade(&self, v: &VertexIn, u: &Uniforms) -> VertexOut {
        let mut o = Transform.shade(v, u);
        let mut a = v.position.x + v.position.y;
        // a dependent chain: each step needs the previous result
        for _ in 0..self.n {
            a = a * 0.999_9 + 0.000_1;
        }
        o.extra = a;
        o
    }
    fn name(&self) -> String {
        format!("fma{}", self.n)
    }
}

/// A closure as a vertex shader.
pub struct FnShader<F>(pub F);

impl<F: Fn(&VertexIn, &Uniforms) -> VertexOut + Send + Sync> VertexShader for FnShader<F> {
    fn shade(&self, v: &VertexIn, u: &Uniforms) -> VertexOut {
        (self.0)(v, u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_matrices_of_flattening_models_are_finite_and_right() {
        let r = Mat4::from_rotation_z(0.7) * Mat4::from_rotation_x(0.3);
        // invertible: the inverse transpose itself
        let m = r * Mat4::from_scale(Vec3::new(2.0, -0.5, 1.5));
        assert_eq!(normal_matrix(m), Mat3::from_mat4(m).inverse().transpose());
        // flattened along y: every normal with an upward part points along the rotated y
        let flat = r * Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0));
        let n = (normal_matrix(flat) * Vec3::new(0.3, 0.9, 0.1)).normalize();
        let up = r.transform_vector3(Vec3::Y);
        assert!(n.is_finite() && n.distance(up) < 1e-5, "{n} against {up}");
        // and it is the limit of nearly flattened ones
        let thin = r * Mat4::from_scale(Vec3::new(1.0, 1e-4, 1.0));
        let m = (normal_matrix(thin) * Vec3::new(0.3, 0.9, 0.1)).normalize();
        assert!(m.distance(n) < 1e-3, "{m} against {n}");
        // scaled to nothing: no NaN (the normals vanish with the object)
        assert!(normal_matrix(Mat4::from_scale(Vec3::ZERO)).is_finite());
    }
}
