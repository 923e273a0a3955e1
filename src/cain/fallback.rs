//! A constructive program for any kernels, computed before the search so that every
//! spec gets an answer; the search then only has to beat its length.
//!
//! Each kernel is built in one accumulator, bit plane by bit plane of its atom counts
//! (with the input worth 2^D atoms, a count n at an offset contributes n / 2^D copies
//! of the input moved there). The planes below 2^D are folded in from the lowest up,
//! halving after each (`acc := (acc + plane) / 2`), which keeps the values small; the
//! planes from 2^D up are added with a doubled copy of the input. A plane is added by a
//! closed walk of the accumulator: it moves cell by cell (snake order) and picks up
//! +-unit at each cell of the plane, then returns, so what it held before ends where it
//! was. Live values are the input (or its doubled copy), the accumulator and finished
//! outputs, plus one scratch register for instructions that cannot write in place, so
//! one kernel fits in three registers. Registers are chosen here; the table decides
//! which instructions may write over a source.

use super::alloc::{parallel_moves, Instr};
use super::goal::{Goal, Shift, SHIFTS};
use super::spec::Ops;
use super::step::{Kind, Step};
use crate::isa::Reg;

/// Registers and the goals they hold while the program is built.
struct Builder<'a> {
    regs: &'a [Reg],
    /// Goal held by each register of `regs` while it is live.
    held: Vec<Option<Goal>>,
    out: Vec<Instr>,
}

impl Builder<'_> {
    fn slot(&self, r: Reg) -> Option<usize> {
        self.regs.iter().position(|&x| x == r)
    }

    fn goal(&self, r: Reg) -> Option<&Goal> {
        self.slot(r).and_then(|i| self.held[i].as_ref())
    }

    /// Appends `kind` on sources `srcs`; sources flagged in `dies` are free afterwards.
    /// The result goes over a dying source where the table allows it, else into a free
    /// register. `None` when no register is left.
    fn op(&mut self, kind: Kind, srcs: &[Reg], dies: &[bool]) -> Option<Reg> {
        let ins: Vec<Goal> = srcs
            .iter()
            .map(|&r| self.goal(r).cloned())
            .collect::<Option<_>>()?;
        let result = Step::eval(kind, &ins)?.into_iter().next()?;
        let over = srcs.iter().enumerate().find_map(|(i, &r)| {
            let all_dying = srcs
                .iter()
                .zip(dies)
                .filter(|(&s, _)| s == r)
                .all(|(_, &d)| d);
            let allowed = srcs
                .iter()
                .enumerate()
                .filter(|(_, &s)| s == r)
                .all(|(j, _)| kind.may_overwrite(0, j));
            (dies[i] && all_dying && allowed).then_some(r)
        });
        let dst = match over {
            Some(r) => r,
            None => {
                let i = self.held.iter().position(Option::is_none)?;
                self.regs[i]
            }
        };
        for (&r, &d) in srcs.iter().zip(dies) {
            if d {
                let i = self.slot(r)?;
                self.held[i] = None;
            }
        }
        let i = self.slot(dst)?;
        self.held[i] = Some(result);
        self.out.push(Instr {
            kind,
            dsts: vec![dst],
            srcs: srcs.to_vec(),
        });
        Some(dst)
    }

    /// Moves the value in `r` by steps of the allowed shifts until `cur` reaches `to`
    /// (a move by `s` takes `cur` to `cur - s`).
    fn walk(
        &mut self,
        mut r: Reg,
        cur: &mut (i32, i32),
        to: (i32, i32),
        shifts: &[Shift],
    ) -> Option<Reg> {
        while *cur != to {
            let (need_r, need_c) = (cur.0 - to.0, cur.1 - to.1);
            // The shift leaving the least Chebyshev-then-Manhattan distance.
            let s = shifts.iter().copied().min_by_key(|s| {
                let (rr, rc) = (need_r - i32::from(s.dr), need_c - i32::from(s.dc));
                (rr.abs().max(rc.abs()), rr.abs() + rc.abs())
            })?;
            r = self.op(Kind::Shift(s), &[r], &[true])?;
            cur.0 -= i32::from(s.dr);
            cur.1 -= i32::from(s.dc);
        }
        Some(r)
    }

    /// Adds `sign * unit` moved to every offset of `cells` into `acc` (a new
    /// accumulator when `acc` is `None`); the walk ends where it started. The outer
    /// `None` means the registers ran out, the inner one that nothing was added.
    fn add_plane(
        &mut self,
        acc: Option<Reg>,
        unit: Reg,
        cells: &[(i32, i32, bool)],
        shifts: &[Shift],
        ops: Ops,
    ) -> Option<Option<Reg>> {
        let mut cur = (0, 0);
        let mut acc = acc;
        for &(r, c, negative) in cells {
            acc = Some(match acc {
                // An empty accumulator starts at the first cell: nothing to move yet.
                None => {
                    cur = (r, c);
                    if negative {
                        self.op(Kind::Neg, &[unit], &[false])?
                    } else if Kind::Mov.allowed(ops) {
                        self.op(Kind::Mov, &[unit], &[false])?
                    } else {
                        let z = self.op(Kind::Res, &[], &[])?;
                        self.op(Kind::Add2, &[z, unit], &[true, false])?
                    }
                }
                Some(a) => {
                    let a = self.walk(a, &mut cur, (r, c), shifts)?;
                    let kind = if negative { Kind::Sub } else { Kind::Add2 };
                    self.op(kind, &[a, unit], &[true, false])?
                }
            });
        }
        match acc {
            Some(a) => self.walk(a, &mut cur, (0, 0), shifts).map(Some),
            None => Some(None),
        }
    }
}

/// The cells of bit `b` of the counts of `g`, in snake order (rows north to south,
/// columns alternating direction), with their signs.
fn plane(g: &Goal, b: u32) -> Vec<(i32, i32, bool)> {
    let mut cells: Vec<(i32, i32, bool)> =
        g.0.iter()
            .filter(|t| (t.n.unsigned_abs() >> b) & 1 == 1)
            .map(|t| (i32::from(t.r), i32::from(t.c), t.n < 0))
            .collect();
    cells.sort_by_key(|&(r, c, _)| (r, if r.rem_euclid(2) == 0 { c } else { -c }));
    cells
}

/// Builds `g` (the input worth 2^`depth` atoms, held in `input`) into a register and
/// returns it; `keep_input` leaves the input live for later kernels.
fn kernel(
    b: &mut Builder,
    g: &Goal,
    input: Reg,
    depth: u32,
    keep_input: bool,
    shifts: &[Shift],
    ops: Ops,
) -> Option<Reg> {
    let top =
        g.0.iter()
            .map(|t| 32 - t.n.unsigned_abs().leading_zeros())
            .max()
            .unwrap_or(0);
    let mut acc: Option<Reg> = None;
    for bit in 0..depth {
        acc = b.add_plane(acc, input, &plane(g, bit), shifts, ops)?;
        if let Some(a) = acc {
            acc = Some(b.op(Kind::Divq, &[a], &[true])?);
        }
    }
    // Bits from 2^depth up: the unit doubles before each plane after the first.
    let mut unit = input;
    for bit in depth..top {
        if bit > depth {
            let unit_dies = unit != input || !keep_input;
            let neg = b.op(Kind::Neg, &[unit], &[false])?;
            unit = b.op(Kind::Sub, &[unit, neg], &[unit_dies, true])?;
        }
        acc = b.add_plane(acc, unit, &plane(g, bit), shifts, ops)?;
    }
    if unit != input {
        let i = b.slot(unit)?;
        b.held[i] = None;
    }
    match acc {
        Some(a) => Some(a),
        None => b.op(Kind::Res, &[], &[]),
    }
}

/// A program computing every `(goal, out)` of `finals` from `init` in `input` (2^`depth`
/// atoms at the centre) within `registers`, kernels built one after another; `None`
/// when the registers do not suffice for this construction.
pub fn program(
    finals: &[(Goal, Reg)],
    input: Reg,
    registers: &[Reg],
    depth: u32,
    ops: Ops,
) -> Option<Vec<Instr>> {
    let shifts: Vec<Shift> = SHIFTS
        .iter()
        .copied()
        .filter(|s| Kind::Shift(*s).allowed(ops))
        .collect();
    let mut b = Builder {
        regs: registers,
        held: vec![None; registers.len()],
        out: Vec::new(),
    };
    let init = Goal::single(0, 0, 1 << depth);
    let at = b.slot(input)?;
    b.held[at] = Some(init.clone());
    let mut placed: Vec<(Reg, Reg)> = Vec::with_capacity(finals.len());
    for (k, (g, out)) in finals.iter().enumerate() {
        let last = k + 1 == finals.len();
        // The input itself needs no instruction when nothing after it changes the input.
        let r = if *g == init && last {
            input
        } else {
            kernel(&mut b, g, input, depth, !last, &shifts, ops)?
        };
        placed.push((*out, r));
    }
    b.out.extend(parallel_moves(&placed, registers)?);
    Some(b.out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::goal::fixtures::grid;
    use crate::isa::Device;
    use crate::verify::proof::{prove, Target};

    /// Emits and proves the fallback for one kernel given as a grid at `depth`.
    fn proves(rows: &[&[i32]], depth: u32, regs: &[Reg], ops: Ops) -> usize {
        let g = grid(rows);
        let instrs = program(&[(g, Reg::A)], Reg::A, regs, depth, ops).expect("a program");
        let p = crate::cain::emit::program(&instrs, Device { general: 6 }).expect("emits");
        let weights = rows
            .iter()
            .map(|r| r.iter().map(|&n| i64::from(n)).collect())
            .collect();
        let t = Target {
            out: Reg::A,
            depth,
            weights,
        };
        prove(&p, Reg::A, 6, &[t], Some(regs)).expect("proven");
        p.instructions()
    }

    #[test]
    fn fractional_integer_and_negative_weights_prove_in_three_registers() {
        let three = [Reg::A, Reg::B, Reg::C];
        proves(&[&[1, 2, 1], &[2, 4, 2], &[1, 2, 1]], 4, &three, Ops::All);
        proves(
            &[&[-1, 0, 1], &[-2, 0, 2], &[-1, 0, 1]],
            0,
            &three,
            Ops::Basic,
        );
        proves(&[&[0, -3, 0], &[5, 7, -6], &[0, 1, 0]], 2, &three, Ops::All);
        // Two registers cannot hold the input, an accumulator and a halving.
        let g = grid(&[&[1, 1]]);
        assert!(program(&[(g, Reg::A)], Reg::A, &[Reg::A, Reg::B], 1, Ops::All).is_none());
    }
}
