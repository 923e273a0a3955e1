//! From plan to program: register allocation, emitting statements of the instruction
//! table, and the report printed above a program.

pub(crate) mod alloc;
pub(crate) mod emit;
pub(crate) mod report;
