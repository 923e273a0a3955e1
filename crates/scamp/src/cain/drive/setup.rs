//! The compile driver's settings: what a spec and the command-line options resolve to
//! before any group is searched (registers, approximations, profile and range limit,
//! workers and budget).

use crate::cain::moves::goal::Goal;
use crate::cain::options::{
    DEFAULT_MEMORY_LIMIT_MB, DEFAULT_SEED, DEFAULT_SLACK, DEFAULT_TIME_LIMIT,
};
use crate::cain::search::SearchOptions;
use crate::cain::spec::{self, Ops, Spec};
use crate::cain::{
    approximate_each, assemble::report, CompileError, CompileOptions, KernelReport, Objective,
    OptionError, OptionProblem,
};
use crate::isa::{Device, Reg, Wiring};
use crate::sim::noise::Profile;
use std::time::Duration;

/// Everything a group compile needs, resolved once for the whole spec.
pub(crate) struct Setup<'a> {
    /// The spec.
    pub(crate) spec: &'a Spec,
    /// Registers the program may use.
    pub(crate) registers: Vec<Reg>,
    /// Per kernel: output register and approximation.
    pub(crate) kernels: Vec<KernelReport>,
    /// Instruction set.
    pub(crate) ops: Ops,
    /// What the search minimises.
    pub(crate) objective: Objective,
    /// Noise profile for the range limit and the error prediction.
    pub(crate) profile: Profile,
    /// The profile's saturation limit.
    pub(crate) limit: f64,
    /// Per kernel: the largest magnitude its exact output reaches.
    pub(crate) outputs: Vec<f64>,
    /// General registers of the device the program runs on.
    pub general: usize,
    /// That device.
    pub(crate) device: Device,
    /// Search options shared by every group (the time limit and range are set per
    /// group).
    pub(crate) search: SearchOptions,
}

impl<'a> Setup<'a> {
    /// Resolves `opts` over `spec`, refusing inconsistent settings.
    pub(crate) fn new(spec: &'a Spec, opts: &CompileOptions) -> Result<Setup<'a>, CompileError> {
        let registers = opts
            .registers
            .clone()
            .unwrap_or_else(|| spec.registers.clone());
        if registers.is_empty() {
            return Err(registers_error(OptionProblem::NoRegisters));
        }
        if let Some(r) = spec.inputs().into_iter().find(|r| !registers.contains(r)) {
            return Err(registers_error(OptionProblem::InputNotUsed(r)));
        }
        if let Some(k) = spec.kernels.iter().find(|k| !registers.contains(&k.out)) {
            return Err(registers_error(OptionProblem::OutputNotUsed(k.out)));
        }
        let mut kernels = approximate_each(spec)?;
        let objective = opts.objective.unwrap_or_default();
        let profile = match &opts.profile {
            Some(p) => p.clone(),
            None => Profile::builtin(crate::sim::noise::DEFAULT_PROFILE).unwrap_or_default(),
        };
        let limit =
            report::saturation_limit(&profile).ok_or_else(|| CompileError::NoSaturation {
                profile: profile.name.clone(),
            })?;
        let mut outputs = crate::cain::output_magnitudes(&kernels, spec.input_range);
        if opts.fit.unwrap_or(spec.fit) {
            let scales: Vec<f64> = spec.kernels.iter().map(|k| k.scale).collect();
            crate::cain::spec::fit::fit(&mut kernels, &mut outputs, &scales, limit);
        }
        let general = Reg::general_count(&registers);
        let workers = opts.workers.or(spec.search.workers).unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(spec::MAX_WORKERS))
        });
        // The rules of the flags and spec keys again: a `Spec` built in code was never
        // parsed.
        spec::WORKERS
            .check(workers as i128)
            .map_err(|e| OptionError::new("workers", e))?;
        let seconds = opts
            .time_limit
            .or(spec.search.time_limit)
            .unwrap_or(DEFAULT_TIME_LIMIT);
        spec::check_time_limit(seconds).map_err(|e| OptionError::new("time_limit", e))?;
        let search = SearchOptions {
            time_limit: Duration::from_secs_f64(seconds.max(0.001)),
            node_limit: opts.node_limit.or(spec.search.node_limit),
            workers,
            seed: opts.seed.or(spec.search.seed).unwrap_or(DEFAULT_SEED),
            memory_limit: opts
                .memory_limit_mb
                .or(spec.search.memory_limit_mb)
                .unwrap_or(DEFAULT_MEMORY_LIMIT_MB)
                .saturating_mul(1 << 20),
            work: opts.work.or(spec.search.work),
            shared: false,
            slack: match objective {
                Objective::Length => 0.0,
                Objective::Error => opts.slack.unwrap_or(DEFAULT_SLACK).max(0.0),
            },
            range: None,
            clip: None,
            tuning: crate::cain::search::tuning::Tuning::default(),
        };
        Ok(Setup {
            spec,
            registers,
            kernels,
            ops: opts.ops.or(spec.search.ops).unwrap_or_default(),
            objective,
            profile,
            limit,
            outputs,
            general,
            device: Device { general },
            search,
        })
    }

    /// The limit the values of a group computing `members` are held to: the
    /// saturation limit, or the largest output magnitude where an output cannot fit
    /// (it clips whatever the program does, so its intermediates are held to its own
    /// magnitude rather than rejected outright).
    pub(crate) fn held_to(&self, members: &[usize]) -> f64 {
        members
            .iter()
            .filter_map(|&i| self.outputs.get(i).copied())
            .fold(self.limit, f64::max)
    }

    /// Every input as a goal at `depth` (2^depth atoms at the centre of its channel)
    /// with the register it starts in, the first input's first.
    pub(crate) fn input_goals(&self, depth: u32) -> Vec<(Goal, Reg)> {
        self.spec
            .inputs()
            .into_iter()
            .enumerate()
            .map(|(z, r)| (Goal::input(z as u8, depth), r))
            .collect()
    }

    /// The spec's input registers on the register file this compile uses.
    pub(crate) fn wiring(&self) -> Wiring {
        Wiring::planes(&self.spec.inputs(), self.general)
            .unwrap_or_else(|| Wiring::new(self.spec.input, self.general))
    }
}

/// A refused register list.
fn registers_error(problem: OptionProblem) -> CompileError {
    CompileError::Options(OptionError::new("registers", problem))
}
