//! Running a program on prepared arrays: one frame per setup (a batch), or the same
//! setup over run seeds (`run --runs`), with the figures `scamp run --json` prints.

use super::setup::Setup;
use super::stats::{RegisterRuns, RunsAccumulator};
use crate::isa::Program;
use crate::sim::noise::{NoiseModel, Profile};
use crate::sim::readout::PlaneStats;
use crate::sim::run::{RunError, RunFault, RunReport};
use crate::sim::{self, Array, PES};
use crate::verify::compare::{Comparison, Watched};
use serde::Serialize;
use std::collections::BTreeMap;

/// Runs over seeds in one call (`--runs`, Python's `runs=`): each run simulates every
/// image once, and a hundred thousand take hours already.
pub const RUNS: crate::cain::spec::Whole = crate::cain::spec::Whole {
    what: "runs",
    lo: 1,
    hi: 100_000,
};

/// `--tolerance` and Python's `tolerance=`: how far a noisy value may be from the
/// ideal one, a finite number >= 0.
pub fn check_tolerance(v: f64) -> Result<f64, crate::ValueError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(crate::ValueError::NotNonNegative { value: v })
    }
}

/// How a program runs: the error model, its seeds, repetitions, clock and readout.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RunOptions {
    /// The noise profile (`ideal` switches the layer off).
    pub profile: Profile,
    /// Temporal-noise seed of run 0 (frame `i` of a batch, or run `i`, uses `seed + i`).
    pub seed: u64,
    /// Fixed-pattern seed: the same seed is the same chip.
    pub chip_seed: u64,
    /// The program runs this many times in a row on the same state.
    pub repeat: u32,
    /// Array clock in Hz.
    pub clock_hz: f64,
    /// Read analogue values directly instead of through the profile's readout path.
    pub raw: bool,
}

impl Default for RunOptions {
    /// [`RunOptions::new`] under the default profile (`scamp5`).
    fn default() -> RunOptions {
        RunOptions::new(Profile::builtin(crate::sim::noise::DEFAULT_PROFILE).unwrap_or_default())
    }
}

impl RunOptions {
    /// Options under `profile` with seeds 0, one repetition, the default clock and the
    /// profile's readout.
    pub fn new(profile: Profile) -> RunOptions {
        RunOptions {
            profile,
            seed: 0,
            chip_seed: 0,
            repeat: 1,
            clock_hz: sim::DEFAULT_CLOCK_HZ,
            raw: false,
        }
    }

    /// The noise layer of run `run` (run seed `seed + run`).
    pub fn model(&self, run: u64) -> NoiseModel {
        NoiseModel::new(&self.profile, self.chip_seed, self.seed.wrapping_add(run))
            .with_clock(self.clock_hz)
    }
}

with_methods!(RunOptions {
    with_seed => seed: u64,
    with_chip_seed => chip_seed: u64,
    with_repeat => repeat: u32,
    with_clock_hz => clock_hz: f64,
    with_raw => raw: bool,
});

/// One run's result: the watched registers' planes and the run's report.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Per watched register, its 65,536 values (digital registers as 0 and 1).
    pub planes: Vec<(Watched, Vec<f32>)>,
    /// Instructions, cycles, saturation and warnings of the run.
    pub(crate) report: RunReport,
}

/// Bytes a batch of `frames` frames reading `registers` registers holds at once (the
/// arrays being run and the planes kept): what a caller checks before allocating.
pub fn batch_bytes(frames: usize, registers: usize, general: usize) -> u128 {
    // Planes of one array: general registers, NEWS, PIX, the digital planes as bytes.
    let array = (general as u128 + 2) * PES as u128 * 4 + 14 * PES as u128;
    let kept = registers as u128 * PES as u128 * 4;
    let side_by_side = 2 * rayon::current_num_threads() as u128;
    frames as u128 * kept + side_by_side * array
}

/// Runs `program` once on the array of `setup` as run `run`, and reads `watched`.
pub fn run_one(
    program: &Program,
    setup: &Setup,
    opts: &RunOptions,
    watched: &[Watched],
    run: u32,
) -> Result<Frame, RunError> {
    let mut array = setup.array();
    run_on(&mut array, program, opts, watched, run)
}

/// Runs `program` as run `run` on a prepared `array` and reads `watched`; a watched
/// register the array does not have is an error.
pub(crate) fn run_on(
    array: &mut Array,
    program: &Program,
    opts: &RunOptions,
    watched: &[Watched],
    run: u32,
) -> Result<Frame, RunError> {
    array.set_layer(opts.model(u64::from(run)));
    let report = sim::run(array, program, opts.repeat, opts.clock_hz)?;
    let planes = watched
        .iter()
        .map(|w| {
            w.values(array, opts.raw)
                .map(|v| (*w, v))
                .ok_or_else(|| not_on(*w, array))
        })
        .collect::<Result<_, _>>()?;
    Ok(Frame { planes, report })
}

/// The error for a watched register the array does not have (a register beyond its
/// general ones): reading it would make up values.
fn not_on(w: Watched, array: &Array) -> RunError {
    RunError::at(
        crate::isa::Pos { line: 1, col: 1 },
        RunFault::NotOnArray {
            register: w.to_string(),
            general: array.general(),
        },
    )
}

/// Runs `program` once per setup, frame `i` with run seed `seed + i` on the same chip
/// (as `run --runs` steps its seeds), side by side across the cores; results come in
/// setup order and do not depend on the thread count.
pub fn run_batch(
    program: &Program,
    setups: &[Setup],
    opts: &RunOptions,
    watched: &[Watched],
) -> Result<Vec<Frame>, RunError> {
    sim::batch::frames(setups.len(), |i| {
        run_one(program, &setups[i], opts, watched, i as u32)
    })
}

/// Clipping of one register during the (first) run.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct Clipped {
    /// PEs clipped at least once.
    pub(crate) pes: u64,
    /// Clipped writes.
    pub(crate) writes: u64,
}

/// The noise settings of a run, as reported.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct NoiseInfo {
    /// The profile's name.
    pub(crate) profile: String,
    /// Run seed of the first run.
    pub(crate) seed: u64,
    /// Chip seed.
    pub(crate) chip_seed: u64,
    /// Whether values were read through the profile's readout path.
    pub(crate) readout: bool,
}

/// What `scamp run --json` prints.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct RunSummary {
    /// Macros executed (all repetitions).
    pub(crate) instructions: u64,
    /// Bus instructions executed.
    pub(crate) cycles: u64,
    /// Time at the clock, in microseconds.
    pub(crate) time_us: f64,
    /// PE-register pairs clipped (first run).
    pub(crate) saturated: u64,
    /// Per watched register, its figures after the first run.
    pub(crate) registers: BTreeMap<String, PlaneStats>,
    /// Warnings of the first run, each naming the program and position.
    pub warnings: Vec<String>,
    /// The noise settings.
    pub(crate) noise: NoiseInfo,
    /// Clipped writes (first run).
    pub(crate) saturated_writes: u64,
    /// Per clipped register, its clipping (first run).
    pub(crate) saturation: BTreeMap<String, Clipped>,
    /// Number of runs, when more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run_count: Option<u32>,
    /// Saturated PEs of each run, when more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) saturated_per_run: Option<Vec<u64>>,
    /// Per register, its spread over runs, when more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runs: Option<BTreeMap<String, RegisterRuns>>,
    /// The noisy runs against ideal ones, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) compare: Option<Comparison>,
}

/// The runs of one setup over run seeds: the first run kept whole, the others folded
/// into running statistics.
pub(crate) struct Runs {
    /// Statistics of the watched registers over every run.
    pub(crate) stats: RunsAccumulator,
    /// The first run.
    pub(crate) first: Frame,
    /// Saturated PEs of each run.
    pub(crate) saturated: Vec<u64>,
    /// Number of runs.
    pub(crate) count: u32,
}

/// Runs `program` `count` times on arrays made by `fresh` (run seeds `seed`,
/// `seed + 1`, ...), a few at a time across the cores, keeping the first run's planes
/// and statistics over all: memory stays flat in `count`.
pub(crate) fn runs<E>(
    program: &Program,
    fresh: &(dyn Fn() -> Result<Array, E> + Sync),
    opts: &RunOptions,
    watched: &[Watched],
    count: u32,
) -> Result<Runs, E>
where
    E: From<RunError> + Send,
{
    let mut stats = RunsAccumulator::new();
    let mut first = None;
    let mut saturated = Vec::new();
    let one = |r: u32| -> Result<Frame, E> {
        let mut array = fresh()?;
        Ok(run_on(&mut array, program, opts, watched, r)?)
    };
    sim::batch::seeded(count.max(1), one, |_, frame| {
        for (w, v) in &frame.planes {
            stats.add(&w.to_string(), v);
        }
        saturated.push(frame.report.saturated);
        if first.is_none() {
            first = Some(frame);
        }
        Ok(())
    })?;
    let first = first.expect("seeded runs at least one run");
    Ok(Runs {
        stats,
        first,
        saturated,
        count: count.max(1),
    })
}

impl RunSummary {
    /// The summary of `runs`: the first run's figures, and the spread over runs when
    /// there are several. `warnings` are the first run's, already positioned.
    pub(crate) fn of(
        runs: &Runs,
        noise: NoiseInfo,
        warnings: Vec<String>,
        compare: Option<Comparison>,
    ) -> RunSummary {
        let many = runs.count > 1;
        let first = &runs.first.report;
        RunSummary {
            instructions: first.instructions,
            cycles: first.cycles,
            time_us: first.time_us,
            saturated: first.saturated,
            registers: runs
                .first
                .planes
                .iter()
                .map(|(r, v)| (r.to_string(), PlaneStats::of(v)))
                .collect(),
            warnings,
            noise,
            saturated_writes: first.saturated_writes,
            saturation: first
                .saturation
                .iter()
                .map(|(r, pes, writes)| {
                    (
                        r.to_string(),
                        Clipped {
                            pes: *pes,
                            writes: *writes,
                        },
                    )
                })
                .collect(),
            run_count: many.then_some(runs.count),
            saturated_per_run: many.then(|| runs.saturated.clone()),
            runs: many.then(|| runs.stats.finish()),
            compare,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{run_on, run_one, RunOptions};
    use crate::bank::setup::Setup;
    use crate::isa::{parse_program, Device, Program};
    use crate::sim::noise::Profile;
    use crate::verify::compare::Watched;

    fn program(path: &str) -> Program {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        parse_program(&text, Device::default()).unwrap()
    }

    #[test]
    fn a_register_the_array_does_not_have_is_an_error_not_zeros() {
        let p = program("programs/gauss3x3_hand.scamp");
        let setup = Setup::new(crate::sim::default_image());
        let opts = RunOptions::new(Profile::builtin("ideal").unwrap());
        // H exists on an 8-register device, not on SCAMP-5's six.
        let h = Watched::parse("H", 8).unwrap();
        let a = Watched::parse("A", 6).unwrap();
        let e = run_one(&p, &setup, &opts, &[a, h], 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "1:1: register H was asked for, but this array has only A..F (and NEWS, PIX, the \
             digital registers)"
        );
        let mut array = setup.array();
        assert!(run_on(&mut array, &p, &opts, &[h], 0).is_err());
        // On a device that has it, H is read (gauss3x3_hand leaves it 0: it never writes H).
        let wide = Setup {
            general: 8,
            ..setup
        };
        let f = run_one(&p, &wide, &opts, &[a, h], 0).expect("H exists");
        assert_eq!(f.planes[1].0, h);
        assert!(f.planes[1].1.iter().all(|&v| v == 0.0));
        assert!(f.planes[0].1.iter().any(|&v| v != 0.0));
    }
}
