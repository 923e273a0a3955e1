//! The front door of the library: a [`Bank`] of kernels and the program that computes
//! them, and everything a user asks of it — prove it, run it on their own images,
//! measure its error as `scamp check` does, compare noisy and ideal runs — with one
//! serialisable report per command. The command line, the Python bindings and the
//! playground all call these and print their reports; none builds figures of its own.
//!
//! A bank comes from a spec (compiled by the generator), from a program with the spec
//! it is meant to compute, or from a bare program (which can run and be compared, but
//! has no kernels to prove).

mod check_report;
mod compile_report;
mod outputs;
mod setup;
mod simulate;
mod stats;
mod summary;
pub mod text;

pub use check_report::CheckReport;
pub(crate) use check_report::ReportInputs;
pub use compile_report::{CompileReport, SplitJson};
pub use outputs::Pictures;
pub use setup::{InputError, PlaneValues, Preload, Setup, MAX_SET_VALUE};
pub use simulate::{
    batch_bytes, check_tolerance, run_batch, run_one, Frame, RunOptions, RunSummary, RUNS,
};
pub use summary::{run_plan, RunPlan};

use crate::cain::score::budget::{self, BudgetChoice, BudgetRow};
use crate::cain::{self, CompileError, CompileOptions, KernelReport, Spec, Stats};
use crate::isa::{Device, Program};
use crate::sim::capture::GreyImage;
use crate::verify::check::{self, ProfileTestbed};
use crate::verify::compare::{self, CompareError, CompareOptions, Comparison, MapSink};
use crate::verify::groups::{self, EvaluateError, Evaluation, Groups};

/// Kernels and the program (one or more groups) that computes them.
#[derive(Clone, Debug)]
pub struct Bank {
    spec: Option<Spec>,
    groups: Groups,
    kernels: Vec<KernelReport>,
    text: String,
    compiled: Option<CompileReport>,
    budget: Option<(Vec<BudgetRow>, bool)>,
}

/// Why a bank could not be made or used: the one error of [`Bank`]'s methods.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BankError {
    /// The generator or the approximation refused the spec.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The depth search of a total-RMSE budget found nothing.
    #[error(transparent)]
    Budget(#[from] budget::BudgetError),
    /// The evaluation stopped (a run error, or the uncertainty ensemble).
    #[error(transparent)]
    Evaluate(#[from] EvaluateError),
    /// A run stopped ([`Bank::run`]).
    #[error(transparent)]
    Run(#[from] crate::sim::run::RunError),
    /// A comparison stopped ([`Bank::compare`]).
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// A bare program has no kernels to prove or measure.
    #[error(
        "a program needs the spec of the kernels it computes (in the CLI: --kernel SPEC.yaml)"
    )]
    NoKernels,
}

/// What a proof found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// Whether every kernel is computed exactly.
    pub verified: bool,
    /// Where the program departs from the kernels (empty when verified).
    pub mismatch: Vec<String>,
}

/// How a check measures: the noise profile's name as reported, run seeds, and
/// whether to bound the figures over the profile's uncertainty ensemble.
///
/// ```
/// let opts = scamp::CheckOptions::new("scamp5").with_runs(4).with_uncertainty(true);
/// assert_eq!((opts.noise.as_str(), opts.runs, opts.uncertainty), ("scamp5", 4, true));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CheckOptions {
    /// The profile as the caller named it (reported as `noise`).
    pub noise: String,
    /// Run seeds per image.
    pub runs: u32,
    /// Whether to measure the ranges over the uncertainty ensemble.
    pub uncertainty: bool,
}

impl CheckOptions {
    /// One run seed per image under the profile named `noise`, no ensemble.
    pub fn new(noise: impl Into<String>) -> CheckOptions {
        CheckOptions {
            noise: noise.into(),
            runs: 1,
            uncertainty: false,
        }
    }

    /// With `runs` run seeds per image.
    #[must_use]
    pub fn with_runs(mut self, runs: u32) -> CheckOptions {
        self.runs = runs;
        self
    }

    /// With (or without) the uncertainty ensemble's ranges.
    #[must_use]
    pub fn with_uncertainty(mut self, uncertainty: bool) -> CheckOptions {
        self.uncertainty = uncertainty;
        self
    }
}

/// A check's report with the evaluation it was built from (for pictures and files).
pub struct Checked {
    /// What `check --json` prints.
    pub report: CheckReport,
    /// The proof, measurement, prediction and ranges.
    pub evaluation: Evaluation,
}

impl Bank {
    /// Compiles `spec` with the generator (`stats` shows the running search).
    pub fn compile(spec: Spec, opts: &CompileOptions, stats: &Stats) -> Result<Bank, BankError> {
        let c = cain::compile(&spec, opts, stats)?;
        let groups = if c.groups.len() > 1 {
            c.groups
                .iter()
                .map(|g| (g.program.clone(), g.kernels.clone()))
                .collect()
        } else {
            groups::single(c.program.clone(), c.kernels.len())
        };
        let report = CompileReport::of(&spec, &c);
        Ok(Bank {
            text: cain::program_text(&c),
            compiled: Some(report),
            kernels: c.kernels,
            spec: Some(spec),
            groups,
            budget: None,
        })
    }

    /// Compiles `spec` at each depth from small to large and keeps the shortest program
    /// whose worst total RMSE on `images` meets `limit` (else the closest one).
    pub fn compile_within(
        spec: Spec,
        opts: &CompileOptions,
        limit: f64,
        images: &[GreyImage],
        testbed: &ProfileTestbed,
        runs: u32,
    ) -> Result<(Bank, BudgetChoice), BankError> {
        let b = budget::budget_search(&spec, opts, limit, images, testbed, runs)?;
        let bank = Bank {
            text: b.program.to_string(),
            groups: groups::single(b.program.clone(), b.kernels.len()),
            kernels: b.kernels.clone(),
            spec: Some(spec),
            compiled: None,
            budget: Some((b.rows.clone(), b.met)),
        };
        Ok((bank, b))
    }

    /// `program` (parsed from `source`) with the kernels of `spec`. Several
    /// `scamp5_kernel_end` blocks are a bank's groups: each kernel goes to the first
    /// block that proves it.
    ///
    /// ```
    /// use scamp::{Bank, isa};
    /// let spec = scamp::parse_spec(
    ///     "name: half\ninput: A\nregisters: [A, B]\nkernels:\n  - out: A\n    scale: 1/2\n    weights: [[1]]\n",
    /// )
    /// .unwrap();
    /// let program = isa::parse_program("divq(B, A); mov(A, B);", isa::Device::default()).unwrap();
    /// let bank = Bank::with_kernels(program, "", spec).unwrap();
    /// assert_eq!((bank.kernels().len(), bank.groups().len()), (1, 1));
    /// assert_eq!(bank.kernels()[0].out, isa::Reg::Gen(0));
    /// ```
    pub fn with_kernels(program: Program, source: &str, spec: Spec) -> Result<Bank, BankError> {
        let kernels = cain::approximate_spec(&spec)?;
        let ends = groups::kernel_block_ends(source);
        let groups = if ends.len() > 1 {
            let planes: Vec<_> = kernels.iter().map(KernelReport::planes_target).collect();
            groups::assign_blocks(
                groups::split_blocks(&program, &ends),
                spec.wiring(),
                &planes,
            )
        } else {
            groups::single(program.clone(), kernels.len())
        };
        Ok(Bank {
            text: program.to_string(),
            spec: Some(spec),
            groups,
            kernels,
            compiled: None,
            budget: None,
        })
    }

    /// A bare program: it can run and be compared, not proven.
    ///
    /// ```
    /// use scamp::{Bank, BankError, isa};
    /// let bank = Bank::bare(isa::parse_program("mov(B, A);", isa::Device::default()).unwrap());
    /// assert!(bank.spec().is_none());
    /// assert!(matches!(bank.prove(), Err(BankError::NoKernels)));
    /// ```
    pub fn bare(program: Program) -> Bank {
        Bank {
            text: program.to_string(),
            groups: groups::single(program, 0),
            spec: None,
            kernels: Vec::new(),
            compiled: None,
            budget: None,
        }
    }

    /// The whole program (every group's statements in order).
    pub fn program(&self) -> Program {
        Program {
            stmts: self
                .groups
                .iter()
                .flat_map(|(p, _)| p.stmts.clone())
                .collect(),
        }
    }

    /// The program as text (groups separated by kernel-block markers).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The groups: each a program run from the input, with the kernels it holds.
    pub fn groups(&self) -> &Groups {
        &self.groups
    }

    /// The spec, if the bank has kernels.
    pub fn spec(&self) -> Option<&Spec> {
        self.spec.as_ref()
    }

    /// Per kernel, its output register and approximation.
    pub fn kernels(&self) -> &[KernelReport] {
        &self.kernels
    }

    /// What `compile --json` prints, for a bank compiled from a spec.
    pub fn compile_report(&self) -> Option<&CompileReport> {
        self.compiled.as_ref()
    }

    /// The device the program runs on: the spec's registers, else the default.
    ///
    /// ```
    /// let program = scamp::isa::parse_program("mov(B, A);", Default::default()).unwrap();
    /// assert_eq!(scamp::Bank::bare(program).device().general, 6);
    /// ```
    pub fn device(&self) -> Device {
        self.spec.as_ref().map_or_else(Device::default, |s| Device {
            general: s.general_count(),
        })
    }

    fn spec_or_err(&self) -> Result<&Spec, BankError> {
        self.spec.as_ref().ok_or(BankError::NoKernels)
    }

    /// Proves that every group computes its kernels exactly (symbolic execution,
    /// independent of any image).
    ///
    /// ```
    /// use scamp::{Bank, isa};
    /// let half = "name: half\ninput: A\nregisters: [A, B]\nkernels:\n  - out: A\n    scale: 1/2\n    weights: [[1]]\n";
    /// let bank = |text| {
    ///     let program = isa::parse_program(text, isa::Device::default()).unwrap();
    ///     Bank::with_kernels(program, text, scamp::parse_spec(half).unwrap()).unwrap()
    /// };
    /// assert!(bank("divq(B, A); mov(A, B);").prove().unwrap().verified);
    /// // Halving twice computes A/4, not A/2: the proof says which kernel it misses.
    /// let wrong = bank("divq(B, A); divq(A, B);").prove().unwrap();
    /// assert!(!wrong.verified && !wrong.mismatch.is_empty());
    /// ```
    pub fn prove(&self) -> Result<Proof, BankError> {
        let spec = self.spec_or_err()?;
        let mismatch = groups::mismatches(&self.groups, spec.wiring(), &self.planes());
        Ok(Proof {
            verified: mismatch.is_empty(),
            mismatch,
        })
    }

    /// Per kernel, what its output must hold on every input plane.
    fn planes(&self) -> Vec<crate::verify::planes::PlanesTarget> {
        self.kernels
            .iter()
            .map(KernelReport::planes_target)
            .collect()
    }

    /// The measured targets of the kernels: the specified and approximated weights,
    /// on every input plane.
    pub(crate) fn targets(&self) -> Result<Vec<check::Target>, BankError> {
        let spec = self.spec_or_err()?;
        Ok(cain::check_targets(spec, &self.kernels))
    }

    /// Proves the program, then measures it on `images` under `testbed` (error figures
    /// per kernel as `check` reports them), predicts its error analytically, bounds
    /// its static range and, when asked, its figures over the uncertainty ensemble.
    pub fn evaluate(
        &self,
        images: &[GreyImage],
        testbed: &ProfileTestbed,
        runs: u32,
        uncertainty: bool,
    ) -> Result<Evaluation, BankError> {
        let spec = self.spec_or_err()?;
        let targets = self.targets()?;
        Ok(groups::evaluate(&groups::Request {
            groups: &self.groups,
            wiring: spec.wiring(),
            planes: &self.planes(),
            targets: &targets,
            input_range: spec.input_range,
            images,
            testbed,
            runs,
            uncertainty,
        })?)
    }

    /// Everything `scamp check` reports: [`Bank::evaluate`] and its report.
    pub fn check(
        &self,
        images: &[GreyImage],
        testbed: &ProfileTestbed,
        opts: &CheckOptions,
    ) -> Result<Checked, BankError> {
        let evaluation = self.evaluate(images, testbed, opts.runs, opts.uncertainty)?;
        let (budget, met) = match &self.budget {
            Some((rows, met)) => (rows.as_slice(), Some(*met)),
            None => (&[][..], None),
        };
        let report = CheckReport::of(
            &ReportInputs {
                groups: &self.groups,
                kernels: &self.kernels,
                text: &self.text,
                noise: &opts.noise,
                images: images.len(),
                runs: opts.runs,
                budget,
                budget_met: met,
                energy_uj_per_frame: crate::export::plan::frame_energy(self).energy_uj_per_frame,
            },
            &evaluation,
        );
        Ok(Checked { report, evaluation })
    }

    /// Runs the whole program on each setup (frame `i` with run seed `seed + i`) and
    /// reads `watched` off every frame.
    pub fn run(
        &self,
        setups: &[Setup],
        opts: &RunOptions,
        watched: &[compare::Watched],
    ) -> Result<Vec<Frame>, BankError> {
        Ok(run_batch(&self.program(), setups, opts, watched)?)
    }

    /// Runs the whole program on every scene under the noise profile of `opts` and
    /// under `ideal`, and compares the registers of `compare_opts` (`run --compare`).
    /// `setup` prepares the array for a scene; `on_map` receives the first noisy run's
    /// difference maps.
    pub fn compare(
        &self,
        scenes: &[(String, GreyImage)],
        setup: &(dyn Fn(&GreyImage) -> Setup + Sync),
        opts: &RunOptions,
        compare_opts: &CompareOptions,
        on_map: Option<MapSink>,
    ) -> Result<Comparison, BankError> {
        Ok(crate::verify::compare_ranges::compare_with_ranges(
            &self.program(),
            &opts.profile,
            scenes,
            &|img| setup(img).array(),
            compare_opts,
            on_map,
        )?)
    }
}
