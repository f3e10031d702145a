//! The perspective camera and the viewpoints around a target that the command line and the
//! window's orbit move through.

use glam::{Mat4, Vec3};

/// A perspective camera.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    pub eye: Vec3,
    pub target: Vec3,
    pub up: Vec3,
    /// vertical field of view in degrees
    pub fov_y: f32,
    pub near: f32,
    pub far: f32,
}

impl Camera {
    pub fn view(&self) -> Mat4 {
        Mat4::look_at_rh(self.eye, self.target, self.up)
    }
    /// Projection to clip space with depth in [0, 1] (z = 0 at the near plane).
    pub fn projection(&self, aspect: f32) -> Mat4 {
        Mat4::perspective_rh(self.fov_y.to_radians(), aspect, self.near, self.far)
    }
    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        self.projection(aspect) * self.view()
    }
    /// Why the camera sees nothing, if it does not: a field of view outside (0, 180) degrees,
    /// the eye on the target, an up vector along the line of sight, or near and far planes out
    /// of order; any of them not finite.
    pub fn check(&self) -> Result<(), String> {
        let finite = self.eye.is_finite()
            && self.target.is_finite()
            && self.up.is_finite()
            && self.fov_y.is_finite()
            && self.near.is_finite()
            && self.far.is_finite();
        let dir = self.target - self.eye;
        let problem = if !finite {
            Some("has a coordinate that is not a finite number".to_string())
        } else if !(self.fov_y > 0.01 && self.fov_y < 179.0) {
            Some(format!(
                "has a vertical field of view of {} degrees (it must lie between 0 and 179)",
                self.fov_y
            ))
        } else if dir.length() <= 1e-6 * self.eye.abs().max_element().max(1.0) {
            Some(format!(
                "has its eye on its target ({:?}): it looks nowhere",
                self.eye.to_array()
            ))
        } else if dir.normalize().cross(self.up.normalize_or_zero()).length() < 1e-4 {
            Some(format!(
                "has its up vector {:?} along its line of sight",
                self.up.to_array()
            ))
        } else if !(self.near > 0.0 && self.far > self.near) {
            Some(format!(
                "has near {} and far {}: they must satisfy 0 < near < far",
                self.near, self.far
            ))
        } else {
            None
        };
        match problem {
            Some(p) => Err(format!("the camera {p}")),
            None => Ok(()),
        }
    }

    /// A camera framing a bounding box as [`Camera::framing`] does, from the direction
    /// `azimuth` degrees around the `up` axis (0: the front, positive to the right) and
    /// `elevation` degrees above the plane across it (below at negative degrees; less than 90
    /// either way), with `up` up. [`Camera::framing_angles`] with `up` +y give the framing's
    /// own view; +z up sees from the front a scan stored Z-up.
    ///
    /// ```
    /// use rxpipe_core::glam::Vec3;
    /// // a box seen from straight to its right (+x), the camera level with its centre
    /// let c = rxpipe_core::scene::Camera::orbit(Vec3::ZERO, Vec3::ONE, Vec3::Y, 90.0, 0.0);
    /// assert!((c.eye.y - 0.5).abs() < 1e-4 && c.eye.x > 1.0 && (c.eye.z - 0.5).abs() < 1e-4);
    /// ```
    pub fn orbit(lo: Vec3, hi: Vec3, up: Vec3, azimuth: f32, elevation: f32) -> Camera {
        let mut c = Camera::framing(lo, hi);
        let dir = orbit_direction(up, azimuth.to_radians(), elevation.to_radians());
        c.eye = c.target + dir * (c.eye - c.target).length();
        c.up = up.normalize_or(Vec3::Y);
        c
    }

    /// The azimuth and elevation of [`Camera::framing`]'s view around +y, in degrees
    /// ([`Camera::orbit`]).
    pub fn framing_angles() -> (f32, f32) {
        let (azimuth, elevation) = orbit_angles(Vec3::Y, FRAMING_DIRECTION);
        (azimuth.to_degrees(), elevation.to_degrees())
    }

    /// A camera looking at a bounding box from the front and a little above, framing it.
    pub fn framing(lo: Vec3, hi: Vec3) -> Camera {
        let c = (lo + hi) * 0.5;
        let r = ((hi - lo).length() * 0.5).max(1e-6);
        let fov_y = 40f32;
        let dist = r / (fov_y.to_radians() * 0.5).sin() * 1.05;
        let dir = FRAMING_DIRECTION.normalize();
        Camera {
            eye: c + dir * dist,
            target: c,
            up: Vec3::Y,
            fov_y,
            near: (dist - r * 1.5).max(dist * 0.01),
            far: dist + r * 1.5,
        }
    }
}

/// Where [`Camera::framing`] looks from: the front, a little to the right and above.
const FRAMING_DIRECTION: Vec3 = Vec3::new(0.35, 0.3, 1.0);

/// The unit direction from a target to an eye `azimuth` radians around the `up` axis (0: the
/// front, positive to the right) and `elevation` radians above the plane across it: the
/// command line's viewpoint ([`Camera::orbit`]) and the window's orbit both move so.
pub fn orbit_direction(up: Vec3, azimuth: f32, elevation: f32) -> Vec3 {
    let local = Vec3::new(
        elevation.cos() * azimuth.sin(),
        elevation.sin(),
        elevation.cos() * azimuth.cos(),
    );
    glam::Quat::from_rotation_arc(Vec3::Y, up.normalize_or(Vec3::Y)) * local
}

/// The azimuth and elevation (radians) of the direction `dir` around the `up` axis: the inverse
/// of [`orbit_direction`].
pub fn orbit_angles(up: Vec3, dir: Vec3) -> (f32, f32) {
    let d = glam::Quat::from_rotation_arc(Vec3::Y, up.normalize_or(Vec3::Y)).inverse() * dir;
    let length = d.length().max(1e-30);
    (d.x.atan2(d.z), (d.y / length).clamp(-1.0, 1.0).asin())
}
