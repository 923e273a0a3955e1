//! What expansions are written with: operand accessors (slots are checked before an
//! expansion runs, so a mismatch is a bug in the table) and instruction constructors.

use super::super::op::{dnews_select_regs, BusOp, DigitalOp};
use super::super::reg::{DReg, Dir, DirSet, Reg};
use super::Operand;

/// The macros' temporary: the vendor expansions pass values through `NEWS`.
pub(super) const T: Reg = Reg::News;

/// Digital scratch registers the vendor's logic macros overwrite.
pub(super) const SCRATCH: &[u8] = &[0, 12];
/// Digital registers `DNEWS` uses to select directions.
pub(super) const DNEWS_SEL: &[u8] = &[1, 2, 3, 4];

/// The reset level `PIX` reads after `rpix()` in a half-range capture.
pub(crate) const PIX_RESET_HALF: f32 = 0.0;
/// The reset level `PIX` reads after `rpix()` in a full-range capture (see README).
pub(crate) const PIX_RESET_FULL: f32 = 128.0;

/// Analogue register operand `i`.
pub(super) fn r(ops: &[Operand], i: usize) -> Reg {
    match ops[i] {
        Operand::Reg(r) => r,
        ref o => unreachable!("slot {i} checked to be a register, got {o}"),
    }
}

/// Direction operand `i`.
pub(super) fn d(ops: &[Operand], i: usize) -> Dir {
    match ops[i] {
        Operand::Dir(d) => d,
        ref o => unreachable!("slot {i} checked to be a direction, got {o}"),
    }
}

/// Digital register operand `i`.
pub(super) fn dr(ops: &[Operand], i: usize) -> DReg {
    match ops[i] {
        Operand::DReg(d) => d,
        ref o => unreachable!("slot {i} checked to be a digital register, got {o}"),
    }
}

/// Integer operand `i`.
pub(super) fn int(ops: &[Operand], i: usize) -> i64 {
    match ops[i] {
        Operand::Int(v) => v,
        ref o => unreachable!("slot {i} checked to be an integer, got {o}"),
    }
}

/// Direction-set operand `i` (a single direction is a set of one).
pub(super) fn dirs(ops: &[Operand], i: usize) -> DirSet {
    match ops[i] {
        Operand::Dirs(s) => s,
        Operand::Dir(d) => {
            let mut s = DirSet::default();
            s.0[d.index()] = true;
            s
        }
        ref o => unreachable!("slot {i} checked to be directions, got {o}"),
    }
}

/// All operands, as analogue registers.
pub(super) fn regs(ops: &[Operand]) -> Vec<Reg> {
    (0..ops.len()).map(|i| r(ops, i)).collect()
}

/// All operands, as digital registers.
pub(super) fn dregs(ops: &[Operand]) -> Vec<DReg> {
    (0..ops.len()).map(|i| dr(ops, i)).collect()
}

/// A transfer.
pub(super) fn bus(dsts: &[Reg], srcs: &[Reg]) -> BusOp {
    BusOp::transfer(dsts, srcs)
}

/// `X~dir`: the neighbour view written so that the receiver gets the value *from* `dir`.
pub(super) fn toward(dir: Dir) -> Reg {
    Reg::X(dir.opposite())
}

/// A digital instruction.
pub(super) fn dig(op: DigitalOp) -> BusOp {
    BusOp::Digital(op)
}

/// A photodiode reset to `level`.
pub(super) fn rpix(level: f32) -> BusOp {
    BusOp::Rpix { level }
}

/// `DNEWS`: clear the selection registers, raise those of the directions, read.
pub(super) fn dnews(o: &[Operand], boundary: bool) -> Vec<BusOp> {
    vec![
        dig(DigitalOp::Clr((1..=4).map(DReg::R).collect())),
        dig(DigitalOp::Set(dnews_select_regs(dirs(o, 2)))),
        dig(DigitalOp::DNews {
            dst: dr(o, 0),
            src: dr(o, 1),
            boundary,
        }),
    ]
}
