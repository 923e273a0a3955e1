//! Machine-level instructions written directly: `rpix`, `nop` and the transfers `bus`,
//! `bus2`, `bus3` with every number of sources the hardware offers.

use super::expand::{bus, regs, rpix, PIX_RESET_HALF};
use super::{Defs, Family::Bus, Slot::*};
use crate::isa::op::BusOp;

/// Declares the bus instructions.
pub(super) fn define(t: &mut Defs) {
    t.add("rpix", &[], Bus, "reset PIX (exposure restarts)", |_| {
        vec![rpix(PIX_RESET_HALF)]
    });
    t.add("nop", &[], Bus, "nothing", |_| vec![BusOp::Nop]);

    for k in 0..=4 {
        let mut slots = vec![BusDst];
        slots.extend(std::iter::repeat_n(BusSrc, k));
        t.add("bus", &slots, Bus, "w := -(r1 + .. + rk)", |o| {
            let all = regs(o);
            vec![bus(&all[..1], &all[1..])]
        });
    }
    for k in [0, 1, 2] {
        let mut slots = vec![BusDst, BusDst];
        slots.extend(std::iter::repeat_n(BusSrc, k));
        t.add("bus2", &slots, Bus, "w1 := w2 := -(r1 [+ r2]) / 2", |o| {
            let all = regs(o);
            vec![bus(&all[..2], &all[2..])]
        });
    }
    t.add(
        "bus3",
        &[BusDst, BusDst, BusDst, BusSrc],
        Bus,
        "w1 := w2 := w3 := -r1 / 3",
        |o| {
            let all = regs(o);
            vec![bus(&all[..3], &all[3..])]
        },
    );
}
