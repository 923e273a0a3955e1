//! Experiments that run the simulator: the calibration of the noise model against the
//! device's identity-kernel measurements ([`identity`]), the background statistics of
//! the uncorrected load ([`background`]), the uncertainty ensembles checked against
//! both ([`ensemble`]), the register-range experiment and its fit ([`saturation`]) and the simulator's own throughput ([`throughput`]); [`report`]
//! holds the calibration command's report.
//!
//! They sit above `sim` rather than inside it: each one builds arrays, sets a noise
//! layer and calls `sim::run`, so inside `sim` they would close an import cycle (the
//! run loop below the noise model, the noise model below the experiments that run it).
//! Here `sim` imports nothing of them, and they import `sim` like any other user.

pub mod background;
pub mod ensemble;
pub mod identity;
pub mod report;
pub mod saturation;
mod simplex;
pub mod throughput;
