//! The analogue error model (docs/noise.md): profiles (with their uncertainty
//! description), the chip's fixed pattern, the noise layer that perturbs every value a
//! bus instruction writes, and statistics over repeated runs. The device experiments a
//! profile must reproduce and the uncertainty ensembles checked against them run the
//! model, so they live above `sim`, in [`crate::verify::ensemble`]; the calibration
//! fits and the command's reports are the `scamp` command's (`scamp noise`).

pub(crate) mod chip;
pub(crate) mod layer;
pub(crate) mod profile;
pub(crate) mod saturation;
mod term;
pub mod uncertainty;

pub use crate::sim::layer::BusKind;
pub use layer::NoiseModel;
pub use profile::{builtin_text, IDEAL_YAML, SCAMP5_YAML};
pub use profile::{Profile, ProfileCause, ProfileError, BUILTINS, DEFAULT_PROFILE};
pub use saturation::MAX_LEVEL;
pub use saturation::{KneeForm, Saturation};
// The uncertainty description is also its own namespace, `noise::uncertainty`.
pub use uncertainty::{Parameter, Range, Uncertainty};
