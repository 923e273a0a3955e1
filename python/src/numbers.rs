//! Python dicts and lists handed to the library's parsers (a spec given as a dict, the
//! changes of `Profile.replace`), turned into JSON here rather than by `json.dumps`:
//! a NaN or infinity is refused naming where it is (JSON has no such numbers, and the
//! parser would only say where in the generated text it stopped), and an integer too
//! large for a float's exact range goes on as a float, so the parser's own range check
//! names it and says what it accepts.

use crate::errors::value_error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// `v` as JSON for the parsers; `what` and the path to a value name it in errors.
pub fn to_json(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    value_of(what, v, "")
}

fn at(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn value_of(what: &str, v: &Bound<'_, PyAny>, path: &str) -> PyResult<Value> {
    let shown = if path.is_empty() { "the value" } else { path };
    if v.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        if let Ok(n) = v.extract::<i64>() {
            return Ok(Value::from(n));
        }
        let f: f64 = v.extract().map_err(|_| {
            value_error(format!(
                "{what}: {shown}: {v} is beyond the range of any number here"
            ))
        })?;
        return Ok(Value::from(f));
    }
    if v.is_instance_of::<PyFloat>() {
        let f: f64 = v.extract()?;
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| value_error(format!("{what}: {shown}: {f} is not a finite number")));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::String(s.extract::<String>()?));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut out = serde_json::Map::new();
        for (k, item) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("{what}: {shown}: keys are strings, got {k}"))
            })?;
            let inner = value_of(what, &item, &at(path, &key))?;
            out.insert(key, inner);
        }
        return Ok(Value::Object(out));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items = v
            .try_iter()?
            .enumerate()
            .map(|(i, item)| value_of(what, &item?, &format!("{shown}[{i}]")))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{what}: {shown}: expected a number, string, list or dict, got {}",
        v.get_type()
            .name()
            .map_or_else(|_| "?".into(), |n| n.to_string())
    )))
}
