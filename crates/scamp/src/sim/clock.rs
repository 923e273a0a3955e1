//! The array clock. Its own module, below both the run loop and the noise layer (which
//! turns decay per microsecond into decay per instruction), so neither imports the
//! other for it.

/// Default array clock: 10 MHz, 100 ns per bus instruction.
pub const DEFAULT_CLOCK_HZ: f64 = 10e6;
