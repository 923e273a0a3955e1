//! From plan to program: register allocation, emitting statements of the instruction
//! table, and the report printed above a program.

pub mod alloc;
pub mod emit;
pub mod report;
