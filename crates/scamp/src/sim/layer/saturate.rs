//! Saturation of the values a layer writes, in the f32 form the row loops use: values
//! between the knees stay as they are, values beyond a knee are compressed towards that
//! side's limit (a hard clip when the knees are the limits). The hot loops only check a
//! row's largest magnitude against the nearer knee ([`Saturate::inside`]); a row that
//! reaches past it comes here, and its values past a knee go through the compression a
//! vector at a time ([`Saturate::soften`]), with the simulator's own `tanh`
//! ([`super::knee`]).
//!
//! Just past a knee the compression changes nothing: `knee + room tanh(excess / room)`
//! rounds back to the value itself while the part the compression takes off stays
//! under half a unit in the last place. [`Saturate::resolve_plain`] finds that window
//! by computing the compression of every value from the knee outwards, and
//! [`Saturate::soft`] returns the values inside it as they are.

use super::knee;
use std::sync::Mutex;

/// The shape of the compression beyond a knee (see the profile's `KneeForm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `knee + room tanh(excess / room)`.
    Tanh,
    /// `knee + room (1 - 1 / (1 + excess / room))`.
    Rational,
    /// No compression: values pass unchanged, and those beyond the knees are counted
    /// (how far a program reaches, without modelling what the register does there).
    Count,
}

/// Knees and limits of a write (`lo <= knee_lo < knee_hi <= hi`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Saturate {
    /// Lowest value a register holds.
    pub(crate) lo: f32,
    /// Highest value a register holds.
    pub(crate) hi: f32,
    /// Where the compression starts below.
    pub(crate) knee_lo: f32,
    /// Where the compression starts above.
    pub(crate) knee_hi: f32,
    /// The shape beyond the knees.
    pub(crate) form: Form,
    /// Values from `plain_lo` to `plain_hi` come out of the compression as they went
    /// in (the knees themselves until [`Saturate::resolve_plain`] widens the window).
    pub(crate) plain_lo: f32,
    /// See `plain_lo`.
    pub(crate) plain_hi: f32,
}

/// Most values checked on each side by [`Saturate::resolve_plain`]: 2^18 values reach
/// 4 units past a knee at 128 (where the window of a knee at 128 with its limit at
/// 2048 ends, 4.27 past it), for a few milliseconds of `tanh` once per setting.
const PLAIN_SCAN: u32 = 1 << 18;

/// Settings whose windows were found, the most recent last (a run uses one or a few;
/// an uncertainty ensemble a few dozen).
const PLAIN_KEPT: usize = 64;

/// The windows found so far, by setting (the bits of `lo`, `hi`, `knee_lo`, `knee_hi`
/// and the form).
type PlainKey = ([u32; 4], Form);
static PLAIN: Mutex<Vec<(PlainKey, (f32, f32))>> = Mutex::new(Vec::new());

impl Saturate {
    /// A hard clip to `lo..=hi`.
    #[cfg(test)]
    pub(crate) fn hard(lo: f32, hi: f32) -> Saturate {
        Saturate {
            lo,
            hi,
            knee_lo: lo,
            knee_hi: hi,
            form: Form::Tanh,
            plain_lo: lo,
            plain_hi: hi,
        }
    }

    /// Knees `knee_lo..knee_hi` and limits `lo..hi` with the compression `form`, its
    /// window of unchanged values not yet resolved (see [`Saturate::resolve_plain`]).
    pub(crate) fn knees(lo: f32, hi: f32, knee_lo: f32, knee_hi: f32, form: Form) -> Saturate {
        Saturate {
            lo,
            hi,
            knee_lo,
            knee_hi,
            form,
            plain_lo: knee_lo,
            plain_hi: knee_hi,
        }
    }

    /// The same setting with its window of values the compression leaves unchanged
    /// widened past the knees: on each side, every value from the knee outwards whose
    /// compression ([`Saturate::compress`]) is itself, up to the first that is not
    /// (at most [`PLAIN_SCAN`] values). Found once per setting and kept.
    pub(crate) fn resolve_plain(self) -> Saturate {
        if self.form == Form::Count || self.is_hard() {
            return self;
        }
        let key = (
            [self.lo, self.hi, self.knee_lo, self.knee_hi].map(f32::to_bits),
            self.form,
        );
        let found = PLAIN
            .lock()
            .ok()
            .and_then(|kept| kept.iter().find(|(k, _)| *k == key).map(|&(_, w)| w));
        let (plain_lo, plain_hi) = found.unwrap_or_else(|| {
            let w = (
                self.plain_end(self.knee_lo, f32::next_down),
                self.plain_end(self.knee_hi, f32::next_up),
            );
            if let Ok(mut kept) = PLAIN.lock() {
                kept.push((key, w));
                if kept.len() > PLAIN_KEPT {
                    kept.remove(0);
                }
            }
            w
        });
        Saturate {
            plain_lo,
            plain_hi,
            ..self
        }
    }

    /// The last value, stepping from `knee` outwards by `step`, up to which every
    /// value's compression is itself.
    fn plain_end(&self, knee: f32, step: fn(f32) -> f32) -> f32 {
        let mut last = knee;
        for _ in 0..PLAIN_SCAN {
            let x = step(last);
            if !x.is_finite() || self.compress(x) != x {
                break;
            }
            last = x;
        }
        last
    }

    /// Whether the knees are the limits.
    #[inline(always)]
    pub(crate) fn is_hard(&self) -> bool {
        self.form != Form::Count && self.knee_lo == self.lo && self.knee_hi == self.hi
    }

    /// Every magnitude up to this is inside both knees (negative when zero is not).
    #[inline(always)]
    pub(crate) fn inside(&self) -> f32 {
        (-self.knee_lo).min(self.knee_hi)
    }

    /// `x` beyond a knee, compressed (`x` itself between the knees, NaN as NaN); the
    /// values of the window `plain_lo..=plain_hi` are returned as they are, which is
    /// what their compression gives ([`Saturate::soften`] of one value).
    #[cfg(test)]
    pub(crate) fn soft(&self, x: f32) -> f32 {
        match self.form {
            Form::Tanh => self.soft_by(x, knee::tanh),
            Form::Rational => self.soft_by(x, rational),
            Form::Count => x,
        }
    }

    /// [`Saturate::soft`] of every value of `xs` (a vector of values): the same
    /// operations on every value, selected rather than branched, so each value comes
    /// out as [`Saturate::soft`] gives it.
    #[inline(always)]
    pub(crate) fn soften(&self, xs: &mut [f32; LANES]) {
        // Plain loops: an iterator adaptor the compiler declines to inline would be
        // compiled outside the caller's vector unit.
        match self.form {
            Form::Tanh => {
                for x in xs {
                    *x = self.soft_by(*x, knee::tanh);
                }
            }
            Form::Rational => {
                for x in xs {
                    *x = self.soft_by(*x, rational);
                }
            }
            Form::Count => {}
        }
    }

    /// [`Saturate::soft`] with the shape `f` (`tanh` or the rational form), free of
    /// branches: the window's values and the values between the knees are selected
    /// as they are.
    #[inline(always)]
    fn soft_by(&self, x: f32, f: impl Fn(f32) -> f32) -> f32 {
        let plain = self.plain_lo <= x && x <= self.plain_hi;
        let y = self.compress_by(x, f);
        if plain {
            x
        } else {
            y
        }
    }

    /// [`Saturate::soft`] computed (no window).
    #[inline]
    fn compress(&self, x: f32) -> f32 {
        match self.form {
            Form::Tanh => self.compress_by(x, knee::tanh),
            Form::Rational => self.compress_by(x, rational),
            Form::Count => x,
        }
    }

    /// `x` through the compression of shape `f`, free of branches: beyond the upper
    /// knee `knee + room f(excess / room)`, beyond the lower one its mirror, `x` itself
    /// otherwise (NaN included); no room past a knee leaves the knee.
    #[inline(always)]
    fn compress_by(&self, x: f32, f: impl Fn(f32) -> f32) -> f32 {
        let above = x > self.knee_hi;
        let below = x < self.knee_lo;
        let (knee, room) = if above {
            (self.knee_hi, self.hi - self.knee_hi)
        } else {
            (self.knee_lo, self.knee_lo - self.lo)
        };
        let excess = if above { x - knee } else { knee - x };
        let part = room * f(excess / room);
        let part = if room <= 0.0 { 0.0 } else { part };
        let y = if above { knee + part } else { knee - part };
        if above || below {
            y
        } else {
            x
        }
    }
}

/// Values [`Saturate::soften`] takes at a time: sixteen f32, one AVX-512 register.
pub(crate) const LANES: usize = 16;

/// The rational shape: `1 - 1 / (1 + t)`.
#[inline(always)]
fn rational(t: f32) -> f32 {
    1.0 - 1.0 / (1.0 + t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_is_continuous_and_bounded() {
        let s = Saturate::knees(-512.0, 512.0, -128.0, 128.0, Form::Tanh);
        assert_eq!(s.soft(128.0), 128.0);
        assert_eq!(s.soft(-128.0), -128.0);
        assert_eq!(s.soft(f32::INFINITY), 512.0);
        assert_eq!(s.soft(f32::NEG_INFINITY), -512.0);
        assert!(s.soft(f32::NAN).is_nan());
        let r = Saturate {
            form: Form::Rational,
            ..s
        };
        assert_eq!(r.soft(f32::INFINITY), 512.0);
        // Halfway: excess equal to the room lands halfway for the rational form.
        assert_eq!(r.soft(128.0 + 384.0), 128.0 + 192.0);
        assert_eq!(Saturate::hard(-5.0, 5.0).soft(9.0), 5.0);
        let count = Saturate {
            form: Form::Count,
            ..Saturate::hard(-5.0, 5.0)
        };
        assert!(!count.is_hard());
        assert_eq!(count.soft(9.0), 9.0);
    }

    #[test]
    fn the_plain_window_is_exactly_what_the_compression_leaves_unchanged() {
        // scamp5's setting: the window would end 4.27 past a knee at 128 with room 1920;
        // the scan stops 2^18 values (of 2^-16) past it.
        let s = Saturate::knees(-2048.0, 2048.0, -128.0, 128.0, Form::Tanh).resolve_plain();
        assert_eq!((s.plain_lo, s.plain_hi), (-132.0, 132.0));
        assert_eq!(s.compress(132f32.next_up()), 132f32.next_up());
        // Knees at 100 with room 100: the window ends 0.48 past each, before the cap.
        let t = Saturate::knees(-200.0, 200.0, -100.0, 100.0, Form::Tanh).resolve_plain();
        assert!(t.plain_hi > 100.48 && t.plain_hi < 100.49, "{}", t.plain_hi);
        assert_eq!(t.plain_lo, -t.plain_hi);
        // The value past each end is changed; every value inside is not.
        for (end, step) in [
            (t.plain_hi, f32::next_up as fn(f32) -> f32),
            (t.plain_lo, f32::next_down),
        ] {
            assert_ne!(t.compress(step(end)), step(end));
            assert_eq!(t.soft(step(end)), t.compress(step(end)));
            let mut x = end;
            while x.abs() > 100.0 {
                assert_eq!((t.compress(x), t.soft(x)), (x, x), "{x}");
                x = if x > 0.0 { x.next_down() } else { x.next_up() };
            }
        }
        // Far past the knee the window changes nothing: `soft` is the compression.
        for x in [140.0, 500.5, -700.25, 2047.0, f32::INFINITY] {
            assert_eq!(s.soft(x), s.compress(x));
        }
        assert!(s.soft(f32::NAN).is_nan());
        // An asymmetric, rational setting; found again from the kept windows.
        let r = Saturate::knees(-300.0, 100.0, -60.0, 30.0, Form::Rational).resolve_plain();
        assert!(r.plain_hi >= 30.0 && r.plain_lo <= -60.0);
        assert_ne!(r.compress(r.plain_hi.next_up()), r.plain_hi.next_up());
        assert_ne!(r.compress(r.plain_lo.next_down()), r.plain_lo.next_down());
        assert_eq!(r, r.resolve_plain());
        // Hard clips and counting keep the knees.
        let h = Saturate::hard(-5.0, 5.0).resolve_plain();
        assert_eq!((h.plain_lo, h.plain_hi), (-5.0, 5.0));
    }
}
