//! Input: image capture through `PIX` (half and full range) and DAC constants (`in`,
//! corrected, and `load_in`, the vendor's load without correction).

use super::expand::{bus, int, r, rpix, PIX_RESET_FULL, PIX_RESET_HALF, T};
use super::{Defs, Family::Macro, Slot::*};
use crate::isa::op::BusOp;
use crate::isa::reg::Reg;

/// Declares the capture and constant macros.
pub(super) fn define(t: &mut Defs) {
    t.add(
        "get_image",
        &[Dst],
        Macro,
        "y := half-range image, reset PIX",
        |o| {
            vec![
                bus(&[T], &[Reg::Pix]),
                rpix(PIX_RESET_HALF),
                rpix(PIX_RESET_HALF),
                BusOp::Nop,
                bus(&[r(o, 0)], &[T, Reg::Pix]),
            ]
        },
    );
    t.add(
        "get_image",
        &[Dst, Dst],
        Macro,
        "y := full-range image, h := -half-range image",
        |o| {
            let (y, h) = (r(o, 0), r(o, 1));
            vec![
                bus(&[T], &[Reg::Pix]),
                bus(&[h], &[Reg::Pix]),
                rpix(PIX_RESET_FULL),
                rpix(PIX_RESET_FULL),
                BusOp::Nop,
                bus(&[y], &[h, T, Reg::Pix]),
            ]
        },
    );
    for name in ["in", "scamp5_in"] {
        t.add(
            name,
            &[Dst, Value],
            Macro,
            "a := v (DAC constant) where FLAG is set",
            |o| {
                vec![
                    BusOp::Dac(int(o, 1) as i32),
                    bus(&[T], &[Reg::In]),
                    bus(&[r(o, 0)], &[T]),
                ]
            },
        );
    }
    for name in ["load_in", "scamp5_load_in"] {
        t.add(
            name,
            &[Dst, Value],
            Macro,
            "a := v (DAC constant, uncorrected load) where FLAG is set",
            |o| {
                vec![
                    BusOp::DacUncorrected(int(o, 1) as i32),
                    bus(&[T], &[Reg::In]),
                    bus(&[r(o, 0)], &[T]),
                ]
            },
        );
    }
}
