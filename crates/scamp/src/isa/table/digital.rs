//! Digital register instructions: the native ones (`SET`, `CLR`, `MOV`, `NOT`, `OR`,
//! `NOR`), the vendor's logic macros built from them over scratch registers, FLAG from
//! digital registers, and the neighbour OR `DNEWS`.

use super::expand::{dig, dnews, dr, dregs, int, DNEWS_SEL, SCRATCH};
use super::{Defs, Family::Digital, Slot::*};
use crate::isa::op::{BusOp, DigitalOp};
use crate::isa::reg::DReg;

/// Declares the digital instructions.
pub(super) fn define(t: &mut Defs) {
    define_native(t);
    define_logic(t);
    define_flag_and_news(t);
}

/// One machine instruction each.
fn define_native(t: &mut Defs) {
    for k in 1..=4 {
        t.add(
            "SET",
            &[DDst(&[]); 4][..k],
            Digital,
            "registers := 1",
            |o| vec![dig(DigitalOp::Set(dregs(o)))],
        );
        t.add(
            "CLR",
            &[DDst(&[]); 4][..k],
            Digital,
            "registers := 0",
            |o| vec![dig(DigitalOp::Clr(dregs(o)))],
        );
    }
    t.add("MOV", &[DDst(&[]), DSrc(&[])], Digital, "Rl := Rx", |o| {
        vec![dig(DigitalOp::Mov(dr(o, 0), dr(o, 1)))]
    });
    t.add(
        "NOT",
        &[DDst(&[]), DSrc(&[])],
        Digital,
        "Rl := NOT Rx",
        |o| vec![dig(DigitalOp::Not(dr(o, 0), dr(o, 1)))],
    );
    for k in 2..=4 {
        let mut slots = vec![DDst(&[])];
        slots.extend(std::iter::repeat_n(DSrc(&[]), k));
        t.add("OR", &slots, Digital, "Rl := Rx OR Ry ...", |o| {
            vec![dig(DigitalOp::Or(dr(o, 0), dregs(&o[1..])))]
        });
        t.add("NOR", &slots, Digital, "Rl := NOT (Rx OR Ry ...)", |o| {
            vec![dig(DigitalOp::Nor(dr(o, 0), dregs(&o[1..])))]
        });
    }
}

/// The vendor's logic macros: sequences over the scratch registers `R0` and `R12`.
fn define_logic(t: &mut Defs) {
    t.add(
        "AND",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := Rx AND Ry (R0, R12 overwritten)",
        |o| {
            let (l, x, y) = (dr(o, 0), dr(o, 1), dr(o, 2));
            vec![
                dig(DigitalOp::Set(vec![DReg::R(0)])),
                dig(DigitalOp::Not(DReg::R(12), x)),
                dig(DigitalOp::Not(DReg::R(0), y)),
                dig(DigitalOp::Nor(l, vec![DReg::R(0), DReg::R(12)])),
            ]
        },
    );
    t.add(
        "NAND",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := NOT (Rx AND Ry) (R0, R12 overwritten)",
        |o| {
            let (l, x, y) = (dr(o, 0), dr(o, 1), dr(o, 2));
            vec![
                dig(DigitalOp::Set(vec![DReg::R(0)])),
                dig(DigitalOp::Not(DReg::R(12), x)),
                dig(DigitalOp::Not(DReg::R(0), y)),
                dig(DigitalOp::Or(l, vec![DReg::R(0), DReg::R(12)])),
            ]
        },
    );
    t.add(
        "XOR",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := Rx XOR Ry (R0, R12 overwritten)",
        |o| {
            let (l, x, y) = (dr(o, 0), dr(o, 1), dr(o, 2));
            let (r0, r12) = (DReg::R(0), DReg::R(12));
            vec![
                dig(DigitalOp::Not(r0, y)),
                dig(DigitalOp::Nor(r12, vec![x, r0])),
                dig(DigitalOp::Not(r0, x)),
                dig(DigitalOp::Nor(r0, vec![y, r0])),
                dig(DigitalOp::Or(l, vec![r12, r0])),
            ]
        },
    );
    t.add(
        "MUX",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := Ry where Rx = 1, Rz where Rx = 0 (R0, R12 overwritten)",
        |o| {
            let (l, x, y, z) = (dr(o, 0), dr(o, 1), dr(o, 2), dr(o, 3));
            let (r0, r12) = (DReg::R(0), DReg::R(12));
            vec![
                dig(DigitalOp::Set(vec![r0])),
                dig(DigitalOp::Mov(r12, z)),
                dig(DigitalOp::Mov(r0, x)),
                dig(DigitalOp::MovIfR0(r12, y)),
                dig(DigitalOp::Mov(l, r12)),
            ]
        },
    );
    t.add(
        "CLR_IF",
        &[DDst(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := 0 where Rx = 1 (R0 overwritten)",
        |o| {
            let (l, x) = (dr(o, 0), dr(o, 1));
            vec![
                dig(DigitalOp::Not(DReg::R(0), l)),
                dig(DigitalOp::Nor(l, vec![DReg::R(0), x])),
            ]
        },
    );
}

/// FLAG from digital registers, and `DNEWS` over the selection registers `R1`..`R4`.
fn define_flag_and_news(t: &mut Defs) {
    for k in 1..=3 {
        t.add(
            "WHERE",
            &[DSrc(&[]); 3][..k],
            Digital,
            "FLAG := Rx [OR Ry [OR Rz]]",
            |o| {
                let srcs = dregs(o);
                vec![dig(if srcs.len() == 1 {
                    DigitalOp::Mov(DReg::Flag, srcs[0])
                } else {
                    DigitalOp::Or(DReg::Flag, srcs)
                })]
            },
        );
    }
    t.add("ALL", &[], Digital, "FLAG := 1", |_| vec![BusOp::All]);
    t.add(
        "DNEWS",
        &[DDst(DNEWS_SEL), DSrc(DNEWS_SEL), Dirs],
        Digital,
        "Ra := OR of Rx from the given directions (R1..R4 overwritten)",
        |o| dnews(o, false),
    );
    t.add(
        "DNEWS",
        &[DDst(DNEWS_SEL), DSrc(DNEWS_SEL), Dirs, Bit],
        Digital,
        "Ra := OR of Rx from the given directions, outside reads as boundary",
        |o| dnews(o, int(o, 3) == 1),
    );
}
