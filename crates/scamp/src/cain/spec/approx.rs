//! Approximating kernel weights by multiples of 1/2^d.

use crate::cain::moves::goal::{Goal, Term};
use crate::verify::convolution::centre_of;

/// A kernel's weights approximated by integers over 2^depth.
#[derive(Clone, Debug, PartialEq)]
pub struct Approx {
    /// The exponent d: every weight is `weights[i][j] / 2^d`.
    pub depth: u32,
    /// Integer weights (rows north to south, columns west to east) on the first input.
    pub(crate) weights: Vec<Vec<i64>>,
    /// Integer weights on each further input, in the order of the spec's `inputs`
    /// (empty for a kernel of one input).
    pub(crate) other_planes: Vec<Vec<Vec<i64>>>,
    /// Summed absolute difference from the exact weights (scale included).
    pub error: f64,
}

impl Approx {
    /// Every plane's integer weights, the first input's first.
    pub(crate) fn planes(&self) -> Vec<&Vec<Vec<i64>>> {
        std::iter::once(&self.weights)
            .chain(&self.other_planes)
            .collect()
    }

    /// The integer weights as reports show them: `[kh][kw]` for a kernel of one input,
    /// `[in][kh][kw]` for one of several.
    pub fn shown(&self) -> ShownWeights {
        if self.other_planes.is_empty() {
            ShownWeights::Plane(self.weights.clone())
        } else {
            ShownWeights::Planes(self.planes().into_iter().cloned().collect())
        }
    }
}

/// A kernel's integer weights in a report: one plane (`[kh][kw]`) for a kernel of one
/// input, so that single-input reports keep their shape, or one plane per input
/// (`[in][kh][kw]`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum ShownWeights {
    /// The weights of a kernel of one input, rows north to south.
    Plane(Vec<Vec<i64>>),
    /// Per input, in the order of the spec's `inputs`, its plane of weights.
    Planes(Vec<Vec<Vec<i64>>>),
}

impl ShownWeights {
    /// Every plane, the first input's first (one for a kernel of one input).
    pub fn planes(&self) -> Vec<&Vec<Vec<i64>>> {
        match self {
            ShownWeights::Plane(p) => vec![p],
            ShownWeights::Planes(ps) => ps.iter().collect(),
        }
    }
}

/// Largest integer weight accepted after scaling (keeps goals small and exact).
pub(crate) const MAX_WEIGHT: f64 = 1_048_576.0;

/// Why a kernel cannot be approximated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("weight too large: |weight * scale * 2^{depth}| exceeds 2^20")]
pub struct ApproxError {
    /// The depth at which the overflow happened.
    pub(crate) depth: u32,
}

/// One plane of weights rounded at depth `d`, with its summed absolute error.
fn plane_at_depth(
    weights: &[Vec<f64>],
    scale: f64,
    d: u32,
) -> Result<(Vec<Vec<i64>>, f64), ApproxError> {
    let f = scale * f64::from(1u32 << d.min(30));
    let mut error = 0.0;
    let mut q = Vec::with_capacity(weights.len());
    for row in weights {
        let mut qr = Vec::with_capacity(row.len());
        for &w in row {
            let x = w * f;
            if !x.is_finite() || x.abs() > MAX_WEIGHT {
                return Err(ApproxError { depth: d });
            }
            let n = x.round();
            error += ((x - n) / f64::from(1u32 << d.min(30))).abs();
            qr.push(n as i64);
        }
        q.push(qr);
    }
    Ok((q, error))
}

/// Every plane rounded at depth `d`: one depth for the whole kernel, the error summed
/// over all its weights.
fn at_depth(planes: &[&[Vec<f64>]], scale: f64, d: u32) -> Result<Approx, ApproxError> {
    let mut error = 0.0;
    let mut q = Vec::with_capacity(planes.len());
    for p in planes {
        let (w, e) = plane_at_depth(p, scale, d)?;
        error += e;
        q.push(w);
    }
    let mut q = q.into_iter();
    Ok(Approx {
        depth: d,
        weights: q.next().unwrap_or_default(),
        other_planes: q.collect(),
        error,
    })
}

/// Multiplies each weight (with the scale) by 2^d and rounds; returns the smallest
/// `d <= max_depth` whose summed absolute error is at most `max_error`, else `max_depth`
/// (one plane: the tests' shorthand for [`approximate_planes`]).
#[cfg(test)]
pub(crate) fn approximate(
    weights: &[Vec<f64>],
    scale: f64,
    max_depth: u32,
    max_error: f64,
) -> Result<Approx, ApproxError> {
    approximate_planes(&[weights], scale, max_depth, max_error)
}

/// Multiplies each weight (with the scale) by 2^d and rounds; returns the smallest
/// `d <= max_depth` whose summed absolute error is at most `max_error`, else `max_depth`,
/// for a kernel on several inputs (`planes[z]` the weights on input `z`): one depth for
/// all planes, the error summed over every weight.
pub(crate) fn approximate_planes(
    weights: &[&[Vec<f64>]],
    scale: f64,
    max_depth: u32,
    max_error: f64,
) -> Result<Approx, ApproxError> {
    // A relative slack absorbs the rounding of the error sum itself.
    let tol = max_error + 1e-12;
    for d in 0..max_depth {
        let a = at_depth(weights, scale, d)?;
        if a.error <= tol {
            return Ok(a);
        }
    }
    at_depth(weights, scale, max_depth)
}

/// Deepest approximation a spec may ask for (`approximation.max_depth`).
pub const DEEPEST: u32 = 20;

/// An approximation that misses `max_error` at `max_depth`: the program would compute
/// another kernel than the one asked for, so nothing passes without an explicit accept.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "the approximation at max_depth {max_depth} has error {} (sum of |weight \
     differences|), more than max_error {}; {}; or accept it with \
     --accept-approximation or `approximation: {{accept: true}}` in the spec",
    crate::isa::text::number(*reached),
    crate::isa::text::number(*max_error),
    needed.map_or_else(
        || format!("no depth up to {DEEPEST} meets it: raise approximation.max_error"),
        |d| format!("depth {d} meets it: raise approximation.max_depth to {d}")
    )
)]
pub struct ApproxMiss {
    /// The depth the spec allows.
    pub(crate) max_depth: u32,
    /// The error reached there.
    pub(crate) reached: f64,
    /// The error the spec allows.
    pub(crate) max_error: f64,
    /// The smallest depth (up to [`DEEPEST`]) whose error is within `max_error`.
    pub(crate) needed: Option<u32>,
}

/// The figures are finite (weights and `max_error` are checked when the spec is read),
/// so equality is reflexive.
impl Eq for ApproxMiss {}

/// `Err` when `a`, the approximation at `max_depth`, misses `max_error`, with the
/// smallest depth that would meet it.
pub(crate) fn check_miss(
    weights: &[&[Vec<f64>]],
    scale: f64,
    a: &Approx,
    max_depth: u32,
    max_error: f64,
) -> Result<(), ApproxMiss> {
    if a.error <= max_error + 1e-12 {
        return Ok(());
    }
    let needed = (max_depth + 1..=DEEPEST)
        .find(|&d| at_depth(weights, scale, d).is_ok_and(|b| b.error <= max_error + 1e-12));
    Err(ApproxMiss {
        max_depth,
        reached: a.error,
        max_error,
        needed,
    })
}

/// Largest atom count per offset the search works with (sums stay far from overflow).
pub(crate) const MAX_COUNT: i64 = 1 << 24;

/// The goal of an approximated kernel in units of 1/2^`depth` (depth >= its own);
/// `None` if a count would exceed `MAX_COUNT`.
pub(crate) fn goal_of(a: &Approx, depth: u32) -> Option<Goal> {
    let h = a.weights.len();
    let w = a.weights.first().map_or(0, Vec::len);
    let (ci, cj) = centre_of(h, w);
    let k = 1i64 << (depth.saturating_sub(a.depth)).min(40);
    let mut terms = Vec::new();
    let planes = std::iter::once(&a.weights).chain(&a.other_planes);
    for (z, plane) in planes.enumerate() {
        let z = u8::try_from(z).ok()?;
        for (i, row) in plane.iter().enumerate() {
            for (j, &q) in row.iter().enumerate() {
                if q != 0 {
                    let n = q.checked_mul(k).filter(|n| n.abs() <= MAX_COUNT)?;
                    terms.push(Term {
                        z,
                        r: (i as i64 - ci as i64) as i8,
                        c: (j as i64 - cj as i64) as i8,
                        n: n as i32,
                    });
                }
            }
        }
    }
    Some(Goal::from_terms(terms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_is_exact_at_depth_four() {
        let w = vec![
            vec![1.0, 2.0, 1.0],
            vec![2.0, 4.0, 2.0],
            vec![1.0, 2.0, 1.0],
        ];
        let a = approximate(&w, 1.0 / 16.0, 8, 0.0).unwrap();
        assert_eq!(a.depth, 4);
        assert_eq!(
            a.weights,
            vec![vec![1i64, 2, 1], vec![2, 4, 2], vec![1, 2, 1]]
        );
        assert_eq!(a.error, 0.0);
        let g = goal_of(&a, 5).unwrap();
        assert_eq!(g.get(0, 0), 8);
        assert_eq!(g.get(-1, -1), 2);
    }

    #[test]
    fn inexact_weights_use_max_depth_or_the_bound() {
        let w = vec![vec![1.0; 3]; 3];
        let a = approximate(&w, 1.0 / 9.0, 4, 0.0).unwrap();
        assert_eq!(a.depth, 4);
        assert_eq!(a.weights[0][0], 2); // 16/9 = 1.78 rounds to 2
        ::approx::assert_abs_diff_eq!(a.error, 9.0 * (2.0 / 16.0 - 1.0 / 9.0), epsilon = 1e-12);
        let b = approximate(&w, 1.0 / 9.0, 8, 0.2).unwrap();
        assert_eq!(b.depth, 3); // 8/9 -> 1, error 9 * (1/8 - 1/9) = 0.125
        assert!(approximate(&[vec![1e30]], 1.0, 4, 0.0).is_err());
    }

    #[test]
    fn a_miss_names_the_error_and_the_depth_that_meets_it() {
        // 31x31 box at depth 8: every weight rounds to 0, error 1.
        let w = vec![vec![1.0; 31]; 31];
        let a = approximate(&w, 1.0 / 961.0, 8, 0.0).unwrap();
        let m = check_miss(&[&w], 1.0 / 961.0, &a, 8, 0.0).unwrap_err();
        ::approx::assert_abs_diff_eq!(m.reached, 1.0, epsilon = 1e-9);
        assert_eq!(m.needed, None);
        // 1/9 box within 0.2: depth 3 meets it (error 0.125), depth 2 does not.
        let w = vec![vec![1.0; 3]; 3];
        let a = approximate(&w, 1.0 / 9.0, 2, 0.2).unwrap();
        let m = check_miss(&[&w], 1.0 / 9.0, &a, 2, 0.2).unwrap_err();
        assert_eq!(m.needed, Some(3));
        assert!(m.to_string().contains("depth 3 meets it"), "{m}");
        let a = approximate(&w, 1.0 / 9.0, 3, 0.2).unwrap();
        assert_eq!(check_miss(&[&w], 1.0 / 9.0, &a, 3, 0.2), Ok(()));
    }
}
