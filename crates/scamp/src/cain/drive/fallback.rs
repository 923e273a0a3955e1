//! A constructive program for any kernels, computed before the search so that every
//! spec gets an answer; the search then only has to beat its length.
//!
//! Each kernel is built in one accumulator that walks the kernel once per pass (snake
//! order, returning to where it started) and, at each cell, adds or subtracts the units
//! of the bits set in that cell's count (an add rides on the move that follows it,
//! `addx`, and a subtraction on the move before it, `subx`, where the instruction set
//! has them): with the input worth 2^D atoms, bit b of a
//! count is the input times 2^(b - D), made first by halving (or doubling) copies of
//! the input. A pass takes as many bits as there are registers for their units (all of
//! them, usually, so one walk does the kernel). The input is never scaled up and the
//! accumulator only ever holds part of each offset's weight, with its sign, so no value
//! exceeds the larger of the input and the exact output: the program is range-safe by
//! construction (see `kernel`). Live values are the input, the units, the
//! accumulator and finished outputs, plus one scratch register for instructions that
//! cannot write in place. Registers are chosen here; the table decides which
//! instructions may write over a source.

use crate::cain::assemble::alloc::{parallel_moves, Instr};
use crate::cain::moves::goal::{Goal, Shift, SHIFTS};
use crate::cain::moves::step::{Kind, Step};
use crate::cain::spec::Ops;
use crate::isa::Reg;

/// One cell of a walk: its offset, and the units added there (register, negative).
type Cell = ((i32, i32), Vec<(Reg, bool)>);

/// How one walk between two cells moves: the shifts allowed, a unit to add before
/// leaving and one to subtract on arrival, and whether `addx`/`subx` may carry them.
#[derive(Clone, Copy)]
struct Moves<'a> {
    shifts: &'a [Shift],
    add: Option<Reg>,
    sub: Option<Reg>,
    fuse: bool,
}

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
    /// (a move by `s` takes `cur` to `cur - s`), adding `add` before it leaves and
    /// subtracting `sub` once it is there. Where the instruction set allows, the add
    /// rides on the first step (`addx`: the sum, moved) and the subtraction on the
    /// last (`subx`: moved, then less the unit): every value either way is one the
    /// separate instructions would hold too, so the range stays the same.
    fn walk(
        &mut self,
        mut r: Reg,
        cur: &mut (i32, i32),
        to: (i32, i32),
        moves: Moves<'_>,
    ) -> Option<Reg> {
        let mut steps = Vec::new();
        let mut at = *cur;
        while at != to {
            let (need_r, need_c) = (at.0 - to.0, at.1 - to.1);
            // The shift leaving the least Chebyshev-then-Manhattan distance.
            let s = moves.shifts.iter().copied().min_by_key(|s| {
                let (rr, rc) = (need_r - i32::from(s.dr), need_c - i32::from(s.dc));
                (rr.abs().max(rc.abs()), rr.abs() + rc.abs())
            })?;
            steps.push(s);
            at.0 -= i32::from(s.dr);
            at.1 -= i32::from(s.dc);
        }
        let (mut add, mut sub) = (moves.add, moves.sub);
        let last = steps.len().checked_sub(1);
        for (i, &s) in steps.iter().enumerate() {
            r = match (add.take(), sub) {
                (Some(u), _) if i == 0 && moves.fuse => {
                    self.op(Kind::AddShift(s), &[r, u], &[true, false])?
                }
                (Some(u), _) => {
                    let a = self.op(Kind::Add2, &[r, u], &[true, false])?;
                    self.op(Kind::Shift(s), &[a], &[true])?
                }
                (None, Some(u)) if Some(i) == last && moves.fuse => {
                    sub = None;
                    self.op(Kind::SubShift(s), &[r, u], &[true, false])?
                }
                (None, _) => self.op(Kind::Shift(s), &[r], &[true])?,
            };
        }
        if let Some(u) = add {
            r = self.op(Kind::Add2, &[r, u], &[true, false])?;
        }
        if let Some(u) = sub {
            r = self.op(Kind::Sub, &[r, u], &[true, false])?;
        }
        *cur = to;
        Some(r)
    }

    /// Adds, at every cell of `cells`, its units with their signs moved there into
    /// `acc` (a new accumulator when `acc` is `None`); the walk ends where it started.
    /// The outer `None` means the registers ran out, the inner one that nothing was
    /// added.
    fn add_cells(
        &mut self,
        acc: Option<Reg>,
        cells: &[Cell],
        shifts: &[Shift],
        ops: Ops,
    ) -> Option<Option<Reg>> {
        let fuse = [Kind::AddShift(SHIFTS[0]), Kind::SubShift(SHIFTS[0])]
            .iter()
            .all(|k| k.allowed(ops));
        let moves = |add, sub| Moves {
            shifts,
            add,
            sub,
            fuse,
        };
        let mut cur = (0, 0);
        let mut acc = acc;
        // A unit to add where the accumulator is, held back to ride on the next move.
        let mut pending: Option<Reg> = None;
        for (at, taken) in cells {
            for &(unit, negative) in taken {
                acc = Some(match acc {
                    // An empty accumulator starts at the first cell: nothing to move yet.
                    None => {
                        cur = *at;
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
                        let sub = negative.then_some(unit);
                        let a = self.walk(a, &mut cur, *at, moves(pending.take(), sub))?;
                        if !negative {
                            pending = Some(unit);
                        }
                        a
                    }
                });
            }
        }
        match acc {
            Some(a) => self
                .walk(a, &mut cur, (0, 0), moves(pending.take(), None))
                .map(Some),
            None => Some(None),
        }
    }

    /// Marks `r` free.
    fn free(&mut self, r: Reg) -> Option<()> {
        let i = self.slot(r)?;
        self.held[i] = None;
        Some(())
    }
}

/// The units one pass adds: for each bit of `bits` (highest first), the input times
/// 2^(bit - `depth`). Bits above `depth` double copies of the input; bits up to it
/// halve on from `chain`, the lowest unit still held (the input at first), which is
/// dropped unless the pass uses it (the input only when `spend_input`: no later kernel
/// needs it). Copies between two bits of the pass are dropped as the chain goes on.
fn units(
    b: &mut Builder,
    input: Reg,
    depth: u32,
    bits: &[u32],
    chain: (u32, Reg),
    spend_input: bool,
) -> Option<Vec<(u32, Reg)>> {
    let mut out = Vec::with_capacity(bits.len());
    let top = bits.iter().copied().max().unwrap_or(depth);
    let mut u = input;
    for bit in depth + 1..=top {
        // The input's register is the input here: doublings come first (passes run from
        // the highest bit down), before any halving spends it.
        let dies = bit - 1 != depth && !bits.contains(&(bit - 1));
        let neg = b.op(Kind::Neg, &[u], &[false])?;
        u = b.op(Kind::Sub, &[u, neg], &[dies, true])?;
        if bits.contains(&bit) {
            out.push((bit, u));
        }
    }
    let (mut at, mut u) = chain;
    if bits.contains(&at) {
        out.push((at, u));
    }
    let low = bits.iter().copied().min().unwrap_or(at);
    while at > low {
        let dies = !bits.contains(&at) && (at != depth || spend_input);
        u = b.op(Kind::Divq, &[u], &[dies])?;
        at -= 1;
        if bits.contains(&at) {
            out.push((at, u));
        }
    }
    Some(out)
}

/// The bits set in the counts of `g`, highest first.
fn bits_of(g: &Goal) -> Vec<u32> {
    let all = g.0.iter().fold(0u32, |m, t| m | t.n.unsigned_abs());
    (0..32).rev().filter(|b| (all >> b) & 1 == 1).collect()
}

/// The bits of `bits` split into passes of at most `cap` units each (the unit of bit
/// `depth` is the input itself and costs no register).
fn passes(bits: &[u32], depth: u32, cap: usize) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut cur: Vec<u32> = Vec::new();
    let mut used = 0;
    for &bit in bits {
        let cost = usize::from(bit != depth);
        if used + cost > cap {
            out.push(std::mem::take(&mut cur));
            used = 0;
        }
        cur.push(bit);
        used += cost;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The cells of `g` with any of `bits` set, in snake order (rows north to south,
/// columns alternating direction), each with the units it takes and their signs.
fn cells(g: &Goal, units: &[(u32, Reg)]) -> Vec<Cell> {
    let mut cells: Vec<Cell> =
        g.0.iter()
            .filter_map(|t| {
                let taken: Vec<(Reg, bool)> = units
                    .iter()
                    .filter(|(bit, _)| (t.n.unsigned_abs() >> bit) & 1 == 1)
                    .map(|&(_, r)| (r, t.n < 0))
                    .collect();
                (!taken.is_empty()).then_some(((i32::from(t.r), i32::from(t.c)), taken))
            })
            .collect();
    cells.sort_by_key(|&((r, c), _)| (r, if r.rem_euclid(2) == 0 { c } else { -c }));
    cells
}

/// What every kernel of one fallback program shares (for the input channel being
/// built).
#[derive(Clone, Copy)]
struct Shared<'a> {
    /// The input's register.
    input: Reg,
    /// The input's goal: 2^depth atoms at the centre of its channel.
    init: &'a Goal,
    /// The approximation depth: the input is worth 2^depth atoms.
    depth: u32,
    /// Units live at once besides the input.
    cap: usize,
    /// The shifts `ops` allows.
    shifts: &'a [Shift],
    /// The instruction set.
    ops: Ops,
}

/// Builds `g` (the input worth 2^`depth` atoms, held in `input`) into a register and
/// returns it, with at most `shared.cap` units live at once besides the input.
///
/// Range: every unit is the input times 2^(bit - depth) for a bit some count has, so it
/// is no larger than the input or the output's largest term; and the accumulator only
/// ever holds, per offset, some of the bits of that offset's count with its sign, so its
/// sum of |coefficients| never exceeds the output's own. No value exceeds the larger of
/// the input and the exact output.
fn kernel(b: &mut Builder, shared: &Shared, g: &Goal, spend_input: bool) -> Option<Reg> {
    match part(b, shared, g, spend_input, None)? {
        Some(a) => Some(a),
        None => b.op(Kind::Res, &[], &[]),
    }
}

/// Adds `g`, on the channel of `shared.input` alone, into `acc` (a new accumulator when
/// `None`) as [`kernel`] describes; the inner `None` means nothing was added.
fn part(
    b: &mut Builder,
    shared: &Shared,
    g: &Goal,
    spend_input: bool,
    acc: Option<Reg>,
) -> Option<Option<Reg>> {
    let Shared {
        input,
        init,
        depth,
        cap,
        shifts,
        ops,
    } = *shared;
    let mut acc = acc;
    let mut chain = (depth, input);
    for pass in passes(&bits_of(g), depth, cap) {
        let units = units(b, input, depth, &pass, chain, spend_input)?;
        acc = b.add_cells(acc, &cells(g, &units), shifts, ops)?;
        // The lowest unit (up to the input) goes on to the next pass's halvings.
        if let Some(&(bit, r)) = units.iter().rfind(|(bit, _)| *bit <= depth) {
            chain = (bit, r);
        }
        // Once the halvings have left it, the last kernel no longer needs the input.
        if spend_input && chain.0 < depth && b.goal(input) == Some(init) {
            b.free(input)?;
        }
        // The input's register may hold a unit once the input is spent: units are
        // told apart by their bit.
        for &(bit, u) in &units {
            if bit != depth && (bit, u) != chain {
                b.free(u)?;
            }
        }
    }
    if chain.0 != depth {
        b.free(chain.1)?;
    }
    Some(acc)
}

/// Builds `g`, whose atoms may lie on several input channels, into one accumulator:
/// each channel's part from its own input in turn (`inputs[z]` holds channel z), so
/// the accumulator holds partial sums of the output only and stays within its range.
fn channels_kernel(
    b: &mut Builder,
    shared: &Shared,
    inputs: &[(Goal, Reg)],
    g: &Goal,
    spend_input: bool,
) -> Option<Reg> {
    let mut acc = None;
    for z in g.channels() {
        let (init, input) = inputs.get(usize::from(z))?;
        let one = Shared {
            input: *input,
            init,
            ..*shared
        };
        acc = part(b, &one, &g.channel(z), spend_input, acc)?;
    }
    match acc {
        Some(a) => Some(a),
        None => b.op(Kind::Res, &[], &[]),
    }
}

/// Frees the register of every input that no kernel of `rest` reads and that still
/// holds its input (one already spent or overwritten is left alone).
fn free_spent_inputs(b: &mut Builder, inputs: &[(Goal, Reg)], rest: &[(Goal, Reg)]) {
    for (z, (g, r)) in inputs.iter().enumerate() {
        let read = rest.iter().any(|(k, _)| k.channels().contains(&(z as u8)));
        if !read && b.goal(*r) == Some(g) {
            b.free(*r);
        }
    }
}

/// A program computing every `(goal, out)` of `finals` from the inputs, input channel
/// z in `inputs[z]` (2^`depth` atoms at the centre of channel z), within `registers`,
/// kernels built one after another; `None` when the registers do not suffice for this
/// construction. The more units a pass may hold, the fewer walks over the kernel: the
/// largest number that fits is taken.
pub(crate) fn program(
    finals: &[(Goal, Reg)],
    inputs: &[Reg],
    registers: &[Reg],
    depth: u32,
    ops: Ops,
) -> Option<Vec<Instr>> {
    (1..=registers.len())
        .rev()
        .find_map(|cap| program_with(finals, inputs, registers, depth, ops, cap))
}

/// [`program`] with at most `cap` units live at once.
fn program_with(
    finals: &[(Goal, Reg)],
    inputs: &[Reg],
    registers: &[Reg],
    depth: u32,
    ops: Ops,
    cap: usize,
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
    let inputs: Vec<(Goal, Reg)> = inputs
        .iter()
        .enumerate()
        .map(|(z, &r)| Some((Goal::input(u8::try_from(z).ok()?, depth), r)))
        .collect::<Option<_>>()?;
    for (g, r) in &inputs {
        let at = b.slot(*r)?;
        b.held[at] = Some(g.clone());
    }
    let (init, input) = inputs.first()?.clone();
    let shared = Shared {
        input,
        init: &init,
        depth,
        cap,
        shifts: &shifts,
        ops,
    };
    let mut placed: Vec<(Reg, Reg)> = Vec::with_capacity(finals.len());
    for (k, (g, out)) in finals.iter().enumerate() {
        let last = k + 1 == finals.len();
        // An input itself needs no instruction when nothing after it changes the input.
        let held = inputs.iter().find(|(x, _)| x == g).map(|(_, r)| *r);
        let r = match held {
            Some(r) if last => r,
            _ if inputs.len() == 1 => kernel(&mut b, &shared, g, last)?,
            _ => channels_kernel(&mut b, &shared, &inputs, g, last)?,
        };
        if inputs.len() > 1 {
            free_spent_inputs(&mut b, &inputs, &finals[k + 1..]);
        }
        placed.push((*out, r));
    }
    b.out.extend(parallel_moves(&placed, registers)?);
    Some(b.out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::fixtures::grid;
    use crate::isa::{Device, Wiring};
    use crate::verify::proof::{prove, Target};

    /// Emits and proves the fallback for one kernel given as a grid at `depth`.
    fn proves(rows: &[&[i32]], depth: u32, regs: &[Reg], ops: Ops) -> usize {
        let g = grid(rows);
        let instrs = program(&[(g, Reg::A)], &[Reg::A], regs, depth, ops).expect("a program");
        let p =
            crate::cain::assemble::emit::program(&instrs, Device { general: 6 }).expect("emits");
        let weights = rows
            .iter()
            .map(|r| r.iter().map(|&n| i64::from(n)).collect())
            .collect();
        let t = Target {
            out: Reg::A,
            depth,
            weights,
        };
        prove(&p, Wiring::new(Reg::A, 6), &[t], Some(regs)).expect("proven");
        p.instructions()
    }

    #[test]
    fn several_inputs_prove_on_every_plane() {
        use crate::cain::moves::goal::Term;
        use crate::verify::planes::{prove_planes, PlanesTarget};
        let on = |g: Goal, z: u8| Goal(g.0.into_iter().map(|t| Term { z, ..t }).collect());
        let planes: [&[i32]; 3] = [&[1, 2, 1], &[0, -3, 0], &[2, 0, 1]];
        let g = (0..3).fold(Goal::empty(), |acc, z| {
            acc.plus(&on(grid(&[planes[z]]), z as u8))
        });
        let inputs = [Reg::A, Reg::B, Reg::C];
        let regs = [Reg::A, Reg::B, Reg::C, Reg::D, Reg::E];
        let instrs = program(&[(g, Reg::D)], &inputs, &regs, 2, Ops::All).expect("a program");
        let p =
            crate::cain::assemble::emit::program(&instrs, Device { general: 6 }).expect("emits");
        let t = |w: &[i32]| Target {
            out: Reg::D,
            depth: 2,
            weights: vec![w.iter().map(|&n| i64::from(n)).collect()],
        };
        let target = PlanesTarget {
            out: Reg::D,
            planes: planes.iter().map(|w| t(w)).collect(),
        };
        prove_planes(&p, &inputs, 6, &[target]).expect("proven on every plane");
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
        // The last kernel spends the input on its halvings: two registers do for a
        // sum of halves, one cannot hold a unit and an accumulator.
        proves(&[&[1, 1]], 1, &[Reg::A, Reg::B], Ops::All);
        let g = grid(&[&[1, 1]]);
        assert!(program(&[(g, Reg::A)], &[Reg::A], &[Reg::A], 1, Ops::All).is_none());
    }

    #[test]
    fn no_value_exceeds_the_input_or_the_exact_output() {
        use crate::verify::range::{peak, InputRange};
        let mut x = 7u64;
        for n in [1usize, 3, 5] {
            for depth in 0..5u32 {
                let rows: Vec<Vec<i32>> = (0..n)
                    .map(|_| {
                        (0..n)
                            .map(|_| {
                                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                                ((x >> 33) % 41) as i32 - 20
                            })
                            .collect()
                    })
                    .collect();
                let refs: Vec<&[i32]> = rows.iter().map(Vec::as_slice).collect();
                let g = grid(&refs);
                let regs = [Reg::A, Reg::B, Reg::C, Reg::D];
                let instrs =
                    program(&[(g, Reg::A)], &[Reg::A], &regs, depth, Ops::All).expect("a program");
                let p = crate::cain::assemble::emit::program(&instrs, Device { general: 6 })
                    .expect("emits");
                let range = InputRange::default();
                let output: f64 = rows
                    .iter()
                    .flatten()
                    .map(|w| f64::from(w.abs()))
                    .sum::<f64>()
                    / f64::from(1u32 << depth)
                    * range.bound();
                let got = peak(&p, Wiring::new(Reg::A, 6), range)
                    .expect("runs")
                    .magnitude;
                assert!(
                    got <= output.max(range.bound()) + 1e-9,
                    "{rows:?} at depth {depth}: peak {got}, output {output}"
                );
            }
        }
    }
}
