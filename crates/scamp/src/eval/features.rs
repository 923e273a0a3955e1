//! A network's chip part built for images of one size, and the features (and binary
//! maps) it reads out for any batch of images under a profile on one chip: what
//! `scamp.Network.features` returns, so that a head can be trained elsewhere on
//! features from many chips.

use super::dataset::Split;
use super::frames::{run_frame, run_seed, FrameNoise};
use super::network::Network;
use super::readout::Layout;
use super::stage::{self, BuildOptions, Chip};
use super::tiling::{NoTiling, Tiling};
use super::EvalError;
use crate::sim::batch;
use crate::sim::noise::Profile;
use crate::sim::run::RunError;

/// Frames run side by side before their results are taken (bounds the memory held).
pub(crate) const CHUNK: usize = 32;

/// The chip part of a network for `rows x cols` images: the frame program, how images
/// are tiled on a frame and what the readout makes of the maps.
#[derive(Clone, Debug)]
pub struct Built {
    /// The frame program and its maps.
    pub chip: Chip,
    /// Images on a frame.
    pub tiling: Tiling,
    /// Maps to features.
    pub layout: Layout,
}

impl Built {
    /// Builds `net` for `rows x cols` images.
    pub fn new(
        net: &Network,
        rows: usize,
        cols: usize,
        opts: &BuildOptions,
    ) -> Result<Built, EvalError> {
        let chip = stage::build(net, opts)?;
        let tiling = Tiling::with_margin(rows, cols, chip.reach, chip.margin).ok_or(NoTiling {
            rows,
            cols,
            gap: chip.reach,
        })?;
        let layout = Layout::new(rows, cols, chip.maps.len(), &net.readout)?;
        Ok(Built {
            chip,
            tiling,
            layout,
        })
    }
}

/// The noise of a batch: a profile, a chip and a temporal seed.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    /// The profile.
    pub profile: &'a Profile,
    /// Fixed-pattern seed.
    pub chip_seed: u64,
    /// Temporal seed: 0 runs frame f as `scamp eval`'s test frame f on that chip;
    /// others give other temporal noise.
    pub seed: u64,
}

impl Sample<'_> {
    /// The temporal seed of frame `frame`.
    pub(crate) fn run_seed(&self, frame: usize) -> u64 {
        run_seed(self.chip_seed, frame, self.seed)
    }
}

/// What a batch of images reads out.
#[derive(Clone, Debug, PartialEq)]
pub struct Extracted {
    /// Images.
    pub images: usize,
    /// Features per image.
    pub per_image: usize,
    /// The features, image after image.
    pub features: Vec<f32>,
    /// Bits per image (maps one after another, each rows x cols), 0 when not kept.
    pub(crate) bits_per_image: usize,
    /// The binary maps, image after image, when kept.
    pub bits: Vec<u8>,
}

/// The features (and, with `keep_bits`, the binary maps) of every image of `split`
/// under `sample`, frame by frame as `scamp eval` tiles them.
pub fn extract(
    built: &Built,
    split: &Split,
    sample: Sample,
    keep_bits: bool,
) -> Result<Extracted, EvalError> {
    let frames = built.tiling.frames(split.len());
    let per_image = built.layout.features();
    let bits_per_image = if keep_bits {
        built.chip.maps.len() * split.rows * split.cols
    } else {
        0
    };
    let mut out = Extracted {
        images: split.len(),
        per_image,
        features: Vec::with_capacity(split.len() * per_image),
        bits_per_image,
        bits: Vec::with_capacity(split.len() * bits_per_image),
    };
    for start in (0..frames).step_by(CHUNK) {
        super::check_cancel()?;
        let n = CHUNK.min(frames - start);
        // Each worker reads out the frames it ran, so that the readout runs on every
        // core too rather than on this thread while the others wait.
        let done = batch::frames(n, |i| {
            let f = start + i;
            let noise = FrameNoise {
                profile: sample.profile,
                chip_seed: sample.chip_seed,
                run_seed: sample.run_seed(f),
            };
            let bits = run_frame(&built.chip, &built.tiling, split, f, noise)?;
            let features: Vec<f32> = bits
                .iter()
                .flat_map(|b| built.layout.features_of(b))
                .collect();
            Ok::<_, RunError>((features, keep_bits.then_some(bits)))
        })?;
        for (features, bits) in done {
            out.features.extend(features);
            for b in bits.iter().flatten() {
                out.bits.extend_from_slice(b);
            }
        }
    }
    Ok(out)
}
