//! Calibration against the hardware: the identity-kernel experiment described in docs/noise.md.
//!
//! A uniform input `v` is loaded with `scamp5_in(A, v)`, then the kernel
//! `diva(A, E, F); mov(F, A); add(A, A, F)` (the identity in exact arithmetic, 9 bus
//! instructions) runs k times. After each k, `A` is read out (through the profile's
//! readout path) and `input - output` summarised over the array: bias = its mean,
//! std = its spatial standard deviation; both averaged over repetitions with successive
//! run seeds, on one chip. The `scamp` command's `noise calibrate --fit` adjusts the free
//! parameters of the `scamp5` profile to the measured series by Nelder-Mead.

use crate::isa::{parse_program, Device, Program, Reg};
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::{run, Array, EdgeMode, DEFAULT_CLOCK_HZ};
use serde::Serialize;

/// The kernel measured on the device.
pub const KERNEL: &str = "diva(A, E, F); mov(F, A); add(A, A, F);";

/// One measured point: (input, k, bias, std), from docs/noise.md (Guillard, Imperial College,
/// SCAMP-5 device; 100 repetitions, 256x256 array).
pub(crate) const MEASURED: &[(i32, u32, f64, f64)] = &[
    (0, 0, 0.0, 1.6),
    (0, 1, 4.5, 3.4),
    (0, 2, 6.2, 2.2),
    (0, 4, 12.2, 3.0),
    (0, 8, 22.5, 4.8),
    (0, 16, 37.4, 9.1),
    (0, 32, 55.0, 18.1),
    (120, 0, 0.0, 2.8),
    (120, 1, 8.8, 3.1),
    (120, 2, 17.4, 3.5),
    (120, 4, 33.3, 4.3),
    (120, 8, 61.9, 8.8),
    (120, 16, 100.1, 8.4),
    (120, 32, 148.9, 12.8),
];

/// Seeds and repetitions of a calibration run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The simulated chip.
    pub chip_seed: u64,
    /// Run seed of the first repetition; repetition r uses `run_seed + r`.
    pub run_seed: u64,
    /// Repetitions averaged (the hardware used 100; a few suffice, since one frame
    /// already averages 65,536 PEs).
    pub reps: u32,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            chip_seed: 1,
            run_seed: 1,
            reps: 4,
        }
    }
}

/// One line of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The uniform input value.
    pub input: i32,
    /// Kernel applications.
    pub k: u32,
    /// Measured bias and std, when the hardware data has this point.
    pub measured: Option<(f64, f64)>,
    /// Simulated bias: mean of input - output.
    pub bias: f64,
    /// Simulated std: spatial standard deviation of input - output.
    pub std: f64,
}

fn program(text: &str) -> Program {
    parse_program(text, Device::default()).expect("the calibration programs are valid")
}

/// Why the experiment could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrationError {
    /// An input the DAC cannot load.
    #[error("input {0}: the DAC loads integers in -128..127")]
    Input(i32),
    /// An experiment's program stopped.
    #[error(transparent)]
    Run(#[from] crate::sim::run::RunError),
    /// An experiment's program does not parse.
    #[error(transparent)]
    Program(#[from] crate::isa::IsaError),
    /// The background experiment could not run.
    #[error(transparent)]
    Background(#[from] super::background::BackgroundError),
    /// A line of a device dataset (CSV) that cannot be used.
    #[error("{file}:{line}:{col}: {problem}")]
    Data {
        /// The dataset's file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong.
        problem: DataProblem,
    },
}

/// What is wrong with a line of a device dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DataProblem {
    /// The first line is not the header.
    #[error("expected the header `input,k,value`")]
    Header,
    /// Another number of fields than 3.
    #[error("expected 3 fields, got {0}")]
    Fields(usize),
    /// An input outside the DAC's range.
    #[error("input must be an integer in -128..127")]
    Input,
    /// A repetition count outside 0..=max.
    #[error("k must be an integer in 0..{max}")]
    K {
        /// The largest count the experiment runs.
        max: u32,
    },
    /// A value that is not a finite number.
    #[error("value must be a finite number")]
    Value,
    /// A header and no data.
    #[error("no data lines")]
    Empty,
}

/// Runs the identity-kernel experiment for one input under `profile`, reporting every
/// k in `0..=k_max`.
pub(crate) fn simulate(
    profile: &Profile,
    input: i32,
    k_max: u32,
    setup: Setup,
) -> Result<Vec<Row>, CalibrationError> {
    if !crate::isa::DAC.contains(&i64::from(input)) {
        return Err(CalibrationError::Input(input));
    }
    let load = program(&format!("scamp5_in(A, {input});"));
    let kernel = program(KERNEL);
    let k_len = k_max as usize + 1;
    let (mut bias, mut std) = (vec![0.0; k_len], vec![0.0; k_len]);
    let reps = setup.reps.max(1);
    for r in 0..reps {
        let mut array = Array::new(Device::default().general, EdgeMode::Zero);
        let model = NoiseModel::new(
            profile,
            setup.chip_seed,
            setup.run_seed.wrapping_add(u64::from(r)),
        );
        array.set_layer(model);
        let fail = CalibrationError::Run;
        run(&mut array, &load, 1, DEFAULT_CLOCK_HZ).map_err(fail)?;
        for k in 0..k_len {
            if k > 0 {
                run(&mut array, &kernel, 1, DEFAULT_CLOCK_HZ).map_err(fail)?;
            }
            array.settle();
            let out = array.read_out(Reg::Gen(0)).unwrap_or_default();
            let n = out.len().max(1) as f64;
            let d = |v: &f32| f64::from(input) - f64::from(*v);
            let mean = out.iter().map(d).sum::<f64>() / n;
            let var = out.iter().map(|v| (d(v) - mean).powi(2)).sum::<f64>() / n;
            bias[k] += mean / f64::from(reps);
            std[k] += var.sqrt() / f64::from(reps);
        }
    }
    Ok((0..k_len)
        .map(|k| Row {
            input,
            k: k as u32,
            measured: MEASURED
                .iter()
                .find(|m| m.0 == input && m.1 == k as u32)
                .map(|m| (m.2, m.3)),
            bias: bias[k],
            std: std[k],
        })
        .collect())
}

/// The comparison for several inputs (the measured ones are 0 and 120).
pub fn compare(
    profile: &Profile,
    inputs: &[i32],
    k_max: u32,
    setup: Setup,
) -> Result<Vec<Row>, CalibrationError> {
    let mut rows = Vec::new();
    for &i in inputs {
        rows.extend(simulate(profile, i, k_max, setup)?);
    }
    Ok(rows)
}

/// How far a simulated point may be from the measured one for the fit to count as
/// holding: the data's own scatter (std at k = 1 and 2 for input 0 differ by 1.2 with
/// nothing changed in between) sets the scale.
pub(crate) fn tolerance(measured_bias: f64, measured_std: f64) -> (f64, f64) {
    (2.0 + 0.06 * measured_bias.abs(), 1.5 + 0.25 * measured_std)
}

/// Whether every measured point of `rows` is within its tolerance (bias 2 + 6 %, std
/// 1.5 + 25 % of the measured value: the data's own scatter).
pub fn holds(rows: &[Row]) -> bool {
    rows.iter().all(|r| {
        r.measured.is_none_or(|(mb, ms)| {
            let (tb, ts) = tolerance(mb, ms);
            (r.bias - mb).abs() <= tb && (r.std - ms).abs() <= ts
        })
    })
}

/// The weighted squared misfit of the measured points (each term is the error in units
/// of the tolerance [`holds`] applies).
pub fn misfit(rows: &[Row]) -> f64 {
    rows.iter()
        .filter_map(|r| {
            let (mb, ms) = r.measured?;
            let (tb, ts) = tolerance(mb, ms);
            Some(((r.bias - mb) / tb).powi(2) + ((r.std - ms) / ts).powi(2))
        })
        .sum()
}
