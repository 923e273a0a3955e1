//! `scamp.choose_layer`: float weights (a numpy array or a `.npy` file in PyTorch's
//! layout) to a layer spec, with the scale and depth the library's chooser picked.

use crate::errors::value_error;
use crate::evaluate::to_dict;
use crate::run::profile_of;
use ndarray::{Array1, Array4, Ix1, Ix4};
use numpy::{PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use scamp::isa::Reg;
use scamp::{choose_layer as choose, spec_yaml, ApproxParams, ChooseOptions, LayerTarget};
use std::path::PathBuf;

/// The keyword arguments of `scamp.choose_layer`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct ChooseArgs<'py> {
    outputs: Vec<String>,
    groups: usize,
    inputs: Vec<String>,
    registers: Option<Vec<String>>,
    name: String,
    noise: Bound<'py, PyAny>,
    max_depth: u32,
}

/// A general register named `s` (`what` names the argument in the message).
fn register(s: &str, what: &str) -> PyResult<Reg> {
    match Reg::parse(s) {
        Some(r @ Reg::Gen(_)) => Ok(r),
        _ => Err(value_error(format!(
            "{what}: `{s}` is not a general register (A..Z)"
        ))),
    }
}

fn registers(names: &[String], what: &str) -> PyResult<Vec<Reg>> {
    names.iter().map(|s| register(s, what)).collect()
}

/// An array argument: a `.npy` path read by `read` (errors name the file), or a float64
/// numpy array of `rank` dimensions.
fn array<T>(
    value: &Bound<'_, PyAny>,
    what: &str,
    rank: usize,
    read: impl FnOnce(&std::path::Path) -> Result<T, scamp::LayerError>,
    from_dyn: impl FnOnce(ndarray::ArrayD<f64>) -> Option<T>,
) -> PyResult<T> {
    if let Ok(path) = value.extract::<PathBuf>() {
        return read(&path).map_err(value_error);
    }
    let a: PyReadonlyArrayDyn<'_, f64> = value.extract().map_err(|_| {
        value_error(format!(
            "{what} must be a .npy path or a numpy array of floats"
        ))
    })?;
    if a.ndim() != rank {
        return Err(value_error(format!(
            "{what} must have {rank} dimensions, got shape {:?}",
            a.shape()
        )));
    }
    from_dyn(a.as_array().to_owned()).ok_or_else(|| value_error(format!("{what}: bad shape")))
}

/// `scamp.choose_layer(weights, bias, options)`: the chosen layer as a dict, its spec
/// as YAML text under `spec`.
#[pyfunction]
pub fn choose_layer<'py>(
    py: Python<'py>,
    weights: &Bound<'py, PyAny>,
    bias: Option<&Bound<'py, PyAny>>,
    options: ChooseArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let w: Array4<f64> = array(weights, "weights", 4, scamp::read_weights, |a| {
        a.into_dimensionality::<Ix4>().ok()
    })?;
    let b: Option<Array1<f64>> = match bias {
        Some(b) => Some(array(b, "bias", 1, scamp::read_bias, |a| {
            a.into_dimensionality::<Ix1>().ok()
        })?),
        None => None,
    };
    let target = LayerTarget {
        name: options.name.clone(),
        inputs: registers(&options.inputs, "inputs")?,
        outputs: registers(&options.outputs, "outputs")?,
        registers: match &options.registers {
            Some(r) => registers(r, "registers")?,
            None => (0..6).map(Reg::Gen).collect(),
        },
        scale: 1.0,
        approximation: ApproxParams::default(),
    };
    let opts = ChooseOptions::default()
        .with_max_depth(options.max_depth)
        .with_profile(profile_of(py, &options.noise)?);
    if options.max_depth > scamp::DEEPEST {
        return Err(value_error(format!(
            "max_depth must be at most {}, got {}",
            scamp::DEEPEST,
            options.max_depth
        )));
    }
    let groups = options.groups;
    let chosen = py
        .detach(|| {
            choose(
                w.view(),
                b.as_ref().map(|b| b.view()),
                groups,
                &target,
                &opts,
            )
        })
        .map_err(value_error)?;
    let mut report = serde_json::to_value(&chosen).map_err(value_error)?;
    report["spec"] = spec_yaml(&chosen.layer.spec).into();
    report["bias"] = chosen.layer.bias.clone().into();
    to_dict(py, &report)
}
