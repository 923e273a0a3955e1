//! `scamp trace PROGRAM --pe ROW,COL`: every macro, its bus instructions, and one PE's
//! registers after each, as an aligned table.

use super::common::{load_program, SetupArgs};
use super::{args, Outcome};
use crate::isa::{DReg, Device, Dir, Pos, Reg};
use crate::sim::{self, Array, N};
use std::path::PathBuf;

/// Arguments of `scamp trace`.
#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    /// Program file.
    pub program: PathBuf,
    /// The PE to watch, as ROW,COL (row 0 is north, column 0 west).
    #[arg(long, value_name = "ROW,COL", value_parser = args::pe)]
    pe: (usize, usize),
    #[command(flatten)]
    setup: SetupArgs,
}

fn fmt_value(v: f32) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

fn row_values(array: &Array, pe: (usize, usize), digital: &[DReg]) -> Vec<String> {
    let mut out: Vec<String> = (0..array.general())
        .map(|i| fmt_value(array.read(Reg::Gen(i as u8), pe.0, pe.1)))
        .collect();
    out.push(fmt_value(array.read(Reg::News, pe.0, pe.1)));
    for d in Dir::ALL {
        out.push(fmt_value(array.read(Reg::X(d), pe.0, pe.1)));
    }
    for d in digital.iter().chain(&[DReg::Flag]) {
        out.push(array.bits(*d)[pe.0 * N + pe.1].to_string());
    }
    out
}

/// Runs `scamp trace`.
pub fn run(a: &TraceArgs) -> Outcome {
    let pe = a.pe;
    let device = Device::default();
    let program = load_program(&a.program, device)?;
    let mut array = a.setup.build(device)?;
    let mut header: Vec<String> = vec!["line".into(), "macro".into(), "bus instruction".into()];
    header.extend((0..device.general).map(Reg::general_name));
    header.extend(["NEWS", "XN", "XE", "XS", "XW"].map(String::from));
    // The digital registers the program reads or writes, then FLAG.
    let digital: Vec<DReg> = program
        .digital_registers()
        .into_iter()
        .filter(|d| *d != DReg::Flag)
        .collect();
    header.extend(digital.iter().map(ToString::to_string));
    header.push("FLAG".into());
    let mut rows: Vec<Vec<String>> = vec![header];
    let mut initial = vec![String::new(), "(start)".into(), String::new()];
    initial.extend(row_values(&array, pe, &digital));
    rows.push(initial);
    let report = sim::run_observed(
        &mut array,
        &program,
        1,
        sim::DEFAULT_CLOCK_HZ,
        |s, i, arr| {
            let mut row = if i == 0 {
                vec![s.pos.line.to_string(), s.to_string()]
            } else {
                vec![String::new(), String::new()]
            };
            row.push(s.ops[i].to_string());
            row.extend(row_values(arr, pe, &digital));
            rows.push(row);
        },
    )
    .map_err(|e| super::positioned(&a.program, e))?;
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    println!(
        "PE ({}, {}); XN..XW are the NEWS of its north, east, south and west neighbours",
        pe.0, pe.1
    );
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (v, w))| {
                if i < 3 {
                    format!("{v:<w$}")
                } else {
                    format!("{v:>w$}")
                }
            })
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
    println!(
        "\n{} instructions, {} cycles, {:.1} us at 10 MHz",
        report.instructions, report.cycles, report.time_us
    );
    for w in &report.warnings {
        // A warning about the program as a whole has no position.
        if w.pos == Pos::default() {
            eprintln!("warning: {}: {}", a.program.display(), w.msg);
        } else {
            eprintln!("warning: {}:{}: {}", a.program.display(), w.pos, w.msg);
        }
    }
    Ok(0)
}
