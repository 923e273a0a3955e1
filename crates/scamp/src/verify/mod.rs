//! Proving what a program computes and measuring the error it picks up.

pub mod check;
pub mod compare;
pub mod compare_ranges;
pub mod convolution;
pub mod dyadic;
pub mod ensemble;
pub mod groups;
pub mod heatmap;
pub mod metrics;
pub mod plane_stats;
pub mod planes;
pub mod precision;
pub mod predict;
pub mod proof;
pub mod range;
pub mod report;
pub mod saturation;
pub mod symbolic;
pub mod uncertainty;
