//! The generator's rules: every way [`super::reverse`] produces a child of a goal bag has
//! a name, and the search counts how often it took a child each rule made (as egg names
//! its rewrites and counts their applications), reported as `search.rules`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// One rule of the generator (instructions read backwards).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Rule {
    /// `G` is a live goal moved (`mov*`).
    Move,
    /// `G = moved H - H` for a live `H` (one `subx` reading it twice).
    MovedDifference,
    /// `G = -H` for a live `H`.
    Negate,
    /// `G = H / 2` for a live `H`.
    Halve,
    /// `G = H + (moved) D` for live `H` and `D`.
    SumOfLive,
    /// `G = H - (moved) D` for live `H` and `D`.
    DifferenceOfLive,
    /// `G = A + B + D` for three live goals.
    SumOfThreeLive,
    /// `G = 2G / 2`: the doubled goal becomes the new goal.
    HalveDouble,
    /// `G = -(-G)`: the negation becomes the new goal (goals of negative sum).
    NegateNew,
    /// `G` moved from a copy nearer the centre.
    MoveInward,
    /// `G = H + R` with a live `H` and the new remainder `R`.
    AddRemainder,
    /// `G = H - R` (or `R - H`) with a live `H` and the new remainder `R`.
    SubtractRemainder,
    /// `G = m x input + R` for a centre weight above one input.
    CentreMultiple,
    /// `G = P -+ moved P` exactly, copies that cancel included.
    Telescope,
    /// `G = P + moved P`, greedily folded.
    FoldSum,
    /// `G = X + moved X + moved P` with `P = X + moved X` split again.
    FoldSumSplit,
    /// `G = P+ + P- + moved P`, `P` split by sign.
    FoldSumSigns,
    /// `G = P + moved P + R` with a remainder.
    FoldSumRest,
    /// `G = P - moved P (+ R)`.
    FoldDifference,
    /// `G = -(moved P - P)`.
    FoldDifferenceNegated,
    /// `G = M + P moved one way + P moved the other`.
    CentreFold,
    /// `G = positive part - negated negative part` (or their sum).
    SignParts,
    /// `G = even part + odd atoms`.
    OddEven,
    /// `G` cut between two rows or two columns.
    Cut,
    /// One offset peeled off `G`.
    Peel,
    /// A single offset's count split into powers of two.
    PowersOfTwo,
    /// `G = D + E` and `H = D - E` for two goals of the bag.
    Butterfly,
    /// `G = X + (G - X)` with `X` common to `G` and `+-H`.
    CommonPart,
    /// An empty goal from `res`.
    Reset,
}

impl Rule {
    /// Every rule, in declaration order.
    pub(crate) const ALL: [Rule; 29] = [
        Rule::Move,
        Rule::MovedDifference,
        Rule::Negate,
        Rule::Halve,
        Rule::SumOfLive,
        Rule::DifferenceOfLive,
        Rule::SumOfThreeLive,
        Rule::HalveDouble,
        Rule::NegateNew,
        Rule::MoveInward,
        Rule::AddRemainder,
        Rule::SubtractRemainder,
        Rule::CentreMultiple,
        Rule::Telescope,
        Rule::FoldSum,
        Rule::FoldSumSplit,
        Rule::FoldSumSigns,
        Rule::FoldSumRest,
        Rule::FoldDifference,
        Rule::FoldDifferenceNegated,
        Rule::CentreFold,
        Rule::SignParts,
        Rule::OddEven,
        Rule::Cut,
        Rule::Peel,
        Rule::PowersOfTwo,
        Rule::Butterfly,
        Rule::CommonPart,
        Rule::Reset,
    ];

    /// Snake-case name for reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rule::Move => "move",
            Rule::MovedDifference => "moved_difference",
            Rule::Negate => "negate",
            Rule::Halve => "halve",
            Rule::SumOfLive => "sum_of_live",
            Rule::DifferenceOfLive => "difference_of_live",
            Rule::SumOfThreeLive => "sum_of_three_live",
            Rule::HalveDouble => "halve_double",
            Rule::NegateNew => "negate_new",
            Rule::MoveInward => "move_inward",
            Rule::AddRemainder => "add_remainder",
            Rule::SubtractRemainder => "subtract_remainder",
            Rule::CentreMultiple => "centre_multiple",
            Rule::Telescope => "telescope",
            Rule::FoldSum => "fold_sum",
            Rule::FoldSumSplit => "fold_sum_split",
            Rule::FoldSumSigns => "fold_sum_signs",
            Rule::FoldSumRest => "fold_sum_rest",
            Rule::FoldDifference => "fold_difference",
            Rule::FoldDifferenceNegated => "fold_difference_negated",
            Rule::CentreFold => "centre_fold",
            Rule::SignParts => "sign_parts",
            Rule::OddEven => "odd_even",
            Rule::Cut => "cut",
            Rule::Peel => "peel",
            Rule::PowersOfTwo => "powers_of_two",
            Rule::Butterfly => "butterfly",
            Rule::CommonPart => "common_part",
            Rule::Reset => "reset",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How many children of each rule a search took, counted live by its workers.
#[derive(Debug, Default)]
pub(crate) struct RuleCounts([AtomicU64; Rule::ALL.len()]);

impl RuleCounts {
    /// Counts one child of `rule` taken.
    pub(crate) fn add(&self, rule: Rule) {
        self.0[rule.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `other`'s counts to these.
    pub(crate) fn absorb(&self, other: &RuleCounts) {
        for (a, b) in self.0.iter().zip(&other.0) {
            a.fetch_add(b.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }

    /// The counts by rule name (alphabetical), rules never applied left out.
    pub(crate) fn by_name(&self) -> BTreeMap<String, u64> {
        Rule::ALL
            .iter()
            .map(|&r| {
                (
                    r.name().to_string(),
                    self.0[r.index()].load(Ordering::Relaxed),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_listed_once_in_order_with_a_distinct_name() {
        for (i, r) in Rule::ALL.iter().enumerate() {
            assert_eq!(r.index(), i, "{r:?}");
        }
        let names: std::collections::BTreeSet<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names.len(), Rule::ALL.len());
    }

    #[test]
    fn counts_add_up_by_name() {
        let a = RuleCounts::default();
        a.add(Rule::Butterfly);
        a.add(Rule::Butterfly);
        let b = RuleCounts::default();
        b.add(Rule::Peel);
        a.absorb(&b);
        let m = a.by_name();
        assert_eq!(m.get("butterfly"), Some(&2));
        assert_eq!(m.get("peel"), Some(&1));
        assert_eq!(m.len(), 2);
    }
}
