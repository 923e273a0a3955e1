//! `scamp run` as one library call: a program's runs over run seeds and, when asked,
//! its noisy runs against ideal ones on every scene, assembled into the report that
//! `scamp run --json` prints (the command line and `scamp.compare` both call it).

use super::setup::Setup;
use super::simulate::{runs, Frame, NoiseInfo, RunOptions, RunSummary};
use crate::isa::Program;
use crate::sim::capture::GreyImage;
use crate::sim::run::RunReport;
use crate::verify::compare::{CompareError, CompareOptions, MapSink, Watched};

/// What to run: the program, its first array, the run options and what to watch.
pub struct RunPlan<'a> {
    /// The program.
    pub program: &'a Program,
    /// The array of every run (each run starts from a fresh copy); a comparison runs
    /// on it with each scene in place of its own.
    pub setup: &'a Setup,
    /// Profile, seeds, repetitions, clock and readout.
    pub opts: &'a RunOptions,
    /// The registers whose figures are reported.
    pub watched: &'a [Watched],
    /// Runs over seeds `seed`, `seed + 1`, ...
    pub runs: u32,
    /// The profile as the user named it (shown when the profile has no name).
    pub noise_name: &'a str,
    /// With the scenes and their options: `run --compare`.
    pub compare: Option<(&'a [(String, GreyImage)], CompareOptions)>,
}

/// The report of a plan, and its first run kept whole (its planes, to save).
pub struct RunResult {
    /// What `scamp run --json` prints.
    pub summary: RunSummary,
    /// The first run.
    pub first: Frame,
}

/// Runs `plan`; `warnings` turns the first run's report into positioned warnings, and
/// `on_map` receives the comparison's difference maps.
pub fn run_plan(
    plan: &RunPlan,
    warnings: &dyn Fn(&RunReport) -> Vec<String>,
    on_map: Option<MapSink>,
) -> Result<RunResult, CompareError> {
    let fresh = || Ok::<_, CompareError>(plan.setup.array());
    let runs = runs::<CompareError>(plan.program, &fresh, plan.opts, plan.watched, plan.runs)?;
    let comparison = match &plan.compare {
        Some((scenes, compare_opts)) => {
            let per_scene = |img: &GreyImage| Setup {
                scene: img.clone(),
                ..plan.setup.clone()
            };
            Some(crate::verify::compare_ranges::compare_with_ranges(
                plan.program,
                &plan.opts.profile,
                scenes,
                &|img| per_scene(img).array(),
                compare_opts,
                on_map,
            )?)
        }
        None => None,
    };
    let profile = &plan.opts.profile;
    let noise = NoiseInfo {
        profile: if profile.name.is_empty() {
            plan.noise_name.to_string()
        } else {
            profile.name.clone()
        },
        seed: plan.opts.seed,
        chip_seed: plan.opts.chip_seed,
        readout: profile.readout.enabled && !plan.opts.raw,
    };
    let warnings = warnings(&runs.first.report);
    Ok(RunResult {
        summary: RunSummary::of(&runs, noise, warnings, comparison),
        first: runs.first,
    })
}
