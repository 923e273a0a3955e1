//! Register allocation for a plan: each value gets a register for its whole live
//! range, the input starts in its register, each output ends in its `out` register,
//! and the hardware rule on repeated registers in one bus instruction is respected.
//!
//! Straight-line code with few values: a depth-first assignment with backtracking is
//! exact and fast. Outputs are pinned to their registers first; if that fails (or two
//! kernels share a result, or a kernel is the input itself), the outputs are allocated
//! freely and moved into place at the end with `mov`s, which count as instructions.

use crate::cain::moves::goal::Goal;
use crate::cain::moves::step::{Kind, Step};
use crate::isa::Reg;

/// One instruction with registers: results then sources, in operand order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Instr {
    /// Which instruction.
    pub(crate) kind: Kind,
    /// Result registers (two for `div`: x/2, -x/2).
    pub(crate) dsts: Vec<Reg>,
    /// Source registers in operand order.
    pub(crate) srcs: Vec<Reg>,
}

/// What the allocator must respect.
#[derive(Clone, Debug)]
pub(crate) struct AllocProblem<'a> {
    /// Each input's goal and the register it starts in (one per input channel).
    pub(crate) inputs: &'a [(Goal, Reg)],
    /// Registers the program may use.
    pub(crate) registers: &'a [Reg],
    /// Each kernel's goal and the register that must hold it at the end.
    pub(crate) outputs: &'a [(Goal, Reg)],
}

const NEVER: usize = usize::MAX;

struct Values {
    /// Definition time of each value (0 = before the program: the inputs, which are
    /// the first values).
    def: Vec<usize>,
    /// Last time each value is read (NEVER if live at the end).
    last: Vec<usize>,
    /// For each step, the value index of each source.
    srcs: Vec<Vec<usize>>,
    /// For each step, the value index of each result.
    dsts: Vec<Vec<usize>>,
    /// Value holding each output at the end.
    finals: Vec<usize>,
}

fn values(steps: &[Step], p: &AllocProblem) -> Option<Values> {
    let mut goal_of: Vec<&Goal> = p.inputs.iter().map(|(g, _)| g).collect();
    let mut def = vec![0usize; goal_of.len()];
    let mut last = vec![0usize; goal_of.len()];
    let mut latest: std::collections::HashMap<&Goal, usize> = std::collections::HashMap::new();
    for (v, (g, _)) in p.inputs.iter().enumerate() {
        latest.insert(g, v);
    }
    let (mut srcs, mut dsts) = (Vec::new(), Vec::new());
    for (i, s) in steps.iter().enumerate() {
        let t = i + 1;
        let mut sv = Vec::with_capacity(s.ins.len());
        for g in &s.ins {
            let v = *latest.get(g)?;
            last[v] = last[v].max(t);
            sv.push(v);
        }
        let mut dv = Vec::with_capacity(s.outs.len());
        for g in &s.outs {
            let v = goal_of.len();
            goal_of.push(g);
            def.push(t);
            last.push(t);
            latest.insert(g, v);
            dv.push(v);
        }
        srcs.push(sv);
        dsts.push(dv);
    }
    let mut finals = Vec::with_capacity(p.outputs.len());
    for (g, _) in p.outputs {
        let v = *latest.get(g)?;
        last[v] = NEVER;
        finals.push(v);
    }
    Some(Values {
        def,
        last,
        srcs,
        dsts,
        finals,
    })
}

struct Dfs<'a> {
    steps: &'a [Step],
    vals: &'a Values,
    regs: &'a [Reg],
    /// Required register of a value, if pinned.
    pin: Vec<Option<Reg>>,
    /// Register of each value.
    reg_of: Vec<Option<Reg>>,
    budget: u32,
}

impl Dfs<'_> {
    fn live_at(&self, v: usize, t: usize) -> bool {
        // Value v still needed by an instruction after time t (or at the end).
        self.vals.last[v] == NEVER || self.vals.last[v] > t
    }

    /// Register candidates for result `k` of step `i` (time t = i + 1).
    fn candidates(&self, i: usize, k: usize, taken: &[Reg]) -> Vec<Reg> {
        let t = i + 1;
        let step = &self.steps[i];
        let v = self.vals.dsts[i][k];
        let srcs = &self.vals.srcs[i];
        let mut out = Vec::new();
        for &r in self.regs {
            if taken.contains(&r) {
                continue;
            }
            if let Some(p) = self.pin[v] {
                if p != r {
                    continue;
                }
            }
            // The value in r still needed at time t or later, if any (at most one, by
            // construction of the assignment).
            let holder = (0..self.reg_of.len()).find(|&u| {
                self.reg_of[u] == Some(r) && self.vals.def[u] < t && self.vals.last[u] >= t
            });
            if let Some(u) = holder {
                if self.live_at(u, t) {
                    continue;
                }
                // u dies here: allowed only if it is a source this result may overwrite
                // (the table says which: never `div`'s halved register, which it keeps).
                let ok = srcs
                    .iter()
                    .enumerate()
                    .filter(|(_, &s)| s == u)
                    .all(|(j, _)| step.kind.may_overwrite(k, j));
                if !ok {
                    continue;
                }
            }
            // A register reserved for a later pinned value must be free by then.
            let reserved = (0..self.pin.len()).any(|u| {
                self.pin[u] == Some(r)
                    && u != v
                    && self.vals.def[u] > t
                    && self.vals.last[v] > self.vals.def[u]
            });
            if reserved {
                continue;
            }
            out.push(r);
        }
        // Prefer registers no output is pinned to, then the listed order.
        out.sort_by_key(|r| self.pin.contains(&Some(*r)));
        out
    }

    fn step(&mut self, i: usize) -> bool {
        if i == self.steps.len() {
            return true;
        }
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        self.assign(i, 0, &mut Vec::new())
    }

    fn assign(&mut self, i: usize, k: usize, taken: &mut Vec<Reg>) -> bool {
        if k == self.vals.dsts[i].len() {
            return self.step(i + 1);
        }
        let v = self.vals.dsts[i][k];
        for r in self.candidates(i, k, taken) {
            self.reg_of[v] = Some(r);
            taken.push(r);
            if self.assign(i, k + 1, taken) {
                return true;
            }
            taken.pop();
            self.reg_of[v] = None;
            if self.budget == 0 {
                return false;
            }
        }
        false
    }
}

/// Allocates registers; `None` if the plan does not fit even with moves at the end.
pub(crate) fn allocate(steps: &[Step], p: &AllocProblem) -> Option<Vec<Instr>> {
    let vals = values(steps, p)?;
    for pinned in [true, false] {
        let n = vals.def.len();
        let mut pin = vec![None; n];
        for (v, (_, r)) in p.inputs.iter().enumerate() {
            pin[v] = Some(*r);
        }
        if pinned {
            for (k, &v) in vals.finals.iter().enumerate() {
                if pin[v].is_none() {
                    pin[v] = Some(p.outputs[k].1);
                }
            }
        }
        let mut dfs = Dfs {
            steps,
            vals: &vals,
            regs: p.registers,
            pin,
            reg_of: vec![None; n],
            budget: 20_000,
        };
        for (v, (_, r)) in p.inputs.iter().enumerate() {
            dfs.reg_of[v] = Some(*r);
        }
        if !dfs.step(0) {
            continue;
        }
        let first = p.inputs.first().map(|(_, r)| *r)?;
        let reg_of: Vec<Reg> = dfs.reg_of.iter().map(|r| r.unwrap_or(first)).collect();
        let mut out: Vec<Instr> = steps
            .iter()
            .enumerate()
            .map(|(i, s)| Instr {
                kind: s.kind,
                dsts: vals.dsts[i].iter().map(|&v| reg_of[v]).collect(),
                srcs: vals.srcs[i].iter().map(|&v| reg_of[v]).collect(),
            })
            .collect();
        let moves: Vec<(Reg, Reg)> = vals
            .finals
            .iter()
            .zip(p.outputs)
            .map(|(&v, (_, want))| (*want, reg_of[v]))
            .collect();
        if let Some(fix) = parallel_moves(&moves, p.registers) {
            out.extend(fix);
            return Some(out);
        }
    }
    None
}

/// Sequential `mov`s realising the parallel copy `dst := src` for every pair, breaking
/// cycles through a destination already holding a copy, else a register outside all
/// pairs.
pub(crate) fn parallel_moves(moves: &[(Reg, Reg)], regs: &[Reg]) -> Option<Vec<Instr>> {
    let mut pending: Vec<(Reg, Reg)> = moves.iter().copied().filter(|(d, s)| d != s).collect();
    pending.sort();
    pending.dedup();
    let mut out = Vec::new();
    // Moves made: their destinations keep the value (each is written once) and their
    // sources are unchanged while still pending somewhere.
    let mut done: Vec<(Reg, Reg)> = Vec::new();
    let mov = |d: Reg, s: Reg| Instr {
        kind: Kind::Mov,
        dsts: vec![d],
        srcs: vec![s],
    };
    while !pending.is_empty() {
        if let Some(i) =
            (0..pending.len()).find(|&i| !pending.iter().any(|(_, s)| *s == pending[i].0))
        {
            let (d, s) = pending.remove(i);
            out.push(mov(d, s));
            done.push((d, s));
            continue;
        }
        // Only cycles left. A source already copied to a finished destination is read
        // from there (the input wanted both in its own register and, changed, in
        // another: `B := A, A := f(A)` with three registers); else park it in a free
        // register.
        let pick = pending
            .iter()
            .find_map(|(_, s)| done.iter().find(|(_, ds)| ds == s).map(|(d, _)| (*s, *d)));
        let (s, tmp) = match pick {
            Some(p) => p,
            None => {
                let used: Vec<Reg> = moves.iter().flat_map(|(d, s)| [*d, *s]).collect();
                let tmp = regs.iter().copied().find(|r| !used.contains(r))?;
                let s = pending[0].1;
                out.push(mov(tmp, s));
                (s, tmp)
            }
        };
        for m in pending.iter_mut() {
            if m.1 == s {
                m.1 = tmp;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_chain_respects_distinct_registers() {
        let a = Goal::single(0, 0, 4);
        let b = Goal::single(0, 0, 2);
        let c = Goal::single(0, 0, 1);
        let steps = vec![
            Step {
                kind: Kind::Divq,
                outs: vec![b.clone()],
                ins: vec![a.clone()],
            },
            Step {
                kind: Kind::Divq,
                outs: vec![c.clone()],
                ins: vec![b.clone()],
            },
        ];
        let regs = [Reg::A, Reg::B];
        let outputs = [(c.clone(), Reg::A)];
        let p = AllocProblem {
            inputs: &[(a.clone(), Reg::A)],
            registers: &regs,
            outputs: &outputs,
        };
        let got = allocate(&steps, &p).unwrap();
        assert_eq!(got[0].dsts, vec![Reg::B]);
        assert_eq!(got[1].dsts, vec![Reg::A]);
        assert_eq!(got.len(), 2);
        // With the result wanted where nothing can put it directly, a move is added.
        let outputs = [(a.clone(), Reg::B)];
        let p = AllocProblem {
            inputs: &[(a.clone(), Reg::A)],
            registers: &regs,
            outputs: &outputs,
        };
        let got = allocate(&[], &p).unwrap();
        assert_eq!(
            got,
            vec![Instr {
                kind: Kind::Mov,
                dsts: vec![Reg::B],
                srcs: vec![Reg::A]
            }]
        );
    }
}
