//! The analogue error model (docs/noise.md): profiles, the noise layer that perturbs every
//! value a bus instruction writes, its counter-based random numbers, statistics over
//! repeated runs and the calibration against hardware measurements.

pub mod background;
pub mod bf16;
pub mod bus_kind;
pub mod calibrate;
pub mod chip;
pub mod layer;
pub mod profile;
pub mod rng;
mod term;
pub mod uncertainty;

pub use bus_kind::BusKind;
pub use layer::NoiseModel;
pub use profile::{Profile, ProfileError, BUILTINS, DEFAULT_PROFILE};
