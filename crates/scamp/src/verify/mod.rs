//! Proving what a program computes and measuring the error it picks up.
//!
//! Everything here is re-exported flat over private files. The checks' surface is
//! [`ProfileTestbed`], [`Watched`], [`CompareOptions`] and their errors; the proof
//! ([`prove`] of a program against its [`Target`]s), predictions ([`analyse`],
//! [`Predicted`]) and static ranges ([`peak`], [`InputRange`]) are what a user checks
//! a program with; [`CheckTarget`] is a measurement's target. The executors (symbolic
//! execution on machine integers and rationals, several input planes), intervals and
//! the compile-time input model are internals with unit tests in `verify/tests/`.

pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod compare_ranges;
pub(crate) mod convolution;
pub(crate) mod dyadic;
pub(crate) mod ensemble;
pub(crate) mod groups;
pub(crate) mod heatmap;
pub(crate) mod kernels;
pub(crate) mod metrics;
pub(crate) mod plane_stats;
pub(crate) mod planes;
pub(crate) mod precision;
pub(crate) mod predict;
pub(crate) mod proof;
pub(crate) mod range;
pub(crate) mod report;
pub(crate) mod saturation;
pub(crate) mod symbolic;
pub(crate) mod uncertainty;
// Internals re-exported for the unit tests (verify/tests/, cain/tests/) only: the
// executors, intervals, the blocks of a bank and the input model's values.
#[cfg(test)]
pub(crate) use check::input_values;
pub use check::{
    first_run, load_images, named_frame, ImagesError, KernelErrors, Measurement, ProfileTestbed,
    Target as CheckTarget,
};
pub use compare::{adc_step, load_input, CompareError, CompareOptions, DiffMap, Watched};
#[cfg(test)]
pub(crate) use groups::{assign_blocks, kernel_block_ends, measure_groups, split_blocks};
pub use groups::{per_target, EvaluateError, Evaluation, Groups};
pub use heatmap::{colour as heat_colour, save as save_heatmap};
pub(crate) use kernels::prove_kernels;
pub(crate) use kernels::KernelsProofError;
pub use metrics::ErrorFigures;
#[cfg(test)]
pub(crate) use planes::{prove_planes, PlanesTarget};
#[cfg(test)]
pub(crate) use precision::check_precision;
#[cfg(test)]
pub(crate) use predict::InputStats;
pub use predict::Predicted;
pub use proof::{prove, ProofError, Target};
#[cfg(test)]
pub(crate) use range::{coef_f64, interval, peak_planes};
#[cfg(test)]
pub(crate) use symbolic::{coef_int, execute, LinComb};

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) use check::frame_indices;
#[cfg(test)]
pub(crate) use planes::PlanesProofError;
#[cfg(test)]
pub(crate) use predict::{analyse, analyse_planes};
#[cfg(test)]
pub(crate) use predict::{IMAGE_BORDER, IMAGE_LAGS, IMAGE_MEAN, IMAGE_REACH};
#[cfg(test)]
pub(crate) use proof::UnwrittenDependency;
#[cfg(test)]
pub(crate) use range::InputRange;
#[cfg(test)]
pub(crate) use range::{peak, Peak};
#[cfg(test)]
pub(crate) use symbolic::SymbolicCause;
