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
pub(crate) mod uncertainty;

pub(crate) use crate::sim::layer::BusKind;
pub use layer::NoiseModel;
pub use profile::builtin_text;
pub use profile::{Profile, ProfileCause, ProfileError, BUILTINS, DEFAULT_PROFILE};
pub(crate) use saturation::KneeForm;
pub use saturation::Saturation;
pub use saturation::MAX_LEVEL;
// The uncertainty description is also its own namespace, `noise::uncertainty`.
#[cfg(test)]
pub(crate) use uncertainty::Parameter;
