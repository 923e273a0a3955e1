//! `scamp run PROGRAM`: execute a program on the array and print its figures.

use super::common::{load_program, NoiseArgs, SetupArgs};
use super::{CliError, Outcome};
use crate::isa::{Device, Reg};
use crate::sim::{self, readout, readout::PlaneStats};
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
    /// Write written registers as DIR/REG.npy (float32) and DIR/REG.png (value+128).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Registers to report and save instead of those the program writes: `A,B,NEWS`.
    #[arg(long, value_delimiter = ',', value_name = "REG,...")]
    save: Vec<String>,
    /// Array clock in MHz.
    #[arg(long, default_value_t = 10.0, value_name = "MHZ")]
    clock: f64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    instructions: u64,
    cycles: u64,
    time_us: f64,
    saturated: u64,
    registers: BTreeMap<String, PlaneStats>,
    warnings: Vec<String>,
}

/// Runs `scamp run`.
pub fn run(a: &RunArgs) -> Outcome {
    if !(a.clock.is_finite() && a.clock > 0.0) {
        return Err(CliError(format!("--clock {}: must be a positive number", a.clock)));
    }
    let device = Device::default();
    let program = load_program(&a.program, device)?;
    let mut array = a.setup.build(device)?;
    a.noise.install(&mut array)?;
    let report = sim::run(&mut array, &program, a.repeat, a.clock * 1e6)
        .map_err(|e| super::positioned(&a.program, e))?;
    let regs: Vec<Reg> = if a.save.is_empty() {
        program.written_registers()
    } else {
        a.save
            .iter()
            .map(|s| {
                Reg::parse(s)
                    .filter(|r| array.plane(*r).is_some())
                    .ok_or_else(|| CliError(format!("--save: unknown register `{s}`")))
            })
            .collect::<Result<_, _>>()?
    };
    let mut registers = BTreeMap::new();
    for r in &regs {
        if let Some(p) = array.plane(*r) {
            registers.insert(r.to_string(), PlaneStats::of(p));
        }
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError(format!("{}: cannot create: {e}", dir.display())))?;
        for r in &regs {
            if let Some(p) = array.plane(*r) {
                readout::save_npy(&dir.join(format!("{r}.npy")), p)?;
                readout::save_png(&dir.join(format!("{r}.png")), p)?;
            }
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
    let out = Report {
        instructions: report.instructions,
        cycles: report.cycles,
        time_us: report.time_us,
        saturated: report.saturated,
        registers,
        warnings,
    };
    if a.json {
        println!("{}", serde_json::to_string(&out)?);
        return Ok(0);
    }
    println!("program       {}", a.program.display());
    println!(
        "instructions  {} ({} per run x {})",
        out.instructions,
        program.instructions(),
        a.repeat
    );
    println!("cycles        {}", out.cycles);
    println!("time          {:.1} us at {} MHz", out.time_us, a.clock);
    println!("saturated     {}", out.saturated);
    println!();
    println!("{:<6} {:>10} {:>10} {:>10} {:>10}", "reg", "mean", "std", "min", "max");
    for (name, s) in &out.registers {
        println!(
            "{name:<6} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
            s.mean, s.std, s.min, s.max
        );
    }
    if let Some(dir) = &a.out {
        println!("\nwrote {} register(s) to {}", regs.len(), dir.display());
    }
    Ok(0)
}
