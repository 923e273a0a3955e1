//! The write layer: every value a bus instruction writes passes through it. The exact
//! layer leaves values untouched (the `ideal` profile); the noise model is another layer.
//!
//! The trait owns the types it speaks: the kinds of transfer ([`BusKind`]) and the
//! fused write ([`FusedWrite`]) with the per-PE formula and the counter-based deviates
//! ([`rng`], [`bf16`]) it draws. A layer (such as `sim::noise`) builds on this module;
//! this module names no layer.

pub(crate) mod bf16;
pub(crate) mod bus_kind;
pub(crate) mod fused;
pub(crate) mod knee;
pub(crate) mod rng;
pub(crate) mod saturate;

pub(crate) use bus_kind::BusKind;
pub(crate) use fused::{Factors, FusedWrite};

use crate::isa::Reg;

/// What is being written, for a layer that needs to know.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteCtx {
    /// Sequence number of the bus instruction since the array was created (a stream id
    /// for temporal noise that does not depend on thread scheduling).
    pub(crate) seq: u64,
    /// The register named as receiver (a neighbour view `XN..XW` writes `NEWS`).
    pub(crate) reg: Reg,
    /// Index of the receiving plane (general registers first, then `NEWS`).
    pub(crate) plane: usize,
    /// Number of receivers of the transfer (1 = `bus`, 2 = `bus2`, 3 = `bus3`).
    pub(crate) receivers: usize,
    /// Number of sources of the transfer.
    pub(crate) sources: usize,
    /// Whether a source is `IN` (a DAC load, `in()`).
    pub(crate) reads_in: bool,
    /// Whether that DAC setting came without the vendor's correction (`load_in`).
    pub(crate) in_uncorrected: bool,
    /// Whether a source is `PIX` (a capture, `get_image`).
    pub(crate) reads_pix: bool,
}

impl WriteCtx {
    /// The kind of the transfer, as the error model tells them apart.
    pub(crate) fn kind(&self) -> BusKind {
        BusKind::of(self.receivers, self.sources)
    }
}

/// Consecutive rows of values on their way into a register (see
/// [`WriteLayer::perturb`]): `src.len() / N` rows from `row` on, every slice holding
/// that many rows of `N` entries.
pub(crate) struct RowWrite<'a> {
    /// The first array row written.
    pub(crate) row: usize,
    /// The exact values, row after row.
    pub(crate) src: &'a [f32],
    /// Where the values to store go.
    pub(crate) out: &'a mut [f32],
    /// Which entries will be stored (`None`: every entry).
    pub(crate) mask: Option<&'a [bool]>,
    /// Which stored entries were clipped (see [`WriteLayer::perturb`]).
    pub(crate) clipped: &'a mut [bool],
}

/// What is being read out.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadCtx {
    /// Bus instructions executed before the readout (the readout's time stamp).
    pub(crate) seq: u64,
    /// The plane index of the register read.
    pub(crate) plane: usize,
}

/// Modifies values on their way into a register, between writes, and on readout.
pub(crate) trait WriteLayer: Send + Sync {
    /// Writes to `w.out` the rows of values `w.src` about to be written from row `w.row`
    /// on, perturbed (only entries whose `w.mask` is set will be stored). Returns how
    /// many stored entries were clipped; when there were any, `w.clipped` tells which,
    /// entry by entry (it may be left as it was otherwise).
    fn perturb(&self, ctx: &WriteCtx, w: RowWrite) -> u64;

    /// The write of `ctx` as a [`FusedWrite`] the bus pass applies inline, row by row,
    /// when the layer can describe it so (`None`: every write goes through
    /// [`WriteLayer::perturb`]). Both give the same values and clip marks.
    fn fused(&self, _ctx: &WriteCtx) -> Option<FusedWrite<'_>> {
        None
    }

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
pub(crate) struct Exact;

impl WriteLayer for Exact {
    fn perturb(&self, _: &WriteCtx, w: RowWrite) -> u64 {
        w.out.copy_from_slice(w.src);
        0
    }

    fn is_exact(&self) -> bool {
        true
    }
}
