//! The fixed pattern of one simulated chip: unit-normal planes that depend on the chip
//! seed alone (every profile scales them by its own factors as it writes). They are
//! drawn once per chip, on first use, and shared by every model of that chip: the runs
//! of a Monte Carlo batch differ only in their run seed, so they draw the chip once
//! rather than once per run.
//!
//! The gain and offset deviates a write reads are packed two to a 32-bit word (see
//! [`bf16`], gain in the upper half): one load per PE brings both, so a noisy write
//! moves one plane of fixed pattern rather than two.

use super::profile::UncorrectedLoad;
use crate::isa::Reg;
use crate::sim::dims::N;
use crate::sim::layer::bf16;
use crate::sim::layer::rng::{self, stream};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

/// Fixed-pattern offset planes: one per general register (`Reg::Gen(0..=255)`) and one
/// for `NEWS`.
const OFFSET_SLOTS: usize = 257;

/// Chips kept after their last model is gone (the most recently used), so that runs
/// made one after another share theirs too.
const KEPT: usize = 4;

/// The fixed-pattern planes of one chip, each drawn on first use.
pub(crate) struct Chip {
    seed: u64,
    gain: OnceLock<Vec<f32>>,
    /// Per register slot, the gain deviate and that register's offset deviate, packed.
    offsets: Vec<OnceLock<Vec<u32>>>,
    load: OnceLock<Vec<u32>>,
    capture: OnceLock<Vec<u32>>,
    readout: OnceLock<Vec<f32>>,
    uncorrected: OnceLock<UncorrectedDeviates>,
}

/// The unit deviates of the uncorrected load's structured pattern.
struct UncorrectedDeviates {
    /// One per PE.
    pe: Vec<f32>,
    /// One per column, one per row, and the chip's tilt (the rest of that row).
    lines: Vec<f32>,
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
            uncorrected: OnceLock::new(),
        }
    }

    /// The chip of seed `seed`, shared with every other user of that chip (the planes
    /// are pure functions of the seed, so sharing them changes no result).
    pub(crate) fn shared(seed: u64) -> Arc<Chip> {
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
    fn gain(&self) -> &[f32] {
        self.gain.get_or_init(|| self.plane(stream::FP_GAIN, 0))
    }

    /// The per-PE gain deviation `G` and offset deviation `O` of register `reg`, packed
    /// (general registers have their own offset plane, every NEWS cell shares one).
    pub(crate) fn transfer(&self, reg: Reg) -> &[u32] {
        let slot = match reg {
            Reg::Gen(i) => usize::from(i),
            _ => OFFSET_SLOTS - 1,
        };
        self.offsets[slot].get_or_init(|| {
            let o = self.plane(stream::FP_OFFSET, slot as u64);
            pack_planes(self.gain(), &o)
        })
    }

    /// Gain and offset deviations of the DAC load, packed.
    pub(crate) fn load(&self) -> &[u32] {
        self.load.get_or_init(|| {
            let g = self.plane(stream::LOAD_GAIN, 0);
            pack_planes(&g, &self.plane(stream::LOAD_OFFSET, 0))
        })
    }

    /// Gain and offset deviations of the capture, packed.
    pub(crate) fn capture(&self) -> &[u32] {
        self.capture.get_or_init(|| {
            let g = self.plane(stream::CAPTURE_GAIN, 0);
            pack_planes(&g, &self.plane(stream::CAPTURE_OFFSET, 0))
        })
    }

    /// The fixed pattern of the uncorrected load (`load_in`) under `p`, per PE in
    /// row-major order, as the loaded register shows it: the bow and the chip's tilt
    /// across the columns, the scatter of columns and rows, the edge row, and the per-PE
    /// part. Every component but the bow is drawn from the chip seed.
    pub(crate) fn uncorrected_pattern(&self, p: &UncorrectedLoad) -> Vec<f32> {
        let d = self.uncorrected.get_or_init(|| UncorrectedDeviates {
            pe: self.plane(stream::UNCORRECTED_OFFSET, 0),
            lines: rng::normal_plane(self.seed, stream::UNCORRECTED_LINES, 0, 3, N),
        });
        let (cols, rows, tilt) = (&d.lines[..N], &d.lines[N..2 * N], d.lines[2 * N]);
        let column: Vec<f64> = (0..N)
            .map(|c| {
                p.column.bow * BOW[c]
                    + p.column.tilt * f64::from(tilt) * TILT[c]
                    + p.column.scatter * f64::from(cols[c])
            })
            .collect();
        let mut out = vec![0f32; N * N];
        for (r, row) in out.chunks_mut(N).enumerate() {
            let edge = if r == 0 { p.row.edge } else { 0.0 };
            let line = p.row.scatter * f64::from(rows[r]) + edge;
            for (c, o) in row.iter_mut().enumerate() {
                let pe = p.pattern_offset * f64::from(d.pe[r * N + c]);
                *o = (column[c] + line + pe) as f32;
            }
        }
        out
    }

    /// The per-PE readout offset deviation.
    pub(crate) fn readout(&self) -> &[f32] {
        self.readout
            .get_or_init(|| self.plane(stream::READOUT_OFFSET, 0))
    }
}

/// Two planes packed PE by PE.
fn pack_planes(gain: &[f32], offset: &[f32]) -> Vec<u32> {
    gain.iter()
        .zip(offset)
        .map(|(&g, &o)| bf16::pack(g, o))
        .collect()
}

/// The shapes across the columns, each of mean 0 and root mean square 1 over the
/// columns: a quadratic bow (centre up) and a linear tilt (east up).
static BOW: LazyLock<[f64; N]> = LazyLock::new(|| unit_shape(|u| -u * u));
static TILT: LazyLock<[f64; N]> = LazyLock::new(|| unit_shape(|u| u));

/// `f` of the column position `u` in -1..1, made mean 0 and root mean square 1.
fn unit_shape(f: impl Fn(f64) -> f64) -> [f64; N] {
    let mut s: [f64; N] = std::array::from_fn(|c| f((c as f64 - 127.5) / 127.5));
    let mean = s.iter().sum::<f64>() / N as f64;
    s.iter_mut().for_each(|v| *v -= mean);
    let rms = (s.iter().map(|v| v * v).sum::<f64>() / N as f64).sqrt();
    s.iter_mut().for_each(|v| *v /= rms);
    s
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
        assert_eq!(a.transfer(Reg::Gen(2)), fresh.transfer(Reg::Gen(2)));
        assert_eq!(
            a.transfer(Reg::X(crate::isa::Dir::North)),
            fresh.transfer(Reg::News)
        );
        assert_ne!(a.gain(), Chip::shared(12).gain());
        // Every register shares the gain deviates; each has its own offsets.
        let (p2, p3) = (a.transfer(Reg::Gen(2)), a.transfer(Reg::Gen(3)));
        assert!(p2.iter().zip(p3).all(|(&x, &y)| bf16::hi(x) == bf16::hi(y)));
        assert!(p2.iter().zip(p3).any(|(&x, &y)| bf16::lo(x) != bf16::lo(y)));
    }

    #[test]
    fn the_uncorrected_pattern_has_its_parts() {
        use crate::sim::noise::profile::{ColumnPattern, RowPattern};
        let chip = Chip::new(5);
        let bow_only = UncorrectedLoad {
            column: ColumnPattern {
                bow: 2.0,
                ..ColumnPattern::default()
            },
            ..UncorrectedLoad::default()
        };
        let p = chip.uncorrected_pattern(&bow_only);
        // The same in every row, mean 0, rms 2, centre up, symmetric.
        assert!(p.chunks(N).all(|r| r == &p[..N]));
        let mean = p[..N].iter().map(|&v| f64::from(v)).sum::<f64>() / N as f64;
        let rms = (p[..N].iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / N as f64).sqrt();
        assert!(mean.abs() < 1e-5 && (rms - 2.0).abs() < 1e-5);
        assert!(p[128] > 0.0 && p[0] < 0.0 && (p[0] - p[N - 1]).abs() < 1e-5);
        let edge = UncorrectedLoad {
            row: RowPattern {
                edge: 7.0,
                scatter: 0.0,
            },
            ..UncorrectedLoad::default()
        };
        let p = chip.uncorrected_pattern(&edge);
        assert!(p[..N].iter().all(|&v| v == 7.0) && p[N..].iter().all(|&v| v == 0.0));
        // The drawn parts depend on the chip.
        let scatter = UncorrectedLoad {
            pattern_offset: 1.0,
            ..UncorrectedLoad::default()
        };
        assert_ne!(
            chip.uncorrected_pattern(&scatter),
            Chip::new(6).uncorrected_pattern(&scatter)
        );
    }
}
