//! The network file (docs/eval.md): on-sensor stages (a kernel spec, optionally with a
//! program that computes it), the on-chip decision after each, the readout (block
//! pooling of the binary maps) and the host-side dense head.

use crate::cain::{self, Spec};
use crate::isa::yaml::{locate, Misplaced, Step, YamlError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Largest network file accepted.
pub const MAX_NETWORK_BYTES: usize = 1 << 20;

/// The bundled default network and the files it names (found without any file
/// system, so that `scamp eval` works from any folder).
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "analognet2_net.yaml",
        include_str!("../../programs/analognet2_net.yaml"),
    ),
    (
        "deep_net.yaml",
        include_str!("../../programs/deep_net.yaml"),
    ),
    (
        "analognet2.yaml",
        include_str!("../../programs/analognet2.yaml"),
    ),
    (
        "analognet2.scamp",
        include_str!("../../programs/analognet2.scamp"),
    ),
    (
        "deep_stage2.yaml",
        include_str!("../../programs/deep_stage2.yaml"),
    ),
    (
        "deep_stage2.scamp",
        include_str!("../../programs/deep_stage2.scamp"),
    ),
];

/// Name of the bundled default network.
pub const DEFAULT_NETWORK: &str = "analognet2_net.yaml";

/// What the chip decides after a stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Each output register's sign: bit = value > 0.
    Sign,
    /// bit = value > threshold.
    Threshold(f64),
    /// No decision: the analogue outputs feed the next stage only.
    None,
}

/// One on-sensor stage.
#[derive(Clone, Debug)]
pub struct StageDef {
    /// The kernel spec (its input register is the captured image for the first stage,
    /// an output of the previous stage after that).
    pub spec: Spec,
    /// Where the spec came from (for messages).
    pub spec_file: PathBuf,
    /// A program computing the spec's kernels, with its file name (proven before use).
    pub program: Option<(PathBuf, String)>,
    /// The decision after the stage.
    pub decision: Decision,
}

/// How the head is obtained.
#[derive(Clone, Debug, PartialEq)]
pub enum HeadDef {
    /// Weights read from a `.npy` file: classes x (features + 1), the last column the
    /// bias.
    Weights(PathBuf),
    /// Trained by `scamp` on the training split.
    Train(TrainParams),
}

/// Settings of the head's softmax-regression training.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainParams {
    /// Passes over the training split.
    pub epochs: u32,
    /// Step size of the (momentum) gradient descent.
    pub learning_rate: f64,
    /// L2 penalty on the weights.
    pub l2: f64,
    /// Mini-batch size.
    pub batch: usize,
    /// Seed of the shuffling.
    pub seed: u64,
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

/// A network.
#[derive(Clone, Debug)]
pub struct Network {
    /// Its name.
    pub name: String,
    /// The stages, in order.
    pub stages: Vec<StageDef>,
    /// Side of the square pooling blocks of the readout, in PEs.
    pub pool: usize,
    /// The head.
    pub head: HeadDef,
    /// Every text the network was read from, for the fingerprint of shards.
    pub sources: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    name: String,
    stages: Vec<RawStage>,
    #[serde(default)]
    readout: RawReadout,
    #[serde(default)]
    head: RawHead,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStage {
    spec: String,
    #[serde(default)]
    program: Option<String>,
    #[serde(default = "sign")]
    decision: String,
    #[serde(default)]
    threshold: Option<f64>,
}

fn sign() -> String {
    "sign".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawReadout {
    pool: usize,
}

impl Default for RawReadout {
    fn default() -> Self {
        RawReadout { pool: 4 }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawHead {
    weights: Option<String>,
    train: TrainParams,
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
    #[error("{}: cannot read: {msg}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        msg: String,
    },
}

/// Where the files of a network come from: the file system, or the bundled copies.
pub enum Source<'a> {
    /// Files relative to this folder.
    Dir(&'a Path),
    /// The bundled files ([`BUNDLED`]).
    Bundled,
}

impl Source<'_> {
    /// The text of `name` and the path to show for it.
    pub fn read(&self, name: &str) -> Result<(PathBuf, String), NetworkError> {
        match self {
            Source::Dir(d) => {
                let p = d.join(name);
                let text = crate::isa::source::read_at_most(&p, MAX_NETWORK_BYTES as u64)
                    .map_err(|e| e.to_string())
                    .and_then(|b| {
                        if b.len() > MAX_NETWORK_BYTES {
                            Err(format!("larger than {MAX_NETWORK_BYTES} bytes"))
                        } else {
                            String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string())
                        }
                    })
                    .map_err(|msg| NetworkError::Read {
                        file: p.clone(),
                        msg,
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
                        msg: "not a bundled file".into(),
                    })
            }
        }
    }
}

/// A threshold the decision can load: it is loaded negated with `in()`, whose DAC
/// takes whole numbers in -128..127.
fn loadable_threshold(v: f64) -> Result<f64, String> {
    if v.fract() == 0.0 && (-127.0..=128.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "threshold {v} cannot be loaded: the decision loads -threshold into the DAC, so the threshold must be a whole number in -127..128"
        ))
    }
}

/// The decision a stage asks for, or the key at fault and what is wrong.
fn decision_of(s: &RawStage) -> Result<Decision, (&'static str, String)> {
    match (s.decision.as_str(), s.threshold) {
        ("sign", None) => Ok(Decision::Sign),
        ("none", None) => Ok(Decision::None),
        ("threshold", Some(v)) if v.is_finite() => loadable_threshold(v)
            .map(Decision::Threshold)
            .map_err(|m| ("threshold", m)),
        ("threshold", _) => Err((
            "decision",
            "decision `threshold` needs a finite `threshold:`".into(),
        )),
        ("sign" | "none", Some(_)) => Err((
            "threshold",
            "`threshold:` goes with `decision: threshold`".into(),
        )),
        (other, _) => Err((
            "decision",
            format!("unknown decision `{other}` (expected sign, threshold or none)"),
        )),
    }
}

/// Reads the network file at `path` (the files it names relative to its folder), or
/// the bundled default network ([`DEFAULT_NETWORK`]) when there is none.
pub fn load_path(path: Option<&Path>) -> Result<Network, NetworkError> {
    match path {
        None => load(&Source::Bundled, DEFAULT_NETWORK),
        Some(p) if p.is_dir() || p.file_name().is_none() => Err(NetworkError::Read {
            file: p.to_path_buf(),
            msg: "a folder, not a network file".into(),
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
pub fn load(source: &Source, name: &str) -> Result<Network, NetworkError> {
    let (file, text) = source.read(name)?;
    let yaml = |err: YamlError| NetworkError::Yaml {
        file: file.clone(),
        err,
    };
    let raw: RawNetwork = serde_yaml::from_str(&text).map_err(|e| yaml(YamlError::from(&e)))?;
    let at = |path: &[Step], msg: String| yaml(locate(&text, Misplaced::at(path, msg)));
    if raw.stages.is_empty() {
        return Err(at(
            &[Step::Key("stages")],
            "a network needs at least one stage".into(),
        ));
    }
    if raw.readout.pool == 0 {
        return Err(at(
            &[Step::Key("readout"), Step::Key("pool")],
            "pool must be at least 1".into(),
        ));
    }
    let t = raw.head.train;
    if t.epochs == 0
        || t.batch == 0
        || !t.learning_rate.is_finite()
        || t.learning_rate <= 0.0
        || !t.l2.is_finite()
        || t.l2 < 0.0
    {
        return Err(at(
            &[Step::Key("head"), Step::Key("train")],
            "train needs epochs >= 1, batch >= 1, a finite learning_rate > 0 and a finite l2 >= 0"
                .into(),
        ));
    }
    let mut sources = text.clone();
    let mut stages = Vec::new();
    for (i, s) in raw.stages.iter().enumerate() {
        let here = |k: &'static str| [Step::Key("stages"), Step::Index(i), Step::Key(k)];
        let decision = decision_of(s).map_err(|(key, msg)| at(&here(key), msg))?;
        let (spec_file, spec_text) = source.read(&s.spec)?;
        let spec = cain::parse_spec(&spec_text).map_err(|err| NetworkError::Yaml {
            file: spec_file.clone(),
            err,
        })?;
        sources.push_str(&spec_text);
        let program = match &s.program {
            Some(p) => {
                let (f, t) = source.read(p)?;
                sources.push_str(&t);
                Some((f, t))
            }
            None => None,
        };
        stages.push(StageDef {
            spec,
            spec_file,
            program,
            decision,
        });
    }
    if !matches!(
        stages.last().map(|s| s.decision),
        Some(Decision::Sign | Decision::Threshold(_))
    ) {
        let last = stages.len() - 1;
        return Err(at(
            &[
                Step::Key("stages"),
                Step::Index(last),
                Step::Key("decision"),
            ],
            "the last stage needs a decision (sign or threshold): only binary maps leave the chip"
                .into(),
        ));
    }
    let head = match raw.head.weights {
        Some(w) => HeadDef::Weights(match source {
            Source::Dir(d) => d.join(w),
            Source::Bundled => PathBuf::from(w),
        }),
        None => HeadDef::Train(t),
    };
    Ok(Network {
        name: raw.name,
        stages,
        pool: raw.readout.pool,
        head,
        sources,
    })
}
