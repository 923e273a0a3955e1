//! The report of a compiled spec: what `scamp compile --json` prints. Fields are in
//! alphabetical order, the order the command has always printed them in.

use crate::cain::{self, Compiled, Spec};
use serde::Serialize;

/// Everything `compile --json` reports about a compiled spec.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CompileReport {
    /// Bus instructions of the whole program.
    pub cycles: u64,
    /// The groups of a bank (one for a single program).
    pub(crate) groups: Vec<GroupReport>,
    /// Macros of the whole program.
    pub instructions: usize,
    /// Per kernel: its approximation, prediction and range.
    pub kernels: Vec<CompiledKernel>,
    /// The noise profile's name.
    pub(crate) noise: String,
    /// `error` or `length`.
    pub(crate) objective: &'static str,
    /// The program text (groups separated by kernel-block markers).
    pub(crate) program: String,
    /// The register range the program was held to.
    pub(crate) range: RangeJson,
    /// What the search did.
    pub search: SearchJson,
    /// How the kernels were split into groups.
    pub(crate) split: SplitJson,
}

/// How a spec's kernels were split into groups: the fewest groups of whole kernels
/// whose constructive programs fit the registers, every group keeping every input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SplitJson {
    /// `none` (one program) or `kernel` (groups of whole kernels, outputs read out
    /// after each group).
    pub(crate) by: &'static str,
    /// Number of groups.
    pub(crate) groups: usize,
    /// Input registers, held by every group.
    pub(crate) inputs: usize,
    /// The most kernels in one group.
    pub(crate) kernels_per_group: usize,
    /// Registers the program may use.
    pub(crate) registers: usize,
}

impl SplitJson {
    /// The split of `compiled`, compiled from `spec`.
    pub fn of(spec: &Spec, compiled: &Compiled) -> SplitJson {
        let groups = compiled.groups.len().max(1);
        SplitJson {
            by: if groups > 1 { "kernel" } else { "none" },
            groups,
            inputs: spec.inputs().len(),
            kernels_per_group: compiled
                .groups
                .iter()
                .map(|g| g.kernels.len())
                .max()
                .unwrap_or(compiled.kernels.len()),
            registers: compiled.registers.len(),
        }
    }

    /// One line saying how the kernels were split, for a bank of several groups.
    pub fn line(&self) -> Option<String> {
        (self.groups > 1).then(|| {
            format!(
                "split by kernel into {} groups of at most {} kernels: the fewest whose \
                 constructive programs fit {} registers, {} of them holding the input{}",
                self.groups,
                self.kernels_per_group,
                self.registers,
                self.inputs,
                if self.inputs == 1 { "" } else { "s" }
            )
        })
    }
}

/// One kernel of a compiled spec.
#[derive(Clone, Debug, Serialize)]
pub struct CompiledKernel {
    /// Sum of absolute weight differences of the approximation.
    pub(crate) approx_error: f64,
    /// Integer weights over `2^depth`: `[kh][kw]`, or `[in][kh][kw]` for a kernel of
    /// several inputs.
    pub approximated: crate::cain::ShownWeights,
    /// Approximation depth.
    pub(crate) depth: u32,
    /// Whether the kernel's exact output fits the register range.
    pub(crate) fits: bool,
    /// The rescale `compile --fit` applied, if any.
    pub(crate) fitted: Option<crate::cain::spec::fit::Fitted>,
    /// The largest scale at which the output fits (`null` for an all-zero kernel).
    pub(crate) largest_fitting_scale: Option<f64>,
    /// Output register.
    pub(crate) out: String,
    /// The largest magnitude the exact output reaches for the input range.
    pub(crate) output_peak: f64,
    /// The largest magnitude any value of the program reaches.
    pub(crate) peak: f64,
    /// The analytic error prediction under the profile.
    pub(crate) predicted: PredictedJson,
}

/// The predicted error of one kernel.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct PredictedJson {
    /// Mean of the error.
    pub(crate) bias: f64,
    /// Root mean square error.
    pub(crate) rmse: f64,
}

/// One group of a compiled bank.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub(crate) struct GroupReport {
    /// Its bus instructions.
    pub(crate) cycles: u64,
    /// Its macros.
    pub(crate) instructions: usize,
    /// 1-based numbers of the kernels it computes.
    pub(crate) kernels: Vec<usize>,
    /// Their output registers.
    pub(crate) outs: Vec<String>,
    /// The largest magnitude its values reach.
    pub(crate) peak: f64,
    /// `search` or `fallback`.
    pub(crate) source: &'static str,
}

/// The register range of a compiled program.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct RangeJson {
    /// The limit intermediates were held to.
    pub(crate) held_to: f64,
    /// The spec's input range `[lo, hi]`.
    pub(crate) input_range: [f64; 2],
    /// The profile's saturation limit.
    pub(crate) limit: f64,
    /// The largest magnitude any value reaches.
    pub(crate) peak: f64,
}

/// The search figures of a compile.
#[derive(Clone, Debug, Serialize)]
pub struct SearchJson {
    /// Nodes expanded.
    pub(crate) nodes: u64,
    /// Per group, its phases in order: the constructive program, then the search's.
    pub(crate) phases: Vec<PhaseJson>,
    /// Plans that reached the input.
    pub(crate) plans_found: u64,
    /// Children the search took, by the generator rule that made them (counted as egg
    /// counts rewrites; rules never applied left out).
    pub(crate) rules: std::collections::BTreeMap<String, u64>,
    /// Seconds the search ran.
    pub seconds: f64,
    /// Seconds until the kept program was found.
    pub seconds_to_best: f64,
    /// `search` or `fallback`.
    pub(crate) source: &'static str,
    /// Why the search stopped.
    pub(crate) stopped_by: &'static str,
    /// Deterministic work budget, if any.
    pub(crate) work: Option<u64>,
    /// Workers used.
    pub(crate) workers: usize,
}

/// What one phase of a group's search found.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct PhaseJson {
    /// Instructions of its best program (`null`: none found).
    pub(crate) best_instructions: Option<usize>,
    /// Predicted error of its best program (root of the summed predicted mean squared
    /// error of the group's outputs; `null` where it was not predicted).
    pub(crate) best_predicted_rmse: Option<f64>,
    /// The group (1-based).
    pub(crate) group: usize,
    /// Whether the group's chosen program is one this phase found.
    pub(crate) kept: bool,
    /// `constructive`, `length`, `error` or `reroute`.
    pub(crate) name: &'static str,
    /// Nodes it expanded.
    pub(crate) nodes: u64,
    /// Seconds it ran.
    pub(crate) seconds: f64,
}

impl PhaseJson {
    /// The JSON of `p`.
    fn of(p: &cain::PhaseReport) -> PhaseJson {
        PhaseJson {
            best_instructions: p.best_instructions,
            best_predicted_rmse: p.best_predicted_rmse,
            group: p.group,
            kept: p.kept,
            name: p.name,
            nodes: p.nodes,
            seconds: p.seconds,
        }
    }
}

impl CompileReport {
    /// The report of `compiled`, compiled from `spec`.
    pub fn of(spec: &Spec, compiled: &Compiled) -> CompileReport {
        let r = &compiled.range;
        let kernels = compiled
            .kernels
            .iter()
            .zip(&compiled.predicted)
            .zip(&r.outputs)
            .zip(&r.largest_fitting_scale)
            .map(|(((k, p), &output_peak), &fit)| CompiledKernel {
                approx_error: k.approx.error,
                approximated: k.approx.shown(),
                depth: k.approx.depth,
                fits: output_peak <= r.limit + 1e-9,
                fitted: k.fitted,
                largest_fitting_scale: fit.is_finite().then_some(fit),
                out: k.out.to_string(),
                output_peak,
                peak: r.peak.magnitude,
                predicted: PredictedJson {
                    bias: p.bias,
                    rmse: p.rmse,
                },
            })
            .collect();
        let groups = compiled
            .groups
            .iter()
            .map(|g| GroupReport {
                cycles: g.program.cycles(),
                instructions: g.program.instructions(),
                kernels: g.kernels.iter().map(|k| k + 1).collect(),
                outs: g
                    .kernels
                    .iter()
                    .filter_map(|&k| compiled.kernels.get(k))
                    .map(|k| k.out.to_string())
                    .collect(),
                peak: g.peak.magnitude,
                source: g.source.name(),
            })
            .collect();
        let s = &compiled.search;
        CompileReport {
            cycles: compiled.program.cycles(),
            groups,
            instructions: compiled.program.instructions(),
            kernels,
            noise: compiled.profile.clone(),
            objective: compiled.objective.name(),
            program: cain::program_text(compiled),
            range: RangeJson {
                held_to: r.held_to,
                input_range: [spec.input_range.lo, spec.input_range.hi],
                limit: r.limit,
                peak: r.peak.magnitude,
            },
            search: SearchJson {
                nodes: s.nodes,
                phases: s.phases.iter().map(PhaseJson::of).collect(),
                plans_found: s.plans_found,
                rules: s.rules.clone(),
                seconds: s.seconds,
                seconds_to_best: s.seconds_to_best,
                source: s.source.name(),
                stopped_by: s.stop.name(),
                work: s.work,
                workers: s.workers,
            },
            split: SplitJson::of(spec, compiled),
        }
    }
}
