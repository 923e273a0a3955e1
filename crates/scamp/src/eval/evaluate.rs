//! The evaluation: for each approximation depth, build the chip part, compute the
//! training features and fit (or load) the head, then run the test frames under
//! `ideal` and under the noise profile on every chip seed, and count.

use super::counts::Counts;
use super::dataset::{Dataset, Split};
use super::features::{Built, CHUNK};
use super::frames::{run_frame, run_seed, FrameNoise};
use super::head::Head;
use super::network::{Decision, HeadDef, Network};
use super::readout::Layout;
use super::report::{DepthCounts, Mergeable, Meta};
use super::shard::Shard;
use super::stage::{self, BuildOptions, Chip};
use super::tiling::Tiling;
use super::EvalError;
use crate::cain::CompileOptions;
use crate::sim::batch;
use crate::sim::noise::Profile;
use std::time::Instant;

/// Chips the noisy runs are repeated on unless told (`eval --chip-seeds`).
pub(crate) const DEFAULT_CHIP_SEEDS: u32 = 3;

/// Chip seeds of noise-aware training start here (away from the test chips 1..).
pub(crate) const TRAIN_CHIP_BASE: u64 = 1001;

/// Called as frames finish: (what, done, total).
pub(crate) type Progress<'a> = &'a (dyn Fn(&str, u64, u64) + Sync);

/// What to evaluate and how: [`Options::default`] and the `with_` methods.
///
/// ```
/// let opts = scamp::eval::Options::default().with_chip_seeds(2).with_test_images(Some(100));
/// assert_eq!((opts.noise.0.as_str(), opts.chip_seeds), ("scamp5", 2));
/// ```
#[non_exhaustive]
pub struct Options<'a> {
    /// The noise profile of the noisy runs, with the name to report.
    pub noise: (String, Profile),
    /// Chip seeds 1..=N.
    pub chip_seeds: u32,
    /// Temporal-noise seed of every noisy frame: 0 is `scamp eval`'s draw; another
    /// seed draws other temporal noise on the same chips.
    pub seed: u64,
    /// Train the head on features under this profile (over `chip_seeds` training chips)
    /// instead of `ideal`.
    pub train_noise: Option<(String, Profile)>,
    /// Use only the first N training images.
    pub train_images: Option<usize>,
    /// Use only the first N test images.
    pub test_images: Option<usize>,
    /// Evaluate one shard of the test frames.
    pub shard: Option<Shard>,
    /// Depths besides the network's own (all from 0 when `None`).
    pub depths: Option<Vec<u32>>,
    /// Search options for the stages the generator compiles.
    pub compile: CompileOptions,
    /// Keep up to this many images whose class the noise changed (for `--html`).
    pub examples: usize,
    /// Called as frames finish: (what, done, total).
    pub progress: Option<Progress<'a>>,
    /// Count the PE-writes past the knee and the limit per stage and register at the
    /// network's own depth (`super::saturation`; two more runs of each test frame).
    pub count_saturation: bool,
}

impl Default for Options<'_> {
    /// The default profile (`scamp5`) on chips 1..=3, the head trained under `ideal` on
    /// every training image, every test image, all depths from 0, the default search,
    /// no examples, no progress and no saturation counts.
    fn default() -> Self {
        Options {
            noise: (
                crate::sim::noise::DEFAULT_PROFILE.to_string(),
                Profile::builtin(crate::sim::noise::DEFAULT_PROFILE).unwrap_or_default(),
            ),
            chip_seeds: DEFAULT_CHIP_SEEDS,
            seed: 0,
            train_noise: None,
            train_images: None,
            test_images: None,
            shard: None,
            depths: None,
            compile: CompileOptions::default(),
            examples: 0,
            progress: None,
            count_saturation: false,
        }
    }
}

with_methods!(Options<'a> {
    with_noise => noise: (String, Profile),
    with_chip_seeds => chip_seeds: u32,
    with_seed => seed: u64,
    with_train_noise => train_noise: Option<(String, Profile)>,
    with_train_images => train_images: Option<usize>,
    with_test_images => test_images: Option<usize>,
    with_shard => shard: Option<Shard>,
    with_depths => depths: Option<Vec<u32>>,
    with_compile => compile: CompileOptions,
    with_examples => examples: usize,
    with_progress => progress: Option<Progress<'a>>,
    with_count_saturation => count_saturation: bool,
});

/// An image whose class the noise changed on some chip, with its binary maps ideal
/// and on every chip.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    /// Index in the test split.
    pub index: usize,
    /// Its pixels.
    pub pixels: Vec<u8>,
    /// True class.
    pub label: u8,
    /// Class under `ideal`.
    pub ideal: u8,
    /// The binary maps under `ideal` (maps one after another).
    pub ideal_bits: Vec<u8>,
    /// Each chip's run, in chip-seed order.
    pub chips: Vec<ChipView>,
}

/// One chip's run of an image.
#[derive(Clone, Debug, PartialEq)]
pub struct ChipView {
    /// The chip seed.
    pub chip_seed: u64,
    /// Class under the noise on this chip.
    pub class: u8,
    /// The binary maps on this chip.
    pub bits: Vec<u8>,
}

/// The result of an evaluation.
pub struct Evaluation {
    /// The counts of every depth.
    pub merge: Mergeable,
    /// Examples of the network's own depth.
    pub examples: Vec<Example>,
    /// Image size.
    pub rows: usize,
    /// Image size.
    pub cols: usize,
}

/// FNV-1a: a stable 64-bit hash for fingerprints (the same on every build).
pub(crate) fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The fingerprint of a head's weights files (their contents, within 64 MiB each: a
/// head file is far smaller), or of their absence.
fn head_file_fingerprint(head: &HeadDef) -> String {
    match head {
        HeadDef::Weights(files) => files
            .iter()
            .map(|file| {
                crate::isa::source::read_at_most(file, 1 << 26)
                    .map_or_else(|e| format!("unreadable: {e}"), |b| fnv(&b))
            })
            .collect::<Vec<_>>()
            .join(","),
        HeadDef::Train { .. } => "trained".into(),
    }
}

/// Features of every image of `split` under `profile` (training chips spread over the
/// frames when noisy).
fn features(
    chip: &Chip,
    tiling: &Tiling,
    pooling: &Layout,
    split: &Split,
    profile: &Profile,
    (seeds, seed): (u32, u64),
    progress: Option<Progress>,
) -> Result<Vec<f32>, EvalError> {
    let frames = tiling.frames(split.len());
    let mut out = Vec::with_capacity(split.len() * pooling.features());
    for start in (0..frames).step_by(CHUNK) {
        super::check_cancel()?;
        let n = CHUNK.min(frames - start);
        let done = batch::frames(n, |i| {
            let f = start + i;
            let chip_seed = TRAIN_CHIP_BASE + (f as u64 % u64::from(seeds.max(1)));
            let noise = FrameNoise {
                profile,
                chip_seed,
                run_seed: run_seed(chip_seed, f, seed),
            };
            run_frame(chip, tiling, split, f, noise)
        })?;
        for bits in done.iter().flatten() {
            out.extend(pooling.features_of(bits));
        }
        if let Some(p) = progress {
            p("training features", (start + n) as u64, frames as u64);
        }
    }
    Ok(out)
}

/// One test image's binary maps, ideal and on each chip.
struct Image<'a> {
    index: usize,
    label: u8,
    ideal: &'a [u8],
    noisy: &'a [&'a Vec<u8>],
}

/// Classifies `image` ideal and on every chip and counts it; returns it as an example
/// (without its pixels) when `keep` and the noise changed its class on some chip.
fn count_image(
    head: &Head,
    readout: &Layout,
    image: &Image,
    counts: &mut Counts,
    keep: bool,
) -> Option<Example> {
    let plane = image.ideal.len() / readout.maps.max(1);
    let pi = head.predict(&readout.features_of(image.ideal));
    counts.add_ideal(image.label, pi);
    let mut classes = Vec::with_capacity(image.noisy.len());
    for (s, nb) in image.noisy.iter().enumerate() {
        let pn = head.predict(&readout.features_of(nb));
        let flipped: Vec<u64> = image
            .ideal
            .chunks(plane.max(1))
            .zip(nb.chunks(plane.max(1)))
            .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x != y).count() as u64)
            .collect();
        counts.add_noisy(s, (image.label, pi, pn), &flipped, image.ideal.len() as u64);
        classes.push(pn);
    }
    (keep && classes.iter().any(|&c| c != pi)).then(|| Example {
        index: image.index,
        pixels: Vec::new(),
        label: image.label,
        ideal: pi,
        ideal_bits: image.ideal.to_vec(),
        chips: classes
            .iter()
            .zip(image.noisy)
            .enumerate()
            .map(|(s, (&class, bits))| ChipView {
                chip_seed: s as u64 + 1,
                class,
                bits: (*bits).clone(),
            })
            .collect(),
    })
}

/// One depth: the chip part, the head, and the counts over the test frames.
struct Depth<'a> {
    net: &'a Network,
    train: &'a Split,
    test: &'a Split,
    opts: &'a Options<'a>,
    ideal: &'a Profile,
}

impl Depth<'_> {
    fn head(&self, chip: &Chip, tiling: &Tiling, pooling: &Layout) -> Result<Head, EvalError> {
        match &self.net.head {
            HeadDef::Weights(files) => Ok(Head::load(files, pooling.features())?),
            HeadDef::Train { params, hidden } => {
                let profile = self
                    .opts
                    .train_noise
                    .as_ref()
                    .map_or(self.ideal, |(_, p)| p);
                let x = features(
                    chip,
                    tiling,
                    pooling,
                    self.train,
                    profile,
                    (self.opts.chip_seeds, self.opts.seed),
                    self.opts.progress,
                )?;
                let head = Head::train(&x, &self.train.labels, pooling.features(), hidden, params);
                if !head.is_finite() {
                    return Err(EvalError::Diverged {
                        learning_rate: params.learning_rate,
                        l2: params.l2,
                    });
                }
                Ok(head)
            }
        }
    }

    fn run(
        &self,
        depth: u32,
        examples: usize,
        count_saturation: bool,
    ) -> Result<(DepthCounts, Vec<Example>), EvalError> {
        let test = self.test;
        let build = BuildOptions {
            depth: Some(depth),
            compile: self.opts.compile.clone(),
        };
        let Built {
            chip,
            tiling,
            layout: pooling,
        } = Built::new(self.net, test.rows, test.cols, &build)?;
        let head = self.head(&chip, &tiling, &pooling)?;
        let frames = tiling.frames(test.len());
        let range = self.opts.shard.map_or(0..frames, |s| s.frames(frames));
        if range.is_empty() {
            return Err(EvalError::EmptyShard {
                index: self.opts.shard.map_or(1, |s| s.index),
                count: self.opts.shard.map_or(1, |s| s.count),
                frames,
            });
        }
        let seeds = self.opts.chip_seeds as usize;
        let mut counts = Counts::new(seeds);
        let mut kept = Vec::new();
        let mut noisy_seconds = 0.0;
        let frame_list: Vec<usize> = range.clone().collect();
        for chunk in frame_list.chunks(CHUNK) {
            super::check_cancel()?;
            let ideal = batch::frames(chunk.len(), |i| {
                let noise = FrameNoise {
                    profile: self.ideal,
                    chip_seed: 0,
                    run_seed: 0,
                };
                run_frame(&chip, &tiling, test, chunk[i], noise)
            })?;
            let started = Instant::now();
            let noisy = batch::frames(chunk.len() * seeds, |j| {
                let chip_seed = (j % seeds) as u64 + 1;
                let f = chunk[j / seeds];
                let noise = FrameNoise {
                    profile: &self.opts.noise.1,
                    chip_seed,
                    run_seed: run_seed(chip_seed, f, self.opts.seed),
                };
                run_frame(&chip, &tiling, test, f, noise)
            })?;
            noisy_seconds += started.elapsed().as_secs_f64();
            for (i, &f) in chunk.iter().enumerate() {
                for (slot, ib) in ideal[i].iter().enumerate() {
                    let index = f * tiling.per_frame() + slot;
                    let noisy: Vec<&Vec<u8>> =
                        (0..seeds).map(|s| &noisy[i * seeds + s][slot]).collect();
                    let image = Image {
                        index,
                        label: test.labels[index],
                        ideal: ib,
                        noisy: &noisy,
                    };
                    let keep = kept.len() < examples;
                    if let Some(mut e) = count_image(&head, &pooling, &image, &mut counts, keep) {
                        e.pixels = test.image(index).to_vec();
                        kept.push(e);
                    }
                }
            }
            if let Some(p) = self.opts.progress {
                let done = chunk.last().map_or(0, |&f| f + 1 - range.start);
                p(
                    &format!("depth {depth} test frames"),
                    done as u64,
                    range.len() as u64,
                );
            }
        }
        let saturation = if count_saturation {
            let on = (&tiling, test);
            super::saturation::count(&chip, on, &frame_list, (&self.opts.noise.1, self.opts.seed))?
        } else {
            Vec::new()
        };
        let row = DepthCounts {
            depth,
            instructions: chip.program.instructions() as u64,
            cycles: chip.program.cycles(),
            images_per_frame: tiling.per_frame(),
            gap: tiling.gap,
            program: fnv(chip.program.to_string().as_bytes()),
            counts,
            noisy_seconds,
            saturation,
        };
        Ok((row, kept))
    }
}

/// The network's own depth (the largest of its stages' approximation depths) and the
/// number of maps and features it reads out.
fn own_shape(net: &Network, rows: usize, cols: usize) -> Result<(u32, usize, usize), EvalError> {
    let mut depth = 0;
    let mut maps = 0;
    for s in &net.stages {
        let k = crate::cain::approximate_spec(&s.spec).map_err(|source| {
            stage::StageError::Compile {
                file: s.spec_file.clone(),
                source: Box::new(source),
            }
        })?;
        depth = depth.max(k.iter().map(|k| k.approx.depth).max().unwrap_or(0));
        if s.decision != Decision::None {
            maps += k.len();
        }
    }
    let pooling = Layout::new(rows, cols, maps, &net.readout)?;
    Ok((depth, maps, pooling.features()))
}

/// Evaluates `net` on `data` (the first `opts.train_images` and `opts.test_images` of
/// its splits).
pub fn evaluate(net: &Network, data: &Dataset, opts: &Options) -> Result<Evaluation, EvalError> {
    let train = data.train.up_to(opts.train_images);
    let test = data.test.up_to(opts.test_images);
    let (train, test) = (train.as_ref(), test.as_ref());
    if train.is_empty() && matches!(net.head, HeadDef::Train { .. }) {
        return Err(EvalError::NoTrainImages);
    }
    if test.is_empty() {
        return Err(EvalError::NoTestImages);
    }
    let ideal = Profile::builtin("ideal").expect("the ideal profile is built in");
    if let Some(s) = &opts.noise.1.saturation {
        // Finds the window the soft knee leaves unchanged (once per setting, a few
        // milliseconds) before any noisy frame is timed.
        let _ = s.resolve();
    }
    let (main_depth, maps, features) = own_shape(net, test.rows, test.cols)?;
    let mut depths: Vec<u32> = opts
        .depths
        .clone()
        .unwrap_or_else(|| (0..=main_depth).collect());
    if let Some(d) = depths.iter().find(|&&d| d > main_depth) {
        return Err(EvalError::TooDeep {
            asked: *d,
            deepest: main_depth,
        });
    }
    depths.push(main_depth);
    depths.sort_unstable();
    depths.dedup();
    let seeds: Vec<u64> = (1..=u64::from(opts.chip_seeds)).collect();
    let train_noise = opts
        .train_noise
        .as_ref()
        .map_or_else(|| "ideal".to_string(), |(n, _)| n.clone());
    let fingerprint = fnv(&format!(
        "{}|{:?}|{}|{:?}|{:?}|{:?}|{}x{}|{}|{}|{}|{:?}|{:?}|{}|{}",
        net.sources,
        opts.noise.1,
        opts.chip_seeds,
        opts.train_noise.as_ref().map(|t| &t.1),
        depths,
        (opts.compile.work, opts.compile.time_limit),
        test.rows,
        test.cols,
        train.len(),
        test.len(),
        fnv(&test.labels),
        fnv(&test.pixels),
        fnv(&train.labels),
        fnv(&train.pixels),
        head_file_fingerprint(&net.head),
    )
    .into_bytes());
    let runner = Depth {
        net,
        train,
        test,
        opts,
        ideal: &ideal,
    };
    let mut rows = Vec::new();
    let mut examples = Vec::new();
    for &d in &depths {
        let keep = if d == main_depth { opts.examples } else { 0 };
        let count = d == main_depth && opts.count_saturation;
        let (row, kept) = runner.run(d, keep, count)?;
        if d == main_depth {
            examples = kept;
        }
        rows.push(row);
    }
    let meta = Meta {
        network: net.name.clone(),
        dataset: data.dir.display().to_string(),
        noise: opts.noise.0.clone(),
        train_noise,
        chip_seeds: seeds,
        seed: opts.seed,
        train_images: train.len() as u64,
        test_images: test.len() as u64,
        stages: net.stages.len(),
        maps,
        features,
        clock_hz: crate::sim::DEFAULT_CLOCK_HZ,
    };
    Ok(Evaluation {
        merge: Mergeable {
            fingerprint,
            shard: opts.shard.map(|s| [s.index, s.count]),
            main_depth,
            rows,
            meta,
        },
        examples,
        rows: test.rows,
        cols: test.cols,
    })
}
