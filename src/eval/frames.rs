//! Running frames of tiled images through the chip part of a network and reading out
//! each image's binary maps; pooling binary maps into the features that leave the chip.

use super::dataset::Split;
use super::stage::Chip;
use super::tiling::Tiling;
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::run::RunError;
use crate::sim::{self, Array, EdgeMode};

/// The noise one frame runs under.
#[derive(Clone, Copy, Debug)]
pub struct FrameNoise<'a> {
    /// The profile.
    pub profile: &'a Profile,
    /// Fixed-pattern (chip) seed.
    pub chip_seed: u64,
    /// Temporal-noise seed.
    pub run_seed: u64,
}

/// The temporal seed of frame `frame` on chip `chip_seed`: distinct for every frame
/// and chip, and fixed by the frame's index in its split (so a shard runs each frame
/// exactly as the whole run does).
pub fn run_seed(chip_seed: u64, frame: usize) -> u64 {
    (chip_seed << 32) ^ frame as u64
}

/// The binary maps of every image of frame `frame` of `split` (images `frame *
/// per_frame ..`): per image, maps one after another, each `rows x cols` bits.
pub fn run_frame(
    chip: &Chip,
    tiling: &Tiling,
    split: &Split,
    frame: usize,
    noise: FrameNoise,
) -> Result<Vec<Vec<u8>>, RunError> {
    let first = frame * tiling.per_frame();
    let mut array = Array::new(chip.general, EdgeMode::Zero);
    array.expose(&tiling.compose(split, first));
    if !noise.profile.is_exact() {
        let model = NoiseModel::new(noise.profile, noise.chip_seed, noise.run_seed);
        array.set_layer(Box::new(model));
    }
    sim::run(&mut array, &chip.program, 1, sim::DEFAULT_CLOCK_HZ)?;
    let count = tiling.per_frame().min(split.len().saturating_sub(first));
    Ok((0..count)
        .map(|slot| {
            let mut bits = Vec::with_capacity(chip.maps.len() * tiling.rows * tiling.cols);
            for m in &chip.maps {
                tiling.extract_into(array.bits(m.bit), slot, &mut bits);
            }
            bits
        })
        .collect())
}

/// How binary maps become features: the fraction of set bits in each `pool x pool`
/// block of each map (blocks at the right and bottom edges may be smaller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pooling {
    /// Map height.
    pub rows: usize,
    /// Map width.
    pub cols: usize,
    /// Maps per image.
    pub maps: usize,
    /// Block side.
    pub pool: usize,
}

impl Pooling {
    /// Blocks down and across one map.
    pub fn blocks(&self) -> (usize, usize) {
        (self.rows.div_ceil(self.pool), self.cols.div_ceil(self.pool))
    }

    /// Features per image.
    pub fn features(&self) -> usize {
        let (d, a) = self.blocks();
        self.maps * d * a
    }

    /// The counts of set bits per block, as they leave the chip (map, block row, block
    /// column order).
    pub fn counts(&self, bits: &[u8]) -> Vec<u32> {
        let (down, across) = self.blocks();
        let mut out = vec![0u32; self.features()];
        let plane = self.rows * self.cols;
        for (m, map) in bits.chunks_exact(plane).enumerate() {
            for (r, row) in map.chunks_exact(self.cols).enumerate() {
                let at = m * down * across + (r / self.pool) * across;
                for (slot, block) in out[at..at + across].iter_mut().zip(row.chunks(self.pool)) {
                    *slot += block.iter().map(|&b| u32::from(b != 0)).sum::<u32>();
                }
            }
        }
        out
    }

    /// The features of one image: each block's count over the block's size.
    pub fn features_of(&self, bits: &[u8]) -> Vec<f32> {
        let (down, across) = self.blocks();
        let size = |i: usize, n: usize| (self.pool).min(n - i * self.pool) as f32;
        self.counts(bits)
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let b = k % (down * across);
                n as f32 / (size(b / across, self.rows) * size(b % across, self.cols))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_counts_blocks_with_ragged_edges() {
        let p = Pooling {
            rows: 3,
            cols: 3,
            maps: 2,
            pool: 2,
        };
        assert_eq!(p.features(), 8);
        let bits = [1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(p.counts(&bits), vec![3, 1, 2, 1, 0, 0, 0, 1]);
        let f = p.features_of(&bits);
        assert_eq!(f[0], 0.75);
        assert_eq!(f[1], 0.5);
        assert_eq!(f[3], 1.0);
    }
}
