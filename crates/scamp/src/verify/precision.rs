//! Precision loss: a program proven exact in rational arithmetic can still lose its
//! result in the simulator's 32-bit floats (a value multiplied by 2^40 and back keeps
//! none of its low bits; one halved 160 times underflows to 0). Such a program is
//! refused by name instead of its float error being reported as analogue error.

use super::check::{self, ProfileTestbed, Target};
use super::metrics::ErrorFigures;
use crate::isa::{Program, Reg, Wiring};
use crate::sim::capture::GreyImage;
use crate::sim::run::RunError;

/// Largest error under `ideal` still taken as rounding, relative to the largest
/// magnitude of the exact result (at least 1): a float keeps 24 bits, and even a few
/// thousand roundings of values near the output's size stay far below 2^-10 of it.
pub(crate) const ROUNDING_SHARE: f64 = 1.0 / 1024.0;

/// An output the float simulation does not compute although the proof holds.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "precision loss in {out}: under `ideal` the 32-bit float simulation differs from the \
     proven kernel by RMSE {rmse:.4} (max {max:.4}), beyond rounding (at most {tolerance:.4}); \
     intermediate values grow too large or too small for a float to keep the result \
     (e.g. multiplied far up and back down, or halved below 2^-149)"
)]
pub(crate) struct PrecisionLoss {
    /// The output register.
    pub(crate) out: Reg,
    /// RMSE of the ideal simulation against the proven (approximated) kernel.
    pub(crate) rmse: f64,
    /// Largest absolute difference.
    pub(crate) max: f64,
    /// The rounding allowance it exceeds.
    pub(crate) tolerance: f64,
}

/// Runs `program` once under `ideal` on `frame` (one image per input plane,
/// `check::frame`) and compares each target's register with the exact result of its
/// approximated kernel, away from the border the program's neighbour reads reach.
/// `Ok(Err(..))` names the first output beyond rounding.
pub(crate) fn check_precision(
    program: &Program,
    wiring: Wiring,
    targets: &[Target],
    frame: &[&GreyImage],
) -> Result<Result<(), PrecisionLoss>, RunError> {
    let Wiring { general, .. } = wiring;
    let testbed = ProfileTestbed::ideal();
    let (outs, _) = check::simulate(program, wiring, targets, frame, &testbed, 0)?;
    let reach = program.edge_reach(general);
    let xs = check::frame_values(frame);
    for (t, got) in targets.iter().zip(&outs) {
        let border = match t.out {
            Reg::Gen(i) => reach.get(usize::from(i)).copied().unwrap_or(0),
            _ => 0,
        };
        let want = t.approx_on(&xs);
        let f = ErrorFigures::between(got, &want, border);
        let peak = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let tolerance = ROUNDING_SHARE * peak;
        // NaN (an overflow to infinity and back) is a loss too.
        if f.rmse.is_nan() || f.max.is_nan() || f.max > tolerance {
            return Ok(Err(PrecisionLoss {
                out: t.out,
                rmse: f.rmse,
                max: f.max,
                tolerance,
            }));
        }
    }
    Ok(Ok(()))
}
