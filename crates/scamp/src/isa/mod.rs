//! The SCAMP-5 instruction set as data: registers, machine-level instructions, the macro
//! table with its expansions, and program text with source positions.

pub mod op;
pub mod parse;
pub mod program;
pub mod reg;
pub mod source;
pub mod table;
pub mod text;
pub mod unwritten;
pub mod yaml;

pub use op::{BusOp, DigitalOp};
pub use parse::parse_program;
pub use program::{Device, IsaError, Pos, Program, Stmt, Wiring};
pub use reg::{DReg, Dir, DirSet, Reg};
pub use table::{Codegen, Def, Family, Id, Operand, Slot};
pub use unwritten::{unwritten_reads, AnyReg, UnwrittenRead};

/// The constants the DAC loads (`in(a, v)`, `load_in(a, v)`): a decision's threshold
/// `t` is loaded as `-t`, so thresholds lie in `-DAC.end()..=-DAC.start()`.
pub const DAC: std::ops::RangeInclusive<i64> = -128..=127;
