//! The error-budget search: compile a spec at every approximation depth, measure each
//! program on test images and keep the shortest one whose total error meets a budget.

use crate::cain::{approximate_spec, check_targets, compile, Approx, CompileError, CompileOptions};
use crate::cain::{Compiled, KernelReport, Spec, Stats};
use crate::isa::Program;
use crate::sim::capture::GreyImage;
use crate::verify::check::{self, Testbed};
use serde::Serialize;

/// One depth tried.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BudgetRow {
    /// Approximation depth.
    pub(crate) depth: u32,
    /// Instructions of the program compiled at this depth.
    pub(crate) instructions: usize,
    /// Its cycles.
    pub(crate) cycles: u64,
    /// Worst total RMSE over the kernels (mean over runs).
    pub(crate) total_rmse: f64,
    /// Whether it meets the budget.
    pub(crate) meets: bool,
}

/// What the budget search settled on.
#[derive(Clone, Debug)]
pub struct BudgetChoice {
    /// The shortest program meeting the budget, else the one with the least error.
    pub(crate) program: Program,
    /// Its kernels.
    pub(crate) kernels: Vec<KernelReport>,
    /// Every depth compiled and measured.
    pub(crate) rows: Vec<BudgetRow>,
    /// Depths that could not be compiled, with the reason.
    pub(crate) skipped: Vec<(u32, CompileError)>,
    /// Whether `program` meets the budget.
    pub(crate) met: bool,
}

/// Why the budget search produced nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// A program stopped while running on the images.
    #[error(transparent)]
    Run(#[from] crate::sim::run::RunError),
    /// No depth compiled.
    #[error("no program could be compiled at any depth up to {0}")]
    Nothing(u32),
}

/// An approximated kernel in lowest terms: (weights, depth) with the depth as small as
/// the weights allow, so equal fractions compare equal.
pub(crate) fn reduced(a: &Approx) -> (Vec<Vec<i64>>, u32) {
    let mut w = a.weights.clone();
    let mut d = a.depth;
    while d > 0 && w.iter().flatten().all(|q| q % 2 == 0) {
        w.iter_mut().flatten().for_each(|q| *q /= 2);
        d -= 1;
    }
    (w, d)
}

/// Tries depths 0..=max_depth of `spec` (exact approximation at each), compiles each
/// distinct set of kernels, measures it on `images` over `runs` run seeds and picks the
/// shortest program whose worst total RMSE is at most `limit`.
pub(crate) fn budget_search(
    spec: &Spec,
    opts: &CompileOptions,
    limit: f64,
    images: &[GreyImage],
    testbed: &dyn Testbed,
    runs: u32,
) -> Result<BudgetChoice, BudgetError> {
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    // The shortest program that meets the budget, else the one with the least error.
    let mut best: Option<(Compiled, f64)> = None;
    let mut closest: Option<(Compiled, f64)> = None;
    let mut seen = Vec::new();
    for d in 0..=spec.approximation.max_depth {
        let mut s = spec.clone();
        s.approximation.max_depth = d;
        s.approximation.max_error = 0.0;
        // Each depth is measured, not required to be exact.
        s.approximation.accept = true;
        let kernels = match approximate_spec(&s) {
            Ok(k) => k,
            Err(e) => {
                skipped.push((d, e));
                continue;
            }
        };
        let depth = kernels.iter().map(|k| k.approx.depth).max().unwrap_or(0);
        // A deeper approximation can land on the same fractions (1/9 is 1/8 at d = 3,
        // 4 and 5): compile and measure each distinct set of kernels once.
        let fractions: Vec<_> = kernels.iter().map(|k| reduced(&k.approx)).collect();
        if seen.contains(&fractions) {
            continue;
        }
        seen.push(fractions);
        let c = match compile(&s, opts, &Stats::default()) {
            Ok(c) => c,
            Err(e) => {
                skipped.push((d, e));
                continue;
            }
        };
        let targets = check_targets(spec, &c.kernels);
        let m = check::measure(&c.program, spec.wiring(), &targets, images, testbed, runs)?;
        let worst = m
            .kernels
            .iter()
            .map(|k| k.total_runs.rmse.mean)
            .fold(0.0f64, f64::max);
        let meets = worst <= limit;
        rows.push(BudgetRow {
            depth,
            instructions: c.program.instructions(),
            cycles: c.program.cycles(),
            total_rmse: worst,
            meets,
        });
        let better = |b: &(Compiled, f64)| {
            (c.program.instructions(), worst) < (b.0.program.instructions(), b.1)
        };
        if meets && best.as_ref().is_none_or(better) {
            best = Some((c, worst));
        } else if !meets && closest.as_ref().is_none_or(|b| worst < b.1) {
            closest = Some((c, worst));
        }
    }
    let met = best.is_some();
    let (c, _) = best
        .or(closest)
        .ok_or(BudgetError::Nothing(spec.approximation.max_depth))?;
    Ok(BudgetChoice {
        program: c.program,
        kernels: c.kernels,
        rows,
        skipped,
        met,
    })
}
