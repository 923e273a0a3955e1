//! `scamp run PROGRAM`: execute a program on the array and print its figures.

use super::common::{load_program, NoiseArgs, SetupArgs};
use super::{args, CliError, Outcome};
use crate::isa::{Device, Reg};
use crate::sim::noise::stats::{RegisterRuns, RunsAccumulator};
use crate::sim::{self, readout, readout::PlaneStats, Array};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `scamp run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Program file (vendor macro / bus syntax).
    pub program: PathBuf,
    #[command(flatten)]
    setup: SetupArgs,
    #[command(flatten)]
    noise: NoiseArgs,
    /// Run the program K times in a row on the same state.
    #[arg(long, default_value_t = 1, value_name = "K")]
    repeat: u32,
    /// Repeat the whole run N times from a fresh array with run seeds seed, seed+1, ...
    /// (same chip) and report the mean and spread of each register over the runs.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = args::runs)]
    runs: u32,
    /// Report and save the analogue values themselves, bypassing the profile's readout
    /// path (readout noise and 8-bit ADC).
    #[arg(long)]
    raw: bool,
    /// Write written registers as DIR/REG.npy (float32) and DIR/REG.png (value+128).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Registers to report and save instead of those the program writes: `A,B,NEWS`.
    #[arg(long, value_delimiter = ',', value_name = "REG,...")]
    save: Vec<String>,
    /// Array clock in MHz, at most 1000.
    #[arg(long, default_value_t = 10.0, value_name = "MHZ", value_parser = args::clock)]
    clock: f64,
    #[command(flatten)]
    json: args::JsonArg,
}

/// Clipping of one register during the (first) run.
#[derive(Serialize)]
struct Clipped {
    /// PEs clipped at least once.
    pes: u64,
    /// Clipped writes.
    writes: u64,
}

#[derive(Serialize)]
struct NoiseInfo {
    profile: String,
    seed: u64,
    chip_seed: u64,
    readout: bool,
}

#[derive(Serialize)]
struct Report {
    instructions: u64,
    cycles: u64,
    time_us: f64,
    saturated: u64,
    registers: BTreeMap<String, PlaneStats>,
    warnings: Vec<String>,
    noise: NoiseInfo,
    saturated_writes: u64,
    saturation: BTreeMap<String, Clipped>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    saturated_per_run: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<BTreeMap<String, RegisterRuns>>,
}

/// The values of `reg` as reported: through the readout path unless `raw`.
fn values(array: &Array, reg: Reg, raw: bool) -> Option<Vec<f32>> {
    if raw {
        array.plane(reg).map(<[f32]>::to_vec)
    } else {
        array.read_out(reg)
    }
}

/// Runs `scamp run`.
pub fn run(a: &RunArgs) -> Outcome {
    if let Some(dir) = &a.out {
        super::files::prepare_dir(dir)?;
    }
    let device = Device::default();
    let program = load_program(&a.program, device)?;
    let profile = a.noise.profile()?;
    let clock_hz = a.clock * 1e6;
    let mut acc = RunsAccumulator::new();
    let mut first = None;
    let mut saturated_per_run = Vec::new();
    for r in 0..a.runs {
        let mut array = a.setup.build(device)?;
        array.set_layer(Box::new(a.noise.model(&profile, u64::from(r), clock_hz)));
        let report = sim::run(&mut array, &program, a.repeat, clock_hz)
            .map_err(|e| super::positioned(&a.program, e))?;
        let regs: Vec<Reg> = if a.save.is_empty() {
            program.written_registers()
        } else {
            a.save
                .iter()
                .map(|s| {
                    Reg::parse(s)
                        .filter(|r| array.plane(*r).is_some())
                        .ok_or_else(|| CliError::msg(format!("--save: unknown register `{s}`")))
                })
                .collect::<Result<_, _>>()?
        };
        let mut planes = Vec::new();
        for reg in &regs {
            if let Some(v) = values(&array, *reg, a.raw) {
                acc.add(&reg.to_string(), &v);
                planes.push((*reg, v));
            }
        }
        saturated_per_run.push(report.saturated);
        if first.is_none() {
            first = Some((report, planes));
        }
    }
    let Some((report, planes)) = first else {
        return Err(CliError::msg("--runs must be at least 1"));
    };
    let registers: BTreeMap<String, PlaneStats> = planes
        .iter()
        .map(|(r, v)| (r.to_string(), PlaneStats::of(v)))
        .collect();
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::msg(format!("{}: cannot create: {e}", dir.display())))?;
        for (r, v) in &planes {
            readout::save_npy(&dir.join(format!("{r}.npy")), v)?;
            readout::save_png(&dir.join(format!("{r}.png")), v)?;
        }
    }
    let warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|w| {
            if w.pos.line == 0 {
                format!("{}: {}", a.program.display(), w.msg)
            } else {
                format!("{}:{}: {}", a.program.display(), w.pos, w.msg)
            }
        })
        .collect();
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let many = a.runs > 1;
    let out = Report {
        instructions: report.instructions,
        cycles: report.cycles,
        time_us: report.time_us,
        saturated: report.saturated,
        registers,
        warnings,
        noise: NoiseInfo {
            profile: if profile.name.is_empty() {
                a.noise.noise.clone()
            } else {
                profile.name.clone()
            },
            seed: a.noise.seed,
            chip_seed: a.noise.chip_seed,
            readout: profile.readout.enabled && !a.raw,
        },
        saturated_writes: report.saturated_writes,
        saturation: report
            .saturation
            .iter()
            .map(|(r, pes, writes)| {
                (
                    r.to_string(),
                    Clipped {
                        pes: *pes,
                        writes: *writes,
                    },
                )
            })
            .collect(),
        run_count: many.then_some(a.runs),
        saturated_per_run: many.then_some(saturated_per_run),
        runs: many.then(|| acc.finish()),
    };
    if a.json.json {
        println!("{}", serde_json::to_string(&out)?);
        return Ok(0);
    }
    print_text(a, &program, &out);
    Ok(0)
}

fn print_text(a: &RunArgs, program: &crate::isa::Program, out: &Report) {
    println!("program       {}", a.program.display());
    println!(
        "instructions  {} ({} per run x {})",
        out.instructions,
        program.instructions(),
        a.repeat
    );
    println!("cycles        {}", out.cycles);
    println!("time          {:.1} us at {} MHz", out.time_us, a.clock);
    println!(
        "noise         {} (chip seed {}, run seed {}){}",
        out.noise.profile,
        out.noise.chip_seed,
        out.noise.seed,
        if out.noise.readout {
            ", values as read out (readout noise, 8-bit ADC)"
        } else {
            ""
        }
    );
    let per_reg: Vec<String> = out
        .saturation
        .iter()
        .map(|(r, c)| format!("{r}: {} PEs / {} writes", c.pes, c.writes))
        .collect();
    if per_reg.is_empty() {
        println!("saturated     0");
    } else {
        println!("saturated     {} ({})", out.saturated, per_reg.join(", "));
    }
    println!();
    println!(
        "{:<6} {:>10} {:>10} {:>10} {:>10}",
        "reg", "mean", "std", "min", "max"
    );
    for (name, s) in &out.registers {
        println!(
            "{name:<6} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
            s.mean, s.std, s.min, s.max
        );
    }
    if let (Some(runs), Some(n)) = (&out.runs, out.run_count) {
        println!(
            "\nover {n} runs (run seeds {}..{}): mean and spread of each figure",
            a.noise.seed,
            a.noise.seed + u64::from(n) - 1
        );
        println!(
            "{:<6} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "reg", "mean", "+-", "std", "+-", "PE spread"
        );
        for (name, r) in runs {
            println!(
                "{name:<6} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
                r.mean_of_mean, r.std_of_mean, r.mean_of_std, r.std_of_std, r.pe_std
            );
        }
        if let Some(s) = &out.saturated_per_run {
            let max = s.iter().max().copied().unwrap_or(0);
            let mean = s.iter().sum::<u64>() as f64 / s.len().max(1) as f64;
            println!("saturated PEs per run: mean {mean:.1}, max {max}");
        }
    }
    if let Some(dir) = &a.out {
        println!(
            "\nwrote {} register(s) to {}",
            out.registers.len(),
            dir.display()
        );
    }
}
