//! Error bars: a program's error figures under every member of its profile's
//! uncertainty ensemble ([`crate::verify::ensemble`]) that still reproduces the
//! measurements, reduced to the range of each figure. The members run on the same chip
//! and run seeds as the nominal check, so the ranges show what the open parameters
//! change, not seed-to-seed scatter.

use super::check::{self, ProfileTestbed, Target};
use crate::isa::{Program, Wiring};
use crate::sim::capture::GreyImage;
use crate::verify::ensemble::{self, Member, UncertaintyError};
use serde::Serialize;

/// The range of each total-error figure of one kernel over the accepted members.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct KernelRange {
    /// Total RMSE, lowest and highest.
    pub(crate) rmse: [f64; 2],
    /// Total mean bias, lowest and highest.
    pub(crate) bias: [f64; 2],
    /// The part of the spread that the register range alone gives: the same over the
    /// nominal profile and the members that move only the saturation parameters.
    pub(crate) saturation: FigureRange,
}

/// Lowest and highest total RMSE and bias over some members.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct FigureRange {
    /// Total RMSE, lowest and highest.
    pub(crate) rmse: [f64; 2],
    /// Total mean bias, lowest and highest.
    pub(crate) bias: [f64; 2],
}

impl FigureRange {
    fn of(r: f64, b: f64) -> FigureRange {
        FigureRange {
            rmse: [r, r],
            bias: [b, b],
        }
    }

    fn widen(self, r: f64, b: f64) -> FigureRange {
        FigureRange {
            rmse: [self.rmse[0].min(r), self.rmse[1].max(r)],
            bias: [self.bias[0].min(b), self.bias[1].max(b)],
        }
    }
}

/// The ensemble and the ranges it gives.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Ranges {
    /// Every member drawn, accepted or not (the nominal profile first).
    pub(crate) members: Vec<Member>,
    /// Per kernel (in target order), the range over the accepted members, the nominal
    /// profile included.
    pub(crate) kernels: Vec<KernelRange>,
}

impl Ranges {
    /// How many members reproduce the measurements.
    pub(crate) fn accepted(&self) -> usize {
        self.members.iter().filter(|m| m.rejected.is_none()).count()
    }
}

/// Why the ranges could not be measured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// The profile cannot give an ensemble.
    #[error(transparent)]
    Ensemble(#[from] UncertaintyError),
    /// The program stopped while running.
    #[error(transparent)]
    Run(#[from] crate::sim::run::RunError),
}

/// Runs `program` on `images` under every accepted member of `testbed`'s profile's
/// ensemble (chip and run seeds of `testbed`, `runs` run seeds) and returns the range
/// of each kernel's total RMSE and bias (first run, as the nominal check reports).
/// The nominal profile is always part of the range, whether or not it passes.
pub(crate) fn ranges(
    program: &Program,
    wiring: Wiring,
    targets: &[Target],
    images: &[GreyImage],
    testbed: &ProfileTestbed,
    runs: u32,
) -> Result<Ranges, RangeError> {
    let members = ensemble::ensemble(&testbed.profile)?;
    let kept: Vec<&Member> = members
        .iter()
        .enumerate()
        .filter(|(i, m)| *i == 0 || m.rejected.is_none())
        .map(|(_, m)| m)
        .collect();
    // Members side by side (each run of one is serial when `runs` is 1); the reduction
    // below is order-independent, so the ranges do not depend on the thread count.
    let measured = crate::sim::batch::frames(kept.len(), |i| {
        let bed = ProfileTestbed {
            profile: kept[i].profile.clone(),
            chip_seed: testbed.chip_seed,
            seed: testbed.seed,
        };
        check::measure(program, wiring, targets, images, &bed, runs)
    })?;
    let mut all: Vec<Option<FigureRange>> = vec![None; targets.len()];
    let mut saturation = all.clone();
    for (m, member) in measured.iter().zip(&kept) {
        let only_saturation = member.moves_only_saturation();
        for (i, k) in m.kernels.iter().enumerate().take(targets.len()) {
            let (r, b) = (k.total.rmse, k.total.bias);
            let widen =
                |x: Option<FigureRange>| Some(x.map_or(FigureRange::of(r, b), |x| x.widen(r, b)));
            all[i] = widen(all[i]);
            if only_saturation {
                saturation[i] = widen(saturation[i]);
            }
        }
    }
    let kernels = all
        .into_iter()
        .zip(saturation)
        .filter_map(|(a, s)| {
            let a = a?;
            Some(KernelRange {
                rmse: a.rmse,
                bias: a.bias,
                saturation: s?,
            })
        })
        .collect();
    Ok(Ranges { members, kernels })
}
