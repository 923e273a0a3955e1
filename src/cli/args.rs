//! Flags shared by several subcommands and the value parsers that let clap refuse bad
//! values before anything runs (exit 2 with clap's usage message).

use scamp::isa::Reg;
use scamp::{EdgeMode, N};

use scamp::isa::quote;
use scamp::Objective;
use scamp::Ops;

/// Fastest array clock accepted, in MHz (the device runs at 10).
pub const MAX_CLOCK_MHZ: f64 = 1000.0;

/// Most Monte Carlo runs in one command (the library's rule).
pub const MAX_RUNS: u32 = scamp::RUNS.hi as u32;

/// The input limits, shown by `--help` (a test keeps them equal to the constants).
pub const LIMITS: &str = "\
Limits (input beyond them is refused before any work):
  program file     at most 4194304 bytes (4 MiB): the parser holds the whole program
  spec file        at most 1048576 bytes (1 MiB): the YAML reader holds the whole document
  noise profile    at most 1048576 bytes (1 MiB)
  kernel           at most 31x31 weights: larger searches do not finish
  registers        A..F, as on SCAMP-5, unless a spec declares `general_registers`
  --set, .npy      finite values within -1024..1024, the level range of a profile
  --workers        1..=1024; --time-limit more than 0 and at most 86400 s (a day)
  --runs           1..=100000 (each run simulates every image once)
  --samples        1..=1000 (bench: every figure is timed once a sample)
  --repeat         1..=100000 (run: each repeats the whole program)
  symbolic values  at most 61x61 offsets wide (twice the largest kernel less one):
                   wider ones are in no kernel, and following them has no bound
  trace --html     at most 1000 steps shown (evenly sampled beyond): the page holds
                   every register of every shown step
  numbers          a negative or non-finite value to a flag is refused with its range";

/// `--json`: one JSON object on stdout instead of the text report.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct JsonArg {
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `--accept-approximation`, shared by `compile` and `check`: it sets the spec key
/// `approximation.accept`, so that the flag and the key are one rule.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct AcceptArg {
    /// Accept a kernel approximation that misses the spec's `max_error` at its
    /// `max_depth` (as the spec key `approximation: {accept: true}` does); without it,
    /// such a spec exits 1, since the program would compute another kernel.
    #[arg(long)]
    pub accept_approximation: bool,
}

impl AcceptArg {
    /// The spec as the flag leaves it (the key set when the flag is given).
    pub fn apply(self, mut spec: scamp::Spec) -> scamp::Spec {
        spec.approximation.accept |= self.accept_approximation;
        spec
    }
}

/// `--time-limit`: a finite number of seconds in (0, the declared `max`].
pub fn time_limit(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    scamp::check_time_limit(v).map_err(|e| e.to_string())
}

/// The declaration of the compile option `name` (one of [`scamp::COMPILE_OPTIONS`]).
pub fn declared(name: &str) -> Option<&'static scamp::OptionDecl> {
    scamp::COMPILE_OPTIONS.iter().find(|d| d.name == name)
}

/// The declared default of the compile option `name`, as `--help` shows it.
pub fn declared_default(name: &str) -> &'static str {
    declared(name).map_or("", |d| d.default)
}

/// `s` as a whole number within the declared range of the compile option `name`
/// (the spec key's rule, so both refuse the same values with the same message).
fn declared_whole(name: &str, s: &str) -> Result<u64, String> {
    declared(name)
        .and_then(|d| d.whole)
        .ok_or_else(|| format!("`{name}` declares no whole-number range"))?
        .parse(s)
        .map_err(|e| e.to_string())
}

/// `--node-limit`: the spec's `search.node_limit` range.
pub fn node_limit(s: &str) -> Result<u64, String> {
    declared_whole("node_limit", s)
}

/// `--memory-limit` in MiB: the spec's `search.memory_limit` range.
pub fn memory_limit(s: &str) -> Result<u64, String> {
    declared_whole("memory_limit", s)
}

/// `--work`: the spec's `search.work` range.
pub fn work(s: &str) -> Result<u64, String> {
    declared_whole("work", s)
}

/// `--seed`, `--chip-seed`: any whole number from 0.
pub fn seed(s: &str) -> Result<u64, String> {
    declared_whole("seed", s)
}

/// A whole number in `lo..=hi` for the flag `what`.
pub fn whole(s: &str, what: &'static str, lo: u64, hi: u64) -> Result<u64, String> {
    scamp::Whole { what, lo, hi }
        .parse(s)
        .map_err(|e| e.to_string())
}

/// Most timed samples of `bench` per figure (each sample runs every figure once; a
/// thousand take minutes already).
pub const MAX_SAMPLES: u64 = 1000;

/// `bench --samples`: 1..=[`MAX_SAMPLES`].
pub fn samples(s: &str) -> Result<usize, String> {
    whole(s, "--samples", 1, MAX_SAMPLES).map(|n| n as usize)
}

/// Most repetitions of `run --repeat` (each repeats the whole program).
pub const MAX_REPEAT: u64 = 100_000;

/// `run --repeat`: 1..=[`MAX_REPEAT`].
pub fn repeat(s: &str) -> Result<u32, String> {
    whole(s, "--repeat", 1, MAX_REPEAT).map(|n| n as u32)
}

/// `--border`: 0..=127 pixels (half the array).
pub fn border(s: &str) -> Result<usize, String> {
    whole(s, "--border", 0, (N / 2 - 1) as u64).map(|n| n as usize)
}

/// A float that must be finite and more than 0 (`--max-total-rmse`).
pub fn positive(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{}` is not a number", quote(s)))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("must be a finite number more than 0, got {v}"))
    }
}

/// Joins a negative number to the long flag before it (`--runs -1` becomes
/// `--runs=-1`), so the flag's own check answers with its range instead of clap taking
/// `-1` for an unknown flag.
pub fn join_negative_values(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        let flag = a
            .to_str()
            .filter(|s| s.starts_with("--") && s.len() > 2 && !s.contains('='))
            .map(str::to_string);
        let negative = it
            .peek()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('-') && n.len() > 1 && n.trim().parse::<f64>().is_ok());
        match (flag, negative) {
            (Some(f), true) => {
                let v = it.next().unwrap_or_default();
                let mut joined = std::ffi::OsString::from(format!("{f}="));
                joined.push(v);
                out.push(joined);
            }
            _ => out.push(a),
        }
    }
    out
}

/// `--slack`: a finite fraction in [0, 10].
pub fn slack(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a fraction"))?;
    scamp::check_slack(v).map_err(|e| e.to_string())
}

/// `--workers`: the spec's `search.workers` range (1..=1024).
pub fn workers(s: &str) -> Result<usize, String> {
    declared_whole("workers", s).map(|n| n as usize)
}

/// `--clock`: MHz in (0, [`MAX_CLOCK_MHZ`]].
pub fn clock(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of MHz"))?;
    if !(v > 0.0 && v <= MAX_CLOCK_MHZ) {
        return Err(format!(
            "must be more than 0 and at most {MAX_CLOCK_MHZ} MHz, got {v}"
        ));
    }
    Ok(v)
}

/// `--tolerance`: a finite number >= 0.
pub fn tolerance(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    scamp::check_tolerance(v).map_err(|e| e.to_string())
}

/// `--runs`: 1..=[`MAX_RUNS`].
pub fn runs(s: &str) -> Result<u32, String> {
    scamp::Whole {
        what: "--runs",
        ..scamp::RUNS
    }
    .parse(s)
    .map(|n| n as u32)
    .map_err(|e| e.to_string())
}

/// `--pe ROW,COL` with both in `0..N`.
pub fn pe(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("expected ROW,COL with both in 0..{}", N - 1);
    let (r, c) = s.split_once(',').ok_or_else(bad)?;
    let r: usize = r.trim().parse().map_err(|_| bad())?;
    let c: usize = c.trim().parse().map_err(|_| bad())?;
    if r >= N || c >= N {
        return Err(bad());
    }
    Ok((r, c))
}

/// A register list such as `A,B,C`: general registers, each once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterList(pub Vec<Reg>);

/// `--registers A,B,...`.
pub fn registers(s: &str) -> Result<RegisterList, String> {
    scamp::parse_registers(s.split(','))
        .map(RegisterList)
        .map_err(|e| e.to_string())
}

/// `--edge`: what neighbour views see beyond the border of the array.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EdgeArg {
    /// Reads from outside give 0.
    #[default]
    Zero,
    /// The edge PE stands in for the missing neighbour.
    Replicate,
    /// The array is a torus.
    Wrap,
}

impl From<EdgeArg> for EdgeMode {
    fn from(e: EdgeArg) -> EdgeMode {
        match e {
            EdgeArg::Zero => EdgeMode::Zero,
            EdgeArg::Replicate => EdgeMode::Replicate,
            EdgeArg::Wrap => EdgeMode::Wrap,
        }
    }
}

/// `--ops`: the generator's instruction set ([`Ops`]).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpsArg {
    /// Every linear macro of docs/isa.md.
    All,
    /// AUKE's set: `mov`, `movx`, two-source `add`, `sub`, `neg`, `divq`, `res`.
    Basic,
}

impl From<OpsArg> for Ops {
    fn from(o: OpsArg) -> Ops {
        match o {
            OpsArg::All => Ops::All,
            OpsArg::Basic => Ops::Basic,
        }
    }
}

/// `--objective`: what the search minimises ([`Objective`]).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectiveArg {
    /// The shortest program (ties: fewer cycles).
    Length,
    /// Among programs within the slack of the shortest found, the lowest predicted
    /// error (root of the summed predicted mean squared error of the outputs).
    Error,
}

impl From<ObjectiveArg> for Objective {
    fn from(o: ObjectiveArg) -> Objective {
        match o {
            ObjectiveArg::Length => Objective::Length,
            ObjectiveArg::Error => Objective::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_in_help_are_the_enforced_ones() {
        use scamp::{isa::MAX_PROFILE_BYTES, isa::MAX_PROGRAM_BYTES, isa::MAX_SPEC_BYTES};
        let line = |what: &str| {
            LIMITS
                .lines()
                .find(|l| l.trim_start().starts_with(what))
                .unwrap_or_default()
                .to_string()
        };
        assert!(line("program file").contains(&format!("at most {MAX_PROGRAM_BYTES} bytes")));
        assert!(line("spec file").contains(&format!("at most {MAX_SPEC_BYTES} bytes")));
        assert!(line("noise profile").contains(&format!("at most {MAX_PROFILE_BYTES} bytes")));
        let side = scamp::MAX_SIDE;
        assert!(line("kernel").contains(&format!("{side}x{side}")));
        let m = super::super::files::MAX_SET_VALUE;
        assert!(line("--set").contains(&format!("-{m}..{m}")));
        let workers = declared("workers").and_then(|d| d.whole).map(|w| w.hi);
        assert!(line("--workers").contains(&format!("1..={}", workers.unwrap_or_default())));
        let time = declared("time_limit")
            .and_then(|d| d.max)
            .unwrap_or_default();
        assert!(line("--workers").contains(&format!("at most {time} s")));
    }

    #[test]
    fn ranges_are_enforced() {
        for bad in ["nan", "inf", "-1", "0", "86401", "1e400", "x"] {
            assert!(time_limit(bad).is_err(), "{bad}");
        }
        assert_eq!(time_limit("2.5"), Ok(2.5));
        assert!(workers("0").is_err() && workers("1025").is_err() && workers("100000").is_err());
        assert_eq!(workers("1024"), Ok(1024));
        assert!(clock("nan").is_err() && clock("0").is_err() && clock("inf").is_err());
        assert!(runs("0").is_err());
        assert_eq!(pe("3, 4"), Ok((3, 4)));
        assert!(pe("256,0").is_err() && pe("1").is_err());
        assert_eq!(registers("A, C").map(|l| l.0), Ok(vec![Reg::A, Reg::C]));
        assert!(registers("A,A").is_err() && registers("NEWS").is_err() && registers(",").is_err());
    }
}
