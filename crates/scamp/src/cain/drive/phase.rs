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
    /// The range its values are held to.
    pub range: RangeRule,
}

/// The phases of a group's search under `objective`, in order; `work` says whether the
/// budget is a deterministic work budget (then every phase's share of the clock is a
/// cap only, and the length phase gets the whole of it).
pub(crate) fn plan(objective: Objective, work: bool) -> Vec<Phase> {
    let length = Phase {
        name: "length",
        searches: Searches::Plans,
        objective: Objective::Length,
        share: match (objective, work) {
            (Objective::Error, false) => objective::LENGTH_SHARE,
            _ => 1.0,
        },
        range: RangeRule::OutputsExempt,
    };
    match objective {
        Objective::Length => vec![length],
        Objective::Error => vec![
            length,
            Phase {
                name: "error",
                searches: Searches::Plans,
                objective: Objective::Error,
                share: 1.0 - objective::REROUTE_SHARE,
                range: RangeRule::OutputsExempt,
            },
            Phase {
                name: "reroute",
                searches: Searches::Reroute,
                objective: Objective::Error,
                share: 1.0,
                range: RangeRule::KeptBySeed,
            },
        ],
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
        // The length phase shares the clock under the error objective only.
        assert_eq!(plan(Objective::Length, false)[0].share, 1.0);
        assert_eq!(plan(Objective::Error, true)[0].share, 1.0);
        assert_eq!(
            plan(Objective::Error, false)[0].share,
            objective::LENGTH_SHARE
        );
        // The last phase takes whatever is left.
        assert_eq!(plan(Objective::Error, false)[2].share, 1.0);
    }
}
