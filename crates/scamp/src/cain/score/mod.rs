//! Scoring programs: the error objective, the saturation risk of a plan on textured
//! images, and the error-budget search over approximation depths.

pub mod budget;
pub mod objective;
pub mod risk;
