//! `scamp.run`: a program on one plane or a batch of planes, outputs as numpy arrays.
//! The arrays are described to the library as `Setup`s and run by `scamp::run_batch`.

use crate::errors::{self, value_error, At};
use crate::inputs::{self, Input, Values};
use crate::memory;
use crate::profile::PyProfile;
use crate::program::PyProgram;
use numpy::ndarray::{Array2, Array3};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scamp::Profile;
use scamp::Watched;
use scamp::{isa::Device, isa::Program, isa::Reg};
use scamp::{EdgeMode, GreyImage, RunError, N};
use scamp::{Frame, Preload, RunOptions, Setup};

/// The program argument: a `Program`, a path, or program text.
pub fn program_of(py: Python<'_>, program: &Bound<'_, PyAny>) -> PyResult<Py<PyProgram>> {
    if let Ok(p) = program.cast::<PyProgram>() {
        return Ok(p.clone().unbind());
    }
    let loaded = if let Ok(text) = program.extract::<String>() {
        let path = std::path::Path::new(&text);
        if !text.contains('\n') && path.is_file() {
            PyProgram::from_file(py, path)?
        } else {
            PyProgram::from_text(py, text, "<program>".into())?
        }
    } else {
        let path: std::path::PathBuf = program.extract()?;
        PyProgram::from_file(py, &path)?
    };
    Py::new(py, loaded)
}

/// The `noise` argument: a built-in name, a path or a `Profile`.
pub fn profile_of(py: Python<'_>, noise: &Bound<'_, PyAny>) -> PyResult<Profile> {
    if let Ok(p) = noise.cast::<PyProfile>() {
        return Ok(p.get().profile.clone());
    }
    let name: std::path::PathBuf = noise.extract()?;
    Profile::load(&name.to_string_lossy()).map_err(|e| crate::profile::to_py_err(py, &e))
}

/// The `edge` argument.
pub fn edge_of(edge: &str) -> PyResult<EdgeMode> {
    edge.parse::<EdgeMode>()
        .map_err(|e| value_error(format!("edge: {e}")))
}

/// A run error of `program` as `ProgramError` at the statement that failed.
pub fn run_error(py: Python<'_>, program: &PyProgram, e: &RunError) -> PyErr {
    errors::program_error(py, &At::pos(&program.file, e.pos), &e.cause.to_string())
}

/// The named inputs, checked, and the number of frames (`None` when every input is
/// one plane).
pub struct Inputs {
    /// Each input with where it goes.
    pub inputs: Vec<(Watched, Input)>,
    /// Frames of the batch inputs.
    pub frames: Option<usize>,
}

fn target_of(name: &str, device: Device) -> PyResult<Watched> {
    Watched::parse(name, device.general).ok_or_else(|| {
        value_error(format!(
            "inputs: unknown register `{name}` (expected {}, NEWS, PIX, R0..R12 or FLAG)",
            device.general_range()
        ))
    })
}

/// Checks that `input` suits `target`: pixels go to a general register or `PIX`.
fn check_kind(target: Watched, input: &Input) -> PyResult<()> {
    let pixels = matches!(input.values, Values::Pixels(_));
    let ok = match target {
        Watched::Analogue(Reg::Pix) => pixels,
        Watched::Analogue(Reg::News) | Watched::Digital(_) => !pixels,
        Watched::Analogue(_) => true,
    };
    if ok {
        return Ok(());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "inputs[{:?}]: {} takes {}",
        input.name,
        input.name,
        match target {
            Watched::Analogue(Reg::Pix) => "uint8 pixels",
            _ => "float32/float64 register values",
        }
    )))
}

/// Reads and checks every input.
pub fn read_inputs(inputs: Option<&Bound<'_, PyDict>>, device: Device) -> PyResult<Inputs> {
    let mut out = Vec::new();
    let mut frames: Option<(usize, String)> = None;
    let mut scene: Option<String> = None;
    for (key, value) in inputs.into_iter().flat_map(|d| d.iter()) {
        let name: String = key
            .extract()
            .map_err(|_| value_error("inputs: keys are register names (str)"))?;
        let target = target_of(&name, device)?;
        let what = format!("inputs[{name:?}]");
        let input = inputs::read(&what, &name, &value, target.is_digital())?;
        check_kind(target, &input)?;
        if matches!(input.values, Values::Pixels(_)) {
            if let Some(other) = scene.replace(name.clone()) {
                return Err(value_error(format!(
                    "inputs: `{other}` and `{name}` both give uint8 pixels; the array captures one scene"
                )));
            }
        }
        if let Some(n) = input.frames {
            match &frames {
                Some((m, other)) if *m != n => {
                    return Err(value_error(format!(
                        "inputs: `{other}` holds {m} images and `{name}` {n}; a batch needs the same count"
                    )))
                }
                _ => frames = Some((n, name.clone())),
            }
        }
        out.push((target, input));
    }
    Ok(Inputs {
        inputs: out,
        frames: frames.map(|(n, _)| n),
    })
}

impl Inputs {
    /// The scene of frame `i`: the pixel input's plane, else the built-in default
    /// image (as `scamp run` without `--image`).
    pub fn scene(&self, i: usize) -> Option<GreyImage> {
        self.inputs.iter().find_map(|(_, inp)| match &inp.values {
            Values::Pixels(p) => Some(GreyImage {
                pixels: p[inp.at(i)].clone(),
                resized_from: None,
            }),
            Values::Planes(_) => None,
        })
    }

    /// The library's description of frame `i`'s array, capturing `scene`.
    pub fn setup(&self, i: usize, scene: GreyImage, device: Device, edge: EdgeMode) -> Setup {
        let mut preloads = Vec::new();
        let mut input = None;
        for (target, inp) in &self.inputs {
            match (&inp.values, target) {
                (Values::Planes(p), register) => preloads.push(Preload {
                    register: *register,
                    values: p[inp.at(i)].clone(),
                }),
                (Values::Pixels(_), Watched::Analogue(r)) if *r != Reg::Pix => input = Some(*r),
                (Values::Pixels(_), _) => {}
            }
        }
        Setup {
            general: device.general,
            edge,
            scene,
            preloads,
            input,
        }
    }
}

/// The registers read off: `registers`, or every register the program writes.
pub fn watched_of(
    registers: Option<Vec<String>>,
    program: &Program,
    device: Device,
) -> PyResult<Vec<Watched>> {
    let Some(names) = registers else {
        return Ok(Watched::written_by(program));
    };
    names
        .iter()
        .map(|s| {
            Watched::parse(s, device.general).ok_or_else(|| {
                value_error(format!(
                    "registers: unknown register `{s}` (expected {}, NEWS, PIX, R0..R12 or FLAG)",
                    device.general_range()
                ))
            })
        })
        .collect()
}

/// The keyword arguments of `scamp.run` (defaults and documentation are in
/// `scamp/__init__.py`, which passes them as a dict).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct RunArgs<'py> {
    noise: Bound<'py, PyAny>,
    seed: Bound<'py, PyAny>,
    chip_seed: Bound<'py, PyAny>,
    edge: String,
    readout: bool,
    registers: Option<Vec<String>>,
}

/// `scamp.run(program, inputs, options)`: runs `program` on `inputs` and returns the
/// registers it writes (or `registers`) as numpy arrays.
#[pyfunction]
pub fn run<'py>(
    py: Python<'py>,
    program: &Bound<'py, PyAny>,
    inputs: Option<&Bound<'py, PyDict>>,
    options: RunArgs<'py>,
) -> PyResult<Bound<'py, PyDict>> {
    let device = Device::default();
    let program = program_of(py, program)?;
    let program = program.get();
    let opts = RunOptions::new(profile_of(py, &options.noise)?)
        .with_seed(crate::args::seed("seed", &options.seed)?)
        .with_chip_seed(crate::args::seed("chip_seed", &options.chip_seed)?)
        .with_raw(!options.readout);
    let edge = edge_of(&options.edge)?;
    let watched = watched_of(options.registers, &program.program, device)?;
    memory::check_batch(inputs, watched.len(), device.general)?;
    let inputs = read_inputs(inputs, device)?;
    let count = inputs.frames.unwrap_or(1);
    let default_scene = scamp::default_image();
    let setups: Vec<Setup> = (0..count)
        .map(|i| {
            py.check_signals()?;
            let scene = inputs.scene(i).unwrap_or_else(|| default_scene.clone());
            Ok(inputs.setup(i, scene, device, edge))
        })
        .collect::<PyResult<_>>()?;
    let frames = crate::interrupt::interruptible(py, || {
        run_frames(&program.program, &setups, &opts, &watched)
    })?
    .map_err(|e| run_error(py, program, &e))?;
    outputs(py, &watched, &frames, inputs.frames)
}

/// Frames run side by side at once; between such chunks a batch looks for Ctrl-C.
const FRAMES_AT_ONCE: usize = 8;

/// [`scamp::run_batch`] in chunks, frame `i` still run `i`, stopping early when the
/// call is cancelled (its result is then dropped).
fn run_frames(
    program: &Program,
    setups: &[Setup],
    opts: &RunOptions,
    watched: &[Watched],
) -> Result<Vec<Frame>, RunError> {
    let mut frames = Vec::with_capacity(setups.len());
    for (c, part) in setups.chunks(FRAMES_AT_ONCE).enumerate() {
        if scamp::cancel::requested() {
            break;
        }
        let first = c * FRAMES_AT_ONCE;
        frames.extend(scamp::frames(part.len(), |i| {
            scamp::run_one(program, &part[i], opts, watched, (first + i) as u32)
        })?);
    }
    Ok(frames)
}

/// `values` as a (256, 256) array, or (N, 256, 256) for a batch.
fn to_numpy<'py, T: numpy::Element>(
    py: Python<'py>,
    values: Vec<T>,
    frames: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let wrong = |e: numpy::ndarray::ShapeError| value_error(format!("output shape: {e}"));
    Ok(match frames {
        None => Array2::from_shape_vec((N, N), values)
            .map_err(wrong)?
            .into_pyarray(py)
            .into_any(),
        Some(n) => Array3::from_shape_vec((n, N, N), values)
            .map_err(wrong)?
            .into_pyarray(py)
            .into_any(),
    })
}

/// The result dict: one array per watched register, float32 or bool.
fn outputs<'py>(
    py: Python<'py>,
    watched: &[Watched],
    frames: &[Frame],
    batch: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, w) in watched.iter().enumerate() {
        let values = frames.iter().flat_map(|f| f.planes[k].1.iter().copied());
        let array = if w.is_digital() {
            to_numpy(py, values.map(|v| v != 0.0).collect(), batch)?
        } else {
            to_numpy(py, values.collect(), batch)?
        };
        dict.set_item(w.to_string(), array)?;
    }
    Ok(dict)
}
