#![warn(missing_docs)]
//! `scamp`: a cycle-accurate simulator, code generator and checker for the SCAMP-5
//! focal-plane sensor-processor.

pub mod cain;
pub mod cli;
pub mod isa;
pub mod report;
pub mod serve;
pub mod sim;
pub mod verify;
