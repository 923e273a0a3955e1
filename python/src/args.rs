//! Checks of plain keyword arguments with the range in the message (a wrong value is a
//! `ValueError` naming the argument and what it accepts, not a conversion error).

use crate::errors::value_error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A seed: an integer in 0..2**64-1.
pub fn seed(name: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    let Ok(n) = v.extract::<i128>() else {
        return Err(PyTypeError::new_err(format!(
            "{name}: expected an integer in 0..2**64-1, got {}",
            type_name(v)
        )));
    };
    u64::try_from(n).map_err(|_| value_error(format!("{name}: {n} is outside 0..2**64-1")))
}

/// An optional seed (`None` keeps the default).
pub fn optional_seed(name: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    match v {
        Some(v) if !v.is_none() => seed(name, v).map(Some),
        _ => Ok(None),
    }
}

/// The type of `v` for a message.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}
