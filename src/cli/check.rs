//! `scamp check TARGET`: prove a program computes its kernels, run it on test images
//! under a noise profile, and report the approximation, analogue and total error.

use super::common::{load_program, NoiseArgs};
use super::{args, CliError, Outcome};
use crate::cain::budget::{self, BudgetChoice, BudgetRow};
use crate::cain::{self, CompileOptions, KernelReport, Spec, Stats};
use crate::isa::source::{MAX_PROGRAM_BYTES, MAX_SPEC_BYTES};
use crate::isa::Device;
use crate::report as html_report;
use crate::sim::capture::GreyImage;
use crate::sim::noise::uncertainty::Member;
use crate::sim::DEFAULT_CLOCK_HZ;
use crate::verify::check::{self, Measurement, ProfileTestbed};
use crate::verify::groups::{self, EvaluateError, Evaluation, Groups};
use crate::verify::metrics::ErrorFigures;
use crate::verify::predict::Predicted;
use crate::verify::proof;
use crate::verify::uncertainty::Ranges;
use serde::Serialize;
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
    json: args::JsonArg,
}

#[derive(Serialize)]
struct KernelJson {
    out: String,
    depth: u32,
    approximated: Vec<Vec<i64>>,
    approx: ErrorFigures,
    analogue: ErrorFigures,
    total: TotalJson,
    analogue_runs: check::FigureSpread,
    total_runs: check::FigureSpread,
    saturated: u64,
    /// Total error split by source.
    sources: check::ErrorSources,
    /// Analytic prediction of the analogue error (noise, gain, offset), with the
    /// images' input moments.
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted: Option<Predicted>,
    /// Largest magnitude any value of the program reaches for the spec's input range.
    #[serde(skip_serializing_if = "Option::is_none")]
    peak: Option<f64>,
}

/// The total error, with its range over the uncertainty ensemble when asked for.
#[derive(Serialize)]
struct TotalJson {
    #[serde(flatten)]
    figures: ErrorFigures,
    #[serde(skip_serializing_if = "Option::is_none")]
    rmse_range: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bias_range: Option<[f64; 2]>,
}

/// How many ensemble members were drawn and which failed the measurements.
#[derive(Serialize)]
struct UncertaintyJson {
    members: usize,
    accepted: usize,
    ensemble: Vec<Member>,
}

#[derive(Serialize)]
struct Report {
    verified: bool,
    instructions: usize,
    cycles: u64,
    time_us: f64,
    noise: String,
    border: usize,
    images: usize,
    runs: u32,
    kernels: Vec<KernelJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mismatch: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    budget: Vec<BudgetRow>,
    /// With `--max-total-rmse`: whether the reported program meets the budget (when no
    /// depth does, the closest program is reported and the exit code is 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_met: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uncertainty: Option<UncertaintyJson>,
    /// PE-register pairs clipped while the program ran (first run, all images, every
    /// group of a bank).
    saturated: u64,
    /// `saturated` per PE, image and group.
    saturated_share: f64,
    program: String,
}

fn is_spec(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "yaml" || e == "yml")
}

fn read_spec(path: &Path) -> Result<Spec, CliError> {
    let text = super::common::read_source(path, MAX_SPEC_BYTES, "spec")?;
    cain::parse_spec(&text).map_err(|e| super::positioned(path, e))
}

fn compile(
    spec: &Spec,
    path: &Path,
    a: &CheckArgs,
    quiet: bool,
) -> Result<cain::Compiled, CliError> {
    let opts = CompileOptions {
        time_limit: a.time_limit,
        workers: a.workers,
        work: a.work,
        ..CompileOptions::default()
    };
    let c =
        cain::compile(spec, &opts, &Stats::default()).map_err(|e| super::compile_error(path, e))?;
    if !quiet {
        eprintln!(
            "compiled {}: {} instructions, {} cycles (best after {:.1} s of {:.1} s)",
            spec.name,
            c.program.instructions(),
            c.program.cycles(),
            c.search.seconds_to_best,
            c.search.seconds
        );
    }
    Ok(c)
}

/// The program `check` evaluates: its groups (one for a plain program), the kernels it
/// must compute and, with `--max-total-rmse`, the depth search that chose it.
struct Subject {
    spec: Spec,
    groups: Groups,
    kernels: Vec<KernelReport>,
    text: String,
    budget: Vec<BudgetRow>,
    budget_met: Option<bool>,
}

/// Compiles the spec TARGET (or searches depths with `--max-total-rmse`).
fn from_spec(
    a: &CheckArgs,
    grey: &[GreyImage],
    testbed: &ProfileTestbed,
) -> Result<Subject, CliError> {
    if a.kernel.is_some() {
        return Err(CliError::msg(
            "--kernel is for programs; a spec carries its own kernels",
        ));
    }
    let spec = read_spec(&a.target)?;
    let Some(limit) = a.max_total_rmse else {
        let c = compile(&spec, &a.target, a, a.json.json)?;
        let groups = if c.groups.len() > 1 {
            c.groups
                .iter()
                .map(|g| (g.program.clone(), g.kernels.clone()))
                .collect()
        } else {
            groups::single(c.program.clone(), c.kernels.len())
        };
        return Ok(Subject {
            text: cain::program_text(&c),
            spec,
            groups,
            kernels: c.kernels,
            budget: Vec::new(),
            budget_met: None,
        });
    };
    let opts = CompileOptions {
        time_limit: a.time_limit,
        workers: a.workers,
        ..CompileOptions::default()
    };
    let b =
        budget::budget_search(&spec, &opts, limit, grey, testbed, a.runs).map_err(CliError::msg)?;
    if !a.json.json {
        print_budget(&b, limit, spec.approximation.max_depth);
    }
    Ok(Subject {
        text: b.program.to_string(),
        groups: groups::single(b.program, b.kernels.len()),
        spec,
        kernels: b.kernels,
        budget: b.rows,
        budget_met: Some(b.met),
    })
}

/// Reads the program TARGET and the spec of `--kernel`; several kernel blocks are a
/// bank's groups, each kernel assigned to the block that proves it.
fn from_program(a: &CheckArgs) -> Result<Subject, CliError> {
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
    let spec = read_spec(spec_path)?;
    let program = load_program(
        &a.target,
        Device {
            general: spec.general_count(),
        },
    )?;
    let kernels = cain::approximate_spec(&spec)?;
    let source = super::common::read_source(&a.target, MAX_PROGRAM_BYTES, "program")?;
    let ends = groups::kernel_block_ends(&source);
    let groups = if ends.len() > 1 {
        let proofs: Vec<proof::Target> = kernels.iter().map(KernelReport::target).collect();
        groups::assign_blocks(
            groups::split_blocks(&program, &ends),
            spec.input,
            spec.general_count(),
            &proofs,
        )
    } else {
        groups::single(program.clone(), kernels.len())
    };
    Ok(Subject {
        text: program.to_string(),
        spec,
        groups,
        kernels,
        budget: Vec::new(),
        budget_met: None,
    })
}

/// Runs `scamp check`.
pub fn run(a: &CheckArgs) -> Outcome {
    if let Some(dir) = &a.out {
        super::files::prepare_dir(dir)?;
    }
    if let Some(file) = &a.html {
        super::files::check_writable_file(file)?;
    }
    let images = check::load_images(&a.images).map_err(CliError::msg)?;
    let grey: Vec<_> = images.iter().map(|(_, g)| g.clone()).collect();
    let testbed = a.noise.testbed()?;
    if a.uncertainty {
        crate::sim::noise::uncertainty::described(&testbed.profile).map_err(CliError::msg)?;
    }
    let s = if is_spec(&a.target) {
        from_spec(a, &grey, &testbed)?
    } else {
        from_program(a)?
    };
    let proofs: Vec<proof::Target> = s.kernels.iter().map(KernelReport::target).collect();
    let targets = cain::check_targets(&s.spec, &s.kernels);
    let e = groups::evaluate(&groups::Request {
        groups: &s.groups,
        input: s.spec.input,
        general: s.spec.general_count(),
        proofs: &proofs,
        targets: &targets,
        input_range: s.spec.input_range,
        images: &grey,
        testbed: &testbed,
        runs: a.runs,
        uncertainty: a.uncertainty,
    })
    .map_err(|e| match e {
        EvaluateError::Run(r) => super::positioned(&a.target, r),
        other => CliError::msg(other),
    })?;
    if let (Some(dir), true) = (&a.out, e.verified) {
        write_outputs(dir, &s, &targets, &images, &testbed, &e)?;
    }
    let report = report_of(a, &s, &e, images.len());
    if let Some(file) = &a.html {
        write_html(
            file,
            a,
            &report,
            &s.spec,
            &s.groups,
            &s.kernels,
            &targets,
            &images,
            &testbed,
            e.measurement,
        )?;
    }
    if a.json.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report, &s.spec, &s.kernels);
    }
    Ok(if report.verified && report.budget_met != Some(false) {
        0
    } else {
        1
    })
}

/// Result files of `--out`: in DIR itself for one program, in `DIR/groupN` per group
/// of a bank.
fn write_outputs(
    dir: &Path,
    s: &Subject,
    targets: &[check::Target],
    images: &[(String, GreyImage)],
    testbed: &ProfileTestbed,
    e: &Evaluation,
) -> Result<(), CliError> {
    let border = e.measurement.as_ref().map_or(0, |m| m.border);
    for (i, (program, members)) in s.groups.iter().enumerate() {
        let sub = if s.groups.len() > 1 {
            let sub = dir.join(format!("group{}", i + 1));
            super::files::prepare_dir(&sub)?;
            sub
        } else {
            dir.to_path_buf()
        };
        check::write_outputs(
            &sub,
            program,
            s.spec.input,
            s.spec.general_count(),
            &groups::members_of(members, targets),
            images,
            testbed,
            border,
        )
        .map_err(CliError::msg)?;
    }
    Ok(())
}

/// The report of one evaluation (text and JSON share it).
fn report_of(a: &CheckArgs, s: &Subject, e: &Evaluation, images: usize) -> Report {
    let cycles: u64 = s.groups.iter().map(|(p, _)| p.cycles()).sum();
    let m = e.measurement.as_ref();
    // Kernels of one group share its run, so each group's count is taken once.
    let saturated: u64 = m.map_or(0, |m| {
        s.groups
            .iter()
            .filter_map(|(_, members)| members.first().and_then(|&i| m.kernels.get(i)))
            .map(|k| k.saturated)
            .sum()
    });
    Report {
        verified: e.verified,
        instructions: s.groups.iter().map(|(p, _)| p.instructions()).sum(),
        cycles,
        time_us: cycles as f64 * 1e6 / DEFAULT_CLOCK_HZ,
        noise: a.noise.noise.clone(),
        border: m.map_or(0, |m| m.border),
        images,
        runs: a.runs,
        kernels: kernel_json(&s.kernels, m, &e.predicted, e.peak, e.ranges.as_ref()),
        uncertainty: e.ranges.as_ref().map(|r| UncertaintyJson {
            members: r.members.len(),
            accepted: r.accepted(),
            ensemble: r.members.clone(),
        }),
        saturated,
        saturated_share: saturated as f64
            / (crate::sim::PES * images.max(1) * s.groups.len().max(1)) as f64,
        mismatch: e.mismatch.clone(),
        budget: s.budget.clone(),
        budget_met: s.budget_met,
        program: s.text.clone(),
    }
}

fn kernel_json(
    kernels: &[KernelReport],
    m: Option<&Measurement>,
    predicted: &Option<Vec<Predicted>>,
    peak: Option<f64>,
    ranges: Option<&Ranges>,
) -> Vec<KernelJson> {
    let Some(m) = m else {
        return Vec::new();
    };
    kernels
        .iter()
        .zip(&m.kernels)
        .enumerate()
        .map(|(i, (k, e))| KernelJson {
            out: k.out.to_string(),
            depth: k.approx.depth,
            approximated: k.approx.weights.clone(),
            approx: e.approx,
            analogue: e.analogue,
            total: TotalJson {
                figures: e.total,
                rmse_range: ranges.and_then(|r| r.kernels.get(i)).map(|k| k.rmse),
                bias_range: ranges.and_then(|r| r.kernels.get(i)).map(|k| k.bias),
            },
            analogue_runs: e.analogue_runs,
            total_runs: e.total_runs,
            saturated: e.saturated,
            sources: e.sources,
            predicted: predicted.as_ref().and_then(|p| p.get(i).copied()),
            peak,
        })
        .collect()
}

fn print_budget(b: &BudgetChoice, limit: f64, max_depth: u32) {
    for (d, e) in &b.skipped {
        eprintln!("depth {d}: {e}");
    }
    eprintln!("depth  instructions  cycles  total RMSE  meets {limit}");
    for r in &b.rows {
        eprintln!(
            "{:>5}  {:>12}  {:>6}  {:>10.4}  {}",
            r.depth,
            r.instructions,
            r.cycles,
            r.total_rmse,
            if r.meets { "yes" } else { "no" }
        );
    }
    if !b.met {
        let worst = b
            .rows
            .iter()
            .map(|r| r.total_rmse)
            .fold(f64::INFINITY, f64::min);
        eprintln!(
            "no depth up to {max_depth} meets --max-total-rmse {limit}; reporting the closest \
             (total RMSE {worst:.4}, {} instructions)",
            b.program.instructions()
        );
    }
}

/// Builds the report page from the library's pieces and writes it.
#[allow(clippy::too_many_arguments)]
fn write_html(
    file: &Path,
    a: &CheckArgs,
    r: &Report,
    spec: &Spec,
    groups: &Groups,
    kernels: &[KernelReport],
    targets: &[check::Target],
    images: &[(String, crate::sim::capture::GreyImage)],
    testbed: &dyn check::Testbed,
    m: Option<Measurement>,
) -> Result<(), CliError> {
    let panels = if r.verified {
        html_report::check::image_panels(
            groups,
            spec.input,
            spec.general_count(),
            targets,
            images,
            testbed,
        )
        .map_err(|e| super::positioned(&a.target, e))?
    } else {
        Vec::new()
    };
    let errors = m.map(|m| m.kernels).unwrap_or_default();
    let summaries = kernels
        .iter()
        .enumerate()
        .map(|(i, k)| html_report::KernelSummary {
            out: k.out.to_string(),
            depth: k.approx.depth,
            approximated: k.approx.weights.clone(),
            approx_error: k.approx.error,
            errors: errors.get(i).cloned(),
        })
        .collect();
    let target = a.target.display().to_string();
    let html = html_report::check_page(&html_report::CheckPage {
        name: &spec.name,
        target: &target,
        program: &r.program,
        instructions: r.instructions,
        cycles: r.cycles,
        time_us: r.time_us,
        noise: &r.noise,
        runs: r.runs,
        verified: r.verified,
        mismatch: &r.mismatch,
        border: r.border,
        kernels: summaries,
        images: panels,
        saturated: r.verified.then_some(r.saturated),
    })
    .map_err(|e| CliError::msg(format!("{}: cannot render: {e}", file.display())))?;
    std::fs::write(file, &html)
        .map_err(|e| CliError::msg(format!("{}: cannot write: {e}", file.display())))?;
    if !a.json.json {
        eprintln!("wrote {} ({} bytes)", file.display(), html.len());
    }
    Ok(())
}

fn fig(f: &ErrorFigures) -> String {
    let psnr = f.psnr.map_or("inf".to_string(), |p| format!("{p:.1}"));
    format!(
        "{:>9.4} {:>9.4} {:>7} {:>+9.4}",
        f.rmse, f.max, psnr, f.bias
    )
}

fn print_report(r: &Report, spec: &Spec, kernels: &[KernelReport]) {
    println!("spec          {}", spec.name);
    println!(
        "program       {} instructions, {} cycles, {:.1} us at 10 MHz",
        r.instructions, r.cycles, r.time_us
    );
    if !r.verified {
        println!("proof         FAILED: the program does not compute the kernels");
        for l in &r.mismatch {
            println!("{l}");
        }
        return;
    }
    println!("proof         exact (symbolic execution of every bus instruction)");
    for k in kernels {
        println!(
            "kernel {}      d = {}, approximation error {} (sum of |weight differences|)",
            k.out, k.approx.depth, k.approx.error
        );
    }
    println!(
        "measured on   {} image(s), noise `{}`, {} run(s); a border of {} px is excluded \
         (values there depend on the array edge)",
        r.images, r.noise, r.runs, r.border
    );
    println!();
    println!(
        "{:<4} {:<10} {:>9} {:>9} {:>7} {:>9}",
        "out", "error", "RMSE", "max", "PSNR", "bias"
    );
    for k in &r.kernels {
        println!("{:<4} {:<10} {}", k.out, "approx", fig(&k.approx));
        println!("{:<4} {:<10} {}", "", "analogue", fig(&k.analogue));
        println!("{:<4} {:<10} {}", "", "total", fig(&k.total.figures));
        if let (Some(r), Some(b)) = (k.total.rmse_range, k.total.bias_range) {
            println!(
                "{:<4} {:<10} {:>9} RMSE {:.4} .. {:.4}, bias {:+.4} .. {:+.4}",
                "", "", "range", r[0], r[1], b[0], b[1]
            );
        }
        if r.runs > 1 {
            println!(
                "{:<4} {:<10} total RMSE over runs {:.4} +- {:.4}",
                "", "", k.total_runs.rmse.mean, k.total_runs.rmse.std
            );
        }
    }
    println!("\nwhere the total error comes from (run 1; RMSE and bias of each stage)");
    for k in &r.kernels {
        let s = &k.sources;
        println!("{:<4} {:<10} {}", k.out, "approx", fig(&s.approximation));
        println!("{:<4} {:<10} {}", "", "analogue", fig(&s.analogue));
        if let Some(p) = &k.predicted {
            println!(
                "{:<4} {:<10} {:>9.4} {:>9} {:>7} {:>+9.4}   (analytic, from the profile)",
                "", "predicted", p.rmse, "", "", p.bias
            );
        }
        println!("{:<4} {:<10} {}", "", "saturation", fig(&s.saturation));
        println!("{:<4} {:<10} {}", "", "readout", fig(&s.readout_clipping));
        if s.clipped_share > 0.0 {
            println!(
                "{:<4} note: the exact result leaves the 8-bit readout range on {:.1} % of the \
                 PEs; that clipping ({:.2} RMSE) is lost on any device: scale the kernel down",
                "",
                100.0 * s.clipped_share,
                s.readout_clipping.rmse
            );
        }
    }
    if let Some(u) = &r.uncertainty {
        println!(
            "\nranges over {} of {} profiles of the uncertainty ensemble that reproduce both \
             device experiments (docs/noise.md, \"Error bars\")",
            u.accepted, u.members
        );
    }
    if let Some(k) = r.kernels.first() {
        println!(
            "\nsaturated     {} PE-register pairs clipped while the program ran (all images, \
             run 1; {:.2} % of PE-images)",
            r.saturated,
            100.0 * r.saturated_share
        );
        if let Some(p) = k.peak {
            println!(
                "peak          |value| up to {p} for inputs {}..{} (static range)",
                spec.input_range.lo, spec.input_range.hi
            );
        }
    }
    match r.budget_met {
        Some(true) => println!("budget        met: the shortest program within the RMSE budget"),
        Some(false) => println!("budget        NOT met at any depth: the closest program is shown"),
        None => {}
    }
}
