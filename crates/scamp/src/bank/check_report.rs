//! The report of a check: what `scamp check --json` prints, built from an evaluation.

use crate::cain::score::budget::BudgetRow;
use crate::cain::KernelReport;
use crate::sim::{DEFAULT_CLOCK_HZ, PES};
use crate::verify::check::{ErrorSources, FigureSpread, Measurement};
use crate::verify::ensemble::Member;
use crate::verify::groups::{Evaluation, Groups};
use crate::verify::metrics::ErrorFigures;
use crate::verify::predict::Predicted;
use crate::verify::uncertainty::{FigureRange, Ranges};
use serde::Serialize;

/// Everything `check --json` reports.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CheckReport {
    /// Whether every kernel is proven exactly.
    pub verified: bool,
    /// Macros of the program (all groups).
    pub instructions: usize,
    /// Bus instructions of the program (all groups).
    pub cycles: u64,
    /// Time at the default clock, in microseconds.
    pub time_us: f64,
    /// The energy model's figure for one frame as `scamp export` writes it (captures
    /// included), in microjoules: a model from published power figures, not a
    /// measurement (`crate::energy`).
    pub energy_uj_per_frame: f64,
    /// The noise profile as named by the caller.
    pub noise: String,
    /// Pixels excluded on every side of the images.
    pub border: usize,
    /// Number of test images.
    pub(crate) images: usize,
    /// Number of run seeds.
    pub runs: u32,
    /// Figures per kernel (empty when the proof failed).
    pub kernels: Vec<KernelCheck>,
    /// A bank of several groups (none for one program): per group, in the order they
    /// run, each from every input, the kernels it computes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) groups: Vec<CheckGroup>,
    /// Where the program departs from the kernels.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatch: Vec<String>,
    /// The depths a `--max-total-rmse` search compiled and measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) budget: Vec<BudgetRow>,
    /// With a total-RMSE budget: whether the reported program meets it (when no depth
    /// does, the closest program is reported and the check fails).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) budget_met: Option<bool>,
    /// The uncertainty ensemble, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) uncertainty: Option<UncertaintyReport>,
    /// PE-register pairs past the saturation knee (clipped, under a hard clip) while the
    /// program ran (first run, all images, every
    /// group of a bank).
    pub saturated: u64,
    /// `saturated` per PE-register pair the groups write, per image: a fraction.
    pub(crate) saturated_share: f64,
    /// Per stage (group) and register, the share of PE-writes past the profile's knee
    /// and, with saturation lifted, past its limit (first run, every image).
    pub(crate) saturation_by_register: Vec<crate::verify::saturation::RegisterSaturation>,
    /// The program text that was proven and measured.
    pub program: String,
}

/// The figures of one kernel.
#[derive(Clone, Debug, Serialize)]
pub struct KernelCheck {
    /// Output register.
    pub(crate) out: String,
    /// Approximation depth.
    pub(crate) depth: u32,
    /// Integer weights over `2^depth`: `[kh][kw]`, or `[in][kh][kw]` for a kernel of
    /// several inputs.
    pub(crate) approximated: crate::cain::ShownWeights,
    /// Approximated vs specified kernel, exact arithmetic.
    pub(crate) approx: ErrorFigures,
    /// Simulated vs approximated kernel (run 1).
    pub analogue: ErrorFigures,
    /// Simulated vs specified kernel (run 1), with its ensemble range.
    pub(crate) total: TotalFigures,
    /// Mean and spread of the analogue figures over runs.
    pub(crate) analogue_runs: FigureSpread,
    /// Mean and spread of the total figures over runs.
    pub(crate) total_runs: FigureSpread,
    /// PE-register pairs clipped while the kernel's group ran (run 1).
    pub(crate) saturated: u64,
    /// Total error split by source.
    pub(crate) sources: ErrorSources,
    /// Analytic prediction of the analogue error (noise, gain, offset), with the
    /// images' input moments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) predicted: Option<Predicted>,
    /// Largest magnitude any value of the program reaches for the spec's input range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) peak: Option<f64>,
}

/// The total error, with its range over the uncertainty ensemble when asked for.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct TotalFigures {
    /// The figures of run 1.
    #[serde(flatten)]
    pub(crate) figures: ErrorFigures,
    /// Lowest and highest RMSE over the accepted ensemble members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rmse_range: Option<[f64; 2]>,
    /// Lowest and highest bias over the accepted ensemble members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bias_range: Option<[f64; 2]>,
    /// The range over the nominal profile and the members that move only the register
    /// range (knee and limit): the saturation share of the spread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) saturation_range: Option<FigureRange>,
}

/// How many ensemble members were drawn and which failed the measurements.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub(crate) struct UncertaintyReport {
    /// Members drawn.
    pub(crate) members: usize,
    /// Members that reproduce the device experiments.
    pub(crate) accepted: usize,
    /// Every member with its verdict.
    pub(crate) ensemble: Vec<Member>,
}

/// One group of a bank as `check --json` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct CheckGroup {
    /// 1-based numbers of the kernels it computes.
    pub(crate) kernels: Vec<usize>,
    /// Their output registers.
    pub(crate) outs: Vec<String>,
    /// Its macros.
    pub(crate) instructions: usize,
}

/// The groups of a bank of several (none for one program).
fn groups_of(
    groups: &[(crate::isa::Program, Vec<usize>)],
    kernels: &[KernelReport],
) -> Vec<CheckGroup> {
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
        .iter()
        .map(|(p, members)| CheckGroup {
            kernels: members.iter().map(|k| k + 1).collect(),
            outs: members
                .iter()
                .filter_map(|&k| kernels.get(k))
                .map(|k| k.out.to_string())
                .collect(),
            instructions: p.instructions(),
        })
        .collect()
}

/// What a report is built from besides the evaluation.
pub(crate) struct ReportInputs<'a> {
    /// The program's groups.
    pub(crate) groups: &'a Groups,
    /// Per kernel, its approximation.
    pub(crate) kernels: &'a [KernelReport],
    /// The program text.
    pub(crate) text: &'a str,
    /// The noise profile as named by the caller.
    pub(crate) noise: &'a str,
    /// Number of test images.
    pub(crate) images: usize,
    /// Number of run seeds.
    pub(crate) runs: u32,
    /// The depth search's rows, if one chose the program.
    pub(crate) budget: &'a [BudgetRow],
    /// Whether the depth search met its budget.
    pub(crate) budget_met: Option<bool>,
    /// The energy model's figure for one frame.
    pub(crate) energy_uj_per_frame: f64,
}

impl CheckReport {
    /// The report of evaluation `e`.
    pub(crate) fn of(i: &ReportInputs, e: &Evaluation) -> CheckReport {
        let cycles: u64 = i.groups.iter().map(|(p, _)| p.cycles()).sum();
        let m = e.measurement.as_ref();
        // Kernels of one group share its run, so each group's count is taken once.
        let saturated: u64 = m.map_or(0, |m| {
            i.groups
                .iter()
                .filter_map(|(_, members)| members.first().and_then(|&k| m.kernels.get(k)))
                .map(|k| k.saturated)
                .sum()
        });
        // A PE-register pair counts once per image and group, so the share is taken
        // over the registers each group writes: at most 1.
        let registers: usize = i
            .groups
            .iter()
            .map(|(p, _)| p.written_registers().len().max(1))
            .sum();
        let slots = (PES * i.images.max(1) * registers.max(1)) as f64;
        CheckReport {
            verified: e.verified,
            instructions: i.groups.iter().map(|(p, _)| p.instructions()).sum(),
            cycles,
            time_us: cycles as f64 * 1e6 / DEFAULT_CLOCK_HZ,
            energy_uj_per_frame: i.energy_uj_per_frame,
            noise: i.noise.to_string(),
            border: m.map_or(0, |m| m.border),
            images: i.images,
            runs: i.runs,
            kernels: kernels_of(i.kernels, m, e),
            uncertainty: e.ranges.as_ref().map(|r| UncertaintyReport {
                members: r.members.len(),
                accepted: r.accepted(),
                ensemble: r.members.clone(),
            }),
            saturated,
            saturated_share: saturated as f64 / slots,
            saturation_by_register: m.map_or_else(Vec::new, |m| m.registers.clone()),
            groups: groups_of(i.groups, i.kernels),
            mismatch: e.mismatch.clone(),
            budget: i.budget.to_vec(),
            budget_met: i.budget_met,
            program: i.text.to_string(),
        }
    }

    /// Whether the check passed: proven, and within the budget when one was given.
    pub fn passed(&self) -> bool {
        self.verified && self.budget_met != Some(false)
    }
}

fn kernels_of(
    kernels: &[KernelReport],
    m: Option<&Measurement>,
    e: &Evaluation,
) -> Vec<KernelCheck> {
    let Some(m) = m else {
        return Vec::new();
    };
    let ranges: Option<&Ranges> = e.ranges.as_ref();
    kernels
        .iter()
        .zip(&m.kernels)
        .enumerate()
        .map(|(i, (k, f))| KernelCheck {
            out: k.out.to_string(),
            depth: k.approx.depth,
            approximated: k.approx.shown(),
            approx: f.approx,
            analogue: f.analogue,
            total: TotalFigures {
                figures: f.total,
                rmse_range: ranges.and_then(|r| r.kernels.get(i)).map(|k| k.rmse),
                bias_range: ranges.and_then(|r| r.kernels.get(i)).map(|k| k.bias),
                saturation_range: ranges.and_then(|r| r.kernels.get(i)).map(|k| k.saturation),
            },
            analogue_runs: f.analogue_runs,
            total_runs: f.total_runs,
            saturated: f.saturated,
            sources: f.sources,
            predicted: e.predicted.as_ref().and_then(|p| p.get(i).copied()),
            peak: e.peak,
        })
        .collect()
}
