//! Noise impact of any program, linear or not: the same program on the same input run
//! once under a noise profile and once under `ideal`, and every register it writes
//! compared between the two runs.
//!
//! Analogue registers get the figures of [`crate::verify::metrics::ErrorFigures`] (RMSE, bias = mean of noisy -
//! ideal, max absolute difference) and the fraction of PEs whose difference exceeds a
//! tolerance; digital registers and `FLAG` the fraction of PEs whose bit differs. Figures
//! are pooled over all images for each run seed, then averaged over run seeds with their
//! spread, as `check` does. Unlike `check`, nothing here needs a reference kernel: the
//! ideal run is the reference, so thresholds, masks and binarisation are covered too.

use super::check::{FigureSpread, FigureSpreadAccumulator};
use super::metrics::{ErrorAccumulator, Spread, SpreadAccumulator};
use crate::isa::{DReg, Program, Reg};
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::run::RunError;
use crate::sim::{self, capture::GreyImage, Array, N};
use ndarray::Array2;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// A register whose values are read off the array: analogue or digital.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Watched {
    /// A general register, `NEWS` or `PIX`.
    Analogue(Reg),
    /// `R0`..`R12` or `FLAG`.
    Digital(DReg),
}

impl Watched {
    /// Parses a register name that holds a plane on an array with `general` general
    /// registers: `A`.., `NEWS`, `PIX`, `R0`..`R12` or `FLAG`.
    ///
    /// ```
    /// use scamp::isa::Reg;
    /// use scamp::Watched;
    /// assert_eq!(Watched::parse("C", 6), Some(Watched::Analogue(Reg::Gen(2))));
    /// // SCAMP-5 has A..F: G is a register only on a larger register file.
    /// assert_eq!(Watched::parse("G", 6), None);
    /// assert!(Watched::parse("G", 7).is_some());
    /// ```
    pub fn parse(name: &str, general: usize) -> Option<Watched> {
        if let Some(d) = DReg::parse(name) {
            return Some(Watched::Digital(d));
        }
        Reg::parse(name)
            .filter(|r| match r {
                Reg::Gen(i) => usize::from(*i) < general,
                Reg::News | Reg::Pix => true,
                Reg::In | Reg::X(_) => false,
            })
            .map(Watched::Analogue)
    }

    /// Every register `program` writes: analogue ones in order of first write, then
    /// digital ones (`FLAG` included) in plane order.
    pub fn written_by(program: &Program) -> Vec<Watched> {
        let mut out: Vec<Watched> = program
            .written_registers()
            .into_iter()
            .map(Watched::Analogue)
            .collect();
        out.extend(
            program
                .written_digital_registers()
                .into_iter()
                .map(Watched::Digital),
        );
        out
    }

    /// Whether this is a digital register.
    pub fn is_digital(self) -> bool {
        matches!(self, Watched::Digital(_))
    }

    /// The register's values as `f32` (digital registers as 0 and 1): analogue values
    /// through the profile's readout path unless `raw`; `None` when the array has no
    /// such register.
    pub(crate) fn values(self, array: &Array, raw: bool) -> Option<Vec<f32>> {
        match self {
            Watched::Analogue(r) if raw => array.plane(r).map(<[f32]>::to_vec),
            Watched::Analogue(r) => array.read_out(r),
            Watched::Digital(d) => Some(array.bits(d).iter().map(|&b| f32::from(b)).collect()),
        }
    }
}

impl fmt::Display for Watched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Watched::Analogue(r) => r.fmt(f),
            Watched::Digital(d) => d.fmt(f),
        }
    }
}

/// Preloads `reg` with the image's full-range values `p - 128`, as `check` preloads a
/// spec's input register (for programs that take their input in a register rather than
/// capturing it).
pub fn load_input(array: &mut Array, reg: Reg, img: &GreyImage) {
    if let Some(p) = array.plane_mut(reg) {
        for (d, &s) in p.iter_mut().zip(&img.pixels) {
            *d = f32::from(s) - 128.0;
        }
    }
}

/// One 8-bit step of the profile's readout: its range spread over the 255 intervals
/// between the 256 codes of an 8-bit ADC (1 for the usual -128..127). The default
/// tolerance of a comparison, so that a PE counts as "beyond" when its noisy value
/// would read out at a different code.
pub fn adc_step(profile: &Profile) -> f64 {
    (profile.readout.high - profile.readout.low).abs() / 255.0
}

/// How the two runs are made and compared.
///
/// ```
/// use scamp::{CompareOptions, Watched};
/// let c = Watched::parse("C", 6).unwrap();
/// let opts = CompareOptions::new(vec![c], 0.5).with_runs(2).with_seeds(1, 7);
/// assert_eq!((opts.runs, opts.seed, opts.chip_seed, opts.border), (2, 1, 7, 0));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompareOptions {
    /// Registers to compare (see [`Watched::written_by`]).
    pub registers: Vec<Watched>,
    /// The program runs this many times in a row on the same state.
    pub repeat: u32,
    /// Array clock in Hz (decay, when the profile models it, depends on time).
    pub clock_hz: f64,
    /// Read noisy analogue values directly, bypassing the readout path.
    pub raw: bool,
    /// An analogue PE is "beyond" when `|noisy - ideal|` exceeds this.
    pub tolerance: f64,
    /// PEs excluded on every side of the array, as `check` excludes its border.
    pub border: usize,
    /// Number of noisy runs, with run seeds `seed`, `seed + 1`, ...
    pub runs: u32,
    /// Temporal-noise seed of run 0.
    pub seed: u64,
    /// Fixed-pattern seed: the same chip for every run.
    pub chip_seed: u64,
    /// Also compare under every accepted member of the profile's uncertainty ensemble
    /// and report each figure's range (`super::compare_ranges`).
    pub uncertainty: bool,
}

impl CompareOptions {
    /// Compares `registers` with `tolerance`: one run of the program, one noisy run
    /// with seed 1 on chip 1, at the default clock, read out, no border.
    pub fn new(registers: Vec<Watched>, tolerance: f64) -> CompareOptions {
        CompareOptions {
            registers,
            repeat: 1,
            clock_hz: crate::sim::DEFAULT_CLOCK_HZ,
            raw: false,
            tolerance,
            border: 0,
            runs: 1,
            seed: 1,
            chip_seed: 1,
            uncertainty: false,
        }
    }

    /// With the program run `repeat` times in a row.
    #[must_use]
    pub fn with_repeat(mut self, repeat: u32) -> CompareOptions {
        self.repeat = repeat;
        self
    }

    /// With the array clock at `clock_hz`.
    #[must_use]
    pub fn with_clock_hz(mut self, clock_hz: f64) -> CompareOptions {
        self.clock_hz = clock_hz;
        self
    }

    /// Reading analogue values raw (`true`) or through the readout path.
    #[must_use]
    pub fn with_raw(mut self, raw: bool) -> CompareOptions {
        self.raw = raw;
        self
    }

    /// Leaving `border` PEs out on every side.
    #[must_use]
    pub fn with_border(mut self, border: usize) -> CompareOptions {
        self.border = border;
        self
    }

    /// With `runs` noisy runs.
    #[must_use]
    pub fn with_runs(mut self, runs: u32) -> CompareOptions {
        self.runs = runs;
        self
    }

    /// With run seeds from `seed` on the chip `chip_seed`.
    #[must_use]
    pub fn with_seeds(mut self, seed: u64, chip_seed: u64) -> CompareOptions {
        self.seed = seed;
        self.chip_seed = chip_seed;
        self
    }

    /// Also under the profile's uncertainty ensemble (each figure's range).
    #[must_use]
    pub fn with_uncertainty(mut self, uncertainty: bool) -> CompareOptions {
        self.uncertainty = uncertainty;
        self
    }
}

/// The difference of one register on one image in the first noisy run: for analogue
/// registers `noisy - ideal`, for digital ones 1 where the bit flipped, else 0.
pub struct DiffMap<'a> {
    /// Image name.
    pub image: &'a str,
    /// The register.
    pub register: Watched,
    /// 256x256 differences.
    pub diff: Array2<f64>,
}

/// Receives the difference maps of a comparison (e.g. to write them out).
pub(crate) type MapSink<'a> = &'a mut dyn FnMut(DiffMap) -> Result<(), SinkError>;

/// Why a [`MapSink`] could not take a map: the caller's own error, kept whole.
pub(crate) type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// Why a comparison stopped.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The program failed to run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A difference map could not be handled (e.g. written).
    #[error("{0}")]
    Map(SinkError),
    /// A register to compare is not on the array.
    #[error("no register `{0}` on this array")]
    Register(Watched),
    /// The profile gives no uncertainty ensemble.
    #[error(transparent)]
    Ensemble(#[from] crate::verify::ensemble::UncertaintyError),
}

/// How an analogue register drifts: each figure pooled over the images of a run seed,
/// then averaged over run seeds (spread in `runs`).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct AnalogueDiff {
    /// RMSE of `noisy - ideal`.
    pub(crate) rmse: f64,
    /// Mean of `noisy - ideal`.
    pub(crate) bias: f64,
    /// Largest `|noisy - ideal|` of a run (averaged over runs like the others).
    pub(crate) max: f64,
    /// Fraction of PEs with `|noisy - ideal|` above the tolerance.
    pub(crate) beyond: f64,
    /// Mean and spread of each figure over run seeds.
    pub(crate) runs: AnalogueRuns,
}

/// Mean and spread over run seeds of an analogue register's figures.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct AnalogueRuns {
    /// RMSE, max and bias.
    #[serde(flatten)]
    pub(crate) figures: FigureSpread,
    /// Fraction beyond the tolerance.
    pub(crate) beyond: Spread,
}

/// Bit flips of a digital register, mean over run seeds, with spread.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct DigitalDiff {
    /// Fraction of PEs whose bit differs from the ideal run.
    pub(crate) flipped: f64,
    /// Mean and spread over run seeds.
    pub(crate) runs: DigitalRuns,
}

/// Mean and spread over run seeds of a digital register's flip fraction.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct DigitalRuns {
    /// Fraction flipped.
    pub(crate) flipped: Spread,
}

/// What differs in one register.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Difference {
    /// An analogue register.
    Analogue(AnalogueDiff),
    /// A digital register or `FLAG`.
    Digital(DigitalDiff),
}

/// Saturation in the noisy runs, per run summed over images, mean over run seeds.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SaturationDiff {
    /// PE-register pairs clipped at least once while the program ran.
    pub(crate) pes: Spread,
    /// Per register that clipped in any run: PEs clipped.
    pub(crate) registers: BTreeMap<String, Spread>,
}

/// Everything a comparison measured.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Number of images.
    pub(crate) images: usize,
    /// Number of noisy runs.
    pub(crate) runs: u32,
    /// PEs excluded on every side.
    pub(crate) border: usize,
    /// Analogue tolerance.
    pub(crate) tolerance: f64,
    /// Per register, in the order asked for (a JSON object keyed by register name).
    #[serde(serialize_with = "in_order")]
    pub(crate) registers: Vec<(Watched, Difference)>,
    /// Saturation in the noisy runs.
    pub(crate) saturated: SaturationDiff,
    /// Per register, the share of PE-writes past the knee (the first noisy run, every
    /// image) and past the limit (the same run with saturation lifted), as `check`
    /// reports them.
    pub(crate) saturation_by_register: Vec<super::saturation::RegisterSaturation>,
    /// With `uncertainty`: each figure's range over the profile's ensemble and its
    /// saturation share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) uncertainty: Option<super::compare_ranges::CompareRanges>,
}

fn in_order<S: Serializer>(regs: &[(Watched, Difference)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(regs.iter().map(|(w, d)| (w.to_string(), d)))
}

/// Per run and register, what has been counted so far.
#[derive(Clone, Default)]
struct Tally {
    errors: ErrorAccumulator,
    beyond: u64,
    flipped: u64,
    pes: u64,
}

impl Tally {
    /// Counts one image's `got` against `expected` inside a border of `b` PEs, and
    /// returns the difference over the whole plane.
    fn add(
        &mut self,
        w: &Watched,
        got: &[f32],
        expected: &[f32],
        b: usize,
        tolerance: f64,
    ) -> Vec<f64> {
        let diff: Vec<f64> = got
            .iter()
            .zip(expected)
            .map(|(&g, &e)| f64::from(g) - f64::from(e))
            .collect();
        let inside = |i: usize| {
            let (r, c) = (i / N, i % N);
            r >= b && c >= b && r < N - b && c < N - b
        };
        let counted = diff.iter().enumerate().filter(|(i, _)| inside(*i));
        if w.is_digital() {
            self.flipped += counted.filter(|(_, d)| **d != 0.0).count() as u64;
        } else {
            let grid = |v: &[f32]| Array2::from_shape_fn((N, N), |(r, c)| f64::from(v[r * N + c]));
            self.errors.add(&grid(got), &grid(expected), b);
            self.beyond += counted.filter(|(_, d)| d.abs() > tolerance).count() as u64;
        }
        self.pes += (N - 2 * b) as u64 * (N - 2 * b) as u64;
        diff
    }
}

/// One register's figures over the runs, kept as running spreads.
#[derive(Clone, Copy, Default)]
struct RegisterSpread {
    figures: FigureSpreadAccumulator,
    beyond: SpreadAccumulator,
    flipped: SpreadAccumulator,
}

impl RegisterSpread {
    /// Adds one run's tally (every image of that run).
    fn add(&mut self, t: &Tally) {
        let fraction = |n: u64| n as f64 / t.pes.max(1) as f64;
        self.figures.add(&t.errors.figures());
        self.beyond.add(fraction(t.beyond));
        self.flipped.add(fraction(t.flipped));
    }

    fn difference(&self, w: &Watched) -> Difference {
        if w.is_digital() {
            let flipped = self.flipped.spread();
            return Difference::Digital(DigitalDiff {
                flipped: flipped.mean,
                runs: DigitalRuns { flipped },
            });
        }
        let figures = self.figures.spread();
        let beyond = self.beyond.spread();
        Difference::Analogue(AnalogueDiff {
            rmse: figures.rmse.mean,
            bias: figures.bias.mean,
            max: figures.max.mean,
            beyond: beyond.mean,
            runs: AnalogueRuns { figures, beyond },
        })
    }
}

/// The map handed to `on_map`: the signed difference, or its size for a digital register.
fn diff_map(w: &Watched, diff: &[f64]) -> Array2<f64> {
    Array2::from_shape_fn((N, N), |(r, c)| {
        let d = diff[r * N + c];
        if w.is_digital() {
            d.abs()
        } else {
            d
        }
    })
}

/// Saturation in the noisy runs as sums over runs (counts, so the sums are exact and a
/// register that clips only in later runs still counts 0 for the earlier ones).
#[derive(Default)]
struct Clipping {
    runs: u64,
    saturated: (f64, f64),
    clipped: BTreeMap<String, (f64, f64)>,
}

/// Mean and sample spread over `n` runs of a count with sum `s` and sum of squares `s2`.
fn spread_of_sums(n: u64, (s, s2): (f64, f64)) -> Spread {
    let k = n.max(1) as f64;
    let mean = s / k;
    let std = if n > 1 {
        ((s2 - k * mean * mean) / (k - 1.0)).max(0.0).sqrt()
    } else {
        0.0
    };
    Spread { mean, std }
}

impl Clipping {
    /// Adds one run: its reports, one per image.
    fn add(&mut self, reports: &[sim::run::RunReport]) {
        self.runs += 1;
        let saturated: u64 = reports.iter().map(|r| r.saturated).sum();
        let mut per_reg: BTreeMap<String, f64> = BTreeMap::new();
        for report in reports {
            for (reg, pes, _) in &report.saturation {
                *per_reg.entry(reg.to_string()).or_default() += *pes as f64;
            }
        }
        let sat = saturated as f64;
        self.saturated = (self.saturated.0 + sat, self.saturated.1 + sat * sat);
        for (reg, v) in per_reg {
            let e = self.clipped.entry(reg).or_default();
            *e = (e.0 + v, e.1 + v * v);
        }
    }

    fn finish(self) -> SaturationDiff {
        SaturationDiff {
            pes: spread_of_sums(self.runs, self.saturated),
            registers: self
                .clipped
                .into_iter()
                .map(|(r, sums)| (r, spread_of_sums(self.runs, sums)))
                .collect(),
        }
    }
}

/// One noisy run over every image: per register its tally, the run report of each
/// image and, for run 0, the difference maps (image, register, map).
struct NoisyRun {
    tallies: Vec<Tally>,
    reports: Vec<sim::run::RunReport>,
    /// Run 0 only, under a saturating profile: each image's run with saturation lifted.
    unsaturated: Vec<sim::run::RunReport>,
    maps: Vec<(usize, Watched, Array2<f64>)>,
}

/// Runs `program` on every image under `profile` (`opts.runs` run seeds) and under
/// `ideal`, and compares the registers of `opts`. `prepare` makes a fresh array for an
/// image (scene exposed, preloads applied; the noise layer is installed here). `on_map`,
/// when given, receives each register's difference map of the first noisy run.
pub(crate) fn compare(
    program: &Program,
    profile: &Profile,
    images: &[(String, GreyImage)],
    prepare: &(dyn Fn(&GreyImage) -> Array + Sync),
    opts: &CompareOptions,
    mut on_map: Option<MapSink>,
) -> Result<Comparison, CompareError> {
    let runs = opts.runs.max(1);
    let ideal = Profile::builtin("ideal").expect("the ideal profile is built in");
    let b = opts.border.min(N / 2);
    let execute = |img: &GreyImage, profile: &Profile, run: u32| {
        let mut array = prepare(img);
        let model = NoiseModel::new(
            profile,
            opts.chip_seed,
            opts.seed.wrapping_add(u64::from(run)),
        )
        .with_clock(opts.clock_hz);
        array.set_layer(model);
        let report = sim::run(&mut array, program, opts.repeat, opts.clock_hz)?;
        Ok::<_, CompareError>((array, report))
    };
    let read = |w: &Watched, array: &Array, raw: bool| {
        w.values(array, raw).ok_or(CompareError::Register(*w))
    };
    let limits = super::saturation::counting_limits(profile);
    // The ideal reference of every image, once: memory grows with the images, not runs.
    let expected: Vec<Vec<Vec<f32>>> = images
        .iter()
        .map(|(_, img)| {
            let (reference, _) = execute(img, &ideal, 0)?;
            opts.registers
                .iter()
                .map(|w| read(w, &reference, false))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<_, _>>()?;
    let one_run = |run: u32| -> Result<NoisyRun, CompareError> {
        let mut r = NoisyRun {
            tallies: vec![Tally::default(); opts.registers.len()],
            reports: Vec::new(),
            unsaturated: Vec::new(),
            maps: Vec::new(),
        };
        for (i, ((_, img), expected)) in images.iter().zip(&expected).enumerate() {
            let (array, report) = execute(img, profile, run)?;
            r.reports.push(report);
            if let Some(free) = limits.as_ref().filter(|_| run == 0) {
                r.unsaturated.push(execute(img, free, 0)?.1);
            }
            for (k, w) in opts.registers.iter().enumerate() {
                let got = read(w, &array, opts.raw)?;
                let diff = r.tallies[k].add(w, &got, &expected[k], b, opts.tolerance);
                if run == 0 {
                    r.maps.push((i, *w, diff_map(w, &diff)));
                }
            }
        }
        Ok(r)
    };
    let mut spreads = vec![RegisterSpread::default(); opts.registers.len()];
    let mut clipping = Clipping::default();
    let mut reach = super::saturation::Tally::default();
    sim::batch::seeded(runs, one_run, |run, r| {
        clipping.add(&r.reports);
        if run == 0 {
            r.reports.iter().for_each(|x| reach.add_run(x));
            r.unsaturated.iter().for_each(|x| reach.add_unsaturated(x));
        }
        for (acc, t) in spreads.iter_mut().zip(&r.tallies) {
            acc.add(t);
        }
        if let Some(f) = on_map.as_deref_mut() {
            for (i, register, diff) in r.maps {
                let image = images.get(i).map_or("", |(n, _)| n.as_str());
                f(DiffMap {
                    image,
                    register,
                    diff,
                })
                .map_err(CompareError::Map)?;
            }
        }
        Ok(())
    })?;
    let registers = opts
        .registers
        .iter()
        .zip(&spreads)
        .map(|(w, acc)| (*w, acc.difference(w)))
        .collect();
    Ok(Comparison {
        images: images.len(),
        runs,
        border: b,
        tolerance: opts.tolerance,
        registers,
        saturated: clipping.finish(),
        saturation_by_register: reach.shares(program),
        uncertainty: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};
    use crate::sim::EdgeMode;

    fn program(text: &str) -> Program {
        parse_program(text, Device::default()).unwrap()
    }

    fn opts(registers: Vec<Watched>, tolerance: f64, border: usize, runs: u32) -> CompareOptions {
        CompareOptions {
            registers,
            repeat: 1,
            clock_hz: sim::DEFAULT_CLOCK_HZ,
            raw: false,
            tolerance,
            border,
            runs,
            seed: 1,
            chip_seed: 1,
            uncertainty: false,
        }
    }

    fn fresh(img: &GreyImage) -> Array {
        let mut a = Array::new(6, EdgeMode::Zero);
        a.expose(&img.pixels);
        a
    }

    /// A profile whose only error is a constant offset on every two-source `bus`.
    fn offset_profile(offset: f64) -> Profile {
        Profile::from_yaml(
            &format!("transfer: {{bus_2: {{offset: {offset}}}}}"),
            "test",
        )
        .unwrap()
    }

    fn scene() -> Vec<(String, GreyImage)> {
        vec![("camera".into(), sim::capture::default_image())]
    }

    #[test]
    fn names_and_written_registers() {
        assert_eq!(Watched::parse("R5", 6), Some(Watched::Digital(DReg::R(5))));
        assert_eq!(
            Watched::parse("FLAG", 6),
            Some(Watched::Digital(DReg::Flag))
        );
        assert_eq!(Watched::parse("F", 6), Some(Watched::Analogue(Reg::F)));
        assert_eq!(
            Watched::parse("NEWS", 6),
            Some(Watched::Analogue(Reg::News))
        );
        for bad in ["G", "R13", "XN", "IN", "r5", ""] {
            assert_eq!(Watched::parse(bad, 6), None, "{bad}");
        }
        let p = program("in(B, 3); where(B); MOV(R5, FLAG); all(); AND(R7, R5, R6)");
        let names: Vec<String> = Watched::written_by(&p)
            .iter()
            .map(ToString::to_string)
            .collect();
        // AND expands through its scratch registers R0 and R12.
        assert_eq!(names, ["B", "R0", "R5", "R7", "R12", "FLAG"]);
        let read: Vec<String> = p
            .digital_registers()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(read, ["R0", "R5", "R6", "R7", "R12", "FLAG"]);
    }

    #[test]
    fn a_register_missing_from_the_array_is_an_error() {
        let p = program("in(A, 1)");
        let regs = vec![Watched::Analogue(Reg::Gen(9))];
        let ideal = Profile::builtin("ideal").unwrap();
        let e = compare(&p, &ideal, &scene(), &fresh, &opts(regs, 1.0, 0, 1), None);
        assert_eq!(
            e.err().map(|e| e.to_string()).as_deref(),
            Some("no register `J` on this array")
        );
    }

    #[test]
    fn adc_step_follows_the_readout_range() {
        assert_eq!(adc_step(&Profile::builtin("scamp5").unwrap()), 1.0);
        let p = Profile::from_yaml("readout: {low: -64, high: 63.5}", "t").unwrap();
        assert_eq!(adc_step(&p), 0.5);
    }

    #[test]
    fn a_known_offset_gives_exact_figures() {
        // in(B, 50) is bus(NEWS, IN); bus(B, NEWS): one-source transfers, B = 50 exactly.
        // neg(A, B) is bus(NEWS); bus(A, NEWS, B): A = -50 + 2, two above the ideal -50.
        let p = program("in(B, 50); neg(A, B)");
        let regs = vec![Watched::Analogue(Reg::A), Watched::Analogue(Reg::B)];
        let profile = offset_profile(2.0);
        let c = compare(
            &p,
            &profile,
            &scene(),
            &fresh,
            &opts(regs.clone(), 1.0, 0, 2),
            None,
        )
        .unwrap();
        let Difference::Analogue(a) = &c.registers[0].1 else {
            panic!("A is analogue")
        };
        assert_eq!((a.rmse, a.bias, a.max, a.beyond), (2.0, 2.0, 2.0, 1.0));
        assert_eq!(a.runs.figures.rmse.std, 0.0);
        let Difference::Analogue(b) = &c.registers[1].1 else {
            panic!("B is analogue")
        };
        assert_eq!((b.rmse, b.bias, b.max, b.beyond), (0.0, 0.0, 0.0, 0.0));
        // The tolerance is strict: a difference of exactly 2 is not beyond 2.
        let c = compare(&p, &profile, &scene(), &fresh, &opts(regs, 2.0, 5, 1), None).unwrap();
        let Difference::Analogue(a) = &c.registers[0].1 else {
            panic!("A is analogue")
        };
        assert_eq!(a.beyond, 0.0);
        assert_eq!(c.border, 5);
    }

    #[test]
    fn a_decision_pushed_across_zero_flips_everywhere() {
        // Ideal A = 1; with offset -2 the noisy A = -1, so R5 = (A > 0) flips in every PE.
        let p = program("in(B, -1); neg(A, B); where(A); MOV(R5, FLAG); all()");
        let regs = Watched::written_by(&p);
        let c = compare(
            &p,
            &offset_profile(-2.0),
            &scene(),
            &fresh,
            &opts(regs, 1.0, 3, 1),
            None,
        )
        .unwrap();
        let flipped: Vec<(String, f64)> = c
            .registers
            .iter()
            .filter_map(|(w, d)| match d {
                Difference::Digital(d) => Some((w.to_string(), d.flipped)),
                Difference::Analogue(_) => None,
            })
            .collect();
        assert_eq!(
            flipped,
            [("R5".to_string(), 1.0), ("FLAG".to_string(), 0.0)]
        );
    }

    #[test]
    fn ideal_against_ideal_is_zero_and_maps_match_the_figures() {
        let p = program("get_image(A, D); divq(B, A); movx(C, B, east); add(A, B, C)");
        let regs = Watched::written_by(&p);
        let ideal = Profile::builtin("ideal").unwrap();
        let c = compare(
            &p,
            &ideal,
            &scene(),
            &fresh,
            &opts(regs.clone(), 0.0, 0, 2),
            None,
        )
        .unwrap();
        for (w, d) in &c.registers {
            match d {
                Difference::Analogue(a) => {
                    assert_eq!(
                        (a.rmse, a.bias, a.max, a.beyond),
                        (0.0, 0.0, 0.0, 0.0),
                        "{w}"
                    )
                }
                Difference::Digital(d) => assert_eq!(d.flipped, 0.0, "{w}"),
            }
        }
        assert_eq!(c.saturated.pes.mean, 0.0);
        // Under scamp5 the map of the first run carries the same largest difference as
        // the figures of a single run.
        let scamp5 = Profile::builtin("scamp5").unwrap();
        let mut max_of_map = BTreeMap::new();
        let mut record = |m: DiffMap| {
            let max = m.diff.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            max_of_map.insert(m.register.to_string(), max);
            Ok(())
        };
        let c = compare(
            &p,
            &scamp5,
            &scene(),
            &fresh,
            &opts(regs, 1.0, 0, 1),
            Some(&mut record),
        )
        .unwrap();
        for (w, d) in &c.registers {
            if let Difference::Analogue(a) = d {
                assert!(a.max > 0.0, "{w}");
                assert_eq!(max_of_map[&w.to_string()], a.max, "{w}");
            }
        }
    }
}
