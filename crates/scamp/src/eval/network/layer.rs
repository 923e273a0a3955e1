//! A stage given as arrays rather than a spec file: `weights: FILE.npy` in PyTorch's
//! `Conv2d` layout `[out, in/groups, kh, kw]`, an optional `bias: FILE.npy`, `groups`,
//! and `depth` or `approximation:`, turned into a kernel spec by
//! [`crate::cain::spec::layer`], with registers chosen unless the stage names them. A
//! grouped layer (a depthwise one, for example) becomes one spec per group, run one
//! after another in registers that spare the maps still to be read.

use super::problem::NetworkProblem;
use super::{NetworkError, RawStage, Source};
use crate::cain::spec::layer::{self, LayerError, LayerTarget, Mismatch};
use crate::cain::spec::{ApproxParams, SearchParams};
use crate::cain::Spec;
use crate::isa::yaml::{Misplaced, Step};
use crate::isa::Reg;
use ndarray::s;
use std::ops::Range;
use std::path::PathBuf;

/// The default approximation depth of a stage from arrays: weights are multiples of
/// 1/16, and the sweep of `scamp eval` reports every smaller depth too.
pub(super) const DEFAULT_DEPTH: u32 = 4;

/// The generator's work budget for a stage from arrays: the same program on every
/// machine.
pub(super) const DEFAULT_WORK: u64 = 3000;

/// The general registers in order.
const GENERAL: [Reg; 6] = [Reg::A, Reg::B, Reg::C, Reg::D, Reg::E, Reg::F];

/// A stage's spec built from its arrays, with the bias per output (in the units of
/// the output register).
pub(super) struct FromArrays {
    /// The spec.
    pub(crate) spec: Spec,
    /// The weights file (for messages).
    pub(crate) file: PathBuf,
    /// Per output, the bias (empty without one).
    pub(crate) bias: Vec<f64>,
}

fn regs(names: &[String], path: &[Step]) -> Result<Vec<Reg>, Misplaced<NetworkProblem>> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            Reg::parse(n).filter(|r| r.is_general()).ok_or_else(|| {
                let mut p = path.to_vec();
                p.push(Step::Index(i));
                Misplaced::at(&p, NetworkProblem::NotGeneral { name: n.clone() })
            })
        })
        .collect()
}

/// The input registers of a stage reading `channels` input channels: `inputs:` or
/// `input:` as given, else the previous stage's outputs (its first one for a
/// single-channel layer), else A for the first stage.
fn input_registers(
    s: &RawStage,
    channels: usize,
    previous: &[Reg],
    here: &dyn Fn(&'static str) -> Vec<Step>,
) -> Result<Vec<Reg>, Misplaced<NetworkProblem>> {
    let inputs = match (&s.input, &s.inputs) {
        (Some(_), Some(_)) => {
            return Err(Misplaced::at(
                &here("inputs"),
                NetworkProblem::InputAndInputs,
            ))
        }
        (Some(r), None) => regs(std::slice::from_ref(r), &here("input"))?,
        (None, Some(list)) => regs(list, &here("inputs"))?,
        (None, None) if channels == 1 => vec![previous.first().copied().unwrap_or(Reg::A)],
        (None, None) if previous.len() == channels => previous.to_vec(),
        (None, None) if previous.is_empty() => {
            return Err(Misplaced::at(
                &here("weights"),
                NetworkProblem::FirstStageChannels { channels },
            ))
        }
        (None, None) => {
            return Err(Misplaced::at(
                &here("weights"),
                NetworkProblem::ChannelsUnnamed {
                    channels,
                    previous: previous.len(),
                },
            ))
        }
    };
    if inputs.len() != channels {
        let key = if s.inputs.is_some() {
            "inputs"
        } else {
            "input"
        };
        return Err(Misplaced::at(
            &here(key),
            NetworkProblem::ChannelsRegisters {
                channels,
                inputs: inputs.len(),
            },
        ));
    }
    Ok(inputs)
}

/// The output registers: `outputs:` as given, else the first `count` registers that are
/// not inputs, refused (at `weights`) when the register list has too few.
fn output_registers(
    s: &RawStage,
    count: usize,
    inputs: &[Reg],
    registers: &[Reg],
    here: &dyn Fn(&'static str) -> Vec<Step>,
) -> Result<Vec<Reg>, Misplaced<NetworkProblem>> {
    if let Some(r) = &s.outputs {
        return regs(r, &here("outputs"));
    }
    let free: Vec<Reg> = registers
        .iter()
        .copied()
        .filter(|r| !inputs.contains(r))
        .collect();
    if free.len() < count {
        return Err(Misplaced::at(
            &here("weights"),
            NetworkProblem::NoRoomForOutputs {
                maps: inputs.len(),
                outputs: count,
                free: free.len(),
            },
        ));
    }
    Ok(free[..count].to_vec())
}

/// Where one spec of a layer reads and writes: the whole layer, or one of its groups.
struct Part {
    /// Its kernels: the rows of the weights (and entries of the bias) it computes.
    kernels: Range<usize>,
    /// The groups among those kernels (as in `Conv2d`).
    groups: usize,
    /// One register per input channel it reads.
    inputs: Vec<Reg>,
    /// One register per output.
    outputs: Vec<Reg>,
    /// What its program may overwrite.
    registers: Vec<Reg>,
    /// Which group it is (`None`: the whole layer).
    group: Option<usize>,
}

/// The parts of a grouped layer without a program: one per group, in order, each
/// reading its own channels. A group's program may not overwrite a channel a later
/// group reads, nor an output an earlier group made when the layer's outputs feed a
/// next stage (`decision: none`; a decided output is in a digital register once its
/// group's stage ends); its outputs are `outputs:` as given, else the first registers
/// it may overwrite that hold none of its channels, then its own channels (an output
/// may take the place of a map it reads).
fn group_parts(
    s: &RawStage,
    out: usize,
    groups: usize,
    inputs: &[Reg],
    registers: &[Reg],
    here: &dyn Fn(&'static str) -> Vec<Step>,
) -> Result<Vec<Part>, Misplaced<NetworkProblem>> {
    let (per_in, per_out) = (inputs.len() / groups, out / groups);
    let named = s
        .outputs
        .as_ref()
        .map(|r| regs(r, &here("outputs")))
        .transpose()?;
    if let Some(n) = named.as_ref().filter(|n| n.len() != out) {
        return Err(Misplaced::at(
            &here("outputs"),
            NetworkProblem::OutputCount {
                given: n.len(),
                outputs: out,
            },
        ));
    }
    let keep = s.decision.as_deref() == Some("none");
    let mut made: Vec<Reg> = Vec::new();
    let mut parts = Vec::with_capacity(groups);
    for g in 0..groups {
        let own = &inputs[g * per_in..(g + 1) * per_in];
        let later = &inputs[(g + 1) * per_in..];
        let usable: Vec<Reg> = registers
            .iter()
            .copied()
            .filter(|r| !later.contains(r) && !made.contains(r))
            .collect();
        let kernels = g * per_out..(g + 1) * per_out;
        let outputs = match &named {
            Some(n) => {
                let o = n[kernels.clone()].to_vec();
                if let Some(r) = o.iter().find(|r| later.contains(r) || made.contains(r)) {
                    return Err(Misplaced::at(
                        &here("outputs"),
                        NetworkProblem::GroupOverwrites {
                            register: r.to_string(),
                            group: g + 1,
                        },
                    ));
                }
                o
            }
            None => {
                let (spare, reused): (Vec<Reg>, Vec<Reg>) =
                    usable.iter().partition(|r| !own.contains(r));
                let candidates = [spare, reused].concat();
                if candidates.len() < per_out {
                    return Err(Misplaced::at(
                        &here("weights"),
                        NetworkProblem::NoRoomForGroup {
                            group: g + 1,
                            outputs: per_out,
                            free: candidates.len(),
                        },
                    ));
                }
                candidates[..per_out].to_vec()
            }
        };
        if keep {
            made.extend(&outputs);
        }
        parts.push(Part {
            kernels,
            groups: 1,
            inputs: own.to_vec(),
            outputs,
            registers: usable,
            group: Some(g),
        });
    }
    Ok(parts)
}

/// The specs of stage `index` from its `weights:` (the previous stage's outputs,
/// `previous`, are its inputs unless it names them): one, or one per group of a
/// grouped layer that names no program (see [`group_parts`]).
pub(super) fn from_arrays(
    s: &RawStage,
    weights: &str,
    previous: &[Reg],
    source: &Source,
    here: &dyn Fn(&'static str) -> Vec<Step>,
    at: &dyn Fn(Misplaced<NetworkProblem>) -> NetworkError,
) -> Result<Vec<FromArrays>, NetworkError> {
    let Source::Dir(dir) = source else {
        return Err(at(Misplaced::at(
            &here("weights"),
            NetworkProblem::BundledWeightFiles,
        )));
    };
    let file = dir.join(weights);
    let layer_err = |e: LayerError| NetworkError::Read {
        file: file.clone(),
        cause: e.into(),
    };
    let w = layer::read_weights(&file).map_err(layer_err)?;
    let bias = match &s.bias {
        Some(b) => {
            let f = dir.join(b);
            Some(layer::read_bias(&f).map_err(|e| NetworkError::Read {
                file: f.clone(),
                cause: e.into(),
            })?)
        }
        None => None,
    };
    let out = w.dim().0;
    // Before the registers are placed, which would otherwise be blamed.
    if let Some(b) = bias.as_ref().filter(|b| b.len() != out) {
        let m = Mismatch::Bias {
            bias: b.len(),
            outputs: out,
        };
        return Err(layer_err(LayerError::Mismatch(m)));
    }
    let registers = match &s.registers {
        Some(r) => regs(r, &here("registers")).map_err(at)?,
        None => GENERAL.to_vec(),
    };
    let groups = s.groups.unwrap_or(1);
    let channels = w.dim().1.saturating_mul(groups);
    let inputs = input_registers(s, channels, previous, here).map_err(at)?;
    // Groups that do not divide the outputs are refused by the spec loader; a layer
    // given with its program is one spec (the program computes it whole).
    let split = groups > 1 && out > 0 && out.is_multiple_of(groups) && s.program.is_none();
    let parts = if split {
        group_parts(s, out, groups, &inputs, &registers, here).map_err(at)?
    } else {
        let outputs = output_registers(s, out, &inputs, &registers, here).map_err(at)?;
        vec![Part {
            kernels: 0..out,
            groups,
            inputs,
            outputs,
            registers,
            group: None,
        }]
    };
    let approximation = match (s.approximation, s.depth) {
        (Some(_), Some(_)) => {
            return Err(at(Misplaced::at(
                &here("depth"),
                NetworkProblem::DepthAndApproximation,
            )))
        }
        (Some(a), None) => a,
        (None, d) => ApproxParams {
            max_depth: d.unwrap_or(DEFAULT_DEPTH),
            max_error: 0.0,
            // Float weights rarely land on multiples of 2^-d: the rounding is the
            // approximation asked for, and its cost is what eval measures.
            accept: true,
        },
    };
    parts
        .into_iter()
        .map(|p| {
            let target = LayerTarget {
                name: match p.group {
                    Some(g) => format!("{weights} group {}", g + 1),
                    None => weights.to_string(),
                },
                inputs: p.inputs,
                outputs: p.outputs,
                registers: p.registers,
                scale: s.scale.unwrap_or(1.0),
                approximation,
            };
            let w = w.slice(s![p.kernels.clone(), .., .., ..]);
            let b = bias.as_ref().map(|b| b.slice(s![p.kernels.clone()]));
            let mut made = layer::layer_spec(w, b, p.groups, &target).map_err(layer_err)?;
            made.spec.search = SearchParams {
                work: Some(DEFAULT_WORK),
                ..SearchParams::default()
            };
            Ok(FromArrays {
                spec: made.spec,
                file: file.clone(),
                bias: if bias.is_some() {
                    made.bias
                } else {
                    Vec::new()
                },
            })
        })
        .collect()
}
