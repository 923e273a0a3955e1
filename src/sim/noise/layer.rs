//! The noise model as a write layer: every value a bus instruction writes is perturbed
//! here (docs/noise.md):
//!
//! `v' = clip(v (1 + g_n + G[pe]) + o_n + O[pe][reg] + N(0, s_t^2 + (s_s v)^2))`
//!
//! with the extra error of a DAC load (a transfer reading `IN`) or a capture (reading
//! `PIX`), decay of values between writes, and the readout path (readout noise, 8-bit
//! ADC). The fixed pattern is a pure function of (chip seed, PE, register) and the
//! temporal noise a pure function of (run seed, instruction, plane, row, column), so a
//! run is reproducible bit for bit from (profile, chip seed, run seed) whatever the
//! number of threads.

use super::bf16;
use super::bus_kind::BusKind;
use super::chip::Chip;
use super::profile::Profile;
use super::rng::{self, stream};
use super::term::Term;
use crate::isa::Reg;
use crate::sim::array::N;
use crate::sim::layer::{ReadCtx, RowWrite, WriteCtx, WriteLayer};
use crate::sim::machine::bus_value;
use crate::sim::run::DEFAULT_CLOCK_HZ;
use crate::sim::vector_unit::{run_widest, Kernel};
use std::sync::{Arc, OnceLock};

/// The analogue error model of a profile on one simulated chip, for one run.
pub struct NoiseModel {
    profile: Profile,
    chip_seed: u64,
    run_seed: u64,
    clock_hz: f64,
    exact: bool,
    /// Per [`BusKind`], by index.
    kinds: [Term; BusKind::COUNT],
    load: Term,
    /// The uncorrected load's extra error, when the profile has any.
    uncorrected: Option<Uncorrected>,
    capture: Term,
    saturation: Option<(f32, f32)>,
    decay: Option<(f64, f32)>,
    /// The chip's fixed pattern (unit planes, shared with every model of the chip).
    chip: Arc<Chip>,
    /// Per temporal stream tag (see [`stream`]): the run seed mixed with the tag, the
    /// part of every row key of that stream that [`rng::temporal_key`] completes.
    temporal_keys: [u64; stream::TEMPORAL_STREAMS],
}

impl NoiseModel {
    /// The model of `profile` on chip `chip_seed`, temporal noise from `run_seed`, at the
    /// default clock (for decay).
    pub fn new(profile: &Profile, chip_seed: u64, run_seed: u64) -> NoiseModel {
        let kinds = BusKind::ALL.map(|k| Term::of_transfer(profile.transfer.kind(k), profile));
        NoiseModel {
            exact: profile.is_exact(),
            kinds,
            load: Term::of_injection(&profile.load),
            uncorrected: (profile.load_uncorrected != Default::default()).then(|| Uncorrected {
                offset: profile.load_uncorrected.offset as f32,
                common: profile.load_uncorrected.noise_common as f32,
                pattern: OnceLock::new(),
            }),
            capture: Term::of_injection(&profile.capture),
            saturation: profile
                .saturation
                .as_ref()
                .map(|s| (s.low as f32, s.high as f32)),
            decay: profile
                .decay
                .as_ref()
                .filter(|d| d.per_us > 0.0)
                .map(|d| (d.per_us, d.toward as f32)),
            profile: profile.clone(),
            chip_seed,
            run_seed,
            clock_hz: DEFAULT_CLOCK_HZ,
            chip: Chip::shared(chip_seed),
            temporal_keys: std::array::from_fn(|tag| rng::stream_key(run_seed, tag as u64)),
        }
    }

    /// Sets the array clock, which turns decay per microsecond into decay per
    /// instruction.
    pub fn with_clock(mut self, clock_hz: f64) -> NoiseModel {
        if clock_hz.is_finite() && clock_hz > 0.0 {
            self.clock_hz = clock_hz;
        }
        self
    }

    /// The profile.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The chip (fixed-pattern) seed.
    pub fn chip_seed(&self) -> u64 {
        self.chip_seed
    }

    /// The run (temporal-noise) seed.
    pub fn run_seed(&self) -> u64 {
        self.run_seed
    }

    /// Draws every fixed-pattern plane now rather than on first use (so that timing a
    /// run does not include drawing the chip): the transfer planes of `general`
    /// registers and `NEWS`, the load's and the capture's.
    pub fn prepare(&self, general: usize) {
        let mut regs: Vec<Reg> = (0..general.min(256)).map(|i| Reg::Gen(i as u8)).collect();
        regs.push(Reg::News);
        for &reg in &regs {
            self.chip.transfer(reg);
        }
        if !self.load.is_identity() {
            self.chip.load();
        }
        if !self.capture.is_identity() {
            self.chip.capture();
        }
        if let Some(u) = &self.uncorrected {
            self.uncorrected_pattern(u);
        }
    }

    /// The uncorrected load's pattern, negated for the transfer that reads `IN`.
    fn uncorrected_pattern<'a>(&'a self, u: &'a Uncorrected) -> &'a [f32] {
        u.pattern.get_or_init(|| {
            let mut p = self
                .chip
                .uncorrected_pattern(&self.profile.load_uncorrected);
            p.iter_mut().for_each(|v| *v = -*v);
            p
        })
    }

    /// The uncorrected load's systematic offset and this load's common deviate, negated
    /// like the pattern (one deviate per instruction, so every row of the write shares
    /// it).
    fn uncorrected_offset(&self, u: &Uncorrected, seq: u64) -> f32 {
        let key = rng::row_key(self.run_seed, stream::UNCORRECTED_COMMON, seq, 0, 0);
        let z = rng::normal(rng::lane_hash(key, 0));
        -(u.offset + u.common * z)
    }

    /// Term `term` on row `row` of a write, with that row of its packed gain and offset
    /// deviates, its temporal noise from stream `noise`.
    #[inline(always)]
    fn row_term<'a>(
        &self,
        term: &Term,
        pattern: &'a [u32],
        noise: u64,
        ctx: &WriteCtx,
        row: usize,
    ) -> RowTerm<'a> {
        let noise = (term.noise2 > 0.0 || term.signal2 > 0.0).then(|| {
            let key =
                rng::temporal_key(self.temporal_keys[noise as usize], ctx.seq, ctx.plane, row);
            rng::temporal_row(key)
        });
        RowTerm {
            pattern: one_row(&pattern[row * N..(row + 1) * N]),
            factors: Factors::of(term),
            noise,
            sd: term.noise2.sqrt(),
            noise2: term.noise2,
            signal2: term.signal2,
        }
    }

    /// The write of `ctx` resolved for [`FusedWrite`], when it is the common case: the
    /// transfer's term alone (no DAC load or capture), noise that does not depend on the
    /// value, and clipping.
    pub fn fused(&self, ctx: &WriteCtx) -> Option<FusedWrite<'_>> {
        let term = &self.kinds[ctx.kind().index()];
        let load = ctx.reads_in && !self.load.is_identity();
        let uncorrected = self.uncorrected.is_some() && ctx.in_uncorrected;
        let capture = ctx.reads_pix && !self.capture.is_identity();
        let limits = self.saturation?;
        if load || uncorrected || capture || term.signal2 != 0.0 {
            return None;
        }
        let noisy = term.noise2 > 0.0;
        let stream_key = self.temporal_keys[stream::TEMPORAL as usize];
        Some(FusedWrite {
            pattern: self.chip.transfer(ctx.reg),
            factors: Factors::of(term),
            noise: noisy.then(|| rng::write_key(stream_key, ctx.seq, ctx.plane)),
            sd: term.noise2.sqrt(),
            limits,
        })
    }

    /// The body of [`WriteLayer::perturb`], inlined into one copy per vector unit: row
    /// after row, [`NoiseModel::perturb_row`]. When several rows come at once, every
    /// clip mark is written, so that the caller can take them all when any is set.
    #[inline(always)]
    fn perturb_rows(&self, ctx: &WriteCtx, w: RowWrite) -> u64 {
        let rows = w.src.len() / N;
        let mut n = 0;
        for i in 0..rows {
            let r = i * N..(i + 1) * N;
            let clipped = &mut w.clipped[r.clone()];
            let row = RowWrite {
                row: w.row + i,
                src: &w.src[r.clone()],
                out: &mut w.out[r.clone()],
                mask: w.mask.map(|m| &m[r]),
                clipped: &mut *clipped,
            };
            let k = self.perturb_row(ctx, row);
            if k == 0 && rows > 1 {
                clipped.fill(false);
            }
            n += k;
        }
        n
    }

    /// One row: the transfer's term, then the load's and the capture's when the
    /// transfer reads `IN` or `PIX`, then clipping.
    #[inline(always)]
    fn perturb_row(&self, ctx: &WriteCtx, w: RowWrite) -> u64 {
        let (src, out, clipped) = (one_row(w.src), one_row_mut(w.out), one_row_mut(w.clipped));
        let mask = w.mask.map(one_row);
        let transfer = &self.kinds[ctx.kind().index()];
        let load = ctx.reads_in && !self.load.is_identity();
        let uncorrected = self.uncorrected.as_ref().filter(|_| ctx.in_uncorrected);
        let capture = ctx.reads_pix && !self.capture.is_identity();
        let pattern = self.chip.transfer(ctx.reg);
        let first = self.row_term(transfer, pattern, stream::TEMPORAL, ctx, w.row);
        let plain = !load && uncorrected.is_none() && !capture;
        if let (true, Some((lo, hi))) = (plain, self.saturation) {
            // The common case in one pass: the transfer's term and clipping.
            return first.apply_clipped(src, out, mask, clipped, (lo, hi));
        }
        first.apply(src, out);
        if load {
            let t = self.row_term(
                &self.load,
                self.chip.load(),
                stream::TEMPORAL_LOAD,
                ctx,
                w.row,
            );
            t.apply(&out.clone(), out);
        }
        if let Some(u) = uncorrected {
            // An offset per load and the structured pattern; no gain, no noise of its own.
            let offset = self.uncorrected_offset(u, ctx.seq);
            let pattern = &self.uncorrected_pattern(u)[w.row * N..(w.row + 1) * N];
            for (o, p) in out.iter_mut().zip(pattern) {
                *o += offset + p;
            }
        }
        if capture {
            let t = self.row_term(
                &self.capture,
                self.chip.capture(),
                stream::TEMPORAL_CAPTURE,
                ctx,
                w.row,
            );
            t.apply(&out.clone(), out);
        }
        match self.saturation {
            Some(limits) => clip_row(out, mask, clipped, limits),
            None => 0,
        }
    }
}

/// The uncorrected load's extra error (see [`crate::sim::noise::profile::UncorrectedLoad`]).
struct Uncorrected {
    offset: f32,
    /// Standard deviation of the deviate per load shared by every PE.
    common: f32,
    /// The structured pattern, negated, drawn on first use.
    pattern: OnceLock<Vec<f32>>,
}

/// One write through the model resolved once (see [`NoiseModel::fused`]), so that the
/// bus pass can apply it row by row inside its own loop, while the row of bus values is
/// still in the core's first-level cache, rather than through a call per band.
pub struct FusedWrite<'a> {
    /// The gain deviates and the receiver's offset deviates, packed.
    pattern: &'a [u32],
    factors: Factors,
    /// The write's part of the temporal-noise row keys (see [`rng::write_key`]), when
    /// the term has temporal noise.
    noise: Option<u64>,
    /// `s_t`.
    sd: f32,
    limits: (f32, f32),
}

impl FusedWrite<'_> {
    /// The term on row `row`.
    #[inline(always)]
    fn row_term(&self, row: usize) -> RowTerm<'_> {
        RowTerm {
            pattern: one_row(&self.pattern[row * N..(row + 1) * N]),
            factors: self.factors,
            noise: self
                .noise
                .map(|w| rng::temporal_row(rng::row_of_write(w, row))),
            sd: self.sd,
            noise2: self.sd * self.sd,
            signal2: 0.0,
        }
    }

    /// `out :=` row `row` of bus values `src` through the model, clipped; marks in
    /// `clipped` which entries were clipped when any was, and returns how many.
    #[inline(always)]
    pub fn row(&self, row: usize, src: &[f32], out: &mut [f32], clipped: &mut [bool]) -> u64 {
        let t = self.row_term(row);
        t.apply_clipped(
            one_row(src),
            one_row_mut(out),
            None,
            one_row_mut(clipped),
            self.limits,
        )
    }

    /// [`FusedWrite::row`] for the only receiver of a transfer, with the bus value
    /// ([`bus_value`] of one receiver) taken from the source rows `srcs` (at most four)
    /// in the same pass: the row of bus values is never stored.
    #[inline(always)]
    pub fn row_from_sources(
        &self,
        row: usize,
        srcs: &[&[f32]],
        out: &mut [f32],
        clipped: &mut [bool],
    ) -> u64 {
        let t = self.row_term(row);
        let (out, clipped) = (one_row_mut(out), one_row_mut(clipped));
        let limits = self.limits;
        match *srcs {
            [] => t.clipped_by(|_| bus_value::<f32>(&[], 1), out, clipped, limits),
            [a] => {
                let a = one_row(a);
                t.clipped_by(|c| bus_value(&[a[c]], 1), out, clipped, limits)
            }
            [a, b] => {
                let (a, b) = (one_row(a), one_row(b));
                t.clipped_by(|c| bus_value(&[a[c], b[c]], 1), out, clipped, limits)
            }
            [a, b, c3] => {
                let (a, b, c3) = (one_row(a), one_row(b), one_row(c3));
                let v = |c: usize| bus_value(&[a[c], b[c], c3[c]], 1);
                t.clipped_by(v, out, clipped, limits)
            }
            [a, b, c3, d] => {
                let (a, b, c3, d) = (one_row(a), one_row(b), one_row(c3), one_row(d));
                let v = |c: usize| bus_value(&[a[c], b[c], c3[c], d[c]], 1);
                t.clipped_by(v, out, clipped, limits)
            }
            _ => unreachable!("a bus instruction has at most four sources"),
        }
    }
}

/// One error term on one row of a write: `v (1 + g + pg G) + o + po O + N(0, s_t^2 +
/// (s_s v)^2)`, with the unit deviates `G` and `O` of the chip (packed, see
/// [`bf16`]) and the temporal noise from [`rng::temporal_row`]. Every transfer,
/// load and capture goes through [`perturbed`], the one formula of the model.
struct RowTerm<'a> {
    /// The row of packed gain and offset deviates the term sees.
    pattern: &'a [u32; N],
    factors: Factors,
    /// The window of unit deviates and its sign (`None`: no temporal noise).
    noise: Option<(&'static rng::Window, f32)>,
    /// `s_t`, `s_t^2` and `s_s^2`.
    sd: f32,
    noise2: f32,
    signal2: f32,
}

/// The scalar factors of a term: `1 + g`, `pg`, `o` and `po`.
#[derive(Clone, Copy)]
struct Factors {
    gain1: f32,
    pattern_gain: f32,
    offset: f32,
    pattern_offset: f32,
}

impl Factors {
    fn of(t: &Term) -> Factors {
        Factors {
            gain1: t.gain1,
            pattern_gain: t.pattern_gain,
            offset: t.offset,
            pattern_offset: t.pattern_offset,
        }
    }
}

/// The formula of the model for one PE: `x` through the PE's gain `1 + g + pg G` and
/// offset `o + po O` (unit deviates `G` and `O` packed in `p`), plus `sd` times the
/// deviate `z`: four fused multiply-adds. A fused multiply-add rounds once, the same
/// on every processor and vector unit (in software where the hardware has none), so
/// results do not depend on which copy of a loop runs.
#[inline(always)]
fn perturbed(x: f32, f: Factors, p: u32, sd: f32, z: f32) -> f32 {
    let gain = f.pattern_gain.mul_add(bf16::hi(p), f.gain1);
    let offset = f.pattern_offset.mul_add(bf16::lo(p), f.offset);
    sd.mul_add(z, x.mul_add(gain, offset))
}

/// The bits of an f32 but its sign: ordered as the magnitudes are, as integers.
const MAGNITUDE: u32 = 0x7fff_ffff;

impl RowTerm<'_> {
    /// `out[c] :=` the term applied to `src[c]`.
    #[inline(always)]
    // Indices into fixed-size rows: the loops compile without bounds checks.
    #[allow(clippy::needless_range_loop)]
    fn apply(&self, src: &[f32; N], out: &mut [f32; N]) {
        let (p, f) = (self.pattern, self.factors);
        let Some((z, sign)) = self.noise else {
            for c in 0..N {
                out[c] = perturbed(src[c], f, p[c], 0.0, 0.0);
            }
            return;
        };
        if self.signal2 == 0.0 {
            // The noise does not depend on the value: no square root per PE.
            let sd = self.sd * sign;
            rng::each_deviate(z, |c, z| out[c] = perturbed(src[c], f, p[c], sd, z));
        } else {
            rng::each_deviate(z, |c, z| {
                let x = src[c];
                let sd = (self.noise2 + self.signal2 * x * x).sqrt() * sign;
                out[c] = perturbed(x, f, p[c], sd, z);
            });
        }
    }

    /// [`RowTerm::apply`] and [`clip_row`] in one pass over the row, for a term whose
    /// noise does not depend on the value.
    #[inline(always)]
    fn apply_clipped(
        &self,
        src: &[f32; N],
        out: &mut [f32; N],
        mask: Option<&[bool; N]>,
        clipped: &mut [bool; N],
        (lo, hi): (f32, f32),
    ) -> u64 {
        if self.signal2 != 0.0 {
            self.apply(src, out);
            return clip_row(out, mask, clipped, (lo, hi));
        }
        match mask {
            None => self.clipped_by(|c| src[c], out, clipped, (lo, hi)),
            Some(m) => self.masked_clipped(src, out, m, clipped, (lo, hi)),
        }
    }

    /// [`RowTerm::apply_clipped`] without a mask, of the values `x(c)`, for a term whose
    /// noise does not depend on the value. The hot loop stores the values as they come
    /// and keeps only the row's largest magnitude (as bits: an integer maximum); the
    /// rare row that reaches past the nearer limit is then clipped and counted by
    /// [`clip_row`], which gives the same values, clips and count as clipping every
    /// value on the way (a value within the limits is its own clip; a NaN's bits exceed
    /// every finite magnitude's, so it is counted as before).
    #[inline(always)]
    fn clipped_by(
        &self,
        x: impl Fn(usize) -> f32,
        out: &mut [f32; N],
        clipped: &mut [bool; N],
        (lo, hi): (f32, f32),
    ) -> u64 {
        let (p, f) = (self.pattern, self.factors);
        let (z, sign) = self.noise.unwrap_or((&ZEROS, 0.0));
        let sd = self.sd * sign;
        let mut largest = 0u32;
        rng::each_deviate(z, |c, z| {
            let y = perturbed(x(c), f, p[c], sd, z);
            out[c] = y;
            largest = largest.max(y.to_bits() & MAGNITUDE);
        });
        // Every magnitude up to the nearer limit is inside both (when zero is).
        let inside = (-lo).min(hi);
        if inside >= 0.0 && largest <= inside.to_bits() {
            return 0;
        }
        clip_row(out, None, clipped, (lo, hi))
    }

    /// [`RowTerm::apply_clipped`] under a mask.
    #[inline(always)]
    fn masked_clipped(
        &self,
        src: &[f32; N],
        out: &mut [f32; N],
        m: &[bool; N],
        clipped: &mut [bool; N],
        (lo, hi): (f32, f32),
    ) -> u64 {
        let (p, f) = (self.pattern, self.factors);
        let (z, sign) = self.noise.unwrap_or((&ZEROS, 0.0));
        let sd = self.sd * sign;
        rng::each_deviate(z, |c, z| out[c] = perturbed(src[c], f, p[c], sd, z));
        clip_row(out, Some(m), clipped, (lo, hi))
    }
}

/// A row of zero deviates (a term without temporal noise).
static ZEROS: rng::Window = [0; N / 2];

/// Clips a row to `lo..=hi` in place; marks in `clipped` which entries the mask stores
/// were clipped and returns how many.
#[inline(always)]
fn clip_row(
    out: &mut [f32; N],
    mask: Option<&[bool; N]>,
    clipped: &mut [bool; N],
    (lo, hi): (f32, f32),
) -> u64 {
    let mut n = 0u32;
    // One loop per kind of mask, so that a full row loads none.
    match mask {
        None => {
            for c in 0..N {
                let (x, y) = (out[c], clip(out[c], lo, hi));
                clipped[c] = y != x;
                n += u32::from(y != x);
                out[c] = y;
            }
        }
        Some(m) => {
            for c in 0..N {
                let (x, y) = (out[c], clip(out[c], lo, hi));
                let hit = m[c] & (y != x);
                clipped[c] = hit;
                n += u32::from(hit);
                out[c] = y;
            }
        }
    }
    u64::from(n)
}

/// A row as a fixed-size array, so that column loops need no bounds checks.
fn one_row<T>(row: &[T]) -> &[T; N] {
    row.try_into().expect("a row has N columns")
}

/// [`one_row`], mutable.
fn one_row_mut<T>(row: &mut [T]) -> &mut [T; N] {
    row.try_into().expect("a row has N columns")
}

/// `x` limited to `lo..=hi` (`lo <= hi`). Two compare-and-selects, each of the form of
/// one `min`/`max` instruction, rather than `f32::clamp` (whose NaN handling costs a
/// blend): the result is that of `if x < lo { lo } else if x > hi { hi } else { x }`
/// for every `x`, NaN and signed zeros included.
#[inline(always)]
fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    let below_hi = if hi < x { hi } else { x };
    if below_hi < lo {
        lo
    } else {
        below_hi
    }
}

/// One row write through the model, as a [`Kernel`] compiled per vector unit.
struct Perturb<'m, 'w> {
    model: &'m NoiseModel,
    ctx: &'m WriteCtx,
    write: RowWrite<'w>,
}

impl Kernel for Perturb<'_, '_> {
    type Output = u64;

    #[inline(always)]
    fn run(self) -> u64 {
        self.model.perturb_rows(self.ctx, self.write)
    }
}

impl WriteLayer for NoiseModel {
    fn perturb(&self, ctx: &WriteCtx, write: RowWrite) -> u64 {
        run_widest(Perturb {
            model: self,
            ctx,
            write,
        })
    }

    fn fused(&self, ctx: &WriteCtx) -> Option<FusedWrite<'_>> {
        NoiseModel::fused(self, ctx)
    }

    fn is_exact(&self) -> bool {
        self.exact
    }

    fn decay(&self, idle_cycles: u64) -> Option<(f32, f32)> {
        let (per_us, toward) = self.decay?;
        let us = idle_cycles as f64 / self.clock_hz * 1e6;
        Some(((-per_us * us).exp() as f32, toward))
    }

    fn has_readout(&self) -> bool {
        self.profile.readout.enabled
    }

    fn readout(&self, ctx: &ReadCtx, row: usize, vals: &mut [f32]) {
        let r = &self.profile.readout;
        if !r.enabled {
            return;
        }
        if r.noise > 0.0 {
            let mut noise = [0f32; N];
            let key = rng::row_key(
                self.run_seed,
                stream::READOUT,
                ctx.seq,
                ctx.plane as u64,
                row,
            );
            rng::fill_normals(key, &mut noise);
            let s = r.noise as f32;
            vals.iter_mut().zip(&noise).for_each(|(v, n)| *v += s * n);
        }
        if r.pattern_offset > 0.0 {
            let p = self.chip.readout();
            let s = r.pattern_offset as f32;
            vals.iter_mut()
                .zip(&p[row * N..(row + 1) * N])
                .for_each(|(v, o)| *v += s * o);
        }
        let (lo, hi) = (r.low as f32, r.high as f32);
        for v in vals.iter_mut() {
            let q = if r.quantise { v.round() } else { *v };
            *v = q.clamp(lo, hi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Dir;

    /// A write of `receivers` receivers and `sources` sources into `reg`.
    fn ctx(seq: u64, reg: Reg, receivers: usize, sources: usize) -> WriteCtx {
        WriteCtx {
            seq,
            reg,
            plane: 3,
            receivers,
            sources,
            reads_in: false,
            reads_pix: false,
            in_uncorrected: false,
        }
    }

    #[test]
    fn fused_rows_match_the_layer_write_for_write() {
        let profile = Profile::load("scamp5").unwrap();
        let model = NoiseModel::new(&profile, 7, 8);
        let writes = [
            ctx(5, Reg::Gen(2), 1, 2),
            ctx(6, Reg::News, 2, 1),
            ctx(9, Reg::X(Dir::East), 3, 1),
        ];
        for (i, c) in writes.iter().enumerate() {
            let fused = model.fused(c).expect("scamp5 transfers fuse");
            for row in [0, 77, 255] {
                // Values spread past the saturation limits on both sides.
                let src: Vec<f32> = (0..N)
                    .map(|k| ((k * 37 + row * 11 + i) % 301) as f32 - 150.0)
                    .collect();
                let (mut want, mut want_hit) = (vec![0f32; N], vec![false; N]);
                let n = model.perturb(
                    c,
                    RowWrite {
                        row,
                        src: &src,
                        out: &mut want,
                        mask: None,
                        clipped: &mut want_hit,
                    },
                );
                let (mut got, mut got_hit) = (vec![0f32; N], vec![false; N]);
                assert_eq!(fused.row(row, &src, &mut got, &mut got_hit), n);
                assert!(n > 0, "the row reaches the limits");
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want));
                assert_eq!(got_hit, want_hit);
                assert!(got.iter().zip(&src).any(|(g, s)| g != s));
            }
        }
        // Loads and captures take extra terms: not fused.
        let load = WriteCtx {
            reads_in: true,
            ..ctx(1, Reg::Gen(0), 1, 1)
        };
        assert!(model.fused(&load).is_none());
    }
}
