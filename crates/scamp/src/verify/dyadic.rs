//! The fast exact representation of a symbolic value: integer numerators over one
//! power-of-two denominator per value, in checked `i128` arithmetic.
//!
//! Generated programs only add, subtract, move and halve, so every coefficient they
//! produce is a dyadic fraction, and [`LinComb`]'s arbitrary-precision rationals spend
//! most of their time on gcds that this form never needs. A `Dyadic` is exact or it
//! says it is not: any step it cannot follow exactly (a numerator beyond `i128`, a
//! division by 3 from a three-receiver bus, a denominator beyond 2^[`MAX_EXP`]) marks
//! it inexact, and whoever reads it then asks the [`LinComb`] executor instead. So the
//! fast path can only ever be slower to answer, never wrong.

use super::range::InputRange;
use super::symbolic::{Coef, LinComb, Offset, Span, Symbolic};
use crate::sim::machine::Linear;
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};

/// The largest denominator exponent kept: beyond it the f64 views of a coefficient
/// would leave the normal range (and no kernel needs so many halvings).
pub(crate) const MAX_EXP: u32 = 1000;

/// `(constant + sum n_o x(p + o)) / 2^exp` with integer numerators, in lowest terms
/// (`exp` is 0 or some numerator is odd), or a marker that exactness was lost.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dyadic {
    /// Non-zero numerators, sorted by offset.
    terms: Vec<(Offset, i128)>,
    /// The constant's numerator.
    constant: i128,
    /// Exponent of the common denominator.
    exp: u32,
    /// Set once a step could not be followed exactly; the other fields are then
    /// meaningless.
    inexact: bool,
}

impl PartialEq for Dyadic {
    /// Equal values (lowest terms make the fields unique); an inexact value equals
    /// nothing, itself included, so no comparison can pass on lost exactness.
    fn eq(&self, other: &Self) -> bool {
        !self.inexact
            && !other.inexact
            && self.exp == other.exp
            && self.constant == other.constant
            && self.terms == other.terms
    }
}

/// `n * 2^k`, if it fits.
fn scale_up(n: i128, k: u32) -> Option<i128> {
    if n == 0 {
        return Some(0);
    }
    if k >= 127 {
        return None;
    }
    n.checked_mul(1i128 << k)
}

/// `2^-exp` as an f64 (exact: `exp` is at most [`MAX_EXP`]).
fn unit(exp: u32) -> f64 {
    f64::from_bits(u64::from(1023 - exp.min(MAX_EXP)) << 52)
}

impl Dyadic {
    /// Whether the value is exact (every step so far followed without loss): what the
    /// executors' tests hold the machine-integer path to.
    #[cfg(test)]
    pub(crate) fn is_exact(&self) -> bool {
        !self.inexact
    }

    fn lost() -> Dyadic {
        Dyadic {
            inexact: true,
            ..Dyadic::default()
        }
    }

    /// `weights[i][j] / 2^depth` at offsets `(i - ci, j - cj)`, in lowest terms.
    pub(crate) fn of_weights(weights: &[Vec<i64>], centre: (usize, usize), depth: u32) -> Dyadic {
        if depth > MAX_EXP {
            return Dyadic::lost();
        }
        let mut terms = Vec::new();
        for (i, row) in weights.iter().enumerate() {
            for (j, &q) in row.iter().enumerate() {
                if q != 0 {
                    let off = (i as i32 - centre.0 as i32, j as i32 - centre.1 as i32);
                    terms.push((off, i128::from(q)));
                }
            }
        }
        let mut d = Dyadic {
            terms,
            constant: 0,
            exp: depth,
            inexact: false,
        };
        d.reduce();
        d
    }

    /// Brings the value to lowest terms: common factors of 2 leave numerators and
    /// denominator together.
    fn reduce(&mut self) {
        let tz = self
            .terms
            .iter()
            .map(|&(_, n)| n)
            .chain(std::iter::once(self.constant))
            .filter(|&n| n != 0)
            .map(i128::trailing_zeros)
            .min();
        let Some(tz) = tz else {
            // Zero: 0 / 1.
            self.exp = 0;
            return;
        };
        let k = tz.min(self.exp);
        if k > 0 {
            self.terms.iter_mut().for_each(|(_, n)| *n >>= k);
            self.constant >>= k;
            self.exp -= k;
        }
    }

    /// The sum with `other`, or `None` where a numerator would overflow.
    fn sum(&self, other: &Dyadic) -> Option<Dyadic> {
        let exp = self.exp.max(other.exp);
        let (ka, kb) = (exp - self.exp, exp - other.exp);
        let mut terms = Vec::with_capacity(self.terms.len() + other.terms.len());
        let (mut a, mut b) = (self.terms.iter().peekable(), other.terms.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(&&(oa, na)), Some(&&(ob, nb))) => match oa.cmp(&ob) {
                    std::cmp::Ordering::Less => {
                        a.next();
                        (oa, scale_up(na, ka)?)
                    }
                    std::cmp::Ordering::Greater => {
                        b.next();
                        (ob, scale_up(nb, kb)?)
                    }
                    std::cmp::Ordering::Equal => {
                        a.next();
                        b.next();
                        (oa, scale_up(na, ka)?.checked_add(scale_up(nb, kb)?)?)
                    }
                },
                (Some(&&(oa, na)), None) => {
                    a.next();
                    (oa, scale_up(na, ka)?)
                }
                (None, Some(&&(ob, nb))) => {
                    b.next();
                    (ob, scale_up(nb, kb)?)
                }
                (None, None) => break,
            };
            if next.1 != 0 {
                terms.push(next);
            }
        }
        let constant = scale_up(self.constant, ka)?.checked_add(scale_up(other.constant, kb)?)?;
        let mut d = Dyadic {
            terms,
            constant,
            exp,
            inexact: false,
        };
        d.reduce();
        Some(d)
    }

    /// `-self / 2^k`, or `None` where it cannot be held.
    fn negated_halved(&self, k: u32) -> Option<Dyadic> {
        let exp = self.exp.checked_add(k).filter(|&e| e <= MAX_EXP)?;
        let mut terms = Vec::with_capacity(self.terms.len());
        for &(o, n) in &self.terms {
            terms.push((o, n.checked_neg()?));
        }
        let mut d = Dyadic {
            terms,
            constant: self.constant.checked_neg()?,
            exp,
            inexact: false,
        };
        d.reduce();
        Some(d)
    }

    /// The interval the value spans for pixels in `range`, each coefficient and the
    /// constant rounded to f64 as [`super::range::interval`] rounds them (so the two
    /// agree to the bit); `None` when the value is inexact.
    pub(crate) fn interval(&self, range: InputRange) -> Option<(f64, f64)> {
        if self.inexact {
            return None;
        }
        let u = unit(self.exp);
        let k = self.constant as f64 * u;
        let (mut lo, mut hi) = (k, k);
        for &(_, n) in &self.terms {
            let c = n as f64 * u;
            let (a, b) = (c * range.lo, c * range.hi);
            lo += a.min(b);
            hi += a.max(b);
        }
        Some((lo, hi))
    }
}

/// A rational whose denominator is a power of two as `(numerator, exponent)`.
fn dyadic_parts(c: &Coef) -> Option<(i128, u32)> {
    let d = c.denom();
    let exp = u32::try_from(d.trailing_zeros()?).ok()?;
    if *d != BigInt::from(1) << exp {
        return None;
    }
    Some((c.numer().to_i128()?, exp))
}

impl Symbolic for Dyadic {
    fn of_lin(lin: &LinComb) -> Self {
        let parts = |c: &Coef| {
            if c.is_zero() {
                Some((0, 0))
            } else {
                dyadic_parts(c)
            }
        };
        let Some(constant) = parts(&lin.constant) else {
            return Dyadic::lost();
        };
        let mut out = Dyadic {
            constant: constant.0,
            exp: constant.1,
            ..Dyadic::default()
        };
        // Each term is added as its own value: the sum brings the exponents together.
        for (&o, c) in &lin.terms {
            let Some((n, exp)) = parts(c) else {
                return Dyadic::lost();
            };
            let one = Dyadic {
                terms: vec![(o, n)],
                constant: 0,
                exp,
                inexact: false,
            };
            out = match out.sum(&one) {
                Some(s) => s,
                None => return Dyadic::lost(),
            };
        }
        if out.exp > MAX_EXP {
            return Dyadic::lost();
        }
        out.reduce();
        out
    }

    fn shifted(&self, dr: i32, dc: i32) -> Self {
        // A translation keeps the offsets' order.
        Dyadic {
            terms: self
                .terms
                .iter()
                .map(|&((r, c), n)| ((r + dr, c + dc), n))
                .collect(),
            ..self.clone()
        }
    }

    fn span(&self) -> Option<Span> {
        (!self.inexact).then(|| Span::of(self.terms.iter().map(|&(o, _)| o)))
    }
}

impl Linear for Dyadic {
    fn zero() -> Self {
        Dyadic::default()
    }

    fn add_assign(&mut self, other: &Self) {
        *self = if self.inexact || other.inexact {
            Dyadic::lost()
        } else if self.terms.is_empty() && self.constant == 0 {
            other.clone()
        } else {
            self.sum(other).unwrap_or_else(Dyadic::lost)
        };
    }

    fn negate_split(&mut self, receivers: usize) {
        let k = match receivers {
            1 => 0,
            2 => 1,
            4 => 2,
            // A third is not dyadic: the rational executor takes over.
            _ => {
                *self = Dyadic::lost();
                return;
            }
        };
        if !self.inexact {
            *self = self.negated_halved(k).unwrap_or_else(Dyadic::lost);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::symbolic::{coef, coef_int};

    fn lin(terms: &[((i32, i32), Coef)], constant: Coef) -> LinComb {
        LinComb {
            terms: terms.iter().cloned().collect(),
            constant,
        }
    }

    #[test]
    fn lowest_terms_make_equal_values_equal() {
        // 2/4 x(0,0) - 6/8 x(0,1) is 1/2 x(0,0) - 3/4 x(0,1) whichever way it is made.
        let a = Dyadic::of_weights(&[vec![4, -6]], (0, 0), 3);
        let b = Dyadic::of_lin(&lin(
            &[((0, 0), coef(1, 2)), ((0, 1), coef(-3, 4))],
            Coef::zero(),
        ));
        assert_eq!(a, b);
        assert_eq!(
            (a.exp, a.terms.clone()),
            (2, vec![((0, 0), 2), ((0, 1), -3)])
        );
        // Halving and adding back to itself gives the value again.
        let mut h = a.clone();
        h.negate_split(2);
        let mut s = Dyadic::zero();
        s.add_assign(&h);
        s.add_assign(&h);
        s.negate_split(1);
        assert_eq!(s, a);
        // Cancelling to zero leaves 0 / 1.
        let mut z = a.clone();
        let mut m = a.clone();
        m.negate_split(1);
        z.add_assign(&m);
        assert_eq!(z, Dyadic::zero());
        assert_eq!(z.exp, 0);
    }

    #[test]
    fn thirds_and_overflow_lose_exactness_and_equal_nothing() {
        let x = Dyadic::of_lin(&LinComb::input());
        let mut third = x.clone();
        third.negate_split(3);
        assert!(!third.is_exact());
        assert_ne!(third, third.clone());
        assert!(!Dyadic::of_lin(&lin(&[((0, 0), coef(1, 3))], Coef::zero())).is_exact());
        // 2^126 is held; doubling it once more is not.
        let big = Dyadic::of_lin(&lin(
            &[((0, 0), Coef::from_integer(BigInt::from(1) << 126))],
            Coef::zero(),
        ));
        assert!(big.is_exact());
        let mut twice = big.clone();
        twice.add_assign(&big);
        assert!(!twice.is_exact());
        // Aligning denominators overflows too: 2^100 x + 2^-30 x needs 2^130.
        let mut far = Dyadic::of_lin(&lin(
            &[((0, 0), Coef::from_integer(BigInt::from(1) << 100))],
            Coef::zero(),
        ));
        let small = Dyadic::of_lin(&lin(
            &[((0, 0), Coef::new(BigInt::from(1), BigInt::from(1) << 30))],
            Coef::zero(),
        ));
        far.add_assign(&small);
        assert!(!far.is_exact());
        // The most negative numerator cannot be negated.
        let mut min = Dyadic {
            terms: vec![((0, 0), i128::MIN)],
            ..Dyadic::default()
        };
        min.negate_split(1);
        assert!(!min.is_exact());
        // Loss spreads to every value it touches.
        let mut y = x.clone();
        y.add_assign(&third);
        assert!(!y.is_exact());
        assert_eq!(y.interval(InputRange::default()), None);
        assert_eq!(scale_up(1, 127), None);
        assert_eq!(scale_up(0, 500), Some(0));
        assert_eq!(scale_up(-3, 125), Some(-3i128 << 125));
        assert_eq!(scale_up(3, 126), None);
    }

    #[test]
    fn intervals_round_like_the_rational_ones() {
        // Coefficients that f64 cannot hold exactly: both views round them alike.
        let l = lin(
            &[
                ((0, 0), coef((1 << 60) + 1, 1 << 3)),
                ((1, -2), coef(-7, 1 << 20)),
                ((2, 2), coef_int(3)),
            ],
            coef(5, 2),
        );
        let d = Dyadic::of_lin(&l);
        for range in [InputRange::default(), InputRange { lo: 0.0, hi: 127.0 }] {
            let want = super::super::range::interval(&l, range);
            let got = d.interval(range).expect("exact");
            assert_eq!(got.0.to_bits(), want.0.to_bits());
            assert_eq!(got.1.to_bits(), want.1.to_bits());
        }
    }
}
