//! `scamp compile SPEC.yaml`: run the code generator and print the program.

use super::{args, CliError, Outcome};
use scamp::isa::MAX_SPEC_BYTES;
use scamp::Profile;
use scamp::{CompileOptions, Compiled, Ops, Spec, Stats};
use scamp::{CompileReport, SplitJson};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Arguments of `scamp compile`.
#[derive(clap::Args, Debug)]
pub struct CompileArgs {
    /// Filter spec (YAML, see docs/spec-format.md).
    pub spec: PathBuf,
    /// Write the program here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Search budget in seconds, at most 86400 (default: the spec's, else 10).
    #[arg(long, value_name = "SECONDS", value_parser = args::time_limit)]
    pub time_limit: Option<f64>,
    /// Search workers, 1..=1024 (default: the spec's, else the number of cores). Workers
    /// beyond the cores share them; the budget holds for any number.
    #[arg(long, value_name = "N", value_parser = args::workers)]
    pub workers: Option<usize>,
    /// Instruction set: all, or basic (AUKE's).
    #[arg(long, value_enum)]
    pub ops: Option<args::OpsArg>,
    /// Registers the program may use, e.g. A,B,C,D (default: the spec's).
    #[arg(long, value_name = "A,B,...", value_parser = args::registers)]
    pub registers: Option<args::RegisterList>,
    /// Seed for search-order ties.
    #[arg(long, value_name = "N", value_parser = args::seed)]
    pub seed: Option<u64>,
    /// Deterministic mode: each worker searches on its own for N nodes and the best
    /// program wins (ties to the lower worker number), so the same spec, seed, workers
    /// and work always give the same program (default: the spec's `work`). Without it
    /// the workers share what they find and race on the clock, and the program can
    /// differ from run to run with the machine's load.
    #[arg(long, value_name = "N", value_parser = args::work)]
    pub work: Option<u64>,
    /// Stop after this many search nodes.
    #[arg(long, value_name = "N", value_parser = args::node_limit)]
    pub node_limit: Option<u64>,
    /// Memory cap of the search in MiB (default 2048).
    #[arg(long, value_name = "MIB", value_parser = args::memory_limit)]
    pub memory_limit: Option<u64>,
    /// `--json`: one JSON object on stdout.
    #[command(flatten)]
    pub json: args::JsonArg,
    /// What to minimise: `error` (predicted error among programs within the slack of
    /// the shortest found) or `length` (the shortest program).
    #[arg(long, value_enum, default_value_t = args::ObjectiveArg::Error)]
    pub objective: args::ObjectiveArg,
    /// Length slack of `--objective error`: programs up to this fraction longer than the
    /// shortest found compete on predicted error.
    #[arg(long, value_name = "FRACTION", default_value = args::declared_default("slack"), value_parser = args::slack)]
    pub slack: f64,
    /// Noise profile for the register range (its saturation) and the error prediction:
    /// `ideal`, `scamp5` or a profile YAML file.
    #[arg(long, default_value = scamp::DEFAULT_PROFILE, value_name = "PROFILE")]
    pub noise: String,
    /// Rescale each kernel whose output cannot fit the register range by the smallest
    /// power of two that makes it fit (the spec's `fit: true` does the same); the scale
    /// used is printed.
    #[arg(long)]
    pub fit: bool,
    /// `--accept-approximation`.
    #[command(flatten)]
    pub accept: args::AcceptArg,
}

/// Runs `scamp compile`.
pub fn run(a: &CompileArgs) -> Outcome {
    if let Some(path) = &a.output {
        super::files::check_writable_file(path)?;
    }
    let text = super::common::read_source(&a.spec, MAX_SPEC_BYTES, "spec")?;
    let spec =
        scamp::parse_spec_in(&text, a.spec.parent()).map_err(|e| super::positioned(&a.spec, e))?;
    let spec = a.accept.apply(spec);
    let opts = options(a)?;
    let stats = Stats::default();
    let show = !a.json.json && std::io::stderr().is_terminal();
    let done = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        if show {
            s.spawn(|| progress(&stats, &done));
        }
        let r = scamp::compile(&spec, &opts, &stats);
        done.store(true, Ordering::Relaxed);
        r
    });
    let compiled = result.map_err(|e| super::compile_error(&a.spec, e))?;
    warn(a, &spec, &opts, &compiled);
    let text = format!(
        "{}{}",
        scamp::header(&spec, &compiled),
        scamp::program_text(&compiled)
    );
    if let Some(path) = &a.output {
        std::fs::write(path, &text)
            .map_err(|e| CliError::msg(format!("{}: cannot write: {e}", path.display())))?;
    }
    if a.json.json {
        println!(
            "{}",
            serde_json::to_string(&CompileReport::of(&spec, &compiled))?
        );
    } else if let Some(path) = &a.output {
        eprintln!(
            "{}: {} instructions, {} cycles",
            path.display(),
            compiled.program.instructions(),
            compiled.program.cycles()
        );
        if let Some(line) = SplitJson::of(&spec, &compiled).line() {
            eprintln!("{}: {line}", path.display());
        }
    } else {
        print!("{text}");
        if let Some(line) = SplitJson::of(&spec, &compiled).line() {
            eprintln!("{line}");
        }
    }
    Ok(0)
}

/// The search options of the flags; the profile must give the range limit.
fn options(a: &CompileArgs) -> Result<CompileOptions, CliError> {
    let mut opts = CompileOptions::default()
        .with_objective(a.objective.into())
        .with_slack(a.slack)
        .with_profile(Profile::load(&a.noise)?);
    opts.time_limit = a.time_limit;
    opts.workers = a.workers;
    opts.ops = a.ops.map(Ops::from);
    opts.registers = a.registers.as_ref().map(|l| l.0.clone());
    opts.seed = a.seed;
    opts.node_limit = a.node_limit;
    opts.memory_limit_mb = a.memory_limit;
    opts.work = a.work;
    opts.fit = a.fit.then_some(true);
    // The flags' parsers hold each number to its range; the profile is the one option
    // left, positioned at its file.
    opts.validate().map_err(|e| match e.key {
        "noise" => CliError::msg(format!("{}:1:1: {}", a.noise, e.problem)),
        _ => CliError::msg(e),
    })?;
    Ok(opts)
}

/// Warnings and notes on stderr: outputs that clip, a search stopped by memory, a
/// constructive program emitted.
fn warn(a: &CompileArgs, spec: &Spec, opts: &CompileOptions, compiled: &Compiled) {
    let r = &compiled.range;
    for (((k, &m), &fit), c) in spec
        .kernels
        .iter()
        .zip(&r.outputs)
        .zip(&r.largest_fitting_scale)
        .zip(&compiled.kernels)
    {
        if let Some(f) = c.fitted {
            eprintln!(
                "note: kernel {}: rescaled to fit the register range: scale {} (the spec's {} \
                 / 2^{}), output within +-{}; the largest scale that fits is {fit:.6}",
                k.out, f.to, f.from, f.halvings, f.output
            );
        }
        if m > r.limit + 1e-9 {
            eprintln!(
                "warning: kernel {}: its exact output reaches +-{m} for inputs {}..{}, beyond the \
                 saturation knee +-{} of profile `{}`: the output depends on the register range \
                 past it (docs/noise.md, \"Saturation\"); the largest scale that fits is \
                 {fit:.6} (the spec's is {})",
                k.out, spec.input_range.lo, spec.input_range.hi, r.limit, compiled.profile, k.scale
            );
        }
    }
    if compiled.search.stop == scamp::StopReason::Memory {
        eprintln!(
            "note: the search stopped at its memory cap ({} MiB); the best program found so far is printed (raise it with --memory-limit)",
            opts.memory_limit_mb
                .or(spec.search.memory_limit_mb)
                .map_or_else(|| args::declared_default("memory_limit").to_string(), |m| m.to_string())
        );
    }
    if compiled.search.work.is_none() {
        // Issue 29: a newcomer expects the same program from the same spec.
        eprintln!(
            "note: the search raced the clock, so another run (or another machine load) can \
             print another program; `--work N` (spec key `search.work`) makes it reproducible"
        );
    }
    if compiled.search.work.is_some() && compiled.search.stop == scamp::StopReason::Time {
        eprintln!(
            "note: the time limit struck before the work budget was spent, so another run (or \
             another machine load) can print another program; raise --time-limit to reproduce it"
        );
    }
    if compiled.search.source == scamp::Source::Fallback && !a.json.json {
        eprintln!(
            "note: the search found nothing shorter than the constructive program within the budget; that program is printed"
        );
    }
}

/// Redraws one status line on stderr until `done`.
fn progress(stats: &Stats, done: &AtomicBool) {
    let start = Instant::now();
    let mut err = std::io::stderr();
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
        let best = stats.best.load(Ordering::Relaxed);
        let best = if best == usize::MAX {
            "-".to_string()
        } else {
            best.to_string()
        };
        let _ = write!(
            err,
            "\rsearching: best {best} instructions, {} nodes, {:.1} s   ",
            stats.nodes.load(Ordering::Relaxed),
            start.elapsed().as_secs_f64()
        );
        let _ = err.flush();
    }
    let _ = write!(err, "\r{:60}\r", "");
    let _ = err.flush();
}
