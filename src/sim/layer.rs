//! The write layer: every value a bus instruction writes passes through it. The exact
//! layer leaves values untouched (the `ideal` profile); the noise model is another layer.

use crate::isa::Reg;

/// What is being written, for a layer that needs to know.
#[derive(Clone, Copy, Debug)]
pub struct WriteCtx {
    /// Sequence number of the bus instruction since the array was created (a stream id
    /// for temporal noise that does not depend on thread scheduling).
    pub seq: u64,
    /// The register that receives the value (`NEWS` for neighbour-view writes).
    pub reg: Reg,
    /// Index of the receiving plane (general registers first, then `NEWS`).
    pub plane: usize,
    /// Number of receivers of the transfer (1 = `bus`, 2 = `bus2`, 3 = `bus3`).
    pub receivers: usize,
    /// Number of sources of the transfer.
    pub sources: usize,
}

/// Modifies values on their way into a register.
pub trait WriteLayer: Send + Sync {
    /// Perturbs one row of values about to be written to `row` (only entries whose
    /// `mask` is set will be stored). Returns how many stored values were clipped.
    fn perturb(&self, ctx: &WriteCtx, row: usize, vals: &mut [f32], mask: &[bool]) -> u64;

    /// Whether the layer never changes anything (lets the array skip calling it).
    fn is_exact(&self) -> bool {
        false
    }
}

/// Leaves every value exact.
#[derive(Clone, Copy, Debug, Default)]
pub struct Exact;

impl WriteLayer for Exact {
    fn perturb(&self, _: &WriteCtx, _: usize, _: &mut [f32], _: &[bool]) -> u64 {
        0
    }

    fn is_exact(&self) -> bool {
        true
    }
}
