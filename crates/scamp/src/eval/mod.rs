//! `scamp eval`: what the analogue error does to a small CNN's accuracy on a real
//! dataset (docs/eval.md).
//!
//! A network (`network`) is an optional binarised input, one or more on-sensor
//! stages (kernel specs or PyTorch-layout arrays compiled by the embedded generator, or
//! programs proven to compute them), an activation, bias and decision after each (sign
//! or thresholds into digital registers), a readout (`readout`: pooled blocks or
//! bins of the binary maps, optionally capped) and a host-side head (softmax or an MLP).
//! Dataset images (`dataset`, `idx`) are tiled many to a frame (`tiling`), run
//! through the chip part (`stage`, `frames`, `features`) under `ideal` and under a
//! noise profile on several chips, and classified by the head (`head`); the counts
//! (`counts`) make the report ([`report()`]), add up over shards (`shard`) and feed
//! the text (`text`) report.

pub(crate) mod counts;
pub(crate) mod dataset;
pub(crate) mod evaluate;
pub(crate) mod features;
pub(crate) mod frames;
pub(crate) mod head;
pub(crate) mod idx;
pub(crate) mod network;
pub(crate) mod reach;
pub(crate) mod readout;
pub(crate) mod report;
pub(crate) mod saturation;
pub(crate) mod shard;
pub(crate) mod stage;
pub(crate) mod text;
pub(crate) mod tiling;
pub(crate) mod uncertainty;

pub use dataset::{
    read as read_dataset, DatasetError, Split, CLASSES, DEFAULT_DIR as DEFAULT_DATASET_DIR,
    FASHION_NAMES,
};
pub use evaluate::{evaluate, Evaluation, Example, Options};
pub use features::{extract as extract_features, Built, Extracted, Sample};
pub use idx::IdxError;
pub use network::{load_path, HeadDef, Network, NetworkProblem, Source, StageDef, TrainParams};
pub use report::{report, DepthRow, Report};
pub use shard::{merge_files, MergeError, Shard};
pub use stage::{build as build_stage, BuildOptions, Chip, StageError};
pub use text::text as report_text;
pub use tiling::BACKGROUND as TILE_BACKGROUND;
pub use uncertainty::ranges as uncertainty_ranges;

#[cfg(test)]
mod tests;

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
    /// The images do not fit the array.
    #[error(transparent)]
    Tiling(#[from] tiling::NoTiling),
    /// A readout bin reaches past the images.
    #[error(transparent)]
    Layout(#[from] readout::BinOutside),
    /// The profile's uncertainty ensemble cannot be made.
    #[error(transparent)]
    Ensemble(#[from] crate::verify::ensemble::UncertaintyError),
    /// The head's training diverged.
    #[error(
        "the head's training diverged (weights not finite) with learning_rate {learning_rate} \
         and l2 {l2}: lower them in the network's head.train"
    )]
    Diverged {
        /// The learning rate trained with.
        learning_rate: f64,
        /// The L2 penalty trained with.
        l2: f64,
    },
    /// A shard of the test images holds no frame.
    #[error(
        "shard {index}/{count} holds no frame: the test images fill {frames} frames, so use at \
         most {frames} shards"
    )]
    EmptyShard {
        /// The shard's 1-based number.
        index: u32,
        /// Shards in all.
        count: u32,
        /// Frames the test images fill.
        frames: usize,
    },
    /// A head to train and no training images.
    #[error("no training images to train the head on")]
    NoTrainImages,
    /// No test images.
    #[error("no test images")]
    NoTestImages,
    /// A depth deeper than the network's stages are written at.
    #[error(
        "--depths {asked}: the network's stages are written at depth {deepest}, the deepest \
         evaluated"
    )]
    TooDeep {
        /// The depth asked for.
        asked: u32,
        /// The depth of the stages.
        deepest: u32,
    },
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
