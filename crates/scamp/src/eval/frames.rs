//! Running frames of tiled images through the chip part of a network and reading out
//! each image's binary maps (the readout, [`super::readout`], turns them into features).

use super::dataset::Split;
use super::stage::Chip;
use super::tiling::Tiling;
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::run::RunError;
use crate::sim::{self, Array, EdgeMode};
use std::cell::Cell;

/// The noise one frame runs under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameNoise<'a> {
    /// The profile.
    pub profile: &'a Profile,
    /// Fixed-pattern (chip) seed.
    pub chip_seed: u64,
    /// Temporal-noise seed.
    pub run_seed: u64,
}

/// The temporal seed of frame `frame` on chip `chip_seed` under the evaluation's
/// `seed`: distinct for every frame and chip, and fixed by the frame's index in its
/// split (so a shard runs each frame exactly as the whole run does); seed 0 leaves it
/// `(chip_seed << 32) ^ frame`.
pub(crate) fn run_seed(chip_seed: u64, frame: usize, seed: u64) -> u64 {
    (chip_seed << 32) ^ frame as u64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The binary maps of every image of frame `frame` of `split` (images `frame *
/// per_frame ..`): per image, maps one after another, each `rows x cols` bits.
pub(crate) fn run_frame(
    chip: &Chip,
    tiling: &Tiling,
    split: &Split,
    frame: usize,
    noise: FrameNoise,
) -> Result<Vec<Vec<u8>>, RunError> {
    let first = frame * tiling.per_frame();
    with_frame_array(chip, tiling, split, frame, noise, |array| {
        sim::run(array, &chip.program, 1, sim::DEFAULT_CLOCK_HZ)?;
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
    })
}

thread_local! {
    /// The array this worker thread ran its last frame on, kept for its next frame: a
    /// fresh array per frame cost a quarter of `scamp eval`'s time in the kernel
    /// zeroing new pages. Taken out while a frame runs, so a frame that starts on this
    /// thread meanwhile (a worker steals work while it waits) makes its own.
    static SPARE: Cell<Option<Array>> = const { Cell::new(None) };
}

/// Runs `body` on the array of frame `frame` of `split` before the chip part runs:
/// every register 0, the frame's images exposed, the noise layer installed. The
/// array is this thread's spare one, reset, when it has one.
pub(crate) fn with_frame_array<T>(
    chip: &Chip,
    tiling: &Tiling,
    split: &Split,
    frame: usize,
    noise: FrameNoise,
    body: impl FnOnce(&mut Array) -> T,
) -> T {
    let mut array = match SPARE.take() {
        Some(mut a) => {
            a.reset(chip.general, EdgeMode::Zero);
            a
        }
        None => Array::new(chip.general, EdgeMode::Zero),
    };
    array.expose(&tiling.compose(split, frame * tiling.per_frame()));
    if !noise.profile.is_exact() {
        let model = NoiseModel::new(noise.profile, noise.chip_seed, noise.run_seed);
        array.set_layer(Box::new(model));
    }
    let out = body(&mut array);
    SPARE.set(Some(array));
    out
}
