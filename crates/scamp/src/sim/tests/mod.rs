//! The machine's own tests: they pin the one step the array, the prover and the
//! predictor share, and the bits of the counter-based generator, which are not the
//! library's surface.

mod fused;
mod golden_bits;
mod saturation;
