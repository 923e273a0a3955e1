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

use super::chip::Chip;
use super::profile::Profile;
use super::term::Term;
use crate::isa::Reg;
use crate::sim::clock::DEFAULT_CLOCK_HZ;
use crate::sim::dims::N;
use crate::sim::layer::fused::{clip_row, one_row, one_row_mut, RowTerm};
use crate::sim::layer::rng::{self, stream};
use crate::sim::layer::saturate::Saturate;
use crate::sim::layer::{BusKind, FusedWrite, ReadCtx, RowWrite, WriteCtx, WriteLayer};
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
    saturation: Option<Saturate>,
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
            saturation: profile.saturation.as_ref().map(|s| s.resolve()),
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
            factors: term.factors(),
            noise,
            sd: term.noise2.sqrt(),
            noise2: term.noise2,
            signal2: term.signal2,
        }
    }

    /// The write of `ctx` resolved for [`FusedWrite`], when it is the common case: the
    /// transfer's term alone (no DAC load or capture), noise that does not depend on the
    /// value, and clipping.
    pub(crate) fn fused(&self, ctx: &WriteCtx) -> Option<FusedWrite<'_>> {
        let term = &self.kinds[ctx.kind().index()];
        let load = ctx.reads_in && !self.load.is_identity();
        let uncorrected = self.uncorrected.is_some() && ctx.in_uncorrected;
        let capture = ctx.reads_pix && !self.capture.is_identity();
        let sat = self.saturation?;
        if load || uncorrected || capture || term.signal2 != 0.0 {
            return None;
        }
        let noisy = term.noise2 > 0.0;
        let stream_key = self.temporal_keys[stream::TEMPORAL as usize];
        Some(FusedWrite {
            pattern: self.chip.transfer(ctx.reg),
            factors: term.factors(),
            noise: noisy.then(|| rng::write_key(stream_key, ctx.seq, ctx.plane)),
            sd: term.noise2.sqrt(),
            sat,
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
        if let (true, Some(sat)) = (plain, self.saturation) {
            // The common case in one pass: the transfer's term and saturation.
            return first.apply_clipped(src, out, mask, clipped, sat);
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
            Some(sat) => clip_row(out, mask, clipped, sat),
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
        let hard = Profile::load("scamp5").unwrap();
        let mut soft = hard.clone();
        soft.saturation = Some(crate::sim::noise::Saturation {
            knee_low: -100.0,
            knee_high: 90.0,
            ..crate::sim::noise::Saturation::hard(-140.0, 130.0)
        });
        for profile in [hard, soft] {
            fused_matches_layer(&profile);
        }
    }

    fn fused_matches_layer(profile: &Profile) {
        let model = NoiseModel::new(profile, 7, 8);
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
