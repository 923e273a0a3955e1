//! `scamp.compile`, `scamp.check` and the `Compiled` class: the library's `Bank`
//! (compiled from a spec, or a program with its kernel spec) and the reports that
//! `compile --json` and `check --json` print, as dicts.

use crate::errors::{self, value_error, At};
use crate::images::grey_images;
use crate::run::profile_of;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyModule};
use scamp::bank::{Bank, BankError, CheckOptions};
use scamp::cain::{self, CompileOptions, Objective, Spec, Stats};
use scamp::isa::{parse_program, source, Device};
use scamp::verify::check::ProfileTestbed;
use scamp::verify::groups::EvaluateError;
use serde::Serialize;
use std::path::PathBuf;

/// A compiled spec: the program the generator found and the report of the search.
#[pyclass(module = "scamp", name = "Compiled", frozen)]
pub struct PyCompiled {
    bank: Bank,
    file: String,
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
    let (text, file, dir) = spec_text(py, spec)?;
    let parsed = cain::parse_spec_in(&text, Some(&dir))
        .map_err(|e| errors::spec_error(py, &At::pos(&file, e.pos), &e.msg))?;
    Ok((parsed, file))
}

/// The text of the `spec` argument, the name errors give it and the folder its files
/// are read from.
fn spec_text(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<(String, String, PathBuf)> {
    let here = PathBuf::new();
    let folder = |p: &std::path::Path| p.parent().map_or_else(PathBuf::new, PathBuf::from);
    Ok(if spec.is_instance_of::<PyDict>() {
        let json = PyModule::import(py, "json")?.call_method1("dumps", (spec,))?;
        (json.extract::<String>()?, "<spec>".to_string(), here)
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
    source::read_text(path, source::MAX_SPEC_BYTES, "spec")
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
}

/// The keyword arguments of `scamp.compile`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct CompileArgs<'py> {
    objective: Option<String>,
    time_limit: Option<f64>,
    work: Option<u64>,
    workers: Option<usize>,
    seed: Option<u64>,
    noise: Option<Bound<'py, PyAny>>,
}

/// The generator's options, with the command line's defaults and limits.
fn compile_options(py: Python<'_>, a: &CompileArgs<'_>) -> PyResult<CompileOptions> {
    let objective: Objective = match a.objective.as_deref() {
        Some(o) => o
            .parse()
            .map_err(|e| value_error(format!("objective: {e}")))?,
        None => Objective::default(),
    };
    let profile = match &a.noise {
        Some(n) => profile_of(py, n)?,
        None => profile_of(py, &"scamp5".into_pyobject(py)?.into_any())?,
    };
    let opts = CompileOptions {
        time_limit: a.time_limit,
        workers: a.workers,
        seed: a.seed,
        work: a.work,
        objective: Some(objective),
        slack: Some(cain::DEFAULT_SLACK),
        profile: Some(profile),
        ..CompileOptions::default()
    };
    opts.validate().map_err(value_error)?;
    Ok(opts)
}

/// The Python exception for a bank error about `file`.
fn bank_error(py: Python<'_>, file: &str, e: BankError) -> PyErr {
    match e {
        BankError::Evaluate(EvaluateError::Run(r)) => {
            errors::program_error(py, &At::pos(file, r.pos), &r.msg)
        }
        other => value_error(format!("{file}: {other}")),
    }
}

/// `scamp.compile(spec, options)`: runs the code generator on a spec.
#[pyfunction]
pub fn compile(
    py: Python<'_>,
    spec: &Bound<'_, PyAny>,
    options: CompileArgs<'_>,
) -> PyResult<PyCompiled> {
    let (spec, file) = spec_of(py, spec)?;
    let opts = compile_options(py, &options)?;
    let bank = py
        .detach(|| Bank::compile(spec, &opts, &Stats::default()))
        .map_err(|e| bank_error(py, &file, e))?;
    Ok(PyCompiled { bank, file })
}

/// The keyword arguments of `scamp.check`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct CheckArgs<'py> {
    kernel: Option<Bound<'py, PyAny>>,
    images: Bound<'py, PyAny>,
    noise: Bound<'py, PyAny>,
    runs: u32,
    uncertainty: bool,
    seed: u64,
    chip_seed: u64,
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
    let parsed = parse_program(&program.text, device)
        .map_err(|e| errors::program_error(py, &At::pos(&program.file, e.pos), &e.msg))?;
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
    let (bank, file) = bank_of(py, target, &options)?;
    let images = grey_images(&options.images)?;
    let profile = profile_of(py, &options.noise)?;
    let noise = match options.noise.extract::<PathBuf>() {
        Ok(p) => p.to_string_lossy().into_owned(),
        Err(_) => profile.name.clone(),
    };
    scamp::bank::RUNS
        .check(options.runs.into())
        .map_err(value_error)?;
    let testbed = ProfileTestbed {
        profile,
        chip_seed: options.chip_seed,
        seed: options.seed,
    };
    let opts = CheckOptions {
        noise,
        runs: options.runs,
        uncertainty: options.uncertainty,
    };
    let checked = py
        .detach(|| bank.check(&images, &testbed, &opts))
        .map_err(|e| bank_error(py, &file, e))?;
    to_dict(py, &checked.report)
}
