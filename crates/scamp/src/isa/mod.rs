//! The SCAMP-5 instruction set as data: registers, machine-level instructions, the macro
//! table with its expansions, and program text with source positions.

pub(crate) mod op;
pub(crate) mod parse;
pub(crate) mod program;
pub(crate) mod reg;
pub(crate) mod source;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod unwritten;
pub(crate) mod yaml;

pub use op::{BusOp, DigitalOp};
pub use parse::parse_program;
pub use program::{Device, IsaCause, IsaError, Pos, Program, Stmt, Wiring};
pub use reg::{DReg, Dir, DirSet, Reg};
// Plumbing the command line, the playground and the Python bindings share: reading
// text files within a size limit, the macro table, quoting a user's text in a message.
pub use source::{
    decode, read_text, SourceError, MAX_PROFILE_BYTES, MAX_PROGRAM_BYTES, MAX_SPEC_BYTES,
};
pub use table::{entry, table};
pub use table::{Codegen, Def, Family, Id, Operand, Slot};
pub use text::quote;
pub use unwritten::{unwritten_reads, AnyReg, UnwrittenRead};
pub use yaml::{YamlCause, YamlError};

/// The constants the DAC loads (`in(a, v)`, `load_in(a, v)`): a decision's threshold
/// `t` is loaded as `-t`, so thresholds lie in `-DAC.end()..=-DAC.start()`.
pub const DAC: std::ops::RangeInclusive<i64> = -128..=127;

#[cfg(test)]
mod tests;
