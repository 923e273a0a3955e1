//! Proving what a program computes and measuring the error it picks up.

pub mod symbolic;
pub mod proof;
pub mod convolution;
pub mod metrics;
pub mod check;
pub mod heatmap;
pub mod report;
