//! The machine: register planes, bus instructions over the whole array, capture,
//! cycle and time accounting.

pub(crate) mod array;
pub(crate) mod batch;
pub(crate) mod capture;
pub(crate) mod clock;
pub(crate) mod dims;
pub(crate) mod edge;
pub mod images;
pub(crate) mod layer;
pub(crate) mod machine;
pub(crate) mod noise;
pub(crate) mod preload;
pub(crate) mod readout;
pub(crate) mod run;
pub(crate) mod vector_unit;

// The machine's surface.
pub use array::Array;
pub use clock::DEFAULT_CLOCK_HZ;
pub use dims::{N, PES};
pub use edge::EdgeMode;
pub(crate) use run::run;
pub use run::RunError;
pub use run::{run_observed, RunReport};

// Plumbing the command line, the Python bindings and the calibration share: batches of
// frames, images in and planes out.
pub use batch::frames;
pub use capture::{default_image, load as load_image, CaptureError, GreyImage, DEFAULT_IMAGE_NAME};
// The counter-based generator the noise draws from: its bits are pinned by the unit
// tests in sim/tests/golden_bits.rs.
#[cfg(test)]
pub(crate) use layer::rng;
pub use preload::Preload;
pub use readout::{load_npy, save_bits_npy, save_bits_png, save_npy, save_png, PlaneFileError};

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) use run::WarningKind;
