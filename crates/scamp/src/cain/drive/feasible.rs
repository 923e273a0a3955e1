//! Telling "no program can exist" apart from "none was found in time": a search that
//! cannot succeed should not send the user after a larger time limit.

use crate::cain::moves::goal::Goal;
use crate::cain::search::{Outcome, StopReason};
use crate::isa::Reg;

/// Why no program can exist within the registers given: more time would not help.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Infeasible {
    /// One register cannot hold what a kernel needs.
    #[error(
        "no program can exist: a single register ({register}) can only hold +-2^k times one \
         shifted input (or weights summing to 0), and {}; give more registers \
         (`registers:` in the spec or --registers)",
        Taps { out: *out, taps: *taps }
    )]
    SingleRegister {
        /// The one register.
        register: Reg,
        /// The output whose kernel it cannot hold.
        out: Reg,
        /// The kernel's taps.
        taps: usize,
    },
    /// The search expanded or pruned every node of its space.
    #[error(
        "no program found: the search exhausted its whole space ({nodes} nodes) within the \
         registers {}; more time would not help, more registers may",
        Names(registers)
    )]
    Exhausted {
        /// Nodes expanded.
        nodes: u64,
        /// The registers searched within.
        registers: Vec<Reg>,
    },
}

/// What a single register misses of a kernel, for [`Infeasible::SingleRegister`].
struct Taps {
    out: Reg,
    taps: usize,
}

impl std::fmt::Display for Taps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let out = self.out;
        if self.taps > 1 {
            write!(
                f,
                "the kernel of {out} combines {} taps whose weights do not sum to 0",
                self.taps
            )
        } else {
            write!(f, "the one weight of the kernel of {out} is not +-2^k")
        }
    }
}

/// Register names separated by commas.
struct Names<'a>(&'a [Reg]);

impl std::fmt::Display for Names<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.0.iter().map(Reg::to_string).collect();
        f.write_str(&names.join(", "))
    }
}

/// Why no program can compute the goals `finals` within `registers`, when that is
/// certain without a search. One register can only ever hold +-2^k times one shifted
/// copy of the input, or a value whose weights sum to 0: moving, negating and halving
/// keep that, the hardware never lets an addition read one register twice, and an
/// instruction that subtracts a register from itself (shifted or not) sums to 0.
pub(crate) fn impossible(finals: &[(Goal, Reg)], registers: &[Reg]) -> Option<Infeasible> {
    let [only] = registers else {
        return None;
    };
    let (goal, out) = finals.iter().find(|(g, _)| !one_register_may_hold(g))?;
    Some(Infeasible::SingleRegister {
        register: *only,
        out: *out,
        taps: goal.support(),
    })
}

/// Whether `g` is +-2^k atoms at one offset, weights summing to 0, or nothing.
fn one_register_may_hold(g: &Goal) -> bool {
    match g.0.as_slice() {
        [t] => t.n.unsigned_abs().is_power_of_two(),
        _ => g.sum() == 0,
    }
}

/// Why a search that expanded or pruned every node of its space and found nothing
/// failed, `None` when it stopped for another reason (then more time may help).
pub(crate) fn exhausted<T>(outcome: &Outcome<T>, registers: &[Reg]) -> Option<Infeasible> {
    (outcome.stop == StopReason::Exhausted).then(|| Infeasible::Exhausted {
        nodes: outcome.nodes,
        registers: registers.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_register_holds_one_power_of_two_tap() {
        let two_taps = Goal::from_terms(vec![
            crate::cain::moves::goal::Term {
                z: 0,
                r: 0,
                c: 0,
                n: 1,
            },
            crate::cain::moves::goal::Term {
                z: 0,
                r: 0,
                c: 1,
                n: 1,
            },
        ]);
        let why = impossible(&[(two_taps.clone(), Reg::A)], &[Reg::A])
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(why.contains("combines 2 taps"), "{why}");
        let difference = Goal::from_terms(vec![
            crate::cain::moves::goal::Term {
                z: 0,
                r: 0,
                c: 0,
                n: -1,
            },
            crate::cain::moves::goal::Term {
                z: 0,
                r: 0,
                c: 1,
                n: 1,
            },
        ]);
        assert_eq!(impossible(&[(difference, Reg::A)], &[Reg::A]), None);
        let three = Goal::single(0, 1, 3);
        let why = impossible(&[(three, Reg::A)], &[Reg::A])
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(why.contains("not +-2^k"), "{why}");
        for fits in [Goal::single(1, -1, -4), Goal::empty()] {
            assert_eq!(impossible(&[(fits, Reg::A)], &[Reg::A]), None);
        }
        assert_eq!(impossible(&[(two_taps, Reg::A)], &[Reg::A, Reg::B]), None);
    }
}
