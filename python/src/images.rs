//! `scamp.load_image` and `scamp.load_images`: pictures as the array captures them
//! (grey, 256x256), as uint8 arrays to pass to `run` and `check`.

use crate::errors::{dataset_error, value_error};
use numpy::ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray2, PyArray3, PyArrayDescrMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use scamp::{load_images as load_dir, ImagesError};
use scamp::{GreyImage, N};
use std::path::PathBuf;

/// A picture (PNG, JPEG, PGM) as `scamp run --image` captures it: converted to grey
/// and resized to 256x256; uint8 (256, 256).
#[pyfunction]
pub fn load_image(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyArray2<u8>>> {
    let img = scamp::load_image(&path).map_err(|e| PyOSError::new_err(e.to_string()))?;
    let array = Array2::from_shape_vec((N, N), img.pixels).map_err(value_error)?;
    Ok(array.into_pyarray(py))
}

/// Every picture in a folder, sorted by file name, as `scamp check --images` reads
/// them: the names (file stems) and a uint8 (N, 256, 256) batch. Without a folder, the
/// images bundled with the package (the repository's images/).
#[pyfunction]
#[pyo3(signature = (folder = None))]
pub fn load_images(
    py: Python<'_>,
    folder: Option<PathBuf>,
) -> PyResult<(Vec<String>, Bound<'_, PyArray3<u8>>)> {
    let images = match folder {
        Some(folder) => load_dir(&folder).map_err(|e| match e {
            ImagesError::Empty { .. } => dataset_error(&e),
            other => PyOSError::new_err(other.to_string()),
        })?,
        None => scamp::images::all(),
    };
    let count = images.len();
    let mut names = Vec::with_capacity(count);
    let mut pixels = Vec::with_capacity(count * N * N);
    for (name, img) in images {
        names.push(name);
        pixels.extend_from_slice(&img.pixels);
    }
    let array = Array3::from_shape_vec((count, N, N), pixels).map_err(value_error)?;
    Ok((names, array.into_pyarray(py)))
}

/// The `images` argument of `check` and `compare`, with names: a folder of pictures
/// (named by file stem), or uint8 pixels (256, 256) or (N, 256, 256) (named by index).
pub fn grey_images_named(images: &Bound<'_, PyAny>) -> PyResult<Vec<(String, GreyImage)>> {
    if let Ok(array) = images.cast::<numpy::PyUntypedArray>() {
        let dtype = array.dtype();
        if !dtype.is_equiv_to(&numpy::dtype::<u8>(images.py())) {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "images: expected uint8 pixels, got dtype {}",
                dtype.str()?
            )));
        }
        crate::inputs::frames_of("images", array.shape())?;
        let view: numpy::PyReadonlyArrayDyn<'_, u8> = array.extract()?;
        let flat: Vec<u8> = view.as_array().iter().copied().collect();
        return Ok(flat
            .chunks(N * N)
            .enumerate()
            .map(|(i, p)| {
                let img = GreyImage {
                    pixels: p.to_vec(),
                    resized_from: None,
                };
                (i.to_string(), img)
            })
            .collect());
    }
    let folder: PathBuf = images.extract()?;
    load_dir(&folder).map_err(|e| match e {
        ImagesError::Empty { .. } => dataset_error(&e),
        other => PyOSError::new_err(other.to_string()),
    })
}

/// The images bundled with the package (the repository's images/, as `scamp check`
/// measures on by default), without their names.
pub fn bundled() -> Vec<GreyImage> {
    // The same pictures as `load_images()`.
    scamp::images::all().into_iter().map(|(_, g)| g).collect()
}

/// The `images` argument of `check`: the pictures without their names.
pub fn grey_images(images: &Bound<'_, PyAny>) -> PyResult<Vec<GreyImage>> {
    Ok(grey_images_named(images)?
        .into_iter()
        .map(|(_, g)| g)
        .collect())
}
