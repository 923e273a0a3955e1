//! The `inputs` of `scamp.run`: numpy arrays turned into the planes the library
//! preloads, one (256, 256) plane or a batch (N, 256, 256), checked on the way in.
//!
//! The dtype says what an array is: float32/float64 are register values, uint8 are
//! pixels (the scene `get_image` captures), bool (or integer 0/1) are digital bits.
//! The arrays are copied while the GIL is held, so the simulation that follows runs on
//! memory Python cannot change under it.

use crate::errors::value_error;
use numpy::{PyArrayDescrMethods, PyReadonlyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use scamp::sim::{N, PES};

/// What the values of an input array are.
#[derive(Clone, Debug)]
pub enum Values {
    /// Register values (float32/float64), one `f32` per PE and frame.
    Analogue(Vec<f32>),
    /// Pixels, one byte per PE and frame.
    Pixels(Vec<u8>),
    /// Digital bits (0 or 1), one byte per PE and frame.
    Bits(Vec<u8>),
}

/// One named input: one plane for every frame, or one plane per frame.
#[derive(Clone, Debug)]
pub struct Input {
    /// The register name as given.
    pub name: String,
    /// Frames in the array: `None` for a single (256, 256) plane.
    pub frames: Option<usize>,
    /// The values, frame after frame.
    pub values: Values,
}

impl Input {
    /// The plane of frame `i` (the only plane of a single-plane input).
    pub fn frame(&self, i: usize) -> PlaneRef<'_> {
        let at = if self.frames.is_some() { i * PES } else { 0 };
        match &self.values {
            Values::Analogue(v) => PlaneRef::Analogue(&v[at..at + PES]),
            Values::Pixels(v) => PlaneRef::Pixels(&v[at..at + PES]),
            Values::Bits(v) => PlaneRef::Bits(&v[at..at + PES]),
        }
    }
}

/// One frame's plane of an [`Input`].
#[derive(Clone, Copy, Debug)]
pub enum PlaneRef<'a> {
    /// Register values.
    Analogue(&'a [f32]),
    /// Pixels.
    Pixels(&'a [u8]),
    /// Digital bits.
    Bits(&'a [u8]),
}

/// `(256, 256)` or `(N, 256, 256)`: the number of frames (`None` for one plane).
fn frames_of(name: &str, shape: &[usize]) -> PyResult<Option<usize>> {
    match shape {
        [r, c] if (*r, *c) == (N, N) => Ok(None),
        [0, r, c] if (*r, *c) == (N, N) => Err(value_error(format!(
            "inputs[{name:?}]: an empty batch (shape (0, {N}, {N}))"
        ))),
        [n, r, c] if (*r, *c) == (N, N) => Ok(Some(*n)),
        _ => {
            let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
            Err(value_error(format!(
                "inputs[{name:?}]: expected shape ({N}, {N}) or (N, {N}, {N}), got ({}{})",
                dims.join(", "),
                if dims.len() == 1 { "," } else { "" }
            )))
        }
    }
}

/// Where flat index `i` is, for messages: `image 3, row 10, column 5`.
fn place(i: usize, batch: bool) -> String {
    let (frame, pe) = (i / PES, i % PES);
    let rc = format!("row {}, column {}", pe / N, pe % N);
    if batch {
        format!("image {frame}, {rc}")
    } else {
        rc
    }
}

/// Copies a float array as `f32`, refusing NaN, infinities and values beyond `limit`.
fn analogue<T: numpy::Element + Copy + Into<f64>>(
    name: &str,
    array: &Bound<'_, PyUntypedArray>,
    batch: bool,
    limit: f64,
) -> PyResult<Vec<f32>> {
    let view: PyReadonlyArrayDyn<'_, T> = array.extract()?;
    let mut out = Vec::with_capacity(view.len());
    for (i, &v) in view.as_array().iter().enumerate() {
        let x: f64 = v.into();
        if !x.is_finite() {
            return Err(value_error(format!(
                "inputs[{name:?}]: value {x} at {} is not finite",
                place(i, batch)
            )));
        }
        if x.abs() > limit {
            return Err(value_error(format!(
                "inputs[{name:?}]: value {x} at {} is outside the register range -{limit}..{limit}",
                place(i, batch)
            )));
        }
        out.push(x as f32);
    }
    Ok(out)
}

/// Copies a bool or integer array as bits, refusing values other than 0 and 1.
fn bits<T: numpy::Element + Copy + Into<i64>>(
    name: &str,
    array: &Bound<'_, PyUntypedArray>,
    batch: bool,
) -> PyResult<Vec<u8>> {
    let view: PyReadonlyArrayDyn<'_, T> = array.extract()?;
    let mut out = Vec::with_capacity(view.len());
    for (i, &v) in view.as_array().iter().enumerate() {
        match v.into() {
            0 => out.push(0),
            1 => out.push(1),
            x => {
                return Err(value_error(format!(
                    "inputs[{name:?}]: a digital register takes 0 or 1, got {x} at {}",
                    place(i, batch)
                )))
            }
        }
    }
    Ok(out)
}

/// Reads input `name` from `value`; `digital` says whether the register named is a
/// digital one, `limit` is the register range.
pub fn read(name: &str, value: &Bound<'_, PyAny>, digital: bool, limit: f64) -> PyResult<Input> {
    let array = value.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "inputs[{name:?}]: expected a numpy array, got {}",
            value
                .get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    let frames = frames_of(name, array.shape())?;
    let batch = frames.is_some();
    let dtype = array.dtype();
    let kind = dtype.str()?.to_string();
    let py = value.py();
    let is = |t: Bound<'_, numpy::PyArrayDescr>| dtype.is_equiv_to(&t);
    let values = if digital {
        if is(numpy::dtype::<bool>(py)) {
            Values::Bits(bits::<bool>(name, array, batch)?)
        } else if is(numpy::dtype::<u8>(py)) {
            Values::Bits(bits::<u8>(name, array, batch)?)
        } else if is(numpy::dtype::<i64>(py)) {
            Values::Bits(bits::<i64>(name, array, batch)?)
        } else if is(numpy::dtype::<i32>(py)) {
            Values::Bits(bits::<i32>(name, array, batch)?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "inputs[{name:?}]: a digital register takes a bool (or 0/1 integer) array, got dtype {kind}"
            )));
        }
    } else if is(numpy::dtype::<f32>(py)) {
        Values::Analogue(analogue::<f32>(name, array, batch, limit)?)
    } else if is(numpy::dtype::<f64>(py)) {
        Values::Analogue(analogue::<f64>(name, array, batch, limit)?)
    } else if is(numpy::dtype::<u8>(py)) {
        let view: PyReadonlyArrayDyn<'_, u8> = array.extract()?;
        Values::Pixels(view.as_array().iter().copied().collect())
    } else {
        return Err(PyTypeError::new_err(format!(
            "inputs[{name:?}]: expected float32/float64 register values or uint8 pixels, got dtype {kind}"
        )));
    };
    Ok(Input {
        name: name.to_string(),
        frames,
        values,
    })
}
