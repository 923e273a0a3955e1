//! A fixed sample of input patches from the bundled images: the representative inputs
//! the error objective runs a plan on to measure the clipping it causes.
//!
//! Positions are drawn once with a fixed seed, the same number from each image, so
//! every candidate of every search is measured on the same pixels and two plans differ
//! in their cost only by what they compute. A multi-channel sample pairs channel `z` of
//! a position in image `i` with image `i + z` at the same position, as `scamp check`
//! pairs input planes with images.

use crate::sim::layer::rng::mix64;
use crate::sim::{images, N};
use crate::verify::range::InputRange;
use std::sync::OnceLock;

/// Positions drawn from each bundled image (eight images: 384 in all). Fewer made the
/// cost of one output differ by a third between two draws on CNN-like layers; more
/// costs time in every scored plan.
const PER_IMAGE: usize = 48;

/// Largest offset a patch holds in each direction. Offsets further out (a plan moving a
/// value far and back) read the patch's edge, which only blurs the measurement.
pub(crate) const REACH: i32 = 8;

/// Seed of the positions.
const SEED: u64 = 40;

/// Side of a patch.
const SIDE: usize = 2 * REACH as usize + 1;

/// Input values around each sampled position, per channel, in the spec's input range.
#[derive(Debug, PartialEq)]
pub(crate) struct Sample {
    /// Positions sampled.
    n: usize,
    /// Channels held.
    channels: usize,
    /// `values[((z * SIDE + r + REACH) * SIDE + c + REACH) * n + s]`: channel `z` at
    /// offset `(r, c)` of position `s`.
    values: Vec<f64>,
}

/// The bundled images' grey pixels, decoded once.
fn pixels() -> &'static [Vec<u8>] {
    static PIXELS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    PIXELS.get_or_init(|| images::all().into_iter().map(|(_, g)| g.pixels).collect())
}

impl Sample {
    /// The sample for inputs in `range` on `channels` channels: pixels mapped onto the
    /// range as [`crate::verify::predict::InputStats::of_bundled_images`] maps them.
    pub(crate) fn of_bundled_images(range: InputRange, channels: usize) -> Sample {
        let images = pixels();
        let (a, b) = range.full_range_map();
        let lo = REACH as usize;
        let span = (N - 2 * lo) as u64;
        let positions: Vec<(usize, usize, usize)> = (0..images.len() * PER_IMAGE)
            .map(|k| {
                // Counter-based draws: position k is the same whatever else is drawn.
                let h = mix64(SEED ^ mix64(k as u64));
                let (y, x) = ((h & 0xffff_ffff) % span, (h >> 32) % span);
                (k / PER_IMAGE, lo + y as usize, lo + x as usize)
            })
            .collect();
        let n = positions.len();
        let channels = channels.max(1);
        let mut values = vec![0.0; channels * SIDE * SIDE * n];
        for z in 0..channels {
            for r in 0..SIDE {
                for c in 0..SIDE {
                    let base = ((z * SIDE + r) * SIDE + c) * n;
                    for (s, &(i, y, x)) in positions.iter().enumerate() {
                        let img = &images[(i + z) % images.len()];
                        let p = img[(y + r - lo) * N + (x + c - lo)];
                        values[base + s] = a + b * (f64::from(p) - 128.0);
                    }
                }
            }
        }
        Sample {
            n,
            channels,
            values,
        }
    }

    /// One channel of flat patches, one per level of `levels` (for tests on values
    /// worked out by hand).
    #[cfg(test)]
    pub(crate) fn flat(levels: &[f64]) -> Sample {
        let n = levels.len();
        Sample {
            n,
            channels: 1,
            values: (0..SIDE * SIDE)
                .flat_map(|_| levels.iter().copied())
                .collect(),
        }
    }

    /// Positions sampled.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Channel `z` at offset `(r, c)` of every position (offsets beyond [`REACH`] read
    /// the patch's edge; channels beyond the sample's read its last).
    pub(crate) fn at(&self, z: u8, r: i32, c: i32) -> &[f64] {
        let z = usize::from(z).min(self.channels - 1);
        let r = (r.clamp(-REACH, REACH) + REACH) as usize;
        let c = (c.clamp(-REACH, REACH) + REACH) as usize;
        let base = ((z * SIDE + r) * SIDE + c) * self.n;
        &self.values[base..base + self.n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_are_the_images_mapped_onto_the_range() {
        let s = Sample::of_bundled_images(InputRange::default(), 2);
        assert_eq!(s.len(), 8 * PER_IMAGE);
        // Full range: pixel minus 128; a half range halves the spread around its centre.
        let half = Sample::of_bundled_images(
            InputRange {
                lo: -64.0,
                hi: 63.5,
            },
            2,
        );
        for (v, h) in s.at(1, 2, -3).iter().zip(half.at(1, 2, -3)) {
            assert!((-128.0..=127.0).contains(v));
            assert!((h - v / 2.0).abs() < 1e-9);
        }
        // Neighbouring offsets are neighbouring pixels: mostly close on real images.
        let distance = |other: (u8, i32, i32)| -> f64 {
            let q = s.at(other.0, other.1, other.2);
            s.at(0, 0, 0)
                .iter()
                .zip(q)
                .map(|(a, b)| (a - b).abs())
                .sum()
        };
        assert!(distance((0, 0, 1)) < distance((1, 0, 0)));
        // Beyond the reach: the edge.
        assert_eq!(s.at(0, REACH + 3, 0), s.at(0, REACH, 0));
    }
}
