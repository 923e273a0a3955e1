//! A program as `scamp check` sees it: one or more groups (kernel blocks), each run from
//! the input and holding some of the kernels, and the whole evaluation of such a
//! program: proof, measurement on images, analytic prediction, static range and, when
//! asked, the error ranges over the profile's uncertainty ensemble. A single program is
//! one group holding every kernel, so banks and plain programs share one path.

use super::check::{self, Measurement, ProfileTestbed, Target, Testbed};
use super::kernels::{mismatch_lines, prove_kernels};
use super::planes::PlanesTarget;
use super::predict::{PredictError, Predicted};
use super::range::InputRange;
use super::uncertainty::{RangeError, Ranges};
use crate::isa::{Program, Wiring};
use crate::sim;
use crate::sim::capture::GreyImage;
use crate::sim::noise::Profile;

/// A bank compiled in groups: each group's program runs from the input and leaves the
/// outputs of its kernels (indices into the targets), read out before the next group.
pub type Groups = Vec<(Program, Vec<usize>)>;

/// The lines of the `scamp5_kernel_end` delimiters in program text (outside `//`
/// comments), which end the groups of a bank.
pub(crate) fn kernel_block_ends(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("");
            code.trim_start().starts_with("scamp5_kernel_end")
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// Splits `program` into the blocks that end at the lines `ends` (statements after the
/// last end form one more block, if any).
pub(crate) fn split_blocks(program: &Program, ends: &[usize]) -> Vec<Program> {
    let mut blocks: Vec<Program> = vec![Program { stmts: Vec::new() }; ends.len() + 1];
    for s in &program.stmts {
        let b = ends
            .iter()
            .position(|&e| s.pos.line as usize <= e)
            .unwrap_or(ends.len());
        if let Some(block) = blocks.get_mut(b) {
            block.stmts.push(s.clone());
        }
    }
    if blocks.last().is_some_and(|b| b.stmts.is_empty()) {
        blocks.pop();
    }
    blocks
}

/// Assigns each target of `targets` to the first of `blocks` that proves it (run from
/// the inputs, its output register holds the kernel on every input plane); a target no
/// block proves goes to the last block, whose proof then reports the mismatch.
pub(crate) fn assign_blocks(
    blocks: Vec<Program>,
    wiring: Wiring,
    targets: &[PlanesTarget],
) -> Groups {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    for (i, t) in targets.iter().enumerate() {
        let at = blocks
            .iter()
            .position(|b| prove_kernels(b, wiring, std::slice::from_ref(t), None).is_ok())
            .unwrap_or(blocks.len().saturating_sub(1));
        if let Some(m) = members.get_mut(at) {
            m.push(i);
        }
    }
    blocks.into_iter().zip(members).collect()
}

/// [`check::measure`] for a bank run group by group: each group's kernels are measured on its
/// own program; the figures come back in target order, the border is the widest.
pub(crate) fn measure_groups(
    groups: &Groups,
    wiring: Wiring,
    targets: &[Target],
    images: &[GreyImage],
    testbed: &dyn Testbed,
    runs: u32,
) -> Result<Measurement, sim::run::RunError> {
    let mut border = 0;
    let mut registers = Vec::new();
    let kernels = per_target(groups, targets, |program, ts| {
        let m = check::measure(program, wiring, ts, images, testbed, runs)?;
        border = border.max(m.border);
        let stage = groups
            .iter()
            .position(|(p, _)| std::ptr::eq(p, program))
            .unwrap_or(0);
        registers.extend(m.registers.into_iter().map(|r| r.in_stage(stage)));
        Ok(m.kernels)
    })?;
    Ok(Measurement {
        border,
        images: images.len(),
        runs: runs.max(1),
        kernels,
        registers,
    })
}

/// [`check::predict_on_images`] for a bank run group by group, in target order.
pub(crate) fn predict_groups(
    groups: &Groups,
    wiring: Wiring,
    targets: &[Target],
    images: &[GreyImage],
    profile: &Profile,
    border: usize,
) -> Result<Vec<Predicted>, PredictError> {
    per_target(groups, targets, |program, ts| {
        check::predict_on_images(program, wiring, ts, images, profile, border)
    })
}

/// One group holding every one of `kernels` kernels: how a plain program is checked.
pub(crate) fn single(program: Program, kernels: usize) -> Groups {
    vec![(program, (0..kernels).collect())]
}

/// What `scamp check` asks of an evaluation.
pub(crate) struct Request<'a> {
    /// The program's groups.
    pub(crate) groups: &'a Groups,
    /// The input registers and the device's general registers.
    pub(crate) wiring: Wiring,
    /// Per kernel, what its output must hold exactly on every input plane (the
    /// approximated kernel; one plane for a program of one input).
    pub(crate) planes: &'a [PlanesTarget],
    /// Per kernel, the measured targets (specified and approximated kernels).
    pub(crate) targets: &'a [Target],
    /// Input range of the static range analysis.
    pub(crate) input_range: InputRange,
    /// Test images.
    pub(crate) images: &'a [GreyImage],
    /// Noise profile, chip and run seeds.
    pub(crate) testbed: &'a ProfileTestbed,
    /// Run seeds per image.
    pub(crate) runs: u32,
    /// Whether to measure the ranges over the uncertainty ensemble.
    pub(crate) uncertainty: bool,
}

/// Everything `scamp check` reports about a program.
pub struct Evaluation {
    /// Whether every kernel is proven exactly.
    pub verified: bool,
    /// Where the program departs from the kernels (empty when verified).
    pub mismatch: Vec<String>,
    /// Error figures on the images (only for a verified program).
    pub measurement: Option<Measurement>,
    /// The analytic prediction per kernel (verified programs the predictor handles).
    pub(crate) predicted: Option<Vec<Predicted>>,
    /// The largest magnitude any value reaches for the input range, over all groups.
    pub(crate) peak: Option<f64>,
    /// Error ranges over the uncertainty ensemble, when asked for.
    pub(crate) ranges: Option<Ranges>,
}

/// Why an evaluation stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvaluateError {
    /// The program stopped while running on an image.
    #[error(transparent)]
    Run(#[from] sim::run::RunError),
    /// The uncertainty ensemble could not be measured.
    #[error(transparent)]
    Ranges(#[from] RangeError),
}

/// Where each group departs from its kernels (empty when every group is proven): on
/// the input, or on every input plane for a wiring of several (`prove_kernels`).
pub(crate) fn mismatches(groups: &Groups, wiring: Wiring, planes: &[PlanesTarget]) -> Vec<String> {
    groups
        .iter()
        .flat_map(|(program, members)| {
            mismatch_lines(program, wiring, &members_of(members, planes))
        })
        .collect()
}

/// Proves every group's kernels, then measures, predicts and bounds a verified program.
pub(crate) fn evaluate(r: &Request) -> Result<Evaluation, EvaluateError> {
    let mut mismatch = mismatches(r.groups, r.wiring, r.planes);
    // Proven exact, yet lost in 32-bit floats: refused by name (issue 29).
    if mismatch.is_empty() && !r.images.is_empty() {
        let frame = check::frame(r.images, 0, r.wiring);
        for (program, members) in r.groups {
            let ts = members_of(members, r.targets);
            if let Err(e) = super::precision::check_precision(program, r.wiring, &ts, &frame)? {
                mismatch.push(e.to_string());
            }
        }
    }
    let peak = r
        .groups
        .iter()
        .filter_map(|(p, _)| super::range::peak(p, r.wiring, r.input_range).ok())
        .map(|p| p.magnitude)
        .reduce(f64::max);
    if !mismatch.is_empty() {
        return Ok(Evaluation {
            verified: false,
            mismatch,
            measurement: None,
            predicted: None,
            peak,
            ranges: None,
        });
    }
    let m = measure_groups(r.groups, r.wiring, r.targets, r.images, r.testbed, r.runs)?;
    let predicted = predict_groups(
        r.groups,
        r.wiring,
        r.targets,
        r.images,
        &r.testbed.profile,
        m.border,
    )
    .ok();
    let ranges = if r.uncertainty {
        Some(ranges_of_groups(r)?)
    } else {
        None
    };
    Ok(Evaluation {
        verified: true,
        mismatch,
        measurement: Some(m),
        predicted,
        peak,
        ranges,
    })
}

/// The uncertainty ranges of every group, in kernel order; the ensemble is the
/// profile's, the same for every group.
fn ranges_of_groups(r: &Request) -> Result<Ranges, RangeError> {
    let mut members = Vec::new();
    let kernels = per_target(r.groups, r.targets, |program, ts| {
        let g = super::uncertainty::ranges(program, r.wiring, ts, r.images, r.testbed, r.runs)?;
        members = g.members;
        Ok::<_, RangeError>(g.kernels)
    })?;
    Ok(Ranges { members, kernels })
}

/// Runs `f` on each group's program with that group's targets (`f` gives one result per
/// target it is handed) and returns the results in target order.
pub fn per_target<T: Clone, U, E>(
    groups: &Groups,
    targets: &[T],
    mut f: impl FnMut(&Program, &[T]) -> Result<Vec<U>, E>,
) -> Result<Vec<U>, E> {
    let mut out: Vec<Option<U>> = targets.iter().map(|_| None).collect();
    for (program, members) in groups {
        let results = f(program, &members_of(members, targets))?;
        for (&i, u) in members.iter().zip(results) {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(u);
            }
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// The items of `all` at the indices `members` (in that order).
pub(crate) fn members_of<T: Clone>(members: &[usize], all: &[T]) -> Vec<T> {
    members
        .iter()
        .filter_map(|&i| all.get(i).cloned())
        .collect()
}
