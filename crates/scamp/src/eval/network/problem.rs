//! What is wrong with a network file, found by the checks across its values: each cause
//! carries the values involved, its text is the message after `NET.yaml:LINE:COL:`.

use super::parts::{DAC, MAX_LEAK_SHIFT};
use crate::eval::head::MAX_UNITS;

/// A network file's problem: the node it is at goes with it ([`crate::isa::YamlError`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetworkProblem {
    /// Not the name of one of SCAMP-5's general registers.
    #[error("`{name}` is not a general register (A..F)")]
    NotGeneral {
        /// The name as written.
        name: String,
    },
    /// Both `input` and `inputs`.
    #[error("give `input` or `inputs`, not both")]
    InputAndInputs,
    /// A first stage whose weights read more than the captured image's one channel.
    #[error("the first stage reads the captured image (one channel); its weights read {channels}")]
    FirstStageChannels {
        /// The channels the weights read.
        channels: usize,
    },
    /// Weights reading other than the previous stage's maps, without `inputs`.
    #[error(
        "the weights read {channels} input channels, the previous stage makes {previous}: \
         name them with `inputs: [...]`"
    )]
    ChannelsUnnamed {
        /// The channels the weights read.
        channels: usize,
        /// The maps the previous stage makes.
        previous: usize,
    },
    /// Input registers other in number than the weights' channels.
    #[error("the weights read {channels} input channel(s), {inputs} input register(s) are given")]
    ChannelsRegisters {
        /// The channels the weights read.
        channels: usize,
        /// The input registers given.
        inputs: usize,
    },
    /// Too few registers besides the inputs for a layer's outputs.
    #[error(
        "the layer reads {maps} map(s) and makes {outputs}: the {free} register(s) besides \
         its inputs cannot hold the outputs; name `outputs:` (an output may reuse an input \
         register) or give the layer fewer outputs"
    )]
    NoRoomForOutputs {
        /// The maps it reads.
        maps: usize,
        /// The maps it makes.
        outputs: usize,
        /// The registers besides its inputs.
        free: usize,
    },
    /// A group of a grouped layer without a register for its outputs.
    #[error(
        "group {group} of the layer makes {outputs} map(s), and only {free} register(s) \
         can take them (a register holding a map a later group reads, or one an earlier \
         group made for the next stage, cannot): allow it more `registers:` or give the layer fewer outputs per group"
    )]
    NoRoomForGroup {
        /// The group (from 1).
        group: usize,
        /// The maps it makes.
        outputs: usize,
        /// The registers it could write.
        free: usize,
    },
    /// `outputs:` of a grouped layer, other in number than its outputs.
    #[error("{given} output register(s) are given for the layer's {outputs} outputs")]
    OutputCount {
        /// The registers given.
        given: usize,
        /// The layer's outputs.
        outputs: usize,
    },
    /// An output of a grouped layer where a later group reads or an earlier group wrote.
    #[error(
        "group {group} of the layer would write {register}, which holds a map a later group \
         reads or an earlier group made for the next stage: each group runs after the one \
         before"
    )]
    GroupOverwrites {
        /// The register.
        register: String,
        /// The group (from 1).
        group: usize,
    },
    /// Weight files in the bundled network (it has no folder).
    #[error("a bundled network cannot name weight files")]
    BundledWeightFiles,
    /// Both `depth` and `approximation`.
    #[error("give `depth` or `approximation`, not both")]
    DepthAndApproximation,
    /// `decision: threshold` without thresholds.
    #[error("decision `threshold` needs `threshold: T` or one per map `threshold: [t1, t2, ...]`")]
    ThresholdMissing,
    /// Thresholds with another decision.
    #[error("`threshold:` goes with `decision: threshold`")]
    ThresholdWithoutDecision,
    /// An unknown decision.
    #[error("unknown decision `{decision}` (expected sign, threshold or none)")]
    UnknownDecision {
        /// The decision as written.
        decision: String,
    },
    /// `stages: []`.
    #[error("a network needs at least one stage")]
    NoStages,
    /// A stage with neither or both of `spec` and `weights`.
    #[error("a stage needs `spec: FILE.yaml` or `weights: FILE.npy` (one of them)")]
    StageSource,
    /// Several thresholds, but not one per map.
    #[error(
        "{thresholds} thresholds for the {maps} maps of {spec}: give one per map, or one for all"
    )]
    ThresholdCount {
        /// The thresholds given.
        thresholds: usize,
        /// The stage's maps.
        maps: usize,
        /// The stage's spec file (its name).
        spec: String,
    },
    /// A last stage without a decision.
    #[error(
        "the last stage needs a decision (sign or threshold): only binary maps leave the chip"
    )]
    LastDecision,
    /// Both `pool` and `bins`.
    #[error("give `pool` or `bins`, not both")]
    PoolAndBins,
    /// `pool: 0`.
    #[error("pool must be at least 1")]
    ZeroPool,
    /// `cap: 0`.
    #[error("cap must be at least 1 event per map")]
    ZeroCap,
    /// Training settings out of range.
    #[error(
        "train needs epochs >= 1, batch >= 1, a finite learning_rate > 0 and a finite l2 >= 0"
    )]
    Train,
    /// A hidden layer of no or too many units.
    #[error("a hidden layer has 1..{MAX_UNITS} units")]
    HiddenUnits,
    /// `hidden` beside loaded weights.
    #[error("`hidden` is for a head scamp trains; loaded weights give their own layers")]
    HiddenWithWeights,
    /// A value that must be an integer.
    #[error("{what} must be an integer")]
    NotInteger {
        /// What the value is.
        what: &'static str,
    },
    /// An unknown activation by name.
    #[error("unknown activation `{name}` (expected `relu` or `{{leaky_relu: 1/2^k}}`)")]
    UnknownActivation {
        /// The activation as written.
        name: String,
    },
    /// A mapping that is not `{leaky_relu: ...}`.
    #[error("unknown activation (expected `relu` or `{{leaky_relu: 1/2^k}}`)")]
    UnknownActivationForm,
    /// An activation that is neither a name nor a mapping of one key.
    #[error("expected `relu` or `{{leaky_relu: 1/2^k}}`")]
    NotAnActivation,
    /// A leaky ReLU's slope that is not 1/2^k.
    #[error(
        "a leaky ReLU's slope must be 1/2^k for k = 1..{MAX_LEAK_SHIFT} (halvings on the \
         sensor), such as 1/4"
    )]
    LeakySlope,
    /// A threshold whose negation the DAC cannot load.
    #[error(
        "threshold {threshold} cannot be loaded: the DAC loads -t, so a threshold must be an \
         integer in {}..{}",
        -DAC.end(),
        -DAC.start()
    )]
    Threshold {
        /// The threshold as written.
        threshold: String,
    },
    /// `threshold: []`.
    #[error("threshold: a list needs one value per map")]
    NoThresholds,
    /// `bins: []`.
    #[error("bins: give at least one rectangle")]
    NoBins,
    /// A bin of other than four numbers.
    #[error("a bin is [row, col, height, width]")]
    BinShape,
    /// A bin with a negative number.
    #[error("a bin's row, col, height and width are not negative")]
    BinNegative,
    /// A bin of no height or width.
    #[error("a bin's height and width are at least 1")]
    BinEmpty,
    /// A binarising level outside the pixel values.
    #[error("level {level}: a pixel value in 1..255 (the DAC loads 128 - level)")]
    Level {
        /// The level.
        level: i64,
    },
    /// A binarising value the DAC cannot load.
    #[error("value {value}: the DAC loads -128..127")]
    Value {
        /// The value.
        value: i64,
    },
    /// A head's weights that are neither a file name nor a list of them.
    #[error("weights: a .npy file name, or a list of them (one per layer)")]
    WeightFiles,
}
