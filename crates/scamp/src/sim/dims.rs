//! The array's size, in a module of its own below everything that sizes rows and
//! planes by it (the array, the write layer, the noise model, files), so none of them
//! imports the array for it.

/// Side of the array.
pub const N: usize = 256;
/// PEs in the array.
pub const PES: usize = N * N;
