//! The `inputs` of `scamp.run` and `scamp.compare`: numpy arrays turned into the
//! library's per-frame planes. The dtype says what an array is: float32/float64 are
//! register values, uint8 pixels (the scene `get_image` captures), bool (or integer
//! 0/1) digital bits. The library checks the values (`PlaneValues`), frame by frame,
//! with the frame named in the message. Arrays are copied while the GIL is held, so
//! the simulation that follows runs on memory Python cannot change under it.

use crate::errors::value_error;
use numpy::ndarray::{ArrayView2, ArrayViewD, Axis, Ix2};
use numpy::{PyArrayDescrMethods, PyReadonlyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use scamp::N;
use scamp::{InputError, PlaneValues};

/// What an input array holds, one entry per frame.
#[derive(Clone, Debug)]
pub enum Values {
    /// Checked register values or bits.
    Planes(Vec<PlaneValues>),
    /// Pixels, 65,536 bytes each.
    Pixels(Vec<Vec<u8>>),
}

/// One named input: one plane for every frame, or one plane per frame.
#[derive(Clone, Debug)]
pub struct Input {
    /// The register name as given.
    pub name: String,
    /// Frames in the array: `None` for a single (256, 256) plane.
    pub frames: Option<usize>,
    /// The values.
    pub values: Values,
}

impl Input {
    /// Index of the plane frame `i` uses.
    pub fn at(&self, i: usize) -> usize {
        if self.frames.is_some() {
            i
        } else {
            0
        }
    }
}

/// `(256, 256)` or `(N, 256, 256)`: the number of frames (`None` for one plane).
pub fn frames_of(what: &str, shape: &[usize]) -> PyResult<Option<usize>> {
    match shape {
        [r, c] if (*r, *c) == (N, N) => Ok(None),
        [0, r, c] if (*r, *c) == (N, N) => Err(value_error(format!(
            "{what}: an empty batch (shape (0, {N}, {N}))"
        ))),
        [n, r, c] if (*r, *c) == (N, N) => Ok(Some(*n)),
        _ => {
            let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
            Err(value_error(format!(
                "{what}: expected shape ({N}, {N}) or (N, {N}, {N}), got ({}{})",
                dims.join(", "),
                if dims.len() == 1 { "," } else { "" }
            )))
        }
    }
}

/// The (256, 256) planes of a checked view, each with its name for messages.
fn split<'a, T>(what: &str, view: ArrayViewD<'a, T>) -> Vec<(String, ArrayView2<'a, T>)> {
    match view.clone().into_dimensionality::<Ix2>() {
        Ok(plane) => vec![(what.to_string(), plane)],
        Err(_) => (0..view.len_of(Axis(0)))
            .filter_map(|i| {
                let p = view.clone().index_axis_move(Axis(0), i);
                let p = p.into_dimensionality::<Ix2>().ok()?;
                Some((format!("{what}[{i}]"), p))
            })
            .collect(),
    }
}

/// Every plane of `view` checked by `make` (the library's bit or register-value rule),
/// each named in its message.
fn planes<T>(
    py: Python<'_>,
    what: &str,
    view: ArrayViewD<'_, T>,
    make: impl Fn(&str, ArrayView2<'_, T>) -> Result<PlaneValues, InputError>,
) -> PyResult<Values> {
    split(what, view)
        .into_iter()
        .map(|(n, p)| {
            // A large batch takes seconds to copy: Ctrl-C stops it here too.
            py.check_signals()?;
            make(&n, p).map_err(value_error)
        })
        .collect::<PyResult<_>>()
        .map(Values::Planes)
}

/// Reads `what` (e.g. `inputs['A']`) from `value`; `digital` says whether it goes to
/// a digital register.
pub fn read(what: &str, name: &str, value: &Bound<'_, PyAny>, digital: bool) -> PyResult<Input> {
    let array = value.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: expected a numpy array, got {}",
            value
                .get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    let frames = frames_of(what, array.shape())?;
    let dtype = array.dtype();
    let py = value.py();
    // Big-endian (or other non-native) numbers are the same values: converted to the
    // machine's order first.
    if dtype.is_native_byteorder() == Some(false) {
        let native = dtype.call_method1("newbyteorder", ("=",))?;
        let converted = value.call_method1("astype", (native,))?;
        return read(what, name, &converted, digital);
    }
    let is = |t: Bound<'_, numpy::PyArrayDescr>| dtype.is_equiv_to(&t);
    let values = if digital && is(numpy::dtype::<bool>(py)) {
        let a: PyReadonlyArrayDyn<'_, bool> = array.extract()?;
        planes(
            py,
            what,
            a.as_array().mapv(u8::from).view(),
            PlaneValues::bits,
        )?
    } else if digital && is(numpy::dtype::<u8>(py)) {
        let a: PyReadonlyArrayDyn<'_, u8> = array.extract()?;
        planes(py, what, a.as_array(), PlaneValues::bits)?
    } else if digital && is(numpy::dtype::<i64>(py)) {
        let a: PyReadonlyArrayDyn<'_, i64> = array.extract()?;
        // Out-of-range integers become 255, which the library refuses as not a bit.
        let bytes = a.as_array().mapv(|v| u8::try_from(v).unwrap_or(u8::MAX));
        planes(py, what, bytes.view(), PlaneValues::bits)?
    } else if digital {
        return Err(PyTypeError::new_err(format!(
            "{what}: a digital register takes a bool (or 0/1 integer) array, got dtype {}",
            dtype.str()?
        )));
    } else if is(numpy::dtype::<f32>(py)) {
        let a: PyReadonlyArrayDyn<'_, f32> = array.extract()?;
        planes(py, what, a.as_array(), PlaneValues::analogue)?
    } else if is(numpy::dtype::<f64>(py)) {
        let a: PyReadonlyArrayDyn<'_, f64> = array.extract()?;
        let single = a.as_array().mapv(|v| v as f32);
        planes(py, what, single.view(), PlaneValues::analogue)?
    } else if is(numpy::dtype::<u8>(py)) {
        let a: PyReadonlyArrayDyn<'_, u8> = array.extract()?;
        let planes = split(what, a.as_array());
        Values::Pixels(
            planes
                .into_iter()
                .map(|(_, p)| p.iter().copied().collect())
                .collect(),
        )
    } else {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected float32/float64 register values or uint8 pixels, got dtype {}",
            dtype.str()?
        )));
    };
    Ok(Input {
        name: name.to_string(),
        frames,
        values,
    })
}
