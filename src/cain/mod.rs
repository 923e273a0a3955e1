//! The embedded Cain code generator: filter specs in, shortest SCAMP-5 programs out.
//!
//! The pipeline: [`spec::parse_spec`] reads a filter spec; [`approx::approximate`]
//! turns each kernel into integer weights over 2^d; the kernels become goals (atoms per
//! offset, all at the largest depth D) and [`search::search`] looks backwards from the
//! bag of final goals to the input goal (2^D atoms at the centre), trying
//! [`reverse`]-applied instructions ranked by [`heuristic`]; each plan found gets
//! registers from [`alloc`], becomes a [`crate::isa::Program`] through the instruction
//! table ([`emit`]) and is proven by [`crate::verify::proof::prove`] before it counts.

pub mod alloc;
pub mod approx;
pub mod budget;
pub mod emit;
pub mod fallback;
pub mod goal;
pub mod heuristic;
pub mod reverse;
pub mod risk;
pub mod search;
pub mod spec;
pub mod step;
pub mod yaml;

pub use approx::{approximate, Approx};
pub use search::{SearchOptions, Stats, StopReason};
pub use spec::{parse_spec, Ops, Spec};

use crate::isa::{Device, Program, Reg};
use crate::sim::noise::Profile;
use crate::verify::check;
use crate::verify::predict::{self, InputStats, Predicted};
use crate::verify::proof::{prove, Target};
use crate::verify::range::{self, Peak};
use goal::{Bag, Goal};
use reverse::Ctx;
use std::collections::BTreeMap;
use std::time::Duration;

/// Settings that override the spec's `search:` section (command-line flags).
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Wall-clock budget in seconds (default 10).
    pub time_limit: Option<f64>,
    /// Worker threads (default: the machine's cores).
    pub workers: Option<usize>,
    /// Instruction set (default `all`).
    pub ops: Option<Ops>,
    /// Registers the program may use, replacing the spec's list.
    pub registers: Option<Vec<Reg>>,
    /// Ordering seed (default 0).
    pub seed: Option<u64>,
    /// Node limit over all workers.
    pub node_limit: Option<u64>,
    /// Memory cap in MiB (default 2048).
    pub memory_limit_mb: Option<u64>,
    /// Deterministic work budget: nodes per worker (see [`SearchOptions::work`]).
    pub work: Option<u64>,
    /// What to minimise (default [`Objective::Error`]).
    pub objective: Option<Objective>,
    /// Length slack of the error objective (default [`DEFAULT_SLACK`]).
    pub slack: Option<f64>,
    /// Noise profile for the range limit and the error prediction (default `scamp5`).
    pub profile: Option<Profile>,
}

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
    /// `length` or `error`.
    pub fn parse(s: &str) -> Option<Objective> {
        match s {
            "length" => Some(Objective::Length),
            "error" => Some(Objective::Error),
            _ => None,
        }
    }
}

/// Default length slack of the error objective: programs up to 25 % longer than the
/// shortest found compete on predicted error.
pub const DEFAULT_SLACK: f64 = 0.25;

/// The register range a program was held to.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeReport {
    /// The saturation limit (smallest magnitude of the profile's limits).
    pub limit: f64,
    /// The limit intermediates were held to: `limit`, or the largest output magnitude
    /// where an output cannot fit.
    pub held_to: f64,
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
pub struct KernelReport {
    /// Output register.
    pub out: Reg,
    /// Depth, integer weights and error.
    pub approx: Approx,
}

/// Figures of the search that produced a program.
#[derive(Clone, Debug)]
pub struct SearchReport {
    /// Nodes expanded.
    pub nodes: u64,
    /// Seconds from the start until the program was found.
    pub seconds_to_best: f64,
    /// Seconds the search ran.
    pub seconds: f64,
    /// Plans that reached the input.
    pub plans_found: u64,
    /// Why the search stopped.
    pub stop: StopReason,
    /// Workers used.
    pub workers: usize,
    /// Which generator made the program.
    pub source: Source,
    /// Deterministic work budget (nodes per worker), if the search ran in that mode.
    pub work: Option<u64>,
    /// Ordering seed.
    pub seed: u64,
}

/// Which generator made a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The search found it (shorter than the constructive program).
    Search,
    /// The constructive program of [`fallback`] (the search found nothing shorter).
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

/// A compiled, proven program and what it computes.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The program.
    pub program: Program,
    /// Per kernel: output register and approximation.
    pub kernels: Vec<KernelReport>,
    /// Search figures.
    pub search: SearchReport,
    /// Instruction set used.
    pub ops: Ops,
    /// Registers the program was allowed to use.
    pub registers: Vec<Reg>,
    /// Register holding the input image.
    pub input: Reg,
    /// Range of the values the program holds.
    pub range: RangeReport,
    /// Per kernel, the predicted error under the profile for inputs uniform over the
    /// spec's input range ([`InputStats::of_range`]).
    pub predicted: Vec<Predicted>,
    /// The objective the program was chosen by.
    pub objective: Objective,
    /// The name of the profile used.
    pub profile: String,
}

impl KernelReport {
    /// What a program must compute for this kernel, as a proof target.
    pub fn target(&self) -> Target {
        Target {
            out: self.out,
            depth: self.approx.depth,
            weights: self.approx.weights.clone(),
        }
    }
}

impl Compiled {
    /// The kernels as proof targets.
    pub fn targets(&self) -> Vec<Target> {
        self.kernels.iter().map(KernelReport::target).collect()
    }
}

/// Why compilation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// Inconsistent options (e.g. `--registers` without the input register).
    #[error("{0}")]
    Options(String),
    /// A kernel cannot be approximated.
    #[error("kernel {index} (out {out}): {msg}")]
    Approx {
        /// 1-based kernel number.
        index: usize,
        /// Its output register.
        out: Reg,
        /// What went wrong.
        msg: String,
    },
    /// The budget ended before any program was found.
    #[error("no program found within the budget ({0})")]
    NotFound(String),
    /// A program failed its proof (a generator bug: nothing is printed).
    #[error("internal error: generated program failed its proof: {0}")]
    Proof(String),
    /// The noise profile has no saturation limits, which the range constraint needs.
    #[error("profile `{0}` has no `saturation` limits; the register range constraint needs them")]
    NoSaturation(String),
    /// No program whose values stay in range was found within the budget.
    /// (The message names the constraint: limit and input range.)
    #[error("no range-safe program found within the budget ({0})")]
    NoRangeSafe(String),
}

/// The numeric targets of a spec's kernels for [`crate::verify::check`]: the specified
/// weights (scale applied) and the approximation each program computes.
pub fn check_targets(spec: &Spec, kernels: &[KernelReport]) -> Vec<check::Target> {
    spec.kernels
        .iter()
        .zip(kernels)
        .map(|(k, a)| {
            let exact: Vec<Vec<f64>> = k
                .weights
                .iter()
                .map(|row| row.iter().map(|w| w * k.scale).collect())
                .collect();
            check::Target::new(k.out, &exact, &a.target())
        })
        .collect()
}

/// Approximates every kernel of `spec`.
pub fn approximate_spec(spec: &Spec) -> Result<Vec<KernelReport>, CompileError> {
    spec.kernels
        .iter()
        .enumerate()
        .map(|(i, k)| {
            approximate(
                &k.weights,
                k.scale,
                spec.approximation.max_depth,
                spec.approximation.max_error,
            )
            .map(|approx| KernelReport { out: k.out, approx })
            .map_err(|e| CompileError::Approx {
                index: i + 1,
                out: k.out,
                msg: e.to_string(),
            })
        })
        .collect()
}

/// Compiles a filter spec: approximation, search, allocation, emission and proof.
/// `stats` shows the running search (e.g. to another thread printing progress).
pub fn compile(
    spec: &Spec,
    opts: &CompileOptions,
    stats: &Stats,
) -> Result<Compiled, CompileError> {
    let registers = opts
        .registers
        .clone()
        .unwrap_or_else(|| spec.registers.clone());
    if registers.is_empty() {
        return Err(CompileError::Options("no registers to use".into()));
    }
    if !registers.contains(&spec.input) {
        return Err(CompileError::Options(format!(
            "the input register {} is not among the registers to use",
            spec.input
        )));
    }
    for k in &spec.kernels {
        if !registers.contains(&k.out) {
            return Err(CompileError::Options(format!(
                "output register {} is not among the registers to use",
                k.out
            )));
        }
    }
    if spec.kernels.len() > registers.len() {
        return Err(CompileError::Options("more kernels than registers".into()));
    }
    let kernels = approximate_spec(spec)?;
    let depth = kernels.iter().map(|k| k.approx.depth).max().unwrap_or(0);
    let mut finals: Vec<(Goal, Reg)> = Vec::with_capacity(kernels.len());
    for (i, k) in kernels.iter().enumerate() {
        let g = approx::goal_of(&k.approx, depth).ok_or_else(|| CompileError::Approx {
            index: i + 1,
            out: k.out,
            msg: format!(
                "weights too large at the common depth {depth} (more than 2^24 atoms per offset)"
            ),
        })?;
        finals.push((g, k.out));
    }
    let init = Goal::single(0, 0, 1 << depth);
    let ops = opts.ops.or(spec.search.ops).unwrap_or_default();
    let objective = opts.objective.unwrap_or_default();
    let profile = match &opts.profile {
        Some(p) => p.clone(),
        None => Profile::builtin(crate::sim::noise::DEFAULT_PROFILE).unwrap_or_default(),
    };
    let limit = saturation_limit(&profile)
        .ok_or_else(|| CompileError::NoSaturation(profile.name.clone()))?;
    let outputs: Vec<f64> = kernels
        .iter()
        .map(|k| {
            let (lo, hi) = range::interval(&k.target().expected(), spec.input_range);
            lo.abs().max(hi.abs())
        })
        .collect();
    let largest_fitting_scale: Vec<f64> = spec
        .kernels
        .iter()
        .zip(&outputs)
        .map(|(k, &m)| {
            if m > 0.0 {
                k.scale * limit / m
            } else {
                f64::INFINITY
            }
        })
        .collect();
    // An output that cannot fit clips whatever the program does; its intermediates are
    // then held to the output's own magnitude rather than rejected outright.
    let held_to = outputs.iter().copied().fold(limit, f64::max);
    let final_atoms: i64 = finals.iter().map(|(g, _)| g.atoms()).sum();
    let ctx = Ctx {
        init: init.clone(),
        regs: registers.len(),
        ops,
        depth,
        max_atoms: 2 * final_atoms + (2i64 << depth),
        structured: false,
    };
    let general = registers
        .iter()
        .map(|r| match r {
            Reg::Gen(i) => usize::from(*i) + 1,
            _ => 0,
        })
        .max()
        .unwrap_or(6);
    let device = Device { general };
    let targets: Vec<Target> = kernels.iter().map(KernelReport::target).collect();
    let workers = opts.workers.or(spec.search.workers).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(spec::MAX_WORKERS))
    });
    if !(1..=spec::MAX_WORKERS).contains(&workers) {
        return Err(CompileError::Options(format!(
            "workers must be in 1..={}, got {workers}",
            spec::MAX_WORKERS
        )));
    }
    let seconds = opts.time_limit.or(spec.search.time_limit).unwrap_or(10.0);
    if !(seconds > 0.0 && seconds <= spec::MAX_TIME_LIMIT) {
        return Err(CompileError::Options(format!(
            "the time limit must be more than 0 and at most {} seconds, got {seconds}",
            spec::MAX_TIME_LIMIT
        )));
    }
    let search_opts = SearchOptions {
        time_limit: Duration::from_secs_f64(seconds.max(0.001)),
        node_limit: opts.node_limit.or(spec.search.node_limit),
        workers,
        seed: opts.seed.or(spec.search.seed).unwrap_or(0),
        memory_limit: opts
            .memory_limit_mb
            .or(spec.search.memory_limit_mb)
            .unwrap_or(2048)
            .saturating_mul(1 << 20),
        work: opts.work.or(spec.search.work),
        slack: match objective {
            Objective::Length => 0.0,
            Objective::Error => opts.slack.unwrap_or(DEFAULT_SLACK).max(0.0),
        },
        range: Some(search::GoalRange {
            depth,
            lo: spec.input_range.lo,
            hi: spec.input_range.hi,
            limit,
            exempt: finals.iter().map(|(g, _)| g.clone()).collect(),
        }),
        clip: Some(risk::ClipModel {
            depth,
            lo: spec.input_range.lo,
            hi: spec.input_range.hi,
            limit,
            spread: risk::DEFAULT_SPREAD,
        }),
    };
    let problem = alloc::AllocProblem {
        init: (&init, spec.input),
        registers: &registers,
        outputs: &finals,
    };
    let stats_in = InputStats::of_range(spec.input_range);
    let outputs_f64: Vec<BTreeMap<(i32, i32), f64>> = targets
        .iter()
        .map(|t| {
            t.expected()
                .terms
                .iter()
                .map(|(o, c)| (*o, range::coef_f64(c)))
                .collect()
        })
        .collect();
    let finish = |steps: &[step::Step]| -> Option<search::Finished<Program>> {
        let instrs = alloc::allocate(steps, &problem)?;
        let program = emit::program(&instrs, device).ok()?;
        prove(&program, spec.input, general, &targets, Some(&registers)).ok()?;
        let peak = range::peak(&program, spec.input, general, spec.input_range).ok()?;
        if peak.magnitude > held_to + 1e-9 {
            return None;
        }
        let score = match objective {
            Objective::Length => 0.0,
            Objective::Error => predicted_score(
                &program,
                spec,
                general,
                &profile,
                &stats_in,
                limit,
                &outputs_f64,
            )?,
        };
        let (n, c) = (program.instructions(), program.cycles());
        Some((program, n, c, score))
    };
    // The constructive program, which the search only has to beat. It is held to the
    // same range and scored like every searched program.
    let start = std::time::Instant::now();
    let make_fallback = || {
        let p = fallback::program(&finals, spec.input, &registers, depth, ops)
            .and_then(|instrs| emit::program(&instrs, device).ok())?;
        prove(&p, spec.input, general, &targets, Some(&registers)).ok()?;
        let peak = range::peak(&p, spec.input, general, spec.input_range).ok()?;
        if peak.magnitude > held_to + 1e-9 {
            return None;
        }
        let score = match objective {
            Objective::Length => 0.0,
            Objective::Error => {
                predicted_score(&p, spec, general, &profile, &stats_in, limit, &outputs_f64)?
            }
        };
        stats
            .best
            .fetch_min(p.instructions(), std::sync::atomic::Ordering::Relaxed);
        Some(search::Found {
            instructions: p.instructions(),
            cycles: p.cycles(),
            score,
            value: p,
            at: start.elapsed(),
        })
    };
    let root = Bag::new(finals.iter().map(|(g, _)| g.clone()).collect());
    let run_search = |search_opts: &SearchOptions| {
        if held_to > limit {
            // An output cannot fit. First try for half the budget to keep everything but
            // the outputs within the limit (values beyond it clip and spoil what fits);
            // failing that, hold values to the outputs' own magnitude.
            let mut first = search_opts.clone();
            first.time_limit = search_opts.time_limit / 2;
            first.node_limit = search_opts.node_limit.map(|n| n / 2);
            first.work = search_opts.work.map(|n| n / 2);
            let o = search::search(&root, &ctx, &first, stats, &finish);
            if o.best.is_some() {
                return o;
            }
            let mut second = search_opts.clone();
            second.time_limit = search_opts
                .time_limit
                .saturating_sub(Duration::from_secs_f64(o.seconds))
                .max(Duration::from_millis(1));
            second.work = first.work;
            second.range = Some(search::GoalRange {
                depth,
                lo: spec.input_range.lo,
                hi: spec.input_range.hi,
                limit: held_to,
                exempt: Vec::new(),
            });
            let mut o2 = search::search(&root, &ctx, &second, stats, &finish);
            o2.seconds += o.seconds;
            o2
        } else {
            search::search(&root, &ctx, search_opts, stats, &finish)
        }
    };
    let (fallback, outcome) = if search_opts.work.is_some() {
        // Deterministic mode: the bound must be there before the search starts.
        let f = make_fallback();
        let search_opts = SearchOptions {
            time_limit: search_opts.time_limit.saturating_sub(start.elapsed()),
            ..search_opts.clone()
        };
        (f, run_search(&search_opts))
    } else {
        // On a clock budget it is made beside the search (on large kernels its proof
        // takes a while) and bounds the search from the moment it is there.
        std::thread::scope(|s| {
            let made = s.spawn(make_fallback);
            let outcome = run_search(&search_opts);
            (made.join().ok().flatten(), outcome)
        })
    };
    let offset = start.elapsed().as_secs_f64() - outcome.seconds;
    let searched = outcome.best.map(|b| search::Found {
        at: b.at + Duration::from_secs_f64(offset.max(0.0)),
        ..b
    });
    let (best, source) = match (searched, fallback) {
        (Some(s), Some(f)) if (f.instructions, f.cycles) < (s.instructions, s.cycles) => {
            (f, Source::Fallback)
        }
        (Some(s), _) => (s, Source::Search),
        (None, Some(f)) => (f, Source::Fallback),
        (None, None) => {
            let detail = format!(
                "stopped by {} after {} nodes; try a larger --time-limit or more registers",
                outcome.stop.name(),
                outcome.nodes
            );
            if outcome.plans_found > 0 {
                // Plans reached the input, but none finished in range.
                return Err(CompileError::NoRangeSafe(format!(
                    "constraint: every value within +-{held_to} (saturation of profile `{}`) \
                     for inputs {}..{}; {detail}",
                    profile.name, spec.input_range.lo, spec.input_range.hi
                )));
            }
            return Err(CompileError::NotFound(detail));
        }
    };
    // Both candidates were proven when made; proving the search's again keeps the
    // guarantee local (the fallback's proof is a few lines up, and large).
    if source == Source::Search {
        prove(&best.value, spec.input, general, &targets, Some(&registers))
            .map_err(|e| CompileError::Proof(e.to_string()))?;
    }
    let peak = range::peak(&best.value, spec.input, general, spec.input_range)
        .map_err(|e| CompileError::Proof(e.to_string()))?;
    let predicted = predict_kernels(&best.value, spec, general, &profile, &stats_in)
        .map_err(|e| CompileError::Proof(e.to_string()))?;
    Ok(Compiled {
        program: best.value,
        kernels,
        search: SearchReport {
            nodes: outcome.nodes,
            seconds_to_best: best.at.as_secs_f64(),
            seconds: start.elapsed().as_secs_f64(),
            plans_found: outcome.plans_found,
            stop: outcome.stop,
            workers,
            source,
            work: search_opts.work,
            seed: search_opts.seed,
        },
        ops,
        registers,
        input: spec.input,
        range: RangeReport {
            limit,
            held_to,
            outputs,
            largest_fitting_scale,
            peak,
        },
        predicted,
        objective,
        profile: profile.name.clone(),
    })
}

/// `text` with control characters escaped, so that it stays inside one `//` comment
/// (parsed specs refuse them already; a [`Spec`] built in code might not).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Per kernel of `spec`, the predicted error of `program` under `profile`.
pub fn predict_kernels(
    program: &Program,
    spec: &Spec,
    general: usize,
    profile: &Profile,
    stats: &InputStats,
) -> Result<Vec<Predicted>, predict::PredictError> {
    let model = predict::analyse(program, spec.input, general, profile)?;
    Ok(spec
        .kernels
        .iter()
        .map(|k| model.predict(k.out, stats))
        .collect())
}

/// The error objective's score: the summed predicted mean squared error of the outputs,
/// plus what saturation costs where the image is smooth (values pushed beyond the limit
/// by their systematic error, values other than unfitting outputs beyond it anyway).
fn predicted_score(
    program: &Program,
    spec: &Spec,
    general: usize,
    profile: &Profile,
    stats: &InputStats,
    limit: f64,
    outputs: &[BTreeMap<(i32, i32), f64>],
) -> Option<f64> {
    let model = predict::analyse(program, spec.input, general, profile).ok()?;
    let mse: f64 = spec
        .kernels
        .iter()
        .map(|k| model.predict(k.out, stats).rmse.powi(2))
        .sum();
    let same = |a: &BTreeMap<(i32, i32), f64>, b: &BTreeMap<(i32, i32), f64>, sign: f64| {
        a.len() == b.len()
            && a.iter()
                .all(|(o, c)| b.get(o).is_some_and(|d| (c - sign * d).abs() < 1e-9))
    };
    let unavoidable =
        |v: &BTreeMap<(i32, i32), f64>| outputs.iter().any(|o| same(v, o, 1.0) || same(v, o, -1.0));
    Some(mse + model.smooth_clipping(spec.input_range, limit, &unavoidable))
}

/// The saturation limit of `profile` as one magnitude (the nearer of its two limits).
pub fn saturation_limit(profile: &Profile) -> Option<f64> {
    profile
        .saturation
        .as_ref()
        .map(|s| s.low.abs().min(s.high.abs()))
}

/// The `//` comment header printed above a compiled program.
pub fn header(spec: &Spec, c: &Compiled) -> String {
    let mut s = format!(
        "// {}: generated by `scamp compile` (Cain-style search, ops: {})\n",
        one_line(&spec.name),
        match c.ops {
            Ops::All => "all",
            Ops::Basic => "basic",
        }
    );
    s += &format!(
        "// input image in {}; registers {}\n",
        c.input,
        c.registers
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    for k in &c.kernels {
        let rows: Vec<String> = k
            .approx
            .weights
            .iter()
            .map(|r| {
                r.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        s += &format!(
            "// {} = [{}] / 2^{} (d = {}, approximation error {})\n",
            k.out,
            rows.join("; "),
            k.approx.depth,
            k.approx.depth,
            k.approx.error
        );
    }
    s += &format!(
        "// {} instructions, {} cycles; proven exact by symbolic execution\n",
        c.program.instructions(),
        c.program.cycles()
    );
    if let Some(w) = c.search.work {
        s += &format!(
            "// deterministic search: {w} nodes per worker, {} workers, seed {}\n",
            c.search.workers, c.search.seed
        );
    }
    s += &format!(
        "// made by the {}\n",
        match c.search.source {
            Source::Search => "search",
            Source::Fallback => "constructive fallback (the search found nothing shorter)",
        }
    );
    let predicted: Vec<String> = c
        .kernels
        .iter()
        .zip(&c.predicted)
        .map(|(k, p)| format!("{} RMSE {:.2} bias {:+.2}", k.out, p.rmse, p.bias))
        .collect();
    for (k, (&m, &fit)) in c
        .kernels
        .iter()
        .zip(c.range.outputs.iter().zip(&c.range.largest_fitting_scale))
    {
        if m > c.range.limit + 1e-9 {
            s += &format!(
                "// note: {}'s exact output reaches +-{m}, beyond the register limit: it clips \
                 (the largest scale that fits is {fit:.6})\n",
                k.out
            );
        }
    }
    s += &format!(
        "// peak |value| {} (limit {}) for inputs {}..{}; predicted under {}: {}\n",
        c.range.peak.magnitude,
        c.range.limit,
        spec.input_range.lo,
        spec.input_range.hi,
        c.profile,
        predicted.join(", ")
    );
    s
}
