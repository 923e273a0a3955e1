//! `scamp export TARGET -o OUT`: a program (with `--kernel`), a spec or a network as a
//! C++17 source for the SCAMP-5d host API, with golden outputs (`--golden DIR`).

use super::common::{load_program, read_source, work_options};
use super::{args, CliError, Outcome};
use scamp::eval;
use scamp::load_images;
use scamp::Bank;
use scamp::Stats;
use scamp::{isa::Device, isa::MAX_PROGRAM_BYTES, isa::MAX_SPEC_BYTES};
use scamp::{ExportError, ExportReport, GoldenSample, NetworkHost, Plan};
use scamp::{GreyImage, N};
use scamp::{Profile, DEFAULT_PROFILE};
use std::path::{Path, PathBuf};

/// Arguments of `scamp export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// A program (`.scamp`; with `--kernel` it is proven first), a filter spec (compiled
    /// first) or a network file (`stages:`, as `scamp eval` reads).
    pub target: PathBuf,
    /// The C++ file to write.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Overwrite OUT (and files in the golden folder) when they exist.
    #[arg(long)]
    pub force: bool,
    /// Write golden outputs (planes after each block, readouts, features) here.
    #[arg(long, value_name = "DIR")]
    pub golden: Option<PathBuf>,
    /// The spec a program computes: the program is proven against it, and refused when
    /// it does not compute it.
    #[arg(long, value_name = "SPEC.yaml")]
    pub kernel: Option<PathBuf>,
    /// Sample pictures of the golden outputs of a program or spec.
    #[arg(long, default_value = "images", value_name = "DIR")]
    pub images: PathBuf,
    /// Sample images of a network's golden outputs: the first N of the test split.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub samples: u64,
    /// A network's dataset (the head's training split, the samples' test split).
    #[arg(long, value_name = "DIR", default_value = eval::DEFAULT_DATASET_DIR)]
    pub dataset: PathBuf,
    /// Train a network's head on the first N training images only (as `eval`).
    #[arg(long = "train-images", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub train_images: Option<u64>,
    /// Noise profile of the predicted errors in the comments and of the noisy golden
    /// outputs: `ideal`, `scamp5` or a profile YAML.
    #[arg(long, default_value = DEFAULT_PROFILE, value_name = "PROFILE")]
    pub noise: String,
    /// Deterministic search budget when a spec is compiled (default: the spec's).
    #[arg(long, value_name = "N", value_parser = args::work)]
    pub work: Option<u64>,
    /// `--json`.
    #[command(flatten)]
    pub json: args::JsonArg,
}

fn export_error(e: ExportError) -> CliError {
    CliError::msg(e)
}

/// Refuses an existing OUT without `--force`, and an OUT that cannot be written.
fn check_outputs(a: &ExportArgs) -> Result<(), CliError> {
    if a.output.exists() && !a.force {
        return Err(CliError::msg(format!(
            "{}: exists; pass --force to overwrite it",
            a.output.display()
        )));
    }
    super::files::check_writable_file(&a.output)?;
    if let Some(dir) = &a.golden {
        let used = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
        if used && !a.force {
            return Err(CliError::msg(format!(
                "{}: exists and is not empty; pass --force to write into it",
                dir.display()
            )));
        }
    }
    Ok(())
}

fn is_yaml(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "yaml" || e == "yml")
}

/// Whether the YAML text is a network file (it has `stages:`) rather than a spec.
fn is_network(text: &str) -> bool {
    serde_yaml::from_str::<serde_yaml::Value>(text)
        .ok()
        .and_then(|v| v.get("stages").cloned())
        .is_some()
}

/// The bank of a spec (compiled) or of a program (with `--kernel`, proven later).
fn bank(a: &ExportArgs, text: &str) -> Result<Bank, CliError> {
    if is_yaml(&a.target) {
        if a.kernel.is_some() {
            return Err(CliError::msg(
                "--kernel is for programs; a spec carries its own kernels",
            ));
        }
        let spec = scamp::parse_spec(text).map_err(|e| super::positioned(&a.target, e))?;
        let opts = work_options(a.work);
        return Bank::compile(spec, &opts, &Stats::default()).map_err(|e| match e {
            scamp::BankError::Compile(c) => super::compile_error(&a.target, c),
            other => CliError::msg(other),
        });
    }
    let Some(spec_path) = &a.kernel else {
        return Ok(Bank::bare(load_program(&a.target, Device::default())?));
    };
    let spec_text = read_source(spec_path, MAX_SPEC_BYTES, "spec")?;
    let spec = scamp::parse_spec(&spec_text).map_err(|e| super::positioned(spec_path, e))?;
    let program = load_program(
        &a.target,
        Device {
            general: spec.general_count(),
        },
    )?;
    Bank::with_kernels(program, text, spec).map_err(CliError::msg)
}

/// The samples of a program's golden outputs: the pictures of `--images`.
fn picture_samples(a: &ExportArgs) -> Result<Vec<GoldenSample>, CliError> {
    let images = load_images(&a.images).map_err(|e| {
        CliError::msg(format!(
            "{e} (choose the golden outputs' pictures with --images DIR)"
        ))
    })?;
    Ok(images
        .into_iter()
        .map(|(name, scene)| GoldenSample { name, scene })
        .collect())
}

/// The samples of a network: the first test images, each in the window on a black frame.
fn network_samples(host: &NetworkHost, test: &eval::Split, n: usize) -> Vec<GoldenSample> {
    let (r0, c0) = host.origin;
    (0..n.min(test.len()))
        .map(|i| {
            let mut pixels = vec![eval::TILE_BACKGROUND; N * N];
            for (r, row) in test.image(i).chunks(test.cols).enumerate() {
                pixels[(r0 + r) * N + c0..(r0 + r) * N + c0 + test.cols].copy_from_slice(row);
            }
            GoldenSample {
                name: format!("test{i:04}_label{}", test.labels[i]),
                scene: GreyImage {
                    pixels,
                    resized_from: None,
                },
            }
        })
        .collect()
}

/// The plan, host and golden samples of a network target.
fn network_parts(
    a: &ExportArgs,
    profile: (&str, &Profile),
) -> Result<(Plan, Option<NetworkHost>, Vec<GoldenSample>), CliError> {
    let net = eval::load_path(Some(&a.target)).map_err(CliError::msg)?;
    let data = eval::read_dataset(&a.dataset).map_err(CliError::msg)?;
    let opts = scamp::HeadOptions::default()
        .with_train_images(a.train_images.map(|n| n as usize))
        .with_compile(work_options(a.work));
    let e = scamp::of_network(&net, &data, profile, &opts).map_err(export_error)?;
    let samples = network_samples(&e.host, &data.test, a.samples as usize);
    Ok((e.plan, Some(e.host), samples))
}

/// Runs `scamp export`.
pub fn run(a: &ExportArgs) -> Outcome {
    check_outputs(a)?;
    let profile = Profile::load(&a.noise)?;
    let shown = a.noise.as_str();
    let text = read_source(&a.target, MAX_PROGRAM_BYTES, "target")?;
    let name = a.target.display().to_string();
    let (plan, host, samples) = if is_yaml(&a.target) && is_network(&text) {
        network_parts(a, (shown, &profile))?
    } else {
        let bank = bank(a, &text)?;
        let plan = scamp::of_bank(&bank, &name, (shown, &profile)).map_err(export_error)?;
        let samples = if a.golden.is_some() {
            picture_samples(a)?
        } else {
            Vec::new()
        };
        (plan, None, samples)
    };
    let source = scamp::cpp_source(&plan, host.as_ref());
    std::fs::write(&a.output, &source)
        .map_err(|e| CliError::msg(format!("{}: cannot write: {e}", a.output.display())))?;
    if let Some(dir) = &a.golden {
        super::files::prepare_dir(dir)?;
        scamp::write_golden(dir, &plan, host.as_ref(), &samples, (shown, &profile))
            .map_err(export_error)?;
    }
    let report = ExportReport::of(
        &plan,
        &a.output.display().to_string(),
        a.golden.as_ref().map(|d| d.display().to_string()),
    );
    if a.json.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        eprintln!(
            "{}: {} blocks, {} instructions, {} cycles per frame; energy model {:.2} uJ per frame",
            report.output,
            report.blocks,
            report.instructions,
            report.cycles,
            report.energy_uj_per_frame
        );
    }
    Ok(0)
}
