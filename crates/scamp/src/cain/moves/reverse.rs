//! Instructions applied in reverse: for a goal bag, every way the generator considers of
//! producing some of its goals with one instruction, and the bag that must be live
//! before it (the child).
//!
//! Producing a goal `G` needs inputs `L`; the child is `(bag - produced) + L`. The
//! candidates come in three groups, cheapest first:
//! - direct: `G` follows from goals already live (or the input) by one instruction;
//! - one new goal: `G` from a live goal and one new goal (e.g. `G = H + (G - H)`),
//!   or from `2G` (halving), or from a moved copy;
//! - splits: `G` as a sum of new goals, favouring parts that are moved copies of one
//!   another (`G = P + moved P`), since those cost one more instruction each.
//!
//! With `Ctx::structured` two more groups join: exact telescopes (`G = moved P - P`
//! even where the copies overlap and cancel: one `subx`/`sub2x` reading P twice) and
//! steps shared by two goals of the bag (butterflies `G = D + E`, `H = D - E`, and
//! common parts).

use crate::cain::moves::goal::{Bag, Goal, Shift, Term, SHIFTS};
use crate::cain::moves::rule::Rule;
use crate::cain::moves::step::{Kind, Step};
use crate::cain::spec::Ops;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;

/// Fingerprints are already well mixed: hash them as they are.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl std::hash::Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
}

type FpSet = HashSet<u64, BuildHasherDefault<PassThrough>>;

/// What the generator needs to know about the problem.
#[derive(Clone, Debug)]
pub(crate) struct Ctx {
    /// The initial goal: 2^depth atoms at the centre (of channel 0, the first input).
    pub(crate) init: Goal,
    /// The further inputs' goals, one per channel 1.. (empty for a single input): each
    /// starts in its own register, as `init` does.
    pub(crate) others: Vec<Goal>,
    /// Registers available.
    pub(crate) regs: usize,
    /// Instruction set.
    pub(crate) ops: Ops,
    /// Common depth D of all goals.
    pub(crate) depth: u32,
    /// Prune bags with more atoms than this.
    pub(crate) max_atoms: i64,
    /// Structured generation: steps shared between two goals (butterflies, common
    /// parts) and exact telescopes, ranked by the structured estimate.
    pub(crate) structured: bool,
}

#[cfg(test)]
impl Ctx {
    /// The unit tests' problem: one input at depth 0, six registers, every instruction,
    /// bags of up to 1,000 atoms.
    pub(crate) fn for_tests(structured: bool) -> Self {
        Ctx {
            init: Goal::single(0, 0, 1),
            others: Vec::new(),
            regs: 6,
            ops: Ops::All,
            depth: 0,
            max_atoms: 1000,
            structured,
        }
    }
}

/// A child of a bag: the instruction (read forwards) and the bag live before it.
#[derive(Clone, Debug)]
pub(crate) struct Cand {
    /// The instruction.
    pub(crate) step: Step,
    /// The bag before the instruction.
    pub(crate) child: Bag,
    /// The rule that made it.
    pub(crate) rule: Rule,
}

impl Ctx {
    /// Whether `g` is one of the inputs (a goal no instruction needs to make).
    pub(crate) fn is_input(&self, g: &Goal) -> bool {
        *g == self.init || self.others.contains(g)
    }

    /// Every input's goal, channel 0 first.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Goal> {
        std::iter::once(&self.init).chain(&self.others)
    }
}

/// Whether `bag` is the start of a program: nothing left but inputs.
pub(crate) fn is_initial(bag: &Bag, ctx: &Ctx) -> bool {
    bag.0.iter().all(|g| ctx.is_input(g))
}

/// Registers needed while `step` runs, with `before` live before and `after` after it.
pub(crate) fn registers_needed(step: &Step, before: &Bag, after: &Bag) -> usize {
    let fresh = step.outs.iter().filter(|g| !before.contains(g)).count();
    let reuse = step
        .ins
        .iter()
        .enumerate()
        .any(|(i, g)| step.kind.may_overwrite(0, i) && !after.contains(g));
    (before.len() + fresh).saturating_sub(usize::from(reuse && fresh > 0))
}

struct Gen<'a> {
    bag: &'a Bag,
    ctx: &'a Ctx,
    /// Goals a step may read besides the bag's and the input (see [`expand_toward`]).
    sources: &'a [Goal],
    out: &'a mut Vec<Cand>,
    seen: FpSet,
}

impl Gen<'_> {
    fn push(&mut self, rule: Rule, kind: Kind, outs: Vec<Goal>, ins: Vec<Goal>) {
        if !kind.allowed(self.ctx.ops) {
            return;
        }
        if ins.iter().any(|g| g.is_empty() || outs.contains(g)) {
            return;
        }
        // One register may not be read twice by one bus instruction: two equal
        // sources would need a copy unless the entry reads them in different bus
        // instructions (`subx(y, A, east, A)` is fine).
        let same_bus_twice = ins.iter().enumerate().any(|(i, g)| {
            ins[..i]
                .iter()
                .enumerate()
                .any(|(j, h)| h == g && !kind.may_repeat(j, i))
        });
        if same_bus_twice {
            return;
        }
        let step = Step { kind, outs, ins };
        debug_assert!(step.is_consistent(), "inconsistent step {step:?}");
        let child = self.bag.replace(&step.outs, &step.ins);
        if child.len() > self.ctx.regs
            || registers_needed(&step, &child, self.bag) > self.ctx.regs
            || child.atoms() > self.ctx.max_atoms
        {
            return;
        }
        if self.seen.insert(child.fingerprint()) {
            self.out.push(Cand { step, child, rule });
        }
    }

    fn avail(&self, g: &Goal) -> Vec<Goal> {
        let mut v: Vec<Goal> = self.bag.0.iter().filter(|h| *h != g).cloned().collect();
        for x in self.ctx.inputs() {
            if !self.bag.contains(x) && x != g {
                v.push(x.clone());
            }
        }
        for h in self.sources {
            if h != g && !v.contains(h) {
                v.push(h.clone());
            }
        }
        v
    }

    /// The moves the instruction set has, as the table says (`ops: basic` has `movx`
    /// but not `mov2x`: the one-step shifts, which [`SHIFTS`] lists first).
    fn shifts(&self) -> &'static [Shift] {
        let n = SHIFTS
            .iter()
            .take_while(|&&s| Kind::Shift(s).allowed(self.ctx.ops))
            .count();
        &SHIFTS[..n]
    }

    /// `G` as a live `H` moved, or as `H` moved minus itself.
    fn moved(&mut self, g: &Goal, h: &Goal) {
        for &s in self.shifts() {
            let aligned = h.support() == g.support()
                && h.0.first().zip(g.0.first()).is_some_and(|(a, b)| {
                    a.n == b.n
                        && i16::from(a.r) + i16::from(s.dr) == i16::from(b.r)
                        && i16::from(a.c) + i16::from(s.dc) == i16::from(b.c)
                });
            if aligned && h.shifted(s).as_ref() == Some(g) {
                self.push(Rule::Move, Kind::Shift(s), vec![g.clone()], vec![h.clone()]);
            }
            // G = moved H - H (subx reads H twice in different bus instructions).
            if g.sum() == 0
                && g.support() <= 2 * h.support()
                && h.combined_atoms(h, -1, s.dr, s.dc) == g.atoms()
                && h.shifted(s).map(|x| x.minus(h)).as_ref() == Some(g)
            {
                self.push(
                    Rule::MovedDifference,
                    Kind::SubShift(s),
                    vec![g.clone()],
                    vec![h.clone(), h.clone()],
                );
            }
        }
    }

    /// `G` from live goals only.
    fn direct(&mut self, g: &Goal, avail: &[Goal]) {
        // Cheap filters first: a sum of goals has the sum of their sums, whatever
        // the moves, so most lookups are decided without building a goal.
        let sums: Vec<i64> = avail.iter().map(Goal::sum).collect();
        let fps: Vec<u64> = avail.iter().map(Goal::fingerprint).collect();
        let has_sum = |x: i64| sums.contains(&x);
        // And the same atoms, counted before the goal is made.
        let atoms: Vec<i64> = avail.iter().map(Goal::atoms).collect();
        let has_atoms = |x: i64| atoms.contains(&x);
        let find = |d: &Goal| {
            let fp = d.fingerprint();
            fps.iter().zip(avail).any(|(f, a)| *f == fp && a == d)
        };
        let gs = g.sum();
        let neg = g.neg();
        for h in avail {
            let hs = h.sum();
            self.moved(g, h);
            if *h == neg {
                self.push(Rule::Negate, Kind::Neg, vec![g.clone()], vec![h.clone()]);
            }
            if h.halved().as_ref() == Some(g) {
                if self.bag.contains(&neg) {
                    self.push(
                        Rule::Halve,
                        Kind::Div,
                        vec![g.clone(), neg.clone()],
                        vec![h.clone()],
                    );
                }
                self.push(Rule::Halve, Kind::Divq, vec![g.clone()], vec![h.clone()]);
            }
            // G moved back less H, and H moved less G, have the atoms of G less H moved.
            let moved_difference = |s: Shift| has_atoms(g.combined_atoms(h, -1, s.dr, s.dc));
            let difference = || has_atoms(g.combined_atoms(h, -1, 0, 0));
            if has_sum(gs - hs) {
                let d = difference().then(|| g.minus(h)).filter(|d| find(d));
                if let Some(d) = d {
                    self.push(
                        Rule::SumOfLive,
                        Kind::Add2,
                        vec![g.clone()],
                        vec![h.clone(), d],
                    );
                }
                for &s in self.shifts() {
                    if let Some(x) = g.unshifted(s).filter(|_| moved_difference(s)) {
                        let d = x.minus(h);
                        if find(&d) {
                            self.push(
                                Rule::SumOfLive,
                                Kind::AddShift(s),
                                vec![g.clone()],
                                vec![h.clone(), d],
                            );
                        }
                    }
                }
            }
            if has_sum(hs - gs) {
                let d = difference().then(|| h.minus(g)).filter(|d| find(d));
                if let Some(d) = d {
                    self.push(
                        Rule::DifferenceOfLive,
                        Kind::Sub,
                        vec![g.clone()],
                        vec![h.clone(), d],
                    );
                }
                for &s in self.shifts() {
                    if let Some(x) = h.shifted(s).filter(|_| moved_difference(s)) {
                        let d = x.minus(g);
                        if find(&d) {
                            self.push(
                                Rule::DifferenceOfLive,
                                Kind::SubShift(s),
                                vec![g.clone()],
                                vec![h.clone(), d],
                            );
                        }
                    }
                }
            }
        }
        for (i, a) in avail.iter().enumerate() {
            for (j, b) in avail.iter().enumerate().skip(i + 1) {
                if !has_sum(gs - sums[i] - sums[j]) {
                    continue;
                }
                let d = g.minus(a).minus(b);
                if find(&d) && d != *a && d != *b {
                    self.push(
                        Rule::SumOfThreeLive,
                        Kind::Add3,
                        vec![g.clone()],
                        vec![a.clone(), b.clone(), d],
                    );
                }
            }
        }
    }

    /// `G` from at most one new goal (and live goals).
    fn one_new(&mut self, g: &Goal, avail: &[Goal]) {
        let size = g.atoms();
        if g.level(self.ctx.depth) >= 1 {
            if let Some(h) = g.scaled(2) {
                let neg = g.neg();
                if self.bag.contains(&neg) {
                    self.push(
                        Rule::HalveDouble,
                        Kind::Div,
                        vec![g.clone(), neg],
                        vec![h.clone()],
                    );
                }
                self.push(Rule::HalveDouble, Kind::Divq, vec![g.clone()], vec![h]);
            }
        }
        if g.sum() < 0 {
            self.push(Rule::NegateNew, Kind::Neg, vec![g.clone()], vec![g.neg()]);
        }
        self.centre_multiple(g);
        let (cr, cc) = g.centroid();
        let dist = cr.abs() + cc.abs();
        for &s in self.shifts() {
            if let Some(r) = g.unshifted(s) {
                let (rr, rc) = r.centroid();
                if rr.abs() + rc.abs() < dist - 0.25 {
                    self.push(Rule::MoveInward, Kind::Shift(s), vec![g.clone()], vec![r]);
                }
            }
        }
        // Each sum or difference is counted before it is made: most are not smaller.
        let smaller_by = |h: &Goal, k: i32, dr: i8, dc: i8| {
            let n = g.combined_atoms(h, k, dr, dc);
            n > 0 && n < size
        };
        for h in avail {
            let (difference, sum) = (smaller_by(h, -1, 0, 0), smaller_by(h, 1, 0, 0));
            if difference {
                self.push(
                    Rule::AddRemainder,
                    Kind::Add2,
                    vec![g.clone()],
                    vec![h.clone(), g.minus(h)],
                );
                self.push(
                    Rule::SubtractRemainder,
                    Kind::Sub,
                    vec![g.clone()],
                    vec![h.clone(), h.minus(g)],
                );
            }
            let g_plus_h = sum.then(|| g.plus(h));
            if let Some(r) = &g_plus_h {
                self.push(
                    Rule::SubtractRemainder,
                    Kind::Sub,
                    vec![g.clone()],
                    vec![r.clone(), h.clone()],
                );
            }
            for &s in self.shifts() {
                // G moved back less H, and H moved less G, have the atoms of G less H
                // moved.
                let moved_difference = smaller_by(h, -1, s.dr, s.dc);
                if let Some(x) = g.unshifted(s).filter(|_| moved_difference) {
                    self.push(
                        Rule::AddRemainder,
                        Kind::AddShift(s),
                        vec![g.clone()],
                        vec![h.clone(), x.minus(h)],
                    );
                }
                // G = moved R - H with R = (G + H) moved back.
                if let Some(r) = g_plus_h.as_ref().and_then(|r| r.unshifted(s)) {
                    self.push(
                        Rule::SubtractRemainder,
                        Kind::SubShift(s),
                        vec![g.clone()],
                        vec![r, h.clone()],
                    );
                }
                if let Some(x) = h.shifted(s).filter(|_| moved_difference) {
                    self.push(
                        Rule::SubtractRemainder,
                        Kind::SubShift(s),
                        vec![g.clone()],
                        vec![h.clone(), x.minus(g)],
                    );
                }
            }
        }
    }

    /// A centre weight above one input (sharpening, unsharp masks: `2 x - blur`):
    /// `G = m x input + R` with `m` the nearest whole multiple, so that `R` is the
    /// blur itself. Splitting off the centre as it stands (`476/256` for a 5x5 unsharp
    /// mask) would leave a centre count that takes a long chain of halvings to build,
    /// while `m x input` takes at most a few doublings. Only with halvings (depth > 0):
    /// at depth 0 there is no long chain to avoid, and the extra candidates slowed the
    /// Laplacian's search (6 instructions found after ~7 s instead of ~4 s).
    fn centre_multiple(&mut self, g: &Goal) {
        let inputs: Vec<Goal> = self.ctx.inputs().cloned().collect();
        for (z, x) in inputs.iter().enumerate() {
            self.centre_multiple_of(g, x, z as u8);
        }
    }

    /// [`Gen::centre_multiple`] for the input `x` of channel `z`.
    fn centre_multiple_of(&mut self, g: &Goal, x: &Goal, z: u8) {
        let unit = x.sum();
        let n = i64::from(g.get_on(z, 0, 0));
        if self.ctx.depth == 0 || unit <= 0 || n.abs() <= unit {
            return;
        }
        // Round half away from zero, in integers.
        let m = n.signum() * ((2 * n.abs() + unit) / (2 * unit));
        let Some(base) = i32::try_from(m).ok().and_then(|m| x.scaled(m)) else {
            return;
        };
        let rest = g.minus(&base);
        if rest.is_empty() {
            return;
        }
        self.push(
            Rule::CentreMultiple,
            Kind::Sub,
            vec![g.clone()],
            vec![base.clone(), rest.neg()],
        );
        self.push(
            Rule::CentreMultiple,
            Kind::Add2,
            vec![g.clone()],
            vec![base, rest],
        );
    }

    /// Exact telescopes of `g` along every shift: `G = P - moved P` and
    /// `G = P + moved P`, even where the two copies overlap and cancel.
    fn telescopes(&mut self, g: &Goal) {
        for &s in self.shifts() {
            if let Some(p) = telescope(g, s.dr, s.dc, -1) {
                let n = p.neg();
                if let Some(q) = p.shifted(s) {
                    self.push(Rule::Telescope, Kind::Sub, vec![g.clone()], vec![p, q]);
                }
                // G = moved N - N with N = -P: one subx/sub2x reading N twice.
                self.push(
                    Rule::Telescope,
                    Kind::SubShift(s),
                    vec![g.clone()],
                    vec![n.clone(), n],
                );
            }
            if let Some(p) = telescope(g, s.dr, s.dc, 1) {
                if let Some(q) = p.shifted(s) {
                    self.push(Rule::Telescope, Kind::Add2, vec![g.clone()], vec![p, q]);
                }
            }
        }
    }

    /// `G` as a sum of new goals.
    fn splits(&mut self, g: &Goal) {
        for &s in self.shifts() {
            self.fold_sums(g, s);
            self.fold_differences(g, s);
            self.centre_folds(g, s);
        }
        // The greedy folds cannot see through copies that cancel.
        if self.ctx.structured {
            self.telescopes(g);
        }
        self.partitions(g);
    }

    /// `G = P + moved P (+ R)` along `s`, and its variants.
    fn fold_sums(&mut self, g: &Goal, s: Shift) {
        let (p, r) = fold(g, s.dr, s.dc, 1);
        if !p.is_empty() {
            if let Some(q) = p.shifted(s) {
                if r.is_empty() {
                    self.push(
                        Rule::FoldSum,
                        Kind::Add2,
                        vec![g.clone()],
                        vec![p.clone(), q.clone()],
                    );
                    // G = X + Y + moved (X + Y) with P = X + Y split again: the
                    // moved sum is one `addx`, saving the add that makes P.
                    let double = Kind::Add3.allowed(self.ctx.ops);
                    for &t in self.shifts().iter().filter(|_| double) {
                        let (x, rest) = fold(&p, t.dr, t.dc, 1);
                        if x.is_empty() || !rest.is_empty() {
                            continue;
                        }
                        if let Some(y) = x.shifted(t) {
                            self.push(
                                Rule::FoldSumSplit,
                                Kind::Add3,
                                vec![g.clone()],
                                vec![x, y, q.clone()],
                            );
                        }
                    }
                    let (pp, pn) = (p.positive_part(), p.negative_part());
                    if !pp.is_empty() && !pn.is_empty() {
                        self.push(
                            Rule::FoldSumSigns,
                            Kind::Add3,
                            vec![g.clone()],
                            vec![pp, pn, q.clone()],
                        );
                    }
                } else {
                    self.push(
                        Rule::FoldSumRest,
                        Kind::Add3,
                        vec![g.clone()],
                        vec![p.clone(), q.clone(), r.clone()],
                    );
                    self.push(
                        Rule::FoldSumRest,
                        Kind::Add2,
                        vec![g.clone()],
                        vec![p.plus(&r), q.clone()],
                    );
                    self.push(
                        Rule::FoldSumRest,
                        Kind::Add2,
                        vec![g.clone()],
                        vec![p.clone(), q.plus(&r)],
                    );
                }
            }
        }
    }

    /// `G = P - moved P (+ R)` along `s`.
    fn fold_differences(&mut self, g: &Goal, s: Shift) {
        let (p, r) = fold(g, s.dr, s.dc, -1);
        if !p.is_empty() {
            if let Some(q) = p.shifted(s) {
                if r.is_empty() {
                    self.push(
                        Rule::FoldDifference,
                        Kind::Sub,
                        vec![g.clone()],
                        vec![p.clone(), q],
                    );
                    // G = -(moved P - P): produce the difference and negate.
                    if let Some(x) = p.shifted(s).map(|x| x.minus(&p)) {
                        debug_assert_eq!(x.neg(), *g);
                        self.push(
                            Rule::FoldDifferenceNegated,
                            Kind::Neg,
                            vec![g.clone()],
                            vec![x],
                        );
                    }
                } else {
                    self.push(
                        Rule::FoldDifference,
                        Kind::Sub,
                        vec![g.clone()],
                        vec![p.plus(&r), q],
                    );
                }
            }
        }
    }

    /// `G = M + P moved by s + P moved by -s` (one of each pair of opposite shifts).
    fn centre_folds(&mut self, g: &Goal, s: Shift) {
        if s.dr > 0 || (s.dr == 0 && s.dc > 0) {
            let (p, m) = centre_fold(g, s.dr, s.dc);
            if !p.is_empty() {
                if let (Some(a), Some(b)) = (p.shifted(s), p.unshifted(s)) {
                    if m.is_empty() {
                        self.push(Rule::CentreFold, Kind::Add2, vec![g.clone()], vec![a, b]);
                    } else {
                        self.push(Rule::CentreFold, Kind::Add3, vec![g.clone()], vec![m, a, b]);
                    }
                }
            }
        }
    }

    /// `G` partitioned by the sign, parity or position of its atoms.
    fn partitions(&mut self, g: &Goal) {
        let (pos, negp) = (g.positive_part(), g.negative_part());
        if !pos.is_empty() && !negp.is_empty() {
            self.push(
                Rule::SignParts,
                Kind::Sub,
                vec![g.clone()],
                vec![pos.clone(), negp.neg()],
            );
            self.push(
                Rule::SignParts,
                Kind::Add2,
                vec![g.clone()],
                vec![pos, negp],
            );
        }
        // Odd atoms apart from the rest (whose counts are then all even).
        let odd = Goal(
            g.0.iter()
                .filter(|t| t.n % 2 != 0)
                .map(|t| Term {
                    n: t.n.signum(),
                    ..*t
                })
                .collect(),
        );
        let even = g.minus(&odd);
        if !odd.is_empty() && !even.is_empty() {
            self.push(Rule::OddEven, Kind::Add2, vec![g.clone()], vec![even, odd]);
        }
        // Cuts between channels: each channel's part made on its own, then added.
        let channels = g.channels();
        for cut in channels.iter().skip(1) {
            let (a, b): (Vec<Term>, Vec<Term>) = g.0.iter().partition(|t| t.z < *cut);
            self.push(
                Rule::Cut,
                Kind::Add2,
                vec![g.clone()],
                vec![Goal(a), Goal(b)],
            );
        }
        // Cuts between rows and between columns.
        for axis in 0..2 {
            let key = |t: &Term| if axis == 0 { t.r } else { t.c };
            let mut keys: Vec<i8> = g.0.iter().map(key).collect();
            keys.sort_unstable();
            keys.dedup();
            for cut in keys.iter().skip(1) {
                let (a, b): (Vec<Term>, Vec<Term>) = g.0.iter().partition(|t| key(t) < *cut);
                self.push(
                    Rule::Cut,
                    Kind::Add2,
                    vec![g.clone()],
                    vec![Goal::from_terms(a), Goal::from_terms(b)],
                );
            }
        }
        // Peel one offset off.
        if g.support() > 1 {
            let far = g.0.iter().map(extent).max().unwrap_or(0);
            for t in &g.0 {
                if g.support() <= 12 || extent(t) == far {
                    let one = Goal(vec![*t]);
                    self.push(
                        Rule::Peel,
                        Kind::Add2,
                        vec![g.clone()],
                        vec![g.minus(&one), one],
                    );
                }
            }
        } else if let Some(t) = g.0.first() {
            // A single offset: split its count into powers of two.
            let n = t.n.abs();
            if n.count_ones() > 1 {
                let hi = 1 << (31 - n.leading_zeros());
                let s = t.n.signum();
                self.push(
                    Rule::PowersOfTwo,
                    Kind::Add2,
                    vec![g.clone()],
                    vec![
                        Goal::single_on(t.z, t.r, t.c, s * hi),
                        Goal::single_on(t.z, t.r, t.c, s * (n - hi)),
                    ],
                );
            }
        }
    }
}

impl Gen<'_> {
    /// Steps that share work between two goals `g` and `h` of the bag.
    fn pair(&mut self, g: &Goal, h: &Goal) {
        // Butterfly: G = D + E and H = D - E with D = (G + H) / 2, E = (G - H) / 2.
        if let (Some(d), Some(e)) = (g.plus(h).halved(), g.minus(h).halved()) {
            if !d.is_empty() && !e.is_empty() {
                self.push(
                    Rule::Butterfly,
                    Kind::Add2,
                    vec![g.clone()],
                    vec![d.clone(), e.clone()],
                );
                self.push(Rule::Butterfly, Kind::Sub, vec![h.clone()], vec![d, e]);
            }
        }
        // A common part X of G and +-H: G = X + (G - X).
        for sign in [1, -1] {
            let x = common(g, h, sign);
            if x.support() >= 2 && x != *g {
                let r = g.minus(&x);
                self.push(Rule::CommonPart, Kind::Add2, vec![g.clone()], vec![x, r]);
            }
        }
    }
}

/// Per offset, the atoms `g` and `sign * h` have in common (same sign, least count).
fn common(g: &Goal, h: &Goal, sign: i32) -> Goal {
    Goal(
        g.0.iter()
            .filter_map(|t| {
                let o = sign * h.get_on(t.z, t.r, t.c);
                (o.signum() == t.n.signum()).then(|| Term {
                    n: t.n.signum() * t.n.abs().min(o.abs()),
                    ..*t
                })
            })
            .filter(|t| t.n != 0)
            .collect(),
    )
}

fn extent(t: &Term) -> i32 {
    i32::from(t.r).abs() + i32::from(t.c).abs()
}

/// Dense copy of a goal on its bounding box (one layer per channel between its lowest
/// and highest), with a margin. Moves never change a channel: the folds pair atoms of
/// one layer only.
struct Grid {
    z0: i32,
    r0: i32,
    c0: i32,
    d: i32,
    h: i32,
    w: i32,
    v: Vec<i32>,
}

impl Grid {
    fn new(g: &Goal, margin: i32) -> Grid {
        let span = |f: fn(&Term) -> i32| {
            let lo = g.0.iter().map(f).min().unwrap_or(0);
            let hi = g.0.iter().map(f).max().unwrap_or(0);
            (lo, hi)
        };
        let (zmin, zmax) = span(|t| i32::from(t.z));
        let (rmin, rmax) = span(|t| i32::from(t.r));
        let (cmin, cmax) = span(|t| i32::from(t.c));
        let (rmin, rmax, cmin, cmax) = (rmin - margin, rmax + margin, cmin - margin, cmax + margin);
        let (d, h, w) = (zmax - zmin + 1, rmax - rmin + 1, cmax - cmin + 1);
        let mut grid = Grid {
            z0: zmin,
            r0: rmin,
            c0: cmin,
            d,
            h,
            w,
            v: vec![0; (d * h * w) as usize],
        };
        for t in &g.0 {
            if let Some(i) = grid.idx(i32::from(t.z), i32::from(t.r), i32::from(t.c)) {
                grid.v[i] = t.n;
            }
        }
        grid
    }

    fn idx(&self, z: i32, r: i32, c: i32) -> Option<usize> {
        let (k, i, j) = (z - self.z0, r - self.r0, c - self.c0);
        (k >= 0 && i >= 0 && j >= 0 && k < self.d && i < self.h && j < self.w)
            .then(|| ((k * self.h + i) * self.w + j) as usize)
    }

    /// Positions `(z, r, c)` ordered by channel, then along `(dr, dc)`, so that o comes
    /// before o + (dr, dc).
    fn order(&self, dr: i32, dc: i32) -> Vec<(i32, i32, i32)> {
        let mut o: Vec<(i32, i32, i32)> = (0..self.d)
            .flat_map(|k| (0..self.h).flat_map(move |i| (0..self.w).map(move |j| (k, i, j))))
            .map(|(k, i, j)| (k + self.z0, i + self.r0, j + self.c0))
            .collect();
        o.sort_by_key(|&(z, r, c)| (z, r * dr + c * dc, r, c));
        o
    }

    fn to_goal(&self) -> Goal {
        let mut terms = Vec::new();
        for k in 0..self.d {
            for i in 0..self.h {
                for j in 0..self.w {
                    let n = self.v[((k * self.h + i) * self.w + j) as usize];
                    if n != 0 {
                        terms.push(Term {
                            z: (k + self.z0) as u8,
                            r: (i + self.r0) as i8,
                            c: (j + self.c0) as i8,
                            n,
                        });
                    }
                }
            }
        }
        Goal(terms)
    }
}

/// Greedy `G = P + sign * (P moved by (dr, dc)) + R`, taking as much into P as fits.
pub(crate) fn fold(g: &Goal, dr: i8, dc: i8, sign: i32) -> (Goal, Goal) {
    let (dr, dc) = (i32::from(dr), i32::from(dc));
    let mut rem = Grid::new(g, 0);
    let mut p = Grid::new(g, 0);
    p.v.iter_mut().for_each(|x| *x = 0);
    for (z, r, c) in rem.order(dr, dc) {
        let (Some(i), Some(j)) = (rem.idx(z, r, c), rem.idx(z, r + dr, c + dc)) else {
            continue;
        };
        let (a, b) = (rem.v[i], rem.v[j]);
        if a == 0 || b == 0 || (a.signum() * sign) != b.signum() {
            continue;
        }
        let m = a.signum() * a.abs().min(b.abs());
        p.v[i] += m;
        rem.v[i] -= m;
        rem.v[j] -= sign * m;
    }
    (p.to_goal(), rem.to_goal())
}

/// Exact `G = P + sign * (P moved by (dr, dc))` with P of finite support, if there is
/// one (it is unique): P is the running sum of G along the direction.
pub(crate) fn telescope(g: &Goal, dr: i8, dc: i8, sign: i32) -> Option<Goal> {
    let (dr, dc) = (i32::from(dr), i32::from(dc));
    let mut p = Grid::new(g, 0);
    for (z, r, c) in p.order(dr, dc) {
        let i = p.idx(z, r, c)?;
        if let Some(j) = p.idx(z, r - dr, c - dc) {
            p.v[i] = p.v[i].checked_sub(sign.checked_mul(p.v[j])?)?;
        }
        // Past the end of its line P must vanish, else it never would.
        if p.idx(z, r + dr, c + dc).is_none() && p.v[i] != 0 {
            return None;
        }
    }
    let p = p.to_goal();
    (!p.is_empty()).then_some(p)
}

/// Greedy `G = M + (P moved by s) + (P moved by -s)`.
pub(crate) fn centre_fold(g: &Goal, dr: i8, dc: i8) -> (Goal, Goal) {
    let (dr, dc) = (i32::from(dr), i32::from(dc));
    let mut rem = Grid::new(g, 0);
    let mut p = Grid::new(g, 0);
    p.v.iter_mut().for_each(|x| *x = 0);
    for (z, r, c) in rem.order(dr, dc) {
        let (Some(k), Some(i), Some(j)) = (
            p.idx(z, r, c),
            rem.idx(z, r - dr, c - dc),
            rem.idx(z, r + dr, c + dc),
        ) else {
            continue;
        };
        let (a, b) = (rem.v[i], rem.v[j]);
        if a == 0 || b == 0 || a.signum() != b.signum() {
            continue;
        }
        let m = a.signum() * a.abs().min(b.abs());
        p.v[k] += m;
        rem.v[i] -= m;
        rem.v[j] -= m;
    }
    (p.to_goal(), rem.to_goal())
}

/// Every child of `bag` the generator considers, in generation order (not yet ranked).
pub(crate) fn expand(bag: &Bag, ctx: &Ctx, out: &mut Vec<Cand>) {
    let mut gen = Gen {
        bag,
        ctx,
        sources: &[],
        out,
        seen: FpSet::default(),
    };
    for g in &bag.0 {
        if ctx.is_input(g) {
            continue;
        }
        if g.is_empty() {
            gen.push(Rule::Reset, Kind::Res, vec![g.clone()], vec![]);
            continue;
        }
        let avail = gen.avail(g);
        gen.direct(g, &avail);
    }
    for g in &bag.0 {
        if ctx.is_input(g) || g.is_empty() {
            continue;
        }
        let avail = gen.avail(g);
        gen.one_new(g, &avail);
        gen.splits(g);
    }
    if ctx.structured {
        for g in &bag.0 {
            for h in &bag.0 {
                if g != h && ![g, h].iter().any(|x| ctx.is_input(x) || x.is_empty()) {
                    gen.pair(g, h);
                }
            }
        }
    }
}

/// The children of `bag` on the way back to a known earlier bag `sources` (see
/// [`crate::cain::search::window`]): only goals not in it are produced (it holds the others
/// already), its goals are readable as if live, and with `last` only from live goals
/// (the step before must leave nothing new to make).
pub(crate) fn expand_toward(bag: &Bag, ctx: &Ctx, sources: &Bag, last: bool, out: &mut Vec<Cand>) {
    let mut gen = Gen {
        bag,
        ctx,
        sources: &sources.0,
        out,
        seen: FpSet::default(),
    };
    let made: Vec<&Goal> = bag
        .0
        .iter()
        .filter(|g| !ctx.is_input(g) && !sources.contains(g))
        .collect();
    for g in &made {
        if g.is_empty() {
            gen.push(Rule::Reset, Kind::Res, vec![Goal::empty()], vec![]);
            continue;
        }
        let avail = gen.avail(g);
        gen.direct(g, &avail);
    }
    if last {
        return;
    }
    for g in made.iter().filter(|g| !g.is_empty()) {
        let avail = gen.avail(g);
        gen.one_new(g, &avail);
        gen.splits(g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::fixtures::{grid, row};

    #[test]
    fn folds_find_binomial_structure() {
        let (p, r) = fold(&row(&[1, 2, 1]), 0, 1, 1);
        assert!(r.is_empty());
        assert_eq!(
            p,
            Goal::from_terms(vec![
                Term {
                    z: 0,
                    r: 0,
                    c: -1,
                    n: 1
                },
                Term {
                    z: 0,
                    r: 0,
                    c: 0,
                    n: 1
                },
            ])
        );
        let (p, m) = centre_fold(&row(&[1, 2, 1]), 0, 1);
        assert_eq!(p, Goal::single(0, 0, 1));
        assert_eq!(m, Goal::single(0, 0, 2));
        let (p, r) = fold(&row(&[1, 0, -1]), 0, 2, -1);
        assert!(r.is_empty());
        assert_eq!(p, Goal::single(0, -1, 1));
    }

    #[test]
    fn telescopes_see_through_cancellation() {
        // (Gx + Gy) / 2 of the Sobel pair is U moved south-east minus U, U a 2x2 box
        // whose two copies cancel at the centre: the greedy fold misses it.
        let d = grid(&[&[-1, -1, 0], &[-1, 0, 1], &[0, 1, 1]]);
        let p = telescope(&d, 1, 1, -1).expect("telescopes");
        let u = grid(&[&[1, 1, 0], &[1, 1, 0], &[0, 0, 0]]);
        assert_eq!(p, u.neg());
        assert_eq!(u.shifted(SHIFTS[10]).map(|x| x.minus(&u)), Some(d.clone()));
        let (f, _) = fold(&d, 1, 1, -1);
        assert!(f.is_empty() || f != u.neg());
        // No finite P when a line does not sum to zero.
        assert!(telescope(&grid(&[&[1, 2, 1]]), 0, 1, -1).is_none());
        assert_eq!(
            telescope(&grid(&[&[1, 2, 1]]), 0, 1, 1),
            Some(grid(&[&[1, 1, 0]]))
        );
    }

    #[test]
    fn structured_generation_shares_between_kernels() {
        let gx = grid(&[&[-1, 0, 1], &[-2, 0, 2], &[-1, 0, 1]]);
        let gy = grid(&[&[-1, -2, -1], &[0, 0, 0], &[1, 2, 1]]);
        let d = grid(&[&[-1, -1, 0], &[-1, 0, 1], &[0, 1, 1]]);
        let e = grid(&[&[0, 1, 1], &[-1, 0, 1], &[-1, -1, 0]]);
        let mut ctx = Ctx::for_tests(false);
        let bag = Bag::new(vec![gx.clone(), gy.clone()]);
        let butterfly = |out: &[Cand]| {
            out.iter()
                .any(|c| c.child == Bag::new(vec![d.clone(), e.clone(), gy.clone()]))
        };
        let mut out = Vec::new();
        expand(&bag, &ctx, &mut out);
        assert!(!butterfly(&out));
        ctx.structured = true;
        out.clear();
        expand(&bag, &ctx, &mut out);
        assert!(butterfly(&out));
        for c in &out {
            assert!(c.step.is_consistent(), "{:?}", c.step);
        }
    }

    #[test]
    fn children_are_consistent_and_fit() {
        let ctx = Ctx {
            init: Goal::single(0, 0, 16),
            others: Vec::new(),
            regs: 6,
            ops: Ops::All,
            depth: 4,
            max_atoms: 1000,
            structured: true,
        };
        let g = Goal::from_terms(
            [
                (-1, -1, 1),
                (-1, 0, 2),
                (-1, 1, 1),
                (0, -1, 2),
                (0, 0, 4),
                (0, 1, 2),
                (1, -1, 1),
                (1, 0, 2),
                (1, 1, 1),
            ]
            .iter()
            .map(|&(r, c, n)| Term { z: 0, r, c, n })
            .collect(),
        );
        let bag = Bag::new(vec![g]);
        let mut out = Vec::new();
        expand(&bag, &ctx, &mut out);
        assert!(out.len() > 10);
        for c in &out {
            assert!(c.step.is_consistent(), "{:?}", c.step);
            assert!(c.child.len() <= 6);
        }
    }
}
