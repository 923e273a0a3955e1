//! Analogue arithmetic macros: reset, copy, sums, differences, negation, absolute value
//! and the halving divisions, each through `NEWS` as the vendor library expands them.

use super::expand::{bus, r, T};
use super::{Defs, Family::Macro, Id, Slot::*};
use crate::isa::op::BusOp;

/// Declares the arithmetic macros.
pub(super) fn define(t: &mut Defs) {
    define_sums(t);
    define_halving(t);
}

/// Reset, copy, sums, differences, negation and absolute value.
fn define_sums(t: &mut Defs) {
    t.add("res", &[Dst], Macro, "a := 0", |o| {
        vec![bus(&[T], &[]), bus(&[r(o, 0)], &[T])]
    })
    .for_codegen(Id::Res, true);
    t.add("res", &[Dst, Dst], Macro, "a := 0, b := 0", |o| {
        vec![bus(&[T], &[]), bus(&[r(o, 0)], &[T]), bus(&[r(o, 1)], &[T])]
    });
    t.add("mov", &[Dst, Src], Macro, "y := x0", |o| {
        vec![bus(&[T], &[r(o, 1)]), bus(&[r(o, 0)], &[T])]
    })
    .for_codegen(Id::Mov, true);
    t.add("add", &[Dst, Src, Src], Macro, "y := x0 + x1", |o| {
        vec![bus(&[T], &[r(o, 1), r(o, 2)]), bus(&[r(o, 0)], &[T])]
    })
    .for_codegen(Id::Add2, true);
    t.add(
        "add",
        &[Dst, Src, Src, Src],
        Macro,
        "y := x0 + x1 + x2",
        |o| {
            vec![
                bus(&[T], &[r(o, 1), r(o, 2), r(o, 3)]),
                bus(&[r(o, 0)], &[T]),
            ]
        },
    )
    .for_codegen(Id::Add3, false);
    t.add("sub", &[Dst, Src, Src], Macro, "y := x0 - x1", |o| {
        vec![bus(&[T], &[r(o, 1)]), bus(&[r(o, 0)], &[T, r(o, 2)])]
    })
    .for_codegen(Id::Sub, true);
    t.add("neg", &[Dst, Src], Macro, "y := -x0", |o| {
        vec![bus(&[T], &[]), bus(&[r(o, 0)], &[T, r(o, 1)])]
    })
    .for_codegen(Id::Neg, true);
    t.add("abs", &[Dst, Src], Macro, "y := |x0|", |o| {
        let (y, x) = (r(o, 0), r(o, 1));
        vec![
            bus(&[T], &[]),
            bus(&[y], &[T, x]),
            bus(&[T], &[x]),
            BusOp::Where(vec![x]),
            bus(&[y], &[T]),
            BusOp::All,
        ]
    });
}

/// The halving divisions: `divq`, and `div`/`diva`, which also leave the negated half.
fn define_halving(t: &mut Defs) {
    t.add("divq", &[Dst, Src], Macro, "y0 := x0 / 2", |o| {
        let (y, x) = (r(o, 0), r(o, 1));
        vec![bus(&[y, T], &[x]), bus(&[y], &[T])]
    })
    .for_codegen(Id::Divq, true);
    t.add(
        "div",
        &[Dst, Dst, Acc],
        Macro,
        "y0 := y2 / 2, y1 := -y2 / 2, y2 kept",
        |o| {
            let (y0, y1, y2) = (r(o, 0), r(o, 1), r(o, 2));
            vec![
                bus(&[y0, y1], &[y2]),
                bus(&[T], &[y2, y1]),
                bus(&[y2], &[T, y0]),
                bus(&[y0, y1], &[y2]),
                bus(&[y0], &[y1]),
            ]
        },
    )
    .for_codegen(Id::Div, false);
    t.add(
        "div",
        &[Dst, Dst, Dst, Src],
        Macro,
        "y0 := x0 / 2, y1 := -x0 / 2, y2 := x0",
        |o| {
            let (y0, y1, y2, x) = (r(o, 0), r(o, 1), r(o, 2), r(o, 3));
            vec![
                bus(&[y0, y1], &[x]),
                bus(&[T], &[x, y1]),
                bus(&[y2], &[T, y0]),
                bus(&[y0, y1], &[y2]),
                bus(&[y0], &[y1]),
            ]
        },
    );
    t.add(
        "diva",
        &[Acc, Dst, Dst],
        Macro,
        "y0 := y0 / 2, y1 := y2 := -y0 / 2",
        |o| {
            let (y0, y1, y2) = (r(o, 0), r(o, 1), r(o, 2));
            vec![
                bus(&[y1, y2], &[y0]),
                bus(&[T], &[y1, y0]),
                bus(&[y0], &[T, y2]),
                bus(&[y1, y2], &[y0]),
                bus(&[y0], &[y1]),
            ]
        },
    );
}
