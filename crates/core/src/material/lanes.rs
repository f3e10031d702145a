//! Vectors of eight pixels, one component per array ("structure of arrays"), for the material
//! path's lanes (`rxpipe::raster` shades eight pixels of one material together).
//!
//! A loop `for i in 0..LANES` that reads lane `i` of such arrays, runs the scalar code on it and
//! writes lane `i` back is what the compiler turns into vector instructions (eight lanes in the
//! fragment stage's x86-64-v3 build, two times four in the baseline build): the per-lane
//! arithmetic is the scalar code's, operation for operation, so the lanes give the same bytes as
//! one pixel at a time.

use glam::{Vec2, Vec3, Vec4};

/// Pixels a lane vector holds.
pub const LANES: usize = 8;

/// One float per lane.
pub type F = [f32; LANES];

/// Two components per lane.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct V2 {
    pub x: F,
    pub y: F,
}

/// Three components per lane.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct V3 {
    pub x: F,
    pub y: F,
    pub z: F,
}

/// Four components per lane.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct V4 {
    pub x: F,
    pub y: F,
    pub z: F,
    pub w: F,
}

impl V2 {
    #[inline(always)]
    pub fn get(&self, i: usize) -> Vec2 {
        Vec2::new(self.x[i], self.y[i])
    }
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: Vec2) {
        self.x[i] = v.x;
        self.y[i] = v.y;
    }
}

impl V3 {
    #[inline(always)]
    pub fn get(&self, i: usize) -> Vec3 {
        Vec3::new(self.x[i], self.y[i], self.z[i])
    }
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: Vec3) {
        self.x[i] = v.x;
        self.y[i] = v.y;
        self.z[i] = v.z;
    }
}

impl V4 {
    /// `v` in every lane.
    #[inline(always)]
    pub fn splat(v: Rgba) -> V4 {
        V4 {
            x: [v.r; LANES],
            y: [v.g; LANES],
            z: [v.b; LANES],
            w: [v.a; LANES],
        }
    }
    #[inline(always)]
    pub fn get(&self, i: usize) -> Rgba {
        Rgba::new(self.x[i], self.y[i], self.z[i], self.w[i])
    }
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: Rgba) {
        self.x[i] = v.r;
        self.y[i] = v.g;
        self.z[i] = v.b;
        self.w[i] = v.a;
    }

    /// `f` of each component of `self` and `o`, lane by lane.
    #[inline(always)]
    fn zip(&self, o: &V4, f: impl Fn(&F, &F) -> F) -> V4 {
        V4 {
            x: f(&self.x, &o.x),
            y: f(&self.y, &o.y),
            z: f(&self.z, &o.z),
            w: f(&self.w, &o.w),
        }
    }

    /// [`Rgba::lerp`] in each lane, by the lane's weight `s[i]`: the same operations per
    /// component, so the same values as lane by lane.
    #[inline(always)]
    pub fn lerp(&self, o: &V4, s: &F) -> V4 {
        self.zip(o, |a, b| {
            let mut r = [0.0; LANES];
            for i in 0..LANES {
                r[i] = a[i] * (1.0 - s[i]) + b[i] * s[i];
            }
            r
        })
    }

    /// `Rgba * Rgba` in each lane.
    #[inline(always)]
    pub fn mul(&self, o: &V4) -> V4 {
        self.zip(o, |a, b| {
            let mut r = [0.0; LANES];
            for i in 0..LANES {
                r[i] = a[i] * b[i];
            }
            r
        })
    }
}

/// RGBA as four plain floats: what the material path computes texels and colours in, because
/// glam's `Vec4` is an SSE register, which a lane loop cannot spread over lanes. Its operations
/// are `Vec4`'s, component by component (so the same values).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rgba {
    pub r: f32,
    pub g: f32,
    pub b: f32,
    pub a: f32,
}

impl Rgba {
    pub const ONE: Rgba = Rgba {
        r: 1.0,
        g: 1.0,
        b: 1.0,
        a: 1.0,
    };

    #[inline(always)]
    pub fn new(r: f32, g: f32, b: f32, a: f32) -> Rgba {
        Rgba { r, g, b, a }
    }

    #[inline(always)]
    pub fn rgb(self) -> Vec3 {
        Vec3::new(self.r, self.g, self.b)
    }

    #[inline(always)]
    fn zip(self, o: Rgba, f: impl Fn(f32, f32) -> f32) -> Rgba {
        Rgba::new(
            f(self.r, o.r),
            f(self.g, o.g),
            f(self.b, o.b),
            f(self.a, o.a),
        )
    }

    /// `self * s`
    #[inline(always)]
    pub fn scale(self, s: f32) -> Rgba {
        Rgba::new(self.r * s, self.g * s, self.b * s, self.a * s)
    }

    /// `Vec4::lerp`: `self * (1 - s) + o * s`
    #[inline(always)]
    pub fn lerp(self, o: Rgba, s: f32) -> Rgba {
        self.scale(1.0 - s) + o.scale(s)
    }
}

impl From<Vec4> for Rgba {
    #[inline(always)]
    fn from(v: Vec4) -> Rgba {
        Rgba::new(v.x, v.y, v.z, v.w)
    }
}

impl From<Rgba> for Vec4 {
    #[inline(always)]
    fn from(c: Rgba) -> Vec4 {
        Vec4::new(c.r, c.g, c.b, c.a)
    }
}

impl std::ops::Add for Rgba {
    type Output = Rgba;
    #[inline(always)]
    fn add(self, o: Rgba) -> Rgba {
        self.zip(o, |a, b| a + b)
    }
}

impl std::ops::Sub for Rgba {
    type Output = Rgba;
    #[inline(always)]
    fn sub(self, o: Rgba) -> Rgba {
        self.zip(o, |a, b| a - b)
    }
}

impl std::ops::Mul for Rgba {
    type Output = Rgba;
    #[inline(always)]
    fn mul(self, o: Rgba) -> Rgba {
        self.zip(o, |a, b| a * b)
    }
}
