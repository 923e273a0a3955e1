//! The machine: register planes, bus instructions over the whole array, capture,
//! cycle and time accounting.

pub mod array;
pub mod batch;
pub mod capture;
pub mod clock;
pub mod dims;
pub mod edge;
pub mod images;
pub mod layer;
pub mod machine;
pub mod noise;
pub mod preload;
pub mod readout;
pub mod run;
pub mod vector_unit;

pub use array::Array;
pub use clock::DEFAULT_CLOCK_HZ;
pub use dims::{N, PES};
pub use edge::EdgeMode;
pub use run::{run, run_observed, RunReport, Warning};
