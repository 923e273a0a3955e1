//! Calibration against the second device measurement: the background of the
//! uncorrected load. On the device, register F held `scamp5_load_in(F, 0)` and was read
//! out through the 8-bit ADC, frame after frame on one chip (docs/noise.md). Here
//! `load_in(A, 0)` runs once per run seed on one chip and `A` is read out through the
//! profile's readout path; the frames are summarised with the device's statistics, in
//! 8-bit levels (128 is analogue 0).

use crate::isa::{parse_program, Device, Reg};
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::{run, Array, EdgeMode, DEFAULT_CLOCK_HZ, N};
use serde::Serialize;

/// The 8-bit level of analogue 0.
const ZERO_LEVEL: f64 = 128.0;

/// Columns at which the column profile is reported (every 32nd).
pub(crate) const PROFILE_COLUMNS: [usize; 8] = [0, 32, 64, 96, 128, 160, 192, 224];

/// The statistics of a background, in 8-bit levels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct BackgroundStats {
    /// Frames summarised.
    pub(crate) frames: usize,
    /// Mean over every PE of every frame.
    pub(crate) grand_mean: f64,
    /// Standard deviation of the frame means.
    pub(crate) frame_mean_std: f64,
    /// Spatial standard deviation of one frame, mean over frames.
    pub(crate) spatial_std: f64,
    /// Spatial standard deviation of the time-averaged frame (the fixed pattern).
    pub(crate) fixed_pattern: f64,
    /// Standard deviation of the column means of the time-averaged frame.
    pub(crate) column_std: f64,
    /// Standard deviation of its row means.
    pub(crate) row_std: f64,
    /// Mean of row 0 (the top edge).
    pub(crate) row0_mean: f64,
    /// The fixed pattern after removing a quadratic surface (least squares in row and
    /// column).
    pub(crate) detrended: f64,
    /// Column mean minus grand mean at `PROFILE_COLUMNS`.
    pub(crate) column_profile: [f64; 8],
    /// Per PE, the standard deviation over frames after removing each frame's mean:
    /// median, 5 % and 95 % over PEs.
    pub(crate) temporal: [f64; 3],
}

/// The device's figures (810 frames, October 2023; 1 % / 99 % points and the fit of
/// the column profile are described in docs/noise.md).
pub(crate) const DEVICE: BackgroundStats = BackgroundStats {
    frames: 810,
    grand_mean: 129.81,
    frame_mean_std: 0.39,
    spatial_std: 3.10,
    fixed_pattern: 2.90,
    column_std: 2.21,
    row_std: 0.72,
    row0_mean: 137.2,
    detrended: 1.87,
    column_profile: [-3.34, 0.05, 1.54, 2.19, 1.91, 1.16, -0.46, -2.42],
    temporal: [0.72, 0.684, 0.771],
};

/// Why the experiment could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackgroundError {
    /// The experiment's program does not parse (a value the DAC cannot load).
    #[error(transparent)]
    Program(#[from] crate::isa::IsaError),
    /// The experiment's program stopped.
    #[error(transparent)]
    Run(#[from] crate::sim::run::RunError),
}

/// Frames of `load_in(A, value)` read out under `profile` on chip `chip_seed`, run seeds
/// `seed..seed + frames`, in 8-bit levels.
pub(crate) fn frames(
    profile: &Profile,
    value: i32,
    chip_seed: u64,
    seed: u64,
    frames: usize,
) -> Result<Vec<Vec<f64>>, BackgroundError> {
    let program = parse_program(&format!("load_in(A, {value});"), Device::default())?;
    crate::sim::batch::frames(frames, |f| {
        let mut array = Array::new(Device::default().general, EdgeMode::Zero);
        let model = NoiseModel::new(profile, chip_seed, seed.wrapping_add(f as u64));
        array.set_layer(model);
        run(&mut array, &program, 1, DEFAULT_CLOCK_HZ)?;
        array.settle();
        let out = array.read_out(Reg::Gen(0)).unwrap_or_default();
        Ok(out.iter().map(|&v| f64::from(v) + ZERO_LEVEL).collect())
    })
}

/// The device's statistics of `frames` (each `N * N` levels, row-major; at least two).
pub(crate) fn statistics(frames: &[Vec<f64>]) -> BackgroundStats {
    let nf = frames.len().max(1) as f64;
    let means: Vec<f64> = frames.iter().map(|f| mean(f)).collect();
    let avg: Vec<f64> = (0..N * N)
        .map(|i| frames.iter().map(|f| f[i]).sum::<f64>() / nf)
        .collect();
    let grand_mean = mean(&avg);
    let col_means: Vec<f64> = (0..N)
        .map(|c| (0..N).map(|r| avg[r * N + c]).sum::<f64>() / N as f64)
        .collect();
    let row_means: Vec<f64> = avg.chunks(N).map(mean).collect();
    let mut temporal: Vec<f64> = (0..N * N)
        .map(|i| {
            let d: Vec<f64> = frames.iter().zip(&means).map(|(f, m)| f[i] - m).collect();
            std(&d)
        })
        .collect();
    temporal.sort_by(f64::total_cmp);
    let q = |p: f64| temporal[((temporal.len() - 1) as f64 * p).round() as usize];
    BackgroundStats {
        frames: frames.len(),
        grand_mean,
        frame_mean_std: std(&means),
        spatial_std: frames.iter().map(|f| std(f)).sum::<f64>() / nf,
        fixed_pattern: std(&avg),
        column_std: std(&col_means),
        row_std: std(&row_means),
        row0_mean: row_means[0],
        detrended: std(&quadratic_residual(&avg)),
        column_profile: PROFILE_COLUMNS.map(|c| col_means[c] - grand_mean),
        temporal: [q(0.5), q(0.05), q(0.95)],
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn std(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len().max(1) as f64).sqrt()
}

/// `plane` minus its least-squares quadratic surface in (row, column).
fn quadratic_residual(plane: &[f64]) -> Vec<f64> {
    let basis = |r: usize, c: usize| {
        let (y, x) = (r as f64 / 127.5 - 1.0, c as f64 / 127.5 - 1.0);
        [1.0, x, y, x * x, x * y, y * y]
    };
    let mut ata = [[0.0; 6]; 6];
    let mut atb = [0.0; 6];
    for (i, &z) in plane.iter().enumerate() {
        let b = basis(i / N, i % N);
        for j in 0..6 {
            atb[j] += b[j] * z;
            for k in 0..6 {
                ata[j][k] += b[j] * b[k];
            }
        }
    }
    let coef = solve(ata, atb);
    plane
        .iter()
        .enumerate()
        .map(|(i, &z)| {
            let b = basis(i / N, i % N);
            z - (0..6).map(|j| coef[j] * b[j]).sum::<f64>()
        })
        .collect()
}

/// Gaussian elimination with partial pivoting (the normal equations above are well
/// conditioned: the basis is centred and scaled).
fn solve<const K: usize>(mut a: [[f64; K]; K], mut b: [f64; K]) -> [f64; K] {
    for i in 0..K {
        let p = (i..K)
            .max_by(|&x, &y| a[x][i].abs().total_cmp(&a[y][i].abs()))
            .unwrap_or(i);
        a.swap(i, p);
        b.swap(i, p);
        if a[i][i] == 0.0 {
            continue;
        }
        for r in 0..K {
            if r != i {
                let f = a[r][i] / a[i][i];
                let pivot = a[i];
                for (x, p) in a[r].iter_mut().zip(pivot) {
                    *x -= f * p;
                }
                b[r] -= f * b[i];
            }
        }
    }
    std::array::from_fn(|i| if a[i][i] == 0.0 { 0.0 } else { b[i] / a[i][i] })
}

/// One statistic of the comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// What is compared.
    pub name: String,
    /// The device's value.
    pub device: f64,
    /// The simulated value.
    pub simulated: f64,
    /// How far apart they may be for the fit to count as holding (`None`: shown, not
    /// held: the statistic depends on the chip drawn or on the number of frames).
    pub tolerance: Option<f64>,
}

impl Figure {
    /// Whether the simulated value is within the tolerance (always, without one).
    pub fn holds(&self) -> bool {
        self.tolerance
            .is_none_or(|t| (self.simulated - self.device).abs() <= t)
    }
}

/// The background experiment under `profile`: `load_in(A, 0)` on chip `chip_seed`, run
/// seeds `seed..seed + frames`, its statistics side by side with the device's (each
/// held to its tolerance, see [`Figure::holds`]).
pub fn figures(
    profile: &Profile,
    chip_seed: u64,
    seed: u64,
    frames: usize,
) -> Result<Vec<Figure>, BackgroundError> {
    let frames = self::frames(profile, 0, chip_seed, seed, frames)?;
    Ok(compare(&statistics(&frames)))
}

/// Relative tolerance of the spreads: a different chip and 16 frames instead of 810,
/// against a structure that must be reproduced, not every digit of it.
pub const RELATIVE_TOLERANCE: f64 = 0.3;

/// The statistics side by side, with the tolerance each is held to: 30 % for spreads
/// and for the offsets from analogue 0 of the grand mean and of row 0.
pub(crate) fn compare(sim: &BackgroundStats) -> Vec<Figure> {
    // A spread is held relative to itself, a level relative to its offset from 0.
    let held_from = |zero: f64| {
        move |name: &str, device: f64, simulated: f64| Figure {
            name: name.to_string(),
            device,
            simulated,
            tolerance: Some(RELATIVE_TOLERANCE * (device - zero).abs()),
        }
    };
    let (held, level) = (held_from(0.0), held_from(ZERO_LEVEL));
    let shown = |name: String, device: f64, simulated: f64| Figure {
        name,
        device,
        simulated,
        tolerance: None,
    };
    let d = &DEVICE;
    let mut out = vec![
        level("grand mean", d.grand_mean, sim.grand_mean),
        held("std of frame means", d.frame_mean_std, sim.frame_mean_std),
        held("spatial std of a frame", d.spatial_std, sim.spatial_std),
        held("fixed pattern", d.fixed_pattern, sim.fixed_pattern),
        held("std of column means", d.column_std, sim.column_std),
        held("std of row means", d.row_std, sim.row_std),
        level("row 0 mean", d.row0_mean, sim.row0_mean),
        held("fixed pattern - quadratic", d.detrended, sim.detrended),
        held("temporal std, median", d.temporal[0], sim.temporal[0]),
        shown("temporal std, 5 %".into(), d.temporal[1], sim.temporal[1]),
        shown("temporal std, 95 %".into(), d.temporal[2], sim.temporal[2]),
    ];
    for (i, c) in PROFILE_COLUMNS.iter().enumerate() {
        out.push(shown(
            format!("column {c} - mean"),
            d.column_profile[i],
            sim.column_profile[i],
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_a_known_background() {
        // Frame f: 130 + f everywhere, row 0 ten higher, column c adds (c % 2).
        let frames: Vec<Vec<f64>> = (0..2)
            .map(|f| {
                (0..N * N)
                    .map(|i| {
                        let (r, c) = (i / N, i % N);
                        130.0 + f as f64 + if r == 0 { 10.0 } else { 0.0 } + (c % 2) as f64
                    })
                    .collect()
            })
            .collect();
        let s = statistics(&frames);
        assert!((s.frame_mean_std - 0.5).abs() < 1e-9);
        assert!((s.column_std - 0.5).abs() < 1e-9);
        assert!((s.row0_mean - (141.0)).abs() < 1e-9);
        assert!(s.temporal.iter().all(|t| t.abs() < 1e-9));
        // A pure quadratic surface leaves nothing.
        let bowl: Vec<f64> = (0..N * N)
            .map(|i| ((i / N) as f64 - 90.0).powi(2) * 0.001 + (i % N) as f64 * 0.02)
            .collect();
        assert!(std(&quadratic_residual(&bowl)) < 1e-6);
    }
}
