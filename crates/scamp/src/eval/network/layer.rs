//! A stage given as arrays rather than a spec file: `weights: FILE.npy` in PyTorch's
//! `Conv2d` layout `[out, in/groups, kh, kw]`, an optional `bias: FILE.npy`, `groups`,
//! and `depth` or `approximation:`, turned into a kernel spec by
//! [`crate::cain::spec::layer`], with registers chosen unless the stage names them.

use super::problem::NetworkProblem;
use super::{NetworkError, RawStage, Source};
use crate::cain::spec::layer::{self, LayerError, LayerTarget};
use crate::cain::spec::{ApproxParams, SearchParams};
use crate::cain::Spec;
use crate::isa::yaml::{Misplaced, Step};
use crate::isa::Reg;
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

/// The spec of stage `index` from its `weights:` (the previous stage's outputs,
/// `previous`, are its inputs unless it names them).
pub(super) fn from_arrays(
    s: &RawStage,
    weights: &str,
    previous: &[Reg],
    source: &Source,
    here: &dyn Fn(&'static str) -> Vec<Step>,
    at: &dyn Fn(Misplaced<NetworkProblem>) -> NetworkError,
) -> Result<FromArrays, NetworkError> {
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
    let registers = match &s.registers {
        Some(r) => regs(r, &here("registers")).map_err(at)?,
        None => GENERAL.to_vec(),
    };
    let groups = s.groups.unwrap_or(1);
    let channels = w.dim().1.saturating_mul(groups);
    let inputs = input_registers(s, channels, previous, here).map_err(at)?;
    let outputs = output_registers(s, w.dim().0, &inputs, &registers, here).map_err(at)?;
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
    let target = LayerTarget {
        name: weights.to_string(),
        inputs,
        outputs,
        registers,
        scale: s.scale.unwrap_or(1.0),
        approximation,
    };
    let mut made = layer::layer_spec(w.view(), bias.as_ref().map(|b| b.view()), groups, &target)
        .map_err(layer_err)?;
    made.spec.search = SearchParams {
        work: Some(DEFAULT_WORK),
        ..SearchParams::default()
    };
    let has_bias = bias.is_some();
    Ok(FromArrays {
        spec: made.spec,
        file,
        bias: if has_bias { made.bias } else { Vec::new() },
    })
}
