//! `scamp bench`: simulator throughput next to a streaming roofline measured in the
//! same run.

use super::Outcome;
use crate::sim::throughput::{self, Figure};
use serde::Serialize;

/// Arguments of `scamp bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Timed samples per figure (the median is reported).
    #[arg(long, default_value_t = 15)]
    samples: usize,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    threads: usize,
    roofline_copy_us: f64,
    roofline_add_us: f64,
    figures: Vec<Figure>,
}

/// Runs `scamp bench`.
pub fn run(a: &BenchArgs) -> Outcome {
    let samples = a.samples.max(1);
    let roof_add = throughput::roofline_add_us(samples);
    let roof_copy = throughput::roofline_copy_us(samples);
    let mut figures = Vec::new();
    for (name, text) in throughput::MACROS {
        let p = throughput::macro_program(text);
        figures.push(throughput::time_program(
            &format!("{name} (ideal)"),
            &p,
            &|_| {},
            roof_add,
            samples,
        ));
    }
    let report = Report {
        threads: rayon::current_num_threads(),
        roofline_copy_us: roof_copy,
        roofline_add_us: roof_add,
        figures,
    };
    if a.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(0);
    }
    println!(
        "threads {}; roofline: plane copy {:.2} us, plane add {:.2} us",
        report.threads, roof_copy, roof_add
    );
    println!(
        "{:<24} {:>10} {:>7} {:>14} {:>10}",
        "figure", "us", "cycles", "bus instr/s", "x roofline"
    );
    for f in &report.figures {
        println!(
            "{:<24} {:>10.2} {:>7} {:>14.3e} {:>10.2}",
            f.name, f.us, f.cycles, f.bus_per_second, f.roofline_ratio
        );
    }
    Ok(0)
}
