//! One error term resolved to the f32 factors the row kernels use, and the chip's fixed
//! pattern scaled by a profile's terms once: per bus kind the gain plane
//! `1 + gain + pattern_gain G`, per kind and register the offset plane
//! `offset + pattern_offset O` (and the same for the DAC load and the capture). The row
//! kernel then spends one multiply and one add per PE on the fixed pattern instead of two
//! of each, and rounds exactly as the formula evaluated in place did. The planes are
//! computed on first use and shared by every model of the same chip and terms (the runs
//! of a Monte Carlo batch differ only in their run seed).

use super::chip::Chip;
use super::profile::{Injection, Profile, Transfer};
use super::BusKind;
use crate::isa::Reg;
use std::sync::{Arc, Mutex, OnceLock};

/// One error term, resolved to the f32 factors the row kernel uses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Term {
    /// `1 + gain`.
    pub gain1: f32,
    pub offset: f32,
    /// Standard deviation of the per-PE gain deviation seen by this term.
    pub pattern_gain: f32,
    /// Standard deviation of the per-PE offset deviation seen by this term.
    pub pattern_offset: f32,
    /// `s_t^2` and `s_s^2`.
    pub noise2: f32,
    pub signal2: f32,
}

impl Term {
    pub fn of_transfer(t: &Transfer, p: &Profile) -> Term {
        Term {
            gain1: (1.0 + t.gain) as f32,
            offset: t.offset as f32,
            pattern_gain: (t.pattern * p.fixed_pattern.gain) as f32,
            pattern_offset: (t.pattern * p.fixed_pattern.offset) as f32,
            noise2: (t.noise * t.noise) as f32,
            signal2: (t.noise_signal * t.noise_signal) as f32,
        }
    }

    pub fn of_injection(i: &Injection) -> Term {
        Term {
            gain1: (1.0 + i.gain) as f32,
            offset: i.offset as f32,
            pattern_gain: i.pattern_gain as f32,
            pattern_offset: i.pattern_offset as f32,
            noise2: (i.noise * i.noise) as f32,
            signal2: (i.noise_signal * i.noise_signal) as f32,
        }
    }

    pub fn is_identity(&self) -> bool {
        *self
            == Term {
                gain1: 1.0,
                ..Term::default()
            }
    }

    /// The per-PE factor `base + scale * unit` of every PE, rounded as the row kernel
    /// rounded it when it computed the factor in place.
    fn scale(base: f32, scale: f32, unit: &[f32]) -> Vec<f32> {
        unit.iter().map(|&u| base + scale * u).collect()
    }

    /// The gain plane `1 + gain + pattern_gain G` of unit plane `g`.
    fn gain_plane(&self, g: &[f32]) -> Vec<f32> {
        Term::scale(self.gain1, self.pattern_gain, g)
    }

    /// The offset plane `offset + pattern_offset O` of unit plane `o`.
    fn offset_plane(&self, o: &[f32]) -> Vec<f32> {
        Term::scale(self.offset, self.pattern_offset, o)
    }
}

/// Offset planes per kind: one per general register (`Reg::Gen(0..=255)`) and one for
/// `NEWS` (as the chip keeps its unit planes).
const OFFSET_SLOTS: usize = 257;

/// Scaled pattern sets kept after their last model is gone (the most recently used).
const KEPT: usize = 4;

/// A gain plane and an offset plane.
type PlanePair = (Vec<f32>, Vec<f32>);

/// The terms a set of scaled planes was made for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Terms {
    pub kinds: [Term; BusKind::COUNT],
    pub load: Term,
    pub capture: Term,
}

/// The chip's fixed pattern scaled by one set of terms, each plane computed on first
/// use.
pub(super) struct Scaled {
    chip_seed: u64,
    chip: Arc<Chip>,
    terms: Terms,
    gain: [OnceLock<Vec<f32>>; BusKind::COUNT],
    /// By `kind * OFFSET_SLOTS + slot`.
    offset: Vec<OnceLock<Vec<f32>>>,
    load: OnceLock<PlanePair>,
    capture: OnceLock<PlanePair>,
}

impl Scaled {
    fn new(chip_seed: u64, terms: Terms) -> Scaled {
        Scaled {
            chip_seed,
            chip: Chip::shared(chip_seed),
            terms,
            gain: Default::default(),
            offset: (0..BusKind::COUNT * OFFSET_SLOTS)
                .map(|_| OnceLock::new())
                .collect(),
            load: OnceLock::new(),
            capture: OnceLock::new(),
        }
    }

    /// The planes of chip `chip_seed` scaled by `terms`, shared with every other user of
    /// that pair (they are pure functions of it, so sharing changes no result).
    pub fn shared(chip_seed: u64, terms: Terms) -> Arc<Scaled> {
        static KEPT_SETS: Mutex<Vec<Arc<Scaled>>> = Mutex::new(Vec::new());
        let Ok(mut kept) = KEPT_SETS.lock() else {
            return Arc::new(Scaled::new(chip_seed, terms));
        };
        let found = kept
            .iter()
            .position(|s| s.chip_seed == chip_seed && s.terms == terms);
        let set = match found {
            Some(i) => kept.remove(i),
            None => Arc::new(Scaled::new(chip_seed, terms)),
        };
        kept.push(Arc::clone(&set));
        if kept.len() > KEPT {
            kept.remove(0);
        }
        set
    }

    /// The chip.
    pub fn chip(&self) -> &Chip {
        &self.chip
    }

    /// Gain and offset planes of a transfer of kind `kind` into `reg` (a neighbour view
    /// writes `NEWS`).
    pub fn transfer(&self, kind: BusKind, reg: Reg) -> (&[f32], &[f32]) {
        let term = &self.terms.kinds[kind.index()];
        let slot = match reg {
            Reg::Gen(i) => usize::from(i),
            _ => OFFSET_SLOTS - 1,
        };
        let gain = self.gain[kind.index()].get_or_init(|| term.gain_plane(self.chip.gain()));
        let reg = if slot == OFFSET_SLOTS - 1 {
            Reg::News
        } else {
            reg
        };
        let offset = self.offset[kind.index() * OFFSET_SLOTS + slot]
            .get_or_init(|| term.offset_plane(self.chip.offset(reg)));
        (gain, offset)
    }

    /// Gain and offset planes of the DAC load.
    pub fn load(&self) -> (&[f32], &[f32]) {
        let (g, o) = self.load.get_or_init(|| {
            let (g, o) = self.chip.load();
            let t = &self.terms.load;
            (t.gain_plane(g), t.offset_plane(o))
        });
        (g, o)
    }

    /// Gain and offset planes of the capture.
    pub fn capture(&self) -> (&[f32], &[f32]) {
        let (g, o) = self.capture.get_or_init(|| {
            let (g, o) = self.chip.capture();
            let t = &self.terms.capture;
            (t.gain_plane(g), t.offset_plane(o))
        });
        (g, o)
    }
}
