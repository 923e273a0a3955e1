//! The hyperbolic tangent of the soft knee, computed here rather than by the platform's
//! maths library: in f32, free of branches, calls and tables, so that the values of a
//! row past a knee go through it a whole vector at a time (eight or sixteen lanes), and
//! the same bits on every platform.
//!
//! `e = expm1(2|t|)` by a reduction `2|t| = k ln 2 + r` (`|r| <= ln 2 / 2`) and the
//! Taylor polynomial of `expm1(r)` to degree 8 (its remainder is under 2 10^-9 of the
//! value, a thirtieth of a unit in the last place), then `tanh |t| = e / (e + 2)`, every
//! step in f32 with its multiply-adds fused (one rounding each, the same on every unit).
//! Checked against `f64::tanh` at every f32 from 0 to 12 (past 10 both are 1 in f32):
//! within 2.42 units in the last place of the exact value, at most 2 ulps from the
//! correctly rounded f32, which it is for 92 % of the values (the tests sweep the same
//! range). It grows with `t` but for steps back of at most 2 ulps where neighbouring
//! values round apart, far below anything the knee's output can tell from noise.

/// `ln 2` split so that `k * LN2_HI` is exact for every `k` used (its low 8 bits are
/// zero, and `k <= 29`) and `LN2_HI + LN2_LO` is `ln 2` to within 10^-13.
const LN2_HI: f32 = 0.693_145_75;
/// See [`LN2_HI`].
const LN2_LO: f32 = 1.428_606_8e-6;
/// `1 / ln 2`.
const INV_LN2: f32 = std::f32::consts::LOG2_E;
/// Adding and subtracting `1.5 * 2^23` rounds an f32 below 2^22 in magnitude to the
/// nearest integer (ties to even), which then sits in the sum's low bits.
const ROUNDER: f32 = 12_582_912.0;
/// `|t|` is taken no further than this: `tanh(10)` is 1 in f32 (it lies within 5 10^-9
/// of 1, closer than the half unit of 3 10^-8 below it), and `2^k` stays well inside
/// the f32 range.
const FAR: f32 = 10.0;

/// `1 / j!` for `j = 2..=8`, highest first (Horner's order).
const INVERSE_FACTORIALS: [f32; 7] = [
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    1.0 / 2.0,
];

/// `tanh(t)` in f32 (see the module docs for how close), NaN for NaN.
#[inline(always)]
pub(crate) fn tanh(t: f32) -> f32 {
    let u = 2.0 * t.abs().min(FAR);
    let shifted = u * INV_LN2 + ROUNDER;
    let k = shifted - ROUNDER;
    let r = (u - k * LN2_HI) - k * LN2_LO;
    let mut p = INVERSE_FACTORIALS[0];
    for c in &INVERSE_FACTORIALS[1..] {
        p = p.mul_add(r, *c);
    }
    // expm1(r) = r + r^2 p(r).
    let em1 = (r * r).mul_add(p, r);
    // 2^k from the integer in the low bits of `shifted` (0 <= k <= 29).
    let two_k = f32::from_bits((shifted.to_bits().wrapping_sub(ROUNDER.to_bits()) + 127) << 23);
    // expm1(u) = 2^k expm1(r) + (2^k - 1): one rounding (k = 0 leaves expm1(r)).
    let e = two_k.mul_add(em1, two_k - 1.0);
    let y = (e / (e + 2.0)).copysign(t);
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

    /// The error of `got` against the exact `want`, in units in the last place of the
    /// f32 nearest `want` (the unit below 1 at 1).
    fn error_ulps(got: f32, want: f64) -> f64 {
        let near = want as f32;
        let unit = if near == 1.0 {
            2f64.powi(-24)
        } else {
            f64::from(near.next_up()) - f64::from(near)
        };
        (f64::from(got) - want).abs() / unit
    }

    #[test]
    fn the_split_of_ln_2_is_exact_where_it_must_be() {
        assert_eq!(LN2_HI.to_bits() & 0xff, 0);
        let sum = f64::from(LN2_HI) + f64::from(LN2_LO);
        assert!((sum - std::f64::consts::LN_2).abs() < 1e-13);
    }

    #[test]
    fn it_is_within_its_bound_of_tanh_over_the_range_the_knee_sees() {
        // From the subnormals to past the point where tanh is 1 in f32; every 257th
        // value (the bound was found over every value).
        let (mut rounded, mut all) = (0u32, 0u32);
        for t in sweep(f32::from_bits(1), 12.0, 257) {
            let want = f64::from(t).tanh();
            let got = tanh(t);
            assert!(error_ulps(got, want) <= 2.42, "t {t}: {got} against {want}");
            assert!(ulps(got, want as f32) <= 2, "t {t}: {got} against {want}");
            rounded += u32::from(got == want as f32);
            all += 1;
            assert_eq!(tanh(-t).to_bits(), (-got).to_bits());
        }
        assert!(
            f64::from(rounded) > 0.9 * f64::from(all),
            "{rounded} of {all}"
        );
    }

    #[test]
    fn ends_and_special_values() {
        assert_eq!(tanh(0.0).to_bits(), 0f32.to_bits());
        assert_eq!(tanh(-0.0).to_bits(), (-0f32).to_bits());
        assert_eq!(tanh(f32::INFINITY), 1.0);
        assert_eq!(tanh(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh(9.5), 1.0);
        assert_eq!(tanh(FAR), 1.0);
        assert_eq!(tanh(f32::MAX), 1.0);
        assert!(tanh(f32::NAN).is_nan());
        let tiny = f32::from_bits(1);
        assert_eq!(tanh(tiny), tiny);
        // An odd function that grows with t, but for steps back of at most 2 ulps (the
        // rounding of its last steps; found over every value).
        let mut last = 0f32;
        for t in sweep(1e-6, 10.0, 4_099) {
            let y = tanh(t);
            assert!(y <= 1.0 && (y >= last || ulps(y, last) <= 2), "t {t}");
            last = last.max(y);
        }
    }
}
