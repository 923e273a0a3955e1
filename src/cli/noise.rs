//! `scamp noise`: show a noise profile as YAML, and rerun the calibration of the
//! `scamp5` profile against the hardware measurements (docs/noise.md).

use super::Outcome;
use crate::calibrate::{fit, report, saturation};
use scamp::identity::Setup;
use scamp::Profile;

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
    #[arg(long, default_value = scamp::DEFAULT_PROFILE, value_name = "PROFILE")]
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
    #[arg(long, default_value_t = 32, value_parser = |s: &str| super::args::whole(s, "--k-max", 1, 1024).map(|n| n as u32))]
    k_max: u32,
    /// Chip (fixed-pattern) seed.
    #[arg(long = "chip-seed", default_value_t = 1, value_parser = super::args::seed)]
    chip_seed: u64,
    /// Run seed of the first repetition (repetition r uses seed + r).
    #[arg(long, default_value_t = 1, value_parser = super::args::seed)]
    seed: u64,
    /// Repetitions averaged per point.
    #[arg(long, default_value_t = 4, value_parser = |s: &str| super::args::whole(s, "--reps", 1, 1000).map(|n| n as u32))]
    reps: u32,
    /// Frames of the background experiment (`load_in(A, 0)`, run seeds from `--seed`
    /// on the chip `--chip-seed`), 16..=1024.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(16..=1024))]
    frames: u32,
    /// Refit the free parameters of the profile to the measurements (Nelder-Mead, this
    /// many iterations) and print the fitted profile as YAML before the comparison.
    #[arg(long, value_name = "ITERATIONS", value_parser = |s: &str| super::args::whole(s, "--fit", 1, 100_000).map(|n| n as u32))]
    fit: Option<u32>,
    /// Fit the register range (knee and limit) to a saturation dataset instead: CSV
    /// `input,k,value`, the values read back after `in(A, input)`, k doublings and k
    /// halvings (docs/noise.md, "Measuring the register range"); `--fit` sets the
    /// iterations (default 60).
    #[arg(long, value_name = "FILE.csv", conflicts_with = "saturation_predict")]
    saturation: Option<std::path::PathBuf>,
    /// Print the simulator's prediction of that experiment under `--noise` instead, for
    /// every input of `--inputs` and k up to `--k-max` (at most 16).
    #[arg(long)]
    saturation_predict: bool,
    #[command(flatten)]
    json: super::args::JsonArg,
}

/// Runs `scamp noise`.
pub fn run(a: &NoiseCmdArgs) -> Outcome {
    match &a.cmd {
        NoiseCmd::Show { profile: name } => {
            match scamp::builtin_text(name) {
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

fn calibrate_cmd(a: &CalibrateArgs) -> Outcome {
    let mut prof = Profile::load(&a.noise)?;
    let setup = Setup {
        chip_seed: a.chip_seed,
        run_seed: a.seed,
        reps: a.reps,
    };
    if a.saturation.is_some() || a.saturation_predict {
        return saturation_cmd(a, &prof, setup);
    }
    if let Some(iterations) = a.fit {
        let (fitted, misfit) = fit::fit(&prof, setup, iterations, |it, best| {
            if !a.json.json {
                eprint!("\riteration {it}: misfit {best:.3}   ");
            }
        })?;
        if !a.json.json {
            eprintln!("\nfitted misfit {misfit:.3}; parameters:");
            for (name, v) in fit::FIT_PARAMETERS.iter().zip(fit::parameters(&fitted)) {
                eprintln!("  {name}: {v:.6}");
            }
            println!("{}", fitted.to_yaml());
        }
        prof = fitted;
    }
    let c = report::calibrate(&report::Request {
        profile: &prof,
        given: &a.noise,
        inputs: &a.inputs,
        k_max: a.k_max,
        setup,
        frames: a.frames,
    })?;
    if a.json.json {
        println!("{}", serde_json::to_string(&c)?);
    } else {
        print!("{}", report::text(&c));
    }
    Ok(0)
}

/// `calibrate --saturation FILE` (fit) or `--saturation-predict`.
fn saturation_cmd(a: &CalibrateArgs, prof: &Profile, setup: Setup) -> Outcome {
    let report = match &a.saturation {
        Some(path) => {
            let text = super::common::read_source(path, saturation::MAX_DATASET_BYTES, "dataset")?;
            let data = saturation::Dataset::parse(&text, &path.display().to_string())?;
            saturation::Report::fit(prof, &a.noise, &data, setup, a.fit.unwrap_or(60))?
        }
        None => saturation::Report::predict(prof, &a.noise, &a.inputs, a.k_max, setup)?,
    };
    if a.json.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(0)
}
