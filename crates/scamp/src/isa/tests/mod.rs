//! The instruction table's own tests: every property the passes read from it agrees with
//! what the validator, printer, simulator and code generator do.

mod isa_table;
