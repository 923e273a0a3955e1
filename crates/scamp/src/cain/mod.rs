//! The embedded Cain code generator: filter specs in, shortest SCAMP-5 programs out.
//!
//! The pipeline: [`spec::parse_spec`] reads a filter spec; [`spec::approx::approximate_planes`]
//! turns each kernel into integer weights over 2^d; the kernels become goals (atoms per
//! offset, all at the largest depth D) and `search::search` looks backwards from the
//! bag of final goals to the input goal (2^D atoms at the centre), trying
//! `moves::reverse`-applied instructions ranked by `search::heuristic`; each plan
//! found gets registers from `assemble::alloc`, becomes a [`crate::isa::Program`]
//! through the instruction table (`assemble::emit`) and is proven by
//! [`crate::verify::proof::prove`] before it counts.
//!
//! The folders, in pipeline order:
//!
//! | folder | what it holds |
//! | --- | --- |
//! | `spec` | the spec format (`spec::yaml`), the weight approximation (`spec::approx`) and the rescale of kernels that cannot fit (`spec::fit`) |
//! | `moves` | the move set: atoms and goal bags (`moves::goal`), instructions on goals (`moves::step`), instructions applied in reverse (`moves::reverse`), each by a named rule counted per search (`moves::rule`) |
//! | `search` | the backward search: its options and reports (`search/options.rs`), one worker's deque walk (`search/worker.rs`), running the workers (`search/run.rs`), polishing finished plans (`search/polish.rs`), its heuristic (`search::heuristic`), the window re-search (`search::window`) and the tuning knobs with their defaults (`search::tuning`) |
//! | `score` | the error objective (`score::objective`), the clipping a plan causes on the bundled images (`score::clipping`) and the error-budget search over depths (`score::budget`) |
//! | `drive` | one compile: resolved settings (`drive::setup`), banks split into groups (`drive::group`), the constructive fallback (`drive::fallback`), the per-group race (`drive::race`) of the search's phases (`drive::phase`) run by `drive::pipeline`, and the final choice (`drive::choice`) |
//! | `assemble` | register allocation (`assemble::alloc`), program text from the instruction table (`assemble::emit`) and the report above a program (`assemble::report`) |

pub(crate) mod assemble;
pub(crate) mod choose;
pub(crate) mod drive;
mod error;
pub(crate) mod moves;
pub(crate) mod options;
pub(crate) mod score;
pub(crate) mod search;
pub(crate) mod spec;

#[cfg(test)]
mod tests;

// The generator's surface: compile, its options, reports and errors, the spec format.
pub(crate) use assemble::report::predict_outputs;
pub(crate) use assemble::report::saturation_limit;
pub use assemble::report::{header, program_text};
pub use error::CompileError;
pub(crate) use error::{ApproxFailure, GeneratorBug};
pub use options::{CompileOptions, OptionError, OptionProblem};
pub use search::{Stats, StopReason};
#[cfg(test)]
pub(crate) use spec::approx::approximate;
pub(crate) use spec::approx::Approx;
pub use spec::approx::ShownWeights;
// Plumbing the command line and the Python bindings share: each search parameter's
// declared range (their flags and keywords are checked against it), a layer's files and
// the choice of depth per kernel of a layer.
pub use choose::{choose_layer, ChooseError, ChooseOptions};
pub use spec::{check_slack, check_time_limit, ApproxParams, RangeError, Whole, MAX_SIDE};
pub use spec::{parse_spec, parse_spec_in, Ops, Spec, SpecProblem};

// The search's goals and moves: internals its own tests (cain/tests/) drive.
#[cfg(test)]
pub(crate) use moves::goal::{Bag, Goal};
#[cfg(test)]
pub(crate) use moves::reverse::{expand, Ctx};
pub use options::{parse_registers, OptionDecl, COMPILE_OPTIONS};
#[cfg(test)]
pub(crate) use spec::approx::goal_of;
pub use spec::approx::DEEPEST;
pub use spec::layer::{layer_spec, read_bias, read_weights, spec_yaml, LayerError, LayerTarget};

use crate::isa::{Program, Reg};
use crate::sim::noise::Profile;
use crate::verify::check;
use crate::verify::predict::Predicted;
use crate::verify::proof::Target;
use crate::verify::range::{InputRange, Peak};
use drive::race::GroupClock;
use drive::setup::Setup;
use std::time::{Duration, Instant};

/// What the search minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Objective {
    /// The shortest program (ties: fewer cycles).
    Length,
    /// Among programs within the slack of the shortest found, the lowest predicted
    /// error (root of the summed predicted mean squared error of the outputs).
    #[default]
    Error,
}

impl Objective {
    /// `length` or `error`, as the command line and the JSON reports spell it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Objective::Length => "length",
            Objective::Error => "error",
        }
    }
}

impl std::str::FromStr for Objective {
    type Err = crate::ValueError;

    /// Reads `Objective::name` back: `length` or `error`.
    fn from_str(s: &str) -> Result<Objective, crate::ValueError> {
        match s {
            "length" => Ok(Objective::Length),
            "error" => Ok(Objective::Error),
            _ => Err(crate::ValueError::Unknown {
                what: "objective",
                given: s.to_string(),
                expected: "length or error",
            }),
        }
    }
}

/// The register range a program was held to.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RangeReport {
    /// The saturation limit (smallest magnitude of the profile's limits).
    pub limit: f64,
    /// The limit intermediates were held to: `limit`, or the largest output magnitude
    /// where an output cannot fit.
    pub(crate) held_to: f64,
    /// Per kernel: the largest magnitude its exact output reaches.
    pub outputs: Vec<f64>,
    /// Per kernel: the largest scale at which its output fits the limit.
    pub largest_fitting_scale: Vec<f64>,
    /// The largest magnitude any value of the program reaches.
    pub peak: Peak,
}

impl RangeReport {
    /// Whether every kernel's exact output fits the limit.
    pub fn outputs_fit(&self) -> bool {
        self.outputs.iter().all(|&m| m <= self.limit + 1e-9)
    }
}

/// One kernel's approximation, as reported.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct KernelReport {
    /// Output register.
    pub out: Reg,
    /// Depth, integer weights and error.
    pub approx: Approx,
    /// Where `fit` rescaled the kernel to bring its output within the register range:
    /// the scale used (the approximation then computes the spec's weights at it).
    pub fitted: Option<spec::fit::Fitted>,
}

/// Figures of the search that produced a program.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SearchReport {
    /// Nodes expanded.
    pub nodes: u64,
    /// Seconds from the start until the program was found.
    pub seconds_to_best: f64,
    /// Seconds the search ran.
    pub(crate) seconds: f64,
    /// Plans that reached the input.
    pub(crate) plans_found: u64,
    /// Why the search stopped.
    pub stop: StopReason,
    /// Workers used.
    pub(crate) workers: usize,
    /// Which generator made the program (`Fallback` if any group's is constructive;
    /// see [`Group::source`]).
    pub source: Source,
    /// Deterministic work budget (nodes per worker), if the search ran in that mode.
    pub work: Option<u64>,
    /// Ordering seed.
    pub(crate) seed: u64,
    /// Children the search took, by the generator rule that made them (rule names of
    /// [`moves::rule::Rule::name`], alphabetical; rules never applied left out).
    pub rules: std::collections::BTreeMap<String, u64>,
    /// Per group, its phases in order (see `drive::phase`).
    pub phases: Vec<PhaseReport>,
}

/// What one phase of a group's search found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PhaseReport {
    /// The group (1-based, in [`Compiled::groups`] order).
    pub group: usize,
    /// `constructive` (the constructive program), `length`, `error` or `reroute`.
    pub name: &'static str,
    /// Nodes it expanded.
    pub nodes: u64,
    /// Seconds it ran.
    pub(crate) seconds: f64,
    /// Instructions of its best program, if it found one.
    pub best_instructions: Option<usize>,
    /// Predicted error of its best program (root of the summed predicted mean squared
    /// error of the group's outputs), where it was predicted.
    pub best_predicted_rmse: Option<f64>,
    /// Whether the group's chosen program is one this phase found.
    pub kept: bool,
}

/// Which generator made a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The search found it (shorter than the constructive program).
    Search,
    /// The constructive program of `drive::fallback` (the search found nothing shorter).
    Fallback,
}

impl Source {
    /// Lower-case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Source::Search => "search",
            Source::Fallback => "fallback",
        }
    }
}

/// One group of a bank: a program that starts from the input and leaves the outputs
/// of its kernels, which are read out before the next group runs.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// Indices into [`Compiled::kernels`] of the kernels it computes.
    pub(crate) kernels: Vec<usize>,
    /// Its program.
    pub(crate) program: Program,
    /// Which generator made it.
    pub(crate) source: Source,
    /// The largest magnitude its values reach.
    pub(crate) peak: Peak,
}

/// A compiled, proven program and what it computes.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The program: every group's statements one after another (one group: the
    /// program itself). A bank of several groups is run group by group, each from the
    /// input: see [`program_text`].
    pub program: Program,
    /// The groups, in order (one for a spec whose kernels fit one program).
    pub(crate) groups: Vec<Group>,
    /// Per kernel: output register and approximation.
    pub kernels: Vec<KernelReport>,
    /// Search figures.
    pub search: SearchReport,
    /// Instruction set used.
    pub(crate) ops: Ops,
    /// Registers the program was allowed to use.
    pub(crate) registers: Vec<Reg>,
    /// Register holding the input image.
    pub(crate) input: Reg,
    /// Range of the values the program holds.
    pub range: RangeReport,
    /// Per kernel, the predicted error under the profile for inputs like the bundled
    /// images (`score::objective::input_stats`).
    pub predicted: Vec<Predicted>,
    /// The objective the program was chosen by.
    pub(crate) objective: Objective,
    /// The name of the profile used.
    pub profile: String,
}

impl KernelReport {
    /// What a program must compute for this kernel, as a proof target.
    pub(crate) fn target(&self) -> Target {
        Target {
            out: self.out,
            depth: self.approx.depth,
            weights: self.approx.weights.clone(),
        }
    }
}

impl KernelReport {
    /// What a program must compute for this kernel on every input plane, as a proof
    /// target of [`crate::verify::planes::prove_planes`].
    pub(crate) fn planes_target(&self) -> crate::verify::planes::PlanesTarget {
        let plane = |weights: &Vec<Vec<i64>>| Target {
            out: self.out,
            depth: self.approx.depth,
            weights: weights.clone(),
        };
        crate::verify::planes::PlanesTarget {
            out: self.out,
            planes: std::iter::once(&self.approx.weights)
                .chain(&self.approx.other_planes)
                .map(plane)
                .collect(),
        }
    }
}

impl Compiled {
    /// The kernels as proof targets.
    #[cfg(test)]
    pub(crate) fn targets(&self) -> Vec<Target> {
        self.kernels.iter().map(KernelReport::target).collect()
    }
}

/// The numeric targets of a spec's kernels for `crate::verify::check`: the specified
/// weights (scale applied) and the approximation each program computes, on every
/// input plane.
pub fn check_targets(spec: &Spec, kernels: &[KernelReport]) -> Vec<check::Target> {
    spec.kernels
        .iter()
        .zip(kernels)
        .map(|(k, a)| {
            let scale = a.fitted.map_or(k.scale, |f| f.to);
            let scaled = |plane: &[Vec<f64>]| -> Vec<Vec<f64>> {
                plane
                    .iter()
                    .map(|row| row.iter().map(|w| w * scale).collect())
                    .collect()
            };
            let planes = a.planes_target().planes;
            let mut t = check::Target::new(k.out, &scaled(&k.weights), &a.target());
            for (exact, approx) in k.other_planes.iter().zip(planes.iter().skip(1)) {
                t = t.with_plane(&scaled(exact), approx);
            }
            t
        })
        .collect()
}

/// Approximates every kernel of `spec`; an approximation that misses `max_error` at
/// `max_depth` is refused unless the spec accepts it (`approximation.accept`); with the
/// spec's `fit: true`, kernels whose outputs cannot fit the default profile's saturation
/// limit are rescaled (see `spec::fit`).
pub(crate) fn approximate_spec(spec: &Spec) -> Result<Vec<KernelReport>, CompileError> {
    let mut kernels = approximate_each(spec)?;
    if spec.fit {
        let limit = Profile::builtin(crate::sim::noise::DEFAULT_PROFILE)
            .as_ref()
            .and_then(saturation_limit)
            .unwrap_or(f64::INFINITY);
        let mut outputs = output_magnitudes(&kernels, spec.input_range);
        let scales: Vec<f64> = spec.kernels.iter().map(|k| k.scale).collect();
        spec::fit::fit(&mut kernels, &mut outputs, &scales, limit);
    }
    Ok(kernels)
}

/// Per kernel, the largest magnitude its exact output reaches for inputs in `range`.
pub(crate) fn output_magnitudes(kernels: &[KernelReport], range: InputRange) -> Vec<f64> {
    kernels
        .iter()
        .map(|k| {
            // Inputs vary independently: the output's interval is the sum of its planes'.
            let (lo, hi) = k
                .planes_target()
                .planes
                .iter()
                .map(|t| crate::verify::range::interval(&t.expected(), range))
                .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d));
            lo.abs().max(hi.abs())
        })
        .collect()
}

/// Approximates every kernel of `spec` as written.
pub(crate) fn approximate_each(spec: &Spec) -> Result<Vec<KernelReport>, CompileError> {
    spec.kernels
        .iter()
        .enumerate()
        .map(|(i, k)| {
            spec::approx::approximate_planes(
                &k.planes(),
                k.scale,
                spec.approximation.max_depth,
                spec.approximation.max_error,
            )
            .map_err(|e| CompileError::Approx {
                index: i + 1,
                out: k.out,
                cause: e.into(),
            })
            .and_then(|approx| {
                let p = &spec.approximation;
                if !p.accept {
                    spec::approx::check_miss(
                        &k.planes(),
                        k.scale,
                        &approx,
                        p.max_depth,
                        p.max_error,
                    )
                    .map_err(|miss| CompileError::ApproxMiss {
                        index: i + 1,
                        out: k.out,
                        miss,
                    })?;
                }
                Ok(KernelReport {
                    out: k.out,
                    approx,
                    fitted: None,
                })
            })
        })
        .collect()
}

/// Compiles a filter spec: approximation, grouping, each group's constructive fallback
/// (proven and scored first), then the search for shorter programs in the time left,
/// allocation, emission and proof; the whole within the time limit. `stats` shows the
/// running search (e.g. to another thread printing progress).
pub fn compile(
    spec: &Spec,
    opts: &CompileOptions,
    stats: &Stats,
) -> Result<Compiled, CompileError> {
    let setup = Setup::new(spec, opts)?;
    let start = Instant::now();
    let all: Vec<usize> = (0..setup.kernels.len()).collect();
    let planned = drive::group::plan(&setup);
    let total = setup.search.time_limit;
    // Every group's constructive program first, proven and scored: the answer is there
    // before any search runs, and the searches share only the time it leaves, less
    // what finishing each group will take (its reserve).
    let prepared = planned
        .iter()
        .map(|members| drive::race::prepare(&setup, members, start))
        .collect::<Result<Vec<_>, _>>()?;
    let mut reserved: Duration = prepared.iter().map(|p| p.reserve).sum();
    // A search stops a little after its time (it looks at the clock between steps and
    // then frees what it holds): allow for that, and for more once a search here has
    // been seen to run later.
    let mut late = total.mul_f64(LATE_SHARE);
    // The groups' nominal clock: the time limit, halved after a try at one program,
    // shared equally (the work of calibrated phases is made from it).
    let mut nominal = total;
    let left = |reserved: Duration, late: Duration| {
        total
            .saturating_sub(start.elapsed())
            .saturating_sub(reserved + late)
    };
    if planned.len() > 1 && one_program_may_hold(&setup) {
        // The outputs fit one program but the constructive one does not: the search
        // gets half the time to find one program sharing work between all kernels.
        let one = drive::race::prepare(&setup, &all, start)?;
        let before = start.elapsed();
        let time = (left(reserved + one.reserve, late) / 2).max(MIN_SEARCH);
        let clock = GroupClock {
            time,
            nominal: nominal / 2,
        };
        match drive::race::search_group(one, clock, start, stats) {
            Ok(r) => return Ok(assemble(&setup, vec![(all, r)], start, stats)),
            Err(
                CompileError::NotFound { .. }
                | CompileError::Crowded { .. }
                | CompileError::NoRangeSafe { .. }
                | CompileError::NoProgram(_),
            ) => {}
            Err(e) => return Err(e),
        }
        late = late.max(start.elapsed().saturating_sub(before + time));
        nominal /= 2;
    }
    let mut parts = Vec::with_capacity(planned.len());
    let groups = prepared.len();
    for (i, (members, p)) in planned.into_iter().zip(prepared).enumerate() {
        // Each group gets an equal share of what is left of the clock; its own reserve
        // and those of the groups after it stay out.
        let share = left(reserved, late) / u32::try_from(groups - i).unwrap_or(u32::MAX);
        let share = share.max(MIN_SEARCH);
        reserved = reserved.saturating_sub(p.reserve);
        let (before, own) = (start.elapsed(), p.reserve);
        let clock = GroupClock {
            time: share,
            nominal: nominal / u32::try_from(groups).unwrap_or(u32::MAX),
        };
        let r = drive::race::search_group(p, clock, start, stats)?;
        late = late.max(start.elapsed().saturating_sub(before + share + own));
        parts.push((members, r));
    }
    Ok(assemble(&setup, parts, start, stats))
}

/// The least time a search is given, even when the clock is spent: enough to return
/// at once with nothing (the constructive program is there already).
const MIN_SEARCH: Duration = Duration::from_millis(1);

/// The share of the time limit first allowed for searches stopping late (measured
/// on a loaded two-core machine: up to 5 % after a search that filled 150 MB, most of it
/// spent freeing what it held).
const LATE_SHARE: f64 = 0.06;

/// Whether one program could hold every output at once (distinct output registers, no
/// more than the registers).
fn one_program_may_hold(setup: &Setup) -> bool {
    let mut outs: Vec<Reg> = setup.kernels.iter().map(|k| k.out).collect();
    outs.sort_unstable();
    outs.dedup();
    outs.len() == setup.kernels.len() && outs.len() <= setup.registers.len()
}

/// Per kernel, the largest scale at which its output fits the register range.
fn largest_fitting_scales(setup: &Setup) -> Vec<f64> {
    let kernels = setup.spec.kernels.iter().zip(&setup.outputs);
    kernels
        .zip(&setup.kernels)
        .map(|((k, &m), r)| {
            if m > 0.0 {
                r.fitted.map_or(k.scale, |f| f.to) * setup.limit / m
            } else {
                f64::INFINITY
            }
        })
        .collect()
}

/// The compiled result of the groups' programs.
fn assemble(
    setup: &Setup,
    parts: Vec<(Vec<usize>, drive::race::GroupResult)>,
    start: Instant,
    stats: &Stats,
) -> Compiled {
    let n = setup.kernels.len();
    let mut predicted = vec![
        Predicted {
            rmse: 0.0,
            bias: 0.0
        };
        n
    ];
    let mut groups = Vec::with_capacity(parts.len());
    let mut phases = Vec::new();
    let (mut nodes, mut plans, mut to_best) = (0, 0, 0.0f64);
    let mut stop = StopReason::Time;
    for (members, r) in parts {
        for (&i, p) in members.iter().zip(&r.predicted) {
            if let Some(slot) = predicted.get_mut(i) {
                *slot = *p;
            }
        }
        nodes += r.outcome.nodes;
        plans += r.outcome.plans_found;
        stop = r.outcome.stop;
        to_best = to_best.max(r.best.at.as_secs_f64());
        let group = groups.len() + 1;
        phases.extend(r.phases.into_iter().map(|p| PhaseReport { group, ..p }));
        groups.push(Group {
            kernels: members,
            peak: r.best.value.peak,
            program: r.best.value.program,
            source: r.source,
        });
    }
    let peak = groups
        .iter()
        .map(|g| g.peak)
        .max_by(|a, b| a.magnitude.total_cmp(&b.magnitude))
        .unwrap_or(Peak {
            magnitude: setup.spec.input_range.bound(),
            pos: None,
            reg: Some(setup.spec.input),
            low: setup.spec.input_range.lo,
            high: setup.spec.input_range.hi,
        });
    let program = Program {
        stmts: groups
            .iter()
            .flat_map(|g| g.program.stmts.iter().cloned())
            .collect(),
    };
    let source = if groups.iter().all(|g| g.source == Source::Search) {
        Source::Search
    } else {
        Source::Fallback
    };
    let largest_fitting_scale = largest_fitting_scales(setup);
    let all: Vec<usize> = (0..n).collect();
    Compiled {
        program,
        groups,
        kernels: setup.kernels.clone(),
        search: SearchReport {
            nodes,
            seconds_to_best: to_best,
            seconds: start.elapsed().as_secs_f64(),
            plans_found: plans,
            stop,
            workers: setup.search.workers,
            source,
            work: setup.search.work,
            seed: setup.search.seed,
            rules: stats.rules.by_name(),
            phases,
        },
        ops: setup.ops,
        registers: setup.registers.clone(),
        input: setup.spec.input,
        range: RangeReport {
            limit: setup.limit,
            held_to: setup.held_to(&all),
            outputs: setup.outputs.clone(),
            largest_fitting_scale,
            peak,
        },
        predicted,
        objective: setup.objective,
        profile: setup.profile.name.clone(),
    }
}
#[cfg(test)]
pub(crate) use assemble::report::{predict_outputs_planes, InputPlanes};
#[cfg(test)]
pub(crate) use score::objective::input_stats;
