//! Scoring programs: the error objective, the clipping a plan causes on a sample of the
//! bundled images, and the error-budget search over approximation depths.

pub(crate) mod budget;
pub(crate) mod clipping;
pub(crate) mod objective;
pub(crate) mod sample;
