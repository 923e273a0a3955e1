//! The package's exceptions: every error the package raises on bad input is a
//! `scamp.Error` (a `ValueError`, as the package raised before the hierarchy), of the
//! class of its kind, chosen from the library's error type and never from its text.
//! Each error with a position in a source text carries `.file`, `.line` and `.column`,
//! and its message reads `FILE:LINE:COL: what`, as the command line prints it.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scamp::isa::Pos;

create_exception!(
    scamp,
    Error,
    PyValueError,
    "Every error of the package on bad input (a ValueError, for code that catches those)."
);
create_exception!(
    scamp,
    SourceError,
    Error,
    "A source text (program, spec or noise profile) with an error at `.file`, `.line`, `.column`."
);
create_exception!(
    scamp,
    ProgramError,
    SourceError,
    "A program that does not parse or stops while it runs; the message carries `line:col`."
);
create_exception!(
    scamp,
    SpecError,
    SourceError,
    "A filter spec with an error; the message is the command line's `file:line:col: what`."
);
create_exception!(
    scamp,
    ProfileError,
    SourceError,
    "A noise profile that cannot be read; the message carries `file:line:col`."
);
create_exception!(
    scamp,
    OptionError,
    Error,
    "A keyword argument outside the values it takes; `.option` names it."
);
create_exception!(
    scamp,
    DatasetError,
    Error,
    "A dataset or a set of images that cannot be used (empty, or of the wrong shape)."
);
create_exception!(
    scamp,
    CompileError,
    Error,
    "A valid spec for which the generator produced no program (`scamp compile` exits 1)."
);

/// The exception classes, as the module exports them.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("SourceError", py.get_type::<SourceError>())?;
    m.add("ProgramError", py.get_type::<ProgramError>())?;
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("ProfileError", py.get_type::<ProfileError>())?;
    m.add("OptionError", py.get_type::<OptionError>())?;
    m.add("DatasetError", py.get_type::<DatasetError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    Ok(())
}

/// Where a source error is.
pub struct At<'a> {
    /// The file (or the name given to a text).
    pub file: &'a str,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

impl<'a> At<'a> {
    /// `pos` (a parser's or the simulator's position) in `file`.
    pub fn pos(file: &'a str, pos: Pos) -> At<'a> {
        At {
            file,
            line: pos.line.into(),
            column: pos.col.into(),
        }
    }
}

/// Builds the exception `E` with message `FILE:LINE:COL: msg` and its position
/// attributes set.
fn positioned<E: pyo3::PyTypeInfo>(py: Python<'_>, at: &At<'_>, msg: &str) -> PyErr {
    let text = format!("{}:{}:{}: {msg}", at.file, at.line, at.column);
    let err = PyErr::from_type(py.get_type::<E>(), text);
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in practice; if it
    // did, the message still carries the position.
    let _ = value.setattr("file", at.file);
    let _ = value.setattr("line", at.line);
    let _ = value.setattr("column", at.column);
    err
}

/// A program error at `at`.
pub fn program_error(py: Python<'_>, at: &At<'_>, msg: &str) -> PyErr {
    positioned::<ProgramError>(py, at, msg)
}

/// A spec error at `at`.
pub fn spec_error(py: Python<'_>, at: &At<'_>, msg: &str) -> PyErr {
    positioned::<SpecError>(py, at, msg)
}

/// A noise-profile error at `at`.
pub fn profile_error(py: Python<'_>, at: &At<'_>, msg: &str) -> PyErr {
    positioned::<ProfileError>(py, at, msg)
}

/// A `scamp.Error` of no narrower kind.
pub fn value_error(msg: impl std::fmt::Display) -> PyErr {
    Error::new_err(msg.to_string())
}

/// A keyword argument `option` refused with `msg`.
pub fn option_error(py: Python<'_>, option: &str, msg: impl std::fmt::Display) -> PyErr {
    let err = OptionError::new_err(msg.to_string());
    // As in `positioned`: the message names the option anyway.
    let _ = err.value(py).setattr("option", option);
    err
}

/// A dataset or image set that cannot be used.
pub fn dataset_error(msg: impl std::fmt::Display) -> PyErr {
    DatasetError::new_err(msg.to_string())
}

/// A valid spec without a program.
pub fn compile_error(msg: impl std::fmt::Display) -> PyErr {
    CompileError::new_err(msg.to_string())
}

/// The exception for an evaluation error, chosen by its kind: the dataset or the images
/// (`DatasetError`), an option (`OptionError` naming it), the rest `scamp.Error`.
pub fn eval_error(py: Python<'_>, e: scamp::eval::EvalError) -> PyErr {
    use scamp::eval::EvalError as E;
    match e {
        E::Dataset(_) | E::Tiling(_) | E::NoTrainImages | E::NoTestImages => dataset_error(e),
        E::EmptyShard { .. } => option_error(py, "shard", e),
        E::TooDeep { .. } => option_error(py, "depths", e),
        other => value_error(other),
    }
}
