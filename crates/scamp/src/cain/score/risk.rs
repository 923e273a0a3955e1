//! Saturation risk of a plan on textured images.
//!
//! The static range check bounds a value for the worst image (every pixel at the
//! extreme its coefficient favours), and the error predictor models the input as
//! locally constant, where a value is its coefficient sum times the local level. Real
//! images lie in between: a level plus texture and edges. A value whose coefficients
//! mostly cancel is safe on flat regions but clips on a strong edge, and a value that
//! sits near the limit on a flat region clips once noise or texture pushes it over.
//! Here the pixels around a PE are modelled as a local level `m` (uniform over the input
//! range) plus independent deviations of standard deviation [`ClipModel::spread`], so
//! a value `sum c_o x(p + o)` is normal with mean `m sum c_o` and variance
//! `spread^2 sum c_o^2`. Its expected squared excess over the limit is the risk; the
//! error objective adds the risk of every value a plan writes (outputs that cannot fit
//! and are not read again clip whatever the program does, and are left out).

use crate::cain::moves::goal::Goal;
use crate::cain::moves::step::Step;
use crate::verify::range::InputRange;

/// The texture model and the limit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ClipModel {
    /// Common depth of the goals (a goal's counts are over `2^depth`).
    pub(crate) depth: u32,
    /// Lowest input pixel.
    pub(crate) lo: f64,
    /// Highest input pixel.
    pub(crate) hi: f64,
    /// Largest magnitude a register holds before it clips.
    pub(crate) limit: f64,
    /// Standard deviation of a pixel around its local level.
    pub(crate) spread: f64,
    /// The largest magnitude an output reaches on flat regions (0 if none is given).
    /// Where an output cannot fit, it clips whatever the program does; values up to its
    /// magnitude are then common to every candidate and not refused by
    /// [`ClipModel::flat_fits`] (their risk still counts in the score).
    pub(crate) unavoidable: f64,
}

/// Default texture spread: three eighths of the full-range capture (256 levels). Test
/// images include hard-edged patterns and strong texture; a spread of 32 to 64 let
/// AnalogNet2's error objective pick a program whose B output lost 4 RMSE to a clipped
/// intermediate, 96 and above did not.
pub(crate) const DEFAULT_SPREAD: f64 = 96.0;

/// Levels sampled over the input range.
const SAMPLES: usize = 16;

impl ClipModel {
    /// The model for goals over `2^depth`, inputs in `range` and the saturation
    /// `limit`, at the [`DEFAULT_SPREAD`], with the outputs `finals`' largest flat
    /// magnitude as [`ClipModel::unavoidable`].
    pub(crate) fn new(depth: u32, range: InputRange, limit: f64, finals: &[Goal]) -> ClipModel {
        let m = ClipModel {
            depth,
            lo: range.lo,
            hi: range.hi,
            limit,
            spread: DEFAULT_SPREAD,
            unavoidable: 0.0,
        };
        let unavoidable = finals
            .iter()
            .map(|g| m.flat_magnitude(g))
            .fold(0.0, f64::max);
        ClipModel { unavoidable, ..m }
    }

    /// Expected squared excess over the limit of the value `g` holds.
    pub(crate) fn goal_risk(&self, g: &Goal) -> f64 {
        let unit = 2f64.powi(-(self.depth.min(60) as i32));
        let (mut sum, mut sq, mut l1) = (0.0, 0.0, 0.0);
        for t in &g.0 {
            let c = f64::from(t.n) * unit;
            sum += c;
            sq += c * c;
            l1 += c.abs();
        }
        let bound = self.lo.abs().max(self.hi.abs());
        // A value that cannot leave the range at all has no risk (the common case:
        // skip the sampling).
        if l1 * bound <= self.limit {
            return 0.0;
        }
        let sd = self.spread * sq.sqrt();
        let mut total = 0.0;
        for i in 0..SAMPLES {
            let m = self.lo + (self.hi - self.lo) * (i as f64 + 0.5) / SAMPLES as f64;
            let mean = sum * m;
            total += excess2(mean - self.limit, sd) + excess2(-mean - self.limit, sd);
        }
        total / SAMPLES as f64
    }

    /// Whether `g` stays within the limit on flat regions at every level of the input
    /// range, or within the largest output's own flat magnitude where that is beyond
    /// the limit ([`ClipModel::unavoidable`]).
    pub(crate) fn flat_fits(&self, g: &Goal) -> bool {
        self.flat_magnitude(g) <= self.limit.max(self.unavoidable) * (1.0 + 1e-12)
    }

    /// The largest magnitude `g` reaches on flat regions (its coefficient sum times the
    /// input bound).
    pub(crate) fn flat_magnitude(&self, g: &Goal) -> f64 {
        let bound = self.lo.abs().max(self.hi.abs());
        (g.sum() as f64 * 2f64.powi(-(self.depth.min(60) as i32))).abs() * bound
    }

    /// Whether `g` stays within `k` times the limit for every input in the range.
    pub(crate) fn peak_within(&self, g: &Goal, k: f64) -> bool {
        let bound = self.lo.abs().max(self.hi.abs());
        let l1 = g.atoms() as f64 * 2f64.powi(-(self.depth.min(60) as i32));
        l1 * bound <= k * self.limit * (1.0 + 1e-12)
    }

    /// Whether one instruction of at most `sources` sources can make `g` from values
    /// within `k` times the limit for any input and within the limit on flat regions
    /// (what the error search's first half holds every value but the outputs to).
    pub(crate) fn reachable(&self, g: &Goal, sources: usize, k: f64) -> bool {
        let n = sources as f64;
        self.peak_within(g, n * k) && self.flat_magnitude(g) <= n * self.limit * (1.0 + 1e-12)
    }

    /// Summed risk of the values `steps` write, leaving out final goals (`finals`) that
    /// no later step reads.
    pub(crate) fn plan_risk(&self, steps: &[Step], finals: &[Goal]) -> f64 {
        let mut total = 0.0;
        for (i, s) in steps.iter().enumerate() {
            for g in &s.outs {
                let read_later = steps[i + 1..].iter().any(|t| t.ins.contains(g));
                if finals.contains(g) && !read_later {
                    continue;
                }
                total += self.goal_risk(g);
            }
        }
        total
    }
}

/// `E[max(Y, 0)^2]` for `Y` normal with mean `mu` and standard deviation `sd`.
fn excess2(mu: f64, sd: f64) -> f64 {
    if sd <= 0.0 {
        return mu.max(0.0).powi(2);
    }
    let a = mu / sd;
    let cdf = 0.5 * erfc(-a / std::f64::consts::SQRT_2);
    let pdf = (-0.5 * a * a).exp() / (2.0 * std::f64::consts::PI).sqrt();
    ((mu * mu + sd * sd) * cdf + mu * sd * pdf).max(0.0)
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, relative error below
/// 1.2e-7: ample for a ranking).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::fixtures::grid;
    use crate::cain::moves::step::Kind;

    fn model(spread: f64) -> ClipModel {
        ClipModel {
            depth: 2,
            lo: -128.0,
            hi: 127.0,
            limit: 128.0,
            spread,
            unavoidable: 0.0,
        }
    }

    #[test]
    fn excess_matches_its_limits() {
        // Far below the limit: nothing; far above: the squared distance plus variance.
        assert!(excess2(-50.0, 1.0) < 1e-12);
        assert!((excess2(50.0, 1.0) - 2501.0).abs() < 1e-6);
        // At the limit: half the variance.
        assert!((excess2(0.0, 2.0) - 2.0).abs() < 1e-6);
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-6);
    }

    #[test]
    fn values_in_range_are_free_and_cancelling_ones_risky_on_texture() {
        let m = model(32.0);
        // Half the input: never beyond the limit.
        assert_eq!(m.goal_risk(&grid(&[&[2]])), 0.0);
        // Four quarters summing to zero: 2 x 128 at worst, zero on flat images.
        let edge = grid(&[&[4, -4], &[4, -4]]);
        assert_eq!(model(0.0).goal_risk(&edge), 0.0);
        assert!(m.goal_risk(&edge) > 0.0);
        // Larger cancelling values are riskier.
        let big = grid(&[&[8, -8], &[8, -8]]);
        assert!(m.goal_risk(&big) > m.goal_risk(&edge));
        // An unread final output is left out; read again, it counts.
        let x = Goal::single(0, 0, 4);
        let make = Step {
            kind: Kind::Add2,
            outs: vec![big.clone()],
            ins: vec![x.clone(), x.clone()],
        };
        let finals = [big.clone()];
        assert_eq!(m.plan_risk(std::slice::from_ref(&make), &finals), 0.0);
        let read = Step {
            kind: Kind::Neg,
            outs: vec![big.neg()],
            ins: vec![big.clone()],
        };
        let r = m.plan_risk(&[make, read], &finals);
        assert!(r > 0.0 && (r - 2.0 * m.goal_risk(&big)).abs() < 1e-9);
    }

    #[test]
    fn flat_fit_is_about_the_coefficient_sum() {
        let m = model(32.0);
        // Sum 1 (the input itself): at the limit, fits; sum 5/4 does not.
        assert!(m.flat_fits(&grid(&[&[4]])));
        assert!(!m.flat_fits(&grid(&[&[4, 1]])));
        // Large but cancelling: fits on flat regions.
        assert!(m.flat_fits(&grid(&[&[8, -8], &[8, -8]])));
        assert!(!m.flat_fits(&grid(&[&[-4, -4], &[1, 0]])));
        // Static peaks: 8 quarters reach 2 x 128.
        let big = grid(&[&[4, -4], &[-2, 2]]);
        assert!(m.peak_within(&big, 3.0) && !m.peak_within(&big, 2.9));
        // Two sources within 1.5 x the limit reach 3 x it; flat sums up to 2 x it.
        assert!(m.reachable(&big, 2, 1.5) && !m.reachable(&big, 2, 1.4));
        assert!(!m.reachable(&grid(&[&[4, 4, 1]]), 2, 10.0));
        assert!(m.peak_within(&grid(&[&[4]]), 1.0));
    }

    #[test]
    fn flat_fit_allows_what_an_unfitting_output_reaches_anyway() {
        // An output of flat sum 2 (twice the input) cannot fit: values up to it pass,
        // values beyond it do not.
        let out = grid(&[&[4, 4]]);
        let m = ClipModel {
            unavoidable: model(32.0).flat_magnitude(&out),
            ..model(32.0)
        };
        assert_eq!(m.flat_magnitude(&out), 256.0);
        assert!(!model(32.0).flat_fits(&out));
        assert!(m.flat_fits(&out) && m.flat_fits(&grid(&[&[4, 2]])));
        assert!(!m.flat_fits(&grid(&[&[4, 4, 1]])));
    }
}
