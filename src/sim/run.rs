//! Running programs on the array: cycle and time accounting, and the warnings a user
//! should see (partial FLAG under two-step neighbour macros, instruction store overflow).

use super::array::Array;
use super::machine::{step, MachineError};
use crate::isa::{BusOp, Pos, Program, Reg, Stmt};

/// The device's instruction store holds this many instruction words per kernel.
pub const KERNEL_STORE: u64 = 1024;

/// Default array clock: 10 MHz, 100 ns per bus instruction.
pub const DEFAULT_CLOCK_HZ: f64 = 10e6;

/// Macros the vendor documents as valid only while FLAG is set everywhere.
const FULL_FLAG_ONLY: &[&str] = &["mov2x", "add2x", "sub2x"];

/// Something the user should know about a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The statement concerned (line 0 for whole-program warnings).
    pub pos: Pos,
    /// What happened.
    pub msg: String,
}

/// Figures of one or more runs of a program.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    /// Macro instructions executed.
    pub instructions: u64,
    /// Bus instructions (cycles) executed.
    pub cycles: u64,
    /// Simulated time at the clock rate, in microseconds.
    pub time_us: f64,
    /// Saturated PEs: (PE, register) pairs clipped at least once during the run.
    pub saturated: u64,
    /// Writes clipped by the noise layer (a PE clipped twice counts twice).
    pub saturated_writes: u64,
    /// Per register that was clipped: (register, PEs clipped, clipped writes).
    pub saturation: Vec<(Reg, u64, u64)>,
    /// Warnings, each reported once.
    pub warnings: Vec<Warning>,
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {msg}")]
pub struct RunError {
    /// Statement that failed.
    pub pos: Pos,
    /// Why.
    pub msg: String,
}

/// Runs `program` `repeat` times on `array`, calling `observe` after every bus
/// instruction with the statement, the index of the instruction in its expansion and
/// the array.
pub fn run_observed(
    array: &mut Array,
    program: &Program,
    repeat: u32,
    clock_hz: f64,
    mut observe: impl FnMut(&Stmt, usize, &Array),
) -> Result<RunReport, RunError> {
    let mut report = RunReport::default();
    let saturated_before = array.saturated();
    array.reset_saturation();
    let kernel_cycles = program.cycles();
    if kernel_cycles > KERNEL_STORE {
        report.warnings.push(Warning {
            pos: Pos::default(),
            msg: format!(
                "the program is {kernel_cycles} instruction words long; the device stores \
                 at most {KERNEL_STORE} per kernel"
            ),
        });
    }
    for _ in 0..repeat {
        for s in &program.stmts {
            if FULL_FLAG_ONLY.contains(&s.def.name) && !array.flag_full() {
                let w = Warning {
                    pos: s.pos,
                    msg: format!(
                        "`{s}` runs while FLAG is not set everywhere; the vendor documents \
                         two-step neighbour macros as valid only under a full FLAG"
                    ),
                };
                if !report.warnings.contains(&w) {
                    report.warnings.push(w);
                }
            }
            for (i, op) in s.ops.iter().enumerate() {
                step(array, op).map_err(|MachineError(msg)| RunError { pos: s.pos, msg })?;
                if matches!(op, BusOp::Nop) {
                    // A nop does nothing to the machine but takes its cycle: time (decay,
                    // noise streams) moves on.
                    array.tick();
                }
                report.cycles += op.cycles();
                observe(s, i, array);
            }
            report.instructions += 1;
        }
    }
    report.time_us = report.cycles as f64 / clock_hz * 1e6;
    report.saturated_writes = array.saturated() - saturated_before;
    let mut regs: Vec<Reg> = (0..array.general()).map(|i| Reg::Gen(i as u8)).collect();
    regs.push(Reg::News);
    for r in regs {
        let (writes, pes) = array.clipped(r);
        if writes > 0 {
            report.saturation.push((r, pes, writes));
            report.saturated += pes;
        }
    }
    // Values read after the run include the decay up to its last instruction.
    array.settle();
    Ok(report)
}

/// Runs `program` `repeat` times on `array`.
pub fn run(
    array: &mut Array,
    program: &Program,
    repeat: u32,
    clock_hz: f64,
) -> Result<RunReport, RunError> {
    run_observed(array, program, repeat, clock_hz, |_, _, _| {})
}
