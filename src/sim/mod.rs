//! The machine: register planes, bus instructions over the whole array, capture,
//! cycle and time accounting.

pub mod array;
pub mod batch;
pub mod capture;
pub mod edge;
pub mod layer;
pub mod machine;
pub mod noise;
pub mod preload;
pub mod readout;
pub mod run;
pub mod throughput;
pub mod vector_unit;

pub use array::{Array, N, PES};
pub use edge::EdgeMode;
pub use run::{run, run_observed, RunReport, Warning, DEFAULT_CLOCK_HZ};
