//! Rescaling kernels whose outputs cannot fit the register range (`compile --fit`, the
//! spec key `fit: true`).
//!
//! A kernel whose exact output reaches beyond the saturation limit clips whatever the
//! program does. Fitting divides its scale by the smallest power of two that brings the
//! output within the limit: the approximated integer weights stay the same, one more
//! halving per factor of two, so the result is exactly the original one scaled and no
//! approximation error is added. That is at most a factor two below the largest scale
//! that fits (any other scale would change the weights the program computes). The scale
//! used is reported so that a user can fold it into the next layer's weights or
//! threshold.

use crate::cain::KernelReport;
use serde::Serialize;

/// What fitting did to one kernel.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Fitted {
    /// The spec's scale.
    pub from: f64,
    /// The scale the program computes: `from / 2^halvings`.
    pub to: f64,
    /// The extra halvings.
    pub halvings: u32,
    /// The largest magnitude the rescaled output reaches.
    pub output: f64,
}

/// Fits every kernel of `kernels` whose output magnitude (`outputs`, updated in place)
/// exceeds `limit`; `scales` are the spec's scales. What was done is recorded in each
/// kernel's [`KernelReport::fitted`].
pub(crate) fn fit(kernels: &mut [KernelReport], outputs: &mut [f64], scales: &[f64], limit: f64) {
    for ((k, m), &scale) in kernels.iter_mut().zip(outputs.iter_mut()).zip(scales) {
        k.fitted = fitted(k, m, scale, limit);
    }
}

/// Fits one kernel (see [`fit`]).
fn fitted(k: &mut KernelReport, m: &mut f64, scale: f64, limit: f64) -> Option<Fitted> {
    if *m <= limit || limit <= 0.0 {
        return None;
    }
    let mut halvings = 0u32;
    while *m > limit && halvings < 64 {
        *m /= 2.0;
        halvings += 1;
    }
    k.approx.depth += halvings;
    k.approx.error /= 2f64.powi(halvings as i32);
    Some(Fitted {
        from: scale,
        to: scale / 2f64.powi(halvings as i32),
        halvings,
        output: *m,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::spec::approx::Approx;
    use crate::isa::Reg;

    #[test]
    fn outputs_beyond_the_limit_are_halved_until_they_fit() {
        let k = |w: i64| KernelReport {
            out: Reg::Gen(0),
            approx: Approx {
                depth: 2,
                weights: vec![vec![w]],
                other_planes: Vec::new(),
                error: 0.5,
            },
            fitted: None,
        };
        let mut kernels = vec![k(3), k(1)];
        // AnalogNet2's C reaches 351.25: two halvings bring it to 87.8.
        let mut outputs = vec![351.25, 100.0];
        fit(&mut kernels, &mut outputs, &[0.25, 0.25], 128.0);
        let first = kernels[0].fitted.expect("rescaled");
        assert_eq!(
            (first.halvings, first.to, first.output),
            (2, 0.0625, 87.8125)
        );
        assert_eq!(kernels[0].approx.depth, 4);
        assert_eq!(kernels[0].approx.weights, vec![vec![3]]);
        assert_eq!(kernels[0].approx.error, 0.125);
        // The second fits already: untouched.
        assert_eq!(kernels[1].fitted, None);
        assert_eq!((kernels[1].approx.depth, outputs[1]), (2, 100.0));
    }
}
