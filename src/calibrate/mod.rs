//! The calibration experiments of `scamp noise` and `scamp bench`: the fit of the
//! `scamp5` profile to the identity-kernel measurements ([`fit`]), the register-range
//! experiment and its fit ([`saturation`]), the calibration command's report
//! ([`report`]) and the simulator's own throughput ([`throughput`]).
//!
//! The device experiments themselves and the uncertainty ensemble checked against them
//! are the library's ([`scamp::identity`], [`scamp::background`], [`scamp::ensemble`]):
//! the error bars of `check`, `run --compare` and `eval` are taken over that ensemble,
//! so they are part of the error model. What is here only makes a profile or measures the tool.

pub mod fit;
pub mod report;
pub mod saturation;
mod simplex;
pub mod throughput;
