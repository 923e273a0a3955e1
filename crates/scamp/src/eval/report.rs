//! The report of `scamp eval`: figures derived from the counts of each approximation
//! depth, and the counts themselves (the part `--merge` adds up).

use super::counts::{flip_rate, Accuracy, Counts};
use serde::{Deserialize, Serialize};

/// One approximation depth as counted (the mergeable part of a row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DepthCounts {
    /// The approximation depth the stage specs were compiled at.
    pub(crate) depth: u32,
    /// Macro instructions of the frame program (capture, stages, decisions).
    pub(crate) instructions: u64,
    /// Its bus instructions (cycles).
    pub(crate) cycles: u64,
    /// Images per frame (the tiling of this depth's programs).
    pub(crate) images_per_frame: usize,
    /// Empty PEs between tiles.
    pub(crate) gap: usize,
    /// Fingerprint of the frame program (shards must run the same programs).
    pub(crate) program: String,
    /// The counts.
    pub(crate) counts: Counts,
    /// Wall seconds spent on the noisy test frames.
    pub(crate) noisy_seconds: f64,
    /// The network's own depth only: per stage and register, the PE-writes past the
    /// knee and the limit on the first test chip (`super::saturation`).
    #[serde(default)]
    pub(crate) saturation: Vec<super::saturation::StageCount>,
}

/// What identifies an evaluation, and the counts of each depth: enough to merge shards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mergeable {
    /// Hash of everything that determines the figures (network files, dataset, noise
    /// profiles, seeds, image limits, depths).
    pub(crate) fingerprint: String,
    /// `[K, N]` for shard K of N; absent for a whole run.
    pub(crate) shard: Option<[u32; 2]>,
    /// The depth of the network as written (its row is the headline).
    pub(crate) main_depth: u32,
    /// Every depth evaluated, in increasing depth.
    pub(crate) rows: Vec<DepthCounts>,
    /// Descriptive figures, the same for every shard.
    pub(crate) meta: Meta,
}

/// Descriptive figures of an evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// Network name.
    pub(crate) network: String,
    /// Dataset folder.
    pub(crate) dataset: String,
    /// Noise profile name.
    pub(crate) noise: String,
    /// The profile the head was trained under (`ideal` unless `--train-noise`).
    pub(crate) train_noise: String,
    /// Chip (fixed-pattern) seeds of the noisy runs.
    pub(crate) chip_seeds: Vec<u64>,
    /// Temporal-noise seed of the noisy runs (absent from older shards: 0).
    #[serde(default)]
    pub(crate) seed: u64,
    /// Training images used.
    pub(crate) train_images: u64,
    /// Test images of the whole run (all shards).
    pub(crate) test_images: u64,
    /// On-sensor stages.
    pub(crate) stages: usize,
    /// Binary maps read out per image.
    pub(crate) maps: usize,
    /// Features per image (pooled counts).
    pub(crate) features: usize,
    /// Array clock in Hz, for the time per frame.
    pub(crate) clock_hz: f64,
}

/// One depth's figures in the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DepthRow {
    /// Approximation depth.
    pub depth: u32,
    /// Macro instructions per frame.
    pub instructions: u64,
    /// Cycles per frame.
    pub(crate) cycles: u64,
    /// Images per frame.
    pub(crate) images_per_frame: usize,
    /// Accuracy ideal and noisy.
    pub accuracy: Accuracy,
    /// Fraction of binary-map bits flipped by the noise.
    pub(crate) flipped: f64,
}

impl DepthRow {
    /// Names of the columns of [`DepthRow::cells`], as the text and HTML reports head them.
    pub const HEADS: [&'static str; 7] = [
        "depth",
        "instructions",
        "cycles",
        "ideal",
        "noisy",
        "lost",
        "flipped",
    ];

    /// The row as the reports show it: counts, then rates in percent to two decimals.
    pub fn cells(&self) -> [String; 7] {
        let pct = |x: f64| format!("{:.2} %", 100.0 * x);
        [
            self.depth.to_string(),
            self.instructions.to_string(),
            self.cycles.to_string(),
            pct(self.accuracy.ideal),
            pct(self.accuracy.noisy.mean),
            pct(self.accuracy.lost),
            pct(self.flipped),
        ]
    }
}

/// The report `scamp eval --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Report {
    /// Network name.
    pub network: String,
    /// Dataset folder.
    pub(crate) dataset: String,
    /// Noise profile.
    pub noise: String,
    /// Training profile of the head.
    pub train_noise: String,
    /// Chip seeds.
    pub chip_seeds: Vec<u64>,
    /// Temporal-noise seed of the noisy runs.
    #[serde(default)]
    pub(crate) seed: u64,
    /// Test images counted.
    pub images: u64,
    /// On-sensor stages.
    pub(crate) stages: usize,
    /// Binary maps per image.
    pub maps: usize,
    /// Features per image.
    pub(crate) features: usize,
    /// Depth of the network as written.
    pub(crate) depth: u32,
    /// Macro instructions per frame.
    pub(crate) instructions: u64,
    /// Cycles per frame.
    pub(crate) cycles: u64,
    /// Microseconds per frame at the clock.
    pub(crate) time_us: f64,
    /// Frames per second the chip would run at (program time only).
    pub(crate) frames_per_second: f64,
    /// Images the simulator tiles on one frame (a simulation device: the chip, as a
    /// camera, sees one scene per frame).
    pub(crate) images_per_frame: usize,
    /// Empty PEs between tiles.
    pub(crate) gap: usize,
    /// Images per second on the chip, one scene per frame as a camera sees it: the
    /// frames per second.
    pub(crate) chip_images_per_second: f64,
    /// The energy model's figure for one frame program, in microjoules: a model from
    /// published power figures, not a measurement (`crate::energy`).
    #[serde(default)]
    pub energy_uj_per_frame: f64,
    /// The energy of one image as a camera sees it (one scene per frame: the frame's
    /// energy), in microjoules.
    #[serde(default)]
    pub energy_uj_per_image: f64,
    /// Accuracy figures.
    pub accuracy: Accuracy,
    /// With `--uncertainty`: the noisy accuracy's range over the profile's ensemble and
    /// its saturation share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<super::uncertainty::AccuracyRanges>,
    /// Per stage and register, the share of PE-writes past the knee and past the limit
    /// (the network's own depth, first test chip).
    #[serde(default)]
    pub(crate) saturation_by_register: Vec<crate::verify::saturation::RegisterSaturation>,
    /// Flip rate of the binary features under the noise.
    pub flipped: f64,
    /// Flip rate of each binary map, in map order.
    #[serde(default)]
    pub flipped_per_map: Vec<f64>,
    /// Fraction of (image, chip seed) pairs whose class the noise changed.
    pub changed: f64,
    /// CLASSES x CLASSES counts under the noise profile, summed over chip seeds (rows:
    /// true class, columns: predicted).
    pub confusion: Vec<Vec<u64>>,
    /// The same under `ideal`.
    pub confusion_ideal: Vec<Vec<u64>>,
    /// Every depth.
    pub depths: Vec<DepthRow>,
    /// Simulated noisy test images per wall second (image x chip seed evaluations).
    pub(crate) images_per_second: f64,
    /// The counts, for `--merge`.
    pub(crate) merge: Mergeable,
}

/// The report of `m` (a whole run, a shard or merged shards).
pub fn report(m: &Mergeable) -> Report {
    let rows: Vec<DepthRow> = m
        .rows
        .iter()
        .map(|r| DepthRow {
            depth: r.depth,
            instructions: r.instructions,
            cycles: r.cycles,
            images_per_frame: r.images_per_frame,
            accuracy: Accuracy::of(&r.counts),
            flipped: flip_rate(&r.counts),
        })
        .collect();
    let main = m
        .rows
        .iter()
        .find(|r| r.depth == m.main_depth)
        .or(m.rows.last());
    let empty = Counts::new(m.meta.chip_seeds.len());
    let c = main.map_or(&empty, |r| &r.counts);
    let cycles = main.map_or(0, |r| r.cycles);
    let per_frame = main.map_or(0, |r| r.images_per_frame);
    let time_us = cycles as f64 * 1e6 / m.meta.clock_hz;
    let fps = if time_us > 0.0 { 1e6 / time_us } else { 0.0 };
    let noisy_seconds = main.map_or(0.0, |r| r.noisy_seconds);
    let evaluations = c.images as f64 * m.meta.chip_seeds.len() as f64;
    Report {
        network: m.meta.network.clone(),
        dataset: m.meta.dataset.clone(),
        noise: m.meta.noise.clone(),
        train_noise: m.meta.train_noise.clone(),
        chip_seeds: m.meta.chip_seeds.clone(),
        seed: m.meta.seed,
        images: c.images,
        stages: m.meta.stages,
        maps: m.meta.maps,
        features: m.meta.features,
        depth: m.main_depth,
        instructions: main.map_or(0, |r| r.instructions),
        cycles,
        time_us,
        frames_per_second: fps,
        images_per_frame: per_frame,
        gap: main.map_or(0, |r| r.gap),
        chip_images_per_second: fps,
        energy_uj_per_frame: crate::energy::cycles_uj(cycles),
        energy_uj_per_image: crate::energy::cycles_uj(cycles),
        accuracy: Accuracy::of(c),
        uncertainty: None,
        saturation_by_register: main.map_or_else(Vec::new, |r| {
            r.saturation
                .iter()
                .map(super::saturation::StageCount::shares)
                .collect()
        }),
        flipped: flip_rate(c),
        flipped_per_map: {
            let per_map = c.bits as f64 / c.flipped_per_map.len().max(1) as f64;
            c.flipped_per_map
                .iter()
                .map(|&f| f as f64 / per_map.max(1.0))
                .collect()
        },
        changed: c.changed as f64 / evaluations.max(1.0),
        confusion: c.confusion.clone(),
        confusion_ideal: c.confusion_ideal.clone(),
        depths: rows,
        images_per_second: if noisy_seconds > 0.0 {
            evaluations / noisy_seconds
        } else {
            0.0
        },
        merge: m.clone(),
    }
}
