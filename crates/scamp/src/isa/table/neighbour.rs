//! Neighbour macros: a value moved one or two steps (`movx`, `mov2x`), possibly summed
//! before (`addx`, `add2x`) or with a source subtracted after the move (`subx`, `sub2x`).
//! The two-step forms are documented as valid only under a full FLAG.

use super::expand::{bus, d, r, toward, T};
use super::{Defs, Family::Macro, Id, Slot::*};
use crate::isa::reg::Reg;

/// Declares the neighbour macros.
pub(super) fn define(t: &mut Defs) {
    t.add("movx", &[Dst, Src, Dir], Macro, "y := x0 from dir", |o| {
        vec![bus(&[toward(d(o, 2))], &[r(o, 1)]), bus(&[r(o, 0)], &[T])]
    })
    .for_codegen(Id::Movx, true);
    t.add(
        "mov2x",
        &[Dst, Src, Dir, Dir],
        Macro,
        "y := x0 from dir, then dir2",
        |o| {
            vec![
                bus(&[toward(d(o, 2))], &[r(o, 1)]),
                bus(&[r(o, 0)], &[Reg::X(d(o, 3))]),
            ]
        },
    )
    .for_codegen(Id::Mov2x, false)
    .needs_full_flag();
    t.add(
        "addx",
        &[Dst, Src, Src, Dir],
        Macro,
        "y := (x0 + x1) from dir",
        |o| {
            vec![
                bus(&[toward(d(o, 3))], &[r(o, 1), r(o, 2)]),
                bus(&[r(o, 0)], &[T]),
            ]
        },
    )
    .for_codegen(Id::Addx, false);
    t.add(
        "add2x",
        &[Dst, Src, Src, Dir, Dir],
        Macro,
        "y := (x0 + x1) from dir, then dir2",
        |o| {
            vec![
                bus(&[toward(d(o, 3))], &[r(o, 1), r(o, 2)]),
                bus(&[r(o, 0)], &[Reg::X(d(o, 4))]),
            ]
        },
    )
    .for_codegen(Id::Add2x, false)
    .needs_full_flag();
    t.add(
        "subx",
        &[Dst, Src, Dir, Src],
        Macro,
        "y := x0 from dir - x1",
        |o| {
            vec![
                bus(&[toward(d(o, 2))], &[r(o, 1)]),
                bus(&[r(o, 0)], &[T, r(o, 3)]),
            ]
        },
    )
    .for_codegen(Id::Subx, false);
    t.add(
        "sub2x",
        &[Dst, Src, Dir, Dir, Src],
        Macro,
        "y := x0 from dir, then dir2, - x1",
        |o| {
            vec![
                bus(&[toward(d(o, 2))], &[r(o, 1)]),
                bus(&[r(o, 0)], &[Reg::X(d(o, 3)), r(o, 4)]),
            ]
        },
    )
    .for_codegen(Id::Sub2x, false)
    .needs_full_flag();
}
