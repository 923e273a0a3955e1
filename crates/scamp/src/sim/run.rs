//! Running programs on the array: cycle and time accounting, and the warnings a user
//! should see (partial FLAG under two-step neighbour macros, instruction store overflow).

use super::array::{Array, Batch};
use super::machine::{step, MachineError};
use crate::isa::{Pos, Program, Reg, Stmt};

/// The device's instruction store holds this many instruction words per kernel.
pub(crate) const KERNEL_STORE: u64 = 1024;

/// Something the user should know about a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The statement concerned (line 0 for whole-program warnings).
    pub pos: Pos,
    /// What happened; its `Display` is the text the command prints.
    pub kind: WarningKind,
}

/// What a run warns about, with the values involved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WarningKind {
    /// The program is longer than the device's instruction store.
    #[error(
        "the program is {words} instruction words long; the device stores at most {store} per kernel"
    )]
    StoreOverflow {
        /// The program's instruction words (bus cycles).
        words: u64,
        /// The store's size per kernel.
        store: u64,
    },
    /// A two-step neighbour macro ran under a partial FLAG.
    #[error(
        "`{statement}` runs while FLAG is not set everywhere; the vendor documents two-step \
         neighbour macros as valid only under a full FLAG"
    )]
    PartialFlag {
        /// The statement, as printed.
        statement: String,
    },
}

/// Figures of one or more runs of a program.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct RunReport {
    /// Macro instructions executed.
    pub instructions: u64,
    /// Bus instructions (cycles) executed.
    pub cycles: u64,
    /// Simulated time at the clock rate, in microseconds.
    pub time_us: f64,
    /// Saturated PEs: (PE, register) pairs past the saturation knee (clipped, under a
    /// hard clip) at least once during the run.
    pub saturated: u64,
    /// Writes past the knee (a PE past it twice counts twice).
    pub(crate) saturated_writes: u64,
    /// Per register with writes past the knee: (register, PEs, writes).
    pub saturation: Vec<(Reg, u64, u64)>,
    /// Warnings, each reported once.
    pub warnings: Vec<Warning>,
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {cause}")]
pub struct RunError {
    /// Statement that failed.
    pub pos: Pos,
    /// Why.
    pub cause: RunFault,
}

/// What stopped a run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunFault {
    /// The machine cannot execute an instruction of the statement.
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// A register was asked for that the array does not have (reading it would make
    /// up values).
    #[error(
        "register {register} was asked for, but this array has only {} (and NEWS, PIX, the \
         digital registers)",
        crate::isa::Device { general: *general }.general_range()
    )]
    NotOnArray {
        /// The register's name.
        register: String,
        /// The array's general registers.
        general: usize,
    },
}

impl RunError {
    /// The error `cause` at the statement at `pos`.
    pub(crate) fn at(pos: Pos, cause: impl Into<RunFault>) -> RunError {
        RunError {
            pos,
            cause: cause.into(),
        }
    }
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
    run_with(array, program, repeat, clock_hz, Some(&mut observe))
}

/// Runs `program` `repeat` times on `array`.
pub fn run(
    array: &mut Array,
    program: &Program,
    repeat: u32,
    clock_hz: f64,
) -> Result<RunReport, RunError> {
    run_with(array, program, repeat, clock_hz, None)
}

/// What watches a run after every bus instruction.
type Observer<'a> = &'a mut dyn FnMut(&Stmt, usize, &Array);

/// A run, observed after every bus instruction or, when nobody observes, as one batch
/// (so the array can fuse bus instructions within and across statements).
fn run_with(
    array: &mut Array,
    program: &Program,
    repeat: u32,
    clock_hz: f64,
    observe: Option<Observer>,
) -> Result<RunReport, RunError> {
    let mut report = RunReport::default();
    let saturated_before = array.saturated();
    array.reset_saturation();
    let kernel_cycles = program.cycles();
    if kernel_cycles > KERNEL_STORE {
        report.warnings.push(Warning {
            pos: Pos::default(),
            kind: WarningKind::StoreOverflow {
                words: kernel_cycles,
                store: KERNEL_STORE,
            },
        });
    }
    match observe {
        None => run_batched(&mut array.batch(), program, repeat, &mut report)?,
        Some(observe) => run_stepped(array, program, repeat, observe, &mut report)?,
    }
    report.time_us = report.cycles as f64 * 1e6 / clock_hz;
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

/// Warns (once) when a statement the table marks full-FLAG-only (the two-step neighbour
/// macros) starts under a partial FLAG.
fn check_flag(s: &Stmt, flag_full: bool, report: &mut RunReport) {
    if s.def.full_flag_only && !flag_full {
        let w = Warning {
            pos: s.pos,
            kind: WarningKind::PartialFlag {
                statement: s.to_string(),
            },
        };
        if !report.warnings.contains(&w) {
            report.warnings.push(w);
        }
    }
}

/// The statements of `repeat` runs, one statement at a time through `batch`.
fn run_batched(
    batch: &mut Batch,
    program: &Program,
    repeat: u32,
    report: &mut RunReport,
) -> Result<(), RunError> {
    for _ in 0..repeat {
        for s in &program.stmts {
            check_flag(s, batch.flag_full(), report);
            batch.execute(&s.ops).map_err(|e| RunError::at(s.pos, e))?;
            report.cycles += s.cycles();
            report.instructions += 1;
        }
    }
    Ok(())
}

/// The statements of `repeat` runs, one bus instruction at a time, each observed.
fn run_stepped(
    array: &mut Array,
    program: &Program,
    repeat: u32,
    observe: Observer,
    report: &mut RunReport,
) -> Result<(), RunError> {
    for _ in 0..repeat {
        for s in &program.stmts {
            check_flag(s, array.flag_full(), report);
            for (i, op) in s.ops.iter().enumerate() {
                step(array, op).map_err(|e| RunError::at(s.pos, e))?;
                report.cycles += op.cycles();
                observe(s, i, array);
            }
            report.instructions += 1;
        }
    }
    Ok(())
}
