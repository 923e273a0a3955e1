//! Why a compile failed: [`CompileError`], structured so that callers (the command
//! line's exit code, the Python exception class) decide by kind, never by text.

use super::drive;
use super::options::OptionError;
use super::search::StopReason;
use super::spec;
use crate::isa::Reg;
use crate::verify::range::InputRange;

/// Why compilation failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// Inconsistent options (e.g. `--registers` without the input register).
    #[error(transparent)]
    Options(#[from] OptionError),
    /// A kernel cannot be approximated.
    #[error("kernel {index} (out {out}): {cause}")]
    Approx {
        /// 1-based kernel number.
        index: usize,
        /// Its output register.
        out: Reg,
        /// What went wrong.
        cause: ApproxFailure,
    },
    /// A kernel's approximation misses `max_error` at `max_depth` (exit 1: the program
    /// would not compute the kernel asked for).
    #[error("kernel {index} (out {out}): {miss}")]
    ApproxMiss {
        /// 1-based kernel number.
        index: usize,
        /// Its output register.
        out: Reg,
        /// The error reached and the depth that would meet the bound.
        miss: spec::approx::ApproxMiss,
    },
    /// The budget ended before any program was found.
    #[error("no program found within the budget ({})", Stopped(*stop, *nodes))]
    NotFound {
        /// Why the search stopped.
        stop: StopReason,
        /// Nodes it expanded.
        nodes: u64,
    },
    /// A kernel set over several inputs found no program, and its inputs leave too few
    /// registers for the constructive program: every input holds its register from the
    /// first instruction, and programs are not split by channel.
    #[error(
        "no program found within the budget ({}): its {inputs} inputs hold {inputs} of the \
         {registers} registers from the first instruction, leaving {} to compute in, and the \
         constructive program needs {}; programs are not split by channel (docs/spec-format.md, \
         \"Inputs and registers\"): give more registers or fewer inputs",
        Stopped(*stop, *nodes),
        registers.saturating_sub(*inputs),
        needed.map_or_else(|| "more than the largest device has".to_string(), |n| format!("{n} registers")),
    )]
    Crowded {
        /// Input registers.
        inputs: usize,
        /// Registers the program may use.
        registers: usize,
        /// The fewest registers the constructive program fits (`None`: none up to 26).
        needed: Option<usize>,
        /// Why the search stopped.
        stop: StopReason,
        /// Nodes it expanded.
        nodes: u64,
    },
    /// No program exists within the registers given (certain without a search, or the
    /// search exhausted its whole space): more time would not help (exit 1).
    #[error(transparent)]
    NoProgram(#[from] drive::feasible::Infeasible),
    /// A program failed its proof or its error prediction (a generator bug: nothing is
    /// printed).
    #[error("internal error: generated program failed its proof: {0}")]
    Proof(#[from] GeneratorBug),
    /// The noise profile has no saturation limits, which the range constraint needs.
    #[error(
        "profile `{profile}` has no `saturation` limits; the register range constraint needs them"
    )]
    NoSaturation {
        /// The profile's name.
        profile: String,
    },
    /// No program whose values stay in range was found within the budget.
    #[error(
        "no range-safe program found for kernel(s) {} within the budget (constraint: every \
         value within +-{held_to} (saturation of profile `{profile}`, or the largest output's \
         own magnitude) for inputs {}..{}; {})",
        outs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        input.lo, input.hi, Stopped(*stop, *nodes)
    )]
    NoRangeSafe {
        /// The output registers of the kernels of the group.
        outs: Vec<Reg>,
        /// The limit every value was held to.
        held_to: f64,
        /// The profile whose saturation set it.
        profile: String,
        /// The values input pixels can take.
        input: InputRange,
        /// Why the search stopped.
        stop: StopReason,
        /// Nodes it expanded.
        nodes: u64,
    },
}

impl CompileError {
    /// Whether the error means the generator has a bug (a program it made failed its
    /// own proof), rather than bad input or a budget too small.
    ///
    /// ```
    /// use scamp::{CompileError, CompileOptions};
    /// let bad_option = CompileError::from(CompileOptions::default().with_workers(0).validate().unwrap_err());
    /// assert!(!bad_option.is_bug() && !bad_option.is_no_program());
    /// // One register cannot hold two taps whose weights do not sum to 0: no program
    /// // exists, which is neither a bug nor bad input.
    /// let spec = scamp::parse_spec(
    ///     "input: A\nregisters: [A]\nkernels:\n  - out: A\n    scale: 1/2\n    weights: [[1, 1]]\n",
    /// )
    /// .unwrap();
    /// let opts = CompileOptions::default().with_work(100).with_workers(1);
    /// let e = scamp::compile(&spec, &opts, &Default::default()).unwrap_err();
    /// assert!(e.is_no_program() && !e.is_bug());
    /// ```
    pub fn is_bug(&self) -> bool {
        matches!(self, CompileError::Proof(_))
    }

    /// Whether no program was produced although the spec and options are valid (exit 1
    /// on the command line: a larger budget, more registers or a looser bound may help).
    pub fn is_no_program(&self) -> bool {
        matches!(
            self,
            CompileError::NotFound { .. }
                | CompileError::Crowded { .. }
                | CompileError::NoProgram(_)
                | CompileError::Proof(_)
                | CompileError::NoRangeSafe { .. }
                | CompileError::ApproxMiss { .. }
        )
    }
}

/// Why a kernel's weights cannot be approximated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApproxFailure {
    /// A scaled weight overflows at its own depth.
    #[error(transparent)]
    Overflow(#[from] spec::approx::ApproxError),
    /// A weight overflows at the depth its group shares.
    #[error("weights too large at the common depth {depth} (more than 2^24 atoms per offset)")]
    CommonDepth {
        /// The group's common depth.
        depth: u32,
    },
}

/// A generated program that failed a check the generator relies on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GeneratorBug {
    /// The program does not compute its kernels.
    #[error(transparent)]
    Proof(#[from] crate::verify::proof::ProofError),
    /// A program over several input planes does not compute its kernels.
    #[error(transparent)]
    Planes(#[from] crate::verify::planes::PlanesProofError),
    /// The program's error cannot be predicted.
    #[error(transparent)]
    Predict(#[from] crate::verify::predict::PredictError),
    /// The shortest program's error cannot be predicted.
    #[error("the shortest program's error cannot be predicted")]
    ShortestUnpredicted,
}

impl From<crate::verify::KernelsProofError> for GeneratorBug {
    fn from(e: crate::verify::KernelsProofError) -> GeneratorBug {
        use crate::verify::KernelsProofError as K;
        match e {
            K::Input(e) => GeneratorBug::Proof(e),
            K::Planes(e) => GeneratorBug::Planes(e),
            K::WritesOutside(r) => {
                GeneratorBug::Proof(crate::verify::proof::ProofError::Register(r))
            }
        }
    }
}

/// How a search stopped, as the messages say it.
struct Stopped(StopReason, u64);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let more = match self.0 {
            StopReason::Exhausted => "its whole space is searched: more time would not help",
            _ => "try a larger --time-limit or more registers",
        };
        write!(
            f,
            "stopped by {} after {} nodes; {more}",
            self.0.name(),
            self.1
        )
    }
}
