//! The text reports the commands print, built from the library's report types: what
//! `scamp check` and `scamp run` show a reader (the JSON is the same types serialised).

use super::{CheckReport, RunSummary};
use crate::cain::score::budget::BudgetChoice;
use crate::cain::{KernelReport, Spec};
use crate::verify::compare::{Comparison, Difference};
use crate::verify::metrics::ErrorFigures;
use std::fmt::{Display, Write};

/// Text built line by line.
#[derive(Default)]
struct Lines(String);

impl Lines {
    fn line(&mut self, s: impl Display) {
        // Writing to a String cannot fail.
        let _ = writeln!(self.0, "{s}");
    }
}

/// The table of a depth search within a total-RMSE budget (`check --max-total-rmse`).
pub fn budget(b: &BudgetChoice, limit: f64, max_depth: u32) -> String {
    let mut o = Lines::default();
    for (d, e) in &b.skipped {
        o.line(format_args!("depth {d}: {e}"));
    }
    o.line(format_args!(
        "depth  instructions  cycles  total RMSE  meets {limit}"
    ));
    for r in &b.rows {
        o.line(format_args!(
            "{:>5}  {:>12}  {:>6}  {:>10.4}  {}",
            r.depth,
            r.instructions,
            r.cycles,
            r.total_rmse,
            if r.meets { "yes" } else { "no" }
        ));
    }
    if !b.met {
        let worst = b
            .rows
            .iter()
            .map(|r| r.total_rmse)
            .fold(f64::INFINITY, f64::min);
        o.line(format_args!(
            "no depth up to {max_depth} meets --max-total-rmse {limit}; reporting the closest \
             (total RMSE {worst:.4}, {} instructions)",
            b.program.instructions()
        ));
    }
    o.0
}

/// One row of figures: RMSE, max, PSNR and bias.
fn fig(f: &ErrorFigures) -> String {
    let psnr = f.psnr.map_or("inf".to_string(), |p| format!("{p:.1}"));
    format!(
        "{:>9.4} {:>9.4} {:>7} {:>+9.4}",
        f.rmse, f.max, psnr, f.bias
    )
}

/// What `scamp check` prints: the program, the proof, the error table and where the
/// total error comes from.
pub fn check(r: &CheckReport, spec: &Spec, kernels: &[KernelReport]) -> String {
    let mut o = Lines::default();
    o.line(format_args!("spec          {}", spec.name));
    o.line(format_args!(
        "program       {} instructions, {} cycles, {:.1} us at 10 MHz",
        r.instructions, r.cycles, r.time_us
    ));
    o.line(format_args!(
        "energy        {:.2} uJ per frame, captures included (a model from published power figures, not a measurement)",
        r.energy_uj_per_frame
    ));
    for (i, g) in r.groups.iter().enumerate() {
        let kernels: Vec<String> = g.kernels.iter().map(ToString::to_string).collect();
        o.line(format_args!(
            "group {:<7} kernels {} into {} ({} instructions, from every input)",
            i + 1,
            kernels.join(", "),
            g.outs.join(", "),
            g.instructions
        ));
    }
    if !r.verified {
        o.line(format_args!(
            "proof         FAILED: the program does not compute the kernels"
        ));
        for l in &r.mismatch {
            o.line(format_args!("{l}"));
        }
        return o.0;
    }
    o.line(format_args!(
        "proof         exact (symbolic execution of every bus instruction)"
    ));
    for k in kernels {
        o.line(format_args!(
            "kernel {}      d = {}, approximation error {} (sum of |weight differences|)",
            k.out, k.approx.depth, k.approx.error
        ));
    }
    o.line(format_args!(
        "measured on   {} image(s), noise `{}`, {} run(s); a border of {} px is excluded \
         (values there depend on the array edge)",
        r.images, r.noise, r.runs, r.border
    ));
    o.line("");
    o.line(format_args!(
        "{:<4} {:<10} {:>9} {:>9} {:>7} {:>9}",
        "out", "error", "RMSE", "max", "PSNR", "bias"
    ));
    figures(&mut o, r);
    sources(&mut o, r);
    if let Some(u) = &r.uncertainty {
        o.line(format_args!(
            "\nranges over {} of {} profiles of the uncertainty ensemble that reproduce both \
             device experiments (docs/noise.md, \"Error bars\")",
            u.accepted, u.members
        ));
    }
    if let Some(k) = r.kernels.first() {
        o.line(format_args!(
            "\nsaturated     {} PE-register pairs past the saturation knee while the program ran (all images, \
             run 1; {:.2} % of PE-images)",
            r.saturated,
            100.0 * r.saturated_share
        ));
        if let Some(p) = k.peak {
            o.line(format_args!(
                "peak          |value| up to {p} for inputs {}..{} (static range)",
                spec.input_range.lo, spec.input_range.hi
            ));
        }
    }
    match r.budget_met {
        Some(true) => o.line(format_args!(
            "budget        met: the shortest program within the RMSE budget"
        )),
        Some(false) => o.line(format_args!(
            "budget        NOT met at any depth: the closest program is shown"
        )),
        None => {}
    }
    o.0
}

/// Each kernel's approximation, analogue and total figures, with their ranges and
/// spread over runs.
fn figures(o: &mut Lines, r: &CheckReport) {
    for k in &r.kernels {
        o.line(format_args!(
            "{:<4} {:<10} {}",
            k.out,
            "approx",
            fig(&k.approx)
        ));
        o.line(format_args!(
            "{:<4} {:<10} {}",
            "",
            "analogue",
            fig(&k.analogue)
        ));
        o.line(format_args!(
            "{:<4} {:<10} {}",
            "",
            "total",
            fig(&k.total.figures)
        ));
        if let (Some(r), Some(b)) = (k.total.rmse_range, k.total.bias_range) {
            o.line(format_args!(
                "{:<4} {:<10} {:>9} RMSE {:.4} .. {:.4}, bias {:+.4} .. {:+.4}",
                "", "", "range", r[0], r[1], b[0], b[1]
            ));
        }
        if let Some(s) = &k.total.saturation_range {
            o.line(format_args!(
                "{:<4} {:<10} {:>9} RMSE {:.4} .. {:.4}, bias {:+.4} .. {:+.4} over the saturation range",
                "", "", "", s.rmse[0], s.rmse[1], s.bias[0], s.bias[1]
            ));
        }
        if r.runs > 1 {
            o.line(format_args!(
                "{:<4} {:<10} total RMSE over runs {:.4} +- {:.4}",
                "", "", k.total_runs.rmse.mean, k.total_runs.rmse.std
            ));
        }
    }
    if r.kernels
        .iter()
        .any(|k| k.total.figures.rmse < k.approx.rmse)
    {
        o.line(format_args!(
            "(a total below its approximation error is no mistake: errors are signed, and \
             the chip's error can cancel part of the approximation's)"
        ));
    }
}

/// Where each kernel's total error comes from: approximation, noise, saturation and
/// readout, with the analytic prediction next to the measured noise.
fn sources(o: &mut Lines, r: &CheckReport) {
    o.line(format_args!(
        "\nwhere the total error comes from (run 1; RMSE and bias of each stage; `noise` is \
         the run without clipping against the approximated kernel, `analogue` above \
         includes clipping)"
    ));
    for k in &r.kernels {
        let s = &k.sources;
        o.line(format_args!(
            "{:<4} {:<10} {}",
            k.out,
            "approx",
            fig(&s.approximation)
        ));
        o.line(format_args!(
            "{:<4} {:<10} {}",
            "",
            "noise",
            fig(&s.analogue)
        ));
        if let Some(p) = &k.predicted {
            o.line(format_args!(
                "{:<4} {:<10} {:>9.4} {:>9} {:>7} {:>+9.4}   (analytic, from the profile)",
                "", "predicted", p.rmse, "", "", p.bias
            ));
        }
        o.line(format_args!(
            "{:<4} {:<10} {}",
            "",
            "saturation",
            fig(&s.saturation)
        ));
        o.line(format_args!(
            "{:<4} {:<10} {}",
            "",
            "readout",
            fig(&s.readout_clipping)
        ));
        if s.clipped_share > 0.0 {
            o.line(format_args!(
                "{:<4} note: the exact result leaves the 8-bit readout range on {:.1} % of the \
                 PEs; that clipping ({:.2} RMSE) is lost on any device: scale the kernel down \
                 if the values matter. A network that keeps only the sign of this output \
                 (`decision: sign`, as AnalogNet2) loses {} decisions to it: clipping changed \
                 the sign of {} PEs",
                "",
                100.0 * s.clipped_share,
                s.readout_clipping.rmse,
                if s.clipped_sign_changes == 0 {
                    "no"
                } else {
                    "some"
                },
                s.clipped_sign_changes
            ));
        }
    }
}

/// What the text of `scamp run` needs besides the summary.
pub struct RunContext {
    /// The program as named (its file).
    pub program: String,
    /// Macros of one run of the program.
    pub per_run: usize,
    /// Repetitions per run.
    pub repeat: u32,
    /// Array clock in MHz.
    pub clock_mhz: f64,
    /// The folder results were written to, if any.
    pub out: Option<String>,
}

/// What `scamp run` prints: the first run's figures per register, the spread over runs
/// and the comparison against ideal runs when there are.
pub fn run(a: &RunContext, out: &RunSummary) -> String {
    let mut o = Lines::default();
    o.line(format_args!("program       {}", a.program));
    o.line(format_args!(
        "instructions  {} ({} per run x {})",
        out.instructions, a.per_run, a.repeat
    ));
    o.line(format_args!("cycles        {}", out.cycles));
    o.line(format_args!(
        "time          {:.1} us at {} MHz",
        out.time_us, a.clock_mhz
    ));
    o.line(format_args!(
        "noise         {} (chip seed {}, run seed {}){}",
        out.noise.profile,
        out.noise.chip_seed,
        out.noise.seed,
        if out.noise.readout {
            ", values as read out (readout noise, 8-bit ADC)"
        } else {
            ""
        }
    ));
    let per_reg: Vec<String> = out
        .saturation
        .iter()
        .map(|(r, c)| format!("{r}: {} PEs / {} writes", c.pes, c.writes))
        .collect();
    if per_reg.is_empty() {
        o.line(format_args!("saturated     0"));
    } else {
        o.line(format_args!(
            "saturated     {} ({})",
            out.saturated,
            per_reg.join(", ")
        ));
    }
    o.line("");
    o.line(format_args!(
        "{:<6} {:>10} {:>10} {:>10} {:>10}",
        "reg", "mean", "std", "min", "max"
    ));
    for (name, s) in &out.registers {
        o.line(format_args!(
            "{name:<6} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
            s.mean, s.std, s.min, s.max
        ));
    }
    if let (Some(runs), Some(n)) = (&out.runs, out.run_count) {
        o.line(format_args!(
            "\nover {n} runs (run seeds {}..{}): mean and spread of each figure",
            out.noise.seed,
            out.noise.seed + u64::from(n) - 1
        ));
        o.line(format_args!(
            "{:<6} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "reg", "mean", "+-", "std", "+-", "PE spread"
        ));
        for (name, r) in runs {
            o.line(format_args!(
                "{name:<6} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
                r.mean_of_mean, r.std_of_mean, r.mean_of_std, r.std_of_std, r.pe_std
            ));
        }
        if let Some(s) = &out.saturated_per_run {
            let max = s.iter().max().copied().unwrap_or(0);
            let mean = s.iter().sum::<u64>() as f64 / s.len().max(1) as f64;
            o.line(format_args!(
                "saturated PEs per run: mean {mean:.1}, max {max}"
            ));
        }
    }
    if let Some(c) = &out.compare {
        comparison(&mut o, out, c);
    }
    if let Some(dir) = &a.out {
        o.line(format_args!(
            "\nwrote {} register(s) to {}",
            out.registers.len(),
            dir
        ));
    }
    o.0
}

fn comparison(o: &mut Lines, out: &RunSummary, c: &Comparison) {
    o.line(format_args!(
        "\ncompare       noisy (`{}`) against ideal runs: {} image(s), {} run(s) (run seeds {}..), \
         border {} PE(s), tolerance {}",
        out.noise.profile, c.images, c.runs, out.noise.seed, c.border, c.tolerance
    ));
    o.line(format_args!(
        "              mean over runs, +- the spread over runs"
    ));
    let pm = |s: &crate::verify::metrics::Spread| format!("{:.4} +- {:.4}", s.mean, s.std);
    let analogue: Vec<_> = c
        .registers
        .iter()
        .filter_map(|(w, d)| match d {
            Difference::Analogue(x) => Some((w, x)),
            Difference::Digital(_) => None,
        })
        .collect();
    if !analogue.is_empty() {
        o.line(format_args!(
            "\n{:<6} {:>20} {:>20} {:>20} {:>20}",
            "reg", "RMSE", "bias", "max", "beyond"
        ));
        for (w, x) in analogue {
            let f = &x.runs.figures;
            o.line(format_args!(
                "{:<6} {:>20} {:>20} {:>20} {:>20}",
                w.to_string(),
                pm(&f.rmse),
                pm(&f.bias),
                pm(&f.max),
                pm(&x.runs.beyond)
            ));
        }
    }
    let digital: Vec<_> = c
        .registers
        .iter()
        .filter_map(|(w, d)| match d {
            Difference::Digital(x) => Some((w, x)),
            Difference::Analogue(_) => None,
        })
        .collect();
    if !digital.is_empty() {
        o.line(format_args!("\n{:<6} {:>20}", "reg", "flipped"));
        for (w, x) in digital {
            o.line(format_args!(
                "{:<6} {:>20}",
                w.to_string(),
                pm(&x.runs.flipped)
            ));
        }
    }
    if let Some(u) = &c.uncertainty {
        comparison_ranges(o, u);
    }
    let per_reg: Vec<String> = c
        .saturated
        .registers
        .iter()
        .map(|(r, s)| format!("{r}: {:.1}", s.mean))
        .collect();
    o.line(format_args!(
        "\nsaturated in the noisy runs: {:.1} +- {:.1} PE-register pairs per run over all images{}",
        c.saturated.pes.mean,
        c.saturated.pes.std,
        if per_reg.is_empty() {
            String::new()
        } else {
            format!(" ({})", per_reg.join(", "))
        }
    ));
}

/// Each register's range over the uncertainty ensemble, with its saturation share.
fn comparison_ranges(o: &mut Lines, u: &crate::verify::compare_ranges::CompareRanges) {
    o.line(format_args!(
        "\nranges over {} of {} profiles of the uncertainty ensemble that reproduce both \
         device experiments (docs/noise.md, \"Error bars\")",
        u.accepted, u.members
    ));
    let span =
        |b: Option<[f64; 2]>, what: &str| b.map(|[lo, hi]| format!("{what} {lo:.4} .. {hi:.4}"));
    for (w, r) in &u.registers {
        let line = |f: &crate::verify::compare_ranges::FigureBounds| {
            [
                span(f.rmse, "RMSE"),
                span(f.bias, "bias"),
                span(f.flipped, "flipped"),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ")
        };
        o.line(format_args!("{:<6} {}", w.to_string(), line(&r.all)));
        o.line(format_args!(
            "{:<6} {} over the saturation range",
            "",
            line(&r.saturation_range)
        ));
    }
}
