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
pub mod emit;
pub mod fallback;
pub mod goal;
pub mod heuristic;
pub mod reverse;
pub mod search;
pub mod spec;
pub mod step;
pub mod yaml;

pub use approx::{approximate, Approx};
pub use search::{SearchOptions, Stats, StopReason};
pub use spec::{parse_spec, Ops, Spec};

use crate::isa::{Device, Program, Reg};
use crate::verify::proof::{prove, Target};
use goal::{Bag, Goal};
use reverse::Ctx;
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
    };
    let problem = alloc::AllocProblem {
        init: (&init, spec.input),
        registers: &registers,
        outputs: &finals,
    };
    let finish = |steps: &[step::Step]| -> Option<(Program, usize, u64)> {
        let instrs = alloc::allocate(steps, &problem)?;
        let program = emit::program(&instrs, device).ok()?;
        prove(&program, spec.input, general, &targets, Some(&registers)).ok()?;
        let (n, c) = (program.instructions(), program.cycles());
        Some((program, n, c))
    };
    // The constructive program, which the search only has to beat.
    let start = std::time::Instant::now();
    let make_fallback = || {
        let found = fallback::program(&finals, spec.input, &registers, depth, ops)
            .and_then(|instrs| emit::program(&instrs, device).ok())
            .filter(|p| prove(p, spec.input, general, &targets, Some(&registers)).is_ok())
            .map(|p| search::Found {
                instructions: p.instructions(),
                cycles: p.cycles(),
                value: p,
                at: start.elapsed(),
            });
        if let Some(f) = &found {
            stats
                .best
                .fetch_min(f.instructions, std::sync::atomic::Ordering::Relaxed);
        }
        found
    };
    let root = Bag::new(finals.iter().map(|(g, _)| g.clone()).collect());
    let (fallback, outcome) = if search_opts.work.is_some() {
        // Deterministic mode: the bound must be there before the search starts.
        let f = make_fallback();
        let search_opts = SearchOptions {
            time_limit: search_opts.time_limit.saturating_sub(start.elapsed()),
            ..search_opts
        };
        (f, search::search(&root, &ctx, &search_opts, stats, &finish))
    } else {
        // On a clock budget it is made beside the search (on large kernels its proof
        // takes a while) and bounds the search from the moment it is there.
        std::thread::scope(|s| {
            let made = s.spawn(make_fallback);
            let outcome = search::search(&root, &ctx, &search_opts, stats, &finish);
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
            return Err(CompileError::NotFound(format!(
                "stopped by {} after {} nodes; try a larger --time-limit or more registers",
                outcome.stop.name(),
                outcome.nodes
            )))
        }
    };
    // Both candidates were proven when made; proving the search's again keeps the
    // guarantee local (the fallback's proof is a few lines up, and large).
    if source == Source::Search {
        prove(&best.value, spec.input, general, &targets, Some(&registers))
            .map_err(|e| CompileError::Proof(e.to_string()))?;
    }
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
    s
}
