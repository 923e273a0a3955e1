//! `scamp check TARGET`: prove a program computes its kernels, run it on test images
//! under a noise profile, and report the approximation, analogue and total error.

use super::common::{load_program, NoiseArgs};
use super::{args, CliError, Outcome};
use crate::report::{bank_page, PageError};
use scamp::GreyImage;
use scamp::{isa::Device, isa::MAX_PROGRAM_BYTES, isa::MAX_SPEC_BYTES};
use scamp::{Bank, BankError, CheckOptions, Pictures};
use scamp::{CompileOptions, Spec, Stats};
use scamp::{EvaluateError, ProfileTestbed};
use std::path::{Path, PathBuf};

/// Arguments of `scamp check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A filter spec (compiled first; format in docs/spec-format.md) or a program file
    /// (then `--kernel` is needed).
    pub target: PathBuf,
    /// The filter spec a program is meant to compute.
    #[arg(long, value_name = "SPEC.yaml")]
    kernel: Option<PathBuf>,
    /// Folder of test images.
    #[arg(long, default_value = "images", value_name = "DIR")]
    images: PathBuf,
    #[command(flatten)]
    noise: NoiseArgs,
    /// Monte Carlo over this many run seeds (mean and spread of each figure).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = args::runs)]
    runs: u32,
    /// Write, per image and kernel, the result, the ideal result and an error heat map.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Search budget in seconds when a spec is compiled, at most 86400.
    #[arg(long, value_name = "SECONDS", value_parser = args::time_limit)]
    time_limit: Option<f64>,
    /// Search workers when a spec is compiled, 1..=1024.
    #[arg(long, value_name = "N", value_parser = args::workers)]
    workers: Option<usize>,
    /// Deterministic search of N nodes per worker when a spec is compiled (default: the
    /// spec's `work`; see `scamp compile --help`).
    #[arg(long, value_name = "N", value_parser = args::work)]
    work: Option<u64>,
    /// Try depths from small to large and pick the shortest program whose total RMSE
    /// meets this budget.
    #[arg(long, value_name = "X", value_parser = args::positive)]
    max_total_rmse: Option<f64>,
    /// Error bars: rerun under every profile of the noise profile's uncertainty
    /// ensemble that still matches the measurements, and report the range of the total
    /// RMSE and bias next to the nominal figures.
    #[arg(long)]
    uncertainty: bool,
    /// Write a self-contained HTML report (proof, error table, pictures per image).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    accept: args::AcceptArg,
    #[command(flatten)]
    json: args::JsonArg,
}

fn is_spec(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "yaml" || e == "yml")
}

fn read_spec(path: &Path, accept: args::AcceptArg) -> Result<Spec, CliError> {
    let text = super::common::read_source(path, MAX_SPEC_BYTES, "spec")?;
    let spec =
        scamp::parse_spec_in(&text, path.parent()).map_err(|e| super::positioned(path, e))?;
    Ok(accept.apply(spec))
}

fn options(a: &CheckArgs) -> CompileOptions {
    let mut opts = CompileOptions::default();
    opts.time_limit = a.time_limit;
    opts.workers = a.workers;
    opts.work = a.work;
    opts
}

/// Compiles the spec TARGET (or searches depths with `--max-total-rmse`).
fn from_spec(
    a: &CheckArgs,
    grey: &[GreyImage],
    testbed: &ProfileTestbed,
) -> Result<Bank, CliError> {
    if a.kernel.is_some() {
        return Err(CliError::msg(
            "--kernel is for programs; a spec carries its own kernels",
        ));
    }
    let spec = read_spec(&a.target, a.accept)?;
    let Some(limit) = a.max_total_rmse else {
        let bank = Bank::compile(spec, &options(a), &Stats::default())
            .map_err(|e| bank_error(&a.target, e))?;
        if let (false, Some(c), Some(s)) = (a.json.json, bank.compile_report(), bank.spec()) {
            eprintln!(
                "compiled {}: {} instructions, {} cycles (best after {:.1} s of {:.1} s)",
                s.name, c.instructions, c.cycles, c.search.seconds_to_best, c.search.seconds
            );
        }
        return Ok(bank);
    };
    let max_depth = spec.approximation.max_depth;
    let mut opts = options(a);
    opts.work = None;
    let (bank, choice) =
        Bank::compile_within(spec, &opts, limit, grey, testbed, a.runs).map_err(CliError::msg)?;
    if !a.json.json {
        eprint!("{}", scamp::bank_text::budget(&choice, limit, max_depth));
    }
    Ok(bank)
}

/// A library error of `check`, positioned in `file` where it has a position.
fn bank_error(file: &Path, e: BankError) -> CliError {
    match e {
        BankError::Compile(c) => super::compile_error(file, c),
        BankError::Evaluate(EvaluateError::Run(r)) => super::positioned(file, r),
        other => CliError::msg(other),
    }
}

/// Reads the program TARGET and the spec of `--kernel`; several kernel blocks are a
/// bank's groups, each kernel assigned to the block that proves it.
fn from_program(a: &CheckArgs) -> Result<Bank, CliError> {
    let spec_path = a.kernel.as_ref().ok_or_else(|| {
        CliError::msg(format!(
            "{}: a program needs --kernel SPEC.yaml naming the kernels it computes",
            a.target.display()
        ))
    })?;
    if a.max_total_rmse.is_some() {
        return Err(CliError::msg(
            "--max-total-rmse needs a spec to compile at several depths",
        ));
    }
    let spec = read_spec(spec_path, a.accept)?;
    let program = load_program(
        &a.target,
        Device {
            general: spec.general_count(),
        },
    )?;
    let source = super::common::read_source(&a.target, MAX_PROGRAM_BYTES, "program")?;
    Bank::with_kernels(program, &source, spec).map_err(|e| bank_error(spec_path, e))
}

/// Runs `scamp check`.
pub fn run(a: &CheckArgs) -> Outcome {
    if let Some(dir) = &a.out {
        super::files::prepare_dir(dir)?;
    }
    if let Some(file) = &a.html {
        super::files::check_writable_file(file)?;
    }
    let images = scamp::load_images(&a.images).map_err(|e| images_error(a, e))?;
    let grey: Vec<_> = images.iter().map(|(_, g)| g.clone()).collect();
    let testbed = a.noise.testbed()?;
    if a.uncertainty {
        scamp::described(&testbed.profile).map_err(CliError::msg)?;
    }
    let bank = if is_spec(&a.target) {
        from_spec(a, &grey, &testbed)?
    } else {
        from_program(a)?
    };
    let opts = CheckOptions::new(a.noise.noise.clone())
        .with_runs(a.runs)
        .with_uncertainty(a.uncertainty);
    let checked = bank
        .check(&grey, &testbed, &opts)
        .map_err(|e| bank_error(&a.target, e))?;
    let (report, e) = (&checked.report, &checked.evaluation);
    let pictures = Pictures {
        images: &images,
        testbed: &testbed,
    };
    if let (Some(dir), true) = (&a.out, e.verified) {
        let border = e.measurement.as_ref().map_or(0, |m| m.border);
        bank.write_outputs(dir, &pictures, border)
            .map_err(CliError::msg)?;
    }
    if let Some(file) = &a.html {
        let target = a.target.display().to_string();
        let page = bank_page(&bank, report, e.measurement.clone(), &target, &pictures).map_err(
            |e| match e {
                PageError::Run(r) => super::positioned(&a.target, r),
                other => CliError::msg(format!("{}: {other}", file.display())),
            },
        )?;
        if let Some(html) = page {
            std::fs::write(file, &html)
                .map_err(|e| CliError::msg(format!("{}: cannot write: {e}", file.display())))?;
            if !a.json.json {
                eprintln!("wrote {} ({} bytes)", file.display(), html.len());
            }
        }
    }
    if a.json.json {
        println!("{}", serde_json::to_string(report)?);
    } else if let Some(spec) = bank.spec() {
        print!("{}", scamp::bank_text::check(report, spec, bank.kernels()));
    }
    Ok(if report.passed() { 0 } else { 1 })
}

/// The `--images` folder could not be used: say where the bundled images are.
fn images_error(a: &CheckArgs, e: scamp::ImagesError) -> CliError {
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("images");
    if a.images == Path::new("images") && bundled.is_dir() {
        return CliError::msg(format!(
            "{e} (run from the repository root, or pass --images {})",
            bundled.display()
        ));
    }
    CliError::msg(format!(
        "{e} (choose a folder of test images with --images DIR)"
    ))
}
