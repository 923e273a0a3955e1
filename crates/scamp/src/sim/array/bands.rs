//! Running a segment of transfers over row bands (see [`super::plan`]): the planes the
//! segment writes are split into bands, one task per band runs every transfer of the
//! segment on its rows, so each band's data is read from memory once per segment and
//! stays in the core's cache between the segment's instructions.

use super::plan::{Dst, Src, Transfer, MAX_WRITTEN};
use super::rows;
use super::N;
use crate::sim::edge::EdgeMode;
use crate::sim::layer::{FusedWrite, RowWrite, WriteLayer};
use crate::sim::vector_unit::{run_widest, Kernel};
use rayon::prelude::*;
use std::cell::Cell;

/// Rows per band: 32 rows of a plane are 32 KiB, so the handful of planes a segment
/// touches stays in L2 while the band runs through the segment, and the 8 bands keep two
/// to eight threads busy.
pub(super) const BAND_ROWS: usize = 32;
/// Bands in the array.
pub(super) const BANDS: usize = N / BAND_ROWS;
/// Rows a segment of same-row transfers written straight into their receivers runs at
/// a time (see [`Band::run`]): the few planes such a segment touches stay in the
/// first-level cache over that many rows, and the work per call (finding the rows,
/// resolving the sources) is spread over that many rows.
const GROUP_ROWS: usize = 4;
/// [`GROUP_ROWS`] for segments written through the noise layer: each of their rows
/// also streams its own window of the temporal-noise table through the first-level
/// cache, so fewer rows at a time keep the segment's rows there.
const FUSED_GROUP_ROWS: usize = 1;

/// What every band reads and nobody writes during a segment.
pub(super) struct Shared<'a> {
    /// Every plane; the ones the segment writes are taken out (empty) while it runs.
    pub(crate) planes: &'a [Vec<f32>],
    /// FLAG, or `None` when it is set everywhere (no mask to apply).
    pub(crate) flag: Option<&'a [u8]>,
    pub(crate) edge: EdgeMode,
    /// The write layer, or `None` when it leaves values exact.
    pub(crate) layer: Option<&'a dyn WriteLayer>,
}

/// The rows of one band of the planes a segment writes (and of their clip maps).
pub(super) struct Band<'a> {
    /// First row of the band.
    pub(crate) first: usize,
    /// Plane index of each written plane (`usize::MAX` pads).
    pub(crate) ids: [usize; MAX_WRITTEN],
    pub(crate) planes: [&'a mut [f32]; MAX_WRITTEN],
    pub(crate) clip_maps: [&'a mut [u8]; MAX_WRITTEN],
}

/// Splits the taken-out planes (and clip maps, empty when not tracked) into bands.
pub(super) fn split<'a>(
    ids: [usize; MAX_WRITTEN],
    planes: &'a mut [Vec<f32>; MAX_WRITTEN],
    clip_maps: &'a mut [Vec<u8>; MAX_WRITTEN],
) -> [Band<'a>; BANDS] {
    let mut p = planes.each_mut().map(|v| v.chunks_mut(BAND_ROWS * N));
    let mut m = clip_maps.each_mut().map(|v| v.chunks_mut(BAND_ROWS * N));
    std::array::from_fn(|b| Band {
        first: b * BAND_ROWS,
        ids,
        // Unused slots (and untracked clip maps) are empty vectors: empty slices here.
        planes: p.each_mut().map(|it| it.next().unwrap_or_default()),
        clip_maps: m.each_mut().map(|it| it.next().unwrap_or_default()),
    })
}

/// Runs `segment` over every band in parallel; returns the clipped writes per written
/// plane slot.
pub(super) fn run(
    shared: &Shared,
    bands: [Band; BANDS],
    segment: &[Transfer],
) -> [u64; MAX_WRITTEN] {
    bands
        .into_par_iter()
        .map(|mut band| band.run_widest(shared, segment))
        .reduce(
            || [0; MAX_WRITTEN],
            |a, b| std::array::from_fn(|i| a[i] + b[i]),
        )
}

/// FLAG := (sum of the sources of `t`) > 0 on the rows from `first` on (`flag` holds
/// those rows of FLAG; `t` only has sources).
pub(super) fn where_rows(shared: &Shared, t: &Transfer, first: usize, flag: &mut [u8]) {
    let band = Band {
        first,
        ids: [usize::MAX; MAX_WRITTEN],
        planes: Default::default(),
        clip_maps: Default::default(),
    };
    let mut shifted = [[0.0; N]; 4];
    let mut sum = [0.0; N];
    for (local, out) in flag.chunks_exact_mut(N).enumerate() {
        let (srcs, k) = band.source_rows(shared, t, first + local, &mut shifted);
        rows::sum_row(&srcs[..k], &mut sum);
        for (f, v) in out.iter_mut().zip(&sum) {
            *f = u8::from(*v > 0.0);
        }
    }
}

/// One band running a segment, as a [`Kernel`] compiled per vector unit.
struct BandPass<'b, 'a, 's> {
    band: &'b mut Band<'a>,
    shared: &'s Shared<'s>,
    segment: &'s [Transfer],
}

impl Kernel for BandPass<'_, '_, '_> {
    type Output = [u64; MAX_WRITTEN];

    #[inline(always)]
    fn run(self) -> [u64; MAX_WRITTEN] {
        self.band.run(self.shared, self.segment)
    }
}

/// Row `r` of a write through a horizontal view (`dc` is -1 or 1) of the bus values in
/// `s.sum`, every PE writing, through `w`: the whole shifted row goes through the layer;
/// the cell the shift does not reach (if any) keeps its value, and a clip there is not
/// counted. Returns the clipped writes (marked in `s.hit` when there are any).
#[inline(always)]
fn shifted_row(
    w: &FusedWrite,
    r: usize,
    dc: i32,
    edge: EdgeMode,
    out: &mut [f32],
    s: &mut Scratch,
) -> u64 {
    let untouched = rows::shift_into(&s.sum, dc, edge, &mut s.vals);
    let kept = untouched.map(|c| {
        s.vals[c] = 0.0;
        out[c]
    });
    let mut n = w.row(r, &s.vals, out, &mut s.hit);
    if let (Some(c), Some(v)) = (untouched, kept) {
        out[c] = v;
        if n > 0 && s.hit[c] {
            s.hit[c] = false;
            n -= 1;
        }
    }
    n
}

/// The row offset of the PEs that compute the value of `t`'s only receiver, when the
/// receiver can take it straight from the sources (see [`Way::FusedDirect`]): one
/// receiver, not a source, written by the PE itself or through a vertical view.
fn fused_direct(t: &Transfer) -> Option<i32> {
    let mut dsts = t.dsts();
    let d = dsts.next()?;
    (dsts.next().is_none() && d.from.1 == 0 && !t.reads(d.plane)).then_some(d.from.0)
}

/// How one transfer of a segment runs on a band.
enum Way<'l> {
    /// Straight into its only receiver's row, exactly (see [`Band::direct_receiver`]).
    Direct(usize),
    /// Straight into its only receiver's row, through the layer's [`FusedWrite`] in the
    /// same pass as the bus sum, which the PEs `dr` rows away compute (0: the PEs' own
    /// register, -1 or 1: a vertical view); the receiver is not a source.
    FusedDirect(usize, FusedWrite<'l>, i32),
    /// Row by row through the layer's [`FusedWrite`] of each receiver (by slot), while
    /// the row of bus values is in the first-level cache (every PE writing); whether
    /// every receiver is the PEs' own register (no view).
    Fused(Box<[Option<(usize, FusedWrite<'l>)>; 3]>, bool),
    /// Row by row, receiver by receiver, with masks and views as needed.
    Rows,
    /// The whole band through the layer in one call per receiver (so the layer's work
    /// per call is spread over many rows).
    Band,
}

thread_local! {
    /// The row buffers of the last band this thread ran, kept for its next band: a
    /// fresh set per band and segment was zeroed (7.7 KiB) a thousand times a frame.
    /// Taken out while a band runs, so a band that starts on this thread meanwhile
    /// makes its own.
    static SCRATCH: Cell<Option<Box<Scratch>>> = const { Cell::new(None) };
}

/// Row buffers of one band task, reused for every row.
struct Scratch {
    /// The bus value at every PE of one row.
    sum: [f32; N],
    /// Sources that are not a row in memory as they stand (shifted or constant).
    shifted: [[f32; N]; 4],
    /// Values, write mask, values through the layer and clip marks of one receiving
    /// row.
    vals: [f32; N],
    mask: [bool; N],
    noisy: [f32; N],
    hit: [bool; N],
    /// Bus values and clip marks of a whole band (allocated when first needed).
    band_sums: Vec<f32>,
    band_hits: Vec<bool>,
}

impl Scratch {
    /// A set of buffers, zeroed.
    fn new() -> Box<Scratch> {
        Box::new(Scratch {
            sum: [0.0; N],
            shifted: [[0.0; N]; 4],
            vals: [0.0; N],
            mask: [false; N],
            noisy: [0.0; N],
            hit: [false; N],
            band_sums: Vec::new(),
            band_hits: Vec::new(),
        })
    }
}

impl Band<'_> {
    /// The slot of `plane` among the written planes.
    fn slot(&self, plane: usize) -> Option<usize> {
        self.ids.iter().position(|&p| p == plane)
    }

    /// Row `r` of `plane`. A written plane is only ever read inside the band (the
    /// segment rule), so its rows come from the band's own slice.
    fn row<'s>(&'s self, shared: &'s Shared, plane: usize, r: usize) -> &'s [f32] {
        match self.slot(plane) {
            Some(i) => {
                let local = r - self.first;
                &self.planes[i][local * N..(local + 1) * N]
            }
            None => &shared.planes[plane][r * N..(r + 1) * N],
        }
    }

    /// [`Band::run`] compiled for the widest vector unit the processor has.
    fn run_widest(&mut self, shared: &Shared, segment: &[Transfer]) -> [u64; MAX_WRITTEN] {
        run_widest(BandPass {
            band: self,
            shared,
            segment,
        })
    }

    /// Runs `segment` on the band with this thread's row buffers (see [`SCRATCH`]).
    #[inline(always)]
    fn run(&mut self, shared: &Shared, segment: &[Transfer]) -> [u64; MAX_WRITTEN] {
        let mut s = SCRATCH.take().unwrap_or_else(Scratch::new);
        let clipped = self.run_with(shared, segment, &mut s);
        SCRATCH.set(Some(s));
        clipped
    }

    /// [`Band::run`] with the row buffers `s` (whatever they hold: every entry is
    /// written before it is read).
    #[inline(always)]
    fn run_with(
        &mut self,
        shared: &Shared,
        segment: &[Transfer],
        s: &mut Scratch,
    ) -> [u64; MAX_WRITTEN] {
        let mut clipped = [0; MAX_WRITTEN];
        let ways: Vec<Way> = segment.iter().map(|t| self.way(shared, t)).collect();
        let rows = self.first..self.first + BAND_ROWS;
        let same_row = |t: &Transfer| t.srcs().iter().all(|s| matches!(s, Src::Plane(_)));
        let in_place = |w: &Way| matches!(w, Way::Direct(_) | Way::FusedDirect(_, _, 0));
        if ways.iter().all(in_place) && segment.iter().all(same_row) {
            // Writes straight into their receivers that read only their own rows: as
            // row after row below, a few rows at a time (the same values: rows never
            // meet).
            if ways.iter().any(|w| matches!(w, Way::FusedDirect(..))) {
                const SPAN: usize = FUSED_GROUP_ROWS * N;
                self.grouped::<SPAN>(shared, segment, &ways, s, &mut clipped);
            } else {
                const SPAN: usize = GROUP_ROWS * N;
                self.grouped::<SPAN>(shared, segment, &ways, s, &mut clipped);
            }
            return clipped;
        }
        if ways.iter().all(|w| !matches!(w, Way::Band)) {
            // Row after row, every transfer of the segment on the row: a row of every
            // plane the segment touches stays in the first-level cache from one transfer
            // to the next. The segment rule makes this order give the same values as
            // transfer after transfer: no transfer reads, from another row, a plane that
            // another transfer of the segment writes.
            for r in rows {
                for (t, way) in segment.iter().zip(&ways) {
                    self.run_row(shared, t, way, r, s, &mut clipped);
                }
            }
            return clipped;
        }
        for (t, way) in segment.iter().zip(&ways) {
            match (way, shared.layer) {
                (Way::Band, Some(layer)) => self.write_band(shared, t, layer, s, &mut clipped),
                _ => {
                    for r in rows.clone() {
                        self.run_row(shared, t, way, r, s, &mut clipped);
                    }
                }
            }
        }
        clipped
    }

    /// How transfer `t` runs on this band.
    fn way<'l>(&self, shared: &Shared<'l>, t: &Transfer) -> Way<'l> {
        match shared.layer {
            Some(layer) if shared.flag.is_none() => {
                let mut fused: [Option<(usize, FusedWrite)>; 3] = [None, None, None];
                for (f, d) in fused.iter_mut().zip(t.dsts()) {
                    let slot = self.slot(d.plane).expect("receivers are written planes");
                    match layer.fused(&d.ctx) {
                        Some(w) => *f = Some((slot, w)),
                        None if t.dsts().all(|d| d.from == (0, 0)) => return Way::Band,
                        None => return Way::Rows,
                    }
                }
                match (fused_direct(t), fused) {
                    (Some(dr), [Some((slot, w)), None, None]) => Way::FusedDirect(slot, w, dr),
                    (_, fused) => Way::Fused(Box::new(fused), t.dsts().all(|d| d.from == (0, 0))),
                }
            }
            None => match self.direct_receiver(shared, t) {
                Some(d) => Way::Direct(self.slot(d.plane).expect("receivers are written planes")),
                None => Way::Rows,
            },
            Some(_) => Way::Rows,
        }
    }

    /// Row `r` of the receivers of `t`, the way `way` says (not [`Way::Band`]).
    #[inline(always)]
    fn run_row(
        &mut self,
        shared: &Shared,
        t: &Transfer,
        way: &Way,
        r: usize,
        s: &mut Scratch,
        clipped: &mut [u64; MAX_WRITTEN],
    ) {
        let local = r - self.first;
        match way {
            Way::Direct(slot) => {
                // The receiving plane leaves the band while its row is written, so the
                // sources (other planes) can be read at the same time.
                let plane = std::mem::take(&mut self.planes[*slot]);
                let (srcs, k) = self.source_rows(shared, t, r, &mut s.shifted);
                rows::bus_row(&srcs[..k], 1, &mut plane[local * N..(local + 1) * N]);
                self.planes[*slot] = plane;
            }
            Way::FusedDirect(slot, w, dr) => {
                let Some(pe_row) = shared.edge.neighbour(r, *dr, N) else {
                    return; // Nothing writes this row: it keeps its values.
                };
                // The receiving plane leaves the band while its row is written, so the
                // sources (other planes) can be read at the same time.
                let plane = std::mem::take(&mut self.planes[*slot]);
                let (srcs, k) = self.source_rows(shared, t, pe_row, &mut s.shifted);
                let out = &mut plane[local * N..(local + 1) * N];
                let n = w.row_from_sources(r, &srcs[..k], out, &mut s.hit);
                self.planes[*slot] = plane;
                if n > 0 {
                    rows::mark_clipped(&mut self.clip_maps[*slot][local * N..], &s.hit);
                    clipped[*slot] += n;
                }
            }
            Way::Fused(fused, true) => {
                // The row's sum comes before any of its writes (the bus reads before it
                // writes; a receiver read from another row is read from its snapshot).
                self.bus_row(shared, t, r, s);
                for (slot, w) in fused.iter().flatten() {
                    let out = &mut self.planes[*slot][local * N..(local + 1) * N];
                    let n = w.row(r, &s.sum, out, &mut s.hit);
                    if n > 0 {
                        rows::mark_clipped(&mut self.clip_maps[*slot][local * N..], &s.hit);
                        clipped[*slot] += n;
                    }
                }
            }
            Way::Fused(fused, false) => {
                // As for the PEs' own registers, with the sum taken in the row the view
                // writes from (receivers fed by the same PE row share one).
                let mut summed = None;
                for (d, (slot, w)) in t.dsts().zip(fused.iter().flatten()) {
                    let Some(pe_row) = shared.edge.neighbour(r, d.from.0, N) else {
                        continue; // Nothing writes this row: it keeps its values.
                    };
                    if summed != Some(pe_row) {
                        self.bus_row(shared, t, pe_row, s);
                        summed = Some(pe_row);
                    }
                    let out = &mut self.planes[*slot][local * N..(local + 1) * N];
                    let n = match d.from.1 {
                        0 => w.row(r, &s.sum, out, &mut s.hit),
                        dc => shifted_row(w, r, dc, shared.edge, out, s),
                    };
                    if n > 0 {
                        rows::mark_clipped(&mut self.clip_maps[*slot][local * N..], &s.hit);
                        clipped[*slot] += n;
                    }
                }
            }
            Way::Rows | Way::Band => {
                // Receivers fed by the same PE row share one sum, computed before any of
                // them is written (the bus reads before it writes).
                let mut summed = None;
                for d in t.dsts() {
                    let Some(pe_row) = shared.edge.neighbour(r, d.from.0, N) else {
                        continue; // Nothing writes this row: it keeps its values.
                    };
                    if summed != Some(pe_row) {
                        self.bus_row(shared, t, pe_row, s);
                        summed = Some(pe_row);
                    }
                    let slot = self.slot(d.plane).expect("receivers are written planes");
                    clipped[slot] += self.store(shared, d, slot, r, pe_row, s);
                }
            }
        }
    }

    /// Every transfer of `segment` (written straight into its receiver, reading its own
    /// rows only, by `ways`) on `SPAN / N` rows of the band after `SPAN / N` rows; adds
    /// the clipped writes to `clipped`.
    #[inline(always)]
    fn grouped<const SPAN: usize>(
        &mut self,
        shared: &Shared,
        segment: &[Transfer],
        ways: &[Way],
        s: &mut Scratch,
        clipped: &mut [u64; MAX_WRITTEN],
    ) {
        for first in (self.first..self.first + BAND_ROWS).step_by(SPAN / N) {
            for (t, way) in segment.iter().zip(ways) {
                match way {
                    Way::Direct(slot) => self.direct_rows::<SPAN>(shared, t, *slot, first),
                    Way::FusedDirect(slot, w, _) => {
                        clipped[*slot] += self.fused_rows::<SPAN>(shared, t, *slot, w, first, s);
                    }
                    _ => unreachable!("only writes straight into their receivers"),
                }
            }
        }
    }

    /// The `SPAN` values from row `first` on of `t`'s only receiver (in `slot`),
    /// exactly, when every source of `t` is a plane read in the same rows.
    #[inline(always)]
    fn direct_rows<const SPAN: usize>(
        &mut self,
        shared: &Shared,
        t: &Transfer,
        slot: usize,
        first: usize,
    ) {
        let local = (first - self.first) * N;
        // The receiving plane leaves the band while its rows are written, so the
        // sources (other planes) can be read at the same time.
        let plane = std::mem::take(&mut self.planes[slot]);
        let srcs = self.source_spans::<SPAN>(shared, t, first);
        let k = t.srcs().len();
        rows::bus_span::<SPAN>(&srcs[..k], 1, &mut plane[local..local + SPAN]);
        self.planes[slot] = plane;
    }

    /// The `SPAN` values from row `first` on of the sources of `t`, every one a plane read
    /// in the same rows (a plane the segment writes from the band's own slice; the
    /// receiver, not a source, may be out of the band).
    #[inline(always)]
    fn source_spans<'s, const SPAN: usize>(
        &'s self,
        shared: &'s Shared,
        t: &Transfer,
        first: usize,
    ) -> [&'s [f32]; 4] {
        let local = (first - self.first) * N;
        let mut spans: [&[f32]; 4] = [&[]; 4];
        for (out, src) in spans.iter_mut().zip(t.srcs()) {
            if let Src::Plane(p) = *src {
                *out = match self.slot(p) {
                    Some(i) => &self.planes[i][local..local + SPAN],
                    None => &shared.planes[p][first * N..first * N + SPAN],
                };
            }
        }
        spans
    }

    /// [`Band::direct_rows`] through the layer's [`FusedWrite`] `w` (the receiver is not
    /// a source); returns the clipped writes.
    #[inline(always)]
    fn fused_rows<const SPAN: usize>(
        &mut self,
        shared: &Shared,
        t: &Transfer,
        slot: usize,
        w: &FusedWrite,
        first: usize,
        s: &mut Scratch,
    ) -> u64 {
        let local = (first - self.first) * N;
        // The receiving plane and its clip map leave the band while its rows are
        // written, so the sources (other planes) can be read at the same time.
        let plane = std::mem::take(&mut self.planes[slot]);
        let map = std::mem::take(&mut self.clip_maps[slot]);
        let spans = self.source_spans::<SPAN>(shared, t, first);
        let k = t.srcs().len();
        let mut n = 0;
        for i in 0..SPAN / N {
            let row = i * N..(i + 1) * N;
            let srcs: [&[f32]; 4] = spans.map(|span| span.get(row.clone()).unwrap_or_default());
            let out = &mut plane[local + row.start..local + row.end];
            let m = w.row_from_sources(first + i, &srcs[..k], out, &mut s.hit);
            if m > 0 {
                rows::mark_clipped(&mut map[local + row.start..], &s.hit);
                n += m;
            }
        }
        self.planes[slot] = plane;
        self.clip_maps[slot] = map;
        n
    }

    /// The receiver of `t` when its values can go straight into the receiving row: the
    /// only receiver, the PE's own register, every PE writing, and not a source.
    fn direct_receiver<'t>(&self, shared: &Shared, t: &'t Transfer) -> Option<&'t Dst> {
        let mut dsts = t.dsts();
        let d = dsts.next()?;
        let only_own = dsts.next().is_none() && d.from == (0, 0);
        (only_own && shared.flag.is_none() && !t.reads(d.plane)).then_some(d)
    }

    /// Every receiver of `t` := the bus value of `t` on every row of the band, through
    /// `layer` in one call per receiver for the whole band (so the layer's work per call
    /// is spread over many rows), when every PE writes its own registers. The sums of
    /// all rows come before any write, as the bus reads before it writes (a receiver
    /// read from another row is read from its snapshot). Adds the clipped writes to
    /// `clipped`.
    #[inline(always)]
    fn write_band(
        &mut self,
        shared: &Shared,
        t: &Transfer,
        layer: &dyn WriteLayer,
        s: &mut Scratch,
        clipped: &mut [u64; MAX_WRITTEN],
    ) {
        s.band_sums.resize(BAND_ROWS * N, 0.0);
        s.band_hits.resize(BAND_ROWS * N, false);
        let band_rows = self.first..self.first + BAND_ROWS;
        for (r, sum) in band_rows.zip(s.band_sums.chunks_exact_mut(N)) {
            let (srcs, k) = self.source_rows(shared, t, r, &mut s.shifted);
            rows::bus_row(&srcs[..k], t.receivers(), sum);
        }
        for d in t.dsts() {
            let slot = self.slot(d.plane).expect("receivers are written planes");
            let plane = std::mem::take(&mut self.planes[slot]);
            let w = RowWrite {
                row: self.first,
                src: &s.band_sums,
                out: &mut plane[..],
                mask: None,
                clipped: &mut s.band_hits,
            };
            let n = layer.perturb(&d.ctx, w);
            if n > 0 {
                let maps = self.clip_maps[slot].chunks_exact_mut(N);
                for (map, hit) in maps.zip(s.band_hits.chunks_exact(N)) {
                    rows::mark_clipped(map, hit);
                }
            }
            self.planes[slot] = plane;
            clipped[slot] += n;
        }
    }

    /// The rows of `t`'s sources as the PEs of row `pe_row` read them, in instruction
    /// order, and how many there are (a view beyond the edge reads nothing: adding it
    /// would add 0). Shifted and constant sources are built in `shifted`.
    #[inline(always)]
    fn source_rows<'s>(
        &'s self,
        shared: &'s Shared,
        t: &Transfer,
        pe_row: usize,
        shifted: &'s mut [[f32; N]; 4],
    ) -> ([&'s [f32]; 4], usize) {
        let mut direct: [Option<&[f32]>; 4] = [None; 4];
        let mut present = [true; 4];
        for (i, src) in t.srcs().iter().enumerate() {
            match *src {
                Src::Plane(p) => direct[i] = Some(self.row(shared, p, pe_row)),
                Src::Const(v) => shifted[i].fill(v),
                Src::View { plane, dr, dc } => match shared.edge.neighbour(pe_row, dr, N) {
                    None => present[i] = false,
                    Some(r) if dc == 0 => direct[i] = Some(self.row(shared, plane, r)),
                    Some(r) => {
                        // A column beyond the edge reads the sum's identity, -0.0.
                        let row = self.row(shared, plane, r);
                        rows::gather(row, dc, shared.edge, &mut shifted[i], -0.0);
                    }
                },
            }
        }
        let shifted: &'s [[f32; N]; 4] = shifted;
        let mut srcs: [&[f32]; 4] = [&[]; 4];
        let mut k = 0;
        for i in 0..t.srcs().len() {
            if present[i] {
                srcs[k] = direct[i].unwrap_or(&shifted[i]);
                k += 1;
            }
        }
        (srcs, k)
    }

    /// `s.sum` := the bus value of `t` at every PE of row `pe_row`.
    #[inline(always)]
    fn bus_row(&self, shared: &Shared, t: &Transfer, pe_row: usize, s: &mut Scratch) {
        let (srcs, k) = self.source_rows(shared, t, pe_row, &mut s.shifted);
        rows::bus_row(&srcs[..k], t.receivers(), &mut s.sum);
    }

    /// Writes `s.sum` (computed at row `pe_row`) into row `r` of the receiver, where the
    /// writing PE's FLAG is set, through the layer. Returns the clipped writes.
    #[inline(always)]
    fn store(
        &mut self,
        shared: &Shared,
        d: &Dst,
        slot: usize,
        r: usize,
        pe_row: usize,
        s: &mut Scratch,
    ) -> u64 {
        let local = r - self.first;
        let out = &mut self.planes[slot][local * N..(local + 1) * N];
        let dc = d.from.1;
        match (shared.flag, shared.layer, dc) {
            // Every PE writes, exactly: a plain (or shifted) copy.
            (None, None, _) => {
                rows::shift_into(&s.sum, dc, shared.edge, out);
                0
            }
            // Every PE writes, perturbed on the way: no mask to build or apply.
            (None, Some(layer), 0) => {
                let w = RowWrite {
                    row: r,
                    src: &s.sum,
                    out,
                    mask: None,
                    clipped: &mut s.hit,
                };
                let n = layer.perturb(&d.ctx, w);
                if n > 0 {
                    rows::mark_clipped(&mut self.clip_maps[slot][local * N..], &s.hit);
                }
                n
            }
            // Every PE writes through a horizontal view: the whole shifted row goes
            // through the layer, no mask needed; the cell the shift does not reach (if
            // any) keeps its value, and a clip there is not counted.
            (None, Some(layer), _) => {
                let untouched = rows::shift_into(&s.sum, dc, shared.edge, &mut s.vals);
                if let Some(c) = untouched {
                    s.vals[c] = 0.0;
                }
                let w = RowWrite {
                    row: r,
                    src: &s.vals,
                    out: &mut s.noisy,
                    mask: None,
                    clipped: &mut s.hit,
                };
                let mut n = layer.perturb(&d.ctx, w);
                if let Some(c) = untouched {
                    s.noisy[c] = out[c];
                    if n > 0 && s.hit[c] {
                        s.hit[c] = false;
                        n -= 1;
                    }
                }
                out.copy_from_slice(&s.noisy);
                if n > 0 {
                    rows::mark_clipped(&mut self.clip_maps[slot][local * N..], &s.hit);
                }
                n
            }
            // Otherwise: values and mask as the receiving row sees them, then a masked
            // store (cells a shifted write does not reach keep their values).
            _ => {
                rows::gather(&s.sum, dc, shared.edge, &mut s.vals, 0.0);
                write_mask(shared, dc, pe_row, s);
                match shared.layer {
                    None => {
                        rows::store_masked(out, &s.vals, &s.mask);
                        0
                    }
                    Some(layer) => {
                        let w = RowWrite {
                            row: r,
                            src: &s.vals,
                            out: &mut s.noisy,
                            mask: Some(&s.mask),
                            clipped: &mut s.hit,
                        };
                        let n = layer.perturb(&d.ctx, w);
                        if n > 0 {
                            rows::mark_clipped(&mut self.clip_maps[slot][local * N..], &s.hit);
                        }
                        rows::store_masked(out, &s.noisy, &s.mask);
                        n
                    }
                }
            }
        }
    }
}

/// `s.mask` := which PEs of the receiving row are written: the writing PEs' FLAG (every
/// PE without one), as the receiving row sees it through a shift `dc`.
#[inline(always)]
fn write_mask(shared: &Shared, dc: i32, pe_row: usize, s: &mut Scratch) {
    match shared.flag {
        Some(flag) => {
            let row = &flag[pe_row * N..(pe_row + 1) * N];
            for (m, f) in s.mask.iter_mut().zip(row) {
                *m = *f == 1;
            }
        }
        None => s.mask.fill(true),
    }
    if dc != 0 {
        let own = s.mask;
        rows::gather(&own, dc, shared.edge, &mut s.mask, false);
    }
}
