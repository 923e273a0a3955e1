//! Registers a program reads before anything wrote them. On the chip such a register
//! holds whatever an earlier program left there; the simulator starts it at 0, so a
//! program that depends on it works in simulation and not on the device.

use super::op::BusOp;
use super::program::{Pos, Program};
use super::reg::{DReg, Reg};
use std::fmt;

/// An analogue or a digital register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AnyReg {
    /// A general register or `NEWS` (a neighbour view `XE`.. reads a neighbour's `NEWS`).
    Analogue(Reg),
    /// `R0`..`R12` (`FLAG` starts set, as after `all()`).
    Digital(DReg),
}

impl fmt::Display for AnyReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyReg::Analogue(r) => r.fmt(f),
            AnyReg::Digital(d) => d.fmt(f),
        }
    }
}

/// The first read of a register nothing had written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnwrittenRead {
    /// The register.
    pub(crate) reg: AnyReg,
    /// The statement that reads it first.
    pub(crate) pos: Pos,
}

impl fmt::Display for UnwrittenRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} is read before anything writes it (on the chip it holds whatever was \
             there before)",
            self.pos, self.reg
        )
    }
}

/// The register a read or write of `r` touches: a neighbour view is the neighbours'
/// `NEWS`; `PIX` and `IN` need no write.
fn storage(r: Reg) -> Option<Reg> {
    match r {
        Reg::Gen(_) | Reg::News => Some(r),
        Reg::X(_) => Some(Reg::News),
        Reg::Pix | Reg::In => None,
    }
}

/// What one machine instruction reads and writes, in registers that need a write.
fn reads_writes(op: &BusOp) -> (Vec<AnyReg>, Vec<AnyReg>) {
    let analogue = |rs: &[Reg]| -> Vec<AnyReg> {
        rs.iter()
            .filter_map(|r| storage(*r))
            .map(AnyReg::Analogue)
            .collect()
    };
    match op {
        BusOp::Transfer { dsts, srcs } => (analogue(srcs), analogue(dsts)),
        BusOp::Where(srcs) => (analogue(srcs), vec![AnyReg::Digital(DReg::Flag)]),
        BusOp::All => (Vec::new(), vec![AnyReg::Digital(DReg::Flag)]),
        BusOp::Digital(d) => (
            d.reads().into_iter().map(AnyReg::Digital).collect(),
            d.writes().into_iter().map(AnyReg::Digital).collect(),
        ),
        BusOp::Rpix { .. } | BusOp::Nop | BusOp::Dac(_) | BusOp::DacUncorrected(_) => {
            (Vec::new(), Vec::new())
        }
    }
}

/// Every register `program` reads before it (or `preset`, registers loaded before the
/// program runs: its input, `--set`) wrote it, once each, at its first such read, in
/// program order. `FLAG` starts set and counts as written.
pub fn unwritten_reads(program: &Program, preset: &[AnyReg]) -> Vec<UnwrittenRead> {
    let mut written: Vec<AnyReg> = preset.to_vec();
    written.push(AnyReg::Digital(DReg::Flag));
    let mut out: Vec<UnwrittenRead> = Vec::new();
    for s in &program.stmts {
        for op in &s.ops {
            let (reads, writes) = reads_writes(op);
            for r in reads {
                if !written.contains(&r) && !out.iter().any(|u| u.reg == r) {
                    out.push(UnwrittenRead { reg: r, pos: s.pos });
                }
            }
            for w in writes {
                if !written.contains(&w) {
                    written.push(w);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};

    fn unwritten(text: &str, preset: &[AnyReg]) -> Vec<String> {
        let p = parse_program(text, Device::default()).unwrap();
        unwritten_reads(&p, preset)
            .iter()
            .map(|u| format!("{} {}", u.reg, u.pos))
            .collect()
    }

    #[test]
    fn finds_first_reads_of_unwritten_registers() {
        let a = [AnyReg::Analogue(Reg::A)];
        assert_eq!(unwritten("add(A, A, B);\nadd(A, A, B)", &a), ["B 1:1"]);
        assert_eq!(
            unwritten("mov(B, A);\nadd(A, A, B)", &a),
            Vec::<String>::new()
        );
        // Without the input preset, A itself is unwritten.
        assert_eq!(unwritten("mov(B, A)", &[]), ["A 1:1"]);
        // A macro that writes NEWS before reading a neighbour's NEWS reads nothing unset.
        assert_eq!(unwritten("movx(B, A, east)", &a), Vec::<String>::new());
        assert_eq!(unwritten("bus(B, XE)", &a), ["NEWS 1:1"]);
        // Digital registers: R5 read before written; R1 written first.
        assert_eq!(
            unwritten("SET(R1);\nMOV(R2, R1);\nMOV(R3, R5)", &a),
            ["R5 3:1"]
        );
    }
}
