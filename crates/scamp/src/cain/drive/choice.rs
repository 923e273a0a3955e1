//! The final choice of a group's program from what its phases found: a pure function
//! of their results (the "held to the shortest" rules of `objective::prefer`), and
//! which phases' programs it kept.

use crate::cain::drive::race::Candidate;
use crate::cain::score::objective;
use crate::cain::search::Found;
use crate::cain::{Objective, Source};

/// What a group's phases leave for the final choice.
pub(crate) struct Finalists {
    /// The shortest program: the length phase's, or the constructive one where that is
    /// no longer (see [`shortest`]), with its source.
    pub(crate) shortest: (Found<Candidate>, Source),
    /// A program shorter than that one which a later phase finished, if any.
    pub(crate) shorter: Option<Found<Candidate>>,
    /// The later phases' results, in phase order.
    pub(crate) searched: Vec<Found<Candidate>>,
}

/// The shorter of the length phase's and the constructive program: fewer instructions,
/// then fewer cycles, ties to the searched one (the search only ever returns programs
/// within its objective's choice).
pub(crate) fn shortest(
    searched: Option<Found<Candidate>>,
    constructive: Option<Found<Candidate>>,
) -> Option<(Found<Candidate>, Source)> {
    match (searched, constructive) {
        (Some(s), Some(f)) if (f.instructions, f.cycles) < (s.instructions, s.cycles) => {
            Some((f, Source::Fallback))
        }
        (Some(s), _) => Some((s, Source::Search)),
        (None, Some(f)) => Some((f, Source::Fallback)),
        (None, None) => None,
    }
}

/// The group's program under `objective`: the shortest under the length objective;
/// under the error objective the lowest scored within `slack` of the shortest of all
/// and predicted no worse than it (see [`objective::prefer`]).
pub(crate) fn final_choice(
    objective: Objective,
    finalists: Finalists,
    slack: f64,
) -> (Found<Candidate>, Source) {
    let Finalists {
        shortest,
        shorter,
        searched,
    } = finalists;
    match objective {
        Objective::Length => shortest,
        Objective::Error => objective::prefer(
            shortest,
            shorter.map(|f| (f, Source::Search)),
            searched.into_iter().map(|f| (f, Source::Search)),
            slack,
        ),
    }
}

/// Whether `chosen` is one of `programs` (a phase's best and shortest finished), by
/// the program's text.
pub(crate) fn kept<'a>(
    chosen: &Found<Candidate>,
    programs: impl IntoIterator<Item = &'a Found<Candidate>>,
) -> bool {
    let text = chosen.value.program.to_string();
    programs
        .into_iter()
        .any(|p| p.instructions == chosen.instructions && p.value.program.to_string() == text)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::verify::predict::Predicted;
    use crate::verify::range::Peak;
    use std::time::Duration;

    /// A candidate of `instructions` (a program of that many `res` statements, so that
    /// lengths tell programs apart), `score` and predicted RMSE `rmse`.
    pub(crate) fn found(instructions: usize, score: f64, rmse: f64) -> Found<Candidate> {
        let text: String = (0..instructions).map(|_| "res(A)\n").collect();
        let program = crate::isa::parse_program(&text, crate::isa::Device::default())
            .expect("res statements parse");
        Found {
            value: Candidate {
                program,
                peak: Peak {
                    magnitude: 0.0,
                    pos: None,
                    reg: None,
                    low: 0.0,
                    high: 0.0,
                },
                predicted: Some(vec![Predicted { rmse, bias: 0.0 }]),
                steps: Vec::new(),
            },
            instructions,
            cycles: instructions as u64,
            score,
            at: Duration::ZERO,
        }
    }

    #[test]
    fn the_shortest_is_the_fewer_instructions_then_cycles_ties_to_the_search() {
        let n = |r: Option<(Found<Candidate>, Source)>| r.map(|(f, s)| (f.instructions, s));
        assert_eq!(
            n(shortest(
                Some(found(12, 0.0, 1.0)),
                Some(found(14, 0.0, 1.0))
            )),
            Some((12, Source::Search))
        );
        assert_eq!(
            n(shortest(
                Some(found(15, 0.0, 1.0)),
                Some(found(14, 0.0, 1.0))
            )),
            Some((14, Source::Fallback))
        );
        assert_eq!(
            n(shortest(
                Some(found(14, 0.0, 1.0)),
                Some(found(14, 0.0, 1.0))
            )),
            Some((14, Source::Search))
        );
        assert_eq!(
            n(shortest(None, Some(found(14, 0.0, 1.0)))),
            Some((14, Source::Fallback))
        );
        assert!(shortest(None, None).is_none());
    }

    #[test]
    fn the_length_objective_keeps_the_shortest_whatever_the_later_phases_found() {
        let f = Finalists {
            shortest: (found(14, 9.0, 3.0), Source::Fallback),
            shorter: Some(found(12, 1.0, 1.0)),
            searched: vec![found(15, 1.0, 1.0)],
        };
        let (c, s) = final_choice(Objective::Length, f, 0.25);
        assert_eq!((c.instructions, s), (14, Source::Fallback));
    }

    #[test]
    fn the_error_objective_is_held_to_the_shortest_of_all_phases() {
        let choose = |shorter: Option<Found<Candidate>>, searched: Vec<Found<Candidate>>| {
            let f = Finalists {
                shortest: (found(16, 9.0, 3.0), Source::Search),
                shorter,
                searched,
            };
            let (c, s) = final_choice(Objective::Error, f, 0.25);
            (c.instructions, c.score, s)
        };
        // Within the slack (at most 20 of 16) and predicted better: taken.
        assert_eq!(
            choose(None, vec![found(20, 5.0, 2.0)]),
            (20, 5.0, Source::Search)
        );
        // Beyond the slack: the shortest stays.
        assert_eq!(
            choose(None, vec![found(21, 1.0, 1.0)]),
            (16, 9.0, Source::Search)
        );
        // Predicted worse than the shortest: the shortest stays, however low the score.
        assert_eq!(choose(None, vec![found(17, 1.0, 3.5)]).0, 16);
        // A shorter program (12) found by a later phase: the slack counts from it
        // (at most 15), so the 16 and a 17 predicted better are both out of it.
        assert_eq!(
            choose(Some(found(12, 8.0, 2.5)), vec![found(17, 1.0, 1.0)]),
            (12, 8.0, Source::Search)
        );
    }

    #[test]
    fn the_error_objective_never_leaves_the_slack_of_the_length_phase() {
        // The same-budget rule over many random finalists (xorshift, fixed seed): the
        // chosen program is never more than the slack longer than the length phase's
        // (so never both that and predicted worse than it), and where it is longer it
        // is predicted no worse than it.
        struct Rng(u64);
        impl Rng {
            fn below(&mut self, n: u64) -> u64 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0 % n
            }
            fn one(&mut self, n: usize) -> Found<Candidate> {
                let score = self.below(100) as f64;
                found(n, score, 1.0 + self.below(50) as f64 / 10.0)
            }
        }
        let rmse = |f: &Found<Candidate>| f.value.predicted.as_ref().map_or(0.0, |p| p[0].rmse);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut longer, mut shorter_kept) = (0, 0);
        for _ in 0..4000 {
            let m = 8 + rng.below(40) as usize;
            let shortest = rng.one(m);
            let shorter = match rng.below(3) {
                0 => {
                    let n = m - 1 - rng.below(3) as usize;
                    Some(rng.one(n))
                }
                _ => None,
            };
            let searched: Vec<_> = (0..rng.below(6))
                .map(|_| {
                    let n = m - 3 + rng.below(20) as usize;
                    rng.one(n)
                })
                .collect();
            let m_rmse = rmse(&shortest);
            let f = Finalists {
                shortest: (shortest, Source::Search),
                shorter,
                searched,
            };
            let (c, _) = final_choice(Objective::Error, f, 0.25);
            let bound = (m as f64 * 1.25).floor() as usize;
            assert!(c.instructions <= bound, "{} beyond {bound}", c.instructions);
            if c.instructions > m {
                assert!(
                    rmse(&c) <= m_rmse,
                    "{} predicted {}",
                    c.instructions,
                    rmse(&c)
                );
                longer += 1;
            }
            shorter_kept += usize::from(c.instructions < m);
        }
        // Both sides of the rule were exercised.
        assert!(
            longer > 100 && shorter_kept > 100,
            "{longer} {shorter_kept}"
        );
    }

    #[test]
    fn kept_compares_the_programs_themselves() {
        let chosen = found(12, 1.0, 1.0);
        assert!(kept(&chosen, [&found(14, 1.0, 1.0), &found(12, 5.0, 2.0)]));
        assert!(!kept(&chosen, [&found(14, 1.0, 1.0)]));
        assert!(!kept(&chosen, []));
    }
}
