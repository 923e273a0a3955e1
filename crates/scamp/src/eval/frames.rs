//! Running frames of tiled images through the chip part of a network and reading out
//! each image's binary maps (the readout, [`super::readout`], turns them into features).

use super::dataset::Split;
use super::stage::Chip;
use super::tiling::Tiling;
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::run::RunError;
use crate::sim::{self, Array, EdgeMode};
use std::cell::RefCell;

/// The noise one frame runs under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameNoise<'a> {
    /// The profile.
    pub(crate) profile: &'a Profile,
    /// Fixed-pattern (chip) seed.
    pub(crate) chip_seed: u64,
    /// Temporal-noise seed.
    pub(crate) run_seed: u64,
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

/// A worker's array and frame picture, kept between frames.
struct Spare {
    array: Array,
    frame: Vec<u8>,
}

thread_local! {
    /// The arrays (with their frame pictures) this worker thread ran frames on, kept
    /// for its next frames: a fresh array per frame cost a quarter of `scamp eval`'s
    /// time in the kernel zeroing new pages. A frame takes one out while it runs; a
    /// frame that starts on this thread meanwhile (a worker steals work while it
    /// waits) takes another, so after the first frames no frame allocates one.
    static SPARE: RefCell<Vec<Spare>> = const { RefCell::new(Vec::new()) };
}

/// Runs `body` on the array of frame `frame` of `split` before the chip part runs:
/// every register 0, the frame's images exposed, the noise layer installed. The
/// array is one of this thread's spare ones, reset, when it has one.
pub(crate) fn with_frame_array<T>(
    chip: &Chip,
    tiling: &Tiling,
    split: &Split,
    frame: usize,
    noise: FrameNoise,
    body: impl FnOnce(&mut Array) -> T,
) -> T {
    let spare = SPARE.with_borrow_mut(Vec::pop);
    let mut spare = match spare {
        Some(mut s) => {
            s.array.reset(chip.general, EdgeMode::Zero);
            s
        }
        None => Spare {
            array: Array::new(chip.general, EdgeMode::Zero),
            frame: Vec::new(),
        },
    };
    tiling.compose_into(split, frame * tiling.per_frame(), &mut spare.frame);
    spare.array.expose(&spare.frame);
    if !noise.profile.is_exact() {
        let model = NoiseModel::new(noise.profile, noise.chip_seed, noise.run_seed);
        spare.array.set_layer(model);
    }
    let out = body(&mut spare.array);
    SPARE.with_borrow_mut(|kept| kept.push(spare));
    out
}
