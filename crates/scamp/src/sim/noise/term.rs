//! One error term resolved to the f32 factors the row kernels use. The per-PE factors
//! are made in the row loop from the chip's unit planes (`1 + gain + pattern_gain G[pe]`
//! and `offset + pattern_offset O[pe]`) rather than read from planes scaled per bus kind
//! and register: the unit gain plane is shared by every kind, so a row of a segment
//! reads it once from memory whatever kinds write there, and two multiply-adds per PE
//! cost less than streaming two more planes per write.

use super::profile::{Injection, Profile, Transfer};
use crate::sim::layer::Factors;

/// One error term, resolved to the f32 factors the row kernel uses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Term {
    /// `1 + gain`.
    pub(crate) gain1: f32,
    pub(crate) offset: f32,
    /// Standard deviation of the per-PE gain deviation seen by this term.
    pub(crate) pattern_gain: f32,
    /// Standard deviation of the per-PE offset deviation seen by this term.
    pub(crate) pattern_offset: f32,
    /// `s_t^2` and `s_s^2`.
    pub(crate) noise2: f32,
    pub(crate) signal2: f32,
}

impl Term {
    /// The term of a bus transfer of profile `p`.
    pub(super) fn of_transfer(t: &Transfer, p: &Profile) -> Term {
        Term {
            gain1: (1.0 + t.gain) as f32,
            offset: t.offset as f32,
            pattern_gain: (t.pattern * p.fixed_pattern.gain) as f32,
            pattern_offset: (t.pattern * p.fixed_pattern.offset) as f32,
            noise2: (t.noise * t.noise) as f32,
            signal2: (t.noise_signal * t.noise_signal) as f32,
        }
    }

    /// The term of a DAC load or a capture.
    pub(super) fn of_injection(i: &Injection) -> Term {
        Term {
            gain1: (1.0 + i.gain) as f32,
            offset: i.offset as f32,
            pattern_gain: i.pattern_gain as f32,
            pattern_offset: i.pattern_offset as f32,
            noise2: (i.noise * i.noise) as f32,
            signal2: (i.noise_signal * i.noise_signal) as f32,
        }
    }

    /// The scalar factors of the per-PE formula.
    pub(super) fn factors(&self) -> Factors {
        Factors {
            gain1: self.gain1,
            pattern_gain: self.pattern_gain,
            offset: self.offset,
            pattern_offset: self.pattern_offset,
        }
    }

    /// Whether the term leaves every value as it is.
    pub(super) fn is_identity(&self) -> bool {
        *self
            == Term {
                gain1: 1.0,
                ..Term::default()
            }
    }
}
