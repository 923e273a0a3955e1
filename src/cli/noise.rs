//! `scamp noise`: show a noise profile as YAML, and rerun the calibration of the
//! `scamp5` profile against the hardware measurements (docs/noise.md).

use super::{CliError, Outcome};
use crate::calibrate::background::{self, Figure};
use crate::calibrate::identity::{self, Row, Setup};
use crate::sim::noise::{profile, Profile};
use serde::Serialize;

/// Arguments of `scamp noise`.
#[derive(clap::Args, Debug)]
pub struct NoiseCmdArgs {
    #[command(subcommand)]
    cmd: NoiseCmd,
}

#[derive(clap::Subcommand, Debug)]
enum NoiseCmd {
    /// Print a profile (built-in name or file) as YAML, to copy and edit.
    Show {
        /// `ideal`, `scamp5` or a profile file.
        profile: String,
    },
    /// Rerun the identity-kernel experiment and print measured vs simulated bias and
    /// spread for every k; then the background of the uncorrected load, device
    /// statistics next to simulated ones.
    Calibrate(CalibrateArgs),
}

/// Arguments of `scamp noise calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Profile to compare with the measurements.
    #[arg(long, default_value = profile::DEFAULT_PROFILE, value_name = "PROFILE")]
    noise: String,
    /// Uniform input values (the hardware measured 0 and 120; others are predictions).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,120",
        value_name = "V,...",
        allow_hyphen_values = true
    )]
    inputs: Vec<i32>,
    /// Largest number of kernel applications.
    #[arg(long, default_value_t = 32)]
    k_max: u32,
    /// Chip (fixed-pattern) seed.
    #[arg(long = "chip-seed", default_value_t = 1)]
    chip_seed: u64,
    /// Run seed of the first repetition (repetition r uses seed + r).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Repetitions averaged per point.
    #[arg(long, default_value_t = 4)]
    reps: u32,
    /// Frames of the background experiment (`load_in(A, 0)`, run seeds from `--seed`
    /// on the chip `--chip-seed`), 16..=1024.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(16..=1024))]
    frames: u32,
    /// Refit the free parameters of the profile to the measurements (Nelder-Mead, this
    /// many iterations) and print the fitted profile as YAML before the comparison.
    #[arg(long, value_name = "ITERATIONS")]
    fit: Option<u32>,
    #[command(flatten)]
    json: super::args::JsonArg,
}

/// Runs `scamp noise`.
pub fn run(a: &NoiseCmdArgs) -> Outcome {
    match &a.cmd {
        NoiseCmd::Show { profile: name } => {
            match profile::builtin_text(name) {
                Some(text) => print!("{text}"),
                None => {
                    let p = Profile::load(name)?;
                    print!("{}", p.to_yaml());
                }
            }
            Ok(0)
        }
        NoiseCmd::Calibrate(c) => calibrate_cmd(c),
    }
}

#[derive(Serialize)]
struct Report<'a> {
    profile: &'a str,
    chip_seed: u64,
    seed: u64,
    reps: u32,
    misfit: f64,
    within_tolerance: bool,
    rows: &'a [Row],
    background: Background<'a>,
}

#[derive(Serialize)]
struct Background<'a> {
    frames: u32,
    within_tolerance: bool,
    figures: &'a [Figure],
}

fn calibrate_cmd(a: &CalibrateArgs) -> Outcome {
    if a.reps == 0 {
        return Err(CliError::msg("--reps must be at least 1"));
    }
    if a.k_max > 1024 {
        return Err(CliError::msg("--k-max must be at most 1024"));
    }
    let mut prof = Profile::load(&a.noise)?;
    let setup = Setup {
        chip_seed: a.chip_seed,
        run_seed: a.seed,
        reps: a.reps,
    };
    if let Some(iterations) = a.fit {
        let (fitted, misfit) = identity::fit(&prof, setup, iterations, |it, best| {
            if !a.json.json {
                eprint!("\riteration {it}: misfit {best:.3}   ");
            }
        })?;
        if !a.json.json {
            eprintln!();
            eprintln!("fitted misfit {misfit:.3}; parameters:");
            for (name, v) in identity::FIT_PARAMETERS
                .iter()
                .zip(identity::parameters(&fitted))
            {
                eprintln!("  {name}: {v:.6}");
            }
            println!("{}", fitted.to_yaml());
        }
        prof = fitted;
    }
    let rows = identity::compare(&prof, &a.inputs, a.k_max, setup)?;
    let misfit = identity::misfit(&rows);
    let within = identity::holds(&rows);
    let frames = background::frames(&prof, 0, a.chip_seed, a.seed, a.frames as usize)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let figures = background::compare(&background::statistics(&frames));
    let bg_within = figures.iter().all(Figure::holds);
    if a.json.json {
        let name = if prof.name.is_empty() {
            a.noise.as_str()
        } else {
            prof.name.as_str()
        };
        let report = Report {
            profile: name,
            chip_seed: a.chip_seed,
            seed: a.seed,
            reps: a.reps,
            misfit,
            within_tolerance: within,
            rows: &rows,
            background: Background {
                frames: a.frames,
                within_tolerance: bg_within,
                figures: &figures,
            },
        };
        println!("{}", serde_json::to_string(&report)?);
        return Ok(0);
    }
    println!(
        "identity kernel `{}` applied k times to a uniform input; bias = mean(input - \
         output), std = spatial std of input - output",
        identity::KERNEL
    );
    println!(
        "profile {}, chip seed {}, run seeds {}..{}, averaged over {} repetitions",
        a.noise,
        a.chip_seed,
        a.seed,
        a.seed + u64::from(a.reps) - 1,
        a.reps
    );
    println!(
        "\n{:>6} {:>3} {:>14} {:>14} {:>13} {:>13}",
        "input", "k", "measured bias", "simulated bias", "measured std", "simulated std"
    );
    for r in &rows {
        let (mb, ms) = match r.measured {
            Some((b, s)) => (format!("{b:.1}"), format!("{s:.1}")),
            None => ("-".into(), "-".into()),
        };
        println!(
            "{:>6} {:>3} {:>14} {:>14.2} {:>13} {:>13.2}",
            r.input, r.k, mb, r.bias, ms, r.std
        );
    }
    println!(
        "\nmisfit {misfit:.3} (sum of squared errors in units of the tolerance); every \
         measured point within tolerance (bias 2 + 6%, std 1.5 + 25%): {}",
        if within { "yes" } else { "no" }
    );
    print_background(&figures, a, bg_within);
    Ok(0)
}

fn print_background(figures: &[Figure], a: &CalibrateArgs, within: bool) {
    println!(
        "\nbackground of the uncorrected load `load_in(A, 0)`, 8-bit levels (128 = analogue \
         0): device (810 frames, another chip) vs simulated ({} frames, chip seed {}, run \
         seeds {}..{})",
        a.frames,
        a.chip_seed,
        a.seed,
        a.seed + u64::from(a.frames) - 1
    );
    println!(
        "\n{:<28} {:>9} {:>10} {:>10}",
        "statistic", "device", "simulated", "tolerance"
    );
    for f in figures {
        let tol = f.tolerance.map_or("-".into(), |t| format!("{t:.2}"));
        println!(
            "{:<28} {:>9.2} {:>10.2} {:>10}",
            f.name, f.device, f.simulated, tol
        );
    }
    println!(
        "\nevery held statistic within tolerance ({:.0} %): {}",
        100.0 * background::RELATIVE_TOLERANCE,
        if within { "yes" } else { "no" }
    );
}
