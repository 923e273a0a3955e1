//! How far apart tiles must be: the largest displacement between a PE and any input
//! PE its outputs depend on. [`crate::isa::Program::edge_reach`] counts neighbour
//! steps; a value moved north and then south travels two steps but depends only on its
//! own PE. Nonlinear steps (saturation, noise) act PE by PE, so a result depends only
//! on inputs at the summed displacement of each data path: this tracks the set of those
//! displacements per register, exactly, and, while FLAG may be partial, keeps the old value's set.

use crate::isa::{BusOp, Program, Reg};
use std::collections::BTreeSet;

type Offsets = BTreeSet<(i32, i32)>;

fn shifted(set: &Offsets, (dr, dc): (i32, i32)) -> Offsets {
    set.iter().map(|&(r, c)| (r + dr, c + dc)).collect()
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
            let far = sets
                .get(i)?
                .iter()
                .map(|&(r, c)| r.unsigned_abs().max(c.unsigned_abs()) as usize)
                .max()?;
            Some(far.min(steps.get(i).copied().unwrap_or(far)))
        })
        .max()
        .unwrap_or(0)
}

/// Per general register (and NEWS last), the displacements of the input PEs its value
/// at the end of `program` depends on (row, column; north and west negative).
pub(crate) fn offsets(program: &Program, general: usize) -> Vec<BTreeSet<(i32, i32)>> {
    let origin: Offsets = [(0, 0)].into_iter().collect();
    let news = general;
    let mut sets = vec![origin.clone(); general + 1];
    let index = |r: &Reg| match r {
        Reg::Gen(i) => Some(usize::from(*i)),
        Reg::News => Some(news),
        _ => None,
    };
    let mut flag_partial = false;
    for op in program.stmts.iter().flat_map(|s| &s.ops) {
        match op {
            BusOp::Where(_) => flag_partial = true,
            BusOp::All => flag_partial = false,
            BusOp::Transfer { dsts, srcs } => {
                let mut from = Offsets::new();
                for r in srcs {
                    match r {
                        Reg::X(d) => from.extend(shifted(&sets[news], d.step())),
                        other => from.extend(
                            index(other).map_or_else(|| origin.clone(), |i| sets[i].clone()),
                        ),
                    }
                }
                for d in dsts {
                    let (slot, new) = match d {
                        // Writing the neighbour's NEWS: NEWS(q) = value(q - step).
                        Reg::X(dir) => {
                            let (r, c) = dir.step();
                            (news, shifted(&from, (-r, -c)))
                        }
                        other => match index(other) {
                            Some(i) => (i, from.clone()),
                            None => continue,
                        },
                    };
                    if flag_partial {
                        sets[slot].extend(new);
                    } else {
                        sets[slot] = new;
                    }
                }
            }
            _ => {}
        }
    }
    sets
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
