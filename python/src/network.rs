//! `scamp.Network`'s native half: a network file loaded by the library, its chip part
//! compiled and proven, its evaluation (the dict `scamp eval --json` prints) and the
//! features it reads out for a batch of images. Frames run with the GIL released.

use crate::errors::value_error;
use crate::evaluate::to_dict;
use crate::profile::PyProfile;
use numpy::ndarray::{Array2, Array4};
use numpy::{IntoPyArray, PyArrayDescrMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scamp::eval as ev;
use scamp::CompileOptions;
use scamp::Profile;
use scamp::{
    eval, eval::extract_features, eval::BuildOptions, eval::Built, eval::Network, eval::Sample,
    eval::Shard, eval::Split,
};
use std::path::PathBuf;
use std::sync::Mutex;

/// A network of on-sensor stages, a readout and a head (docs/eval.md).
#[pyclass(module = "scamp._scamp", name = "NativeNetwork", frozen)]
pub struct PyNetwork {
    net: Network,
    /// Chip parts built so far, by image size, depth and work budget: compiling a
    /// stage can take seconds, a batch of features milliseconds.
    built: Mutex<Vec<(BuildKey, Built)>>,
}

type BuildKey = (usize, usize, Option<u32>, Option<u64>);

impl PyNetwork {
    /// The chip part for `key`, built once.
    fn built(&self, key: BuildKey) -> Result<Built, ev::EvalError> {
        if let Some((_, b)) = self.cache().iter().find(|(k, _)| *k == key) {
            return Ok(b.clone());
        }
        let b = Built::new(&self.net, key.0, key.1, &build_options(key.2, key.3))?;
        self.cache().push((key, b.clone()));
        Ok(b)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Vec<(BuildKey, Built)>> {
        // A panic while the lock was held left a list of finished builds: still valid.
        self.built.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A noise argument with the name reports give it: a built-in name, a path or a
/// `Profile`.
fn named_profile(py: Python<'_>, noise: &Bound<'_, PyAny>) -> PyResult<(String, Profile)> {
    if let Ok(p) = noise.cast::<PyProfile>() {
        let p = p.get().profile.clone();
        return Ok((p.name.clone(), p));
    }
    let name: PathBuf = noise.extract()?;
    ev::named_profile(&name.to_string_lossy()).map_err(|e| crate::profile::to_py_err(py, &e))
}

fn build_options(depth: Option<u32>, work: Option<u64>) -> BuildOptions {
    BuildOptions::default()
        .with_depth(depth)
        .with_compile(match work {
            Some(w) => CompileOptions::default().with_work(w),
            None => CompileOptions::default(),
        })
}

/// The uint8 images argument of `features`: (H, W) or (N, H, W).
fn split_of(images: &Bound<'_, PyAny>) -> PyResult<Split> {
    let array = images.cast::<numpy::PyUntypedArray>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("images: expected a numpy uint8 array")
    })?;
    let dtype = array.dtype();
    if !dtype.is_equiv_to(&numpy::dtype::<u8>(images.py())) {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "images: expected uint8 pixels, got dtype {}",
            dtype.str()?
        )));
    }
    let (n, rows, cols) = match array.shape() {
        [r, c] => (1, *r, *c),
        [n, r, c] => (*n, *r, *c),
        s => {
            return Err(value_error(format!(
                "images: expected shape (H, W) or (N, H, W), got {s:?}"
            )))
        }
    };
    if n == 0 || rows == 0 || cols == 0 {
        return Err(value_error("images: an empty batch"));
    }
    let view: numpy::PyReadonlyArrayDyn<'_, u8> = array.extract()?;
    Ok(Split {
        rows,
        cols,
        pixels: view.as_array().iter().copied().collect(),
        labels: vec![0; n],
    })
}

#[pymethods]
impl PyNetwork {
    /// Reads a network file (the files it names relative to its folder); `None` for
    /// the bundled default network.
    #[staticmethod]
    #[pyo3(signature = (path = None))]
    fn load(path: Option<PathBuf>) -> PyResult<PyNetwork> {
        let net = eval::load_path(path.as_deref()).map_err(value_error)?;
        Ok(PyNetwork {
            net,
            built: Mutex::new(Vec::new()),
        })
    }

    /// The network's name.
    #[getter]
    fn name(&self) -> &str {
        &self.net.name
    }

    /// The chip part for `rows x cols` images at `depth`: every stage's program (given
    /// ones proven, others compiled), and the frame program with its figures.
    #[pyo3(signature = (rows = 28, cols = 28, depth = None, work = None))]
    fn compile<'py>(
        &self,
        py: Python<'py>,
        rows: usize,
        cols: usize,
        depth: Option<u32>,
        work: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let built = crate::interrupt::interruptible(py, || self.built((rows, cols, depth, work)))?
            .map_err(|e| crate::errors::eval_error(py, e))?;
        let d = PyDict::new(py);
        let p = &built.chip.program;
        d.set_item("program", p.to_string())?;
        d.set_item("instructions", p.instructions())?;
        d.set_item("cycles", p.cycles())?;
        d.set_item("gap", built.chip.reach)?;
        d.set_item("images_per_frame", built.tiling.per_frame())?;
        d.set_item("maps", built.chip.maps.len())?;
        d.set_item("features", built.layout.features())?;
        let names = |regs: Vec<scamp::isa::Reg>| -> Vec<String> {
            regs.iter().map(ToString::to_string).collect()
        };
        let list = built
            .chip
            .stages
            .iter()
            .zip(&self.net.stages)
            .map(|(s, def)| {
                let d = PyDict::new(py);
                d.set_item("program", s.program.to_string())?;
                d.set_item("depth", s.depth)?;
                d.set_item("reach", s.reach)?;
                d.set_item("inputs", names(def.spec.inputs()))?;
                d.set_item("outputs", names(def.spec.outputs()))?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("stages", list)?;
        Ok(d.into_any())
    }

    /// The evaluation `scamp eval --json` prints, as a dict; `progress(done, total)` is
    /// called with the frames of each phase as they finish (at a bounded rate).
    #[pyo3(signature = (dataset = None, noise = None, chip_seeds = 3, seed = 0, train_noise = None, train_images = None, test_images = None, depths = None, work = None, shard = None, uncertainty = false, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        dataset: Option<PathBuf>,
        noise: Option<Bound<'py, PyAny>>,
        chip_seeds: u32,
        seed: u64,
        train_noise: Option<Bound<'py, PyAny>>,
        train_images: Option<usize>,
        test_images: Option<usize>,
        depths: Option<Vec<u32>>,
        work: Option<u64>,
        shard: Option<String>,
        uncertainty: bool,
        progress: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(p) = &progress {
            if !p.is_callable() {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "progress: expected a callable (done, total)",
                ));
            }
        }
        if !(1..=1000).contains(&chip_seeds) {
            return Err(crate::errors::option_error(
                py,
                "chip_seeds",
                "chip_seeds: 1..1000",
            ));
        }
        let noise = match &noise {
            Some(n) => named_profile(py, n)?,
            None => ev::named_profile(scamp::DEFAULT_PROFILE)
                .map_err(|e| crate::profile::to_py_err(py, &e))?,
        };
        let train_noise = train_noise
            .as_ref()
            .map(|n| named_profile(py, n))
            .transpose()?;
        let shard = shard
            .as_deref()
            .map(Shard::parse)
            .transpose()
            .map_err(|e| crate::errors::option_error(py, "shard", e))?;
        if uncertainty {
            // Refused before the nominal evaluation it would wait for, as the CLI does.
            if shard.is_some() {
                return Err(crate::errors::option_error(
                    py,
                    "uncertainty",
                    "uncertainty: not with shard (the ranges need the whole test set)",
                ));
            }
            scamp::described(&noise.1)
                .map_err(|e| crate::errors::option_error(py, "uncertainty", e))?;
        }
        let dir = dataset.unwrap_or_else(|| PathBuf::from(eval::DEFAULT_DATASET_DIR));
        let data = py
            .detach(|| eval::read_dataset(&dir))
            .map_err(crate::errors::dataset_error)?;
        let report =
            crate::interrupt::interruptible_with_progress(py, progress.as_ref(), |record| {
                let hook = |_: &str, done: u64, total: u64| record(done, total);
                let opts = ev::Options::default()
                    .with_noise(noise)
                    .with_chip_seeds(chip_seeds)
                    .with_seed(seed)
                    .with_train_noise(train_noise)
                    .with_train_images(train_images)
                    .with_test_images(test_images)
                    .with_shard(shard)
                    .with_depths(depths)
                    .with_compile(build_options(None, work).compile)
                    .with_progress(Some(&hook))
                    .with_count_saturation(true);
                let e = ev::evaluate(&self.net, &data, &opts)?;
                let mut report = ev::report(&e.merge);
                if uncertainty {
                    let nominal = report.accuracy.noisy.mean;
                    report.uncertainty =
                        Some(ev::uncertainty_ranges(&self.net, &data, &opts, nominal)?);
                }
                Ok(report)
            })?
            .map_err(|e| crate::errors::eval_error(py, e))?;
        to_dict(py, &report)
    }

    /// The readout features (float32 [N, features]) of a batch of uint8 images under
    /// `noise` on chip `chip_seed`; with `maps`, also the binary maps (uint8 [N, maps,
    /// H, W]).
    #[pyo3(signature = (images, noise = None, chip_seed = 1, seed = 0, depth = None, work = None, maps = false))]
    #[allow(clippy::too_many_arguments)]
    fn features<'py>(
        &self,
        py: Python<'py>,
        images: &Bound<'py, PyAny>,
        noise: Option<Bound<'py, PyAny>>,
        chip_seed: u64,
        seed: u64,
        depth: Option<u32>,
        work: Option<u64>,
        maps: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let split = split_of(images)?;
        let profile = match &noise {
            Some(n) => named_profile(py, n)?.1,
            None => {
                ev::named_profile(scamp::DEFAULT_PROFILE)
                    .map_err(|e| crate::profile::to_py_err(py, &e))?
                    .1
            }
        };
        let (rows, cols) = (split.rows, split.cols);
        let (out, count) = crate::interrupt::interruptible(py, || {
            let built = self.built((rows, cols, depth, work))?;
            let sample = Sample {
                profile: &profile,
                chip_seed,
                seed,
            };
            let count = built.chip.maps.len();
            extract_features(&built, &split, sample, maps).map(|e| (e, count))
        })?
        .map_err(|e| crate::errors::eval_error(py, e))?;
        let features = Array2::from_shape_vec((out.images, out.per_image), out.features)
            .map_err(value_error)?
            .into_pyarray(py)
            .into_any();
        if !maps {
            return Ok(features);
        }
        let bits = Array4::from_shape_vec((out.images, count, rows, cols), out.bits)
            .map_err(value_error)?
            .into_pyarray(py)
            .into_any();
        Ok((features, bits).into_pyobject(py)?.into_any())
    }
}

/// `scamp.merge_shards(files)`: the reports of `Network.evaluate(shard="K/N")` saved as
/// JSON files, merged into the whole run's report (`scamp eval --merge`).
#[pyfunction]
pub fn merge_shards<'py>(py: Python<'py>, files: Vec<PathBuf>) -> PyResult<Bound<'py, PyAny>> {
    let merged = ev::merge_files(&files).map_err(value_error)?;
    to_dict(py, &ev::report(&merged))
}
