//! The fixed pattern of one simulated chip: unit-normal planes that depend on the chip
//! seed alone (every profile scales them by its own factors as it writes). They are
//! drawn once per chip, on first use, and shared by every model of that chip: the runs
//! of a Monte Carlo batch differ only in their run seed, so they draw the chip once
//! rather than once per run.

use super::rng::{self, stream};
use crate::isa::Reg;
use crate::sim::array::N;
use std::sync::{Arc, Mutex, OnceLock};

/// Fixed-pattern offset planes: one per general register (`Reg::Gen(0..=255)`) and one
/// for `NEWS`.
const OFFSET_SLOTS: usize = 257;

/// Chips kept after their last model is gone (the most recently used), so that runs
/// made one after another share theirs too.
const KEPT: usize = 4;

/// A gain plane and an offset plane.
type PlanePair = (Vec<f32>, Vec<f32>);

/// The fixed-pattern planes of one chip, each drawn on first use.
pub struct Chip {
    seed: u64,
    gain: OnceLock<Vec<f32>>,
    offsets: Vec<OnceLock<Vec<f32>>>,
    load: OnceLock<PlanePair>,
    capture: OnceLock<PlanePair>,
    readout: OnceLock<Vec<f32>>,
}

impl Chip {
    fn new(seed: u64) -> Chip {
        Chip {
            seed,
            gain: OnceLock::new(),
            offsets: (0..OFFSET_SLOTS).map(|_| OnceLock::new()).collect(),
            load: OnceLock::new(),
            capture: OnceLock::new(),
            readout: OnceLock::new(),
        }
    }

    /// The chip of seed `seed`, shared with every other user of that chip (the planes
    /// are pure functions of the seed, so sharing them changes no result).
    pub fn shared(seed: u64) -> Arc<Chip> {
        static KEPT_CHIPS: Mutex<Vec<Arc<Chip>>> = Mutex::new(Vec::new());
        let Ok(mut kept) = KEPT_CHIPS.lock() else {
            return Arc::new(Chip::new(seed));
        };
        let chip = match kept.iter().position(|c| c.seed == seed) {
            Some(i) => kept.remove(i),
            None => Arc::new(Chip::new(seed)),
        };
        kept.push(Arc::clone(&chip));
        if kept.len() > KEPT {
            kept.remove(0);
        }
        chip
    }

    fn plane(&self, stream: u64, index: u64) -> Vec<f32> {
        rng::normal_plane(self.seed, stream, index, N, N)
    }

    /// The per-PE gain deviation `G` shared by every bus kind.
    pub fn gain(&self) -> &[f32] {
        self.gain.get_or_init(|| self.plane(stream::FP_GAIN, 0))
    }

    /// The per-PE offset deviation `O` of register `reg` (general registers have their
    /// own plane, every NEWS cell shares one).
    pub fn offset(&self, reg: Reg) -> &[f32] {
        let slot = match reg {
            Reg::Gen(i) => usize::from(i),
            _ => OFFSET_SLOTS - 1,
        };
        self.offsets[slot].get_or_init(|| self.plane(stream::FP_OFFSET, slot as u64))
    }

    /// Gain and offset deviations of the DAC load.
    pub fn load(&self) -> (&[f32], &[f32]) {
        let (g, o) = self.load.get_or_init(|| {
            let g = self.plane(stream::LOAD_GAIN, 0);
            (g, self.plane(stream::LOAD_OFFSET, 0))
        });
        (g, o)
    }

    /// Gain and offset deviations of the capture.
    pub fn capture(&self) -> (&[f32], &[f32]) {
        let (g, o) = self.capture.get_or_init(|| {
            let g = self.plane(stream::CAPTURE_GAIN, 0);
            (g, self.plane(stream::CAPTURE_OFFSET, 0))
        });
        (g, o)
    }

    /// The per-PE readout offset deviation.
    pub fn readout(&self) -> &[f32] {
        self.readout
            .get_or_init(|| self.plane(stream::READOUT_OFFSET, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chips_are_shared_by_seed_and_drawn_from_it() {
        let a = Chip::shared(11);
        let b = Chip::shared(11);
        assert!(Arc::ptr_eq(&a, &b));
        let fresh = Chip::new(11);
        assert_eq!(a.offset(Reg::Gen(2)), fresh.offset(Reg::Gen(2)));
        assert_eq!(
            a.offset(Reg::X(crate::isa::Dir::North)),
            fresh.offset(Reg::News)
        );
        assert_ne!(a.gain(), Chip::shared(12).gain());
    }
}
