//! `scamp.compare`: a program's noisy runs against ideal ones, the dict `scamp run
//! --compare --json` prints.

use crate::errors::value_error;
use crate::evaluate::to_dict;
use crate::images::grey_images_named;
use crate::run::{edge_of, profile_of, program_of, read_inputs, run_error, watched_of, Inputs};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scamp::isa::Device;
use scamp::{adc_step, CompareError, CompareOptions, Watched};
use scamp::{run_plan, RunOptions, RunPlan};
use scamp::{GreyImage, RunReport};
use std::path::PathBuf;

/// The keyword arguments of `scamp.compare`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct CompareArgs<'py> {
    images: Option<Bound<'py, PyAny>>,
    noise: Bound<'py, PyAny>,
    seed: Bound<'py, PyAny>,
    chip_seed: Bound<'py, PyAny>,
    runs: u32,
    tolerance: Option<f64>,
    border: usize,
    edge: String,
    readout: bool,
    registers: Option<Vec<String>>,
    uncertainty: bool,
}

/// `scamp.compare(program, inputs, options)`: what `scamp run --compare --json`
/// prints for the same program, preloads, scenes and seeds.
#[pyfunction]
pub fn compare<'py>(
    py: Python<'py>,
    program: &Bound<'py, PyAny>,
    inputs: Option<&Bound<'py, PyDict>>,
    options: CompareArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let device = Device::default();
    let program = program_of(py, program)?;
    let program = program.get();
    let profile = profile_of(py, &options.noise)?;
    let noise_name = match options.noise.extract::<PathBuf>() {
        Ok(p) if profile.name.is_empty() => p.to_string_lossy().into_owned(),
        _ => profile.name.clone(),
    };
    let seed = crate::args::seed("seed", &options.seed)?;
    let chip_seed = crate::args::seed("chip_seed", &options.chip_seed)?;
    let opts = RunOptions::new(profile)
        .with_seed(seed)
        .with_chip_seed(chip_seed)
        .with_raw(!options.readout);
    // As `run --border`: the border leaves an interior to compare.
    let most = scamp::N / 2 - 1;
    if options.border > most {
        return Err(crate::errors::option_error(
            py,
            "border",
            format!(
                "border: {} is outside 0..{most} (it must leave an interior of the 256x256 array to compare)",
                options.border
            ),
        ));
    }
    scamp::RUNS
        .check(options.runs.into())
        .map_err(|e| crate::errors::option_error(py, "runs", e))?;
    if let Some(t) = options.tolerance {
        scamp::check_tolerance(t)
            .map_err(|m| crate::errors::option_error(py, "tolerance", format!("tolerance: {m}")))?;
    }
    let edge = edge_of(&options.edge)?;
    let inputs = read_inputs(inputs, device)?;
    if inputs.frames.is_some() {
        return Err(value_error(
            "compare: inputs are one (256, 256) plane each; give several pictures as images=",
        ));
    }
    let scenes = scenes_of(options.images.as_ref(), &inputs)?;
    let first = inputs.setup(0, scenes[0].1.clone(), device, edge);
    let analogue: Vec<Watched> = program
        .program
        .written_registers()
        .into_iter()
        .map(Watched::Analogue)
        .collect();
    let saved = options.registers.is_some();
    let compared = watched_of(options.registers, &program.program, device)?;
    let watched = if saved { compared.clone() } else { analogue };
    let tolerance = options.tolerance.unwrap_or_else(|| adc_step(&opts.profile));
    let compare_opts = CompareOptions::new(compared, tolerance)
        .with_clock_hz(opts.clock_hz)
        .with_raw(opts.raw)
        .with_border(options.border)
        .with_runs(options.runs)
        .with_seeds(seed, chip_seed)
        .with_uncertainty(options.uncertainty);
    let plan = RunPlan {
        program: &program.program,
        setup: &first,
        opts: &opts,
        watched: &watched,
        runs: options.runs,
        noise_name: &noise_name,
        compare: Some((&scenes, compare_opts)),
    };
    let file = program.file.clone();
    let result =
        crate::interrupt::interruptible(py, || run_plan(&plan, &|r| warnings_of(&file, r), None))?
            .map_err(|e| match e {
                CompareError::Run(r) => run_error(py, program, &r),
                other => value_error(other.to_string()),
            })?;
    to_dict(py, &result.summary)
}

/// The scenes compared: `images`, else the pixel input, else the built-in default
/// image (as `scamp run --compare` without `--image`).
fn scenes_of(
    images: Option<&Bound<'_, PyAny>>,
    inputs: &Inputs,
) -> PyResult<Vec<(String, GreyImage)>> {
    Ok(match (images, inputs.scene(0)) {
        (Some(_), Some(_)) => {
            return Err(value_error(
                "compare: images= and a uint8 scene in inputs both give the pictures; give one",
            ))
        }
        (Some(images), None) => grey_images_named(images)?,
        (None, Some(scene)) => vec![("image".to_string(), scene)],
        (None, None) => vec![("camera".to_string(), scamp::default_image())],
    })
}

/// The run's warnings, each prefixed with the program file and, when known, the
/// position (as `scamp run` reports them).
fn warnings_of(file: &str, report: &RunReport) -> Vec<String> {
    report
        .warnings
        .iter()
        .map(|w| {
            if w.pos.line == 0 {
                format!("{file}: {}", w.kind)
            } else {
                format!("{file}:{}: {}", w.pos, w.kind)
            }
        })
        .collect()
}
