//! The sampling of textures against independent references.

use super::place::modulo;
use super::*;

fn checker(srgb: bool, sampler: Sampler) -> Texture {
    // 4x2: black and white texels alternating
    let mut px = Vec::new();
    for y in 0..2 {
        for x in 0..4 {
            let v = if (x + y) % 2 == 0 { 255 } else { 0 };
            px.extend([v, v, v, 255]);
        }
    }
    Texture::new("checker", 4, 2, &px, srgb, sampler).unwrap()
}

#[test]
fn levels_halve_down_to_one_texel_and_average_in_linear_space() {
    let t = checker(true, Sampler::default());
    let sizes: Vec<(u32, u32)> = t.levels.iter().map(|l| (l.width, l.height)).collect();
    assert_eq!(sizes, vec![(4, 2), (2, 1), (1, 1)]);
    // half black, half white in linear light is 0.5, sRGB-encoded 188
    assert_eq!(t.levels[1].texels[0], [188, 188, 188, 255]);
    let lin = checker(false, Sampler::default());
    assert_eq!(lin.levels[2].texels[0], [128, 128, 128, 255]);
}

#[test]
fn alike_textures_sampled_together_equal_each_sampled_alone() {
    // 8x4 textures of different texels (one sRGB), every sampler shape, coordinates and
    // derivatives from magnification to past the last level
    let texels = |seed: u32| -> Vec<u8> {
        (0..8 * 4 * 4)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 11) as u8)
            .collect()
    };
    let filters = [Filter::Nearest, Filter::Linear];
    let wraps = [Wrap::Repeat, Wrap::ClampToEdge, Wrap::MirroredRepeat];
    let mut rng = 12345u32;
    let mut next = || {
        rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (rng >> 8) as f32 / (1 << 24) as f32
    };
    for (k, mipmap) in [None, Some(Filter::Nearest), Some(Filter::Linear)]
        .into_iter()
        .enumerate()
    {
        let sampler = Sampler {
            wrap_s: wraps[k],
            wrap_t: wraps[(k + 1) % 3],
            mag: filters[k % 2],
            min: filters[(k + 1) % 2],
            mipmap,
        };
        let a = Texture::new("a", 8, 4, &texels(1), true, sampler).unwrap();
        let b = Texture::new("b", 8, 4, &texels(2), false, sampler).unwrap();
        let c = Texture::new("c", 8, 4, &texels(3), false, sampler).unwrap();
        assert!(a.alike(&b) && b.alike(&c));
        let mut differ = 0;
        for _ in 0..2000 {
            let uv = Vec2::new(next() * 6.0 - 3.0, next() * 6.0 - 3.0);
            let scale = (next() * 10.0 - 6.0).exp2();
            let dx = Vec2::new(next() - 0.5, next() - 0.5) * scale;
            let dy = Vec2::new(next() - 0.5, next() - 0.5) * scale;
            let mut together = [Rgba::ONE; 3];
            Texture::sample_alike(&[&a, &b, &c], uv, dx, dy, &mut together);
            let alone = [&a, &b, &c].map(|t| t.sample(uv, dx, dy));
            assert_eq!(
                together.map(Vec4::from),
                alone,
                "{uv} {dx} {dy} {sampler:?}"
            );
            differ += (together[0] != together[1]) as usize;
        }
        // each read its own texels (the textures differ, so their values nearly always do)
        assert!(differ > 1900, "{differ} of 2000 differ");
    }
    let other = Texture::new("d", 4, 4, &texels(4)[..64], false, Sampler::default()).unwrap();
    assert!(!other.alike(&Texture::new("e", 8, 4, &texels(5), false, Sampler::default()).unwrap()));
}

#[test]
fn level_log2_is_within_a_tenth_of_a_millionth_of_log2() {
    let mut x = 1.0f32;
    let mut checked = 0;
    while x < 1e30 {
        for k in 0..64 {
            let v = f32::from_bits(x.to_bits() + k * 977);
            let (got, want) = (level_log2(v) as f64, (v as f64).log2());
            // the series within 1e-7, plus the result's own rounding
            let tol = 1e-7 + want.abs() * f32::EPSILON as f64;
            assert!((got - want).abs() <= tol, "{v}: {got} against {want}");
            checked += 1;
        }
        x *= 1.37;
    }
    assert!(checked > 10_000);
    assert_eq!(level_log2(f32::INFINITY), 128.0);
}

/// Whether this CPU has the AVX2 gathers of [`gather_decode`].
fn gathers() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `t` in lanes with the alpha; `u` and `t` sampled together with it and without it.
fn sampled<const WIDE: bool>(
    t: &Texture,
    u: &Texture,
    uv: &V2,
    dx: &V2,
    dy: &V2,
) -> (V4, [V4; 2], [V4; 2]) {
    let lanes = t.sample_lanes::<WIDE>(uv, dx, dy, true);
    let mut together = [V4::default(); 2];
    Texture::sample_lanes_alike::<WIDE>(&[u, t], uv, dx, dy, true, &mut together);
    let mut rgb = [V4::default(); 2];
    Texture::sample_lanes_alike::<WIDE>(&[u, t], uv, dx, dy, false, &mut rgb);
    (lanes, together, rgb)
}

#[test]
fn lanes_sample_as_each_pixel_alone() {
    // every sampler shape, sizes that are powers of two and others, sRGB and linear;
    // coordinates near and far (past 2^30 texels, where the lanes' 32-bit places give way)
    // and not numbers, footprints from magnification to past the last level
    let texels = |n: u32, seed: u32| -> Vec<u8> {
        (0..4 * n)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 11) as u8)
            .collect()
    };
    let mut rng = 777u32;
    let mut next = || {
        rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (rng >> 8) as f32 / (1 << 24) as f32
    };
    let linear = Sampler::default();
    let samplers = [
        linear,
        Sampler {
            wrap_t: Wrap::ClampToEdge,
            ..linear
        },
        Sampler {
            wrap_s: Wrap::MirroredRepeat,
            ..linear
        },
        Sampler {
            mag: Filter::Nearest,
            ..linear
        },
        Sampler {
            mipmap: Some(Filter::Nearest),
            ..linear
        },
    ];
    let mut checked = 0;
    for (k, sampler) in samplers.into_iter().enumerate() {
        for (w, h) in [(8, 4), (16, 16), (6, 3), (1, 1)] {
            let t = Texture::new("t", w, h, &texels(w * h, k as u32), k % 2 == 0, sampler).unwrap();
            // alike, other texels, the other encoding: sampled together with t
            let u = Texture::new(
                "u",
                w,
                h,
                &texels(w * h, 99 + k as u32),
                k % 2 == 1,
                sampler,
            )
            .unwrap();
            for round in 0..300 {
                let (mut uv, mut dx, mut dy) = (V2::default(), V2::default(), V2::default());
                // every third group has one footprint scale in all its lanes (whole groups
                // magnified, or all in one level pair, as on screen)
                let group = (next() * 10.0 - 6.0).exp2();
                for i in 0..LANES {
                    let far = match (next() * 16.0) as u32 {
                        0 => 3e9,
                        1 => f32::NAN,
                        _ => 3.0,
                    };
                    let own = (next() * 10.0 - 6.0).exp2();
                    let scale = if round % 3 == 0 { group } else { own };
                    uv.set(i, Vec2::new(next() * 2.0 - 1.0, next() * 2.0 - 1.0) * far);
                    dx.set(i, Vec2::new(next() - 0.5, next() - 0.5) * scale);
                    dy.set(i, Vec2::new(next() - 0.5, next() - 0.5) * scale);
                }
                // the lane loops, and the AVX2 gathers where the CPU has them
                for wide in std::iter::once(false).chain(gathers().then_some(true)) {
                    let (lanes, together, rgb) = match wide {
                        false => sampled::<false>(&t, &u, &uv, &dx, &dy),
                        true => sampled::<true>(&t, &u, &uv, &dx, &dy),
                    };
                    for (a, b) in rgb.iter().zip(&together) {
                        assert_eq!((a.x, a.y, a.z, a.w), (b.x, b.y, b.z, [1.0; LANES]));
                    }
                    for i in 0..LANES {
                        let alone = t.sample(uv.get(i), dx.get(i), dy.get(i));
                        let place = format!(
                            "lane {i}: {} {} {} {sampler:?} {w}x{h}, gathers: {wide}",
                            uv.get(i),
                            dx.get(i),
                            dy.get(i)
                        );
                        assert_eq!(Vec4::from(lanes.get(i)), alone, "{place}");
                        assert_eq!(Vec4::from(together[1].get(i)), alone, "{place}");
                        let alone = u.sample(uv.get(i), dx.get(i), dy.get(i));
                        assert_eq!(Vec4::from(together[0].get(i)), alone, "{place}");
                        checked += 1;
                    }
                }
            }
        }
    }
    let builds = 1 + gathers() as usize;
    assert_eq!(checked, 5 * 4 * 300 * LANES * builds);
}

#[test]
fn places_bound_is_their_or_at_least_each_and_below_the_next_power_of_two() {
    let mut rng = 99u32;
    for round in 0..2000 {
        let mut p = PlaceLanes::default();
        // places below 2^b, for b from 0 (all 0) to 31; in every other round only one
        // place not 0 (so that each place is seen to count)
        let bits = round % 32;
        let one = (round / 32 % 32) as usize;
        for k in 0..4 {
            for i in 0..LANES {
                rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let v = (rng >> 1) >> (31 - bits);
                p.at[k][i] = if round % 2 == 0 || k * LANES + i == one {
                    v
                } else {
                    0
                };
            }
        }
        let top = p.at.iter().flatten().copied().max().unwrap();
        let b = p.bound();
        assert_eq!(b, p.at.iter().flatten().fold(0, |a, &v| a | v));
        assert!(b >= top, "{b} below {top}");
        assert!(
            (b as u64) < (top as u64 + 1).next_power_of_two(),
            "{b} for {top}"
        );
    }
}

#[test]
fn wrap_modes_map_every_integer_into_range() {
    assert_eq!(wrap(-1, 4, Wrap::Repeat), 3);
    assert_eq!(wrap(9, 4, Wrap::Repeat), 1);
    assert_eq!(wrap(-1, 4, Wrap::ClampToEdge), 0);
    assert_eq!(wrap(9, 4, Wrap::ClampToEdge), 3);
    assert_eq!(wrap(4, 4, Wrap::MirroredRepeat), 3);
    assert_eq!(wrap(-1, 4, Wrap::MirroredRepeat), 0);
    assert_eq!(wrap(i64::MIN, 4, Wrap::MirroredRepeat), 0);
    // the fast paths (mask, 32-bit division) equal the 64-bit Euclidean remainder
    let big = [i64::MIN, i64::MIN + 1, -(1 << 40) - 3, 1 << 40, i64::MAX];
    for n in [1u32, 2, 3, 5, 7, 64, 100, 1000, 1024, 16383, 16384, 32768] {
        for i in (-70_000i64..70_000).step_by(7).chain(big) {
            assert_eq!(modulo(i, n) as i64, i.rem_euclid(n as i64), "{i} mod {n}");
        }
    }
}

#[test]
fn sampling_picks_texels_filters_and_levels() {
    let near = Sampler {
        mag: Filter::Nearest,
        min: Filter::Nearest,
        mipmap: None,
        ..Default::default()
    };
    let t = checker(false, near);
    let z = Vec2::ZERO;
    // texel centres, magnified
    assert_eq!(t.sample(Vec2::new(0.125, 0.25), z, z), Vec4::ONE);
    assert_eq!(t.sample(Vec2::new(0.375, 0.25), z, z).x, 0.0);
    // bilinear halfway between a white and a black texel
    let lin = checker(false, Sampler::default());
    let v = lin.sample(Vec2::new(0.25, 0.25), z, z);
    assert!((v.x - 0.5).abs() < 1e-6, "{v}");
    // a footprint of four texels reads level 2 (one grey texel)
    let d = Vec2::new(1.0, 0.0);
    let v = lin.sample(Vec2::new(0.3, 0.6), d, d);
    assert!((v.x - 128.0 / 255.0).abs() < 1e-6, "{v}");
    // NaN coordinates read some texel, never panic
    let v = lin.sample(Vec2::NAN, Vec2::NAN, Vec2::NAN);
    assert!(v.w.is_finite());
    assert!(Texture::new("x", 0, 1, &[], false, near).is_err());
    assert!(Texture::new("x", 2, 1, &[0; 4], false, near).is_err());
}
