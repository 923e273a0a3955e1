//! A stage given as arrays rather than a spec file: `weights: FILE.npy` in PyTorch's
//! `Conv2d` layout `[out, in/groups, kh, kw]`, an optional `bias: FILE.npy`, `groups`,
//! and `depth` or `approximation:`, turned into a kernel spec by
//! [`crate::cain::spec::layer`], with registers chosen unless the stage names them.

use super::{NetworkError, RawStage, Source};
use crate::cain::spec::layer::{self, LayerError, LayerTarget};
use crate::cain::spec::{ApproxParams, SearchParams};
use crate::cain::Spec;
use crate::isa::yaml::{Misplaced, Step};
use crate::isa::Reg;
use std::path::PathBuf;

/// The default approximation depth of a stage from arrays: weights are multiples of
/// 1/16, and the sweep of `scamp eval` reports every smaller depth too.
pub const DEFAULT_DEPTH: u32 = 4;

/// The generator's work budget for a stage from arrays: the same program on every
/// machine.
pub const DEFAULT_WORK: u64 = 3000;

/// The general registers in order.
const GENERAL: [Reg; 6] = [Reg::A, Reg::B, Reg::C, Reg::D, Reg::E, Reg::F];

/// A stage's spec built from its arrays, with the bias per output (in the units of
/// the output register).
pub struct FromArrays {
    /// The spec.
    pub spec: Spec,
    /// The weights file (for messages).
    pub file: PathBuf,
    /// Per output, the bias (empty without one).
    pub bias: Vec<f64>,
}

fn regs(names: &[String], path: &[Step]) -> Result<Vec<Reg>, Misplaced> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            Reg::parse(n).filter(|r| r.is_general()).ok_or_else(|| {
                let mut p = path.to_vec();
                p.push(Step::Index(i));
                Misplaced::at(&p, format!("`{n}` is not a general register (A..F)"))
            })
        })
        .collect()
}

/// The spec of stage `index` from its `weights:` (the previous stage's first output,
/// `previous`, is its input unless it names one).
pub fn from_arrays(
    s: &RawStage,
    weights: &str,
    previous: Option<Reg>,
    source: &Source,
    here: &dyn Fn(&'static str) -> Vec<Step>,
    at: &dyn Fn(Misplaced) -> NetworkError,
) -> Result<FromArrays, NetworkError> {
    let Source::Dir(dir) = source else {
        return Err(at(Misplaced::at(
            &here("weights"),
            "a bundled network cannot name weight files",
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
    let input = match &s.input {
        Some(r) => regs(std::slice::from_ref(r), &here("input")).map_err(at)?[0],
        None => previous.unwrap_or(Reg::A),
    };
    let outputs = match &s.outputs {
        Some(r) => regs(r, &here("outputs")).map_err(at)?,
        None => registers
            .iter()
            .copied()
            .filter(|&r| r != input)
            .take(w.dim().0)
            .collect(),
    };
    let approximation = match (s.approximation, s.depth) {
        (Some(_), Some(_)) => {
            return Err(at(Misplaced::at(
                &here("depth"),
                "give `depth` or `approximation`, not both",
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
        inputs: vec![input],
        outputs,
        registers,
        scale: s.scale.unwrap_or(1.0),
        approximation,
    };
    let mut made = layer::layer_spec(
        w.view(),
        bias.as_ref().map(|b| b.view()),
        s.groups.unwrap_or(1),
        &target,
    )
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
