//! What a step of the playground shows about its macro: the registers its bus
//! instructions read and write, and the neighbour transfers among them.

use super::api::{Arrow, Step};
use crate::report::trace::written;
use scamp::{isa::BusOp, isa::DigitalOp, isa::Reg, isa::Stmt};

/// The name of the plane a register is shown in: a neighbour view is that neighbour's
/// `NEWS`.
fn plane_name(r: Reg) -> String {
    match r {
        Reg::X(_) => "NEWS".to_string(),
        r => r.to_string(),
    }
}

fn push_unique<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// Registers read by one bus instruction (before plane naming).
fn reads(op: &BusOp) -> Vec<String> {
    match op {
        BusOp::Transfer { srcs, .. } | BusOp::Where(srcs) => {
            srcs.iter().map(|&r| plane_name(r)).collect()
        }
        BusOp::Digital(d) => d.reads().iter().map(ToString::to_string).collect(),
        _ => Vec::new(),
    }
}

/// Registers written by one bus instruction: the step-through page's list, and the
/// digital receivers.
fn writes(op: &BusOp) -> Vec<String> {
    let mut w = written(op);
    if let BusOp::Digital(d) = op {
        w.extend(DigitalOp::writes(d).iter().map(ToString::to_string));
    }
    if matches!(op, BusOp::Rpix { .. }) {
        w.push("PIX".into());
    }
    w
}

/// Neighbour transfers of one bus instruction: a view read brings a value in from that
/// neighbour, a view written sends one out to it.
fn arrows(op: &BusOp) -> Vec<Arrow> {
    let mut out = Vec::new();
    if let BusOp::Transfer { dsts, srcs } = op {
        for (regs, inward) in [(srcs, true), (dsts, false)] {
            for r in regs {
                if let Reg::X(d) = r {
                    out.push(Arrow {
                        dir: d.name(),
                        inward,
                    });
                }
            }
        }
    }
    out
}

/// One step per macro of `stmts`, with the bus instructions done after each.
pub fn steps(stmts: &[Stmt]) -> Vec<Step> {
    let mut cycles = 0;
    stmts
        .iter()
        .map(|s| {
            cycles += s.cycles();
            let mut step = Step {
                line: s.pos.line,
                col: s.pos.col,
                text: s.to_string(),
                ops: s.ops.iter().map(ToString::to_string).collect(),
                reads: Vec::new(),
                writes: Vec::new(),
                arrows: Vec::new(),
                cycles,
            };
            for op in &s.ops {
                reads(op)
                    .into_iter()
                    .for_each(|r| push_unique(&mut step.reads, r));
                writes(op)
                    .into_iter()
                    .for_each(|w| push_unique(&mut step.writes, w));
                arrows(op)
                    .into_iter()
                    .for_each(|a| push_unique(&mut step.arrows, a));
            }
            step
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use scamp::{isa::parse_program, isa::Device};

    #[test]
    fn a_neighbour_move_reads_writes_and_points_east() {
        let p = parse_program("movx(B, A, east);\nwhere(B);", Device::default()).unwrap();
        let s = steps(&p.stmts);
        assert_eq!(s.len(), 2);
        // bus(XW, A); bus(B, NEWS): pushes A west, so B receives from the east.
        assert_eq!(s[0].reads, vec!["A", "NEWS"]);
        assert_eq!(s[0].writes, vec!["NEWS", "B"]);
        assert_eq!(
            s[0].arrows,
            vec![Arrow {
                dir: "west",
                inward: false
            }]
        );
        assert_eq!((s[0].line, s[0].cycles), (1, 2));
        assert_eq!(s[1].reads, vec!["B"]);
        assert_eq!(s[1].writes, vec!["FLAG"]);
        assert_eq!(s[1].cycles, s[0].cycles + p.stmts[1].cycles());
    }
}
