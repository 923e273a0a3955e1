//! Running a proven program on test images and measuring, per kernel, the approximation,
//! analogue and total error (docs/noise.md), over one or more run seeds.

use super::convolution::correlate;
use super::metrics::{ErrorAccumulator, ErrorFigures, Spread};
use crate::isa::{Program, Reg};
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::{self, capture::GreyImage, Array, EdgeMode, N};
use ndarray::Array2;
use serde::Serialize;

/// One kernel a program must compute.
#[derive(Clone, Debug)]
pub struct Target {
    /// Register that holds the result.
    pub out: Reg,
    /// The kernel as specified (scale applied), rows north to south.
    pub exact: Array2<f64>,
    /// The kernel the program computes exactly (multiples of 1/2^d).
    pub approx: Array2<f64>,
    /// Kernel centre (row, column).
    pub centre: (usize, usize),
}

/// How the array is prepared and read for one run.
pub trait Testbed: Sync {
    /// A fresh array for run `run` (noise layer installed, seeds set).
    fn array(&self, general: usize, run: u32) -> Array;
    /// The result of `reg` as read off the array (readout error applied, if any).
    fn read(&self, array: &Array, reg: Reg, run: u32) -> Vec<f32>;
}

/// Arrays under a noise profile: run `r` uses run seed `seed + r` on the chip
/// `chip_seed`, and results are read through the profile's readout path.
pub struct ProfileTestbed {
    /// The noise profile (`ideal` switches the layer off).
    pub profile: Profile,
    /// Fixed-pattern seed: the same chip for every run.
    pub chip_seed: u64,
    /// Temporal-noise seed of run 0.
    pub seed: u64,
}

impl ProfileTestbed {
    /// Exact arithmetic: the built-in `ideal` profile.
    pub fn ideal() -> Self {
        ProfileTestbed {
            profile: Profile::builtin("ideal").expect("the ideal profile is built in"),
            chip_seed: 0,
            seed: 0,
        }
    }
}

impl Testbed for ProfileTestbed {
    fn array(&self, general: usize, run: u32) -> Array {
        let mut a = Array::new(general, EdgeMode::Zero);
        let model = NoiseModel::new(
            &self.profile,
            self.chip_seed,
            self.seed.wrapping_add(u64::from(run)),
        )
        .with_clock(sim::DEFAULT_CLOCK_HZ);
        a.set_layer(Box::new(model));
        a
    }

    fn read(&self, array: &Array, reg: Reg, _run: u32) -> Vec<f32> {
        array.read_out(reg).unwrap_or_default()
    }
}

/// A figure's mean and spread over run seeds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FigureSpread {
    /// RMSE over runs.
    pub rmse: Spread,
    /// Max absolute error over runs.
    pub max: Spread,
    /// Mean bias over runs.
    pub bias: Spread,
}

/// Error figures of one kernel over all images.
#[derive(Clone, Debug, Serialize)]
pub struct KernelErrors {
    /// Output register.
    pub out: String,
    /// Approximated kernel vs specified kernel, exact arithmetic.
    pub approx: ErrorFigures,
    /// Simulated vs approximated kernel (first run; see `spread` for all runs).
    pub analogue: ErrorFigures,
    /// Simulated vs specified kernel (first run).
    pub total: ErrorFigures,
    /// Mean and spread of the analogue figures over runs.
    pub analogue_runs: FigureSpread,
    /// Mean and spread of the total figures over runs.
    pub total_runs: FigureSpread,
    /// PE-register pairs clipped while the program ran (every register, not only this
    /// kernel's), summed over images, first run.
    pub saturated: u64,
}

/// What a check run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// Border excluded on every side of the image, in pixels.
    pub border: usize,
    /// Number of images.
    pub images: usize,
    /// Number of run seeds.
    pub runs: u32,
    /// Figures per kernel, in spec order.
    pub kernels: Vec<KernelErrors>,
}

/// The numeric targets of a spec's kernels: the specified weights (scale applied) and
/// their approximation `weights / 2^d`.
pub fn targets(spec: &crate::cain::Spec, kernels: &[crate::cain::KernelReport]) -> Vec<Target> {
    spec.kernels
        .iter()
        .zip(kernels)
        .map(|(k, a)| {
            let h = k.weights.len();
            let w = k.weights.first().map_or(0, Vec::len);
            let den = 2f64.powi(a.approx.depth as i32);
            Target {
                out: k.out,
                exact: Array2::from_shape_fn((h, w), |(i, j)| k.weights[i][j] * k.scale),
                approx: Array2::from_shape_fn((h, w), |(i, j)| a.approx.weights[i][j] as f64 / den),
                centre: super::convolution::centre_of(h, w),
            }
        })
        .collect()
}

/// Loads every picture (PNG, JPEG, PGM/PPM) in `dir`, sorted by file name.
pub fn load_images(dir: &std::path::Path) -> Result<Vec<(String, GreyImage)>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: cannot read image folder: {e}", dir.display()))?;
    let mut paths: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ["png", "jpg", "jpeg", "pgm", "ppm", "pnm"]
                    .contains(&e.to_ascii_lowercase().as_str())
            })
        })
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!(
            "{}: no PNG, JPEG or PGM images found",
            dir.display()
        ));
    }
    paths
        .iter()
        .map(|p| {
            let name = p
                .file_stem()
                .map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
            sim::capture::load(p)
                .map(|img| (name, img))
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// The image as the input register holds it: full-range values `p - 128`.
pub fn input_values(img: &GreyImage) -> Array2<f64> {
    Array2::from_shape_fn((N, N), |(r, c)| f64::from(img.pixels[r * N + c]) - 128.0)
}

/// Mean and spread over runs of each figure, one [`ErrorFigures`] per run.
pub fn spread(figs: &[ErrorFigures]) -> FigureSpread {
    let pick = |f: fn(&ErrorFigures) -> f64| Spread::of(&figs.iter().map(f).collect::<Vec<_>>());
    FigureSpread {
        rmse: pick(|f| f.rmse),
        max: pick(|f| f.max),
        bias: pick(|f| f.bias),
    }
}

/// Simulated results of `program` on one image and one run, per target.
pub fn simulate(
    program: &Program,
    input: Reg,
    general: usize,
    targets: &[Target],
    img: &GreyImage,
    testbed: &dyn Testbed,
    run: u32,
) -> Result<(Vec<Array2<f64>>, u64), sim::run::RunError> {
    let mut array = testbed.array(general, run);
    array.expose(&img.pixels);
    if let Some(p) = array.plane_mut(input) {
        for (d, &s) in p.iter_mut().zip(&img.pixels) {
            *d = f32::from(s) - 128.0;
        }
    }
    let report = sim::run(&mut array, program, 1, sim::DEFAULT_CLOCK_HZ)?;
    let outs = targets
        .iter()
        .map(|t| {
            let v = testbed.read(&array, t.out, run);
            Array2::from_shape_fn((N, N), |(r, c)| f64::from(v[r * N + c]))
        })
        .collect();
    Ok((outs, report.saturated))
}

/// Runs `program` on every image for `runs` run seeds and measures each target's error.
pub fn measure(
    program: &Program,
    input: Reg,
    general: usize,
    targets: &[Target],
    images: &[GreyImage],
    testbed: &dyn Testbed,
    runs: u32,
) -> Result<Measurement, sim::run::RunError> {
    let runs = runs.max(1);
    let reach = program.edge_reach(general);
    let border = targets
        .iter()
        .map(|t| match t.out {
            Reg::Gen(i) => reach.get(usize::from(i)).copied().unwrap_or(0),
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let nk = targets.len();
    let mut approx = vec![ErrorAccumulator::default(); nk];
    let mut analogue = vec![vec![ErrorAccumulator::default(); nk]; runs as usize];
    let mut total = vec![vec![ErrorAccumulator::default(); nk]; runs as usize];
    let mut saturated = 0u64;
    for img in images {
        let x = input_values(img);
        let exact: Vec<Array2<f64>> = targets
            .iter()
            .map(|t| correlate(&x, &t.exact, t.centre))
            .collect();
        let approximated: Vec<Array2<f64>> = targets
            .iter()
            .map(|t| correlate(&x, &t.approx, t.centre))
            .collect();
        for k in 0..nk {
            approx[k].add(&approximated[k], &exact[k], border);
        }
        for run in 0..runs {
            let (outs, sat) = simulate(program, input, general, targets, img, testbed, run)?;
            if run == 0 {
                saturated += sat;
            }
            for k in 0..nk {
                analogue[run as usize][k].add(&outs[k], &approximated[k], border);
                total[run as usize][k].add(&outs[k], &exact[k], border);
            }
        }
    }
    let kernels = (0..nk)
        .map(|k| {
            let an: Vec<ErrorFigures> = analogue.iter().map(|r| r[k].figures()).collect();
            let to: Vec<ErrorFigures> = total.iter().map(|r| r[k].figures()).collect();
            KernelErrors {
                out: targets[k].out.to_string(),
                approx: approx[k].figures(),
                analogue: an[0],
                total: to[0],
                analogue_runs: spread(&an),
                total_runs: spread(&to),
                saturated,
            }
        })
        .collect();
    Ok(Measurement {
        border,
        images: images.len(),
        runs,
        kernels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};
    use ndarray::array;

    #[test]
    fn ideal_run_has_only_approximation_error() {
        // Horizontal [1 2 1] / 4 blur, exact in 2 halvings; the spec asks for [1 2 1] / 4.1.
        let p = parse_program(
            "divq(B, A); divq(C, B); movx(D, C, east); movx(E, C, west); add(A, B, D, E)",
            Device::default(),
        )
        .unwrap();
        let approx = array![[0.25, 0.5, 0.25]];
        let exact = approx.mapv(|v| v * 4.0 / 4.1);
        let t = Target {
            out: Reg::A,
            exact,
            approx,
            centre: (0, 1),
        };
        let img = sim::capture::default_image();
        let m = measure(&p, Reg::A, 6, &[t], &[img], &ProfileTestbed::ideal(), 1).unwrap();
        assert_eq!(m.border, 1);
        let k = &m.kernels[0];
        assert!(k.analogue.rmse < 1e-5, "{:?}", k.analogue);
        assert!(k.approx.rmse > 0.1);
        assert!((k.total.rmse - k.approx.rmse).abs() < 1e-4);
    }
}
