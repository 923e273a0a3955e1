//! The compile options: [`CompileOptions`] as a library user builds it, and
//! [`COMPILE_OPTIONS`], the one declaration of each option (name, spec key, default,
//! doc) that the command-line flags, the spec keys, the Python keywords, the stub and
//! the docs are checked against (tests/compile_options.rs, python/tests).

use super::spec::{self, Ops};
use super::Objective;
use crate::isa::Reg;
use crate::sim::noise::Profile;

/// Settings that override the spec's `search:` section (command-line flags).
///
/// Build one from the default and the `with_*` methods (new fields may come):
///
/// ```
/// use scamp::{CompileOptions, Objective};
/// let opts = CompileOptions::default().with_work(2000).with_workers(1).with_objective(Objective::Length);
/// assert_eq!(opts.work, Some(2000));
/// assert!(opts.validate().is_ok());
/// assert_eq!(CompileOptions::default().with_workers(0).validate().unwrap_err().key, "workers");
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CompileOptions {
    /// Wall-clock budget in seconds (default `DEFAULT_TIME_LIMIT`).
    pub time_limit: Option<f64>,
    /// Worker threads (default: the machine's cores).
    pub workers: Option<usize>,
    /// Instruction set (default `all`).
    pub ops: Option<Ops>,
    /// Registers the program may use, replacing the spec's list.
    pub registers: Option<Vec<Reg>>,
    /// Ordering seed (default `DEFAULT_SEED`).
    pub seed: Option<u64>,
    /// Node limit over all workers.
    pub node_limit: Option<u64>,
    /// Memory cap in MiB (default `DEFAULT_MEMORY_LIMIT_MB`).
    pub memory_limit_mb: Option<u64>,
    /// Deterministic work budget: nodes per worker (see `super::SearchOptions::work`).
    pub work: Option<u64>,
    /// What to minimise (default [`Objective::Error`]).
    pub objective: Option<Objective>,
    /// Length slack of the error objective (default `DEFAULT_SLACK`).
    pub slack: Option<f64>,
    /// Noise profile for the range limit and the error prediction (default `scamp5`).
    pub profile: Option<Profile>,
    /// Rescale kernels whose outputs cannot fit (default: the spec's `fit`; see
    /// `spec::fit`).
    pub fit: Option<bool>,
}

/// Default length slack of the error objective: programs up to 25 % longer than the
/// shortest found compete on predicted error.
pub(crate) const DEFAULT_SLACK: f64 = 0.25;

/// Default wall-clock budget of a compile, in seconds.
pub(crate) const DEFAULT_TIME_LIMIT: f64 = 10.0;

/// Default memory cap of the search, in MiB.
pub(crate) const DEFAULT_MEMORY_LIMIT_MB: u64 = 2048;

/// Default ordering seed of the search.
pub(crate) const DEFAULT_SEED: u64 = 0;

/// An option of [`CompileOptions`] outside the range its spec key and command-line
/// flag accept, or inconsistent with the spec.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionError {
    /// The option's name (as the Python keyword and the spec key spell it).
    pub key: &'static str,
    /// What is wrong with it.
    pub problem: OptionProblem,
}

impl OptionError {
    /// `key` refused for `problem`.
    ///
    /// ```
    /// use scamp::{OptionError, OptionProblem, RangeError};
    /// let e = OptionError::new("slack", RangeError::Slack(11.0));
    /// assert_eq!(e.to_string(), "slack must be a fraction between 0 and 10, got 11");
    /// assert!(matches!(e.problem, OptionProblem::Range(RangeError::Slack(v)) if v == 11.0));
    /// ```
    pub fn new(key: &'static str, problem: impl Into<OptionProblem>) -> OptionError {
        OptionError {
            key,
            problem: problem.into(),
        }
    }
}

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A whole number's rule and the register list name what they refer to; the
        // other problems are said after the option's name.
        match &self.problem {
            OptionProblem::Range(spec::RangeError::Whole { .. })
            | OptionProblem::NoRegisters
            | OptionProblem::InputNotUsed(_)
            | OptionProblem::OutputNotUsed(_) => write!(f, "{}", self.problem),
            OptionProblem::NoSaturation { .. } => write!(f, "{}: {}", self.key, self.problem),
            _ => write!(f, "{} {}", self.key, self.problem),
        }
    }
}

impl std::error::Error for OptionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.problem)
    }
}

/// What is wrong with an option.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionProblem {
    /// A number outside its range.
    #[error(transparent)]
    Range(#[from] spec::RangeError),
    /// An empty register list.
    #[error("no registers to use")]
    NoRegisters,
    /// The register list leaves out the spec's input register.
    #[error("the input register {0} is not among the registers to use")]
    InputNotUsed(Reg),
    /// The register list leaves out a kernel's output register.
    #[error("output register {0} is not among the registers to use")]
    OutputNotUsed(Reg),
    /// A noise profile without the saturation limits compile holds values to.
    #[error("profile `{profile}` has no `saturation` limits; compile holds every value to them")]
    NoSaturation {
        /// The profile's name.
        profile: String,
    },
}

impl CompileOptions {
    /// Checks every option against the rule its spec key and command-line flag share,
    /// before any work: the command line, the Python bindings and the library take
    /// the same values and refuse the rest with the same message.
    pub fn validate(&self) -> Result<(), OptionError> {
        if let Some(t) = self.time_limit {
            spec::check_time_limit(t).map_err(|e| OptionError::new("time_limit", e))?;
        }
        if let Some(s) = self.slack {
            spec::check_slack(s).map_err(|e| OptionError::new("slack", e))?;
        }
        let wholes = [
            ("workers", spec::WORKERS, self.workers.map(|w| w as u64)),
            ("work", spec::WORK, self.work),
            ("node_limit", spec::NODE_LIMIT, self.node_limit),
            ("memory_limit", spec::MEMORY_LIMIT_MB, self.memory_limit_mb),
        ];
        for (key, rule, v) in wholes {
            if let Some(v) = v {
                rule.check(i128::from(v))
                    .map_err(|e| OptionError::new(key, e))?;
            }
        }
        match &self.profile {
            Some(p) if p.saturation.is_none() => Err(OptionError::new(
                "noise",
                OptionProblem::NoSaturation {
                    profile: p.name.clone(),
                },
            )),
            _ => Ok(()),
        }
    }
}

with_methods!(CompileOptions {
    with_time_limit => time_limit as Some: f64,
    with_workers => workers as Some: usize,
    with_ops => ops as Some: Ops,
    with_registers => registers as Some: Vec<Reg>,
    with_seed => seed as Some: u64,
    with_node_limit => node_limit as Some: u64,
    with_memory_limit_mb => memory_limit_mb as Some: u64,
    with_work => work as Some: u64,
    with_objective => objective as Some: Objective,
    with_slack => slack as Some: f64,
    with_profile => profile as Some: Profile,
    with_fit => fit as Some: bool,
});

/// The general registers `names` (`--registers A,B,C`): none twice, at least one.
pub fn parse_registers<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<Reg>, crate::ValueError> {
    let mut out = Vec::new();
    for part in names.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let name = part.to_string();
        match Reg::parse(part) {
            Some(r @ Reg::Gen(_)) if !out.contains(&r) => out.push(r),
            Some(Reg::Gen(_)) => return Err(crate::ValueError::RegisterTwice { name }),
            _ => return Err(crate::ValueError::NotGeneral { name }),
        }
    }
    if out.is_empty() {
        return Err(crate::ValueError::NoRegister);
    }
    Ok(out)
}

/// One compile option as every front end shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct OptionDecl {
    /// The Python keyword and `OptionError::key`; the command-line flag is
    /// [`OptionDecl::flag`].
    pub name: &'static str,
    /// The spec key that sets it too (`search.work`), if any.
    pub spec_key: Option<&'static str>,
    /// The default, as the docs state it.
    pub default: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    /// The whole numbers it accepts (the spec key's rule too), if it is one.
    pub whole: Option<spec::Whole>,
    /// The largest value accepted, if it is a bounded real number.
    pub max: Option<f64>,
}

impl OptionDecl {
    /// The command-line flag: `--` and the name with `-` for `_`.
    pub fn flag(&self) -> String {
        format!("--{}", self.name.replace('_', "-"))
    }
}

/// Declares one option.
const fn decl(
    name: &'static str,
    spec_key: Option<&'static str>,
    default: &'static str,
    doc: &'static str,
) -> OptionDecl {
    OptionDecl {
        name,
        spec_key,
        default,
        doc,
        whole: None,
        max: None,
    }
}

impl OptionDecl {
    /// The declaration with the whole-number rule `w`.
    const fn whole(self, w: spec::Whole) -> OptionDecl {
        OptionDecl {
            whole: Some(w),
            ..self
        }
    }

    /// The declaration with the largest value `max`.
    const fn max(self, max: f64) -> OptionDecl {
        OptionDecl {
            max: Some(max),
            ..self
        }
    }
}

/// Every option of `scamp compile` (besides the spec, `--output` and `--json`), in
/// the order of its `--help`: the one list the flags, spec keys, Python keywords, stub
/// and docs are checked against.
pub const COMPILE_OPTIONS: [OptionDecl; 13] = [
    decl(
        "time_limit",
        Some("search.time_limit"),
        "the spec's, else 10",
        "search budget in seconds, at most 86400",
    )
    .max(spec::MAX_TIME_LIMIT),
    decl(
        "workers",
        Some("search.workers"),
        "the spec's, else the number of cores",
        "search workers, 1..=1024",
    )
    .whole(spec::WORKERS),
    decl(
        "ops",
        Some("search.ops"),
        "all",
        "instruction set: all, or basic (AUKE's)",
    ),
    decl(
        "registers",
        Some("registers"),
        "the spec's",
        "registers the program may use",
    ),
    decl(
        "seed",
        Some("search.seed"),
        "0",
        "seed for search-order ties",
    )
    .whole(spec::SEED),
    decl(
        "work",
        Some("search.work"),
        "the spec's, else none (race the clock)",
        "deterministic search of this many nodes per worker",
    )
    .whole(spec::WORK),
    decl(
        "node_limit",
        Some("search.node_limit"),
        "none",
        "stop after this many search nodes",
    )
    .whole(spec::NODE_LIMIT),
    decl(
        "memory_limit",
        Some("search.memory_limit"),
        "2048",
        "memory cap of the search in MiB",
    )
    .whole(spec::MEMORY_LIMIT_MB),
    decl(
        "objective",
        None,
        "error",
        "what to minimise: error or length",
    ),
    decl("slack", None, "0.25", "length slack of the error objective").max(spec::MAX_SLACK),
    decl(
        "noise",
        None,
        "scamp5",
        "noise profile for the register range and the error prediction",
    ),
    decl(
        "fit",
        Some("fit"),
        "the spec's, else off",
        "rescale kernels whose output cannot fit the register range",
    ),
    decl(
        "accept_approximation",
        Some("approximation.accept"),
        "the spec's, else off",
        "accept an approximation that misses the spec's max_error",
    ),
];

/// The declaration of the option `name`.
#[cfg(test)]
pub(crate) fn declared(name: &str) -> Option<&'static OptionDecl> {
    COMPILE_OPTIONS.iter().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_defaults_are_the_constants() {
        let default = |n: &str| declared(n).map(|d| d.default).unwrap_or_default();
        assert!(default("time_limit").ends_with(&DEFAULT_TIME_LIMIT.to_string()));
        assert_eq!(default("memory_limit"), DEFAULT_MEMORY_LIMIT_MB.to_string());
        assert_eq!(default("seed"), DEFAULT_SEED.to_string());
        assert_eq!(default("slack"), DEFAULT_SLACK.to_string());
        assert_eq!(default("noise"), crate::sim::noise::DEFAULT_PROFILE);
        assert_eq!(default("objective"), Objective::default().name());
        assert_eq!((default("ops"), Ops::default()), ("all", Ops::All));
    }

    #[test]
    fn option_errors_name_the_declared_option() {
        let bad = [
            CompileOptions::default().with_time_limit(-1.0),
            CompileOptions::default().with_workers(0),
            CompileOptions::default().with_work(0),
            CompileOptions::default().with_node_limit(0),
            CompileOptions::default().with_memory_limit_mb(0),
            CompileOptions::default().with_slack(-1.0),
        ];
        for o in bad {
            let e = o.validate().unwrap_err();
            assert!(declared(e.key).is_some(), "{e:?}");
        }
    }
}
