//! Instructions at the level of goals: what each produces from what. Everything else about
//! an instruction (how it is written, its cycles, whether `ops: basic` has it, which
//! sources its result may overwrite) is read from its entry in the instruction table.

use crate::cain::moves::goal::{Goal, Shift};
use crate::cain::spec::Ops;
use crate::isa::table::{self, Def, Id};

/// An instruction with its operands left abstract (registers come later). Each kind is
/// one table entry ([`Kind::id`]); the shift picks the one- or two-step form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// `res(y)`: y := 0.
    Res,
    /// `mov(y, x)`: y := x (only for register fix-ups).
    Mov,
    /// `movx` / `mov2x`: y := x moved by the shift.
    Shift(Shift),
    /// `add(y, a, b)`.
    Add2,
    /// `add(y, a, b, c)`.
    Add3,
    /// `addx` / `add2x`: y := (a + b) moved by the shift.
    AddShift(Shift),
    /// `sub(y, a, b)`: y := a - b.
    Sub,
    /// `subx` / `sub2x`: y := a moved by the shift, minus b.
    SubShift(Shift),
    /// `neg(y, x)`.
    Neg,
    /// `divq(y, x)`: y := x / 2.
    Divq,
    /// `div(y0, y1, x)`: y0 := x / 2, y1 := -x / 2, x kept in place.
    Div,
}

impl Kind {
    /// Every kind, the moving ones with each shift of `SHIFTS` (the instruction table's
    /// tests go through them all).
    #[cfg(test)]
    pub(crate) fn all() -> Vec<Kind> {
        let mut v = vec![Kind::Res, Kind::Mov, Kind::Add2, Kind::Add3, Kind::Sub];
        v.extend([Kind::Neg, Kind::Divq, Kind::Div]);
        for s in crate::cain::moves::goal::SHIFTS {
            v.extend([Kind::Shift(s), Kind::AddShift(s), Kind::SubShift(s)]);
        }
        v
    }

    /// The most sources one instruction of `ops` reads: three (`add(y, a, b, c)`) where
    /// the set has it, else two.
    pub(crate) fn most_sources(ops: Ops) -> usize {
        if Kind::Add3.allowed(ops) {
            3
        } else {
            2
        }
    }

    /// The table entry the instruction is written as.
    pub(crate) fn id(self) -> Id {
        let by_steps = |s: Shift, one: Id, two: Id| if s.is_single() { one } else { two };
        match self {
            Kind::Res => Id::Res,
            Kind::Mov => Id::Mov,
            Kind::Shift(s) => by_steps(s, Id::Movx, Id::Mov2x),
            Kind::Add2 => Id::Add2,
            Kind::Add3 => Id::Add3,
            Kind::AddShift(s) => by_steps(s, Id::Addx, Id::Add2x),
            Kind::Sub => Id::Sub,
            Kind::SubShift(s) => by_steps(s, Id::Subx, Id::Sub2x),
            Kind::Neg => Id::Neg,
            Kind::Divq => Id::Divq,
            Kind::Div => Id::Div,
        }
    }

    /// The table entry itself.
    pub(crate) fn def(self) -> &'static Def {
        table::entry(self.id())
    }

    /// The neighbour move, for the kinds that make one.
    pub(crate) fn shift(self) -> Option<Shift> {
        match self {
            Kind::Shift(s) | Kind::AddShift(s) | Kind::SubShift(s) => Some(s),
            _ => None,
        }
    }

    /// Cycles of the entry's expansion.
    pub(crate) fn cycles(self) -> u64 {
        self.def().cycles()
    }

    /// Whether the instruction set `ops` contains this instruction (the entry says
    /// whether it is basic).
    pub(crate) fn allowed(self, ops: Ops) -> bool {
        let codegen = self.def().codegen;
        match ops {
            Ops::All => codegen.is_some(),
            Ops::Basic => codegen.is_some_and(|c| c.basic),
        }
    }

    /// Whether result `k` may be written into the register of source `i`: the entry's
    /// expansion never names the two in one bus instruction (the hardware forbids a
    /// register twice in one, which rules out `divq(C, C)`, `neg(B, B)`, `sub(B, A, B)`).
    pub(crate) fn may_overwrite(self, k: usize, i: usize) -> bool {
        self.def().may_overwrite(k, i)
    }

    /// Whether sources `i` and `j` may be one register (`sub(y, A, A)` may, as its
    /// sources are read by different bus instructions; `add(y, A, A)` may not).
    pub(crate) fn may_repeat(self, i: usize, j: usize) -> bool {
        self.def().may_repeat(i, j)
    }
}

/// One instruction on goals: `outs` computed from `ins` (in operand order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Step {
    /// Which instruction.
    pub(crate) kind: Kind,
    /// Results: one goal, or two for `div` (x/2 then -x/2).
    pub(crate) outs: Vec<Goal>,
    /// Sources in operand order.
    pub(crate) ins: Vec<Goal>,
}

impl Step {
    /// What the instruction computes from `ins`; `None` if the operands do not fit it.
    pub(crate) fn eval(kind: Kind, ins: &[Goal]) -> Option<Vec<Goal>> {
        let one = |g: Option<Goal>| g.map(|g| vec![g]);
        match (kind, ins) {
            (Kind::Res, []) => Some(vec![Goal::empty()]),
            (Kind::Mov, [a]) => Some(vec![a.clone()]),
            (Kind::Shift(s), [a]) => one(a.shifted(s)),
            (Kind::Add2, [a, b]) => Some(vec![a.plus(b)]),
            (Kind::Add3, [a, b, c]) => Some(vec![a.plus(b).plus(c)]),
            (Kind::AddShift(s), [a, b]) => one(a.plus(b).shifted(s)),
            (Kind::Sub, [a, b]) => Some(vec![a.minus(b)]),
            (Kind::SubShift(s), [a, b]) => one(a.shifted(s).map(|x| x.minus(b))),
            (Kind::Neg, [a]) => Some(vec![a.neg()]),
            (Kind::Divq, [a]) => one(a.halved()),
            (Kind::Div, [a]) => a.halved().map(|h| vec![h.clone(), h.neg()]),
            _ => None,
        }
    }

    /// Whether `outs` is exactly what `kind` computes from `ins`.
    pub(crate) fn is_consistent(&self) -> bool {
        Step::eval(self.kind, &self.ins).as_deref() == Some(&self.outs[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::SHIFTS;

    #[test]
    fn eval_matches_macro_meaning() {
        let x = Goal::single(0, 0, 4);
        let e = Step::eval(Kind::SubShift(SHIFTS[1]), &[x.clone(), x.clone()]).unwrap();
        assert_eq!(e[0].get(0, 1), 4);
        assert_eq!(e[0].get(0, 0), -4);
        let d = Step::eval(Kind::Div, std::slice::from_ref(&x)).unwrap();
        assert_eq!(d, vec![Goal::single(0, 0, 2), Goal::single(0, 0, -2)]);
        assert!(Step::eval(Kind::Divq, &[Goal::single(0, 0, 3)]).is_none());
        assert!(!Kind::Divq.allowed(Ops::Basic) || Kind::Divq.allowed(Ops::All));
        assert!(!Kind::Add3.allowed(Ops::Basic));
    }
}
