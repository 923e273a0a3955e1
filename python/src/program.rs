//! `scamp.parse`, `scamp.load` and the `Program` class.

use crate::errors::{self, At};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use scamp::{isa, isa::parse_program, isa::Device, isa::Program};
use std::path::PathBuf;

/// A parsed SCAMP-5 program (vendor macro / bus syntax), ready to run or check.
#[pyclass(module = "scamp", name = "Program", frozen)]
pub struct PyProgram {
    /// The parsed program.
    pub program: Program,
    /// Its source text.
    pub text: String,
    /// The file it came from, or `<program>` for a text.
    pub file: String,
}

#[pymethods]
impl PyProgram {
    /// The source text.
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    /// The file the program was read from (`<program>` for a text).
    #[getter]
    fn file(&self) -> &str {
        &self.file
    }

    /// Number of macro instructions.
    #[getter]
    fn instructions(&self) -> usize {
        self.program.instructions()
    }

    /// Number of bus instructions (array cycles) of one run.
    #[getter]
    fn cycles(&self) -> u64 {
        self.program.cycles()
    }

    /// The analogue registers the program writes, in order (`["A", "B"]`).
    #[getter]
    fn written_registers(&self) -> Vec<String> {
        self.program
            .written_registers()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The digital registers the program writes (`["R5"]`).
    #[getter]
    fn written_digital_registers(&self) -> Vec<String> {
        self.program
            .written_digital_registers()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!(
            "<scamp.Program {}: {} instructions, {} cycles>",
            self.file,
            self.program.instructions(),
            self.program.cycles()
        )
    }
}

impl PyProgram {
    /// Parses `text`, naming it `file` in errors.
    pub fn from_text(py: Python<'_>, text: String, file: String) -> PyResult<Self> {
        match parse_program(&text, Device::default()) {
            Ok(program) => Ok(PyProgram {
                program,
                text,
                file,
            }),
            Err(e) => Err(errors::program_error(
                py,
                &At::pos(&file, e.pos),
                &e.cause.to_string(),
            )),
        }
    }

    /// Reads and parses the program file at `path`.
    pub fn from_file(py: Python<'_>, path: &std::path::Path) -> PyResult<Self> {
        let file = path.display().to_string();
        let text =
            isa::read_text(path, isa::MAX_PROGRAM_BYTES, "program").map_err(|e| match e {
                isa::SourceError::NotUtf8 { what, pos } => errors::program_error(
                    py,
                    &At::pos(&file, pos),
                    &format!("the {what} is not UTF-8 text"),
                ),
                isa::SourceError::Io { .. } => PyOSError::new_err(format!("{file}: {e}")),
                other => errors::value_error(format!("{file}: {other}")),
            })?;
        Self::from_text(py, text, file)
    }
}

/// Parses a program text. A program that does not parse raises `ProgramError`
/// (a `ValueError`) whose message reads `NAME:LINE:COL: what`.
#[pyfunction]
#[pyo3(signature = (text, *, name = None))]
pub fn parse(py: Python<'_>, text: String, name: Option<String>) -> PyResult<PyProgram> {
    PyProgram::from_text(py, text, name.unwrap_or_else(|| "<program>".into()))
}

/// Reads and parses a program file.
#[pyfunction]
pub fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyProgram> {
    PyProgram::from_file(py, &path)
}
