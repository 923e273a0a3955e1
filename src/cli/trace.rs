//! `scamp trace PROGRAM --pe ROW,COL`: every macro, its bus instructions, and one PE's
//! registers after each, as an aligned table; with `--html FILE`, the step-through page
//! built by [`crate::report::trace`].

use super::common::{load_program, NoiseArgs, SetupArgs};
use super::{args, CliError, Outcome};
use crate::report::{trace_page, TraceInput};
use scamp::{isa::DReg, isa::Device, isa::Dir, isa::Pos, isa::Program, isa::Reg};
use scamp::{Array, N};
use std::path::{Path, PathBuf};

/// Arguments of `scamp trace`.
#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    /// Program file (statements and their expansions: docs/isa.md).
    pub program: PathBuf,
    /// The PE to watch, as ROW,COL (row 0 is north, column 0 west); default for
    /// `--html`: the centre, 128,128.
    #[arg(long, value_name = "ROW,COL", value_parser = args::pe)]
    pe: Option<(usize, usize)>,
    /// Write a self-contained step-through page instead of the table: an exact run and
    /// one under `--noise` (default scamp5) side by side; see docs/html-pages.md. The
    /// table is always exact.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Preload this register with the full-range picture (p - 128), as `scamp check`
    /// does with a spec's input register.
    #[arg(long, value_name = "REG")]
    input: Option<String>,
    #[command(flatten)]
    setup: SetupArgs,
    #[command(flatten)]
    noise: NoiseArgs,
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

/// The prepared array, with the `--input` register preloaded from the exposed scene.
fn prepared(a: &TraceArgs, device: Device) -> Result<Array, CliError> {
    let mut array = a.setup.build(device)?;
    if let Some(name) = &a.input {
        let reg = Reg::parse(name)
            .filter(|r| matches!(r, Reg::Gen(i) if usize::from(*i) < device.general))
            .ok_or_else(|| {
                CliError::msg(format!(
                    "--input {name}: expected a general register ({})",
                    device.general_range()
                ))
            })?;
        let scene: Vec<f32> = array
            .plane(Reg::Pix)
            .map(|p| p.iter().map(|v| 2.0 * v - 128.0).collect())
            .unwrap_or_default();
        if let Some(p) = array.plane_mut(reg) {
            p.copy_from_slice(&scene);
        }
    }
    Ok(array)
}

fn write_html(
    a: &TraceArgs,
    file: &Path,
    program: &Program,
    device: Device,
    pe: (usize, usize),
) -> Outcome {
    let source = scamp::isa::read_text(&a.program, scamp::isa::MAX_PROGRAM_BYTES, "program")
        .map_err(|e| CliError::msg(format!("{}: {e}", a.program.display())))?;
    let ideal = prepared(a, device)?;
    let mut noisy = prepared(a, device)?;
    a.noise.install(&mut noisy)?;
    let title = a.program.file_name().map_or_else(
        || a.program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if let Some(note) = crate::report::trace::Sampling::of(program).note() {
        eprintln!("note: {note}");
    }
    let html = trace_page(TraceInput {
        title: &title,
        source: &source,
        program,
        ideal,
        noisy,
        noise: &a.noise.noise,
        pe,
        clock_hz: scamp::DEFAULT_CLOCK_HZ,
    })
    .map_err(|e| super::positioned(&a.program, e))?;
    std::fs::write(file, &html)
        .map_err(|e| CliError::msg(format!("{}: cannot write: {e}", file.display())))?;
    eprintln!("wrote {} ({} bytes)", file.display(), html.len());
    Ok(0)
}

/// Runs `scamp trace`.
pub fn run(a: &TraceArgs) -> Outcome {
    let device = Device::default();
    let pe = match (a.pe, &a.html) {
        (Some(pe), _) => pe,
        (None, Some(_)) => (N / 2, N / 2),
        (None, None) => {
            return Err(CliError::msg(
                "--pe ROW,COL is needed (or --html FILE for the step-through page)",
            ))
        }
    };
    let program = load_program(&a.program, device)?;
    if let Some(file) = &a.html {
        super::files::check_writable_file(file)?;
        return write_html(a, file, &program, device, pe);
    }
    let mut array = prepared(a, device)?;
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
    let report = scamp::run_observed(
        &mut array,
        &program,
        1,
        scamp::DEFAULT_CLOCK_HZ,
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
            eprintln!("warning: {}: {}", a.program.display(), w.kind);
        } else {
            eprintln!("warning: {}:{}: {}", a.program.display(), w.pos, w.kind);
        }
    }
    Ok(0)
}
