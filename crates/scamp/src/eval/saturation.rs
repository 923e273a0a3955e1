//! Saturation counted where it happens in `scamp eval`: per stage and register, the
//! PE-writes of the network's own depth past the profile's knee, and past its limit in
//! the same frames with saturation lifted (docs/eval.md, "Saturation"). The frames run
//! on the first test chip, with its temporal seeds, one stage after another on one
//! array, so that each stage's writes are counted apart; a count of the chip, not a
//! change of its runs: the accuracy comes from the unchanged frame program.

use super::dataset::Split;
use super::features::CHUNK;
use super::frames::{run_seed, with_frame_array, FrameNoise};
use super::stage::Chip;
use super::tiling::Tiling;
use super::EvalError;
use crate::isa::Program;
use crate::sim::noise::Profile;
use crate::sim::run::RunError;
use crate::sim::{self, batch, PES};
use crate::verify::saturation::{bus_writes, counting_limits, RegisterSaturation};
use serde::{Deserialize, Serialize};

/// The chip whose frames are counted: the first test chip.
pub(crate) const COUNTED_CHIP: u64 = 1;

/// One register's counts in one stage: what shards add up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StageCount {
    /// The stage, from 1 (the capture counts in stage 1).
    pub(crate) stage: usize,
    /// The register (`NEWS` for the neighbour views too).
    pub(crate) register: String,
    /// PE-writes of the stage to the register over the counted frames.
    pub(crate) writes: u64,
    /// Of those, past a knee.
    pub(crate) beyond_knee: u64,
    /// Of those, past a limit with saturation lifted (absent when the profile has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) beyond_limit: Option<u64>,
}

impl StageCount {
    /// The counts with their shares of the writes.
    pub(crate) fn shares(&self) -> RegisterSaturation {
        let share = |c: u64| c as f64 / self.writes.max(1) as f64;
        RegisterSaturation {
            stage: self.stage,
            register: self.register.clone(),
            writes: self.writes,
            beyond_knee: self.beyond_knee,
            knee_share: share(self.beyond_knee),
            beyond_limit: self.beyond_limit,
            limit_share: self.beyond_limit.map(share),
        }
    }

    /// Why these counts cannot come from an evaluation, if they cannot.
    pub(crate) fn inconsistency(&self) -> Option<super::counts::Inconsistency> {
        let over = |count: u64, past: &'static str| {
            (count > self.writes).then(|| super::counts::Inconsistency::Saturation {
                stage: self.stage,
                register: self.register.clone(),
                count,
                past,
                writes: self.writes,
            })
        };
        over(self.beyond_knee, "knee").or_else(|| over(self.beyond_limit.unwrap_or(0), "limit"))
    }
}

/// The sums of two shards' counts of the same program, or `None` when they do not
/// pair up or a sum overflows.
pub(crate) fn checked_sum(a: &[StageCount], b: &[StageCount]) -> Option<Vec<StageCount>> {
    if a.len() != b.len() {
        return None;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            if (x.stage, &x.register) != (y.stage, &y.register) {
                return None;
            }
            let limit = match (x.beyond_limit, y.beyond_limit) {
                (Some(p), Some(q)) => Some(p.checked_add(q)?),
                (None, None) => None,
                _ => return None,
            };
            Some(StageCount {
                stage: x.stage,
                register: x.register.clone(),
                writes: x.writes.checked_add(y.writes)?,
                beyond_knee: x.beyond_knee.checked_add(y.beyond_knee)?,
                beyond_limit: limit,
            })
        })
        .collect()
}

/// Per stage, the writes past the knee of each register (index into `stages`' lists)
/// on frame `frame` under `profile`.
fn past_knee(
    chip: &Chip,
    stages: &[Program],
    (tiling, split): (&Tiling, &Split),
    frame: usize,
    (profile, seed): (&Profile, u64),
) -> Result<Vec<(usize, String, u64)>, RunError> {
    let noise = FrameNoise {
        profile,
        chip_seed: COUNTED_CHIP,
        run_seed: run_seed(COUNTED_CHIP, frame, seed),
    };
    with_frame_array(chip, tiling, split, frame, noise, |array| {
        let mut out = Vec::new();
        for (i, program) in stages.iter().enumerate() {
            let report = sim::run(array, program, 1, sim::DEFAULT_CLOCK_HZ)?;
            out.extend(
                report
                    .saturation
                    .iter()
                    .map(|(r, _, writes)| (i + 1, r.to_string(), *writes)),
            );
        }
        Ok(out)
    })
}

/// Adds `found` (stage, register, writes) into `counts` with `field`.
fn add(
    counts: &mut [StageCount],
    found: &[(usize, String, u64)],
    field: fn(&mut StageCount) -> &mut u64,
) {
    for (stage, register, n) in found {
        if let Some(c) = counts
            .iter_mut()
            .find(|c| c.stage == *stage && c.register == *register)
        {
            *field(c) += n;
        }
    }
}

/// Counts `frames` of `split` through `chip` under `profile` on [`COUNTED_CHIP`].
pub(crate) fn count(
    chip: &Chip,
    (tiling, split): (&Tiling, &Split),
    frames: &[usize],
    (profile, seed): (&Profile, u64),
) -> Result<Vec<StageCount>, EvalError> {
    let stages = chip.stage_programs();
    let limits = counting_limits(profile);
    let mut counts: Vec<StageCount> = stages
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            bus_writes(p)
                .into_iter()
                .map(move |(register, n)| StageCount {
                    stage: i + 1,
                    register,
                    writes: n * PES as u64 * frames.len() as u64,
                    beyond_knee: 0,
                    beyond_limit: None,
                })
        })
        .collect();
    if limits.is_some() {
        counts.iter_mut().for_each(|c| c.beyond_limit = Some(0));
    }
    // An exact profile (no saturation among its settings) stores every value as it is.
    if profile.is_exact() {
        return Ok(counts);
    }
    for chunk in frames.chunks(CHUNK) {
        super::check_cancel()?;
        let done = batch::frames(chunk.len(), |i| {
            let on = (tiling, split);
            let knee = past_knee(chip, &stages, on, chunk[i], (profile, seed))?;
            let limit = match &limits {
                Some(l) => past_knee(chip, &stages, on, chunk[i], (l, seed))?,
                None => Vec::new(),
            };
            Ok::<_, RunError>((knee, limit))
        })?;
        for (knee, limit) in &done {
            add(&mut counts, knee, |c| &mut c.beyond_knee);
            add(&mut counts, limit, |c| c.beyond_limit.get_or_insert(0));
        }
    }
    Ok(counts)
}
