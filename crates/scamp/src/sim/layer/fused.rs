//! A write resolved once into the formula every perturbing layer applies per PE:
//!
//! `v' = sat(v (1 + g + pg G[pe]) + o + po O[pe] + s_t z)`
//!
//! with the unit gain and offset deviates `G` and `O` packed two to a word ([`bf16`])
//! and the temporal deviates `z` from [`rng::temporal_row`]. The bus pass applies a
//! [`FusedWrite`] inline, row by row; the noise model builds its rows of the same
//! formula (`RowTerm`), so the two give the same values bit for bit.

use super::saturate::{Saturate, LANES};
use super::{bf16, rng};
use crate::sim::dims::N;
use crate::sim::machine::bus_value;

/// One write through a layer resolved once (see [`super::WriteLayer::fused`]), so that
/// the bus pass can apply it row by row inside its own loop, while the row of bus values
/// is still in the core's first-level cache, rather than through a call per band.
pub(crate) struct FusedWrite<'a> {
    /// The gain deviates and the receiver's offset deviates, packed (a plane, row after
    /// row).
    pub(crate) pattern: &'a [u32],
    /// The scalar factors of the formula.
    pub(crate) factors: Factors,
    /// The write's part of the temporal-noise row keys (see [`rng::write_key`]), when
    /// the term has temporal noise.
    pub(crate) noise: Option<u64>,
    /// `s_t`.
    pub(crate) sd: f32,
    /// The knees and limits of saturation.
    pub(crate) sat: Saturate,
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

    /// `out :=` row `row` of bus values `src` through the model, saturated; marks in
    /// `clipped` which entries went past a knee when any did, and returns how many.
    #[inline(always)]
    pub(crate) fn row(
        &self,
        row: usize,
        src: &[f32],
        out: &mut [f32],
        clipped: &mut [bool],
    ) -> u64 {
        let t = self.row_term(row);
        t.apply_clipped(
            one_row(src),
            one_row_mut(out),
            None,
            one_row_mut(clipped),
            self.sat,
        )
    }

    /// [`FusedWrite::row`] for the only receiver of a transfer, with the bus value
    /// ([`bus_value`] of one receiver) taken from the source rows `srcs` (at most four)
    /// in the same pass: the row of bus values is never stored.
    #[inline(always)]
    pub(crate) fn row_from_sources(
        &self,
        row: usize,
        srcs: &[&[f32]],
        out: &mut [f32],
        clipped: &mut [bool],
    ) -> u64 {
        let t = self.row_term(row);
        let (out, clipped) = (one_row_mut(out), one_row_mut(clipped));
        let sat = self.sat;
        match *srcs {
            [] => t.clipped_by(|_| bus_value::<f32>(&[], 1), out, clipped, sat),
            [a] => {
                let a = one_row(a);
                t.clipped_by(|c| bus_value(&[a[c]], 1), out, clipped, sat)
            }
            [a, b] => {
                let (a, b) = (one_row(a), one_row(b));
                t.clipped_by(|c| bus_value(&[a[c], b[c]], 1), out, clipped, sat)
            }
            [a, b, c3] => {
                let (a, b, c3) = (one_row(a), one_row(b), one_row(c3));
                let v = |c: usize| bus_value(&[a[c], b[c], c3[c]], 1);
                t.clipped_by(v, out, clipped, sat)
            }
            [a, b, c3, d] => {
                let (a, b, c3, d) = (one_row(a), one_row(b), one_row(c3), one_row(d));
                let v = |c: usize| bus_value(&[a[c], b[c], c3[c], d[c]], 1);
                t.clipped_by(v, out, clipped, sat)
            }
            _ => unreachable!("a bus instruction has at most four sources"),
        }
    }
}

/// One error term on one row of a write: `v (1 + g + pg G) + o + po O + N(0, s_t^2 +
/// (s_s v)^2)`, with the unit deviates `G` and `O` of the chip (packed, see
/// [`bf16`]) and the temporal noise from [`rng::temporal_row`]. Every transfer,
/// load and capture goes through [`perturbed`], the one formula of the model.
pub(crate) struct RowTerm<'a> {
    /// The row of packed gain and offset deviates the term sees.
    pub(crate) pattern: &'a [u32; N],
    pub(crate) factors: Factors,
    /// The window of unit deviates and its sign (`None`: no temporal noise).
    pub(crate) noise: Option<(&'static rng::Window, f32)>,
    /// `s_t`, `s_t^2` and `s_s^2`.
    pub(crate) sd: f32,
    pub(crate) noise2: f32,
    pub(crate) signal2: f32,
}

/// The scalar factors of a term: `1 + g`, `pg`, `o` and `po`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Factors {
    /// `1 + g`: one plus the gain error.
    pub(crate) gain1: f32,
    /// `pg`: the spread of the per-PE gain deviates.
    pub(crate) pattern_gain: f32,
    /// `o`: the offset.
    pub(crate) offset: f32,
    /// `po`: the spread of the per-PE offset deviates.
    pub(crate) pattern_offset: f32,
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
    pub(crate) fn apply(&self, src: &[f32; N], out: &mut [f32; N]) {
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
    pub(crate) fn apply_clipped(
        &self,
        src: &[f32; N],
        out: &mut [f32; N],
        mask: Option<&[bool; N]>,
        clipped: &mut [bool; N],
        sat: Saturate,
    ) -> u64 {
        if self.signal2 != 0.0 {
            self.apply(src, out);
            return clip_row(out, mask, clipped, sat);
        }
        match mask {
            None => self.clipped_by(|c| src[c], out, clipped, sat),
            Some(m) => self.masked_clipped(src, out, m, clipped, sat),
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
        sat: Saturate,
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
        // Every magnitude up to the nearer knee is inside both (when zero is).
        let inside = sat.inside();
        if inside >= 0.0 && largest <= inside.to_bits() {
            return 0;
        }
        clip_row(out, None, clipped, sat)
    }

    /// [`RowTerm::apply_clipped`] under a mask.
    #[inline(always)]
    fn masked_clipped(
        &self,
        src: &[f32; N],
        out: &mut [f32; N],
        m: &[bool; N],
        clipped: &mut [bool; N],
        sat: Saturate,
    ) -> u64 {
        let (p, f) = (self.pattern, self.factors);
        let (z, sign) = self.noise.unwrap_or((&ZEROS, 0.0));
        let sd = self.sd * sign;
        let mut largest = 0u32;
        rng::each_deviate(z, |c, z| {
            let y = perturbed(src[c], f, p[c], sd, z);
            out[c] = y;
            largest = largest.max(y.to_bits() & MAGNITUDE);
        });
        // As in `clipped_by`: a row inside both knees (masked entries or not) is its
        // own clip.
        let inside = sat.inside();
        if inside >= 0.0 && largest <= inside.to_bits() {
            return 0;
        }
        clip_row(out, Some(m), clipped, sat)
    }
}

// A row is whole vectors ([`soften_row`]).
const _: () = assert!(N.is_multiple_of(LANES));

/// A row of zero deviates (a term without temporal noise).
static ZEROS: rng::Window = [0; N / 2];

/// Saturates a row in place (see [`Saturate`]); marks in `clipped` which entries the
/// mask stores went past a knee and returns how many. A hard clip takes the
/// compare-and-select loop, a soft knee the compression; both count a value as past
/// the knee when it is not inside both knees (NaN included).
#[inline(always)]
pub(crate) fn clip_row(
    out: &mut [f32; N],
    mask: Option<&[bool; N]>,
    clipped: &mut [bool; N],
    sat: Saturate,
) -> u64 {
    if sat.is_hard() {
        let (lo, hi) = (sat.lo, sat.hi);
        return mark_row(out, mask, clipped, |x| clip(x, lo, hi), |x, y| y != x);
    }
    soften_row(out, mask, clipped, sat)
}

/// [`clip_row`] for a soft knee. One loop over the row, free of branches and calls,
/// marks the entries past a knee that the mask stores (and counts them), and marks the
/// entries beyond the window the compression leaves unchanged ([`Saturate::plain_lo`]
/// to [`Saturate::plain_hi`], which holds the knees). Then every vector of [`LANES`]
/// entries holding such a mark is compressed whole: the compression works on each
/// value alone and returns the window's values as they are, so each value comes out as
/// compressing it alone gives it. In a row past a knee about half the vectors hold a
/// mark; compressing them whole costs less than gathering the marked entries into
/// vectors and scattering them back.
#[inline(always)]
// Indices into fixed-size rows: the loops compile without bounds checks.
#[allow(clippy::needless_range_loop)]
fn soften_row(
    out: &mut [f32; N],
    mask: Option<&[bool; N]>,
    clipped: &mut [bool; N],
    sat: Saturate,
) -> u64 {
    let (klo, khi) = (sat.knee_lo, sat.knee_hi);
    let (plo, phi) = (sat.plain_lo, sat.plain_hi);
    let mut beyond = [0u8; N];
    let mut n = 0u32;
    // One loop per kind of mask, so that a full row loads none.
    match mask {
        None => {
            for c in 0..N {
                let x = out[c];
                let hit = !(klo <= x && x <= khi);
                clipped[c] = hit;
                n += u32::from(hit);
                beyond[c] = u8::from(!(plo <= x && x <= phi));
            }
        }
        Some(m) => {
            for c in 0..N {
                let x = out[c];
                let hit = m[c] & !(klo <= x && x <= khi);
                clipped[c] = hit;
                n += u32::from(hit);
                beyond[c] = u8::from(!(plo <= x && x <= phi));
            }
        }
    }
    for (xs, marks) in out.chunks_exact_mut(LANES).zip(beyond.chunks_exact(LANES)) {
        // The vector's sixteen marks as one integer: one load and one test.
        let marks: [u8; LANES] = marks.try_into().expect("whole vectors");
        if u128::from_ne_bytes(marks) != 0 {
            sat.soften(xs.try_into().expect("whole vectors"));
        }
    }
    u64::from(n)
}

/// `out[c] := f(out[c])`, marking and counting the entries the mask stores for which
/// `past(x, f(x))` holds.
#[inline(always)]
fn mark_row(
    out: &mut [f32; N],
    mask: Option<&[bool; N]>,
    clipped: &mut [bool; N],
    f: impl Fn(f32) -> f32,
    past: impl Fn(f32, f32) -> bool,
) -> u64 {
    let mut n = 0u32;
    // One loop per kind of mask, so that a full row loads none.
    match mask {
        None => {
            for c in 0..N {
                let (x, y) = (out[c], f(out[c]));
                let hit = past(x, y);
                clipped[c] = hit;
                n += u32::from(hit);
                out[c] = y;
            }
        }
        Some(m) => {
            for c in 0..N {
                let (x, y) = (out[c], f(out[c]));
                let hit = m[c] & past(x, y);
                clipped[c] = hit;
                n += u32::from(hit);
                out[c] = y;
            }
        }
    }
    u64::from(n)
}

/// A row as a fixed-size array, so that column loops need no bounds checks.
pub(crate) fn one_row<T>(row: &[T]) -> &[T; N] {
    row.try_into().expect("a row has N columns")
}

/// [`one_row`], mutable.
pub(crate) fn one_row_mut<T>(row: &mut [T]) -> &mut [T; N] {
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

#[cfg(test)]
mod tests {
    use super::super::saturate::Form;
    use super::*;

    #[test]
    fn soften_row_compresses_each_value_as_alone_and_marks_the_stored_hits() {
        let sat = Saturate::knees(-2048.0, 2048.0, -128.0, 128.0, Form::Tanh).resolve_plain();
        // Values inside the knees, between a knee and the end of the unchanged window,
        // and beyond it, on both sides: alone, in runs, in whole vectors, at both ends
        // of the row; a NaN; vectors with nothing beyond the window.
        let out: [f32; N] = std::array::from_fn(|c| match c {
            0 | 255 => 3000.0,
            7 => f32::NAN,
            40..60 => -150.0 - c as f32,
            96..112 => 129.5,
            _ if c % 29 == 0 => 400.0,
            _ if c >= 160 => 120.0,
            _ => 100.0 + (c % 37) as f32 * 9.5,
        });
        let mask: [bool; N] = std::array::from_fn(|c| c % 3 != 1);
        for m in [None, Some(&mask)] {
            let mut got = out;
            let mut hits = [true; N];
            let n = soften_row(&mut got, m, &mut hits, sat);
            let mut want_n = 0;
            for c in 0..N {
                assert_eq!(got[c].to_bits(), sat.soft(out[c]).to_bits(), "column {c}");
                let stored = m.is_none_or(|m| m[c]);
                let hit = stored && !(-128.0..=128.0).contains(&out[c]);
                assert_eq!(hits[c], hit, "column {c}");
                want_n += u64::from(hit);
            }
            assert_eq!(n, want_n);
        }
        assert!(
            out.iter().any(|&x| x > 128.0 && sat.soft(x) == x),
            "a value in the window"
        );
    }
}
