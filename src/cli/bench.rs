//! `scamp bench`: simulator throughput next to a streaming roofline measured in the
//! same run.

use super::Outcome;
use crate::calibrate::throughput::{self, Figure, NumpyAdd, Roofline};
use serde::Serialize;

/// Arguments of `scamp bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Timed samples per figure (the median is reported).
    #[arg(long, default_value_t = 15, value_parser = super::args::samples)]
    samples: usize,
    #[command(flatten)]
    json: super::args::JsonArg,
}

#[derive(Serialize)]
struct Report {
    threads: usize,
    roofline_copy_us: f64,
    roofline_add_us: f64,
    /// Roofline microseconds per register-plane pass (a third of the add).
    roofline_pass_us: f64,
    figures: Vec<Figure>,
    /// numpy's plane add in the same run (`null` when numpy is not available).
    numpy: Option<NumpyAdd>,
    /// Why numpy was skipped.
    numpy_skipped: Option<String>,
    /// The ideal `add` macro over numpy's `a + b`: alone (`macro add`), and per macro in
    /// a long run (`long add x1000`).
    ideal_add_over_numpy: Option<f64>,
    long_ideal_add_over_numpy: Option<f64>,
}

/// Runs `scamp bench`.
pub fn run(a: &BenchArgs) -> Outcome {
    let samples = a.samples.max(1);
    let roof = Roofline::measure(samples);
    let figures = throughput::all_figures(&roof, samples);
    let numpy = throughput::numpy_add(samples);
    let ideal_us = |name: &str| {
        figures
            .iter()
            .find(|f| f.name == name && f.profile == "ideal")
            .map(|f| f.us)
    };
    let over_numpy = |us: Option<f64>| match (&numpy, us) {
        (Ok(n), Some(us)) => Some(us / n.add_us),
        _ => None,
    };
    let report = Report {
        threads: rayon::current_num_threads(),
        roofline_copy_us: roof.copy_us,
        roofline_add_us: roof.add_us,
        roofline_pass_us: roof.pass_us(),
        ideal_add_over_numpy: over_numpy(ideal_us("macro add")),
        long_ideal_add_over_numpy: over_numpy(ideal_us("long add x1000")),
        numpy_skipped: numpy.as_ref().err().cloned(),
        numpy: numpy.ok(),
        figures,
    };
    if a.json.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(0);
    }
    println!(
        "threads {}; roofline: plane copy {:.2} us, plane add {:.2} us ({:.2} us per plane pass)",
        report.threads, roof.copy_us, roof.add_us, report.roofline_pass_us
    );
    println!(
        "{:<18} {:<7} {:>10} {:>7} {:>14} {:>7} {:>10} {:>10} {:>8}",
        "figure",
        "profile",
        "us",
        "cycles",
        "bus instr/s",
        "passes",
        "roof us",
        "x roofline",
        "x ideal"
    );
    for f in &report.figures {
        let ratio = f.ideal_ratio.map_or(String::new(), |r| format!("{r:.2}"));
        println!(
            "{:<18} {:<7} {:>10.2} {:>7} {:>14.3e} {:>7} {:>10.2} {:>10.2} {:>8}",
            f.name,
            f.profile,
            f.us,
            f.cycles,
            f.bus_per_second,
            f.plane_passes,
            f.roofline_us,
            f.roofline_ratio,
            ratio
        );
    }
    match (&report.numpy, &report.numpy_skipped) {
        (Some(n), _) => {
            println!(
                "numpy {}: plane add a + b {:.2} us, into an existing array {:.2} us (one thread)",
                n.version, n.add_us, n.add_into_us
            );
            if let (Some(one), Some(long)) = (
                report.ideal_add_over_numpy,
                report.long_ideal_add_over_numpy,
            ) {
                println!(
                    "ideal add / numpy a + b: {one:.2} for one macro, {long:.2} per macro in a long run"
                );
            }
        }
        (None, reason) => println!(
            "numpy not available ({}), skipped",
            reason.as_deref().unwrap_or("unknown")
        ),
    }
    Ok(0)
}
