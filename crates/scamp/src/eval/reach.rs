//! How far apart tiles must be: the largest displacement between a PE and any input
//! PE its outputs depend on. [`crate::isa::Program::edge_reach`] counts neighbour
//! steps; a value moved north and then south travels two steps but depends only on its
//! own PE. Nonlinear steps (saturation, noise) act PE by PE, so a result depends only
//! on inputs at the summed displacement of each data path: this tracks the set of those
//! displacements per register, exactly, and, while FLAG may be partial, keeps the old
//! value's set and adds FLAG's (what the `where` that set it read).
//!
//! The same walk over a whole frame program follows the digital registers too, so that
//! the gap a network's tiles need is that of the paths its binary maps depend on: stages
//! side by side (the depthwise parts of a layer, each reading its own map) add their
//! reaches only along the paths that stack them, not all together.

use crate::isa::{BusOp, DReg, DigitalOp, Dir, Program, Reg};
use std::collections::BTreeSet;

type Offsets = BTreeSet<(i32, i32)>;

fn shifted(set: &Offsets, (dr, dc): (i32, i32)) -> Offsets {
    set.iter().map(|&(r, c)| (r + dr, c + dc)).collect()
}

/// The largest displacement (rows or columns) in `set` (0 when empty).
fn farthest(set: &Offsets) -> usize {
    set.iter()
        .map(|&(r, c)| r.unsigned_abs().max(c.unsigned_abs()) as usize)
        .max()
        .unwrap_or(0)
}

/// The largest displacement (rows or columns) between a PE and the input PEs that
/// `outputs` depend on at the end of `program`, with `general` general registers; never
/// more than the program's step count ([`Program::edge_reach`]).
pub(crate) fn reach(program: &Program, general: usize, outputs: &[Reg]) -> usize {
    let sets = offsets(program, general);
    let steps = program.edge_reach(general);
    outputs
        .iter()
        .filter_map(|r| {
            let i = match r {
                Reg::Gen(i) => usize::from(*i),
                _ => return None,
            };
            let far = farthest(sets.get(i)?);
            Some(far.min(steps.get(i).copied().unwrap_or(far)))
        })
        .max()
        .unwrap_or(0)
}

/// How far the digital registers `maps` read at the end of `program` (a whole frame:
/// capture, stages and the decisions into `maps`), with `general` general registers:
/// the largest displacement (rows or columns) between a PE and the input PEs they
/// depend on (the gap between tiles), and the largest between a PE and any PE a value
/// on their paths passed through (the margin to the array's edge, where a value moved
/// out is lost: moved there and back, it does not come back).
pub(crate) fn maps_reach(program: &Program, general: usize, maps: &[DReg]) -> (usize, usize) {
    let far = |visited| {
        let mut walk = Walk::new(general, visited);
        walk.program(program);
        maps.iter()
            .map(|m| farthest(&walk.bits[m.index()]))
            .max()
            .unwrap_or(0)
    };
    (far(false), far(true))
}

/// Per general register (and NEWS last), the displacements of the input PEs its value
/// at the end of `program` depends on (row, column; north and west negative).
pub(crate) fn offsets(program: &Program, general: usize) -> Vec<BTreeSet<(i32, i32)>> {
    let mut walk = Walk::new(general, false);
    walk.program(program);
    walk.sets
}

/// The displacement sets along a program: every analogue register (NEWS last), FLAG
/// and the other digital registers (by [`DReg::index`]; FLAG's entry is unused). With
/// `visited`, a set also holds every PE the value passed through on its way.
struct Walk {
    visited: bool,
    sets: Vec<Offsets>,
    bits: Vec<Offsets>,
    /// What FLAG was computed from, and whether it may be partial.
    flag: Offsets,
    flag_partial: bool,
}

impl Walk {
    /// Every analogue register depends on itself; every digital one on nothing yet.
    fn new(general: usize, visited: bool) -> Walk {
        let origin: Offsets = [(0, 0)].into_iter().collect();
        Walk {
            visited,
            sets: vec![origin; general + 1],
            bits: vec![Offsets::new(); DReg::COUNT + 1],
            flag: Offsets::new(),
            flag_partial: false,
        }
    }

    fn program(&mut self, program: &Program) {
        for op in program.stmts.iter().flat_map(|s| &s.ops) {
            match op {
                BusOp::Where(srcs) => {
                    self.flag = self.sources(srcs);
                    self.flag_partial = true;
                }
                BusOp::All => {
                    self.flag.clear();
                    self.flag_partial = false;
                }
                BusOp::Transfer { dsts, srcs } => self.transfer(dsts, srcs),
                BusOp::Digital(d) => self.digital(d),
                _ => {}
            }
        }
    }

    /// The slot of an analogue register (general registers, then NEWS).
    fn index(&self, r: &Reg) -> Option<usize> {
        match r {
            Reg::Gen(i) => Some(usize::from(*i)),
            Reg::News => Some(self.sets.len() - 1),
            _ => None,
        }
    }

    /// The union of what the sources of a sum depend on.
    fn sources(&self, srcs: &[Reg]) -> Offsets {
        let news = self.sets.len() - 1;
        let mut from = Offsets::new();
        for r in srcs {
            match r {
                Reg::X(d) => from.extend(shifted(&self.sets[news], d.step())),
                other => match self.index(other) {
                    Some(i) => from.extend(self.sets[i].iter().copied()),
                    None => {
                        from.insert((0, 0));
                    }
                },
            }
        }
        if self.visited {
            // The PE summing the sources.
            from.insert((0, 0));
        }
        from
    }

    fn transfer(&mut self, dsts: &[Reg], srcs: &[Reg]) {
        let from = self.sources(srcs);
        let news = self.sets.len() - 1;
        for d in dsts {
            let (slot, step) = match d {
                // Writing the neighbour's NEWS: NEWS(q) = value(q - step).
                Reg::X(dir) => {
                    let (r, c) = dir.step();
                    (news, (-r, -c))
                }
                other => match self.index(other) {
                    Some(i) => (i, (0, 0)),
                    None => continue,
                },
            };
            let mut new = shifted(&from, step);
            if self.visited {
                new.insert((0, 0));
            }
            if self.flag_partial {
                // The cell keeps its value or takes the new one, as the writing PE's
                // FLAG says.
                self.sets[slot].extend(new);
                self.sets[slot].extend(shifted(&self.flag, step));
            } else {
                self.sets[slot] = new;
            }
        }
    }

    fn digital(&mut self, op: &DigitalOp) {
        let bit = |w: &Walk, r: &DReg| match r {
            DReg::Flag => w.flag.clone(),
            r => w.bits[r.index()].clone(),
        };
        let mut from = Offsets::new();
        for r in op.reads() {
            from.extend(bit(self, &r));
        }
        if let DigitalOp::DNews { src, .. } = op {
            // Neighbour reads: the source seen one step away in every direction.
            let seen = bit(self, src);
            for d in Dir::ALL {
                from.extend(shifted(&seen, d.step()));
            }
            if self.visited {
                from.insert((0, 0));
            }
        }
        for w in op.writes() {
            match w {
                DReg::Flag => {
                    self.flag = from.clone();
                    self.flag_partial = true;
                }
                r => self.bits[r.index()] = from.clone(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device, Wiring};

    #[test]
    fn moves_that_cancel_do_not_count() {
        let d = Device { general: 6 };
        let there_and_back = parse_program("movx(B, A, north);\nmovx(C, B, south);\n", d).unwrap();
        assert_eq!(reach(&there_and_back, 6, &[Reg::Gen(2)]), 0);
        assert_eq!(there_and_back.edge_reach(6)[2], 2);
        let two = parse_program("movx(B, A, north);\nmovx(C, B, north);\n", d).unwrap();
        assert_eq!(reach(&two, 6, &[Reg::Gen(2)]), 2);
        let diagonal = parse_program("mov2x(B, A, north, east);\n", d).unwrap();
        assert_eq!(reach(&diagonal, 6, &[Reg::Gen(1)]), 1);
    }

    #[test]
    fn maps_depend_on_their_own_paths_and_on_flag() {
        let d = Device { general: 6 };
        // B is A one step north; C two steps north and D one step east of B: side by
        // side, the maps need the farther path (2), not the two added (3).
        let side_by_side = "movx(B, A, north);\nmovx(C, B, north);\nmovx(D, B, east);\n\
                            where(C);\nMOV(R1, FLAG);\nall();\nwhere(D);\nMOV(R2, FLAG);\nall();\n";
        let p = parse_program(side_by_side, d).unwrap();
        assert_eq!(maps_reach(&p, 6, &[DReg::R(1), DReg::R(2)]), (2, 2));
        assert_eq!(maps_reach(&p, 6, &[DReg::R(2)]), (1, 1));
        // A write under a partial FLAG depends on what the `where` read (B, one step
        // away), even though the value written (A) does not.
        let masked = "movx(B, A, north);\nwhere(B);\nmov(C, A);\nall();\n\
                      where(C);\nMOV(R1, FLAG);\nall();\n";
        let p = parse_program(masked, d).unwrap();
        assert_eq!(maps_reach(&p, 6, &[DReg::R(1)]), (1, 1));
        assert_eq!(offsets(&p, 6)[2].len(), 2);
        // Moved two steps out and back: it depends on its own PE only, but passed two
        // PEs away (at the array's edge it would be lost there).
        let out_and_back = "movx(B, A, north);\nmovx(C, B, north);\nmovx(D, C, south);\n\
                            movx(E, D, south);\nwhere(E);\nMOV(R1, FLAG);\nall();\n";
        let p = parse_program(out_and_back, d).unwrap();
        assert_eq!(maps_reach(&p, 6, &[DReg::R(1)]), (0, 2));
        // A map copied from another keeps its reach; a cleared one has none.
        let copied = format!("{side_by_side}MOV(R3, R1);\nCLR(R4);\n");
        let p = parse_program(&copied, d).unwrap();
        assert_eq!(maps_reach(&p, 6, &[DReg::R(3)]), (2, 2));
        assert_eq!(maps_reach(&p, 6, &[DReg::R(4)]), (0, 0));
    }

    #[test]
    fn displacements_agree_with_the_symbolic_execution() {
        let d = Device { general: 6 };
        for text in [
            "movx(B, A, east);\n",
            "mov2x(B, A, north, east);\nmovx(C, B, south);\n",
            "div(C, D, A);\nadd2x(B, C, D, west, north);\n",
            "div(D, E, A);\nadd2x(F, E, A, north, west);\n",
        ] {
            let p = parse_program(text, d).unwrap();
            let sets = offsets(&p, 6);
            let pe = crate::verify::symbolic::execute(&p, Wiring::new(Reg::A, 6)).unwrap();
            for r in p.written_registers() {
                if let Reg::Gen(i) = r {
                    let got: Offsets = pe.value(r).terms.keys().copied().collect();
                    assert!(
                        got.is_subset(&sets[usize::from(i)]),
                        "{text}: {r}: {got:?} not in {:?}",
                        sets[usize::from(i)]
                    );
                }
            }
        }
    }
}
