//! The analogue FLAG macros: `where` (FLAG from a sign test) and `all`.

use super::expand::regs;
use super::{Defs, Family::Macro, Slot::*};
use crate::isa::op::BusOp;

/// Declares the FLAG macros.
pub(super) fn define(t: &mut Defs) {
    for n in 1..=3 {
        t.add(
            "where",
            &[Src; 3][..n],
            Macro,
            "FLAG := (a [+ b [+ c]]) > 0",
            |o| vec![BusOp::Where(regs(o))],
        );
    }
    t.add("all", &[], Macro, "FLAG := 1", |_| vec![BusOp::All]);
}
