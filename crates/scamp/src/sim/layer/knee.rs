//! The hyperbolic tangent of the soft knee, computed here rather than by the platform's
//! maths library: free of branches, calls and tables, so that the values of a row past a
//! knee go through it a vector at a time, and the same bits on every platform.
//!
//! It works in f64 and rounds once to f32: `e = expm1(2|t|)` by a reduction `2|t| = k
//! ln 2 + r` (`|r| <= ln 2 / 2`) and the Taylor polynomial of `expm1(r)` to degree 13
//! (its remainder is under 10^-17 of the value), then `tanh |t| = e / (e + 2)`. Before
//! the rounding the result is within 2^-48 of `tanh(t)`, relative (a few roundings of
//! 2^-53 each, checked against `f64::tanh` by the tests), so the f32 result is the
//! correctly rounded `tanh(t)` except where `tanh(t)` lies within that distance of a
//! midpoint between two f32 values, where it may be the other neighbour. The platform's
//! `tanhf` is allowed an ulp or more of error, so the two agree on most values and
//! differ by one ulp on the rest (the tests bound them at 2 ulps apart).

/// `ln 2` split so that `k * LN2_HI` is exact for every `k` used (its low 32 bits are
/// zero) and `LN2_HI + LN2_LO` is `ln 2` to within 10^-22.
const LN2_HI: f64 = 0.693_146_705_627_441_4;
/// See [`LN2_HI`].
const LN2_LO: f64 = 4.749_325_039_031_672_6e-7;
/// `1 / ln 2`.
const INV_LN2: f64 = std::f64::consts::LOG2_E;
/// Adding and subtracting `1.5 * 2^52` rounds an f64 below 2^51 in magnitude to the
/// nearest integer (ties to even), which then sits in the sum's low bits.
const ROUNDER: f64 = 6_755_399_441_055_744.0;
/// `|t|` is taken no further than this: `tanh(20)` is 1 to within 10^-17, far closer
/// than an f32 can tell, and `2^k` stays well inside the f64 range.
const FAR: f64 = 20.0;

/// `1 / j!` for `j = 2..=13`, highest first (Horner's order).
const INVERSE_FACTORIALS: [f64; 12] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    1.0 / 2.0,
];

/// `tanh(t)` in f64 before the final rounding (`t` not NaN).
#[inline(always)]
fn tanh_wide(t: f32) -> f64 {
    let u = 2.0 * f64::from(t).abs().min(FAR);
    let shifted = u * INV_LN2 + ROUNDER;
    let k = shifted - ROUNDER;
    let r = (u - k * LN2_HI) - k * LN2_LO;
    let mut p = INVERSE_FACTORIALS[0];
    for c in &INVERSE_FACTORIALS[1..] {
        p = p * r + c;
    }
    // expm1(r) = r + r^2 p(r).
    let em1 = r + (r * r) * p;
    // 2^k from the integer in the low bits of `shifted` (0 <= k <= 58).
    let two_k = f64::from_bits((shifted.to_bits().wrapping_sub(ROUNDER.to_bits()) + 1023) << 52);
    // expm1(u) = 2^k expm1(r) + (2^k - 1): no cancellation (k = 0 leaves expm1(r)).
    let e = two_k * em1 + (two_k - 1.0);
    e / (e + 2.0)
}

/// `tanh(t)` rounded to f32 (see the module docs for how close), NaN for NaN.
#[inline(always)]
pub(crate) fn tanh(t: f32) -> f32 {
    let y = (tanh_wide(t) as f32).copysign(t);
    if t.is_nan() {
        t
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `step`-th f32 from `from` up to `to` (bit patterns, positive values).
    fn sweep(from: f32, to: f32, step: u32) -> impl Iterator<Item = f32> {
        (from.to_bits()..=to.to_bits())
            .step_by(step as usize)
            .map(f32::from_bits)
    }

    /// Distance in units in the last place between two finite f32 of one sign.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn the_wide_value_is_within_its_bound_of_tanh() {
        // From the subnormals to past the point where tanh is 1 in f32.
        for t in sweep(1e-40, 12.0, 997) {
            let want = f64::from(t).tanh();
            let got = tanh_wide(t);
            assert!(
                ((got - want) / want).abs() <= 2f64.powi(-48),
                "t {t}: {got} against {want}"
            );
        }
    }

    #[test]
    fn the_f32_value_is_tanh_correctly_rounded_but_near_midpoints() {
        let mut near_midpoint = 0;
        for t in sweep(1e-30, 12.0, 331) {
            let want = f64::from(t).tanh();
            let got = tanh(t);
            if got != want as f32 {
                // Only where tanh is that close to halfway between two f32 values.
                let (a, b) = (want as f32, got);
                let mid = (f64::from(a) + f64::from(b)) / 2.0;
                assert!(ulps(a, b) == 1, "t {t}: {got} against {a}");
                assert!(((want - mid) / want).abs() <= 2f64.powi(-47), "t {t}");
                near_midpoint += 1;
            }
            assert_eq!(tanh(-t), -got);
        }
        // Rare: tanh has to fall within 2^-47 of a midpoint (about 1 in 2^23 values).
        assert!(near_midpoint <= 4, "{near_midpoint} values near a midpoint");
    }

    #[test]
    fn it_stays_within_two_ulps_of_the_platform_tanh() {
        let (mut same, mut all) = (0u32, 0u32);
        for t in sweep(1e-30, 12.0, 4099) {
            let (got, platform) = (tanh(t), t.tanh());
            assert!(ulps(got, platform) <= 2, "t {t}: {got} against {platform}");
            same += u32::from(got == platform);
            all += 1;
        }
        assert!(f64::from(same) > 0.9 * f64::from(all), "{same} of {all}");
    }

    #[test]
    fn ends_and_special_values() {
        assert_eq!(tanh(0.0).to_bits(), 0f32.to_bits());
        assert_eq!(tanh(-0.0).to_bits(), (-0f32).to_bits());
        assert_eq!(tanh(f32::INFINITY), 1.0);
        assert_eq!(tanh(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh(9.5), 1.0);
        assert_eq!(tanh(f32::MAX), 1.0);
        assert!(tanh(f32::NAN).is_nan());
        let tiny = f32::from_bits(1);
        assert_eq!(tanh(tiny), tiny);
        // An odd function that grows with t.
        let mut last = 0.0;
        for t in sweep(1e-6, 10.0, 65_537) {
            let y = tanh(t);
            assert!(y >= last && y <= 1.0, "t {t}");
            last = y;
        }
    }
}
