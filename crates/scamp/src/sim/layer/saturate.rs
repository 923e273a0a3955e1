//! Saturation of the values a layer writes, in the f32 form the row loops use: values
//! between the knees stay as they are, values beyond a knee are compressed towards that
//! side's limit (a hard clip when the knees are the limits). The hot loops only check a
//! row's largest magnitude against the nearer knee ([`Saturate::inside`]); a row that
//! reaches past it comes here.

/// The shape of the compression beyond a knee (see the profile's `KneeForm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
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
pub struct Saturate {
    /// Lowest value a register holds.
    pub lo: f32,
    /// Highest value a register holds.
    pub hi: f32,
    /// Where the compression starts below.
    pub knee_lo: f32,
    /// Where the compression starts above.
    pub knee_hi: f32,
    /// The shape beyond the knees.
    pub form: Form,
}

impl Saturate {
    /// A hard clip to `lo..=hi`.
    pub fn hard(lo: f32, hi: f32) -> Saturate {
        Saturate {
            lo,
            hi,
            knee_lo: lo,
            knee_hi: hi,
            form: Form::Tanh,
        }
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

    /// `x` beyond a knee, compressed (`x` itself between the knees, NaN as NaN).
    #[inline]
    pub(crate) fn soft(&self, x: f32) -> f32 {
        if self.form == Form::Count {
            x
        } else if x > self.knee_hi {
            self.knee_hi + self.room(x - self.knee_hi, self.hi - self.knee_hi)
        } else if x < self.knee_lo {
            self.knee_lo - self.room(self.knee_lo - x, self.knee_lo - self.lo)
        } else {
            x
        }
    }

    /// How far past a knee `excess` lands, out of `room` to the limit.
    #[inline]
    fn room(&self, excess: f32, room: f32) -> f32 {
        if room <= 0.0 {
            return 0.0;
        }
        let t = excess / room;
        room * match self.form {
            Form::Tanh => t.tanh(),
            Form::Rational => 1.0 - 1.0 / (1.0 + t),
            Form::Count => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_is_continuous_and_bounded() {
        let s = Saturate {
            lo: -512.0,
            hi: 512.0,
            knee_lo: -128.0,
            knee_hi: 128.0,
            form: Form::Tanh,
        };
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
}
