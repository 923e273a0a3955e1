//! `scamp.run`: a program on one plane or a batch of planes, outputs as numpy arrays.

use crate::errors::{self, value_error, At};
use crate::inputs::{self, Input, PlaneRef};
use crate::memory;
use crate::profile::PyProfile;
use crate::program::PyProgram;
use numpy::ndarray::{Array2, Array3};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scamp::isa::{DReg, Device, Program, Reg};
use scamp::sim::noise::{NoiseModel, Profile};
use scamp::sim::{self, Array, EdgeMode, DEFAULT_CLOCK_HZ, N, PES};
use scamp::verify::compare::Watched;

/// Largest magnitude a register value given in `inputs` may have (the range a noise
/// profile describes levels in).
const REGISTER_LIMIT: f64 = 1024.0;

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

/// Where an input goes on the array.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// A general register (pixels are also exposed as the scene).
    General(Reg),
    /// `PIX`: the scene only.
    Scene,
    /// `NEWS`.
    News,
    /// A digital register.
    Digital(DReg),
}

fn target_of(name: &str, device: Device) -> PyResult<Target> {
    match Watched::parse(name, device.general) {
        Some(Watched::Digital(d)) => Ok(Target::Digital(d)),
        Some(Watched::Analogue(Reg::Pix)) => Ok(Target::Scene),
        Some(Watched::Analogue(Reg::News)) => Ok(Target::News),
        Some(Watched::Analogue(r)) => Ok(Target::General(r)),
        None => Err(value_error(format!(
            "inputs: unknown register `{name}` (expected {}, NEWS, PIX, R0..R12 or FLAG)",
            device.general_range()
        ))),
    }
}

/// What every frame of a run shares.
struct Job<'a> {
    program: &'a Program,
    profile: &'a Profile,
    inputs: &'a [(Target, Input)],
    watched: &'a [Watched],
    edge: EdgeMode,
    seed: u64,
    chip_seed: u64,
    raw: bool,
}

/// One frame: a fresh array with the frame's inputs, the program run with run seed
/// `seed + i`, the watched registers read off.
fn frame(job: &Job<'_>, i: usize) -> Result<Vec<Vec<f32>>, scamp::sim::run::RunError> {
    let device = Device::default();
    let mut array = Array::new(device.general, job.edge);
    let scene = job.inputs.iter().find_map(|(_, inp)| match inp.frame(i) {
        PlaneRef::Pixels(p) => Some(p),
        _ => None,
    });
    match scene {
        Some(p) => array.expose(p),
        None => array.expose(&sim::capture::default_image().pixels),
    }
    for (target, inp) in job.inputs {
        match (target, inp.frame(i)) {
            (Target::General(r), PlaneRef::Pixels(p)) => {
                if let Some(plane) = array.plane_mut(*r) {
                    for (d, &s) in plane.iter_mut().zip(p) {
                        *d = f32::from(s) - 128.0;
                    }
                }
            }
            (Target::General(r), PlaneRef::Analogue(v)) => {
                if let Some(plane) = array.plane_mut(*r) {
                    plane.copy_from_slice(v);
                }
            }
            (Target::News, PlaneRef::Analogue(v)) => {
                if let Some(plane) = array.plane_mut(Reg::News) {
                    plane.copy_from_slice(v);
                }
            }
            (Target::Digital(d), PlaneRef::Bits(b)) => {
                array.bits_mut(*d).copy_from_slice(b);
                array.refresh_flag();
            }
            _ => {}
        }
    }
    let model = NoiseModel::new(job.profile, job.chip_seed, job.seed.wrapping_add(i as u64))
        .with_clock(DEFAULT_CLOCK_HZ);
    array.set_layer(Box::new(model));
    sim::run(&mut array, job.program, 1, DEFAULT_CLOCK_HZ)?;
    Ok(job
        .watched
        .iter()
        .map(|w| w.values(&array, job.raw).unwrap_or_else(|| vec![0.0; PES]))
        .collect())
}

/// Checks that `input` suits `target` (pixels go to a general register or `PIX`).
fn check_kind(target: Target, input: &Input) -> PyResult<()> {
    let ok = matches!(
        (target, &input.values),
        (
            Target::General(_),
            inputs::Values::Analogue(_) | inputs::Values::Pixels(_)
        ) | (Target::Scene, inputs::Values::Pixels(_))
            | (Target::News, inputs::Values::Analogue(_))
            | (Target::Digital(_), inputs::Values::Bits(_))
    );
    if ok {
        return Ok(());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "inputs[{:?}]: {} takes {}",
        input.name,
        input.name,
        match target {
            Target::Scene => "uint8 pixels",
            Target::News => "float32/float64 register values",
            _ => "float32/float64 register values or uint8 pixels",
        }
    )))
}

/// The named inputs and where each goes.
type Inputs = Vec<(Target, Input)>;

/// The inputs, checked; the number of frames (`None` when every input is one plane).
fn read_inputs(
    inputs: Option<&Bound<'_, PyDict>>,
    device: Device,
) -> PyResult<(Inputs, Option<usize>)> {
    let mut out = Vec::new();
    let mut frames: Option<(usize, String)> = None;
    let mut scene: Option<String> = None;
    for (key, value) in inputs.into_iter().flat_map(|d| d.iter()) {
        let name: String = key
            .extract()
            .map_err(|_| value_error("inputs: keys are register names (str)"))?;
        let target = target_of(&name, device)?;
        let input = inputs::read(
            &name,
            &value,
            matches!(target, Target::Digital(_)),
            REGISTER_LIMIT,
        )?;
        check_kind(target, &input)?;
        if matches!(input.values, inputs::Values::Pixels(_)) {
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
    Ok((out, frames.map(|(n, _)| n)))
}

/// The registers read off: `registers`, or every register the program writes.
fn watched_of(
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
pub struct RunOptions<'py> {
    noise: Bound<'py, PyAny>,
    seed: u64,
    chip_seed: u64,
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
    options: RunOptions<'py>,
) -> PyResult<Bound<'py, PyDict>> {
    let device = Device::default();
    let program = program_of(py, program)?;
    let program = program.get();
    let profile = profile_of(py, &options.noise)?;
    let edge = edge_of(&options.edge)?;
    let watched = watched_of(options.registers, &program.program, device)?;
    memory::check_batch(inputs, watched.len())?;
    let (inputs, frames) = read_inputs(inputs, device)?;
    let job = Job {
        program: &program.program,
        profile: &profile,
        inputs: &inputs,
        watched: &watched,
        edge,
        seed: options.seed,
        chip_seed: options.chip_seed,
        raw: !options.readout,
    };
    let count = frames.unwrap_or(1);
    let planes = py
        .detach(|| sim::batch::frames(count, |i| frame(&job, i)))
        .map_err(|e| {
            errors::program_error(
                py,
                &At {
                    file: &program.file,
                    line: e.pos.line.into(),
                    column: e.pos.col.into(),
                },
                &e.msg,
            )
        })?;
    outputs(py, &watched, &planes, frames)
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

/// The result dict: one array per watched register.
fn outputs<'py>(
    py: Python<'py>,
    watched: &[Watched],
    planes: &[Vec<Vec<f32>>],
    frames: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, w) in watched.iter().enumerate() {
        let values = planes.iter().flat_map(|f| f[k].iter().copied());
        let array = if w.is_digital() {
            to_numpy(py, values.map(|v| v != 0.0).collect(), frames)?
        } else {
            to_numpy(py, values.collect(), frames)?
        };
        dict.set_item(w.to_string(), array)?;
    }
    Ok(dict)
}
