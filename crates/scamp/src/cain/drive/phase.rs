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
    /// Polishing the shortest program found by the phases before it, window by window:
    /// for a shorter one under the length objective, re-routed for a lower score within
    /// the slack under the error objective.
    Polish,
}

/// Which range a phase's values are held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RangeRule {
    /// Everything but the outputs within the register limit; where an output cannot
    /// fit, first that (half the budget), then every value within the outputs' own
    /// magnitude.
    OutputsExempt,
    /// The range the polished plan already keeps: the register limit where it fits,
    /// otherwise the outputs' own magnitude.
    KeptBySeed,
}

/// One phase of a group's search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Phase {
    /// Its name in reports (`length`, `error`, `reroute`, `polish`).
    pub(crate) name: &'static str,
    /// What it searches.
    pub(crate) searches: Searches,
    /// What it minimises: the shortest program, or the lowest score within the slack
    /// of the shortest found before it.
    pub(crate) objective: Objective,
    /// Its share of the clock the group has left when it starts, less what it
    /// [`leaves`](Self::leaves) (a work budget gives each phase the whole work; the
    /// clock then only caps it). See [`clock_budget`].
    pub(crate) share: f64,
    /// The share of the group's clock it leaves for the final polish, whatever it
    /// searches (0 under a work budget, where every phase has its whole work).
    pub(crate) leaves: f64,
    /// Whether, under a clock budget, it searches a work budget calibrated to the
    /// group's nominal clock ([`calibrated_work`]), its workers together
    /// ([`work_budget`]), with its clock as a cap only: then it stops at the earlier of
    /// that work and its clock (with one worker, where the work is done first, its
    /// result does not depend on the machine's load).
    pub(crate) calibrated: bool,
    /// The range its values are held to.
    pub(crate) range: RangeRule,
}

/// The phases of a group's search under `objective`, in order; `work` says whether the
/// budget is a deterministic work budget (then every phase's share of the clock is a
/// cap only).
///
/// Under a work budget the length phase is the same under both objectives (the given
/// work, the whole clock a cap), so the error objective's program is held to the very
/// program `--objective length` prints (see
/// [`crate::cain::drive::choice::final_choice`]); `--objective length` runs nothing
/// after it.
///
/// Under a clock budget the length phase is again the same phase under both
/// objectives: the whole clock but the final polish's [`FINAL_POLISH_SHARE`], the same
/// seed and workers, the workers racing together. The one difference is the error
/// objective's early stop: its length phase also stops at the work calibrated to the
/// clock, and where that is done first the error phases get what it leaves. Where the
/// clock strikes first, the default has searched for length exactly as long as
/// `--objective length`. Both end with a polish of the shortest program on the last
/// share: re-routed for a lower predicted error within the slack under the error
/// objective (`reroute`), shortened under the length objective (`polish`).
pub(crate) fn plan(objective: Objective, work: bool) -> Vec<Phase> {
    let leaves = if work { 0.0 } else { FINAL_POLISH_SHARE };
    let length = Phase {
        name: "length",
        searches: Searches::Plans,
        objective: Objective::Length,
        share: 1.0,
        leaves,
        calibrated: false,
        range: RangeRule::OutputsExempt,
    };
    let polish = |name, objective| Phase {
        name,
        searches: Searches::Polish,
        objective,
        share: 1.0,
        leaves: 0.0,
        calibrated: false,
        range: RangeRule::KeptBySeed,
    };
    match objective {
        Objective::Length if work => vec![length],
        Objective::Length => vec![length, polish("polish", Objective::Length)],
        Objective::Error => vec![
            Phase {
                calibrated: !work,
                ..length
            },
            Phase {
                name: "error",
                searches: Searches::Plans,
                objective: Objective::Error,
                share: 1.0 - objective::REROUTE_SHARE,
                leaves,
                calibrated: false,
                range: RangeRule::OutputsExempt,
            },
            polish("reroute", Objective::Error),
        ],
    }
}

/// The share of a group's clock kept, under a clock budget, for the final polish of
/// the shortest program (both objectives keep it, so that their length phases search
/// the same clock). It is needed: where the clock strikes before the calibrated work
/// is done (CNN-like layers at 10 s on two loaded workers), re-routing the length
/// phase's program is what brings the default under Cain's measured error. On
/// `ho_cnn_7741` it made the length phase's 25 instructions 24, under Cain on every
/// kernel; with no time after the length phase the default's program was the length
/// phase's and measured 33.65 total RMSE on kernel C against Cain's 32.12. 7.5 % is
/// what the re-route had there when it brought that (a quarter of the clock left, 30 %
/// of it re-routing).
pub(crate) const FINAL_POLISH_SHARE: f64 = 0.075;

/// The clock `phase` gets when the group has `left` of its clock `time`: its share of
/// what is left less what it leaves for the final polish.
pub(crate) fn clock_budget(
    phase: &Phase,
    left: std::time::Duration,
    time: std::time::Duration,
) -> std::time::Duration {
    left.saturating_sub(time.mul_f64(phase.leaves))
        .mul_f64(phase.share)
}

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
    use std::time::Duration;

    #[test]
    fn the_phases_of_each_objective_under_a_work_and_a_clock_budget() {
        let names = |o, w| plan(o, w).iter().map(|p| p.name).collect::<Vec<_>>();
        assert_eq!(names(Objective::Length, true), ["length"]);
        assert_eq!(names(Objective::Length, false), ["length", "polish"]);
        for w in [true, false] {
            assert_eq!(names(Objective::Error, w), ["length", "error", "reroute"]);
        }
        // Under either budget the length phase is the same phase under both
        // objectives, but for the error objective's stop at the calibrated work under a
        // clock.
        assert_eq!(
            plan(Objective::Length, true)[0],
            plan(Objective::Error, true)[0]
        );
        let (alone, default) = (
            plan(Objective::Length, false)[0],
            plan(Objective::Error, false)[0],
        );
        assert!(default.calibrated && !alone.calibrated);
        assert_eq!(
            Phase {
                calibrated: false,
                ..default
            },
            alone
        );
        // A work budget: every phase its whole work (the clock a cap), nothing left
        // aside.
        for o in [Objective::Length, Objective::Error] {
            assert!(plan(o, true)
                .iter()
                .all(|p| p.leaves == 0.0 && !p.calibrated));
        }
        assert_eq!(plan(Objective::Error, true)[0].share, 1.0);
        // Both end with a polish of the shortest program under their own objective.
        for o in [Objective::Length, Objective::Error] {
            let last = *plan(o, false).last().expect("phases");
            assert_eq!((last.searches, last.objective), (Searches::Polish, o));
            assert_eq!((last.share, last.leaves), (1.0, 0.0));
            assert_eq!(last.range, RangeRule::KeptBySeed);
        }
    }

    /// What each phase of `objective` gets of a clock `time`, when the length phase's
    /// calibrated work is done after `work_done` (`None`: never, the clock strikes
    /// first) and every other phase spends its whole budget.
    fn schedule(
        objective: Objective,
        time: Duration,
        work_done: Option<Duration>,
    ) -> Vec<Duration> {
        let mut spent = Duration::ZERO;
        plan(objective, false)
            .iter()
            .map(|p| {
                let budget = clock_budget(p, time.saturating_sub(spent), time);
                let used = match work_done {
                    Some(w) if p.calibrated => w.min(budget),
                    _ => budget,
                };
                spent += used;
                budget
            })
            .collect()
    }

    #[test]
    fn the_length_phase_has_the_same_clock_and_the_polish_its_reserve() {
        let ms = Duration::from_millis;
        let t = ms(2000);
        // Polish 7.5 %: 150 ms of 2 s.
        let polish = t.mul_f64(FINAL_POLISH_SHARE);
        assert_eq!(polish, ms(150));
        // `--objective length`: the length phase all but the polish's share.
        assert_eq!(schedule(Objective::Length, t, None), [ms(1850), ms(150)]);
        // The clock strikes first: the default's length phase has had the very clock
        // of `--objective length`'s, the error search nothing, the re-route the polish's
        // share.
        assert_eq!(
            schedule(Objective::Error, t, None),
            [ms(1850), ms(0), ms(150)]
        );
        // The work is done first (after 0.5 s): the error search gets 70 % of what it
        // leaves beyond the polish's share, the re-route the rest.
        let done = schedule(Objective::Error, t, Some(ms(500)));
        assert_eq!(done[0], ms(1850));
        assert_eq!(done[1], ms(1350).mul_f64(1.0 - objective::REROUTE_SHARE));
        assert_eq!(done[2], t - ms(500) - done[1]);
        assert!(done[2].abs_diff(ms(555)) < Duration::from_micros(1));
        // Work done just before the clock: no phase gets less than nothing, and the
        // re-route never less than its share.
        let late = schedule(Objective::Error, t, Some(ms(1849)));
        assert_eq!(late[2], t - ms(1849) - late[1]);
        assert!(late[2] >= polish);
        // A clock already spent gives every phase nothing.
        let left_none = plan(Objective::Error, false)
            .iter()
            .map(|p| clock_budget(p, Duration::ZERO, t))
            .collect::<Vec<_>>();
        assert_eq!(left_none, [Duration::ZERO; 3]);
    }

    #[test]
    fn a_given_work_is_searched_apart_and_a_calibrated_one_together() {
        let [length, error, reroute] = [0, 1, 2].map(|i| plan(Objective::Error, false)[i]);
        let [alone, polish] = [0, 1].map(|i| plan(Objective::Length, false)[i]);
        // `--work N`: as given, apart, in every phase (reproducible).
        for p in [&length, &error, &reroute, &alone, &polish] {
            assert_eq!(work_budget(p, Some(700), || 9), (Some(700), false));
        }
        // A clock budget: the calibrated phase searches its work together, the others
        // race the clock.
        assert_eq!(work_budget(&length, None, || 9), (Some(9), true));
        for p in [&error, &reroute, &alone, &polish] {
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
