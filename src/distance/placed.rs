//! A mesh placed in the world: its tree is built once in object space, and each time the object
//! moves its positions are transformed and the tree refit ([`Bvh::refit`]), so that a distance
//! between objects costs one pass over each moved mesh, not a new tree.
//!
//! The transform is applied in one order of operations ([`transform_point`]) that the GPU's
//! kernel (`rxdi_transform` in kernels/distance.cu) repeats, so that both backends measure the
//! same world positions.

use super::bvh::Bvh;
use super::DistanceError;
use glam::{Mat4, Vec3};
use rxpipe_core::mesh::Mesh;
use std::sync::Arc;

/// `m` applied to point `p` (an affine transform: the last row is taken as 0 0 0 1), each
/// coordinate as ((m0 x + m1 y) + m2 z) + m3 with no fused operations.
pub fn transform_point(m: &Mat4, p: Vec3) -> Vec3 {
    let c = m.to_cols_array();
    let row = |r: usize| ((c[r] * p.x + c[4 + r] * p.y) + c[8 + r] * p.z) + c[12 + r];
    Vec3::new(row(0), row(1), row(2))
}

/// Checks that `model` keeps every position of the mesh named `name`, whose bounds
/// ([`Mesh::bounds`]) are `bounds`, and every step of [`transform_point`] among the finite
/// numbers: the transform of the magnitudes, |m| applied to the largest |coordinate| of each
/// axis, must be finite (rounding is monotonic, so no step of any vertex's transform is larger).
/// The same check serves both backends, so that neither reads its results back to find a bad
/// transform. The bounds are the caller's, kept from when it met the mesh: they are a pass over
/// its positions, too much for every frame.
pub fn check_model(
    name: &str,
    bounds: Option<(Vec3, Vec3)>,
    model: &Mat4,
) -> Result<(), DistanceError> {
    let (lo, hi) = bounds.unwrap_or_default();
    let big = lo.abs().max(hi.abs());
    let m = Mat4::from_cols_array(&model.to_cols_array().map(f32::abs));
    if transform_point(&m, big).is_finite() && model.is_finite() {
        Ok(())
    } else {
        Err(DistanceError::Placement {
            mesh: name.to_string(),
        })
    }
}

/// A box that holds every position of an object whose object-space bounds are `bounds`, placed
/// by [`transform_point`] under `model`: the box of the transformed corners, widened on each
/// axis by 1e-6 of the magnitudes that axis's transform adds (more than the rounding of any
/// vertex's transform or a corner's, a few units in the last place of those magnitudes). In
/// double precision.
pub fn world_box(bounds: (Vec3, Vec3), model: &Mat4) -> [glam::DVec3; 2] {
    let (lo, hi) = bounds;
    let mut b = [glam::DVec3::INFINITY, glam::DVec3::NEG_INFINITY];
    for i in 0..8 {
        let c = Vec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        );
        let w = transform_point(model, c).as_dvec3();
        b = [b[0].min(w), b[1].max(w)];
    }
    let big = lo.abs().max(hi.abs()).as_dvec3();
    let m = model.to_cols_array().map(|v| (v as f64).abs());
    let pad = glam::DVec3::from_array(std::array::from_fn(|r| {
        1e-6 * (m[r] * big.x + m[4 + r] * big.y + m[8 + r] * big.z + m[12 + r])
    }));
    [b[0] - pad, b[1] + pad]
}

/// The gap between two boxes (0 where they overlap).
pub fn box_gap(a: &[glam::DVec3; 2], b: &[glam::DVec3; 2]) -> f64 {
    let d = (b[0] - a[1]).max(a[0] - b[1]).max(glam::DVec3::ZERO);
    d.length()
}

/// A mesh, its tree, and where both are in the world now.
#[derive(Debug, Clone)]
pub struct Placed {
    /// the mesh in object space
    pub object: Arc<Mesh>,
    /// its positions under [`Placed::model`] (the same triangles)
    pub world: Mesh,
    /// the tree, fitted to `world`
    pub tree: Bvh,
    /// the transform `world` holds
    pub model: Mat4,
    /// the object's bounds ([`Mesh::bounds`]), kept for checking each transform
    bounds: Option<(Vec3, Vec3)>,
}

impl Placed {
    /// `object` (checked: triangles, indices in range, finite positions) with its tree, placed
    /// at the identity.
    pub fn new(object: Arc<Mesh>) -> Result<Placed, DistanceError> {
        let tree = Bvh::build(&object)?;
        let world = Mesh::new(
            object.name.clone(),
            object.positions.clone(),
            object.indices.clone(),
        );
        Ok(Placed {
            bounds: object.bounds(),
            object,
            world,
            tree,
            model: Mat4::IDENTITY,
        })
    }

    /// Places the mesh under `model`: transforms its positions and refits the tree, unless it
    /// is there already. Returns whether it moved. A transform that takes a position out of the
    /// finite numbers is an error naming the mesh, and leaves the mesh where it was.
    pub fn place(&mut self, model: Mat4) -> Result<bool, DistanceError> {
        if model == self.model {
            return Ok(false);
        }
        check_model(&self.object.name, self.bounds, &model)?;
        self.world.positions = self
            .object
            .positions
            .iter()
            .map(|&p| transform_point(&model, p))
            .collect();
        self.tree.refit(&self.world);
        self.model = model;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placed_tree_is_the_world_meshs_own_and_its_distance_too() {
        let a = Arc::new(rxpipe_core::mesh::icosphere(2));
        let mut p = Placed::new(a.clone()).unwrap();
        let model = Mat4::from_scale_rotation_translation(
            Vec3::new(2.0, 1.0, 0.5),
            glam::Quat::from_rotation_y(0.7),
            Vec3::new(3.0, -1.0, 2.0),
        );
        assert!(p.place(model).unwrap());
        assert!(!p.place(model).unwrap(), "placed twice at one transform");
        // every position is the transform's (glam's own product agrees to rounding)
        for (w, o) in p.world.positions.iter().zip(&a.positions) {
            assert!((*w - model.transform_point3(*o)).length() < 1e-5);
        }
        // the refit tree has the boxes of a tree built in the world with the same order
        let mut fresh = p.tree.clone();
        fresh.boxes.iter_mut().for_each(|b| *b = [[0.0; 3]; 2]);
        fresh.refit(&p.world);
        assert_eq!(fresh.boxes, p.tree.boxes);
        // and the distance to another mesh is the brute force's
        let mut b = rxpipe_core::mesh::icosphere(1);
        b.positions
            .iter_mut()
            .for_each(|q| *q = *q * 0.5 + Vec3::new(6.5, -1.0, 2.0));
        let tb = Bvh::build(&b).unwrap();
        let got = super::super::cpu::min_distance(&p.world, &p.tree, &b, &tb);
        let want = super::super::cpu::brute_force(&p.world, &b).unwrap();
        assert_eq!(got.distance, want.distance);
        assert_eq!(got.triangles, want.triangles);
    }

    #[test]
    fn a_world_box_holds_every_placed_position() {
        let m = rxpipe_core::mesh::icosphere(3);
        let bounds = m.bounds().unwrap();
        for (k, model) in [
            Mat4::IDENTITY,
            Mat4::from_scale_rotation_translation(
                Vec3::new(3.0, 0.01, 1.0),
                glam::Quat::from_euler(glam::EulerRot::XYZ, 0.4, 2.1, -0.3),
                Vec3::new(1e4, -2.5, 0.125),
            ),
            Mat4::from_rotation_z(0.25) * Mat4::from_translation(Vec3::splat(-7.0)),
        ]
        .into_iter()
        .enumerate()
        {
            let b = world_box(bounds, &model);
            for &p in &m.positions {
                let w = transform_point(&model, p).as_dvec3();
                assert!(
                    w.cmpge(b[0]).all() && w.cmple(b[1]).all(),
                    "model {k}: {w} in {b:?}"
                );
            }
        }
        let unit = [glam::DVec3::ZERO, glam::DVec3::ONE];
        let apart = [
            glam::DVec3::new(4.0, 5.0, 1.0),
            glam::DVec3::new(5.0, 6.0, 1.0),
        ];
        assert_eq!(box_gap(&unit, &apart), 5.0);
        assert_eq!(box_gap(&apart, &unit), 5.0);
        assert_eq!(box_gap(&unit, &unit), 0.0);
    }

    #[test]
    fn a_transform_to_infinity_is_an_error_and_leaves_the_mesh() {
        let mut p = Placed::new(Arc::new(rxpipe_core::mesh::icosphere(1))).unwrap();
        let before = p.world.positions.clone();
        let far = Mat4::from_scale_rotation_translation(
            Vec3::splat(f32::MAX),
            glam::Quat::IDENTITY,
            Vec3::splat(f32::MAX),
        );
        let e = p.place(far).unwrap_err();
        assert!(e.to_string().contains("icosphere"), "{e}");
        assert_eq!(p.world.positions, before);
        assert_eq!(p.model, Mat4::IDENTITY);
    }
}
