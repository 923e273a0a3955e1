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

use super::profile::{Injection, Profile, Transfer};
use super::rng::{self, stream};
use crate::isa::Reg;
use crate::sim::array::N;
use crate::sim::layer::{ReadCtx, WriteCtx, WriteLayer};
use crate::sim::run::DEFAULT_CLOCK_HZ;
use std::sync::OnceLock;

/// Fixed-pattern offset planes: one per general register (`Reg::Gen(0..=255)`) and one
/// for `NEWS`.
const OFFSET_SLOTS: usize = 257;

/// Transfer kinds: `bus` with 0..4 sources, `bus2`, `bus3`.
const KINDS: usize = 7;

/// One error term, resolved to the f32 factors the row kernel uses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Term {
    /// `1 + gain`.
    gain1: f32,
    offset: f32,
    /// Standard deviation of the per-PE gain deviation seen by this term.
    pattern_gain: f32,
    /// Standard deviation of the per-PE offset deviation seen by this term.
    pattern_offset: f32,
    /// `s_t^2` and `s_s^2`.
    noise2: f32,
    signal2: f32,
}

impl Term {
    fn of_transfer(t: &Transfer, p: &Profile) -> Term {
        Term {
            gain1: (1.0 + t.gain) as f32,
            offset: t.offset as f32,
            pattern_gain: (t.pattern * p.fixed_pattern.gain) as f32,
            pattern_offset: (t.pattern * p.fixed_pattern.offset) as f32,
            noise2: (t.noise * t.noise) as f32,
            signal2: (t.noise_signal * t.noise_signal) as f32,
        }
    }

    fn of_injection(i: &Injection) -> Term {
        Term {
            gain1: (1.0 + i.gain) as f32,
            offset: i.offset as f32,
            pattern_gain: i.pattern_gain as f32,
            pattern_offset: i.pattern_offset as f32,
            noise2: (i.noise * i.noise) as f32,
            signal2: (i.noise_signal * i.noise_signal) as f32,
        }
    }

    fn is_identity(&self) -> bool {
        *self
            == Term {
                gain1: 1.0,
                ..Term::default()
            }
    }

    fn has_noise(&self) -> bool {
        self.noise2 > 0.0 || self.signal2 > 0.0
    }
}

/// The analogue error model of a profile on one simulated chip, for one run.
pub struct NoiseModel {
    profile: Profile,
    chip_seed: u64,
    run_seed: u64,
    clock_hz: f64,
    exact: bool,
    /// `bus_0..bus_4`, `bus2`, `bus3`.
    kinds: [Term; KINDS],
    load: Term,
    capture: Term,
    saturation: Option<(f32, f32)>,
    decay: Option<(f64, f32)>,
    /// Unit-normal planes of the fixed pattern, drawn on first use.
    gain_plane: OnceLock<Vec<f32>>,
    offset_planes: Vec<OnceLock<Vec<f32>>>,
    /// Per transfer kind: `gain1 + pattern_gain G` at every PE; per kind and offset
    /// slot: `offset + pattern_offset O`. They depend only on the chip, so they are
    /// computed once rather than on every write.
    gain_factors: [OnceLock<Vec<f32>>; KINDS],
    offset_terms: Vec<OnceLock<Vec<f32>>>,
    load_planes: OnceLock<(Vec<f32>, Vec<f32>)>,
    capture_planes: OnceLock<(Vec<f32>, Vec<f32>)>,
    readout_plane: OnceLock<Vec<f32>>,
}

impl NoiseModel {
    /// The model of `profile` on chip `chip_seed`, temporal noise from `run_seed`, at the
    /// default clock (for decay).
    pub fn new(profile: &Profile, chip_seed: u64, run_seed: u64) -> NoiseModel {
        let t = &profile.transfer;
        let kinds = [
            &t.bus_0, &t.bus_1, &t.bus_2, &t.bus_3, &t.bus_4, &t.bus2, &t.bus3,
        ]
        .map(|k| Term::of_transfer(k, profile));
        NoiseModel {
            exact: profile.is_exact(),
            kinds,
            load: Term::of_injection(&profile.load),
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
            gain_plane: OnceLock::new(),
            offset_planes: (0..OFFSET_SLOTS).map(|_| OnceLock::new()).collect(),
            gain_factors: Default::default(),
            offset_terms: (0..KINDS * OFFSET_SLOTS).map(|_| OnceLock::new()).collect(),
            load_planes: OnceLock::new(),
            capture_planes: OnceLock::new(),
            readout_plane: OnceLock::new(),
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

    fn gain_plane(&self) -> &[f32] {
        self.gain_plane
            .get_or_init(|| rng::normal_plane(self.chip_seed, stream::FP_GAIN, 0, N, N))
    }

    fn offset_plane(&self, reg: Reg) -> &[f32] {
        let slot = offset_slot(reg);
        self.offset_planes[slot]
            .get_or_init(|| rng::normal_plane(self.chip_seed, stream::FP_OFFSET, slot as u64, N, N))
    }

    /// `gain1 + pattern_gain G` of transfer kind `kind` at every PE (the same f32
    /// operations the row kernel would do per write).
    fn gain_factors(&self, kind: usize) -> &[f32] {
        self.gain_factors[kind].get_or_init(|| {
            let t = self.kinds[kind];
            let g = self.gain_plane();
            g.iter().map(|&g| t.gain1 + t.pattern_gain * g).collect()
        })
    }

    /// `offset + pattern_offset O[reg]` of transfer kind `kind` at every PE.
    fn offset_terms(&self, kind: usize, reg: Reg) -> &[f32] {
        self.offset_terms[kind * OFFSET_SLOTS + offset_slot(reg)].get_or_init(|| {
            let t = self.kinds[kind];
            let o = self.offset_plane(reg);
            o.iter().map(|&o| t.offset + t.pattern_offset * o).collect()
        })
    }

    fn pair<'a>(
        &'a self,
        cell: &'a OnceLock<(Vec<f32>, Vec<f32>)>,
        g: u64,
        o: u64,
    ) -> (&'a [f32], &'a [f32]) {
        let (a, b) = cell.get_or_init(|| {
            (
                rng::normal_plane(self.chip_seed, g, 0, N, N),
                rng::normal_plane(self.chip_seed, o, 0, N, N),
            )
        });
        (a, b)
    }

    /// Draws every fixed-pattern plane now rather than on first use (so that timing a
    /// run does not include drawing the chip).
    pub fn prepare(&self, general: usize) {
        // The per-kind factors draw the gain and offset planes they are made of.
        let regs = (0..general.min(OFFSET_SLOTS - 1)).map(|i| Reg::Gen(i as u8));
        let regs: Vec<Reg> = regs.chain([Reg::News]).collect();
        for kind in 0..KINDS {
            self.gain_factors(kind);
            for &reg in &regs {
                self.offset_terms(kind, reg);
            }
        }
        if !self.load.is_identity() {
            self.pair(&self.load_planes, stream::LOAD_GAIN, stream::LOAD_OFFSET);
        }
        if !self.capture.is_identity() {
            self.pair(
                &self.capture_planes,
                stream::CAPTURE_GAIN,
                stream::CAPTURE_OFFSET,
            );
        }
    }

    /// Applies `term` to one row: `v (gain1 + pg G) + offset + po O + sd n`.
    #[inline(always)]
    fn apply(
        &self,
        term: &Term,
        key_stream: u64,
        ctx: &WriteCtx,
        row: usize,
        vals: &mut [f32],
        (gain, offset): (&[f32], &[f32]),
    ) {
        let mut noise = [0f32; N];
        if term.has_noise() {
            let key = rng::row_key(self.run_seed, key_stream, ctx.seq, ctx.plane as u64, row);
            rng::fill_normals(key, &mut noise);
        }
        let r = row * N..(row + 1) * N;
        let t = *term;
        let rows = vals
            .iter_mut()
            .zip(&gain[r.clone()])
            .zip(&offset[r])
            .zip(&noise);
        // No fused multiply-add: every code path rounds the same way, so results are
        // identical with and without SIMD.
        if t.signal2 == 0.0 {
            // The common case: the noise does not depend on the value, so no square root
            // per PE.
            let sd = t.noise2.sqrt();
            for (((v, &g), &o), &n) in rows {
                let x = *v;
                *v =
                    x * (t.gain1 + t.pattern_gain * g) + (t.offset + t.pattern_offset * o) + sd * n;
            }
        } else {
            for (((v, &g), &o), &n) in rows {
                let x = *v;
                let sd = (t.noise2 + t.signal2 * x * x).sqrt();
                *v =
                    x * (t.gain1 + t.pattern_gain * g) + (t.offset + t.pattern_offset * o) + sd * n;
            }
        }
    }

    /// Transfer kind `kind` and clipping in a single pass over the row, temporal noise
    /// independent of the value (the same arithmetic as [`NoiseModel::apply`] followed
    /// by the clipping of [`NoiseModel::perturb_row`], with the per-PE factors taken
    /// from [`NoiseModel::gain_factors`] and [`NoiseModel::offset_terms`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn fused(
        &self,
        kind: usize,
        ctx: &WriteCtx,
        reg: Reg,
        row: usize,
        src: &[f32; N],
        out: &mut [f32; N],
        mask: Option<&[bool; N]>,
        clipped: &mut [bool; N],
    ) -> u64 {
        let r = row * N..(row + 1) * N;
        let (lo, hi) = self
            .saturation
            .unwrap_or((f32::NEG_INFINITY, f32::INFINITY));
        let t = RowTerm {
            gain: one_row(&self.gain_factors(kind)[r.clone()]),
            offset: one_row(&self.offset_terms(kind, reg)[r]),
            key: rng::row_key(
                self.run_seed,
                stream::TEMPORAL,
                ctx.seq,
                ctx.plane as u64,
                row,
            ),
            sd: self.kinds[kind].noise2.sqrt(),
            lo,
            hi,
        };
        // Only a count in the hot loop (a loop for each kind of mask, so a full row
        // loads none); which PEs were clipped is worked out again in the rare row that
        // has any.
        let mut n = 0u32;
        match mask {
            None => {
                for c in 0..N {
                    let (k, y) = t.at(c, src[c]);
                    out[c] = k;
                    n += u32::from(k != y);
                }
            }
            Some(m) => {
                for c in 0..N {
                    let (k, y) = t.at(c, src[c]);
                    out[c] = k;
                    n += u32::from(m[c] & (k != y));
                }
            }
        }
        if n > 0 {
            for c in 0..N {
                let (k, y) = t.at(c, src[c]);
                clipped[c] = mask.is_none_or(|m| m[c]) & (k != y);
            }
        }
        u64::from(n)
    }

    /// The body of [`WriteLayer::perturb`], inlined into one copy per instruction set.
    #[inline(always)]
    fn perturb_row(
        &self,
        ctx: &WriteCtx,
        row: usize,
        src: &[f32],
        out: &mut [f32],
        mask: Option<&[bool]>,
        clipped: &mut [bool],
    ) -> u64 {
        let kind = match (ctx.receivers, ctx.sources) {
            (2, _) => 5,
            (3.., _) => 6,
            (_, s) => s.min(4),
        };
        let term = self.kinds[kind];
        let reg = if matches!(ctx.reg, Reg::X(_)) {
            Reg::News
        } else {
            ctx.reg
        };
        let (src, out, clipped) = (one_row(src), one_row_mut(out), one_row_mut(clipped));
        let mask = mask.map(one_row);
        let injected = (ctx.reads_in && !self.load.is_identity())
            || (ctx.reads_pix && !self.capture.is_identity());
        if !injected && term.signal2 == 0.0 {
            // The common case in one pass: noise, gain, offset and clipping per PE.
            return self.fused(kind, ctx, reg, row, src, out, mask, clipped);
        }
        out.copy_from_slice(src);
        if !term.is_identity() {
            let planes = (self.gain_plane(), self.offset_plane(reg));
            self.apply(&term, stream::TEMPORAL, ctx, row, out, planes);
        }
        if ctx.reads_in && !self.load.is_identity() {
            let planes = self.pair(&self.load_planes, stream::LOAD_GAIN, stream::LOAD_OFFSET);
            self.apply(&self.load, stream::TEMPORAL_LOAD, ctx, row, out, planes);
        }
        if ctx.reads_pix && !self.capture.is_identity() {
            let planes = self.pair(
                &self.capture_planes,
                stream::CAPTURE_GAIN,
                stream::CAPTURE_OFFSET,
            );
            self.apply(
                &self.capture,
                stream::TEMPORAL_CAPTURE,
                ctx,
                row,
                out,
                planes,
            );
        }
        let Some((lo, hi)) = self.saturation else {
            return 0;
        };
        let mut n = 0u32;
        for c in 0..N {
            let x = out[c];
            let y = clip(x, lo, hi);
            let hit = mask.is_none_or(|m| m[c]) & (y != x);
            clipped[c] = hit;
            n += u32::from(hit);
            out[c] = y;
        }
        u64::from(n)
    }
}

/// One transfer term on one row, resolved for the fused kernel.
struct RowTerm<'a> {
    /// `gain1 + pattern_gain G` per column.
    gain: &'a [f32; N],
    /// `offset + pattern_offset O` per column.
    offset: &'a [f32; N],
    /// The row key of the temporal noise.
    key: u64,
    /// Standard deviation of the temporal noise.
    sd: f32,
    lo: f32,
    hi: f32,
}

impl RowTerm<'_> {
    /// Column `c` receiving `x`: the value stored and the value before clipping.
    #[inline(always)]
    fn at(&self, c: usize, x: f32) -> (f32, f32) {
        let z = rng::normal(rng::premixed_hash(self.key, rng::COLUMN_MIX[c]));
        let y = x * self.gain[c] + self.offset[c] + self.sd * z;
        (clip(y, self.lo, self.hi), y)
    }
}

/// A row as a fixed-size array, so that column loops need no bounds checks.
fn one_row<T>(row: &[T]) -> &[T; N] {
    row.try_into().expect("a row has N columns")
}

/// [`one_row`], mutable.
fn one_row_mut<T>(row: &mut [T]) -> &mut [T; N] {
    row.try_into().expect("a row has N columns")
}

/// The fixed-pattern offset plane of `reg` (general registers have their own, every
/// NEWS cell shares one).
fn offset_slot(reg: Reg) -> usize {
    match reg {
        Reg::Gen(i) => usize::from(i),
        _ => OFFSET_SLOTS - 1,
    }
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

#[cfg(target_arch = "x86_64")]
mod simd {
    //! [`NoiseModel::perturb_row`] compiled for AVX2 and AVX-512 as well, chosen at run
    //! time. The operations and their order are the same in every copy (no fused
    //! multiply-add is introduced), so results are bit-identical on every path.

    use super::{NoiseModel, WriteCtx};

    #[target_feature(enable = "avx2")]
    pub unsafe fn perturb_avx2(
        m: &NoiseModel,
        ctx: &WriteCtx,
        row: usize,
        src: &[f32],
        out: &mut [f32],
        mask: Option<&[bool]>,
        clipped: &mut [bool],
    ) -> u64 {
        m.perturb_row(ctx, row, src, out, mask, clipped)
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
    pub unsafe fn perturb_avx512(
        m: &NoiseModel,
        ctx: &WriteCtx,
        row: usize,
        src: &[f32],
        out: &mut [f32],
        mask: Option<&[bool]>,
        clipped: &mut [bool],
    ) -> u64 {
        m.perturb_row(ctx, row, src, out, mask, clipped)
    }
}

impl WriteLayer for NoiseModel {
    fn perturb(
        &self,
        ctx: &WriteCtx,
        row: usize,
        src: &[f32],
        out: &mut [f32],
        mask: Option<&[bool]>,
        clipped: &mut [bool],
    ) -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::sim::vector_unit::{widest, VectorUnit};
            match widest() {
                // SAFETY: the processor supports the instruction set (detected at run
                // time).
                VectorUnit::Avx512 => {
                    return unsafe { simd::perturb_avx512(self, ctx, row, src, out, mask, clipped) }
                }
                // SAFETY: as above.
                VectorUnit::Avx2 => {
                    return unsafe { simd::perturb_avx2(self, ctx, row, src, out, mask, clipped) }
                }
                VectorUnit::Portable => {}
            }
        }
        self.perturb_row(ctx, row, src, out, mask, clipped)
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
            let p = self
                .readout_plane
                .get_or_init(|| rng::normal_plane(self.chip_seed, stream::READOUT_OFFSET, 0, N, N));
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
