//! `scamp bench`: simulator throughput next to a streaming roofline measured in the
//! same run.

use super::Outcome;
use crate::sim::throughput::{self, Figure, Roofline};
use serde::Serialize;

/// Arguments of `scamp bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Timed samples per figure (the median is reported).
    #[arg(long, default_value_t = 15)]
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
}

/// Runs `scamp bench`.
pub fn run(a: &BenchArgs) -> Outcome {
    let samples = a.samples.max(1);
    let roof = Roofline::measure(samples);
    let figures = throughput::all_figures(&roof, samples);
    let report = Report {
        threads: rayon::current_num_threads(),
        roofline_copy_us: roof.copy_us,
        roofline_add_us: roof.add_us,
        roofline_pass_us: roof.pass_us(),
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
        "{:<18} {:<7} {:>10} {:>7} {:>14} {:>7} {:>10} {:>10}",
        "figure", "profile", "us", "cycles", "bus instr/s", "passes", "roof us", "x roofline"
    );
    for f in &report.figures {
        println!(
            "{:<18} {:<7} {:>10.2} {:>7} {:>14.3e} {:>7} {:>10.2} {:>10.2}",
            f.name,
            f.profile,
            f.us,
            f.cycles,
            f.bus_per_second,
            f.plane_passes,
            f.roofline_us,
            f.roofline_ratio
        );
    }
    Ok(0)
}
