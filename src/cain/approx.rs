//! Approximating kernel weights by multiples of 1/2^d.

use super::goal::{Goal, Term};
use crate::verify::convolution::centre_of;

/// A kernel's weights approximated by integers over 2^depth.
#[derive(Clone, Debug, PartialEq)]
pub struct Approx {
    /// The exponent d: every weight is `weights[i][j] / 2^d`.
    pub depth: u32,
    /// Integer weights (rows north to south, columns west to east).
    pub weights: Vec<Vec<i64>>,
    /// Summed absolute difference from the exact weights (scale included).
    pub error: f64,
}

/// Largest integer weight accepted after scaling (keeps goals small and exact).
pub const MAX_WEIGHT: f64 = 1_048_576.0;

/// Why a kernel cannot be approximated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("weight too large: |weight * scale * 2^{depth}| exceeds 2^20")]
pub struct ApproxError {
    /// The depth at which the overflow happened.
    pub depth: u32,
}

fn at_depth(weights: &[Vec<f64>], scale: f64, d: u32) -> Result<Approx, ApproxError> {
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
    Ok(Approx {
        depth: d,
        weights: q,
        error,
    })
}

/// Multiplies each weight (with the scale) by 2^d and rounds; returns the smallest
/// `d <= max_depth` whose summed absolute error is at most `max_error`, else `max_depth`.
pub fn approximate(
    weights: &[Vec<f64>],
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

/// Largest atom count per offset the search works with (sums stay far from overflow).
pub const MAX_COUNT: i64 = 1 << 24;

/// The goal of an approximated kernel in units of 1/2^`depth` (depth >= its own);
/// `None` if a count would exceed [`MAX_COUNT`].
pub fn goal_of(a: &Approx, depth: u32) -> Option<Goal> {
    let h = a.weights.len();
    let w = a.weights.first().map_or(0, Vec::len);
    let (ci, cj) = centre_of(h, w);
    let k = 1i64 << (depth.saturating_sub(a.depth)).min(40);
    let mut terms = Vec::new();
    for (i, row) in a.weights.iter().enumerate() {
        for (j, &q) in row.iter().enumerate() {
            if q != 0 {
                let n = q.checked_mul(k).filter(|n| n.abs() <= MAX_COUNT)?;
                terms.push(Term {
                    r: (i as i64 - ci as i64) as i8,
                    c: (j as i64 - cj as i64) as i8,
                    n: n as i32,
                });
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
}
