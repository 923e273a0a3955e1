//! The network file (docs/eval.md): an optional input stage, on-sensor stages (a
//! kernel spec, optionally with a program that computes it), the activation and the
//! on-chip decision after each, the readout (pooled blocks or explicit bins of the
//! binary maps, optionally capped) and the host-side head (softmax or an MLP).

mod layer;
mod parts;
mod problem;

pub use problem::NetworkProblem;

pub(crate) use parts::{Activation, Bin, Binarise, Decision, Grouping, Readout};

use crate::cain::{self, Spec};
use crate::eval::head::MAX_UNITS;
use crate::isa::yaml::{locate, Misplaced, Step, YamlError};
use serde::Deserialize;
use serde_yaml::Value;
use std::path::{Path, PathBuf};

/// Largest network file accepted.
pub(crate) const MAX_NETWORK_BYTES: usize = 1 << 20;

/// The bundled default network and the files it names (found without any file
/// system, so that `scamp eval` works from any folder).
pub(crate) const BUNDLED: &[(&str, &str)] = &[
    (
        "analognet2_net.yaml",
        include_str!("../../../programs/analognet2_net.yaml"),
    ),
    (
        "deep_net.yaml",
        include_str!("../../../programs/deep_net.yaml"),
    ),
    (
        "analognet2.yaml",
        include_str!("../../../programs/analognet2.yaml"),
    ),
    (
        "analognet2.scamp",
        include_str!("../../../programs/analognet2.scamp"),
    ),
    (
        "deep_stage2.yaml",
        include_str!("../../../programs/deep_stage2.yaml"),
    ),
    (
        "deep_stage2.scamp",
        include_str!("../../../programs/deep_stage2.scamp"),
    ),
];

/// Name of the bundled default network.
pub(crate) const DEFAULT_NETWORK: &str = "analognet2_net.yaml";

/// One on-sensor stage.
#[derive(Clone, Debug)]
pub struct StageDef {
    /// The kernel spec (its input register is the captured image for the first stage,
    /// outputs of earlier stages after that: one register per input channel).
    pub spec: Spec,
    /// Where the spec came from (for messages).
    pub spec_file: PathBuf,
    /// A program computing the spec's kernels, with its file name (proven before use).
    pub program: Option<(PathBuf, String)>,
    /// Per output, a bias added on the sensor (empty for none): loaded with `in` before
    /// an activation or into a next stage, else folded into the decision's threshold.
    pub(crate) bias: Vec<f64>,
    /// The activation applied to each output on the sensor.
    pub(crate) activation: Option<Activation>,
    /// The decision after the stage.
    pub(crate) decision: Decision,
}

/// How the head is obtained.
#[derive(Clone, Debug, PartialEq)]
pub enum HeadDef {
    /// Weights read from `.npy` files, one per layer, each outputs x (inputs + 1), the
    /// last column the bias; the last layer has one output per class.
    Weights(Vec<PathBuf>),
    /// Trained by `scamp` on the training split, with these hidden layers (none for
    /// softmax regression).
    Train {
        /// The training settings.
        params: TrainParams,
        /// Units of each hidden layer (ReLU), in order.
        hidden: Vec<usize>,
    },
}

/// Settings of the head's training.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainParams {
    /// Passes over the training split.
    pub(crate) epochs: u32,
    /// Step size of the (momentum) gradient descent.
    pub(crate) learning_rate: f64,
    /// L2 penalty on the weights.
    pub(crate) l2: f64,
    /// Mini-batch size.
    pub(crate) batch: usize,
    /// Seed of the shuffling.
    pub(crate) seed: u64,
}

impl Default for TrainParams {
    fn default() -> Self {
        TrainParams {
            epochs: 15,
            learning_rate: 0.5,
            l2: 1e-5,
            batch: 64,
            seed: 1,
        }
    }
}

/// The step size of an MLP head's training when the file gives none: the softmax
/// regression's 0.5 drives a head with hidden layers into dead ReLUs (every image the
/// same class), while 0.05 trains every MLP tried (docs/eval.md).
const MLP_LEARNING_RATE: f64 = 0.05;

/// `train:` as written: what it leaves out takes the defaults, the step size the one
/// of the head's kind.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawTrain {
    epochs: Option<u32>,
    learning_rate: Option<f64>,
    l2: Option<f64>,
    batch: Option<usize>,
    seed: Option<u64>,
}

impl RawTrain {
    /// The settings, for a head with `hidden` layers.
    fn params(&self, hidden: &[usize]) -> TrainParams {
        let d = TrainParams::default();
        let rate = if hidden.is_empty() {
            d.learning_rate
        } else {
            MLP_LEARNING_RATE
        };
        TrainParams {
            epochs: self.epochs.unwrap_or(d.epochs),
            learning_rate: self.learning_rate.unwrap_or(rate),
            l2: self.l2.unwrap_or(d.l2),
            batch: self.batch.unwrap_or(d.batch),
            seed: self.seed.unwrap_or(d.seed),
        }
    }
}

/// A network.
#[derive(Clone, Debug)]
pub struct Network {
    /// Its name.
    pub name: String,
    /// The input stage's binarisation of the capture, if any.
    pub(crate) binarise: Option<Binarise>,
    /// The stages, in order.
    pub stages: Vec<StageDef>,
    /// What leaves the chip.
    pub readout: Readout,
    /// The head.
    pub head: HeadDef,
    /// Every text the network was read from, for the fingerprint of shards.
    pub(crate) sources: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    name: String,
    #[serde(default)]
    input: RawInput,
    stages: Vec<RawStage>,
    #[serde(default)]
    readout: RawReadout,
    #[serde(default)]
    head: RawHead,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawInput {
    #[serde(default)]
    binarise: Option<RawBinarise>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBinarise {
    level: Value,
    value: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStage {
    #[serde(default)]
    spec: Option<String>,
    #[serde(default)]
    weights: Option<String>,
    #[serde(default)]
    bias: Option<String>,
    #[serde(default)]
    groups: Option<usize>,
    #[serde(default)]
    depth: Option<u32>,
    #[serde(default)]
    approximation: Option<crate::cain::spec::ApproxParams>,
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    inputs: Option<Vec<String>>,
    #[serde(default)]
    outputs: Option<Vec<String>>,
    #[serde(default)]
    registers: Option<Vec<String>>,
    #[serde(default)]
    scale: Option<f64>,
    #[serde(default)]
    program: Option<String>,
    #[serde(default)]
    activation: Option<Value>,
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    threshold: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawReadout {
    pool: Option<usize>,
    bins: Option<Vec<Vec<Value>>>,
    cap: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawHead {
    weights: Option<Value>,
    hidden: Option<Vec<usize>>,
    train: RawTrain,
}

/// Why a network could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// A positioned error in the network file or a spec it names.
    #[error("{}:{err}", file.display())]
    Yaml {
        /// The file.
        file: PathBuf,
        /// Where and what.
        err: YamlError,
    },
    /// A file it names could not be read.
    #[error("{}: cannot read: {cause}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        cause: Unread,
    },
}

/// Why a file of a network could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unread {
    /// The system's error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Larger than a network's files may be.
    #[error("larger than {MAX_NETWORK_BYTES} bytes")]
    TooLarge,
    /// Not UTF-8 text.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// A name the bundled network does not have.
    #[error("not a bundled file")]
    NotBundled,
    /// A folder given where the network file was expected.
    #[error("a folder, not a network file")]
    Folder,
    /// A layer's weight or bias file.
    #[error(transparent)]
    Layer(#[from] crate::cain::spec::layer::LayerError),
}

/// Where the files of a network come from: the file system, or the bundled copies.
pub enum Source<'a> {
    /// Files relative to this folder.
    Dir(&'a Path),
    /// The bundled files (`BUNDLED`).
    Bundled,
}

impl Source<'_> {
    /// The text of `name` and the path to show for it.
    pub(crate) fn read(&self, name: &str) -> Result<(PathBuf, String), NetworkError> {
        match self {
            Source::Dir(d) => {
                let p = d.join(name);
                let text = crate::isa::source::read_at_most(&p, MAX_NETWORK_BYTES as u64)
                    .map_err(Unread::from)
                    .and_then(|b| {
                        if b.len() > MAX_NETWORK_BYTES {
                            Err(Unread::TooLarge)
                        } else {
                            String::from_utf8(b).map_err(|_| Unread::NotUtf8)
                        }
                    })
                    .map_err(|cause| NetworkError::Read {
                        file: p.clone(),
                        cause,
                    })?;
                Ok((p, text))
            }
            Source::Bundled => {
                let p = PathBuf::from(format!("programs/{name}"));
                BUNDLED
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, t)| (p.clone(), (*t).to_string()))
                    .ok_or(NetworkError::Read {
                        file: p,
                        cause: Unread::NotBundled,
                    })
            }
        }
    }
}

/// The decision a stage asks for (`decision:` and `threshold:`), refused at the node
/// at fault.
fn decision_of(
    s: &RawStage,
    here: &dyn Fn(&'static str) -> Vec<Step>,
) -> Result<Decision, Misplaced<NetworkProblem>> {
    let thresholds = s
        .threshold
        .as_ref()
        .map(|v| parts::thresholds(v, &here("threshold")))
        .transpose()?;
    match (s.decision.as_deref(), thresholds) {
        (Some("sign") | None, None) => Ok(Decision::Sign),
        (Some("none"), None) => Ok(Decision::None),
        (Some("threshold") | None, Some(t)) => Ok(Decision::Threshold(t)),
        (Some("threshold"), None) => Err(Misplaced::at(
            &here("decision"),
            NetworkProblem::ThresholdMissing,
        )),
        (Some("sign" | "none"), Some(_)) => Err(Misplaced::at(
            &here("threshold"),
            NetworkProblem::ThresholdWithoutDecision,
        )),
        (Some(other), _) => Err(Misplaced::at(
            &here("decision"),
            NetworkProblem::UnknownDecision {
                decision: other.to_string(),
            },
        )),
    }
}

/// Reads the network file at `path` (the files it names relative to its folder), or
/// the bundled default network (`DEFAULT_NETWORK`) when there is none.
///
/// ```
/// let net = scamp::eval::load_path(None).unwrap();
/// assert_eq!(net.name, "analognet2");
/// assert!(!net.stages.is_empty());
/// assert!(scamp::eval::load_path(Some("no-such-net.yaml".as_ref())).is_err());
/// ```
pub fn load_path(path: Option<&Path>) -> Result<Network, NetworkError> {
    match path {
        None => load(&Source::Bundled, DEFAULT_NETWORK),
        Some(p) if p.is_dir() || p.file_name().is_none() => Err(NetworkError::Read {
            file: p.to_path_buf(),
            cause: Unread::Folder,
        }),
        Some(p) => {
            let dir = p.parent().unwrap_or(Path::new("."));
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            load(&Source::Dir(dir), &name)
        }
    }
}

/// Reads the network file `name` from `source`, with the specs and programs it names.
pub(crate) fn load(source: &Source, name: &str) -> Result<Network, NetworkError> {
    let (file, text) = source.read(name)?;
    let yaml = |err: YamlError| NetworkError::Yaml {
        file: file.clone(),
        err,
    };
    let raw: RawNetwork =
        serde_yaml::from_str(&text).map_err(|e| yaml(YamlError::of_serde(e, true)))?;
    let at = |m: Misplaced<NetworkProblem>| yaml(locate(&text, m));
    let readout = readout_of(&raw.readout).map_err(at)?;
    let binarise = raw
        .input
        .binarise
        .as_ref()
        .map(|b| {
            parts::binarise(
                &b.level,
                &b.value,
                &[Step::Key("input"), Step::Key("binarise")],
            )
        })
        .transpose()
        .map_err(at)?;
    let head = head_of(&raw.head, source).map_err(at)?;
    let mut sources = text.clone();
    let stages = stages_of(&raw.stages, source, &mut sources, &at)?;
    Ok(Network {
        name: raw.name,
        binarise,
        stages,
        readout,
        head,
        sources,
    })
}

/// The stages, each with its spec and program read from `source` (their texts added
/// to `sources`).
fn stages_of(
    raw: &[RawStage],
    source: &Source,
    sources: &mut String,
    at: &dyn Fn(Misplaced<NetworkProblem>) -> NetworkError,
) -> Result<Vec<StageDef>, NetworkError> {
    if raw.is_empty() {
        return Err(at(Misplaced::at(
            &[Step::Key("stages")],
            NetworkProblem::NoStages,
        )));
    }
    let mut stages = Vec::new();
    // The registers of the maps the last layer made (all its groups' outputs).
    let mut previous: Vec<crate::isa::Reg> = Vec::new();
    for (i, s) in raw.iter().enumerate() {
        let here = |k: &'static str| vec![Step::Key("stages"), Step::Index(i), Step::Key(k)];
        let decision = decision_of(s, &here).map_err(at)?;
        let activation = s
            .activation
            .as_ref()
            .map(|v| parts::activation(v, &here("activation")))
            .transpose()
            .map_err(at)?;
        // One spec, or one per group of a grouped layer (run one after another).
        let parts: Vec<(Spec, PathBuf, Vec<f64>)> = match (&s.spec, &s.weights) {
            (Some(name), None) => {
                let (spec_file, spec_text) = source.read(name)?;
                let spec = cain::parse_spec(&spec_text).map_err(|err| NetworkError::Yaml {
                    file: spec_file.clone(),
                    err,
                })?;
                sources.push_str(&spec_text);
                vec![(spec, spec_file, Vec::new())]
            }
            (None, Some(w)) => layer::from_arrays(s, w, &previous, source, &here, at)?
                .into_iter()
                .map(|made| {
                    sources.push_str(&format!("{:?}{:?}", made.spec, made.bias));
                    (made.spec, made.file, made.bias)
                })
                .collect(),
            _ => {
                return Err(at(Misplaced::at(
                    &[Step::Key("stages"), Step::Index(i)],
                    NetworkProblem::StageSource,
                )))
            }
        };
        let maps: usize = parts.iter().map(|(spec, ..)| spec.kernels.len()).sum();
        if let Decision::Threshold(t) = &decision {
            if t.len() > 1 && t.len() != maps {
                return Err(at(Misplaced::at(
                    &here("threshold"),
                    NetworkProblem::ThresholdCount {
                        thresholds: t.len(),
                        maps,
                        spec: parts[0]
                            .1
                            .file_name()
                            .unwrap_or_default()
                            .to_string_lossy()
                            .into_owned(),
                    },
                )));
            }
        }
        let mut program = match &s.program {
            Some(p) => {
                let (f, t) = source.read(p)?;
                sources.push_str(&t);
                Some((f, t))
            }
            None => None,
        };
        previous.clear();
        let mut first = 0;
        for (spec, spec_file, bias) in parts {
            let k = spec.kernels.len();
            // Thresholds one per map: each part takes those of its maps.
            let decision = match &decision {
                Decision::Threshold(t) if t.len() > 1 => {
                    Decision::Threshold(t[first..first + k].to_vec())
                }
                d => d.clone(),
            };
            first += k;
            previous.extend(spec.outputs());
            stages.push(StageDef {
                spec,
                spec_file,
                // A stage with a program is never split (one part).
                program: program.take(),
                bias,
                activation,
                decision,
            });
        }
    }
    if stages.last().is_some_and(|s| s.decision == Decision::None) {
        return Err(at(Misplaced::at(
            &[
                Step::Key("stages"),
                Step::Index(raw.len() - 1),
                Step::Key("decision"),
            ],
            NetworkProblem::LastDecision,
        )));
    }
    Ok(stages)
}

/// The readout: `pool` (4 by default) or `bins`, and an optional `cap`.
fn readout_of(r: &RawReadout) -> Result<Readout, Misplaced<NetworkProblem>> {
    let key = |k| [Step::Key("readout"), Step::Key(k)];
    let grouping = match (r.pool, &r.bins) {
        (Some(_), Some(_)) => return Err(Misplaced::at(&key("bins"), NetworkProblem::PoolAndBins)),
        (Some(0), None) => return Err(Misplaced::at(&key("pool"), NetworkProblem::ZeroPool)),
        (Some(p), None) => Grouping::Pool(p),
        (None, Some(b)) => Grouping::Bins(parts::bins(b, &key("bins"))?),
        (None, None) => Grouping::Pool(4),
    };
    if r.cap == Some(0) {
        return Err(Misplaced::at(&key("cap"), NetworkProblem::ZeroCap));
    }
    Ok(Readout {
        grouping,
        cap: r.cap,
    })
}

/// The head: weight files, or training settings with optional hidden layers.
fn head_of(h: &RawHead, source: &Source) -> Result<HeadDef, Misplaced<NetworkProblem>> {
    let key = |k| [Step::Key("head"), Step::Key(k)];
    let hidden = h.hidden.clone().unwrap_or_default();
    let t = h.train.params(&hidden);
    if t.epochs == 0
        || t.batch == 0
        || !t.learning_rate.is_finite()
        || t.learning_rate <= 0.0
        || !t.l2.is_finite()
        || t.l2 < 0.0
    {
        return Err(Misplaced::at(&key("train"), NetworkProblem::Train));
    }
    if hidden.iter().any(|&n| n == 0 || n > MAX_UNITS) {
        return Err(Misplaced::at(&key("hidden"), NetworkProblem::HiddenUnits));
    }
    let Some(w) = &h.weights else {
        return Ok(HeadDef::Train { params: t, hidden });
    };
    if h.hidden.is_some() {
        return Err(Misplaced::at(
            &key("hidden"),
            NetworkProblem::HiddenWithWeights,
        ));
    }
    let files = parts::weight_files(w, &key("weights"))?;
    Ok(HeadDef::Weights(
        files
            .into_iter()
            .map(|w| match source {
                Source::Dir(d) => d.join(w),
                Source::Bundled => PathBuf::from(w),
            })
            .collect(),
    ))
}
