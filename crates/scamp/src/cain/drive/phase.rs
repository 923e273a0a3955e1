//! The phases of one group's search: what each searches, its share of the budget, its
//! objective and the range its values are held to. [`plan`] lists them for an
//! objective; [`crate::cain::drive::pipeline`] runs them in order and
//! [`crate::cain::drive::choice`] makes the final choice from what they found.

use crate::cain::score::objective;
use crate::cain::Objective;

/// What a phase searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Searches {
    /// A backward search from the final goals (its finalists polished by windows).
    Plans,
    /// Re-routing the shortest program found by the phases before it, window by window.
    Reroute,
}

/// Which range a phase's values are held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RangeRule {
    /// Everything but the outputs within the register limit; where an output cannot
    /// fit, first that (half the budget), then every value within the outputs' own
    /// magnitude.
    OutputsExempt,
    /// The range the re-routed plan already keeps: the register limit where it fits,
    /// otherwise the outputs' own magnitude.
    KeptBySeed,
}

/// One phase of a group's search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Phase {
    /// Its name in reports (`length`, `error`, `reroute`).
    pub name: &'static str,
    /// What it searches.
    pub searches: Searches,
    /// What it minimises: the shortest program, or the lowest score within the slack
    /// of the shortest found before it.
    pub objective: Objective,
    /// Its share of the clock the group has left when it starts (a work budget gives
    /// each phase the whole work; the clock then only caps it).
    pub share: f64,
    /// Whether, under a clock budget, it searches a work budget calibrated to the
    /// group's nominal clock ([`calibrated_work`]), its workers together
    /// ([`work_budget`]), with its share of the clock as a cap only: then it stops at
    /// a work, not at the clock (with one worker, where the work is done first, its
    /// result does not depend on the machine's load).
    pub calibrated: bool,
    /// The range its values are held to.
    pub range: RangeRule,
}

/// The phases of a group's search under `objective`, in order; `work` says whether the
/// budget is a deterministic work budget (then every phase's share of the clock is a
/// cap only).
///
/// Under a work budget the length phase is the same under both objectives (the given
/// work, the whole clock a cap), so the error objective's program is held to the very
/// program `--objective length` prints (see
/// [`crate::cain::drive::choice::final_choice`]). Under a clock budget the error
/// objective's length phase searches the work calibrated to the clock, not the clock
/// itself, its workers together as under the clock, with [`LENGTH_CAP`] of the clock
/// as a cap, and the error phases get what it leaves;
/// `--objective length` runs nothing after it, so it searches the whole clock.
pub(crate) fn plan(objective: Objective, work: bool) -> Vec<Phase> {
    let length = Phase {
        name: "length",
        searches: Searches::Plans,
        objective: Objective::Length,
        share: if work { 1.0 } else { LENGTH_CAP },
        calibrated: !work,
        range: RangeRule::OutputsExempt,
    };
    match objective {
        Objective::Length => vec![Phase {
            share: 1.0,
            calibrated: false,
            ..length
        }],
        Objective::Error => vec![
            length,
            Phase {
                name: "error",
                searches: Searches::Plans,
                objective: Objective::Error,
                share: 1.0 - objective::REROUTE_SHARE,
                calibrated: false,
                range: RangeRule::OutputsExempt,
            },
            Phase {
                name: "reroute",
                searches: Searches::Reroute,
                objective: Objective::Error,
                share: 1.0,
                calibrated: false,
                range: RangeRule::KeptBySeed,
            },
        ],
    }
}

/// The share of a clock budget that caps the error objective's calibrated length
/// phase: where the clock strikes before its work is done (CNN-like layers at 10 s on
/// two loaded workers), the error phases still get a quarter of it. With
/// the whole clock as the cap, the default's program on `ho_cnn_7741` was the length
/// phase's, and measured 33.65 total RMSE on kernel C against Cain's 32.12.
pub(crate) const LENGTH_CAP: f64 = 0.75;

/// Nodes per second the calibrated length search is given for each atom fewer in the
/// group's final goals: its work is this over the atoms, times the nominal seconds
/// (nodes per worker).
///
/// A node costs more the more atoms the goals hold: over 9 random sets of the six
/// families of `benches/same_budget.py` (19 to 129 atoms, one worker, a loaded
/// two-core machine), nodes times atoms per second of the whole length search (its
/// windows included) ranged over 110k to 530k. At 150k a 2 s budget's work ends within
/// about 0.6 to 2.7 s: on most sets well within the clock, which leaves the error
/// phases half of it or more; on the dearest the clock caps it.
pub(crate) const NODES_PER_ATOM_SECOND: f64 = 150_000.0;

/// The fewest nodes a calibrated length search is given (a bare clock of a few
/// milliseconds still searches).
pub(crate) const MIN_CALIBRATED_WORK: u64 = 64;

/// The work (nodes per worker) of a calibrated length phase: `nominal` seconds of the
/// group's clock at [`NODES_PER_ATOM_SECOND`] over the final goals' `atoms`, no more
/// than a node limit over all `workers` allows each. The nominal clock is the time
/// limit's share for the group (not the clock left when it starts), so that the work
/// is the same on every run.
pub(crate) fn calibrated_work(
    nominal: std::time::Duration,
    atoms: i64,
    node_limit: Option<u64>,
    workers: usize,
) -> u64 {
    let atoms = atoms.max(1) as f64;
    let nodes = NODES_PER_ATOM_SECOND * nominal.as_secs_f64() / atoms;
    let work = (nodes.min(u64::MAX as f64) as u64).max(MIN_CALIBRATED_WORK);
    let each = node_limit.map(|n| n.div_ceil(workers.max(1) as u64).max(1));
    each.map_or(work, |n| work.min(n))
}

/// The work budget `phase` searches (nodes per worker) and whether its workers share
/// it ([`crate::cain::search::SearchOptions::shared`]). A given work budget (`work`,
/// `--work N`) is searched as given, each worker apart, in every phase: its program
/// stays reproducible. Without one, a calibrated phase searches the `calibrated` work
/// with its workers together, as they race under the clock (one seen table and best
/// length; stopped at their combined nodes): searching apart, each worker finds alone
/// what two racing workers find together only late or never (on a held-out 5x5 set,
/// `--objective length` finds its 21 instructions only in the race). Other phases
/// race the clock.
pub(crate) fn work_budget(
    phase: &Phase,
    work: Option<u64>,
    calibrated: impl FnOnce() -> u64,
) -> (Option<u64>, bool) {
    match work {
        Some(w) => (Some(w), false),
        None if phase.calibrated => (Some(calibrated()), true),
        None => (None, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_length_objective_has_one_phase_the_error_objective_three() {
        let names = |o, w| plan(o, w).iter().map(|p| p.name).collect::<Vec<_>>();
        assert_eq!(names(Objective::Length, false), ["length"]);
        assert_eq!(
            names(Objective::Error, true),
            ["length", "error", "reroute"]
        );
        // Under a work budget the length phase is the same under both objectives
        // (the given work, the whole clock a cap).
        assert_eq!(
            plan(Objective::Length, true)[0],
            plan(Objective::Error, true)[0]
        );
        assert_eq!(plan(Objective::Error, true)[0].share, 1.0);
        assert!(!plan(Objective::Error, true)[0].calibrated);
        // Under a clock the error objective's searches the calibrated work (three
        // quarters of the clock a cap); `--objective length`, with nothing after it,
        // the whole clock.
        assert!(plan(Objective::Error, false)[0].calibrated);
        assert_eq!(plan(Objective::Error, false)[0].share, LENGTH_CAP);
        let alone = plan(Objective::Length, false)[0];
        assert!(!alone.calibrated);
        assert_eq!(alone.share, 1.0);
        // The error phases get what it leaves, on the clock: the re-route the last
        // share of it.
        let error = plan(Objective::Error, false);
        assert!(error[1..].iter().all(|p| !p.calibrated));
        assert_eq!(error[1].share, 1.0 - objective::REROUTE_SHARE);
        assert_eq!(error[2].share, 1.0);
    }

    #[test]
    fn a_given_work_is_searched_apart_and_a_calibrated_one_together() {
        let [length, error, reroute] = [0, 1, 2].map(|i| plan(Objective::Error, false)[i]);
        let alone = plan(Objective::Length, false)[0];
        // `--work N`: as given, apart, in every phase (reproducible).
        for p in [&length, &error, &reroute, &alone] {
            assert_eq!(work_budget(p, Some(700), || 9), (Some(700), false));
        }
        // A clock budget: the calibrated phase searches its work together, the others
        // race the clock.
        assert_eq!(work_budget(&length, None, || 9), (Some(9), true));
        for p in [&error, &reroute, &alone] {
            assert_eq!(work_budget(p, None, || 9), (None, false));
        }
    }

    #[test]
    fn the_calibrated_work_grows_with_the_clock_and_shrinks_with_the_atoms() {
        let s = std::time::Duration::from_secs_f64;
        let work = |secs, atoms| calibrated_work(s(secs), atoms, None, 1);
        // 2 s over 20 atoms: 150k x 2 / 20.
        assert_eq!(work(2.0, 20), 15_000);
        assert_eq!(work(4.0, 20), 30_000);
        assert_eq!(work(2.0, 40), 7_500);
        // No atoms counts as one; no clock still searches the least work.
        assert_eq!(work(2.0, 0), 300_000);
        assert_eq!(work(0.0, 20), MIN_CALIBRATED_WORK);
        assert_eq!(work(1e-6, 1000), MIN_CALIBRATED_WORK);
        // A node limit over all workers caps each worker's share of it (rounded up);
        // above the calibrated work it changes nothing.
        assert_eq!(calibrated_work(s(2.0), 20, Some(9_001), 3), 3_001);
        assert_eq!(calibrated_work(s(2.0), 20, Some(1_000_000), 2), 15_000);
        assert_eq!(calibrated_work(s(2.0), 20, Some(0), 2), 1);
    }
}
