//! Numbers that are one float or eight lanes, so that arithmetic written once runs for one pixel
//! and for eight in vector instructions with the same bits in every lane.
//!
//! [`Num`] is implemented by `f32` and by [`Wide`] (eight lanes: each operation one loop over the
//! lanes, which the compiler turns into a vector instruction). Branches become [`Num::select`]:
//! both sides are worked out and each lane keeps one. [`Xyz`] is a 3-vector of either, with
//! glam's `Vec3` operations in glam's order of operations, so that `Xyz<f32>` gives the bits
//! `Vec3` gives.
// (lane loops index each array by the lane: the form the compiler turns into vectors)
#![allow(clippy::needless_range_loop)]

use super::lanes::LANES;
use glam::Vec3;
use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

/// One float or eight lanes of them.
pub trait Num:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A truth value per lane.
    type Mask: Copy
        + BitAnd<Output = Self::Mask>
        + BitOr<Output = Self::Mask>
        + Not<Output = Self::Mask>;
    fn splat(v: f32) -> Self;
    fn sqrt(self) -> Self;
    /// `f32::max` (a NaN operand gives the other)
    fn max(self, o: Self) -> Self;
    fn abs(self) -> Self;
    fn lt(self, o: Self) -> Self::Mask;
    fn gt(self, o: Self) -> Self::Mask;
    fn eq(self, o: Self) -> Self::Mask;
    fn is_finite(self) -> Self::Mask;
    /// `a` where `m`, else `b`
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;

    /// `f32::clamp`: `lo` below it, `hi` above, NaN stays
    #[inline(always)]
    fn clamp(self, lo: f32, hi: f32) -> Self {
        let (lo, hi) = (Self::splat(lo), Self::splat(hi));
        let x = Self::select(self.lt(lo), lo, self);
        Self::select(x.gt(hi), hi, x)
    }
    /// glam's `min_element` step: `self` where below `o`, else `o`
    #[inline(always)]
    fn below(self, o: Self) -> Self {
        Self::select(self.lt(o), self, o)
    }
    /// glam's `max_element` step: `self` where above `o`, else `o`
    #[inline(always)]
    fn above(self, o: Self) -> Self {
        Self::select(self.gt(o), self, o)
    }
    /// `powi(5)` as it expands: x * (x^2)^2
    #[inline(always)]
    fn pow5(self) -> Self {
        let x2 = self * self;
        self * (x2 * x2)
    }
}

impl Num for f32 {
    type Mask = bool;
    #[inline(always)]
    fn splat(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn max(self, o: f32) -> f32 {
        f32::max(self, o)
    }
    #[inline(always)]
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    #[inline(always)]
    fn lt(self, o: f32) -> bool {
        self < o
    }
    #[inline(always)]
    fn gt(self, o: f32) -> bool {
        self > o
    }
    #[inline(always)]
    fn eq(self, o: f32) -> bool {
        self == o
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline(always)]
    fn select(m: bool, a: f32, b: f32) -> f32 {
        if m {
            a
        } else {
            b
        }
    }
}

/// Eight lanes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Wide(pub [f32; LANES]);

/// A truth value per lane of [`Wide`]: all ones for true, zero for false (the form a vector
/// compare gives and a vector select takes, so that no lane is narrowed to a byte and back).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WideMask(pub [u32; LANES]);

impl Wide {
    // (each loop indexes its arrays by the lane: the form the compiler turns into one vector
    // instruction)
    #[inline(always)]
    fn map(self, f: impl Fn(f32) -> f32) -> Wide {
        let mut r = [0.0; LANES];
        for i in 0..LANES {
            r[i] = f(self.0[i]);
        }
        Wide(r)
    }
    #[inline(always)]
    fn zip(self, o: Wide, f: impl Fn(f32, f32) -> f32) -> Wide {
        let mut r = [0.0; LANES];
        for i in 0..LANES {
            r[i] = f(self.0[i], o.0[i]);
        }
        Wide(r)
    }
    #[inline(always)]
    fn test(self, o: Wide, f: impl Fn(f32, f32) -> bool) -> WideMask {
        let mut r = [0; LANES];
        for i in 0..LANES {
            r[i] = if f(self.0[i], o.0[i]) { !0 } else { 0 };
        }
        WideMask(r)
    }
}

macro_rules! wide_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl $tr for Wide {
            type Output = Wide;
            #[inline(always)]
            fn $f(self, o: Wide) -> Wide {
                self.zip(o, |a, b| a $op b)
            }
        }
    };
}
wide_op!(Add, add, +);
wide_op!(Sub, sub, -);
wide_op!(Mul, mul, *);
wide_op!(Div, div, /);

impl Neg for Wide {
    type Output = Wide;
    #[inline(always)]
    fn neg(self) -> Wide {
        self.map(|a| -a)
    }
}

macro_rules! mask_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl $tr for WideMask {
            type Output = WideMask;
            #[inline(always)]
            fn $f(self, o: WideMask) -> WideMask {
                let mut r = [0; LANES];
                for i in 0..LANES {
                    r[i] = self.0[i] $op o.0[i];
                }
                WideMask(r)
            }
        }
    };
}
mask_op!(BitAnd, bitand, &);
mask_op!(BitOr, bitor, |);

impl Not for WideMask {
    type Output = WideMask;
    #[inline(always)]
    fn not(self) -> WideMask {
        let mut r = [0; LANES];
        for i in 0..LANES {
            r[i] = !self.0[i];
        }
        WideMask(r)
    }
}

impl Num for Wide {
    type Mask = WideMask;
    #[inline(always)]
    fn splat(v: f32) -> Wide {
        Wide([v; LANES])
    }
    #[inline(always)]
    fn sqrt(self) -> Wide {
        self.map(f32::sqrt)
    }
    #[inline(always)]
    fn max(self, o: Wide) -> Wide {
        self.zip(o, f32::max)
    }
    #[inline(always)]
    fn abs(self) -> Wide {
        self.map(f32::abs)
    }
    #[inline(always)]
    fn lt(self, o: Wide) -> WideMask {
        self.test(o, |a, b| a < b)
    }
    #[inline(always)]
    fn gt(self, o: Wide) -> WideMask {
        self.test(o, |a, b| a > b)
    }
    #[inline(always)]
    fn eq(self, o: Wide) -> WideMask {
        self.test(o, |a, b| a == b)
    }
    /// (as `x - x == 0`: `f32::is_finite` per lane becomes a bit test the compiler does lane by
    /// lane)
    #[inline(always)]
    fn is_finite(self) -> WideMask {
        self.test(self, |a, b| a - b == 0.0)
    }
    #[inline(always)]
    fn select(m: WideMask, a: Wide, b: Wide) -> Wide {
        let mut r = [0.0; LANES];
        for i in 0..LANES {
            // (bitwise: a lane's mask is all ones or zero)
            r[i] = f32::from_bits(a.0[i].to_bits() & m.0[i] | b.0[i].to_bits() & !m.0[i]);
        }
        Wide(r)
    }
}

/// A 3-vector of [`Num`]s with glam's `Vec3` operations, in glam's order.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Xyz<T> {
    pub x: T,
    pub y: T,
    pub z: T,
}

impl<T: Num> Xyz<T> {
    #[inline(always)]
    pub fn new(x: T, y: T, z: T) -> Self {
        Xyz { x, y, z }
    }
    /// `v` in every lane
    #[inline(always)]
    pub fn splat(v: Vec3) -> Self {
        Xyz::new(T::splat(v.x), T::splat(v.y), T::splat(v.z))
    }
    #[inline(always)]
    pub fn scale(self, s: T) -> Self {
        Xyz::new(self.x * s, self.y * s, self.z * s)
    }
    #[inline(always)]
    pub fn dot(self, o: Self) -> T {
        (self.x * o.x) + (self.y * o.y) + (self.z * o.z)
    }
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Xyz::new(
            self.y * o.z - o.y * self.z,
            self.z * o.x - o.z * self.x,
            self.x * o.y - o.x * self.y,
        )
    }
    /// `Vec3::normalize_or_zero`
    #[inline(always)]
    pub fn normalize_or_zero(self) -> Self {
        let rcp = T::splat(1.0) / self.dot(self).sqrt();
        let ok = rcp.is_finite() & rcp.gt(T::splat(0.0));
        let n = self.scale(rcp);
        let zero = T::splat(0.0);
        Xyz::new(
            T::select(ok, n.x, zero),
            T::select(ok, n.y, zero),
            T::select(ok, n.z, zero),
        )
    }
    /// `Vec3::lerp`: `self * (1 - s) + o * s`
    #[inline(always)]
    pub fn lerp(self, o: Self, s: T) -> Self {
        self.scale(T::splat(1.0) - s) + o.scale(s)
    }
    /// where any component differs from zero (`!= Vec3::ZERO`)
    #[inline(always)]
    pub fn nonzero(self) -> T::Mask {
        let zero = T::splat(0.0);
        !(self.x.eq(zero) & self.y.eq(zero) & self.z.eq(zero))
    }
    /// `a` where `m`, else `b`
    #[inline(always)]
    pub fn select(m: T::Mask, a: Self, b: Self) -> Self {
        Xyz::new(
            T::select(m, a.x, b.x),
            T::select(m, a.y, b.y),
            T::select(m, a.z, b.z),
        )
    }
    /// `Vec3::min_element`
    #[inline(always)]
    pub fn min_element(self) -> T {
        self.x.below(self.y.below(self.z))
    }
    /// `Vec3::max_element`
    #[inline(always)]
    pub fn max_element(self) -> T {
        self.x.above(self.y.above(self.z))
    }
}

macro_rules! xyz_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl<T: Num> $tr for Xyz<T> {
            type Output = Xyz<T>;
            #[inline(always)]
            fn $f(self, o: Xyz<T>) -> Xyz<T> {
                Xyz::new(self.x $op o.x, self.y $op o.y, self.z $op o.z)
            }
        }
    };
}
xyz_op!(Add, add, +);
xyz_op!(Sub, sub, -);
xyz_op!(Mul, mul, *);

impl<T: Num> Neg for Xyz<T> {
    type Output = Xyz<T>;
    #[inline(always)]
    fn neg(self) -> Xyz<T> {
        Xyz::new(-self.x, -self.y, -self.z)
    }
}

impl From<Vec3> for Xyz<f32> {
    #[inline(always)]
    fn from(v: Vec3) -> Self {
        Xyz::new(v.x, v.y, v.z)
    }
}

impl From<Xyz<f32>> for Vec3 {
    #[inline(always)]
    fn from(v: Xyz<f32>) -> Vec3 {
        Vec3::new(v.x, v.y, v.z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Awkward values: signed zeros, tiny and huge, infinities and NaN.
    const ODD: [f32; 12] = [
        0.0,
        -0.0,
        1.0,
        -2.5,
        1e-30,
        3e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        0.3,
        -7.0,
        1e-6,
    ];

    fn vec(k: usize) -> Vec3 {
        Vec3::new(ODD[k % 12], ODD[(k * 5 + 1) % 12], ODD[(k * 7 + 3) % 12])
    }

    fn same(a: Vec3, b: Xyz<f32>) -> bool {
        a.to_array()
            .iter()
            .zip([b.x, b.y, b.z])
            .all(|(p, q)| p.to_bits() == q.to_bits())
    }

    #[test]
    fn xyz_gives_the_bits_of_glam() {
        for k in 0..144 {
            let (a, b) = (vec(k), vec(k / 12 + 5 * k));
            let (p, q) = (Xyz::from(a), Xyz::from(b));
            assert!(same(a.normalize_or_zero(), p.normalize_or_zero()), "{a}");
            assert!(same(a.cross(b), p.cross(q)), "{a} {b}");
            assert!(same(a.lerp(b, 0.3), p.lerp(q, 0.3)), "{a} {b}");
            assert_eq!(a.dot(b).to_bits(), p.dot(q).to_bits(), "{a} {b}");
            assert_eq!(a.min_element().to_bits(), p.min_element().to_bits(), "{a}");
            assert_eq!(a.max_element().to_bits(), p.max_element().to_bits(), "{a}");
            assert_eq!(a != Vec3::ZERO, p.nonzero(), "{a}");
            let s = a.x;
            assert_eq!(
                s.clamp(0.0, 1.0).to_bits(),
                Num::clamp(s, 0.0, 1.0).to_bits()
            );
            assert_eq!(s.powi(5).to_bits(), s.pow5().to_bits(), "{s}");
        }
    }

    #[test]
    fn lanes_give_the_bits_of_one_float() {
        let lane = |k: usize| ODD[k % 12] * (1.0 + k as f32 * 0.37);
        let (a, b) = (
            Wide(std::array::from_fn(lane)),
            Wide(std::array::from_fn(|i| lane(i + 5))),
        );
        let m = a.lt(b);
        for i in 0..LANES {
            let (x, y) = (a.0[i], b.0[i]);
            // (any NaN for a NaN: which NaN an operation gives may differ between a vector
            // instruction and a constant folded by the compiler)
            let bits = |w: Wide, v: f32| {
                let w = w.0[i];
                assert!(
                    w.to_bits() == v.to_bits() || w.is_nan() && v.is_nan(),
                    "{x} {y}"
                );
            };
            bits(a + b, x + y);
            bits(a - b, x - y);
            bits(a * b, x * y);
            bits(a / b, x / y);
            bits(-a, -x);
            bits(a.sqrt(), x.sqrt());
            bits(Num::max(a, b), x.max(y));
            bits(Num::abs(a), x.abs());
            bits(Num::clamp(a, 0.0, 1.0), x.clamp(0.0, 1.0));
            bits(Wide::select(m, a, b), if x < y { x } else { y });
            bits(Wide::select(!m, a, b), if x < y { y } else { x });
            // a lane's truth is all ones, its falsehood zero
            let truth = |c: bool| if c { !0u32 } else { 0 };
            assert_eq!(Num::is_finite(a).0[i], truth(x.is_finite()));
            assert_eq!(a.eq(b).0[i], truth(x == y));
            assert_eq!(a.gt(b).0[i], truth(x > y));
            assert_eq!((m | a.gt(b)).0[i], truth(x < y) | truth(x > y));
            assert_eq!((m & a.gt(b)).0[i], 0);
        }
    }
}
