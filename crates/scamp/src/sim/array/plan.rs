//! Bus transfers resolved against the array (which plane each operand lives in and
//! which PE it is read from), and the rule for running several of them in one pass.
//!
//! The array runs a *segment* of consecutive transfers band by band: every band of rows
//! executes all of the segment's transfers before the next band starts, on its own
//! thread. Writes are split by destination row, so a band only ever writes its own rows.
//! That gives the same result as running the transfers one after the other over the
//! whole array as long as no transfer reads, from a row outside the band, a plane the
//! segment writes: such a read could see a value of the wrong instruction. Reads
//! outside the row come from vertical neighbour views (`XN`, `XS` as sources) and from
//! writes through vertical views (the value written to `NEWS` row r is computed by the
//! PE in row r -+ 1, which reads all its sources there).

use crate::sim::layer::WriteCtx;

/// Where a transfer reads one of its sources, seen from the PE computing the sum.
#[derive(Clone, Copy, Debug)]
pub(super) enum Src {
    /// The PE's own value in a plane.
    Plane(usize),
    /// The same value at every PE (`IN`, or `PIX` after a reset).
    Const(f32),
    /// The plane's value at the PE `(dr, dc)` away, through the edge mode (`XN..XW`
    /// read `NEWS`).
    View { plane: usize, dr: i32, dc: i32 },
}

impl Src {
    /// The plane read, if any.
    fn plane(self) -> Option<usize> {
        match self {
            Src::Plane(p) | Src::View { plane: p, .. } => Some(p),
            Src::Const(_) => None,
        }
    }
}

/// One receiver of a transfer.
#[derive(Clone, Copy, Debug)]
pub(super) struct Dst {
    /// The plane written.
    pub(crate) plane: usize,
    /// Cell (r, c) of the plane receives the value computed by PE (r + dr, c + dc),
    /// through the edge mode: (0, 0) for the PE's own register, minus the direction for
    /// a neighbour view (writing `XE` at p writes `NEWS` of p's east neighbour).
    pub(crate) from: (i32, i32),
    /// What the write layer is told.
    pub(crate) ctx: WriteCtx,
}

/// A bus transfer ready to run: at most four sources, at most three receivers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Transfer {
    srcs: [Src; 4],
    nsrc: usize,
    dsts: [Option<Dst>; 3],
    /// A plane this transfer both writes and reads from another row: it reads a copy
    /// taken before it runs (the scratch plane), and it runs alone.
    pub(crate) snapshot: Option<usize>,
}

impl Transfer {
    /// A transfer with no source and no receiver yet.
    pub(super) fn new() -> Transfer {
        Transfer {
            srcs: [Src::Const(0.0); 4],
            nsrc: 0,
            dsts: [None; 3],
            snapshot: None,
        }
    }

    /// Adds a source (at most four: the instruction set checks the count).
    pub(super) fn push_src(&mut self, s: Src) {
        self.srcs[self.nsrc] = s;
        self.nsrc += 1;
    }

    /// Adds a receiver (at most three).
    pub(super) fn push_dst(&mut self, d: Dst) {
        let slot = self.dsts.iter_mut().find(|d| d.is_none());
        *slot.expect("a bus instruction has at most three receivers") = Some(d);
    }

    /// The sources, in instruction order (the order they are summed in).
    pub(super) fn srcs(&self) -> &[Src] {
        &self.srcs[..self.nsrc]
    }

    /// The receivers, in instruction order.
    pub(super) fn dsts(&self) -> impl Iterator<Item = &Dst> {
        self.dsts.iter().flatten()
    }

    /// Number of receivers (what the sum is divided by).
    pub(super) fn receivers(&self) -> usize {
        self.dsts().count()
    }

    /// Whether the transfer writes plane `p`.
    pub(super) fn writes(&self, p: usize) -> bool {
        self.dsts().any(|d| d.plane == p)
    }

    /// Whether the transfer reads plane `p` (at any PE).
    pub(super) fn reads(&self, p: usize) -> bool {
        self.srcs().iter().any(|s| s.plane() == Some(p))
    }

    /// Planes read from a row other than the receiving cell's row.
    fn off_row_reads(&self) -> impl Iterator<Item = usize> + '_ {
        // A write through a vertical view is computed in the neighbouring row, so every
        // source is read there.
        let vertical_write = self.dsts().any(|d| d.from.0 != 0);
        self.srcs().iter().filter_map(move |s| match *s {
            Src::View { plane, dr, .. } if dr != 0 => Some(plane),
            s if vertical_write => s.plane(),
            _ => None,
        })
    }

    /// Redirects, when the transfer writes a plane it also reads from another row,
    /// those reads to `scratch` (which must then hold a copy of the plane).
    pub(super) fn snapshot_self_reads(&mut self, scratch: usize) {
        let Some(p) = self.off_row_reads().find(|&p| self.writes(p)) else {
            return;
        };
        self.snapshot = Some(p);
        for s in &mut self.srcs[..self.nsrc] {
            match s {
                Src::Plane(q) | Src::View { plane: q, .. } if *q == p => *q = scratch,
                _ => {}
            }
        }
    }
}

/// Most transfers in one segment (a few dozen statements' worth: the cost of starting a
/// segment, its plan and its band tasks, is shared by that many transfers, while the
/// planes it writes stay at most [`MAX_WRITTEN`]).
pub(super) const MAX_FUSED: usize = 64;
/// Most planes one segment writes (the band views are fixed-size arrays): the six
/// general registers of SCAMP-5 and `NEWS`, plus one spare.
pub(super) const MAX_WRITTEN: usize = 8;

/// The distinct planes `segment` writes, in order of first write (`usize::MAX` pads).
pub(super) fn written_planes(segment: &[Transfer]) -> [usize; MAX_WRITTEN] {
    let mut out = [usize::MAX; MAX_WRITTEN];
    let mut n = 0;
    for d in segment.iter().flat_map(Transfer::dsts) {
        if !out[..n].contains(&d.plane) {
            out[n] = d.plane;
            n += 1;
        }
    }
    out
}

/// Whether `t` can run in the same band pass as `segment` (see the module docs).
pub(super) fn joins(segment: &[Transfer], t: &Transfer) -> bool {
    if segment.is_empty() {
        return true;
    }
    if segment.len() >= MAX_FUSED || t.snapshot.is_some() || segment[0].snapshot.is_some() {
        return false;
    }
    let reads_written = segment
        .iter()
        .any(|s| t.off_row_reads().any(|p| s.writes(p)) || s.off_row_reads().any(|p| t.writes(p)));
    let mut planes = written_planes(segment)
        .into_iter()
        .filter(|&p| p != usize::MAX)
        .count();
    for d in t.dsts() {
        if !segment.iter().any(|s| s.writes(d.plane)) {
            planes += 1;
        }
    }
    !reads_written && planes <= MAX_WRITTEN
}
