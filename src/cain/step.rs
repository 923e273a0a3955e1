//! Instructions at the level of goals: what each produces from what, its cost, and the
//! register rules it brings (which sources its result may overwrite).

use super::goal::{Goal, Shift};
use super::spec::Ops;

/// An instruction with its operands left abstract (registers come later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
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
    /// Cycles of the macro's expansion (isa.md).
    pub fn cycles(self) -> u64 {
        match self {
            Kind::Div => 5,
            _ => 2,
        }
    }

    /// Whether the instruction set `ops` contains this instruction.
    pub fn allowed(self, ops: Ops) -> bool {
        match ops {
            Ops::All => true,
            Ops::Basic => match self {
                Kind::Res | Kind::Mov | Kind::Add2 | Kind::Sub | Kind::Neg | Kind::Divq => true,
                Kind::Shift(s) => s.is_single(),
                _ => false,
            },
        }
    }

    /// Whether the (first) result may be written into the register of source `i`:
    /// the hardware forbids a register twice in one bus instruction, which rules out
    /// `divq(C, C)`, `neg(B, B)` and `sub(B, A, B)`.
    pub fn may_overwrite(self, i: usize) -> bool {
        match self {
            Kind::Mov | Kind::Shift(_) | Kind::Add2 | Kind::Add3 | Kind::AddShift(_) => true,
            Kind::Sub | Kind::SubShift(_) => i == 0,
            Kind::Res | Kind::Neg | Kind::Divq | Kind::Div => false,
        }
    }
}

/// One instruction on goals: `outs` computed from `ins` (in operand order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// Which instruction.
    pub kind: Kind,
    /// Results: one goal, or two for `div` (x/2 then -x/2).
    pub outs: Vec<Goal>,
    /// Sources in operand order.
    pub ins: Vec<Goal>,
}

impl Step {
    /// What the instruction computes from `ins`; `None` if the operands do not fit it.
    pub fn eval(kind: Kind, ins: &[Goal]) -> Option<Vec<Goal>> {
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
    pub fn is_consistent(&self) -> bool {
        Step::eval(self.kind, &self.ins).as_deref() == Some(&self.outs[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::goal::SHIFTS;

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
