//! The error objective over one group: the shortest program first, then the programs
//! within the length slack of it that are predicted more accurate.
//!
//! The length search runs first, as the same phase `--objective length` runs (see
//! `crate::cain::drive::phase`): under a work budget exactly that search; under a clock
//! the same clock (all of it but the final polish's share), seed and workers, its
//! workers racing together on one table of bags seen and one best length, with one
//! early stop of its own, at a work calibrated to the clock (their combined nodes),
//! after which the error phases get what it leaves. Its program (or the constructive
//! one, where that is shorter) is scored afterwards. The error search then looks among
//! plans up to the slack longer, and the last share of the clock re-routes the
//! shortest. The shortest program stays a candidate of the final choice, so the result
//! is never the constructive program where the length search found something shorter,
//! never longer than the slack allows, and never predicted worse than the shortest
//! program (see `prefer` for a shorter one found after the length search).

use crate::cain::drive::race::{Candidate, Judge};
use crate::cain::moves::goal::Goal;
use crate::cain::score::clipping::ClipModel;
use crate::cain::search::{Finished, Found, Outcome, StopReason};
use crate::cain::{CompileError, Source};
use crate::verify::predict::{InputStats, Predicted};

/// The input model of compile-time predictions (the error objective's score and the
/// report's `predicted`): the bundled images' moments mapped onto the spec's input
/// range. Pixels uniform and locally constant would miss what edge and texture kernels
/// respond to (Sobel predicted at a sixth of its measured error).
pub(crate) fn input_stats(range: crate::verify::range::InputRange) -> InputStats {
    InputStats::of_bundled_images(range)
}

/// Share of what the length search leaves of a clock budget, beyond the final
/// polish's own share (`crate::cain::drive::phase::FINAL_POLISH_SHARE`), that
/// re-routing the shortest plan gets on top of it (the error search gets the rest). In
/// the deterministic mode the re-routing gets the whole work, as every polish does.
pub(crate) const REROUTE_SHARE: f64 = 0.3;

/// The summed predicted mean squared error of a candidate's outputs (infinite when it
/// was not predicted).
pub(crate) fn total_mse(predicted: Option<&[Predicted]>) -> f64 {
    predicted.map_or(f64::INFINITY, Predicted::summed_mse)
}

/// Scores the length objective's choice (with its source) under the error objective:
/// predicted errors, and the score the error search would have given it (clipping
/// cost included where its plan is known).
pub(crate) fn rescore(
    shortest: (Found<Candidate>, Source),
    judge: &Judge<'_>,
    clip: &ClipModel,
    finals: &[Goal],
) -> Result<(Found<Candidate>, Source), CompileError> {
    let (s, source) = shortest;
    if s.value.predicted.is_some() && s.value.steps.is_empty() {
        // The constructive program: scored when it was made.
        return Ok((s, source));
    }
    let (score, predicted) = judge.score(&s.value.program).ok_or(CompileError::Proof(
        crate::cain::GeneratorBug::ShortestUnpredicted,
    ))?;
    let score = score + clip.plan_clipping(&s.value.steps, finals);
    let value = Candidate {
        predicted: Some(predicted),
        ..s.value
    };
    Ok((Found { score, value, ..s }, source))
}

/// The error objective's choice among the shortest programs found (`shortest`, the
/// length search's, and `shorter`, a shorter one the other searches finished) and the
/// error search's and the polish's programs (`searched`), each with its source.
///
/// The slack counts from the shortest of them, and the choice starts from the first
/// candidate within it that is predicted no worse than either (where none is, from the
/// shorter one). Each candidate then takes the place of the choice so far where it
/// beats it (see [`beats`]), so each replacement is predicted no worse than the one it
/// replaces: the result is never more than the slack longer than the shortest program,
/// and where any candidate allows it, never predicted worse than either of them (the
/// length search's program is what `--objective length` prints under the same work
/// budget).
pub(crate) fn prefer(
    shortest: (Found<Candidate>, Source),
    shorter: Option<(Found<Candidate>, Source)>,
    searched: impl IntoIterator<Item = (Found<Candidate>, Source)>,
    slack: f64,
) -> (Found<Candidate>, Source) {
    let least = shorter.as_ref().unwrap_or(&shortest).0.instructions;
    let bound = (least as f64 * (1.0 + slack)).floor() as usize;
    let mse = |f: &Found<Candidate>| total_mse(f.value.predicted.as_deref());
    let reference = shorter
        .as_ref()
        .map_or(f64::INFINITY, |s| mse(&s.0))
        .min(mse(&shortest.0));
    let admissible = |f: &Found<Candidate>| f.instructions <= bound && mse(f) <= reference;
    let searched: Vec<_> = searched.into_iter().collect();
    // Without a shorter program the length search's is admissible; with one, where no
    // candidate is, the choice starts from that shorter program.
    let first = std::iter::once(&shortest)
        .chain(&shorter)
        .chain(&searched)
        .find(|c| admissible(&c.0))
        .unwrap_or(shorter.as_ref().unwrap_or(&shortest))
        .clone();
    std::iter::once(shortest)
        .chain(shorter)
        .chain(searched)
        .fold(first, |chosen, e| {
            if beats(&e.0, &chosen.0, bound) {
                e
            } else {
                chosen
            }
        })
}

/// Whether `e` may replace the choice `s`: at most `bound` instructions, predicted no
/// worse in total, and scored lower (then shorter, then fewer cycles).
fn beats(e: &Found<Candidate>, s: &Found<Candidate>, bound: usize) -> bool {
    let reference = total_mse(s.value.predicted.as_deref());
    let accurate = total_mse(e.value.predicted.as_deref()) <= reference * (1.0 + 1e-12);
    let better = (e.score, e.instructions, e.cycles) < (s.score, s.instructions, s.cycles);
    e.instructions <= bound && accurate && better
}

/// The shortest program one objective's searches finished (then fewest cycles, lowest
/// score, the program's text: the same one whatever order the workers finish in).
#[derive(Default)]
pub(crate) struct Shortest(std::sync::Mutex<Option<Found<Candidate>>>);

impl Shortest {
    /// Keeps `done` (finished at `at`) if it ranks before the one kept.
    pub(crate) fn offer(&self, done: &Finished<Candidate>, at: std::time::Duration) {
        let Ok(mut kept) = self.0.lock() else {
            return;
        };
        let before = kept.as_ref().is_none_or(|k| {
            (done.1, done.2)
                .cmp(&(k.instructions, k.cycles))
                .then(done.3.total_cmp(&k.score))
                .then_with(|| {
                    let text = |c: &Candidate| c.program.to_string();
                    text(&done.0).cmp(&text(&k.value))
                })
                .is_lt()
        });
        if before {
            *kept = Some(Found {
                value: done.0.clone(),
                instructions: done.1,
                cycles: done.2,
                score: done.3,
                at,
            });
        }
    }

    /// The program kept, taken out of the keeper.
    pub(crate) fn take(&self) -> Option<Found<Candidate>> {
        self.0.lock().ok()?.take()
    }

    /// The program kept, taken out of the keeper, if it has fewer than `instructions`.
    pub(crate) fn shorter_than(&self, instructions: usize) -> Option<Found<Candidate>> {
        let kept = self.0.lock().ok()?.take()?;
        (kept.instructions < instructions).then_some(kept)
    }
}

/// One outcome for the two searches: counts added, the stop reason that says most
/// about the result (a clock that struck makes it time-dependent).
pub(crate) fn merge(
    length: Outcome<Candidate>,
    error: Outcome<Candidate>,
    best: Option<Found<Candidate>>,
) -> Outcome<Candidate> {
    let rank = |s: StopReason| match s {
        StopReason::Time => 3,
        StopReason::Memory => 2,
        StopReason::Nodes => 1,
        StopReason::Exhausted => 0,
    };
    let stop = if rank(length.stop) >= rank(error.stop) {
        length.stop
    } else {
        error.stop
    };
    Outcome {
        best,
        nodes: length.nodes + error.nodes,
        plans_found: length.plans_found + error.plans_found,
        seconds: length.seconds + error.seconds,
        stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::drive::choice::tests::found;
    use std::time::Duration;

    #[test]
    fn the_searched_program_wins_only_within_slack_and_no_worse_predicted() {
        let pick = |s: Found<Candidate>, e: Found<Candidate>| {
            let (f, src) = prefer((s, Source::Fallback), None, [(e, Source::Search)], 0.25);
            (f.instructions, src)
        };
        // Longer within the slack, better score and error: taken.
        assert_eq!(
            pick(found(20, 9.0, 3.0), found(25, 4.0, 2.0)),
            (25, Source::Search)
        );
        // Beyond the slack (25 > 1.25 x 19): the shortest stays.
        assert_eq!(pick(found(19, 9.0, 3.0), found(25, 4.0, 2.0)).0, 19);
        // Lower score but a higher predicted error: the shortest stays.
        assert_eq!(pick(found(20, 9.0, 3.0), found(22, 4.0, 3.5)).0, 20);
        // Equally long and no worse: taken only with a lower score.
        assert_eq!(pick(found(20, 9.0, 3.0), found(20, 8.0, 3.0)).0, 20);
        assert_eq!(
            pick(found(20, 9.0, 3.0), found(20, 9.0, 3.0)),
            (20, Source::Fallback)
        );
        // Nothing searched: the shortest, with its source.
        let (f, src) = prefer((found(20, 9.0, 3.0), Source::Fallback), None, [], 0.25);
        assert_eq!((f.instructions, src), (20, Source::Fallback));
        assert_eq!(total_mse(None), f64::INFINITY);
    }

    #[test]
    fn each_replacement_is_held_to_the_shortest_and_to_the_one_it_replaces() {
        let chain = |refs: &[(usize, f64, f64)], rest: &[(usize, f64, f64)]| {
            let list = |l: &[(usize, f64, f64)]| -> Vec<_> {
                l.iter()
                    .map(|&(n, score, rmse)| (found(n, score, rmse), Source::Search))
                    .collect()
            };
            let mut refs = list(refs).into_iter();
            let shortest = refs.next().expect("the length search's program");
            let f = prefer(shortest, refs.next(), list(rest), 0.25);
            (f.0.instructions, f.0.score)
        };
        // The slack counts from the shortest (16: at most 20), not from a replacement
        // (20 would allow 25).
        assert_eq!(
            chain(&[(16, 9.0, 3.0)], &[(20, 5.0, 2.0), (22, 1.0, 1.0)]).0,
            20
        );
        // A later candidate must be predicted no worse than the one it replaces.
        assert_eq!(
            chain(&[(16, 9.0, 3.0)], &[(18, 5.0, 2.0), (17, 4.0, 2.5)]).0,
            18
        );
        // One that does not beat the choice leaves the next to compare with it.
        assert_eq!(
            chain(&[(16, 9.0, 3.0)], &[(24, 1.0, 1.0), (19, 6.0, 2.0)]).0,
            19
        );
        // A shorter program found later (22) than the length search's (24): the choice
        // is held to the better predicted of the two (the 23 is predicted worse than
        // the 24) and to the slack of the shorter.
        assert_eq!(
            chain(
                &[(24, 9.0, 3.0), (22, 8.0, 3.5)],
                &[(23, 1.0, 3.2), (22, 7.0, 2.9)]
            ),
            (22, 7.0)
        );
        // The length search's program beyond the slack of the shorter one (26 > 1.25 x
        // 20): the choice starts from the shorter, and a candidate within the slack and
        // predicted no worse than both is preferred to it.
        assert_eq!(chain(&[(26, 9.0, 3.0), (20, 8.0, 4.0)], &[]).0, 20);
        assert_eq!(
            chain(&[(26, 9.0, 3.0), (20, 8.0, 4.0)], &[(25, 7.0, 2.5)]).0,
            25
        );
    }

    #[test]
    fn the_shortest_program_finished_does_not_depend_on_arrival_order() {
        let done = |n: usize, score: f64| {
            let f = found(n, score, 1.0);
            (f.value, f.instructions, f.cycles, f.score)
        };
        let kept = |order: &[(usize, f64)]| {
            let seen = Shortest::default();
            for &(n, score) in order {
                seen.offer(&done(n, score), Duration::ZERO);
            }
            seen.shorter_than(20).map(|f| (f.instructions, f.score))
        };
        assert_eq!(kept(&[(19, 5.0), (18, 7.0), (18, 6.0)]), Some((18, 6.0)));
        assert_eq!(kept(&[(18, 6.0), (18, 7.0), (19, 5.0)]), Some((18, 6.0)));
        assert_eq!(kept(&[(20, 1.0), (24, 0.5)]), None);
    }
}
