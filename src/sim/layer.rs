//! The write layer: every value a bus instruction writes passes through it. The exact
//! layer leaves values untouched (the `ideal` profile); the noise model is another layer.

use crate::isa::Reg;

/// What is being written, for a layer that needs to know.
#[derive(Clone, Copy, Debug)]
pub struct WriteCtx {
    /// Sequence number of the bus instruction since the array was created (a stream id
    /// for temporal noise that does not depend on thread scheduling).
    pub seq: u64,
    /// The register named as receiver (a neighbour view `XN..XW` writes `NEWS`).
    pub reg: Reg,
    /// Index of the receiving plane (general registers first, then `NEWS`).
    pub plane: usize,
    /// Number of receivers of the transfer (1 = `bus`, 2 = `bus2`, 3 = `bus3`).
    pub receivers: usize,
    /// Number of sources of the transfer.
    pub sources: usize,
    /// Whether a source is `IN` (a DAC load, `in()`).
    pub reads_in: bool,
    /// Whether a source is `PIX` (a capture, `get_image`).
    pub reads_pix: bool,
}

/// What is being read out.
#[derive(Clone, Copy, Debug)]
pub struct ReadCtx {
    /// Bus instructions executed before the readout (the readout's time stamp).
    pub seq: u64,
    /// The register read.
    pub reg: Reg,
    /// Its plane index.
    pub plane: usize,
}

/// Modifies values on their way into a register, between writes, and on readout.
pub trait WriteLayer: Send + Sync {
    /// Writes to `out` the row of values `src` about to be written to `row`, perturbed
    /// (only entries whose `mask` is set will be stored; `None`: every entry). Returns
    /// how many stored entries were clipped; when there were any, `clipped[c]` tells
    /// which (it is left as it was otherwise).
    fn perturb(
        &self,
        ctx: &WriteCtx,
        row: usize,
        src: &[f32],
        out: &mut [f32],
        mask: Option<&[bool]>,
        clipped: &mut [bool],
    ) -> u64;

    /// Whether the layer never changes anything (lets the array skip calling it).
    fn is_exact(&self) -> bool {
        false
    }

    /// How a value not written for `idle_cycles` bus instructions relaxes:
    /// `(factor, toward)` with `v := toward + (v - toward) * factor`; `None` when
    /// registers hold their values.
    fn decay(&self, _idle_cycles: u64) -> Option<(f32, f32)> {
        None
    }

    /// Whether [`WriteLayer::readout`] changes anything.
    fn has_readout(&self) -> bool {
        false
    }

    /// Turns one row of analogue values into what the readout path delivers.
    fn readout(&self, _ctx: &ReadCtx, _row: usize, _vals: &mut [f32]) {}
}

/// Leaves every value exact.
#[derive(Clone, Copy, Debug, Default)]
pub struct Exact;

impl WriteLayer for Exact {
    fn perturb(
        &self,
        _: &WriteCtx,
        _: usize,
        src: &[f32],
        out: &mut [f32],
        _: Option<&[bool]>,
        _: &mut [bool],
    ) -> u64 {
        out.copy_from_slice(src);
        0
    }

    fn is_exact(&self) -> bool {
        true
    }
}
