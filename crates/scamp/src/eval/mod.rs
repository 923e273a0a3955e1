//! `scamp eval`: what the analogue error does to a small CNN's accuracy on a real
//! dataset (docs/eval.md).
//!
//! A network ([`network`]) is an optional binarised input, one or more on-sensor
//! stages (kernel specs or PyTorch-layout arrays compiled by the embedded generator, or
//! programs proven to compute them), an activation, bias and decision after each (sign
//! or thresholds into digital registers), a readout ([`readout`]: pooled blocks or
//! bins of the binary maps, optionally capped) and a host-side head (softmax or an MLP).
//! Dataset images ([`dataset`], [`idx`]) are tiled many to a frame ([`tiling`]), run
//! through the chip part ([`stage`], [`frames`], [`features`]) under `ideal` and under a
//! noise profile on several chips, and classified by the head ([`head`]); the counts
//! ([`counts`]) make the report ([`report()`]), add up over shards ([`shard`]) and feed
//! the text ([`text`]) and HTML ([`html`]) reports.

pub mod counts;
pub mod dataset;
pub mod evaluate;
pub mod features;
pub mod frames;
pub mod head;
pub mod html;
pub mod idx;
pub mod network;
pub mod plot;
pub mod reach;
pub mod readout;
pub mod report;
pub mod saturation;
pub mod shard;
pub mod stage;
pub mod text;
pub mod tiling;
pub mod uncertainty;

pub use evaluate::{evaluate, Evaluation, Example, Options};
pub use report::{report, Report};

use crate::sim::noise::{profile::ProfileError, Profile};

/// The profile `name` (built-in or a file) with the name the report shows: its own
/// name, else what was given.
pub fn named_profile(name: &str) -> Result<(String, Profile), ProfileError> {
    let p = Profile::load(name)?;
    let shown = if p.name.is_empty() {
        name.to_string()
    } else {
        p.name.clone()
    };
    Ok((shown, p))
}

/// Why an evaluation could not run. Every variant is bad input (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The dataset.
    #[error(transparent)]
    Dataset(#[from] dataset::DatasetError),
    /// The network file or a file it names.
    #[error(transparent)]
    Network(#[from] network::NetworkError),
    /// A stage's program or spec.
    #[error(transparent)]
    Stage(#[from] stage::StageError),
    /// The head's weights.
    #[error(transparent)]
    Head(#[from] head::HeadError),
    /// A frame program stopped (an internal error: the programs are proven).
    #[error("a frame stopped: {0}")]
    Run(#[from] crate::sim::run::RunError),
    /// The caller asked the evaluation to stop ([`crate::cancel`]).
    #[error("interrupted")]
    Cancelled,
    /// Anything else, as a message.
    #[error("{0}")]
    Msg(String),
}

/// [`EvalError::Cancelled`] when a stop was asked for: the frame loops look between
/// chunks of frames.
fn check_cancel() -> Result<(), EvalError> {
    if crate::cancel::requested() {
        Err(EvalError::Cancelled)
    } else {
        Ok(())
    }
}
