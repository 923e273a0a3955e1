//! `scamp.Profile`: a noise profile, loaded from a built-in name or a YAML file, shown
//! as YAML or a dict, and edited by `replace`.

use crate::errors::{self, At};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyModule};
use scamp::sim::noise::{Profile, ProfileError, BUILTINS};

/// A noise profile: the parameters of the analogue error model.
#[pyclass(module = "scamp", name = "Profile", frozen)]
#[derive(Clone)]
pub struct PyProfile {
    /// The profile.
    pub profile: Profile,
}

/// The Python exception for a profile that could not be read.
pub fn to_py_err(py: Python<'_>, e: &ProfileError) -> PyErr {
    errors::profile_error(
        py,
        &At {
            file: &e.file,
            line: e.line as u64,
            column: e.col as u64,
        },
        &e.cause.to_string(),
    )
}

/// `json.loads(text)`.
fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    PyModule::import(py, "json")?.call_method1("loads", (text,))
}

/// Writes `change` into `tree` at `path`: a dict merges key by key into an object (or
/// replaces an absent section), anything else replaces the value. Keys the profile
/// does not have are errors naming their dotted path.
fn merge(tree: &mut serde_json::Value, change: serde_json::Value, path: &str) -> PyResult<()> {
    use serde_json::Value;
    match (tree, change) {
        (Value::Object(fields), Value::Object(changes)) => {
            for (key, value) in changes {
                let at = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                let Some(slot) = fields.get_mut(&key) else {
                    let known: Vec<&str> = fields.keys().map(String::as_str).collect();
                    return Err(errors::value_error(format!(
                        "Profile.replace: unknown field `{at}` (expected one of {})",
                        known.join(", ")
                    )));
                };
                merge(slot, value, &at)?;
            }
            Ok(())
        }
        (slot, change) => {
            *slot = change;
            Ok(())
        }
    }
}

#[pymethods]
impl PyProfile {
    /// A built-in profile (`"ideal"` or `"scamp5"`) or a profile YAML file.
    #[staticmethod]
    fn load(py: Python<'_>, name_or_path: std::path::PathBuf) -> PyResult<Self> {
        let name = name_or_path.to_string_lossy();
        Profile::load(&name)
            .map(|profile| PyProfile { profile })
            .map_err(|e| to_py_err(py, &e))
    }

    /// A built-in profile by name: `"ideal"` or `"scamp5"`.
    #[staticmethod]
    fn builtin(name: &str) -> PyResult<Self> {
        Profile::builtin(name)
            .map(|profile| PyProfile { profile })
            .ok_or_else(|| {
                errors::value_error(format!(
                    "no built-in noise profile `{name}` (expected one of {})",
                    BUILTINS.join(", ")
                ))
            })
    }

    /// A profile from YAML text; `name` stands for the file in error messages.
    #[staticmethod]
    #[pyo3(signature = (text, name = "<profile>"))]
    fn from_yaml(py: Python<'_>, text: &str, name: &str) -> PyResult<Self> {
        Profile::from_yaml(text, name)
            .map(|profile| PyProfile { profile })
            .map_err(|e| to_py_err(py, &e))
    }

    /// The profile as YAML, in the format `Profile.load` reads.
    fn to_yaml(&self) -> String {
        self.profile.to_yaml()
    }

    /// The profile as nested dicts (the YAML's structure).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(&self.profile).map_err(errors::value_error)?;
        loads(py, &text)
    }

    /// The profile's short name.
    #[getter]
    fn name(&self) -> &str {
        &self.profile.name
    }

    /// Where the profile's numbers come from.
    #[getter]
    fn description(&self) -> &str {
        &self.profile.description
    }

    /// Whether the profile changes nothing (every error off, no readout path).
    #[getter]
    fn is_exact(&self) -> bool {
        self.profile.is_exact()
    }

    /// A copy with fields changed: `replace(name="quiet", readout={"enabled": False},
    /// transfer={"bus_1": {"noise": 0.0}})`. Dicts merge into the sections they name;
    /// every value is checked as `Profile.load` checks a file.
    #[pyo3(signature = (**changes))]
    fn replace(&self, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut tree = serde_json::to_value(&self.profile).map_err(errors::value_error)?;
        if let Some(changes) = changes {
            let change = crate::numbers::to_json("Profile.replace", changes.as_any())?;
            merge(&mut tree, change, "")?;
        }
        serde_json::from_value(tree)
            .map(|profile| PyProfile { profile })
            .map_err(|e| errors::value_error(format!("Profile.replace: {e}")))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyProfile>()
            .is_ok_and(|o| o.get().profile == self.profile)
    }

    fn __repr__(&self) -> String {
        format!("<scamp.Profile {}>", self.profile.name)
    }
}
