//! What an evaluation counts, image by image: integers only, so that the counts of
//! shards add up to exactly the counts of the whole run ([`Counts::checked_sum`]).

use super::dataset::CLASSES;
use serde::{Deserialize, Serialize};

/// The counts of one evaluation (one approximation depth) over some test images.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Test images.
    pub(crate) images: u64,
    /// Images classified correctly under `ideal`.
    pub(crate) ideal_correct: u64,
    /// Per chip seed, images classified correctly under the noise profile.
    pub(crate) noisy_correct: Vec<u64>,
    /// CLASSES x CLASSES: true class (row) against the class predicted under `ideal`.
    pub(crate) confusion_ideal: Vec<Vec<u64>>,
    /// The same under the noise profile, summed over the chip seeds.
    pub(crate) confusion: Vec<Vec<u64>>,
    /// Binary-map bits that differ between the ideal and the noisy run, over all seeds.
    pub(crate) flipped_bits: u64,
    /// Binary-map bits compared, over all seeds.
    pub(crate) bits: u64,
    /// Per binary map, the bits the noise flipped, over all seeds (empty in counts
    /// written before it was kept).
    #[serde(default)]
    pub(crate) flipped_per_map: Vec<u64>,
    /// (image, chip seed) pairs whose predicted class the noise changed.
    pub(crate) changed: u64,
}

impl Counts {
    /// Zero counts for `seeds` chip seeds.
    pub fn new(seeds: usize) -> Counts {
        Counts {
            images: 0,
            ideal_correct: 0,
            noisy_correct: vec![0; seeds],
            confusion_ideal: vec![vec![0; CLASSES]; CLASSES],
            confusion: vec![vec![0; CLASSES]; CLASSES],
            flipped_bits: 0,
            bits: 0,
            flipped_per_map: Vec::new(),
            changed: 0,
        }
    }

    /// Counts one image with its label and ideal prediction.
    pub fn add_ideal(&mut self, label: u8, predicted: u8) {
        self.images += 1;
        self.ideal_correct += u64::from(label == predicted);
        bump(&mut self.confusion_ideal, label, predicted);
    }

    /// Counts one image's noisy run on chip seed number `seed`: its class, and per
    /// map the bits the noise flipped out of `bits` compared.
    pub fn add_noisy(
        &mut self,
        seed: usize,
        (label, ideal, noisy): (u8, u8, u8),
        flipped: &[u64],
        bits: u64,
    ) {
        if let Some(c) = self.noisy_correct.get_mut(seed) {
            *c += u64::from(label == noisy);
        }
        bump(&mut self.confusion, label, noisy);
        if self.flipped_per_map.len() < flipped.len() {
            self.flipped_per_map.resize(flipped.len(), 0);
        }
        for (a, b) in self.flipped_per_map.iter_mut().zip(flipped) {
            *a += b;
        }
        self.flipped_bits += flipped.iter().sum::<u64>();
        self.bits += bits;
        self.changed += u64::from(ideal != noisy);
    }

    /// Adds the counts of other images (same seeds): the merge property test's
    /// reference for [`Counts::checked_sum`].
    #[cfg(test)]
    pub(crate) fn add(&mut self, o: &Counts) {
        self.images += o.images;
        self.ideal_correct += o.ideal_correct;
        for (a, b) in self.noisy_correct.iter_mut().zip(&o.noisy_correct) {
            *a += b;
        }
        for (m, n) in [
            (&mut self.confusion_ideal, &o.confusion_ideal),
            (&mut self.confusion, &o.confusion),
        ] {
            for (ra, rb) in m.iter_mut().zip(n) {
                for (a, b) in ra.iter_mut().zip(rb) {
                    *a += b;
                }
            }
        }
        self.flipped_bits += o.flipped_bits;
        self.bits += o.bits;
        if self.flipped_per_map.len() < o.flipped_per_map.len() {
            self.flipped_per_map.resize(o.flipped_per_map.len(), 0);
        }
        for (a, b) in self.flipped_per_map.iter_mut().zip(&o.flipped_per_map) {
            *a += b;
        }
        self.changed += o.changed;
    }

    /// Whether the shapes are those of a CLASSES-class count over `seeds` seeds (for
    /// counts read back from a file).
    pub(crate) fn well_formed(&self, seeds: usize) -> bool {
        let square = |m: &Vec<Vec<u64>>| m.len() == CLASSES && m.iter().all(|r| r.len() == CLASSES);
        self.noisy_correct.len() == seeds
            && square(&self.confusion)
            && square(&self.confusion_ideal)
    }
}

impl Counts {
    /// The sum of these counts and `o`'s, or `None` when a count would overflow (for
    /// counts read back from files, which may hold any number).
    pub fn checked_sum(&self, o: &Counts) -> Option<Counts> {
        let add = |a: &[u64], b: &[u64]| -> Option<Vec<u64>> {
            a.iter().zip(b).map(|(x, y)| x.checked_add(*y)).collect()
        };
        let add_matrix = |a: &[Vec<u64>], b: &[Vec<u64>]| -> Option<Vec<Vec<u64>>> {
            a.iter().zip(b).map(|(x, y)| add(x, y)).collect()
        };
        // Per-map flips of files with different map counts: the missing maps count 0.
        let maps = self.flipped_per_map.len().max(o.flipped_per_map.len());
        let padded = |v: &[u64]| {
            let mut v = v.to_vec();
            v.resize(maps, 0);
            v
        };
        Some(Counts {
            images: self.images.checked_add(o.images)?,
            ideal_correct: self.ideal_correct.checked_add(o.ideal_correct)?,
            noisy_correct: add(&self.noisy_correct, &o.noisy_correct)?,
            confusion_ideal: add_matrix(&self.confusion_ideal, &o.confusion_ideal)?,
            confusion: add_matrix(&self.confusion, &o.confusion)?,
            flipped_bits: self.flipped_bits.checked_add(o.flipped_bits)?,
            bits: self.bits.checked_add(o.bits)?,
            changed: self.changed.checked_add(o.changed)?,
            flipped_per_map: add(&padded(&self.flipped_per_map), &padded(&o.flipped_per_map))?,
        })
    }

    /// What does not add up in counts over `seeds` chip seeds read back from a file, or
    /// `None` when they are those of some evaluation: shapes, no more correct images
    /// than images, confusion matrices that count every image once (per seed) with the
    /// correct ones on their diagonals, no more flipped bits than bits, per-map flips that
    /// add up to the flipped bits.
    pub fn inconsistency(&self, seeds: usize) -> Option<Inconsistency> {
        if !self.well_formed(seeds) {
            return Some(Inconsistency::Shape { seeds });
        }
        let total = |m: &[Vec<u64>]| m.iter().flatten().map(|&v| u128::from(v)).sum::<u128>();
        let diagonal = |m: &[Vec<u64>]| (0..CLASSES).map(|k| u128::from(m[k][k])).sum::<u128>();
        let images = u128::from(self.images);
        let runs = images * seeds as u128;
        let noisy: u128 = self.noisy_correct.iter().map(|&c| u128::from(c)).sum();
        let per_map: u128 = self.flipped_per_map.iter().map(|&f| u128::from(f)).sum();
        use Inconsistency as I;
        let checks = [
            (
                self.ideal_correct <= self.images,
                I::IdealCorrect {
                    ideal_correct: self.ideal_correct,
                    images: self.images,
                },
            ),
            (
                self.noisy_correct.iter().all(|&c| c <= self.images),
                I::NoisyCorrect {
                    noisy_correct: self.noisy_correct.clone(),
                    images: self.images,
                },
            ),
            (
                total(&self.confusion_ideal) == images,
                I::ConfusionIdealTotal {
                    counted: total(&self.confusion_ideal),
                    images: self.images,
                },
            ),
            (
                diagonal(&self.confusion_ideal) == u128::from(self.ideal_correct),
                I::ConfusionIdealDiagonal {
                    ideal_correct: self.ideal_correct,
                },
            ),
            (
                total(&self.confusion) == runs,
                I::ConfusionTotal {
                    counted: total(&self.confusion),
                    runs,
                },
            ),
            (
                diagonal(&self.confusion) == noisy,
                I::ConfusionDiagonal {
                    noisy_correct: noisy,
                },
            ),
            (
                self.flipped_bits <= self.bits,
                I::FlippedBits {
                    flipped_bits: self.flipped_bits,
                    bits: self.bits,
                },
            ),
            (
                per_map == u128::from(self.flipped_bits),
                I::FlippedPerMap {
                    sum: per_map,
                    flipped_bits: self.flipped_bits,
                },
            ),
            (
                u128::from(self.changed) <= runs,
                I::Changed {
                    changed: self.changed,
                    runs,
                },
            ),
        ];
        checks.into_iter().find(|(ok, _)| !ok).map(|(_, why)| why)
    }
}

/// What does not add up in counts read back from a file ([`Counts::inconsistency`]), or
/// in a shard's other figures, with the values involved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Inconsistency {
    /// Lists or matrices of the wrong shape.
    #[error("the counts need {seeds} noisy_correct entries (one per chip seed) and {CLASSES}x{CLASSES} confusion matrices")]
    Shape {
        /// The chip seeds of the evaluation.
        seeds: usize,
    },
    /// More images correct under `ideal` than images.
    #[error("ideal_correct {ideal_correct} is over images {images}")]
    IdealCorrect {
        /// Images correct under `ideal`.
        ideal_correct: u64,
        /// Images.
        images: u64,
    },
    /// More images correct under noise (for some seed) than images.
    #[error("a noisy_correct of {noisy_correct:?} is over images {images}")]
    NoisyCorrect {
        /// Images correct under noise, per chip seed.
        noisy_correct: Vec<u64>,
        /// Images.
        images: u64,
    },
    /// An `ideal` confusion matrix that does not count every image once.
    #[error("confusion_ideal counts {counted} images, not {images}")]
    ConfusionIdealTotal {
        /// What the matrix counts.
        counted: u128,
        /// Images.
        images: u64,
    },
    /// An `ideal` confusion matrix whose diagonal is not the correct images.
    #[error("confusion_ideal's diagonal is not ideal_correct {ideal_correct}")]
    ConfusionIdealDiagonal {
        /// Images correct under `ideal`.
        ideal_correct: u64,
    },
    /// A noisy confusion matrix that does not count every run once.
    #[error("confusion counts {counted} runs, not images x chip seeds = {runs}")]
    ConfusionTotal {
        /// What the matrix counts.
        counted: u128,
        /// Images times chip seeds.
        runs: u128,
    },
    /// A noisy confusion matrix whose diagonal is not the correct runs.
    #[error("confusion's diagonal is not the sum of noisy_correct {noisy_correct}")]
    ConfusionDiagonal {
        /// The sum of noisy_correct.
        noisy_correct: u128,
    },
    /// More flipped bits than bits.
    #[error("flipped_bits {flipped_bits} is over bits {bits}")]
    FlippedBits {
        /// Flipped bits.
        flipped_bits: u64,
        /// Bits.
        bits: u64,
    },
    /// Per-map flips that do not add up to the flipped bits.
    #[error("flipped_per_map sums to {sum}, not flipped_bits {flipped_bits}")]
    FlippedPerMap {
        /// Their sum.
        sum: u128,
        /// Flipped bits.
        flipped_bits: u64,
    },
    /// More changed decisions than runs.
    #[error("changed {changed} is over images x chip seeds = {runs}")]
    Changed {
        /// Runs whose decision changed.
        changed: u64,
        /// Images times chip seeds.
        runs: u128,
    },
    /// More images than the test split has.
    #[error("images {images} is over the test split's {test_images}")]
    ImagesOverSplit {
        /// Images.
        images: u64,
        /// The test split's images.
        test_images: u64,
    },
    /// A saturation count over the writes it counts among.
    #[error("stage {stage} {register}: {count} writes past the {past} of {writes}")]
    Saturation {
        /// The network stage.
        stage: usize,
        /// The register (a name from the file).
        register: String,
        /// Writes past the knee or limit.
        count: u64,
        /// `knee` or `limit`.
        past: &'static str,
        /// All writes.
        writes: u64,
    },
    /// Noisy seconds that are not a duration.
    #[error("noisy_seconds {seconds} is not a duration")]
    NoisySeconds {
        /// The figure read.
        seconds: f64,
    },
}

fn bump(m: &mut [Vec<u64>], row: u8, col: u8) {
    if let Some(c) = m
        .get_mut(usize::from(row))
        .and_then(|r| r.get_mut(usize::from(col)))
    {
        *c += 1;
    }
}

/// Accuracy figures derived from [`Counts`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    /// Accuracy under `ideal`.
    pub ideal: f64,
    /// Accuracy under the noise profile over the chip seeds.
    pub noisy: Spread,
    /// `ideal - noisy.mean`.
    pub lost: f64,
}

/// Mean, sample standard deviation, extremes and the values per chip seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Mean over the chip seeds.
    pub mean: f64,
    /// Sample standard deviation over the chip seeds (0 for one seed).
    pub std: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// One value per chip seed, in seed order.
    pub(crate) per_seed: Vec<f64>,
}

impl Spread {
    /// The spread of `v`.
    pub fn of(v: Vec<f64>) -> Spread {
        let n = v.len().max(1) as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = if v.len() > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Spread {
            mean,
            std: var.sqrt(),
            min: v.iter().copied().fold(f64::INFINITY, f64::min).min(mean),
            max: v
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
                .max(mean),
            per_seed: v,
        }
    }
}

impl Accuracy {
    /// The accuracy figures of `c`.
    pub fn of(c: &Counts) -> Accuracy {
        let n = c.images.max(1) as f64;
        let ideal = c.ideal_correct as f64 / n;
        let noisy = Spread::of(c.noisy_correct.iter().map(|&k| k as f64 / n).collect());
        Accuracy {
            ideal,
            lost: ideal - noisy.mean,
            noisy,
        }
    }
}

/// The fraction of binary-map bits the noise flipped.
pub(crate) fn flip_rate(c: &Counts) -> f64 {
    c.flipped_bits as f64 / c.bits.max(1) as f64
}
