//! Proving what a program computes and measuring the error it picks up.
//!
//! Everything here is re-exported flat over private files. The checks' surface is
//! [`ProfileTestbed`], [`Watched`], [`CompareOptions`] and their errors; the proofs
//! ([`prove`], [`execute`], [`LinComb`]), predictions ([`analyse`], [`Predicted`]) and
//! static ranges ([`peak`], [`InputRange`]) are also what the integration tests check
//! generated programs with (tests/cain*.rs, tests/predict_images.rs, tests/range.rs);
//! [`Target`] is a proof's target and [`CheckTarget`] a measurement's. The executors'
//! own tests (symbolic execution on machine integers and rationals, several input
//! planes) are unit tests in `verify/tests/`.

pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod compare_ranges;
pub(crate) mod convolution;
pub(crate) mod dyadic;
pub mod ensemble;
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
pub use check::{
    first_run, frame_indices, input_values, load_images, measure, named_frame, FirstRun,
    ImagesError, KernelErrors, Measurement, ProfileTestbed, Target as CheckTarget, Testbed,
};
pub use compare::{
    adc_step, load_input, CompareError, CompareOptions, Comparison, DiffMap, Watched,
};
pub use groups::{
    assign_blocks, kernel_block_ends, measure_groups, per_target, split_blocks, EvaluateError,
    Evaluation, Groups,
};
pub use heatmap::{colour as heat_colour, save as save_heatmap};
pub(crate) use kernels::prove_kernels;
pub use kernels::KernelsProofError;
pub use metrics::ErrorFigures;
pub use planes::{prove_planes, PlanesProofError, PlanesTarget};
pub use precision::check_precision;
pub use predict::{
    analyse, analyse_planes, InputStats, Predicted, IMAGE_BORDER, IMAGE_LAGS, IMAGE_MEAN,
    IMAGE_REACH,
};
pub use proof::{prove, ProofError, Target, UnwrittenDependency};
pub use range::{coef_f64, interval, peak, peak_planes, InputRange, Peak};
pub use report::explain_mismatch;
pub use symbolic::{coef_int, execute, LinComb, SymbolicCause};

#[cfg(test)]
mod tests;
