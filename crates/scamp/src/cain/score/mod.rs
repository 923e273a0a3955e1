//! Scoring programs: the error objective, the saturation risk of a plan on textured
//! images, and the error-budget search over approximation depths.

pub(crate) mod budget;
pub(crate) mod objective;
pub(crate) mod risk;
