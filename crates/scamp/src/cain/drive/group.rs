//! Banks larger than the register file: the kernels of a spec split into groups, each
//! compiled as its own program from the input, whose outputs are read out before the
//! next group runs.
//!
//! A group must have a guaranteed program, so the split is the fewest groups (of
//! balanced sizes, kernels in spec order, no two sharing an output register) for which
//! the constructive fallback fits every group in the registers. With six registers
//! that is three kernels of eighths per group: the fallback holds the finished outputs,
//! the input, an accumulator and two registers for halving copies of the input.

use crate::cain::drive::setup::Setup;
use crate::cain::moves::goal::Goal;
use crate::cain::{drive::fallback, spec::approx};
use crate::isa::Reg;

/// The groups of kernel indices (spec order within and across groups).
pub(crate) fn plan(setup: &Setup) -> Vec<Vec<usize>> {
    let n = setup.kernels.len();
    let outs: Vec<Reg> = setup.kernels.iter().map(|k| k.out).collect();
    let fewest = n.div_ceil(setup.registers.len().max(1)).max(1);
    let mut last = Vec::new();
    for g in fewest..=n.max(1) {
        let groups = first_fit(&outs, n.div_ceil(g));
        if groups.iter().all(|m| fallback_fits(setup, m)) {
            return groups;
        }
        last = groups;
    }
    // Not even single kernels fit the construction (too few registers): the search
    // alone tries each group.
    last
}

/// Kernels in order into groups of at most `size`, a kernel going to the first group
/// with room whose outputs do not include its own.
fn first_fit(outs: &[Reg], size: usize) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, out) in outs.iter().enumerate() {
        let slot = groups
            .iter()
            .position(|m| m.len() < size && m.iter().all(|&j| outs.get(j) != Some(out)));
        match slot {
            Some(s) => groups[s].push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// Whether the constructive program of the kernels `members` fits the registers.
pub(crate) fn fallback_fits(setup: &Setup, members: &[usize]) -> bool {
    let kernels: Vec<_> = members
        .iter()
        .filter_map(|&i| setup.kernels.get(i))
        .collect();
    let depth = kernels.iter().map(|k| k.approx.depth).max().unwrap_or(0);
    let finals: Option<Vec<(Goal, Reg)>> = kernels
        .iter()
        .map(|k| approx::goal_of(&k.approx, depth).map(|g| (g, k.out)))
        .collect();
    finals.is_some_and(|f| {
        fallback::program(&f, &setup.spec.inputs(), &setup.registers, depth, setup.ops).is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_balances_and_separates_shared_outputs() {
        let outs = [Reg::A, Reg::B, Reg::C, Reg::A, Reg::B];
        assert_eq!(first_fit(&outs, 3), vec![vec![0, 1, 2], vec![3, 4]]);
        // Two kernels writing A never share a group, even with room.
        assert_eq!(
            first_fit(&[Reg::A, Reg::A, Reg::B], 3),
            vec![vec![0, 2], vec![1]]
        );
    }
}
