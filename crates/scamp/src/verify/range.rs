//! Exact range analysis: the interval every register can reach, after every bus
//! instruction of a program, for any input image whose pixels lie in an input range.
//!
//! A register holds an exact linear combination `k + sum c_o x(p + o)` of input pixels
//! (the symbolic executor gives it). With every pixel free in `lo..=hi`, the extremes are
//! reached pixel by pixel: the largest value takes `hi` where `c > 0` and `lo` where
//! `c < 0`. Registers that are not written keep their interval, so the intervals of the
//! written values (including the `NEWS` temporaries inside a macro) are all there is.

use super::dyadic::Dyadic;
use super::symbolic::{execute_as, Coef, LinComb, SymbolicError};
use crate::isa::{Pos, Program, Reg, Wiring};
use crate::verify::planes::Planes;
use num_traits::ToPrimitive;

/// The interval each input pixel lies in (in "in" units, the full-range capture
/// `p - 128` of a pixel p).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputRange {
    /// Lowest pixel value.
    pub lo: f64,
    /// Highest pixel value.
    pub hi: f64,
}

impl Default for InputRange {
    /// The full-range capture: -128..127.
    fn default() -> Self {
        InputRange {
            lo: -128.0,
            hi: 127.0,
        }
    }
}

impl InputRange {
    /// Largest magnitude of a pixel.
    pub(crate) fn bound(&self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }

    /// `(a, b)` such that a captured full-range value `v` (pixel minus 128) maps onto
    /// this range as `a + b * v`: pixel 0 to `lo`, pixel 255 to `hi`.
    pub(crate) fn full_range_map(&self) -> (f64, f64) {
        let b = (self.hi - self.lo) / 255.0;
        (self.lo + 128.0 * b, b)
    }
}

/// A coefficient as f64 (whatever exact type the symbolic executor uses).
pub(crate) fn coef_f64(c: &Coef) -> f64 {
    c.to_f64().unwrap_or(f64::NAN)
}

/// The interval `lin` spans when every pixel lies in `range`.
pub(crate) fn interval(lin: &LinComb, range: InputRange) -> (f64, f64) {
    let k = coef_f64(&lin.constant);
    let (mut lo, mut hi) = (k, k);
    for c in lin.terms.values() {
        let c = coef_f64(c);
        let (a, b) = (c * range.lo, c * range.hi);
        lo += a.min(b);
        hi += a.max(b);
    }
    (lo, hi)
}

/// The register that reaches the largest magnitude, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peak {
    /// Largest magnitude any written value can reach.
    pub magnitude: f64,
    /// The statement that writes it (none for a program that writes nothing).
    pub(crate) pos: Option<Pos>,
    /// The register written.
    pub(crate) reg: Option<Reg>,
    /// Lowest value any register can reach.
    pub(crate) low: f64,
    /// Highest value any register can reach.
    pub(crate) high: f64,
}

impl Peak {
    /// Whether every value stays within `low..=high`.
    #[cfg(test)]
    fn within(&self, low: f64, high: f64) -> bool {
        self.low >= low - 1e-9 && self.high <= high + 1e-9
    }
}

/// The extremes of every value `program` writes (and of the input itself), for inputs
/// in `range` placed in `input` (and, for a wiring of several input planes, in each of
/// their registers: `peak_planes`).
///
/// Runs on machine integers (`Dyadic`) and, only if a value leaves them, again on
/// exact rationals: both round each coefficient to f64 the same way, so the answer is
/// the same either way.
pub(crate) fn peak(
    program: &Program,
    wiring: Wiring,
    range: InputRange,
) -> Result<Peak, SymbolicError> {
    if wiring.has_planes() {
        return peak_planes(program, &wiring.inputs(), wiring.general, range);
    }
    let Wiring { input, .. } = wiring;
    let mut fast = Tracker::new(input, range);
    let mut exact = true;
    execute_as::<Dyadic>(program, wiring, |pe, d, pos| {
        if !exact {
            return;
        }
        match pe.value(value_reg(d)).interval(range) {
            Some(i) => fast.note(i, d, pos),
            None => exact = false,
        }
    })?;
    if exact {
        return Ok(fast.peak);
    }
    peak_rational(program, wiring, range)
}

/// [`peak`] of a program reading several input planes, plane z in `inputs[z]` (each
/// with values in `range`): a value's interval is the sum of its planes'.
pub(crate) fn peak_planes(
    program: &Program,
    inputs: &[Reg],
    general: usize,
    range: InputRange,
) -> Result<Peak, SymbolicError> {
    let mut pe = crate::verify::symbolic::SymbolicPe::<Planes>::new(general);
    for (z, &r) in inputs.iter().enumerate() {
        pe.set(r, Planes::unit(z));
    }
    let mut t = Tracker::new(inputs.first().copied().unwrap_or(Reg::A), range);
    crate::verify::symbolic::run_noting(&mut pe, program, |pe, d, pos| {
        let v = pe.value(value_reg(d));
        let (lo, hi) =
            v.0.iter()
                .map(|p| interval(p, range))
                .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d));
        t.note((lo, hi), d, pos);
    })?;
    Ok(t.peak)
}

/// [`peak`] on arbitrary-precision rationals alone (the reference the fast path is
/// held to).
pub(crate) fn peak_rational(
    program: &Program,
    wiring: Wiring,
    range: InputRange,
) -> Result<Peak, SymbolicError> {
    let Wiring { input, .. } = wiring;
    let mut slow = Tracker::new(input, range);
    execute_as::<LinComb>(program, wiring, |pe, d, pos| {
        slow.note(interval(&pe.value(value_reg(d)), range), d, pos);
    })?;
    Ok(slow.peak)
}

/// The register whose value a write to `d` leaves here: a neighbour view wrote a
/// neighbour's `NEWS`, which holds the same values as this PE's, moved.
fn value_reg(d: Reg) -> Reg {
    if matches!(d, Reg::X(_)) {
        Reg::News
    } else {
        d
    }
}

/// The peak so far of a program's writes.
struct Tracker {
    peak: Peak,
}

impl Tracker {
    fn new(input: Reg, range: InputRange) -> Tracker {
        Tracker {
            peak: Peak {
                magnitude: range.bound(),
                pos: None,
                reg: Some(input),
                low: range.lo,
                high: range.hi,
            },
        }
    }

    fn note(&mut self, (lo, hi): (f64, f64), d: Reg, pos: Pos) {
        let p = &mut self.peak;
        p.low = p.low.min(lo);
        p.high = p.high.max(hi);
        let m = lo.abs().max(hi.abs());
        if m > p.magnitude {
            p.magnitude = m;
            p.pos = Some(pos);
            p.reg = Some(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};

    fn peak_of(text: &str, range: InputRange) -> Peak {
        let p = parse_program(text, Device::default()).unwrap();
        peak(&p, Wiring::new(Reg::A, 6), range).unwrap()
    }

    #[test]
    fn sums_of_copies_reach_their_coefficient_sum() {
        // B = A + A east + A west: three times the input at most.
        let p = peak_of(
            "movx(B, A, east); movx(C, A, west); add(D, A, B, C)",
            InputRange::default(),
        );
        assert_eq!(p.magnitude, 3.0 * 128.0);
        // The NEWS temporary holds the negated sum: -381..384.
        assert_eq!((p.low, p.high), (-384.0, 384.0));
        assert_eq!(p.reg, Some(Reg::News));
        // Halving first keeps every value within the input's range.
        let p = peak_of(
            "divq(B, A); movx(C, B, east); add(D, B, C)",
            InputRange::default(),
        );
        assert_eq!(p.magnitude, 128.0);
        assert!(p.within(-128.0, 128.0));
    }

    #[test]
    fn a_difference_spans_both_signs() {
        // A - A east: -255..255 for the full range, -127..127 for 0..127.
        let p = peak_of("movx(B, A, east); sub(C, A, B)", InputRange::default());
        assert_eq!((p.low, p.high), (-255.0, 255.0));
        let half = InputRange { lo: 0.0, hi: 127.0 };
        let p = peak_of("movx(B, A, east); sub(C, A, B)", half);
        assert_eq!((p.low, p.high), (-127.0, 127.0));
        assert!(p.within(-128.0, 128.0));
    }
}
