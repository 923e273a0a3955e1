//! `scamp.compile`, `scamp.check` and the `Compiled` class: the library's `Bank`
//! (compiled from a spec, or a program with its kernel spec) and the reports that
//! `compile --json` and `check --json` print, as dicts.

use crate::errors::{self, value_error, At};
use crate::images::grey_images;
use crate::run::profile_of;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyModule};
use scamp::GreyImage;
use scamp::DEFAULT_PROFILE;
use scamp::{isa, isa::parse_program, isa::Device};
use scamp::{Bank, BankError, CheckOptions};
use scamp::{CompileError, CompileOptions, Objective, Spec, Stats};
use scamp::{EvaluateError, ProfileTestbed};
use serde::Serialize;
use std::path::PathBuf;

/// A compiled spec: the program the generator found and the report of the search.
#[pyclass(module = "scamp", name = "Compiled", frozen)]
pub struct PyCompiled {
    bank: Bank,
    file: String,
    /// The options it was compiled with: `check(max_total_rmse=)` compiles its spec
    /// again at each depth with them.
    opts: CompileOptions,
}

#[pymethods]
impl PyCompiled {
    /// The program text (what `compile --json` prints as `program`).
    #[getter]
    fn program(&self) -> &str {
        self.bank.text()
    }

    /// The dict `scamp compile --json` prints.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.bank.compile_report())
    }

    /// The spec file compiled (`<spec>` for a text or dict).
    #[getter]
    fn file(&self) -> &str {
        &self.file
    }

    fn __repr__(&self) -> String {
        let p = self.bank.program();
        format!(
            "<scamp.Compiled {}: {} instructions, {} cycles>",
            self.file,
            p.instructions(),
            p.cycles()
        )
    }
}

/// A serialisable report as Python objects (through JSON, so the dict is exactly what
/// the command line prints).
pub fn to_dict<'py, T: Serialize>(py: Python<'py>, report: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(report).map_err(value_error)?;
    PyModule::import(py, "json")?.call_method1("loads", (text,))
}

/// Reads the `spec` argument: a path, YAML text, or a dict; returns the spec and the
/// name errors give it. `weights: FILE.npy` is read relative to a spec file's folder,
/// and to the current directory for a text or a dict.
fn spec_of(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<(Spec, String)> {
    let (text, file, dir) = spec_text(spec)?;
    let parsed = scamp::parse_spec_in(&text, Some(&dir))
        .map_err(|e| errors::spec_error(py, &At::pos(&file, e.pos), &e.cause.to_string()))?;
    Ok((parsed, file))
}

/// The text of the `spec` argument, the name errors give it and the folder its files
/// are read from.
fn spec_text(spec: &Bound<'_, PyAny>) -> PyResult<(String, String, PathBuf)> {
    let here = PathBuf::new();
    let folder = |p: &std::path::Path| p.parent().map_or_else(PathBuf::new, PathBuf::from);
    Ok(if spec.is_instance_of::<PyDict>() {
        let json = crate::numbers::to_json("spec", spec)?;
        (json.to_string(), "<spec>".to_string(), here)
    } else if let Ok(text) = spec.extract::<String>() {
        let path = std::path::Path::new(&text);
        if !text.contains('\n') && path.is_file() {
            (read_spec_file(path)?, text.clone(), folder(path))
        } else {
            (text, "<spec>".to_string(), here)
        }
    } else {
        let path: PathBuf = spec.extract()?;
        (
            read_spec_file(&path)?,
            path.display().to_string(),
            folder(&path),
        )
    })
}

fn read_spec_file(path: &std::path::Path) -> PyResult<String> {
    isa::read_text(path, isa::MAX_SPEC_BYTES, "spec")
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
}

/// The options of `scamp.compile`, as the native signature takes them (the names
/// and order of `scamp::COMPILE_OPTIONS`, checked by python/tests).
pub struct CompileArgs<'py> {
    time_limit: Option<f64>,
    workers: Option<usize>,
    ops: Option<String>,
    registers: Option<Vec<String>>,
    seed: Option<Bound<'py, PyAny>>,
    work: Option<u64>,
    node_limit: Option<u64>,
    memory_limit: Option<u64>,
    objective: Option<String>,
    slack: Option<f64>,
    noise: Option<Bound<'py, PyAny>>,
    fit: Option<bool>,
}

/// The generator's options, with the command line's defaults and limits.
fn compile_options(py: Python<'_>, a: &CompileArgs<'_>) -> PyResult<CompileOptions> {
    let objective: Objective = match a.objective.as_deref() {
        Some(o) => o
            .parse()
            .map_err(|e| errors::option_error(py, "objective", format!("objective: {e}")))?,
        None => Objective::default(),
    };
    let profile = match &a.noise {
        Some(n) => profile_of(py, n)?,
        None => profile_of(py, &DEFAULT_PROFILE.into_pyobject(py)?.into_any())?,
    };
    let mut opts = CompileOptions::default()
        .with_objective(objective)
        .with_profile(profile);
    // Unset, the library applies the declared default.
    opts.slack = a.slack;
    opts.time_limit = a.time_limit;
    opts.workers = a.workers;
    opts.seed = crate::args::optional_seed("seed", a.seed.as_ref())?;
    opts.work = a.work;
    opts.node_limit = a.node_limit;
    opts.memory_limit_mb = a.memory_limit;
    opts.fit = a.fit;
    if let Some(ops) = &a.ops {
        let ops = ops
            .parse::<scamp::Ops>()
            .map_err(|e| errors::option_error(py, "ops", format!("ops: {e}")))?;
        opts.ops = Some(ops);
    }
    if let Some(names) = &a.registers {
        let regs = scamp::parse_registers(names.iter().map(String::as_str))
            .map_err(|e| errors::option_error(py, "registers", format!("registers: {e}")))?;
        opts.registers = Some(regs);
    }
    opts.validate()
        .map_err(|e| errors::option_error(py, e.key, &e))?;
    Ok(opts)
}

/// The Python exception for a bank error about `file`, chosen by the error's kind.
pub fn bank_error(py: Python<'_>, file: &str, e: BankError) -> PyErr {
    match e {
        BankError::Evaluate(EvaluateError::Run(r)) | BankError::Run(r) => {
            errors::program_error(py, &At::pos(file, r.pos), &r.cause.to_string())
        }
        BankError::Compile(CompileError::Options(o)) => {
            errors::option_error(py, o.key, format!("{file}: {o}"))
        }
        BankError::Compile(c @ CompileError::NoSaturation { .. }) => {
            errors::option_error(py, "noise", format!("{file}: {c}"))
        }
        BankError::Compile(c) if c.is_no_program() => errors::compile_error(format!("{file}: {c}")),
        other => value_error(format!("{file}: {other}")),
    }
}

/// Runs the code generator on a filter spec, as ``scamp compile`` does.
///
/// ``spec`` is a path to a spec file, the YAML text of one, or a dict of the same
/// structure. The keywords are the command line's flags (docs/python.md lists them
/// with their defaults): ``time_limit`` (seconds), ``workers``, ``ops`` (``"all"`` or
/// ``"basic"``), ``registers`` (names), ``seed``, ``work`` (a deterministic search of
/// that many nodes per worker: the same program on every run and machine),
/// ``node_limit`` and ``memory_limit`` (MiB) override the spec's keys; ``objective``
/// is ``"error"`` (the default: the lowest predicted error within ``slack``, 25 %, of
/// the shortest length) or ``"length"``; ``noise`` is the profile the error objective
/// predicts with (default ``"scamp5"``); ``fit`` rescales kernels whose output cannot
/// fit the register range; ``accept_approximation`` accepts an approximation that
/// misses the spec's ``max_error``.
///
/// Returns a :class:`Compiled`: ``.program`` is the program text and ``.report`` the
/// dict ``scamp compile --json`` prints. A spec with errors raises :class:`SpecError`
/// with the command line's ``file:line:col: what`` message, an option out of range
/// :class:`OptionError`, and a valid spec without a program :class:`CompileError`.
/// The GIL is released while the search runs.
#[pyfunction]
#[pyo3(signature = (
    spec,
    *,
    time_limit = None,
    workers = None,
    ops = None,
    registers = None,
    seed = None,
    work = None,
    node_limit = None,
    memory_limit = None,
    objective = None,
    slack = None,
    noise = None,
    fit = None,
    accept_approximation = false,
))]
#[allow(clippy::too_many_arguments)] // one Python keyword per compile option
pub fn compile<'py>(
    py: Python<'py>,
    spec: &Bound<'py, PyAny>,
    time_limit: Option<f64>,
    workers: Option<usize>,
    ops: Option<String>,
    registers: Option<Vec<String>>,
    seed: Option<Bound<'py, PyAny>>,
    work: Option<u64>,
    node_limit: Option<u64>,
    memory_limit: Option<u64>,
    objective: Option<String>,
    slack: Option<f64>,
    noise: Option<Bound<'py, PyAny>>,
    fit: Option<bool>,
    accept_approximation: bool,
) -> PyResult<PyCompiled> {
    let args = CompileArgs {
        time_limit,
        workers,
        ops,
        registers,
        seed,
        work,
        node_limit,
        memory_limit,
        objective,
        slack,
        noise,
        fit,
    };
    let (mut spec, file) = spec_of(py, spec)?;
    // As `--accept-approximation`: the flag sets the spec key.
    spec.approximation.accept |= accept_approximation;
    let opts = compile_options(py, &args)?;
    let bank =
        crate::interrupt::interruptible(py, || Bank::compile(spec, &opts, &Stats::default()))?
            .map_err(|e| bank_error(py, &file, e))?;
    Ok(PyCompiled { bank, file, opts })
}

/// The names of the compile options in their declared order
/// (`scamp._scamp.COMPILE_OPTIONS`), for the tests that hold the signature, the stub
/// and the docs to the declaration.
pub fn option_names() -> Vec<&'static str> {
    scamp::COMPILE_OPTIONS.iter().map(|d| d.name).collect()
}

/// The keyword arguments of `scamp.check`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct CheckArgs<'py> {
    kernel: Option<Bound<'py, PyAny>>,
    images: Option<Bound<'py, PyAny>>,
    noise: Bound<'py, PyAny>,
    runs: u32,
    uncertainty: bool,
    seed: Bound<'py, PyAny>,
    chip_seed: Bound<'py, PyAny>,
    max_total_rmse: Option<f64>,
}

/// `max_total_rmse`, as `--max-total-rmse` takes it: finite and more than 0.
fn total_rmse_budget(py: Python<'_>, a: &CheckArgs<'_>) -> PyResult<Option<f64>> {
    match a.max_total_rmse {
        Some(v) if !(v.is_finite() && v > 0.0) => Err(errors::option_error(
            py,
            "max_total_rmse",
            format!("max_total_rmse: must be a finite number more than 0, got {v}"),
        )),
        limit => Ok(limit),
    }
}

/// The bank of `check(compiled, max_total_rmse=limit)`: the compiled spec compiled
/// again at each depth with the same options (as `check SPEC --max-total-rmse`, whose
/// search is the spec's own, without `work`), the shortest that meets `limit`.
fn within_budget(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    a: &CheckArgs<'_>,
    limit: f64,
    images: &[GreyImage],
    testbed: &ProfileTestbed,
) -> PyResult<(Bank, String)> {
    let Ok(c) = target.cast::<PyCompiled>() else {
        return Err(value_error(
            "max_total_rmse needs a compiled spec (scamp.compile) to compile at several depths",
        ));
    };
    if a.kernel.is_some() {
        return Err(value_error(
            "kernel is for programs; a compiled spec carries its own kernels",
        ));
    }
    let runs = a.runs;
    let c = c.get();
    let spec = c
        .bank
        .spec()
        .cloned()
        .ok_or_else(|| value_error("a compiled spec has its spec"))?;
    let mut opts = c.opts.clone();
    opts.work = None;
    let (bank, _) = crate::interrupt::interruptible(py, || {
        Bank::compile_within(spec, &opts, limit, images, testbed, runs)
    })?
    .map_err(|e| bank_error(py, &c.file, e))?;
    Ok((bank, c.file.clone()))
}

/// The bank `check` evaluates: a compiled spec as it is, or a program with the kernel
/// spec it is meant to compute.
fn bank_of(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    a: &CheckArgs<'_>,
) -> PyResult<(Bank, String)> {
    if let Ok(c) = target.cast::<PyCompiled>() {
        if a.kernel.is_some() {
            return Err(value_error(
                "kernel is for programs; a compiled spec carries its own kernels",
            ));
        }
        let c = c.get();
        return Ok((c.bank.clone(), c.file.clone()));
    }
    let program = crate::run::program_of(py, target)?;
    let program = program.get();
    let Some(kernel) = &a.kernel else {
        return Err(value_error(format!(
            "{}: a program needs kernel=SPEC naming the kernels it computes",
            program.file
        )));
    };
    let (spec, spec_file) = spec_of(py, kernel)?;
    let device = Device {
        general: spec.general_count(),
    };
    let parsed = parse_program(&program.text, device).map_err(|e| {
        errors::program_error(py, &At::pos(&program.file, e.pos), &e.cause.to_string())
    })?;
    let bank = Bank::with_kernels(parsed, &program.text, spec)
        .map_err(|e| bank_error(py, &spec_file, e))?;
    Ok((bank, program.file.clone()))
}

/// `scamp.check(target, options)`: proves the program and measures its error on the
/// images; the dict `check --json` prints.
#[pyfunction]
pub fn check<'py>(
    py: Python<'py>,
    target: &Bound<'py, PyAny>,
    options: CheckArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let limit = total_rmse_budget(py, &options)?;
    let images = match &options.images {
        Some(images) if !images.is_none() => grey_images(images)?,
        _ => crate::images::bundled(),
    };
    let profile = profile_of(py, &options.noise)?;
    let noise = match options.noise.extract::<PathBuf>() {
        Ok(p) => p.to_string_lossy().into_owned(),
        Err(_) => profile.name.clone(),
    };
    scamp::RUNS
        .check(options.runs.into())
        .map_err(|e| errors::option_error(py, "runs", e))?;
    let testbed = ProfileTestbed {
        profile,
        chip_seed: crate::args::seed("chip_seed", &options.chip_seed)?,
        seed: crate::args::seed("seed", &options.seed)?,
    };
    let (bank, file) = match limit {
        Some(limit) => within_budget(py, target, &options, limit, &images, &testbed)?,
        None => bank_of(py, target, &options)?,
    };
    let opts = CheckOptions::new(noise)
        .with_runs(options.runs)
        .with_uncertainty(options.uncertainty);
    let checked = crate::interrupt::interruptible(py, || bank.check(&images, &testbed, &opts))?
        .map_err(|e| bank_error(py, &file, e))?;
    to_dict(py, &checked.report)
}
